"""Execute runs here, in local worker processes, or on a Dask distributed cluster.

All three yield ``(run_id, record or None, error text or None)`` as runs finish, in
completion order, so the caller stores each result the moment it exists:

* ``jobs=1`` — in this process, one after another;
* ``jobs=N`` — N local worker processes (loky, as vendored by joblib), each its own
  executor running one run at a time, so a worker that dies (SIGKILL, the out-of-memory
  killer, a crash in native code) fails exactly the run it held, with a ``WorkerDied``
  message; its slot gets a fresh worker and the other runs go on. Closing the generator
  early (the caller stops) kills the workers and drops the runs in flight; a worker whose
  parent died (SIGKILL, which nothing can catch) ends itself within a second, so no run
  fits on, orphaned, beside the rerun that took the released results lock;
* ``scheduler="tcp://host:port"`` — an existing Dask distributed scheduler. Dask was chosen
  over Ray because it is pure Python and pip-installable with no extra daemon,
  ``Client(address)`` attaches to a scheduler someone already runs (HPC job scripts,
  Kubernetes, ``dask scheduler`` + ``dask worker`` by hand), and ``LocalCluster`` gives tests
  a real multi-process cluster on loopback. Workers need tabmoe installed, the suite's data
  at the same paths, and (for tuned runs) a study storage they can reach: a ``--storage``
  database URL, or the results folder on a shared file system. ``scheduler`` may also be a
  client of it (:func:`connect`), which the caller closes: ``tabmoe-bench run`` connects
  before it creates anything in the results folder.
"""

from __future__ import annotations

import os
import re
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from typing import Any

from .._optional import optional_module
from .execute import execute
from .plan import RunSpec

Outcome = tuple[str, dict[str, Any] | None, str | None]


def safe_execute(spec: RunSpec) -> Outcome:
    """:func:`~tabmoe.bench.execute.execute`, with any exception turned into its traceback."""
    try:
        return spec.run_id, execute(spec), None
    except Exception:  # a failed run is reported and retried on the next invocation
        return spec.run_id, None, traceback.format_exc()


def execute_all(specs: Iterable[RunSpec], *, jobs: int = 1, scheduler: Any = None) -> Iterator[Outcome]:
    """Outcomes of ``specs`` as they finish (see the module docstring for the engines)."""
    specs = list(specs)
    if not specs:
        return
    if scheduler is not None:
        yield from _dask(specs, scheduler)
    elif jobs == 1:
        for spec in specs:
            yield safe_execute(spec)
    else:
        yield from _local(specs, min(jobs, len(specs)))


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker_died(exc: BaseException) -> str:
    """The one-line error of a run whose worker process died under it."""
    codes = re.search(r"exit codes of the workers are \{(.*?)\}", str(exc))
    how = f"exit {codes.group(1)}" if codes else type(exc).__name__
    return (f"WorkerDied: the worker process running the run died ({how}): killed, e.g. by the "
            "out-of-memory killer, or crashed in native code; rerun to retry it")


def _die_with_parent(parent: int, every: float = 0.5) -> None:
    """Worker initializer: a daemon thread ends this process once ``parent`` is no longer
    its parent (it died and the worker was re-parented). loky does not notice a dead parent
    until the run ends, and a run can fit (and write trials to the study storage) for hours."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)  # at once, from this thread: no cleanup that could wait on the run

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def _local(specs: list[RunSpec], jobs: int) -> Iterator[Outcome]:
    """``specs`` on ``jobs`` single-worker loky executors (see the module docstring)."""
    from joblib.externals.loky import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from joblib.externals.loky.process_executor import BrokenProcessPool

    env = dict.fromkeys(_THREAD_VARIABLES, str(specs[0].threads))
    todo = specs[::-1]
    idle: list[Any] = []
    running: dict[Any, tuple[Any, RunSpec]] = {}  # future -> (its executor, its run)
    try:
        while todo or running:
            while todo and len(running) < jobs:
                executor = idle.pop() if idle else ProcessPoolExecutor(
                    max_workers=1, env=env, initializer=_die_with_parent, initargs=(os.getpid(),))
                spec = todo.pop()
                # looked up here, not bound at import: tests patch it to register test models
                running[executor.submit(safe_execute, spec)] = (executor, spec)
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                executor, spec = running.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool as exc:  # the worker died: only this run is lost
                    executor.shutdown(wait=False, kill_workers=True)
                    outcome = spec.run_id, None, worker_died(exc)
                except Exception:  # the run could not be sent or its result not returned
                    idle.append(executor)
                    outcome = spec.run_id, None, traceback.format_exc()
                else:
                    idle.append(executor)
                yield outcome
    finally:
        stopped = bool(running)  # the caller stopped early: kill the runs in flight
        for executor in [*idle, *(executor for executor, _ in running.values())]:
            executor.shutdown(wait=not stopped, kill_workers=stopped)


def connect(scheduler: str, timeout: float = 5.0) -> Any:
    """A Dask client of the scheduler at ``scheduler`` (OSError when it cannot be reached,
    ValueError when it is no address: checked first, since a Client that failed on one
    hung 10 s when collected, then printed a TimeoutError)."""
    Client = _distributed("distributed").Client
    resolve_address = _distributed("distributed.comm").resolve_address

    try:
        resolve_address(scheduler)  # ValueError: no address; OSError: a host that does not resolve
        return Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
    except ValueError as exc:
        raise ValueError(f"--scheduler {scheduler!r} is not a Dask scheduler address such as "
                         f"tcp://host:8786 ({exc})") from None
    except (OSError, TimeoutError) as exc:
        raise OSError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc


def _distributed(module: str) -> Any:
    """``module`` of Dask's distributed (the "bench" extra): an ImportError naming it otherwise."""
    return optional_module(module, "Running on a Dask scheduler", extra="bench")


def _dask(specs: list[RunSpec], scheduler: Any) -> Iterator[Outcome]:
    """``scheduler``: its address (connected to here, closed at the end) or a client."""
    as_completed = _distributed("distributed").as_completed

    own = isinstance(scheduler, str)
    client = connect(scheduler) if own else scheduler
    try:
        futures = {client.submit(safe_execute, spec, pure=False): spec for spec in specs}
        # the client's own loop: as_completed's default is the process's default client, and
        # this one is not set as default (without one: "ValueError: No clients found")
        for future in as_completed(futures, loop=client.loop):
            try:
                yield future.result()
            except Exception:  # the worker died (KilledWorker), or the task could not run
                yield futures[future].run_id, None, traceback.format_exc()
    finally:
        if own:
            client.close()  # the scheduler and its workers keep running
