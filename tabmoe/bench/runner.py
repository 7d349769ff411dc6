"""Run a plan: skip finished runs, execute the rest on an engine, store each result as it comes.

Resuming is the default: a run whose record is in the store is skipped (``force`` reruns
it). A record made under another configuration (suite file or budget edited since) is kept
and reported as ``stale``; ``force`` replaces it. A run killed in flight left nothing in the
store, so the next invocation runs it again from the start (its half-finished Optuna study
is dropped first, so the result equals an uninterrupted run's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tqdm.auto import tqdm

from .engines import execute_all
from .plan import RunSpec
from .storage import RunStore


def last_line(error: str | None) -> str:
    """The last line of a traceback (the exception), for one-line messages."""
    lines = (error or "").strip().splitlines()
    return lines[-1] if lines else "unknown error"


@dataclass
class RunSummary:
    """Counts of one invocation; ``failed`` maps run id -> error text."""

    planned: int = 0
    skipped: int = 0
    done: int = 0
    stale: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed


def run_plan(
    specs: list[RunSpec],
    store: RunStore,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> RunSummary:
    """Execute the unfinished runs of ``specs`` and write each outcome to ``store``."""
    summary = RunSummary(planned=len(specs))
    finished: dict[str, str] = {}
    for suite in dict.fromkeys(s.suite for s in specs):
        finished.update(store.finished(suite))
    todo = []
    for spec in specs:
        if spec.run_id in finished and not force:
            summary.skipped += 1
            if finished[spec.run_id] != spec.config_hash:
                summary.stale.append(spec.run_id)
        else:
            todo.append(spec)
    by_id = {spec.run_id: spec for spec in todo}
    bar = tqdm(total=len(todo), unit="run", disable=not progress or not todo, dynamic_ncols=True,
               desc=f"{specs[0].suite} runs" if specs else "runs")
    try:
        for run_id, record, error in execute_all(todo, jobs=jobs, scheduler=scheduler):
            if record is not None:
                store.write(record)
                summary.done += 1
            else:
                store.write_failure(by_id[run_id].suite, run_id, error or "unknown error")
                summary.failed[run_id] = error or "unknown error"
                bar.write(f"FAILED {run_id}: {last_line(error)}")
            bar.update()
            bar.set_postfix_str(run_id.split("/", 1)[-1], refresh=False)
    finally:
        bar.close()
    return summary
