"""CPU threads of a fit or prediction: ``n_jobs`` as in scikit-learn, scoped to the call.

torch's default is one intra-op thread per core for the whole process. The networks here are
small, so on a busy machine those threads mostly wait for each other: ``python -m
tabmoe.demo`` on a loaded 2-core machine was killed after 11 min at epoch 15 of 60, against
22 s with ``OMP_NUM_THREADS=1`` (reported in issue 16).
So a fit or prediction uses ``n_jobs`` threads (``None``: one, unless a joblib
``parallel_config(n_jobs=...)`` context says otherwise; ``-1``: every core), and the caller's
torch setting is restored afterwards. The same calls run outside a caller's ``torch.autocast``
block (:func:`caller_autocast_off`): ``mixed_precision`` alone says where bf16 is used; and
with the CPU as torch's default device (:func:`caller_default_device_off`): ``device`` alone
says where the network runs.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import torch
from joblib import cpu_count, effective_n_jobs
from joblib.parallel import (
    LokyBackend,
    MultiprocessingBackend,
    SequentialBackend,
    ThreadingBackend,
    get_active_backend,
)

F = TypeVar("F", bound=Callable[..., Any])


def resolve_n_jobs(n_jobs: int | None) -> int:
    """scikit-learn's convention: None -> 1 (or joblib's context), -1 -> all cores. A value
    ``set_params`` left after fit is checked here, before joblib's words name no parameter."""
    if n_jobs is not None and (not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs must be an integer other than 0 (-1: every core) or None, got {n_jobs!r}.")
    if n_jobs is not None and n_jobs >= 2**31:  # torch.set_num_threads: "Overflow when unpacking long"
        raise ValueError(f"n_jobs must be below 2**31 (a number of threads), got {n_jobs!r}.")
    backend, context_n_jobs = get_active_backend()
    if type(backend) in _LOCAL_BACKENDS:
        return max(1, int(effective_n_jobs(n_jobs)))
    # Another backend's count is its workers' (dask's: every core of its cluster, whatever
    # n_jobs says): n_jobs=2 under parallel_config(backend="dask") on a 16-core cluster ran
    # 16 torch threads here. This machine's threads: the n_jobs asked, -1 its every core.
    n = context_n_jobs if n_jobs is None else n_jobs
    if not isinstance(n, numbers.Integral) or n == 0:
        return 1
    return max(1, int(n) if n > 0 else cpu_count() + 1 + int(n))


#: joblib's backends whose workers run on this machine, counted by ``effective_n_jobs``.
_LOCAL_BACKENDS = (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend)


#: Blocks of :func:`torch_threads` running now (in any thread), and the setting before the
#: first of them: torch's setting is process-wide (a new thread starts from the last one set),
#: so a block entered in a thread while another ran read that block's ``n`` as its "before",
#: and, ending last, left it as the caller's setting (two fits in threads, n_jobs=1 and 2, left
#: a caller's 2 threads at 1). The last block to end restores the setting from before the first.
_BLOCKS = {"running": 0, "callers": 0}
_BLOCKS_LOCK = threading.Lock()
_OWN_BLOCKS = threading.local()  # this thread's share of _BLOCKS["running"]


def _blocks_after_fork() -> None:
    # the forking thread alone lives on in the child: its blocks are the ones running there
    _BLOCKS_LOCK._at_fork_reinit()
    _BLOCKS["running"] = getattr(_OWN_BLOCKS, "depth", 0)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_blocks_after_fork)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` inside the block, the previous value after (the
    caller's, from before the first block, once the last of overlapping blocks ends)."""
    with _BLOCKS_LOCK:
        before = torch.get_num_threads()
        if n != before:
            torch.set_num_threads(n)
        if _BLOCKS["running"] == 0:
            _BLOCKS["callers"] = before
        _BLOCKS["running"] += 1
        _OWN_BLOCKS.depth = getattr(_OWN_BLOCKS, "depth", 0) + 1
    try:
        yield
    finally:
        with _BLOCKS_LOCK:
            _BLOCKS["running"] -= 1
            _OWN_BLOCKS.depth -= 1
            after = before if _BLOCKS["running"] else _BLOCKS["callers"]
            if torch.get_num_threads() != after:
                torch.set_num_threads(after)


@contextlib.contextmanager
def caller_autocast_off() -> Iterator[None]:
    """A caller's ``torch.autocast`` block (CPU or CUDA) switched off inside the block: a fit
    or prediction runs in bf16 where ``mixed_precision`` says so, not wherever it is called
    from (a fit with ``mixed_precision=False`` inside ``torch.autocast("cpu")`` trained in bf16,
    and its probabilities differed by up to 0.83; ``explain`` is documented as float32). Its
    cache of cast weights is off too: nested in the caller's block, ``mixed_precision=True``'s
    autocast kept it across optimiser steps (cleared only when the outermost block ends), and
    trained on stale bf16 weights (probabilities 0.26 away from the same fit outside it)."""
    with contextlib.ExitStack() as stack:
        for device_type in ("cpu", "cuda"):
            if torch.is_autocast_enabled(device_type):
                stack.enter_context(torch.autocast(device_type, enabled=False, cache_enabled=False))
        yield


@contextlib.contextmanager
def caller_default_device_off() -> Iterator[None]:
    """The CPU as torch's default device inside the block where the caller made another one
    the default (``torch.set_default_device("cuda")``, a ``with torch.device(...)`` block):
    tensors made without a device (the networks before ``.to(device)``, the trainer's shuffling
    order from its CPU generator, ``feature_importances_``' float64 sums) were made there, and
    every fit failed (torch's "Expected a 'cuda' device type for generator but found 'cpu'").
    A no-op where the default is the CPU (an empty tensor says which it is, in every torch)."""
    if torch.empty(0).device.type == "cpu":
        yield
        return
    with torch.device("cpu"):
        yield


def scoped_threads(method: F) -> F:
    """Run an estimator method with ``self.n_jobs`` torch threads (see the module doc),
    outside a caller's autocast (:func:`caller_autocast_off`) and default device
    (:func:`caller_default_device_off`)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with (torch_threads(resolve_n_jobs(getattr(self, "n_jobs", None))), caller_autocast_off(),
              caller_default_device_off()):
            return method(self, *args, **kwargs)

    return cast(F, wrapper)
