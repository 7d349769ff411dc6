"""``tabmoe-bench`` on partial input: a report after an interrupted or partial run, a split
named twice, the results database after a command, Ctrl-C in a tuned run."""

from __future__ import annotations

import pytest

pytest.importorskip("click")  # extra "bench"

from click.testing import CliRunner

from tabmoe.bench.cli import main

from .bench_helpers import tiny_suite


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_a_report_without_the_plan_does_not_claim_no_run_is_unfinished(runner, tmp_path):
    """``report`` after ``run --seeds 0`` of a 3-seed suite (or a run killed midway) said
    "0 failed or unfinished" although 2 planned runs had no record: it does not know the plan."""
    suite = tiny_suite(tmp_path, seeds=(0, 1, 2))
    results = tmp_path / "results"
    args = [str(suite), "--results", str(results)]
    ran = runner.invoke(main, ["run", *args, "--seeds", "0", "--no-progress"])
    assert ran.exit_code == 0, ran.output
    # run's own report knows its plan (1 run, finished)
    assert "; 0 failed or unfinished." in (results / "report.md").read_text()
    assert runner.invoke(main, ["report", *args]).exit_code == 0
    report = (results / "report.md").read_text()
    assert "failed or unfinished" not in report
    assert "1 finished runs (1 models, 1 splits, seeds [0]); 0 failed; runs never started are not counted" in report


def test_shift_report_reports_a_split_named_twice_once(runner, tmp_path):
    """``shift-report --split price --split price`` printed the split's row twice (and
    computed it twice); ``run --splits`` drops such duplicates too."""
    suite = tiny_suite(tmp_path, splits=("price", "safety"))
    result = runner.invoke(main, ["shift-report", str(suite), "--split", "safety", "--split", "price",
                                  "--split", "safety", "--max-rows", "200", "--cv", "2"])
    assert result.exit_code == 0, result.output
    rows = [line.split("|")[1].strip() for line in result.output.splitlines() if line.startswith("| ")]
    assert rows == ["split", "safety", "price"]


def test_run_and_report_close_the_results_database(runner, tmp_path, monkeypatch):
    """With ``--storage`` each ``run`` and ``report`` left its pooled database connection to
    the garbage collector: three in-process runs held three open connections."""
    from tabmoe.bench import storage

    stores = []
    opened = storage.SQLStore.__init__

    def recorded(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        stores.append(self)  # kept alive here, as a long-lived caller would

    monkeypatch.setattr(storage.SQLStore, "__init__", recorded)
    suite = tiny_suite(tmp_path, seeds=(0, 1, 2))
    url = f"sqlite:///{tmp_path / 'results.db'}"
    for seed in "012":
        ran = runner.invoke(main, ["run", str(suite), "--storage", url, "--seeds", seed, "--no-progress",
                                   "--results", str(tmp_path / "results")])
        assert ran.exit_code == 0, ran.output
    reported = runner.invoke(main, ["report", str(suite), "--storage", url, "--out", str(tmp_path / "out")])
    assert reported.exit_code == 0, reported.output
    assert len(stores) == 4
    assert [s.engine.pool.checkedin() + s.engine.pool.checkedout() for s in stores] == [0, 0, 0, 0]


def test_ctrl_c_in_a_tuned_run_reads_as_in_an_untuned_one(runner, tmp_path, monkeypatch):
    """Ctrl-C in a trial of a ``--protocol tuned`` run printed Optuna's "Trial 0 failed ...
    KeyboardInterrupt()" traceback (and "Trial 0 failed with value None.") before the CLI's
    "Interrupted: ..." line, which an interrupted untuned run prints alone."""
    import logging

    import sklearn.linear_model

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    logged = []

    class Recorder(logging.Handler):
        def emit(self, record):
            logged.append(record.getMessage())

    # A second handler on Optuna's logger (as another library or test may add): the
    # interrupted trial's lines must reach neither.
    recorder, other = Recorder(), logging.NullHandler()
    optuna_logger = logging.getLogger("optuna")
    optuna_logger.addHandler(other)
    optuna_logger.addHandler(recorder)
    monkeypatch.setattr(sklearn.linear_model.LogisticRegression, "fit", interrupted)
    try:
        for protocol in ("tuned", "fixed-budget"):
            suite = tiny_suite(tmp_path / protocol, protocols=(protocol,), n_trials=2)
            result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / protocol / "results"),
                                          "--no-progress"])
            assert result.exit_code == 130, result.output
            assert "Interrupted: every result saved before is kept" in result.output
    finally:
        optuna_logger.removeHandler(recorder)
        optuna_logger.removeHandler(other)
    assert not [m for m in logged if "failed" in m], logged


