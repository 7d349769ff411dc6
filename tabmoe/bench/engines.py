"""Execute runs here, in local worker processes, or on a Dask distributed cluster.

All three yield ``(run_id, record or None, error text or None)`` as runs finish, in
completion order, so the caller stores each result the moment it exists:

* ``jobs=1`` — in this process, one after another;
* ``jobs=N`` — N local processes (joblib's loky backend; a crashed worker fails only its run);
* ``scheduler="tcp://host:port"`` — an existing Dask distributed scheduler. Dask was chosen
  over Ray because it is pure Python and pip-installable with no extra daemon,
  ``Client(address)`` attaches to a scheduler someone already runs (HPC job scripts,
  Kubernetes, ``dask scheduler`` + ``dask worker`` by hand), and ``LocalCluster`` gives tests
  a real multi-process cluster on loopback. Workers need tabmoe installed, the suite's data
  at the same paths, and (for tuned runs) a study storage they can reach: a ``--storage``
  database URL, or the results folder on a shared file system.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator
from typing import Any

from .execute import execute
from .plan import RunSpec

Outcome = tuple[str, dict[str, Any] | None, str | None]


def safe_execute(spec: RunSpec) -> Outcome:
    """:func:`~tabmoe.bench.execute.execute`, with any exception turned into its traceback."""
    try:
        return spec.run_id, execute(spec), None
    except Exception:  # a failed run is reported and retried on the next invocation
        return spec.run_id, None, traceback.format_exc()


def execute_all(specs: Iterable[RunSpec], *, jobs: int = 1, scheduler: str | None = None) -> Iterator[Outcome]:
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
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=min(jobs, len(specs)), backend="loky", return_as="generator_unordered")
        yield from parallel(delayed(safe_execute)(spec) for spec in specs)


def connect(scheduler: str, timeout: float = 5.0) -> Any:
    """A Dask client of the scheduler at ``scheduler`` (OSError when it cannot be reached)."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise OSError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc


def _dask(specs: list[RunSpec], scheduler: str) -> Iterator[Outcome]:
    from distributed import as_completed

    client = connect(scheduler)
    try:
        futures = {client.submit(safe_execute, spec, pure=False): spec for spec in specs}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception:  # the worker died (KilledWorker), or the task could not run
                yield futures[future].run_id, None, traceback.format_exc()
    finally:
        client.close()  # the scheduler and its workers keep running
