"""``tabmoe-bench``: list suites and models, run a suite (resumable), report, shift reports.

Structured as one click group, :func:`main`; the group's options (``--suites-dir``) are
shared through ``ctx.obj``. Exit codes of every command (:data:`EXIT_CODES`): 0 success,
1 some runs failed (or a result could not be saved), 2 usage error or unusable storage
(nothing ran; one line ``Error: ...``), 3 results folder busy.

Heavy modules (torch, pandas, scikit-learn, optuna) are imported inside the commands, so
``--help`` and ``--version`` answer at once.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .. import __version__

#: Names of :data:`tabmoe.bench.plan.PROTOCOLS`, their aliases and :data:`tabmoe.metrics.METRICS`,
#: spelled out so that ``--help`` imports neither (a test checks they agree).
PROTOCOL_NAMES = ("defaults", "fixed-budget", "tuned", "unlabeled-target", "paper")
#: Old names still accepted (:data:`tabmoe.bench.plan.PROTOCOL_ALIASES`).
PROTOCOL_ALIAS_NAMES = ("untuned",)
METRIC_NAMES = ("accuracy", "balanced_accuracy", "log_loss", "roc_auc")
#: Where ``run`` and ``report`` keep a suite's results when ``--results`` is not given.
DEFAULT_RESULTS = Path("results")

EXIT_CODES = {
    0: "success: every planned run is finished (now or earlier)",
    1: "some runs failed, or a result or the report could not be saved (the others are saved; "
    "rerun to retry them)",
    2: "usage error (bad option, unknown suite / model / split, a suite models: parameter the "
    "model does not take or a value it refuses, tuned protocol on a split without validation, "
    "unreachable scheduler, unwritable storage or results folder, an extra it needs not installed); nothing ran",
    3: "the results folder is in use by another tabmoe-bench run",
    130: "interrupted (Ctrl-C): every result saved before is kept; rerun to resume",
}
#: ``report``'s exit codes (it runs nothing and takes no lock).
REPORT_EXIT_CODES = {
    0: "the report is written",
    1: "the report could not be written",
    2: "usage error (unknown suite, no results folder or database, no finished runs, a --reference "
    "without runs); nothing written",
}


def _exit_help(codes: dict[int, str]) -> str:
    return "Exit codes: " + "; ".join(f"{code} {text}" for code, text in codes.items()) + "."


class BadUsage(click.ClickException):
    """A usage error reported as one plain line, ``Error: <message>``, with exit code 2."""

    exit_code = 2


def _plain(exc: BaseException) -> str:
    """The exception's own message, without its class name (KeyError's repr quotes included)."""
    message = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    return " ".join(message.split()) or type(exc).__name__


def _one_line(exc: click.UsageError) -> click.ClickException:
    """click's own usage errors (bad option value, unknown option or command) as one line."""
    path = exc.ctx.command_path if exc.ctx is not None else "tabmoe-bench"
    return BadUsage(f"{exc.format_message()} (see {path} --help)")


_HELP_ERRORS = tuple(
    cls for cls in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if cls is not None
)


class _OneLineErrors(click.Group):
    """A group whose usage errors, click's included, print one ``Error: ...`` line (exit 2)."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if isinstance(exc, _HELP_ERRORS):
                raise
            raise _one_line(exc) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if isinstance(exc, _HELP_ERRORS):
                raise
            raise _one_line(exc) from exc


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """Turn bad input (unknown suite or split, missing data, invalid file) into :class:`BadUsage`."""
    try:
        yield
    except (KeyError, FileNotFoundError, NotADirectoryError, ValueError) as exc:
        raise BadUsage(_plain(exc)) from exc


class _UserPath(click.Path):
    """``click.Path`` with ``~`` expanded: a quoted "~/cache" (or ``--results=~/r``, which the
    shell leaves alone) reaches the program as typed; a written folder was made as ``./~/r``.
    An empty value (``--results "$OUT"`` with ``OUT`` unset) is refused: ``Path("")`` is the
    current folder, where ``run`` wrote its runs, journal and report."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value:
            self.fail("the path is empty (an unset shell variable?); give a folder, or leave the "
                      "option out for its default.", param, ctx)
        return super().convert(Path(value).expanduser() if isinstance(value, str) else value, param, ctx)


