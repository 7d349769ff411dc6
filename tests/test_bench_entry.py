"""``tabmoe-bench`` without the ``bench`` extra names it instead of a click traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tabmoe.bench import _entry


def test_without_click_the_command_names_the_extra(monkeypatch):
    """It said ``pip install 'tabmoe[bench]'``, which asks the package index for a tabmoe it
    does not have (docs/installation.md: install from the repository)."""
    monkeypatch.delitem(sys.modules, "tabmoe.bench.cli", raising=False)
    monkeypatch.setitem(sys.modules, "click", None)  # import click -> ModuleNotFoundError
    with pytest.raises(SystemExit, match=r"needs the 'bench' extra \(missing: click\): from the tabmoe "
                                         r"repository, pip install '\.\[bench\]'$"):
        _entry.main()


def test_with_click_it_is_the_cli():
    pytest.importorskip("click")  # extra "bench"
    out = subprocess.run([sys.executable, "-m", "tabmoe.bench", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("tabmoe-bench ")


def test_a_missing_extra_a_command_needs_is_one_line_not_a_traceback(monkeypatch, tmp_path, capsys):
    """The tuned protocol without optuna: the plan refuses before any run (each run failed on
    the import, one by one), and the script prints one line naming the extra and the way
    around it (it printed the traceback of the ImportError); exit 2, nothing ran (exit 1 is
    "some runs failed, rerun to retry them")."""
    pytest.importorskip("click")  # extra "bench"
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna -> ImportError
    with pytest.raises(SystemExit) as exit_:
        _entry.main(["run", "smoke", "--protocol", "tuned", "--results", str(tmp_path / "r")],
                    prog_name="tabmoe-bench")
    assert exit_.value.code == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and message.endswith("\n")
    assert message.startswith("Error: the tuned protocol needs the optional package 'optuna': install "
                              "the extra 'tuning'")
    assert message.endswith("Or leave it out: --protocol fixed-budget, defaults or paper.\n")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.json"))


def test_a_plan_with_the_tuned_protocol_names_optuna_when_it_is_missing(monkeypatch):
    from tabmoe._optional import MissingExtraError
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.suites import load_suite

    monkeypatch.setitem(sys.modules, "optuna", None)
    suite = load_suite("smoke")
    with pytest.raises(MissingExtraError, match="tuned protocol needs the optional package 'optuna'"):
        plan_runs(suite, models=["logistic_regression"], protocols=["tuned"])
    assert plan_runs(suite, models=["logistic_regression"], protocols=["fixed-budget"])  # not needed there


def test_a_missing_extra_for_the_report_after_a_run_keeps_the_runs_summary(monkeypatch, tmp_path):
    """The report at the end of ``run`` without matplotlib: the MissingExtraError ended the
    whole command in one line ("Error: write_report needs ..."), the runs saved but their
    summary (planned, run now, failed) never printed. The report is what failed, as when it
    cannot be written: said after the summary, exit 1."""
    pytest.importorskip("click")  # extra "bench"
    from click.testing import CliRunner

    from tabmoe.bench.cli import main

    from .bench_helpers import tiny_suite

    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.colors"):
        monkeypatch.setitem(sys.modules, name, None)  # import matplotlib -> ImportError
    suite, results = tiny_suite(tmp_path), tmp_path / "results"
    ran = CliRunner().invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert ran.exit_code == 1, ran.output
    assert "tiny: 1 planned, 0 already finished, 1 run now, 0 failed. Results: " in ran.output
    assert "Error: report not written: write_report needs the optional package 'matplotlib'" in ran.output
    assert len(list((results / "runs").rglob("*.json"))) == 1
