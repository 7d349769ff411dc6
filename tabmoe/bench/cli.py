"""``tabmoe-bench``: list benchmark suites and report how much each split shifts.

Structured as one click group, :func:`main`; add commands (``run``, ``report``) with
``@main.command()``. The group's options (``--suites-dir``) are shared through
``ctx.obj``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import click

from ..shift import markdown_labels, markdown_table, shift_report
from ..suites import available_suites, default_suites_dir, load_suite


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    """Turn bad input (unknown suite or split, missing data, invalid file) into a click error."""
    try:
        yield
    except (KeyError, FileNotFoundError, ValueError) as exc:
        message = exc.args[0] if exc.args else repr(exc)
        raise click.ClickException(f"{type(exc).__name__}: {message}") from exc


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
@click.option(
    "--openml-cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="openml-python cache root (the folder holding org/openml/www). It is only read; "
    "openml works on a private copy. Default: $TABMOE_OPENML_CACHE, else openml's configured cache.",
)
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
