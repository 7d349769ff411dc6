"""tabmoe-bench models / run / report through click's CliRunner: help, exit codes, resume."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tabmoe.bench.cli import EXIT_CODES, main, parse_seed_list
from tabmoe.bench.storage import results_lock

from .bench_helpers import tiny_suite


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("command", ["run", "report", "models"])
def test_help_explains_every_option(runner, command):
    result = runner.invoke(main, [command, "--help"])
    assert result.exit_code == 0
    option_lines = re.findall(r"^  (-\S.*?)(?:\s{2,}|$)", result.output, flags=re.M)
    documented = {name for line in option_lines for name in re.findall(r"--[\w-]+", line)}
    for param in main.commands[command].params:
        if param.param_type_name == "option":
            assert {o for o in param.opts + param.secondary_opts if o.startswith("--")} <= documented, param.name
            assert param.help and len(param.help) > 20, param.name
    if command != "models":
        flat = " ".join(result.output.split())
        for code, text in EXIT_CODES.items():
            assert f"{code} {' '.join(text.split())}" in flat, code


def test_models_lists_the_registry(runner):
    result = runner.invoke(main, ["models"])
    assert result.exit_code == 0
    assert re.search(r"^tabmoe\s+\[available\]", result.output, flags=re.M)
    assert "logistic_regression" in result.output and "tab_transformer" in result.output


def test_run_report_and_resume(runner, tmp_path):
    suite = tiny_suite(tmp_path, seeds=(0, 1), protocols=("fixed-budget", "tuned"), n_trials=2,
                       ood_validation_size=0.2)
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "tiny: 4 planned, 0 already finished, 4 run now, 0 failed." in first.output
    files = sorted((results / "runs" / "tiny").rglob("*.json"))
    assert [f.relative_to(results / "runs/tiny").as_posix() for f in files] == [
        "price/logistic_regression/fixed-budget-seed0.json", "price/logistic_regression/fixed-budget-seed1.json",
        "price/logistic_regression/tuned-seed0.json", "price/logistic_regression/tuned-seed1.json",
    ]
    record = json.loads(files[2].read_text())
    assert record["tuned"] is True and record["search"]["n_trials"] == 2
    for part in ("validation", "id_test", "ood_test", "ood_validation"):
        assert set(record[part]) >= {"accuracy", "balanced_accuracy", "log_loss", "roc_auc"}
    assert record["oracle"]["selected_on"] == "ood_validation"
    assert record["git"]["revision"] and record["versions"]["scikit-learn"]
    assert record["fit_seconds"] > 0 and record["peak_rss_mb"] > 0
    assert (results / "optuna.journal").stat().st_size > 0
    report = (results / "report.md").read_text()
    assert "## Protocol `tuned`" in report and "ORACLE" in report
    mtimes = [f.stat().st_mtime_ns for f in files]

    again = runner.invoke(main, args)  # resume: nothing left to do
    assert again.exit_code == 0 and "4 planned, 4 already finished, 0 run now" in again.output
    assert [f.stat().st_mtime_ns for f in files] == mtimes

    more = runner.invoke(main, [*args, "--seeds", "0-2", "--protocol", "fixed-budget"])
    assert more.exit_code == 0 and "3 planned, 2 already finished, 1 run now" in more.output

    forced = runner.invoke(main, [*args, "--seeds", "0", "--protocol", "fixed-budget", "--force", "--no-report"])
    assert forced.exit_code == 0 and "1 planned, 0 already finished, 1 run now" in forced.output

    changed = runner.invoke(main, [*args, "--seeds", "0", "--protocol", "tuned", "--trials", "3"])
    assert changed.exit_code == 0 and "made with another configuration" in changed.output

    out = tmp_path / "elsewhere"
    report_only = runner.invoke(main, ["report", str(suite), "--results", str(results), "--out", str(out)])
    assert report_only.exit_code == 0, report_only.output
    assert (out / "report.md").is_file() and (out / "summary.csv").is_file()


def test_failed_runs_exit_1_and_are_retried(runner, tmp_path):
    suite = tiny_suite(tmp_path, models={"logistic_regression": {"C": -1.0}})
    results = tmp_path / "results"
    result = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert result.exit_code == 1, result.output
    assert "1 failed" in result.output
    (failure,) = (results / "failures").rglob("*.txt")
    assert "InvalidParameterError" in failure.read_text() and "'C'" in failure.read_text()
    assert "no finished runs to report" in result.output and not (results / "report.md").exists()
    retry = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert retry.exit_code == 1 and "0 already finished, 0 run now, 1 failed" in retry.output


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--models", "nope"], "unknown model(s) ['nope']"),
        (["--splits", "zzz"], "has no split 'zzz'"),
        (["--seeds", "a-b"], "--seeds: 'a-b' is not an integer"),
        (["--protocol", "oracle"], "Invalid value for '--protocol'"),
        (["--storage", "results.db"], "must be a database URL"),
        (["--storage", "postgresql://u:secret@127.0.0.1:1/db"], "cannot use the database postgresql+psycopg2://u:***@127.0.0.1:1/db"),
        (["--metric", "f1"], "Invalid value for '--metric'"),
    ],
)
def test_usage_errors_exit_2(runner, tmp_path, extra, message):
    suite = tiny_suite(tmp_path)
    result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / "r"), *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "r" / "runs").exists()


def test_tuning_without_validation_is_a_usage_error(runner, tmp_path):
    suite = tiny_suite(tmp_path, validation_size=0.0, protocols=("tuned",))
    result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / "r")])
    assert result.exit_code == 2 and "no ID validation part" in result.output
    assert runner.invoke(main, ["run", "nope"]).exit_code == 2
    assert runner.invoke(main, ["report", "nope"]).exit_code == 2


def test_busy_results_folder_exits_3(runner, tmp_path):
    suite = tiny_suite(tmp_path)
    with results_lock(tmp_path / "r"):
        result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / "r")])
    assert result.exit_code == 3 and "in use by another tabmoe-bench run" in result.output


def test_seed_lists():
    assert parse_seed_list("0,1,5-7,1") == [0, 1, 5, 6, 7]
    assert parse_seed_list(None) is None
    with pytest.raises(ValueError, match="'x' is not an integer"):
        parse_seed_list("1,x")