def test_a_tilde_in_the_results_out_and_suites_folders_is_the_home_folder(runner, tmp_path, monkeypatch):
    """``--results=~/r`` (the shell expands no ``~`` after ``=``) and a quoted ``--out '~/o'``
    wrote into a folder named ``~`` in the current folder, where the report then was too."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    tiny_suite(home / "suites")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    ran = runner.invoke(main, ["run", "tiny", "--suites-dir", "~/suites", "--results=~/r", "--no-progress",
                               "--no-report"])
    assert ran.exit_code == 0, ran.output
    assert (home / "r" / "runs" / "tiny").is_dir()
    reported = runner.invoke(main, ["--suites-dir=~/suites", "report", "tiny", "--results=~/r", "--out=~/o"])
    assert reported.exit_code == 0, reported.output
    assert (home / "o" / "report.md").is_file()
    assert list(cwd.iterdir()) == []


def test_a_tilde_in_a_suite_file_argument_is_the_home_folder(runner, tmp_path, monkeypatch):
    """The SUITE argument ``'~/suites/tiny.yaml'`` (quoted, or given from Python) said "suite
    file not found: ~/suites/tiny.yaml", where ``--results`` and ``--suites-dir`` read ``~``."""
    from tabmoe.bench.suites import load_suite

    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    tiny_suite(home / "suites")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    assert load_suite("~/suites/tiny.yaml").name == "tiny"
    ran = runner.invoke(main, ["run", "~/suites/tiny.yaml", "--results=~/r", "--no-progress", "--no-report"])
    assert ran.exit_code == 0, ran.output
    assert (home / "r" / "runs" / "tiny").is_dir() and list(cwd.iterdir()) == []


@pytest.mark.parametrize("option", ["--results", "--out", "--suites-dir", "--openml-cache"])
def test_an_empty_path_option_is_refused_not_read_as_the_current_folder(runner, tmp_path, monkeypatch, option):
    """``--results ""`` (``--results "$OUT"`` with ``OUT`` unset) was ``Path("")``, the current
    folder: ``run`` wrote runs/, failures/, .lock and the report there, ``report --out ""``
    wrote the report there, and ``report --results ""`` said "no finished runs"."""
    suite, cwd = tiny_suite(tmp_path / "suites"), tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    args = {
        "--results": ["run", str(suite), "--results", "", "--no-progress"],
        "--out": ["report", str(suite), "--results", str(tmp_path), "--out", ""],
        "--suites-dir": ["--suites-dir", "", "run", "tiny", "--results", str(tmp_path / "r")],
        "--openml-cache": ["run", str(suite), "--results", str(tmp_path / "r"), "--openml-cache", ""],
    }[option]
    result = runner.invoke(main, args)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: Invalid value for '{option}': the path is empty"), line
    assert list(cwd.iterdir()) == [] and not (tmp_path / "r").exists()


def test_a_tilde_in_the_suites_dir_variable_is_the_home_folder(runner, tmp_path, monkeypatch):
    """``TABMOE_SUITES_DIR='~/suites'`` (quoted, or from a .env file: no shell expands it)
    was a folder named ``~`` in the current folder ("suites directory not found"), where
    ``$TABMOE_OPENML_CACHE``, ``$TABMOE_AUTO_MPG`` and ``--suites-dir`` read ``~``."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    tiny_suite(home / "suites")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TABMOE_SUITES_DIR", "~/suites")
    monkeypatch.chdir(cwd)
    listed = runner.invoke(main, ["suites"])
    assert listed.exit_code == 0 and listed.output.startswith("tiny: "), listed.output
    ran = runner.invoke(main, ["run", "tiny", "--results=~/r", "--no-progress", "--no-report"])
    assert ran.exit_code == 0, ran.output
    assert (home / "r" / "runs" / "tiny").is_dir() and list(cwd.iterdir()) == []