_openml_cache_option = click.option(
    "--openml-cache",
    type=_UserPath(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="openml-python cache root (the folder holding org/openml/www). It is only read; "
    "openml works on a private copy. Default: $TABMOE_OPENML_CACHE, else openml's configured cache.",
)
_download_option = click.option(
    "--download", is_flag=True, default=False,
    help="Fetch OpenML datasets missing from the cache from openml.org (as ARFF) into tabmoe's "
    "private working copy; the cache given is never written. Needs network access. Does not "
    "change any run's id, config hash or record.",
)


_SUITES_DIR_HELP = ("Folder of suite YAML files. Default: $TABMOE_SUITES_DIR, else the suites "
                    "shipped with tabmoe (tabmoe/bench/suites).")
_SUITES_DIR_TYPE = _UserPath(exists=True, file_okay=False, path_type=Path)


def _command_suites_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """``--suites-dir`` after a subcommand: the same as before it (refused when both differ)."""
    if value is None:
        return
    given = ctx.parent.params.get("suites_dir") if ctx.parent is not None else None
    if given is not None and Path(given).resolve() != value.resolve():
        raise click.BadParameter(f"{value} differs from the --suites-dir {given} given before "
                                 f"{ctx.info_name}; give one.", ctx=ctx, param=param)
    ctx.ensure_object(dict)["suites_dir"] = value


#: ``--suites-dir`` of the commands that read suites, so that it also works after them.
_suites_dir_option = click.option(
    "--suites-dir", type=_SUITES_DIR_TYPE, default=None, expose_value=False,
    callback=_command_suites_dir, help=_SUITES_DIR_HELP + " Also accepted before the command.",
)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="tabmoe-bench",
                      message="%(prog)s %(version)s")
@click.option("--suites-dir", type=_SUITES_DIR_TYPE, default=None, help=_SUITES_DIR_HELP)
@click.pass_context
def main(ctx: click.Context, suites_dir: Path | None) -> None:
    """Benchmark suites of out-of-distribution splits for tabmoe."""
    from .suites import default_suites_dir

    ctx.obj = {"suites_dir": suites_dir if suites_dir is not None else default_suites_dir()}


@main.command("suites")
@_suites_dir_option
@click.pass_context
def suites_command(ctx: click.Context) -> None:
    """List the suites and their splits (name, data, rule, seeds, rationale); a suite file
    that does not load is named with its error, after the others (exit code 2)."""
    from .suites import load_suites

    with _user_errors():
        suites, problems = load_suites(ctx.obj["suites_dir"])
    if not suites and not problems:  # else an empty listing, as for a folder of suites it cannot see
        click.echo(f"no suites: {ctx.obj['suites_dir']} holds no *.yaml file")
    for suite in suites:
        click.echo(f"{suite.name}: {suite.description}")
        for split in suite.splits:
            seeds = suite.seeds_for(split)
            click.echo(
                f"  - {split.name} [{split.data.describe()}; by {split.rule.by}; "
                f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''}] {split.rationale}"
            )
    for problem in problems:  # one bad file hid every good suite of the folder
        click.echo(f"Error: {problem}", err=True)
    ctx.exit(2 if problems else 0)


@main.command("shift-report")
@click.argument("suite")
@_suites_dir_option
@click.option(
    "--split",
    "split_names",
    multiple=True,
    help="Report only this split (repeat the option for several; a split named twice is "
    "reported once). Default: every split.",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Split seed (and, for the paper simulation, data seed). Default: each split's first seed.",
)
@_openml_cache_option
@_download_option
@click.option("--cv", type=click.IntRange(2), default=5, show_default=True,
              help="Folds of the cross-validated ID-vs-OOD classifier behind the covariate AUC.")
@click.option("--max-rows", type=click.IntRange(100), default=20_000, show_default=True,
              help="Most rows used for the covariate AUC: the smaller side (ID or OOD) whole up "
              "to half of them, the larger side the rest (seeded; not proportional).")
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
    download: bool,
    cv: int,
    max_rows: int,
    threads: int,
    labels: bool,
) -> None:
    """Print the shift report of SUITE (a suite name or a .yaml path) as a Markdown table.

    Columns: part sizes, rows excluded (no domain value, no label, or a value in neither
    list of a values split), label TV distance ID vs OOD, and the cross-validated ROC AUC of
    a classifier telling ID from OOD rows.
    Splits with AUC < 0.6 and TV < 0.05 are flagged NEGLIGIBLE SHIFT.
    """
    from ..data._spec import MAX_SEED
    from ..data.shift import markdown_labels, markdown_table, shift_report
    from .suites import load_suite

    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise BadUsage(f"--seed: {seed} is not in [0, 2**32)")
    with _user_errors():
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        definitions = [_named_split(loaded, name) for name in split_names] or list(loaded.splits)
        definitions = list({d.name: d for d in definitions}.values())  # a split named twice: once
        reports = []
        for definition in definitions:
            split_seed = seed if seed is not None else loaded.seeds_for(definition)[0]
            split = definition.make(split_seed, openml_cache=openml_cache, download=download)
            reports.append(shift_report(
                split, cv=cv, max_rows=max_rows, random_state=split_seed, n_threads=threads
            ))
    click.echo(markdown_table(reports))
    if labels:
        for report in reports:
            click.echo("\n" + markdown_labels(report))


