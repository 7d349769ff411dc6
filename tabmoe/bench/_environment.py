"""Where a run ran: package versions, the git revision, the CPU, threads and peak memory.

Peak memory is the resident set's high-water mark (``VmHWM`` of ``/proc/self/status``). On
Linux it is reset at the start of each run (writing ``5`` to ``/proc/self/clear_refs``), so
``peak_rss_mb`` covers that run alone, interpreter and libraries included; elsewhere it is
the process's peak so far (``resource.getrusage``) and the record says ``"process"``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from joblib import parallel_config
from threadpoolctl import threadpool_limits

from ..nn._threads import torch_threads

_CORE_PACKAGES = ("tabmoe", "torch", "scikit-learn", "numpy", "pandas", "scipy", "optuna")


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def versions(modules: tuple[str, ...] = ()) -> dict[str, str]:
    """Python and package versions: the core packages plus the distributions of ``modules``."""
    names = list(_CORE_PACKAGES)
    for module in modules:
        names += [d for d in _distributions().get(module, []) if d not in names]
    found = {"python": platform.python_version()}
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


@functools.cache
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere), with
    " (avx512f)" where the CPU has AVX-512: the same fit on another CPU kind can round
    differently and train to other weights (docs/reliability.md#determinism)."""
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.is_file() else ""
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "")
    return (name or platform.processor()) + (" (avx512f)" if " avx512f" in text else "")


def accelerator(estimator: Any) -> str | None:
    """The device a fitted torch model's network sits on when it is not the CPU (a CUDA
    GPU's name, else the device type); None for the CPU and for models without a network
    (``module_``). The registry leaves ``device="auto"``: on a GPU host the torch models
    train there, and ``cpu`` alone would name the wrong processor."""
    try:
        device = next(estimator.module_.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return None
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return None if device.type == "cpu" else device.type


@functools.cache
def git_revision() -> dict[str, object]:
    """``{"revision": sha, "dirty": bool}`` of the checkout tabmoe runs from (None outside git)."""
    return checkout_revision(Path(__file__).resolve().parents[2])


def checkout_revision(root: Path) -> dict[str, object]:
    """The revision and dirty flag of the git checkout whose top folder is ``root``; None and
    None when ``root`` is not one. A folder inside someone else's checkout is not: tabmoe
    installed in a virtual environment within a user's project (``<project>/.venv/lib/
    .../site-packages``) recorded that project's revision and dirty flag as its own."""
    try:
        top, sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.splitlines()  # lines: the top folder's name may hold spaces
        if Path(top).resolve() != Path(root).resolve():
            return {"revision": None, "dirty": None}
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError, ValueError):
        return {"revision": None, "dirty": None}
    return {"revision": sha, "dirty": bool(status.strip())}


def reset_peak_rss() -> str:
    """Start a new RSS high-water mark; returns its scope, ``"run"`` or ``"process"``."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return "run"
    except OSError:
        return "process"


def peak_rss_mb() -> float | None:
    """Peak resident memory in MiB since :func:`reset_peak_rss` (or process start)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


@contextlib.contextmanager
def limited_threads(threads: int) -> Iterator[None]:
    """torch intra-op threads and BLAS / OpenMP pools limited to ``threads`` inside the block,
    and joblib's ``n_jobs`` there: the torch models' ``n_jobs=None`` reads it (each fit sets
    its own thread count, which was 1 whatever ``--threads`` said), as scikit-learn's
    estimators do, in threads (no process pool inside a run). torch's threads are scoped by
    ``torch_threads`` (``tabmoe/nn/_threads.py``), as every fit's are: the caller's setting comes
    back also where the block overlaps a fit in another thread."""
    with torch_threads(threads), threadpool_limits(threads), parallel_config(backend="threading", n_jobs=threads):
        yield
