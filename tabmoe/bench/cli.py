"""``tabmoe-bench``: list suites and models, run a suite (resumable), report, shift reports.

Structured as one click group, :func:`main`; the group's options (``--suites-dir``) are
shared through ``ctx.obj``. Exit codes of ``run`` and ``report`` (:data:`EXIT_CODES`):
0 success, 1 some runs failed (or a result could not be saved), 2 usage error or unusable
storage (nothing ran), 3 results folder busy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..shift import markdown_labels, markdown_table, shift_report
from ..suites import available_suites, default_suites_dir, load_suite
from .metrics import METRICS
from .plan import PROTOCOL_ALIASES, PROTOCOLS, Budget, plan_runs
from .report import write_report

EXIT_CODES = {
    0: "success: every planned run is finished (now or earlier)",
    1: "some runs failed, or a result or the report could not be saved (the others are saved; "
    "rerun to retry them)",
    2: "usage error (bad option, unknown suite / model / split, tuned protocol on a split "
    "without validation, unreachable scheduler, unwritable storage or results folder); nothing ran",
    3: "the results folder is in use by another tabmoe-bench run",
}
_EXIT_HELP = "Exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()) + "."


@contextlib.contextmanager
def _user_errors(usage: bool = False) -> Iterator[None]:
    """Turn bad input (unknown suite or split, missing data, invalid file) into a click error.

    ``usage=True``: a :class:`click.UsageError` (exit code 2) instead of exit code 1.
    """
    try:
        yield
    except (KeyError, FileNotFoundError, ValueError) as exc:
        message = exc.args[0] if exc.args else repr(exc)
        error = click.UsageError if usage else click.ClickException
        raise error(f"{type(exc).__name__}: {message}") from exc


_openml_cache_option = click.option(
    "--openml-cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="openml-python cache root (the folder holding org/openml/www). It is only read; "
    "openml works on a private copy. Default: $TABMOE_OPENML_CACHE, else openml's configured cache.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--suites-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of suite YAML files. Default: $TABMOE_SUITES_DIR, else benchmarks/suites "
    "of this checkout.",
)
@click.pass_context
def main(ctx: click.Context, suites_dir: Path | None) -> None:
    """Benchmark suites of out-of-distribution splits for tabmoe."""
    ctx.obj = {"suites_dir": suites_dir if suites_dir is not None else default_suites_dir()}


@main.command("suites")
@click.pass_context
def suites_command(ctx: click.Context) -> None:
    """List the suites and their splits (name, data, rule, seeds, rationale)."""
    with _user_errors():
        suites = [load_suite(name, ctx.obj["suites_dir"]) for name in available_suites(ctx.obj["suites_dir"])]
    for suite in suites:
        click.echo(f"{suite.name}: {suite.description}")
        for split in suite.splits:
            seeds = suite.seeds_for(split)
            click.echo(
                f"  - {split.name} [{split.data.describe()}; by {split.rule.by}; "
                f"{len(seeds)} seeds] {split.rationale}"
            )


@main.command("shift-report")
@click.argument("suite")
@click.option(
    "--split",
    "split_names",
    multiple=True,
    help="Report only this split (repeat the option for several). Default: every split.",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Split seed (and, for the paper simulation, data seed). Default: each split's first seed.",
)
@_openml_cache_option
@click.option("--cv", type=click.IntRange(2), default=5, show_default=True,
              help="Folds of the cross-validated ID-vs-OOD classifier behind the covariate AUC.")
@click.option("--max-rows", type=click.IntRange(100), default=20_000, show_default=True,
              help="Rows used for the covariate AUC (stratified subsample of ID + OOD rows).")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True,
              help="OpenMP threads of that classifier; 1 is fastest on a busy shared machine.")
@click.option("--labels/--no-labels", default=False, show_default=True,
              help="Also print each split's per-class label proportions, ID vs OOD.")
@click.pass_context
def shift_report_command(
    ctx: click.Context,
    suite: str,
    split_names: tuple[str, ...],
    seed: int | None,
    openml_cache: Path | None,
    cv: int,
    max_rows: int,
    threads: int,
    labels: bool,
) -> None:
    """Print the shift report of SUITE (a suite name or a .yaml path) as a Markdown table.

    Columns: part sizes, rows excluded (no domain value or no label), label TV distance ID
    vs OOD, and the cross-validated ROC AUC of a classifier telling ID from OOD rows.
    Splits with AUC < 0.6 and TV < 0.05 are flagged NEGLIGIBLE SHIFT.
    """
    with _user_errors():
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        definitions = [loaded.split(name) for name in split_names] if split_names else list(loaded.splits)
        reports = []
        for definition in definitions:
            split_seed = seed if seed is not None else loaded.seeds_for(definition)[0]
            split = definition.make(split_seed, openml_cache=openml_cache)
            reports.append(shift_report(
                split, cv=cv, max_rows=max_rows, random_state=split_seed, n_threads=threads
            ))
    click.echo(markdown_table(reports))
    if labels:
        for report in reports:
            click.echo("\n" + markdown_labels(report))


def _names(values: tuple[str, ...]) -> list[str] | None:
    """Repeated and/or comma-separated names, in order, without duplicates (None if none)."""
    names = [n.strip() for value in values for n in value.split(",") if n.strip()]
    return list(dict.fromkeys(names)) or None


def parse_seed_list(text: str | None) -> list[int] | None:
    """``"0,1,5-7"`` -> [0, 1, 5, 6, 7] (ValueError naming the bad piece)."""
    if text is None:
        return None
    seeds: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        low, dash, high = piece.partition("-")
        try:
            seeds += list(range(int(low), int(high) + 1)) if dash else [int(piece)]
        except ValueError:
            raise ValueError(f"--seeds: {piece!r} is not an integer or a range like 0-4") from None
    if not seeds:
        raise ValueError("--seeds: no seeds given")
    return list(dict.fromkeys(seeds))


def _results_dir(results: Path | None, suite: str) -> Path:
    return results if results is not None else Path("results") / Path(suite).stem


_RESULTS_HELP = "Folder of this suite's results, studies and report. Default: results/<suite>."
_STORAGE_HELP = (
    "Database URL (postgresql://user@host/db, sqlite:///file.db) holding the Optuna studies "
    "and the results instead of the results folder, so several machines share them."
)


@main.command("models")
def models_command() -> None:
    """List the models of the registry: name, whether installed, description."""
    from ..models import MODELS

    for name, spec in MODELS.items():
        state = "available" if spec.available() else f"missing {', '.join(spec.requires)}"
        click.echo(f"{name:24s} [{state}] {spec.description}")


@main.command("run", epilog=_EXIT_HELP)
@click.argument("suite")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RESULTS_HELP)
@click.option("--models", "model_names", multiple=True,
              help="Models to run (comma-separated or repeated; see `tabmoe-bench models`). "
              "Default: the suite's models, else every installed model.")
@click.option("--splits", "split_names", multiple=True,
              help="Splits to run (comma-separated or repeated). Default: every split of the suite.")
@click.option("--seeds", default=None,
              help="Seeds to run, e.g. 0,1 or 0-4 (split seed = model seed = tuning seed). "
              "Default: each split's seeds in the suite.")
@click.option("--protocol", "protocols", multiple=True,
              type=click.Choice([*PROTOCOLS, *PROTOCOL_ALIASES]),
              help="defaults: every model as a user constructs it (Model(), only random_state); "
              "fixed-budget (alias: untuned): paper defaults + the suite's fixed parameters, no search; "
              "tuned: Optuna on ID validation; unlabeled-target: half the OOD rows given to fit without "
              "labels (unlabeled rows, importance weights), the other half scored; paper: the paper's "
              "own protocol. Repeatable. Default: the suite's, else fixed-budget + tuned.")
@click.option("--trials", type=click.IntRange(1), default=None,
              help="Tuning budget: Optuna trials per (model, split, seed). Default: the suite's tuning.n_trials.")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=None,
              help="Tuning budget: seconds per (model, split, seed); a running trial finishes. "
              "Default: the suite's tuning.timeout.")
@click.option("--metric", type=click.Choice(list(METRICS)), default=None,
              help="ID-validation metric the tuner selects on. Default: the suite's, else accuracy.")
@click.option("--jobs", type=click.IntRange(1), default=1, show_default=True,
              help="Runs executed at once in local worker processes (joblib/loky).")
@click.option("--scheduler", default=None,
              help="Address of an existing Dask distributed scheduler (tcp://host:8786) to run on "
              "instead of local processes; workers need tabmoe, the data and a shared --storage.")
@click.option("--storage", default=None, help=_STORAGE_HELP)
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True,
              help="torch / BLAS / OpenMP threads per run; 1 is best when runs go in parallel.")
@_openml_cache_option
@click.option("--force", is_flag=True, default=False,
              help="Rerun finished runs too (replacing their records) instead of skipping them.")
@click.option("--report/--no-report", default=True, show_default=True,
              help="Write the suite's report (report.md, CSV, PNG) into the results folder at the end.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show a progress bar over runs on stderr.")
@click.pass_context
def run_command(
    ctx: click.Context,
    suite: str,
    results: Path | None,
    model_names: tuple[str, ...],
    split_names: tuple[str, ...],
    seeds: str | None,
    protocols: tuple[str, ...],
    trials: int | None,
    timeout: float | None,
    metric: str | None,
    jobs: int,
    scheduler: str | None,
    storage: str | None,
    threads: int,
    openml_cache: Path | None,
    force: bool,
    report: bool,
    progress: bool,
) -> None:
    """Run SUITE (a suite name or .yaml path): models x splits x seeds x protocols.

    Finished runs are skipped, so rerunning the same command resumes after an interruption
    (even SIGKILL: only the runs in flight are lost). Each finished run is one record (params,
    ID and OOD accuracy, balanced accuracy, log loss, ROC AUC, times, peak memory, versions,
    git revision) written atomically to RESULTS/runs/ (or the --storage database).
    """
    from .runner import last_line, run_plan
    from .storage import (
        ResultsLocked,
        StoreError,
        open_store,
        repair_journal,
        results_lock,
        study_storage,
    )

    results = _results_dir(results, suite)
    with _user_errors(usage=True):
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        budget = Budget.from_dict(
            {**loaded.tuning, **{k: v for k, v in (("n_trials", trials), ("timeout", timeout), ("metric", metric)) if v is not None}},
            f"suite {loaded.name!r} tuning",
        )
        store = open_store(results, storage)
        specs = plan_runs(
            loaded, models=_names(model_names), splits=_names(split_names), seeds=parse_seed_list(seeds),
            protocols=list(protocols) or None, budget=budget, openml_cache=openml_cache, threads=threads,
            study_storage=study_storage(results, storage),
        )
    report_error = None
    try:
        with results_lock(results):
            store.probe()
            if storage is None:
                repair_journal(study_storage(results))
            for warning in store.recover(loaded.name):
                click.echo(f"warning: {warning}", err=True)
            summary = run_plan(specs, store, jobs=jobs, scheduler=scheduler, force=force, progress=progress)
            if report and summary.aborted is None:
                report_error = _report_after_run(loaded, store, results, [s.run_id for s in specs])
    except ResultsLocked as exc:
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(3)
    except StoreError as exc:  # before any run started (after, run_plan keeps it in the summary)
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:
        if scheduler is None or "Dask scheduler" not in str(exc):
            raise
        raise click.UsageError(str(exc)) from exc
    if summary.stale:
        click.echo(
            f"warning: {len(summary.stale)} finished run(s) were made with another configuration "
            f"(kept; --force reruns them), e.g. {summary.stale[0]}", err=True,
        )
    if summary.aborted is not None:
        click.echo(f"Error: {summary.aborted}", err=True)
        click.echo("Stopped: every result saved before is kept; fix the cause and rerun the same "
                   "command to resume.", err=True)
    click.echo(
        f"{loaded.name}: {summary.planned} planned, {summary.skipped} already finished, "
        f"{summary.done} run now, {len(summary.failed)} failed"
        + (f", {summary.not_run} not run" if summary.not_run else "")
        + f". Results: {results}"
        + (f"; report: {results / 'report.md'}" if report and summary.aborted is None and report_error is None else "")
    )
    if summary.failed:
        click.echo("Failed runs (rerun the same command to retry them):", err=True)
        for run_id, error in summary.failed.items():
            click.echo(f"  {run_id}: {last_line(error)}", err=True)
    if report_error is not None:
        click.echo(f"Error: {report_error}", err=True)
    ctx.exit(0 if summary.ok and report_error is None else 1)


def _report_after_run(suite: Any, store: Any, results: Path, planned: list[str]) -> str | None:
    """Write the report at the end of ``run``; the error text if it could not be written."""
    from .storage import StoreError

    try:
        if not store.records(suite.name):
            click.echo(f"no finished runs to report for {suite.name!r}", err=True)
            return None
        _write_report(suite, store, results, planned=planned)
    except StoreError as exc:
        return f"report not written: {exc}"
    except OSError as exc:
        from .storage import os_error_text

        return f"cannot write the report to {results}: {os_error_text(exc)}"
    return None


def _write_report(suite: Any, store: Any, out: Path, planned: list[str] | None = None,
                  reference: str = "tabmoe", tie: float = 0.005) -> Path:
    records, corrupt = store.scan(suite.name)
    failures = store.failures(suite.name)
    for item in corrupt:
        click.echo(f"warning: skipping corrupted {item.location} ({item.reason}); `tabmoe-bench run` "
                   "sets it aside and redoes the run", err=True)
        failures[item.run_id] = f"corrupted {item.location}: {item.reason}"
    done = {r["run_id"] for r in records}
    for run_id in planned or []:
        if run_id not in done and run_id not in failures:
            failures[run_id] = "not run"
    write_report(
        records, out, title=suite.name, description=suite.description,
        split_order=[s.name for s in suite.splits], reference=reference, tie=tie, failures=failures,
    )
    return out / "report.md"


@main.command("report", epilog=_EXIT_HELP)
@click.argument("suite")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RESULTS_HELP)
@click.option("--storage", default=None, help=_STORAGE_HELP)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for report.md, the CSV tables and PNG plots. Default: the results folder.")
@click.option("--reference", default="tabmoe", show_default=True,
              help="Model the others are compared with (win/tie/loss, Wilcoxon signed-rank test).")
@click.option("--tie", type=click.FloatRange(0), default=0.005, show_default=True,
              help="Differences of mean OOD accuracy within this are counted as ties.")
@click.pass_context
def report_command(
    ctx: click.Context, suite: str, results: Path | None, storage: str | None, out: Path | None,
    reference: str, tie: float,
) -> None:
    """Write the report of SUITE's finished runs: Markdown + CSV tables and PNG plots.

    Tables per protocol: mean ± SD over seeds of ID and OOD accuracy and the gap, per-split
    ranks, win/tie/loss against --reference with a Wilcoxon signed-rank test across splits,
    cost; the paper suite adds the paper's published numbers beside ours.
    """
    from .storage import StoreError, open_store, os_error_text

    results = _results_dir(results, suite)
    out = out if out is not None else results
    with _user_errors(usage=True):
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        store = open_store(results, storage)
        try:
            path = _write_report(loaded, store, out, reference=reference, tie=tie)
        except StoreError as exc:
            raise click.UsageError(str(exc)) from exc
        except OSError as exc:
            raise click.ClickException(f"cannot write the report to {out}: {os_error_text(exc)}") from exc
    click.echo(f"report: {path}")
