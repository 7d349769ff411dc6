"""Run a plan: skip finished runs, execute the rest on an engine, store each result as it comes.

Resuming is the default: a run whose record is in the store is skipped (``force`` reruns
it). A record made under another configuration (suite file or budget edited since) is kept
and reported as ``stale``; ``force`` replaces it. One made on another version of its data
file (the suite names the file, the record digests its content) is kept and reported in
``data_changed``. A run killed in flight left nothing in the
store, so the next invocation runs it again from the start (its half-finished Optuna study
is dropped first, so the result equals an uninterrupted run's).

A result that cannot be saved (:class:`~tabmoe.bench.storage.StoreError`: full disk,
database gone) stops the invocation: no further run starts, the runs in flight are dropped,
and the summary carries the error (``aborted``); every record saved before is kept.

SIGTERM (``kill``, a batch scheduler's time limit) while runs execute raises ``SystemExit``
(exit status 143), so the ``jobs=N`` workers in flight are killed with the invocation: the
default action would end this process alone and leave the loky workers fitting, and writing
to the Optuna storage, until they finish. (A Dask cluster's tasks are the cluster's: they
run on.) Further SIGTERMs are ignored while that cleanup runs; a SIGTERM the process was
started ignoring stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._optional import optional_module
from ..data.sources import OpenMLSource
from ..nn._progress import tqdm  # no monitor thread left in a caller's process (tqdm issue 1564)
from .engines import execute_all
from .plan import RunSpec
from .schema import RecordError, check_record
from .storage import RunStore, StoreError, config_hashes


def last_line(error: str | None) -> str:
    """The last line of a traceback (the exception), for one-line messages."""
    lines = (error or "").strip().splitlines()
    return lines[-1] if lines else "unknown error"


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises ``SystemExit(143)`` in the main thread (elsewhere: no-op)."""
    in_main = threading.current_thread() is threading.main_thread()
    if not in_main or signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second kill must not cut the cleanup short
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@dataclass
class RunSummary:
    """Counts of one invocation; ``failed`` maps run id -> error text; ``aborted`` is the
    error that stopped it (a result could not be saved), else None."""

    planned: int = 0
    skipped: int = 0
    done: int = 0
    stale: list[str] = field(default_factory=list)
    data_changed: list[str] = field(default_factory=list)  # finished on another version of a data file
    renamed: list[str] = field(default_factory=list)  # finished under an old protocol name
    failed: dict[str, str] = field(default_factory=dict)
    aborted: str | None = None

    @property
    def not_run(self) -> int:
        """Runs neither skipped, finished nor failed: not started, or dropped in flight, when the
        invocation stopped."""
        return self.planned - self.skipped - self.done - len(self.failed)

    @property
    def ok(self) -> bool:
        return not self.failed and self.aborted is None


def _check_extras(todo: list[RunSpec]) -> None:
    """A ``MissingExtraError`` before the first run where a run left to run needs an
    optional package that is not installed: each such run failed on the import, one by one."""
    if any(spec.tuned for spec in todo):
        try:
            optional_module("optuna", "the tuned protocol", "tuning")
        except ImportError as exc:
            raise type(exc)(f"{exc} Or leave it out: --protocol fixed-budget, defaults or paper.") from exc
    openml = sorted({spec.split.name for spec in todo if isinstance(spec.split.data, OpenMLSource)})
    if openml:
        optional_module("openml", f"Loading split(s) {openml} from OpenML", "data")


def run_plan(
    specs: list[RunSpec],
    store: RunStore,
    *,
    jobs: int = 1,
    scheduler: Any = None,
    force: bool = False,
    progress: bool = True,
) -> RunSummary:
    """Execute the unfinished runs of ``specs`` and write each outcome to ``store``
    (``scheduler``: a Dask scheduler's address or a client of it, see :mod:`.engines`).

    A :class:`~tabmoe.bench.storage.StoreError` while reading what is finished propagates
    (nothing ran); one while saving an outcome ends the invocation (``summary.aborted``).
    """
    summary = RunSummary(planned=len(specs))
    finished: dict[str, str] = {}
    made_on: dict[str, str | None] = {}  # run id -> its data file's digest (None: not a file)
    made_with: dict[str, str | None] = {}  # run id -> its table's target/categorical settings
    for suite in dict.fromkeys(s.suite for s in specs):
        records = store.records(suite)  # one read for both (finished() reads them too)
        finished.update(config_hashes(records))
        made_on.update({r["run_id"]: r.get("source_digest") for r in records})
        made_with.update({r["run_id"]: r.get("table") for r in records})
    digests: dict[object, str | None] = {}  # data source -> its digest now (split names repeat across suites)
    todo = []
    for spec in specs:
        old = [run_id for run_id in spec.old_run_ids if run_id in finished]
        if spec.run_id in finished and not force:
            summary.skipped += 1
            table = made_with.get(spec.run_id)  # None: made before records said it
            if finished[spec.run_id] != spec.config_hash or table not in (None, spec.split.data.settings()):
                summary.stale.append(spec.run_id)
            elif made_on.get(spec.run_id) is not None:  # the file's name is in the config, not its content
                if spec.split.data not in digests:
                    digests[spec.split.data] = spec.split.data.digest()
                now = digests[spec.split.data]
                if now is not None and now != made_on[spec.run_id]:
                    summary.data_changed.append(spec.run_id)
        elif old and not force:  # its hash was made with the old name: not compared
            summary.skipped += 1
            summary.renamed.append(old[0])
        else:
            todo.append(spec)
    if scheduler is None:  # a Dask scheduler's workers import them, not this process
        _check_extras(todo)
    by_id = {spec.run_id: spec for spec in todo}
    bar = tqdm(total=len(todo), unit="run", disable=not progress or not todo, dynamic_ncols=True,
               desc=f"{specs[0].suite} runs" if specs else "runs")
    pending = [spec.run_id for spec in todo]  # runs start in this order

    def show_running() -> None:  # the label names the run(s) in flight, not the last finished
        if pending:
            more = min(jobs, len(pending)) - 1
            bar.set_postfix_str(pending[0].split("/", 1)[-1] + (f" (+{more} more)" if more > 0 else ""))

    show_running()
    try:
        outcomes = execute_all(todo, jobs=jobs, scheduler=scheduler)
        with sigterm_raises(), contextlib.closing(outcomes):
            for run_id, record, error in outcomes:
                if record is not None:  # a record the store would refuse on reading is a failed run
                    try:
                        check_record(record)
                    except RecordError as exc:
                        record, error = None, f"RecordError: the run's record is invalid ({exc})"
                try:
                    if record is not None:
                        store.write(record)
                    else:
                        store.write_failure(by_id[run_id].suite, run_id, error or "unknown error")
                except StoreError as exc:  # stop: closing the generator drops the runs in flight
                    if record is None:  # the run's own error is saved nowhere else: show it whole
                        summary.failed[run_id] = error or "unknown error"
                        bar.write(f"FAILED {run_id} (its failure could not be saved):\n{summary.failed[run_id]}")
                    else:
                        summary.failed[run_id] = f"StoreError: {exc}"
                    summary.aborted = str(exc)
                    break
                if record is not None:
                    summary.done += 1
                else:
                    summary.failed[run_id] = error or "unknown error"
                    bar.write(f"FAILED {run_id}: {last_line(error)}")
                if run_id in pending:
                    pending.remove(run_id)
                show_running()
                bar.update()
    finally:
        bar.close()
    return summary