def _named_split(suite: Any, name: str) -> Any:
    """``suite``'s split ``name`` for ``--split`` (a usage error naming the option otherwise)."""
    try:
        return suite.split(name)
    except KeyError as exc:
        raise BadUsage(f"--split: {_plain(exc)}") from exc


def _names(values: tuple[str, ...], option: str, known: Any = ()) -> list[str] | None:
    """Repeated and/or comma-separated names, in order, without duplicates (None if the
    option is not given; given but empty, e.g. ``--models ""``, is a usage error). A value
    that is itself one of the ``known`` names is taken whole: a split may be named ``a,b``."""
    names = [n.strip() for value in values
             for n in ([value] if value.strip() in known else value.split(",")) if n.strip()]
    if values and not names:
        raise BadUsage(f"{option} names nothing; leave it out for the suite's default")
    return list(dict.fromkeys(names)) or None


def _results_dir(results: Path | None, suite: str) -> Path:
    return results if results is not None else DEFAULT_RESULTS / Path(suite).stem


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A number option's value, refused when NaN or infinite (click's FloatRange takes both:
    ``--tie nan`` counted no split as a win, tie or loss, and the report said "within ±nan")."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number.", ctx=ctx, param=param)
    return value


_RESULTS_HELP = ("Folder of this suite's results, studies and report. Default: results/<suite> "
                 "in the current folder (the same for run and report).")
_STORAGE_HELP = (
    "Database URL (postgresql://user@host/db, sqlite:///file.db) holding the Optuna studies "
    "and the results instead of the results folder, so several machines share them."
)


@main.command("models")
def models_command() -> None:
    """List the models of the registry: name, whether installed, description."""
    from ..registry import MODELS

    for name, spec in MODELS.items():
        state = spec.install_hint() or "available"
        click.echo(f"{name:24s} [{state}] {spec.description}")


@main.command("run", epilog=_exit_help(EXIT_CODES))
@click.argument("suite")
@_suites_dir_option
@click.option("--results", type=_UserPath(file_okay=False, path_type=Path), default=None, help=_RESULTS_HELP)
@click.option("--models", "model_names", multiple=True,
              help="Models to run (comma-separated or repeated; see `tabmoe-bench models`). "
              "Default: the suite's models, else every installed model.")
@click.option("--splits", "split_names", multiple=True,
              help="Splits to run (comma-separated or repeated; a split whose name holds a comma: "
              "as one value of its own). Default: every split of the suite.")
@click.option("--seeds", default=None,
              help="Seeds to run, e.g. 0,1 or 0-4 (split seed = model seed = tuning seed). "
              "Default: each split's seeds in the suite.")
@click.option("--protocol", "protocols", multiple=True,
              type=click.Choice([*PROTOCOL_NAMES, *PROTOCOL_ALIAS_NAMES]),
              help="defaults: every model as a user constructs it (Model(), only random_state); "
              "fixed-budget (alias: untuned): paper defaults + the suite's fixed parameters, no search; "
              "tuned: Optuna on ID validation; unlabeled-target: half the OOD rows given to fit without "
              "labels (unlabeled rows, importance weights), the other half scored; paper: the paper's "
              "own protocol. Repeatable. Default: the suite's, else fixed-budget + tuned.")
@click.option("--trials", type=click.IntRange(1), default=None,
              help="Tuning budget: Optuna trials per (model, split, seed). Default: the suite's tuning.n_trials, "
              "else 20 (with a timeout too; `n_trials: null` in the suite: seconds alone).")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=None, callback=_finite,
              help="Tuning budget: seconds per (model, split, seed); a running trial finishes. "
              "Default: the suite's tuning.timeout.")
