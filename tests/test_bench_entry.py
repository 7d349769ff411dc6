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


def test_tuned_runs_left_to_run_need_optuna_here_only_when_run_here(monkeypatch, tmp_path):
    """run_plan refuses before any run when a tuned run is left to run in this process and
    optuna is missing; not when no tuned run is left (all finished, or none planned), nor for
    a Dask scheduler's workers, which import it themselves."""
    from tabmoe._optional import MissingExtraError
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.runner import run_plan
    from tabmoe.bench.storage import DirectoryStore
    from tabmoe.bench.suites import load_suite

    monkeypatch.setitem(sys.modules, "optuna", None)
    suite = load_suite("smoke")
    store = DirectoryStore(tmp_path / "r")
    tuned = plan_runs(suite, models=["logistic_regression"], protocols=["tuned"], seeds=[0])
    with pytest.raises(MissingExtraError, match="tuned protocol needs the optional package 'optuna'"):
        run_plan(tuned, store, progress=False)
    assert not store.records(suite.name)  # nothing ran
    fixed = plan_runs(suite, models=["logistic_regression"], protocols=["fixed-budget"], seeds=[0])
    assert run_plan(fixed, store, progress=False).failed == {}

    calls = []

    def outcomes(todo, **kwargs):  # a generator, as execute_all's: nothing ran
        calls.append(todo)
        yield from ()

    monkeypatch.setattr("tabmoe.bench.runner.execute_all", outcomes)
    run_plan(tuned, store, scheduler="tcp://workers:8786", progress=False)
    assert calls and all(spec.tuned for spec in calls[0])


def test_openml_splits_left_to_run_need_openml_before_the_first_run(monkeypatch, tmp_path):
    """Without the openml package every run of an OpenML split failed on the import, one by
    one; run_plan now names the package, the extra and the splits before the first run."""
    from tabmoe._optional import MissingExtraError
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.runner import run_plan
    from tabmoe.bench.storage import DirectoryStore
    from tabmoe.bench.suites import load_suite

    monkeypatch.setitem(sys.modules, "openml", None)  # as if not installed
    suite = load_suite("openml-ood")
    specs = plan_runs(suite, models=["logistic_regression"], protocols=["fixed-budget"], seeds=[0],
                      splits=["credit-g-purpose", "vote-swing-bloc"])
    store = DirectoryStore(tmp_path / "r")
    with pytest.raises(MissingExtraError, match=r"Loading split\(s\) \['credit-g-purpose', 'vote-swing-bloc'\] "
                                                r"from OpenML needs the optional package 'openml': install the extra 'data'"):
        run_plan(specs, store, progress=False)
    assert not store.records(suite.name)