@click.option("--metric", type=click.Choice(METRIC_NAMES), default=None,
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
@_download_option
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
    download: bool,
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
    from .engines import connect
    from .plan import Budget, parse_seed_list, plan_runs
    from .runner import last_line, run_plan
    from .storage import (
        ResultsLocked,
        StoreError,
        open_store,
        repair_journal,
        results_lock,
        study_storage,
    )
    from .suites import load_suite

    results = _results_dir(results, suite)
    with _user_errors():
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        budget = Budget.of_suite(loaded, n_trials=trials, timeout=timeout, metric=metric)
        specs = plan_runs(
            loaded, models=_names(model_names, "--models"),
            splits=_names(split_names, "--splits", {d.name for d in loaded.splits}),
            seeds=parse_seed_list(seeds),
            protocols=list(protocols) or None, budget=budget, openml_cache=openml_cache, threads=threads,
            study_storage=study_storage(results, storage), download=download,
        )
        client = None
        if scheduler is not None:  # before anything is created (results folder, lock, database)
            try:
                client = connect(scheduler)
            except OSError as exc:
                raise BadUsage(_plain(exc)) from exc
            ctx.call_on_close(client.close)  # the scheduler and its workers keep running
        store = open_store(results, storage)
        ctx.call_on_close(store.close)  # its database connections, at the end of the command
    report_error = report_path = None
    try:
        with results_lock(results):
            store.probe(loaded.name)
            if storage is None:
                try:
                    repair_journal(study_storage(results))
                except StoreError as exc:  # a damaged journal fails tuned runs only
                    if any(spec.tuned for spec in specs):
                        raise
                    click.echo(f"warning: {exc}", err=True)
            for warning in [*store.ignored(loaded.name), *store.recover(loaded.name)]:
                click.echo(f"warning: {warning}", err=True)
            summary = run_plan(specs, store, jobs=jobs, scheduler=client, force=force, progress=progress)
            if report and summary.aborted is None:
                report_path, report_error = _report_after_run(
                    loaded, store, results, [s.run_id for s in specs], budget
                )
    except ResultsLocked as exc:
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(3)
    except KeyboardInterrupt:  # click's own "Aborted!" exits 1, which reads as failed runs
        click.echo("Interrupted: every result saved before is kept; rerun the same command to "
                   "resume.", err=True)
        ctx.exit(130)
    except StoreError as exc:  # before any run started (after, run_plan keeps it in the summary)
        raise BadUsage(_plain(exc)) from exc
    if summary.stale:
        click.echo(
            f"warning: {len(summary.stale)} finished run(s) were made with another configuration "
            f"(kept; --force reruns them), e.g. {summary.stale[0]}", err=True,
        )
    if summary.data_changed:
        click.echo(
            f"warning: {len(summary.data_changed)} finished run(s) were made on another version of "
            f"their data file (its content changed since; kept, --force reruns them), e.g. "
            f"{summary.data_changed[0]}", err=True,
        )
    if summary.renamed:
        click.echo(
            f"warning: {len(summary.renamed)} finished run(s) carry an old protocol name (kept, and "
            f"reported under the new one), e.g. {summary.renamed[0]}" + ("" if storage else  # a database's: kept
                f"; `tabmoe-bench rename-protocol {results}` renames them in place"), err=True,
        )
    if summary.aborted is not None:
        click.echo(f"Error: {summary.aborted}", err=True)
        click.echo("Stopped: every result saved before is kept; fix the cause and rerun the same "
                   "command to resume.", err=True)
    click.echo(
        f"{loaded.name}: {summary.planned} planned, {summary.skipped} already finished, "
        f"{summary.done} run now, {len(summary.failed)} failed"
        + (f", {summary.not_run} not run" if summary.not_run else "")
        # with --storage the records are in the database; the folder holds the lock and report
        + f". Results: {getattr(store, 'shown', None) or results}"
        + (f"; report: {report_path}" if report_path is not None else "")
    )
    if summary.failed:
        click.echo("Failed runs (rerun the same command to retry them):", err=True)
        for run_id, error in summary.failed.items():
            click.echo(f"  {run_id}: {last_line(error)}", err=True)
    if report_error is not None:
        click.echo(f"Error: {report_error}", err=True)
    ctx.exit(0 if summary.ok and report_error is None else 1)


def _report_after_run(
    suite: Any, store: Any, results: Path, planned: list[str], budget: Any = None
) -> tuple[Path | None, str | None]:
    """Write the report at the end of ``run``: (its path if written, the error text if it failed).
    ``budget``: the tuning budget the run planned with (``--trials``, ``--timeout``,
    ``--metric`` over the suite's), which its runs are compared with (OLD CONFIGURATION)."""
    from .._optional import MissingExtraError
    from .storage import StoreError, os_error_text

    try:
        if not store.records(suite.name):
            click.echo(f"no finished runs to report for {suite.name!r}: no report written", err=True)
            return None, None
        return _write_report(suite, store, results, planned=planned, budget=budget), None
    except (StoreError, MissingExtraError) as exc:  # matplotlib missing: after the runs' summary too
        return None, f"report not written: {exc}"
    except OSError as exc:
        return None, f"cannot write the report to {results}: {os_error_text(exc)}"


def _write_report(suite: Any, store: Any, out: Path, planned: list[str] | None = None,
                  reference: str = "tabmoe", tie: float = 0.005, check_reference: bool = False,
                  budget: Any = None) -> Path:
    """``check_reference``: refuse a ``reference`` model that has no runs (given by the user).
    ``budget``: the tuning budget records count as current with (None: the suite's)."""
    from .plan import current_config_hash, current_run_id
    from .report import write_report

    records, corrupt = store.scan(suite.name)
    failures = store.failures(suite.name)
    for warning in store.ignored(suite.name) if planned is None else ():  # run warned already
        click.echo(f"warning: {warning}", err=True)
    for item in corrupt:
        click.echo(f"warning: skipping corrupted {item.location} ({item.reason}); `tabmoe-bench run` "
                   "sets it aside and redoes the run", err=True)
        failures[item.run_id] = f"corrupted {item.location}: {item.reason}"
    if not records:  # before write_report, which creates the output folder
        raise ValueError(f"no finished runs to report for {suite.name!r} in {store.place(suite.name)}")
    models = sorted({r["model"] for r in records})
    if check_reference and reference not in models:
        raise ValueError(f"--reference {reference!r} has no runs in these results; models: {models}")
    # a record under an old protocol name (untuned) finishes its run under the current name
    done = {run_id for r in records for run_id in (r["run_id"], current_run_id(r["run_id"]))}
    # a failed --force rerun keeps the run's older record: it is finished, not failed
    failures = {run_id: error for run_id, error in failures.items() if run_id not in done}
    for run_id in planned or []:
        if run_id not in done and run_id not in failures:
            failures[run_id] = "not run"
    write_report(
        records, out, title=suite.name, description=suite.description,
        split_order=[s.name for s in suite.splits], reference=reference, tie=tie, failures=failures,
        current_hashes={r["run_id"]: current_config_hash(suite, r, budget) for r in records},
        plan_known=planned is not None,
    )
    return out / "report.md"


@main.command("report", epilog=_exit_help(REPORT_EXIT_CODES))
@click.argument("suite")
@_suites_dir_option
@click.option("--results", type=_UserPath(file_okay=False, path_type=Path), default=None, help=_RESULTS_HELP)
@click.option("--storage", default=None, help=_STORAGE_HELP)
@click.option("--out", type=_UserPath(file_okay=False, path_type=Path), default=None,
              help="Folder for report.md, the CSV tables and PNG plots. Default: the results folder.")
@click.option("--reference", default="tabmoe", show_default=True,
              help="Model the others are compared with (win/tie/loss, Wilcoxon signed-rank test).")
@click.option("--tie", type=click.FloatRange(0), default=0.005, show_default=True, callback=_finite,
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
    from .suites import load_suite

    given = results is not None
    results = _results_dir(results, suite)
    out = out if out is not None else results
    with _user_errors():
        loaded = load_suite(suite, ctx.obj["suites_dir"])
        if storage is None and not results.is_dir():  # read-only: create nothing
            hint = "" if given else " (pass --results FOLDER)"
            raise BadUsage(
                f"no results folder {results}{hint}; `tabmoe-bench run {suite}"
                + (f" --results {results}" if given else "") + "` writes one"
            )
        store = open_store(results, storage, create=False)
        ctx.call_on_close(store.close)
        try:
            explicit = ctx.get_parameter_source("reference") is not click.core.ParameterSource.DEFAULT
            path = _write_report(loaded, store, out, reference=reference, tie=tie, check_reference=explicit)
        except StoreError as exc:
            raise BadUsage(_plain(exc)) from exc
        except OSError as exc:
            raise click.ClickException(f"cannot write the report to {out}: {os_error_text(exc)}") from exc
    click.echo(f"report: {path}")


@main.command("rename-protocol")
@click.argument("results", type=_UserPath(exists=True, file_okay=False, path_type=Path))
def rename_protocol_command(results: Path) -> None:
    """Rename the records in RESULTS saved under an old protocol name (untuned) to the current
    one (fixed-budget), in place: file, run id and config hash; nothing is rerun."""
    from .rename import rename_command

    rename_command(results)
