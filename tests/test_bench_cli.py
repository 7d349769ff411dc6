"""tabmoe-bench models / run / report through click's CliRunner: help, exit codes, resume."""

from __future__ import annotations

import json
import platform
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("yaml")  # extra "data"
pytest.importorskip("click")  # extra "bench"

import yaml
from click.testing import CliRunner

from tabmoe.bench.cli import (
    EXIT_CODES,
    METRIC_NAMES,
    PROTOCOL_ALIAS_NAMES,
    PROTOCOL_NAMES,
    REPORT_EXIT_CODES,
    main,
)
from tabmoe.bench.plan import parse_seed_list, plan_runs
from tabmoe.bench.storage import open_store, results_lock
from tabmoe.bench.suites import load_suite

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
        for code, text in (EXIT_CODES if command == "run" else REPORT_EXIT_CODES).items():
            assert f"{code} {' '.join(text.split())}" in flat, code


def test_models_lists_the_registry(runner):
    result = runner.invoke(main, ["models"])
    assert result.exit_code == 0
    assert re.search(r"^tabmoe\s+\[available\]", result.output, flags=re.M)
    assert "logistic_regression" in result.output and "tab_transformer" in result.output


def test_models_names_the_missing_package_and_its_extra(runner, monkeypatch):
    """A model whose optional package is missing said only `missing rtdl_revisiting_models`
    (every required module, not the missing ones), never the extra that installs it."""
    import importlib.util

    real = importlib.util.find_spec
    gone = {"rtdl_revisiting_models", "xgboost"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a))
    result = runner.invoke(main, ["models"])
    assert result.exit_code == 0, result.output
    assert re.search(r"^ft_transformer\s+\[missing rtdl_revisiting_models: pip install '\.\[baselines\]'\]",
                     result.output, flags=re.M), result.output
    assert re.search(r"^xgboost\s+\[missing xgboost: pip install '\.\[gbdt\]'\]", result.output, flags=re.M)
    assert re.search(r"^tabnet\s+\[available\]", result.output, flags=re.M)
    # every spec's extra exists and lists a distribution of each module it requires
    from tabmoe.registry import MODELS

    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    for spec in MODELS.values():
        assert bool(spec.requires) == bool(spec.extra), spec.name
        for module in spec.requires:
            block = re.search(rf"^{spec.extra} = \[(.*?)^\]", pyproject, flags=re.M | re.S)
            assert block, spec.extra
            deps = re.findall(r'^\s*"([^"]+)"', block.group(1), flags=re.M)
            names = {re.split(r"[<>=!;\[ ]", dep)[0].lower().replace("-", "_") for dep in deps}
            assert any(n == module or n.startswith(module + "_") for n in names), (spec.name, names)


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
    # a parameter that fails at fit only, on the table: a column the data does not have
    suite = tiny_suite(tmp_path, models={"logistic_regression": {"categorical_features": ["nope"]}})
    results = tmp_path / "results"
    result = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert result.exit_code == 1, result.output
    assert "1 failed" in result.output
    (failure,) = (results / "failures").rglob("*.txt")
    assert "categorical_features names column 'nope'" in failure.read_text()
    assert "no finished runs to report" in result.output and not (results / "report.md").exists()
    assert "report:" not in result.output  # no report was written, so none is announced
    retry = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert retry.exit_code == 1 and "0 already finished, 0 run now, 1 failed" in retry.output


def test_a_fixed_parameter_of_the_wrong_type_exits_2_before_any_run(runner, tmp_path):
    """`C: "abc"` passed planning, then failed every run at fit (exit 1), where a misspelt
    parameter name is a usage error before any work."""
    suite = tiny_suite(tmp_path, models={"logistic_regression": {"C": "abc"}})
    result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"Error: suite {suite}.models.logistic_regression: The 'C' parameter of "
                           "LogisticRegression must be"), line
    assert "'abc'" in line and not (tmp_path / "r").exists()


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
        (["--seeds", "0,3-1"], "--seeds: '3-1' is an empty range"),
        (["--seeds", "99999999999"], "--seeds: '99999999999' goes above 4294967295"),
        (["--seeds", "1,-1"], "--seeds: '-1' is negative"),
        (["--models", " , "], "--models names nothing"),
        (["--storage", "foo://bar"], "--storage 'foo://bar' is not a usable database URL"),
        (["--openml-cache", "/nonexistent/cache"], "Directory '/nonexistent/cache' does not exist"),
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



def test_busy_results_folder_names_the_lock_file_and_the_process_holding_it(runner, tmp_path):
    suite, results = tiny_suite(tmp_path), tmp_path / "r"
    holder = subprocess.Popen(  # another process, as a second `tabmoe-bench run` would be
        [sys.executable, "-c", "import sys; from tabmoe.bench.storage import results_lock\n"
         f"with results_lock({str(results)!r}):\n    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        result = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    finally:
        holder.communicate(timeout=60)
    assert result.exit_code == 3, result.output
    assert f"(pid {holder.pid} on {platform.node()} holds its lock file {results / '.lock'})" in result.output
    assert not (results / "runs").exists()  # nothing ran

def test_seed_lists():
    assert parse_seed_list("0,1,5-7,1") == [0, 1, 5, 6, 7]
    assert parse_seed_list(None) is None
    with pytest.raises(ValueError, match="'x' is not an integer"):
        parse_seed_list("1,x")
    for text in ("3-1", "0,3-1"):  # was [] ("no seeds given") and [0]
        with pytest.raises(ValueError, match="'3-1' is an empty range"):
            parse_seed_list(text)
    # was a MemoryError building the range; numpy's RandomState takes seeds below 2**32
    with pytest.raises(ValueError, match="'1-99999999999' goes above 4294967295"):
        parse_seed_list("1-99999999999")
    assert parse_seed_list("4294967294-4294967295") == [4294967294, 4294967295]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "smok"], "no suite 'smok'; available: ['openml-ood', 'paper', 'smoke']"),
        (["report", "smok"], "no suite 'smok'"),
        (["shift-report", "smok"], "no suite 'smok'"),
        (["--suites-dir", "{tmp}/none", "suites"],
         "Invalid value for '--suites-dir': Directory '{tmp}/none' does not exist"),
        (["--suites-dir", "{tmp}/none", "run", "smoke"],
         "Invalid value for '--suites-dir': Directory '{tmp}/none' does not exist"),
        (["--suites-dir", "{tmp}/none", "report", "smoke"],
         "Invalid value for '--suites-dir': Directory '{tmp}/none' does not exist"),
        (["--suites-dir", "{tmp}/none", "shift-report", "smoke"],
         "Invalid value for '--suites-dir': Directory '{tmp}/none' does not exist"),
        (["run", "smoke", "--splits", "zzz", "--results", "{tmp}/r"], "has no split 'zzz'"),
        # named no option: "suite 'smoke' has no split 'zzz'; splits are [...]"
        (["shift-report", "smoke", "--split", "zzz"], "--split: suite 'smoke' has no split 'zzz'; splits are"),
        (["report", "smoke", "--results", "{tmp}/r"], "no results folder {tmp}/r"),
        (["report", "smoke", "--results", "{tmp}/empty"],
         "no finished runs to report for 'smoke' in {tmp}/empty/runs/smoke (no such folder)"),
        (["run", "smoke", "--protocol", "oracle"], "Invalid value for '--protocol': 'oracle' is not one of"),
        (["report", "smoke", "--tie", "-1"], "report --help)"),
        # accepted by click's FloatRange: no split counted as a win, tie or loss ("within ±nan")
        (["report", "smoke", "--tie", "nan"], "Invalid value for '--tie': nan is not a finite number."),
        # a budget error would name the suite file, whose tuning is not at fault
        (["run", "smoke", "--timeout", "nan"], "Invalid value for '--timeout': nan is not a finite number."),
        (["run"], "Missing argument 'SUITE'"),
        (["nosuch"], "No such command 'nosuch'"),
        (["--bogus", "suites"], "No such option '--bogus'"),
    ],
)
def test_usage_errors_are_one_plain_line_with_exit_2(runner, tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    before = sorted(tmp_path.rglob("*"))
    result = runner.invoke(main, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()  # one line: no usage block, no traceback
    assert line.startswith("Error: ") and message.format(tmp=tmp_path) in line, line
    assert "KeyError" not in line and "FileNotFoundError" not in line and "ValueError" not in line
    assert sorted(tmp_path.rglob("*")) == before  # nothing created


def test_suites_says_when_a_folder_holds_none(runner, tmp_path):
    # an empty listing and exit 0 said nothing about the folder; a folder named x.yaml was
    # listed as a suite, then "suite file not found"
    (tmp_path / "x.yaml").mkdir()
    result = runner.invoke(main, ["--suites-dir", str(tmp_path), "suites"])
    assert result.exit_code == 0, result.output
    assert result.output == f"no suites: {tmp_path} holds no *.yaml file\n"
    result = runner.invoke(main, ["run", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and f"suite {tmp_path / 'x.yaml'} is a folder, not a suite file" in result.output


def test_suites_lists_the_good_suites_beside_a_bad_file(runner, tmp_path):
    """One malformed file of the folder made `suites` print its error alone, listing none of
    the suites that load."""
    import shutil

    from tabmoe.bench.suites import default_suites_dir

    shutil.copy(default_suites_dir() / "smoke.yaml", tmp_path)
    shutil.copytree(default_suites_dir() / "data", tmp_path / "data")
    (tmp_path / "bad.yaml").write_text("name: bad\nseeds: [0]\nsplits: [\n")
    (tmp_path / "worse.yaml").write_text("name: worse\nseeds: [0]\nsplits:\n  - {name: a, data: {openml: 31}, "
                                         "split: {by: values, column: c, ood_valus: [v]}}\n")
    result = runner.invoke(main, ["suites", "--suites-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.stdout.startswith("smoke: ") and "  - car-cluster [" in result.stdout
    errors = result.stderr.splitlines()
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"Error: suite {tmp_path / 'bad.yaml'}: not valid YAML"), errors
    assert errors[1].startswith(f"Error: suite {tmp_path / 'worse.yaml'}: split 'a'.split"), errors


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_bad_suites_dir_variable_is_named_as_the_cause(runner, tmp_path, monkeypatch, kind):
    """A $TABMOE_SUITES_DIR that does not exist said "suites directory not found: D (set
    TABMOE_SUITES_DIR)" to a user who had set it; one naming a file said "not found" too."""
    folder = tmp_path / "suites"
    if kind == "file":
        folder.write_text("")
    monkeypatch.setenv("TABMOE_SUITES_DIR", str(folder))
    for args in (["suites"], ["run", "smoke", "--results", str(tmp_path / "r")]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        problem = "does not exist" if kind == "missing" else "is a file, not a folder"
        assert result.output == (f"Error: suites directory {folder} {problem} (from $TABMOE_SUITES_DIR: "
                                 "point it at a folder of suite .yaml files, or unset it for the "
                                 "suites shipped with tabmoe)\n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["suites", "run", "report", "shift-report"])
def test_suites_dir_also_after_the_command(runner, tmp_path, command):
    """--suites-dir worked only before the command (`tabmoe-bench suites --suites-dir D`:
    "No such option"); after it, it is the same option, and two different folders are refused."""
    import shutil

    from tabmoe.bench.suites import default_suites_dir

    suites = tmp_path / "suites"
    suites.mkdir()
    text = (default_suites_dir() / "smoke.yaml").read_text().replace("name: smoke", "name: mine", 1)
    (suites / "mine.yaml").write_text(text)
    shutil.copytree(default_suites_dir() / "data", suites / "data")
    args = {"suites": ["suites"], "run": ["run", "mine", "--results", str(tmp_path / "r"), "--models", "nope"],
            "report": ["report", "mine", "--results", str(tmp_path)],
            "shift-report": ["shift-report", "mine", "--split", "nope"]}[command]
    result = runner.invoke(main, [*args, "--suites-dir", str(suites)])
    # the suite is found (each command then stops at its own bad input, if any)
    assert "no suite 'mine'" not in result.output and "No such option" not in result.output, result.output
    if command == "suites":
        assert result.exit_code == 0 and result.output.startswith("mine: "), result.output
    same = runner.invoke(main, ["--suites-dir", str(suites), *args, "--suites-dir", str(suites)])
    assert same.output == result.output
    other = runner.invoke(main, ["--suites-dir", str(tmp_path), *args, "--suites-dir", str(suites)])
    assert other.exit_code == 2 and "Invalid value for '--suites-dir'" in other.output
    assert f"differs from the --suites-dir {tmp_path} given before" in other.output, other.output


def test_report_creates_nothing_and_defaults_to_runs_folder(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["report", "smoke"])
    assert result.exit_code == 2, result.output
    assert "no results folder results/smoke (pass --results FOLDER)" in result.output
    assert list(tmp_path.iterdir()) == []
    result = runner.invoke(main, ["report", "smoke", "--results", "/nonexistent/dir"])
    assert result.exit_code == 2 and "no results folder /nonexistent/dir" in result.output
    assert not Path("/nonexistent").exists()
    # `run` without --results writes where `report` without --results reads.
    suite = tiny_suite(tmp_path / "suite")
    run = runner.invoke(main, ["run", str(suite), "--no-progress", "--no-report"])
    assert run.exit_code == 0, run.output
    assert "Results: results/tiny" in run.output and "report:" not in run.output
    report = runner.invoke(main, ["report", str(suite)])
    assert report.exit_code == 0 and "report: results/tiny/report.md" in report.output, report.output


def test_version_and_choices(runner):
    from tabmoe import __version__
    from tabmoe.bench.plan import PROTOCOL_ALIASES, PROTOCOLS
    from tabmoe.metrics import METRICS

    for flag in ("--version", "-V"):
        result = runner.invoke(main, [flag])
        assert result.exit_code == 0 and result.output == f"tabmoe-bench {__version__}\n"
    assert PROTOCOL_NAMES == tuple(PROTOCOLS) and METRIC_NAMES == tuple(METRICS)
    assert PROTOCOL_ALIAS_NAMES == tuple(PROTOCOL_ALIASES)


def test_help_imports_no_heavy_module():
    """``tabmoe-bench --help`` loads click and the CLI only; torch & co. load inside commands."""
    code = (
        "import sys; from tabmoe.bench.cli import main\n"
        "try:\n    main(['--help'], prog_name='tabmoe-bench')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'pandas', 'sklearn', 'optuna', 'numpy', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]", out


def test_progress_label_names_the_run_in_flight(tmp_path, monkeypatch):
    """The bar's label is the run being executed (the next one), not the last finished."""
    from tabmoe.bench import runner as runner_module
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.storage import open_store
    from tabmoe.bench.suites import load_suite

    specs = plan_runs(load_suite(tiny_suite(tmp_path, seeds=(0, 1))), protocols=["untuned"])
    labels: list[str] = []
    seen: list[list[str]] = []

    class Bar:
        def __init__(self, *args, **kwargs):
            pass

        def set_postfix_str(self, text, refresh=True):
            labels.append(text)

        def update(self, n=1):
            pass

        def write(self, text):
            pass

        def close(self):
            pass

    def fake_execute_all(todo, jobs, scheduler):
        for spec in todo:
            seen.append(list(labels))
            yield spec.run_id, None, "boom"

    monkeypatch.setattr(runner_module, "tqdm", Bar)
    monkeypatch.setattr(runner_module, "execute_all", fake_execute_all)
    runner_module.run_plan(specs, open_store(tmp_path / "r"))
    ids = [s.run_id.split("/", 1)[-1] for s in specs]
    assert [s[-1] for s in seen] == ids  # while run k executes, the label names run k


def test_suite_file_that_is_not_yaml_is_one_line(runner, tmp_path):
    (tmp_path / "bad.yaml").write_text("a: [\n")
    for command in ("run", "shift-report"):
        result = runner.invoke(main, [command, str(tmp_path / "bad.yaml"), "--results", str(tmp_path / "r")]
                               if command == "run" else [command, str(tmp_path / "bad.yaml")])
        assert result.exit_code == 2, result.output
        (line,) = result.output.strip().splitlines()
        assert line.startswith(f"Error: suite {tmp_path / 'bad.yaml'}: not valid YAML"), line


def test_a_report_that_finds_no_runs_names_where_it_looked(runner, tmp_path):
    """"no finished runs to report for 'smoke'" named no folder: a --results one level too
    deep (the runs/ folder) or another suite's folder read as if the runs were lost."""
    suite, results = tiny_suite(tmp_path), tmp_path / "results"
    ran = runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress", "--no-report"])
    assert ran.exit_code == 0, ran.output
    deep = runner.invoke(main, ["report", str(suite), "--results", str(results / "runs")])
    assert deep.exit_code == 2, deep.output
    assert deep.output == (f"Error: no finished runs to report for 'tiny' in {results / 'runs' / 'runs' / 'tiny'} "
                           "(no such folder)\n")
    other = runner.invoke(main, ["report", "smoke", "--results", str(results)])
    assert other.exit_code == 2, other.output
    assert other.output == (f"Error: no finished runs to report for 'smoke' in {results / 'runs' / 'smoke'} "
                            "(this results folder holds runs of ['tiny'])\n")
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    assert runner.invoke(main, ["run", str(suite), "--storage", url, "--results", str(results),
                                "--no-progress", "--no-report"]).exit_code == 0
    other = runner.invoke(main, ["report", "smoke", "--storage", url, "--out", str(tmp_path / "out")])
    assert other.output == f"Error: no finished runs to report for 'smoke' in the database {url}\n"


def test_report_reads_a_database_without_creating_one(runner, tmp_path):
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = runner.invoke(main, ["report", "smoke", "--storage", url])
    assert result.exit_code == 2 and f"no database file {tmp_path / 'none.db'}" in result.output, result.output
    assert not (tmp_path / "none.db").exists()
    sqlite3.connect(tmp_path / "other.db").execute("create table x (a)").connection.close()
    result = runner.invoke(main, ["report", "smoke", "--storage", f"sqlite:///{tmp_path / 'other.db'}"])
    assert result.exit_code == 2 and "holds no tabmoe runs" in result.output, result.output
    # a database that `run` wrote is read back
    suite = tiny_suite(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    # --results: the run's lock folder, which would otherwise be results/ under the tests' cwd
    ran = runner.invoke(main, ["run", str(suite), "--storage", url, "--results", str(tmp_path / "results"),
                               "--no-progress", "--no-report"])
    assert ran.exit_code == 0, ran.output
    # it named the results folder, which holds no record, as where the results are
    assert f"Results: {url}" in ran.output and not list((tmp_path / "results").rglob("*.json"))
    result = runner.invoke(main, ["report", str(suite), "--storage", url, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0 and (tmp_path / "out" / "report.md").is_file(), result.output


def test_report_reference_must_have_runs_and_a_failed_rerun_keeps_the_run_finished(runner, tmp_path):
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    assert runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"]).exit_code == 0
    bad = runner.invoke(main, ["report", str(suite), "--results", str(results), "--reference", "nosuch"])
    assert bad.exit_code == 2, bad.output
    assert "--reference 'nosuch' has no runs in these results; models: ['logistic_regression']" in bad.output
    # the default reference (tabmoe) has no runs here either: no error, no comparison column
    assert runner.invoke(main, ["report", str(suite), "--results", str(results)]).exit_code == 0
    # a --force rerun that fails keeps the older record and writes a failure: the run is finished
    run_id = json.loads(next((results / "runs").rglob("*.json")).read_text())["run_id"]
    open_store(results).write_failure("tiny", run_id, "boom")
    again = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert again.exit_code == 0, again.output
    report = (results / "report.md").read_text()
    assert "; 0 failed; runs never started are not counted" in report and "boom" not in report


def _rename_protocol():
    import importlib.util

    path = Path(__file__).parents[1] / "scripts" / "rename_protocol.py"
    spec = importlib.util.spec_from_file_location("rename_protocol", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rename


def test_runs_under_the_old_protocol_name_are_resumed_and_reported_once(runner, tmp_path):
    """A results folder from before the ``untuned`` -> ``fixed-budget`` rename was rerun in
    full and then reported twice (16 finished runs for 8, SDs over duplicated rows)."""
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    assert runner.invoke(main, [*args, "--no-report"]).exit_code == 0
    assert _rename_protocol()(results, "fixed-budget", "untuned") == 2  # as the old version named them
    again = runner.invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "2 planned, 2 already finished, 0 run now" in again.output
    assert "2 finished run(s) carry an old protocol name" in again.output
    report = (results / "report.md").read_text()
    assert "2 finished runs (1 models" in report and "2 run(s) carry an old protocol name" in report
    forced = runner.invoke(main, [*args, "--seeds", "0", "--force"])  # written beside the old record
    assert forced.exit_code == 0 and "1 run now" in forced.output
    report = (results / "report.md").read_text()
    assert "2 finished runs (1 models" in report and "1 run(s) carry an old protocol name" in report


def test_the_old_protocol_name_advice_is_a_command_a_pip_install_has(runner, tmp_path):
    """The warning said to run `python scripts/rename_protocol.py DIR`, a file that a wheel
    install does not ship; the renaming is `tabmoe-bench rename-protocol DIR` now."""
    from tabmoe.bench.rename import rename_protocol

    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    assert runner.invoke(main, [*args, "--no-report"]).exit_code == 0
    assert len(rename_protocol(results, "fixed-budget", "untuned")[0]) == 2  # as the old version named them
    forced = runner.invoke(main, [*args, "--seeds", "0", "--force", "--no-report"])  # beside the old record
    assert forced.exit_code == 0 and "1 run now" in forced.output, forced.output
    again = runner.invoke(main, args)
    assert f"`tabmoe-bench rename-protocol {results}` renames them in place" in again.output, again.output
    assert "scripts/" not in again.output and "scripts/" not in (results / "report.md").read_text()
    renamed = runner.invoke(main, ["rename-protocol", str(results)])
    assert renamed.exit_code == 0, renamed.output
    assert f"1 record(s) renamed untuned -> fixed-budget in {results}" in renamed.stdout
    seed0 = results / "runs/tiny/price/logistic_regression/untuned-seed0.json"
    assert renamed.stderr == (f"warning: {seed0}: not renamed, fixed-budget-seed0.json beside it is "
                              "the run's record (made since)\n")
    assert seed0.exists()  # the older record is left as it was, not written over the newer one
    done = runner.invoke(main, args)
    assert done.exit_code == 0 and "2 already finished, 0 run now" in done.output, done.output
    assert "old protocol name" not in done.output
    record = json.loads((results / "runs/tiny/price/logistic_regression/fixed-budget-seed1.json").read_text())
    assert record["run_id"] == "tiny/price/logistic_regression/fixed-budget/seed1"
    assert record["config_hash"] == plan_runs(load_suite(suite), seeds=[1])[0].config_hash
    nothing = runner.invoke(main, ["rename-protocol", str(tmp_path)])
    assert nothing.exit_code == 2 and "holds no runs/ folder" in nothing.output, nothing.output


def test_runs_under_the_old_protocol_name_are_not_listed_as_unfinished(runner, tmp_path):
    """``run`` skipped them as finished, yet its report listed each as "not run" (and counted
    them "failed or unfinished"), as did a failure file left from before the rename."""
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    assert runner.invoke(main, [*args, "--no-report"]).exit_code == 0
    assert _rename_protocol()(results, "fixed-budget", "untuned") == 2
    failure = results / "failures/tiny/price/logistic_regression/fixed-budget-seed1.txt"
    failure.parent.mkdir(parents=True)
    failure.write_text("tiny/price/logistic_regression/fixed-budget/seed1\nRuntimeError: before")
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and "2 already finished, 0 run now" in again.output, again.output
    report = (results / "report.md").read_text()
    assert "2 finished runs (1 models, 1 splits, seeds [0, 1]); 0 failed or unfinished." in report
    assert "Failed or unfinished runs" not in report


def test_runs_of_a_split_removed_from_the_suite_are_flagged_in_the_report(runner, tmp_path):
    """Records of a split the suite file no longer has were averaged into the summary with no
    word (run plans nothing for them, so it does not warn either)."""
    suite = tiny_suite(tmp_path, splits=("price", "safety"))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    assert runner.invoke(main, args).exit_code == 0
    assert "NOT IN THE SUITE" not in (results / "report.md").read_text()
    tiny_suite(tmp_path, splits=("price",))  # the safety split removed
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and "1 planned, 1 already finished" in again.output, again.output
    report = (results / "report.md").read_text()
    assert ("NOT IN THE SUITE: the tables include runs of 1 split(s) that the suite no longer "
            "defines (removed or renamed since they ran): safety (1 run(s)).") in report
    alone = runner.invoke(main, ["report", str(suite), "--results", str(results), "--out", str(tmp_path / "o")])
    assert alone.exit_code == 0 and "safety (1 run(s))" in (tmp_path / "o/report.md").read_text()


def test_runs_made_under_an_old_configuration_are_flagged_in_the_report(runner, tmp_path):
    """run warned that the finished run was made with another configuration, but its report
    (and the report command) showed the old run's numbers as the suite's, with no note."""
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    assert runner.invoke(main, args).exit_code == 0
    assert "OLD CONFIGURATION" not in (results / "report.md").read_text()
    tiny_suite(tmp_path, models={"logistic_regression": {"C": 0.5}})  # the suite edited
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and "made with another configuration" in again.output, again.output
    note = "OLD CONFIGURATION: every seed of 1 (protocol, split, model) cell(s) was made under"
    assert note in (results / "report.md").read_text()
    out = tmp_path / "o"
    command = ["report", str(suite), "--results", str(results), "--out", str(out)]
    alone = runner.invoke(main, command)
    report = (out / "report.md").read_text()
    assert alone.exit_code == 0 and note in report
    assert "logistic_regression on price (fixed-budget)" in report


def test_runs_made_with_a_command_line_budget_are_current_in_that_runs_report(runner, tmp_path):
    """run --trials 2 on a suite of n_trials 1: its own report flagged the runs it had just
    made as OLD CONFIGURATION (compared with the suite's budget, not the run's)."""
    suite = tiny_suite(tmp_path, protocols=("tuned",), n_trials=1)
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress", "--trials", "2"]
    done = runner.invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "OLD CONFIGURATION" not in (results / "report.md").read_text()
    # the report command compares with the suite's budget (docs/harness.md): flagged there
    out = tmp_path / "o"
    alone = runner.invoke(main, ["report", str(suite), "--results", str(results), "--out", str(out)])
    assert alone.exit_code == 0 and "OLD CONFIGURATION" in (out / "report.md").read_text()


def test_a_split_whose_name_holds_a_comma_can_be_selected(runner, tmp_path):
    """A split may be named "price,vhigh" (check_name allows it), but --splits cut every value
    at its commas, given alone or repeated: "no split 'price'", so it could not be run alone."""
    suite = tiny_suite(tmp_path, splits=("price", "safety"))
    spec = yaml.safe_load(suite.read_text())
    spec["splits"][0]["name"] = "price,vhigh"
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress", "--no-report"]
    done = runner.invoke(main, [*args, "--splits", "price,vhigh"])
    assert done.exit_code == 0, done.output
    assert "1 planned" in done.output
    assert (results / "runs/tiny/price,vhigh/logistic_regression/fixed-budget-seed0.json").is_file()
    both = runner.invoke(main, [*args, "--splits", "safety", "--splits", "price,vhigh"])
    assert both.exit_code == 0 and "2 planned, 1 already finished" in both.output, both.output
    bad = runner.invoke(main, [*args, "--splits", "safety,nope"])  # others are still cut at commas
    assert bad.exit_code == 2 and "no split 'nope'" in bad.output


def test_a_command_line_timeout_equal_to_the_suites_is_the_same_configuration(runner, tmp_path):
    """run --timeout 30 on a suite of timeout: 30 (click reads 30.0, the suite 30) hashed
    another configuration: a plain rerun warned that the run was made with another one, and
    the report flagged it OLD CONFIGURATION, though the budget was the same."""
    suite = tiny_suite(tmp_path, protocols=("tuned",), n_trials=1)
    spec = yaml.safe_load(suite.read_text())
    spec["tuning"]["timeout"] = 30
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    done = runner.invoke(main, [*args, "--timeout", "30"])
    assert done.exit_code == 0, done.output
    again = runner.invoke(main, args)
    assert again.exit_code == 0 and "another configuration" not in again.output, again.output
    assert "1 already finished" in again.output
    assert "OLD CONFIGURATION" not in (results / "report.md").read_text()
    assert "timeout 30 s" in (results / "report.md").read_text()


@pytest.mark.parametrize("name, shown", [
    (2020, "2020"), ("cars/cluster", "'cars/cluster'"), ("..", "'..'"),
    # a NUL byte failed the record's write after the run (a traceback, the result lost);
    # a newline made folders of two lines and split the failure file's run id
    ("cars\0", "'cars\\x00'"), ("cars\nbuying", "'cars\\nbuying'"),
])
def test_a_split_name_that_cannot_name_a_result_is_refused(runner, tmp_path, name, shown):
    import yaml

    path = tiny_suite(tmp_path)
    spec = yaml.safe_load(path.read_text())
    spec["splits"][0]["name"] = name
    path.write_text(yaml.safe_dump(spec))
    result = runner.invoke(main, ["run", str(path), "--results", str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == 2
    assert f"split name {shown} must be a non-empty string without '/'" in result.output
    assert not (tmp_path / "r" / "runs").exists()


@pytest.mark.parametrize("where, name", [
    ("split", " price"), ("split", "price "), ("split", "price\u00a0"), ("suite", " tiny"),
])
def test_a_name_with_spaces_at_either_end_is_refused_when_the_suite_loads(runner, tmp_path, where, name):
    """A split named " price" loaded, but `--splits " price"` (the command line strips the
    names it is given) asked for "price": "suite has no split 'price'; splits are [' price']",
    so it could not be selected; the markdown report showed it as "price". Refused at load,
    naming it, before anything is written."""
    import yaml

    path = tiny_suite(tmp_path)
    spec = yaml.safe_load(path.read_text())
    if where == "split":
        spec["splits"][0]["name"] = name
    else:
        spec["name"] = name
    path.write_text(yaml.safe_dump(spec))
    results = tmp_path / "r"
    for args in (["run", str(path), "--results", str(results), "--no-progress", "--splits", name],
                 ["shift-report", str(path)]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        assert f"name {name!r} must be a non-empty string" in result.output
        assert "nor spaces at either end" in result.output
    assert not results.exists()


def test_a_record_the_store_would_refuse_is_a_failed_run_not_a_finished_one(tmp_path, monkeypatch):
    from tabmoe.bench import runner as runner_module
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.suites import load_suite

    specs = plan_runs(load_suite(tiny_suite(tmp_path)), protocols=["fixed-budget"])

    def fake_execute_all(todo, jobs, scheduler):
        for spec in todo:
            yield spec.run_id, {"run_id": spec.run_id, "split": 2020}, None

    monkeypatch.setattr(runner_module, "execute_all", fake_execute_all)
    store = open_store(tmp_path / "r")
    summary = runner_module.run_plan(specs, store, progress=False)
    assert summary.done == 0 and "RecordError: the run's record is invalid" in summary.failed[specs[0].run_id]
    assert store.finished("tiny") == {}


def test_a_failure_that_cannot_be_saved_keeps_the_runs_own_error(tmp_path, monkeypatch, capsys):
    # The summary held only the StoreError: the run's traceback was in no file and on no screen.
    from tabmoe.bench import runner as runner_module
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.storage import StoreError
    from tabmoe.bench.suites import load_suite

    specs = plan_runs(load_suite(tiny_suite(tmp_path)), protocols=["fixed-budget"])

    def fake_execute_all(todo, jobs, scheduler):
        for spec in todo:
            yield spec.run_id, None, "Traceback (most recent call last):\n  in fit\nValueError: boom"

    def full_disk(*args):
        raise StoreError("could not save the failure: disk full")

    monkeypatch.setattr(runner_module, "execute_all", fake_execute_all)
    store = open_store(tmp_path / "r")
    monkeypatch.setattr(store, "write_failure", full_disk)
    summary = runner_module.run_plan(specs, store, progress=False)
    assert summary.aborted == "could not save the failure: disk full"
    assert summary.failed == {specs[0].run_id: "Traceback (most recent call last):\n  in fit\nValueError: boom"}
    assert "in fit\nValueError: boom" in capsys.readouterr().out


def test_an_interrupted_run_exits_130_and_says_results_are_kept(runner, tmp_path, monkeypatch):
    # click's own handling printed "Aborted!" and exited 1, the code of failed runs
    import tabmoe.bench.runner as bench_runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench_runner, "run_plan", interrupted)
    suite = tiny_suite(tmp_path, seeds=(0,), protocols=("fixed-budget",))
    result = runner.invoke(main, ["run", str(suite), "--results", str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == 130, result.output
    assert "Interrupted: every result saved before is kept" in result.output
    assert 130 in EXIT_CODES


def test_a_damaged_journal_stops_tuned_runs_and_warns_the_others(runner, tmp_path):
    """An Optuna journal with a line that is not JSON before its last: every tuned run
    failed with Optuna's "Expecting value: line 1 column 1 (char 0)"; now a plan with tuned
    runs stops before them naming the file and line, and one without warns and runs."""
    suite = tiny_suite(tmp_path, seeds=(0,), protocols=("fixed-budget",))
    results = tmp_path / "results"
    results.mkdir()
    (results / "optuna.journal").write_text('{"op_code": 0}\ngarbage{\n{"op_code": 1}\n')
    base = ["run", str(suite), "--results", str(results), "--no-progress"]
    plain = runner.invoke(main, base)
    assert plain.exit_code == 0, plain.output
    assert "warning: the Optuna journal" in plain.output and "damaged at line 2" in plain.output
    tuned = runner.invoke(main, [*base, "--protocol", "tuned", "--trials", "1"])
    assert tuned.exit_code != 0
    assert "damaged at line 2" in tuned.output and "Move the file aside" in tuned.output
    assert not list((results / "runs").rglob("tuned-seed0.json"))


@pytest.mark.parametrize("progress", [False, True])
def test_run_plan_leaves_no_thread_running(tmp_path, monkeypatch, progress):
    """run_plan's bar (a disabled one too) started tqdm's monitor thread, which nothing stops
    (tqdm issue 1564): a notebook that ran a plan kept it, as fits did before nn/_progress.py."""
    import threading

    from tabmoe.bench import runner as runner_module
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.suites import load_suite

    specs = plan_runs(load_suite(tiny_suite(tmp_path)), protocols=["fixed-budget"])

    def fake_execute_all(todo, jobs, scheduler):
        for spec in todo:
            yield spec.run_id, None, "Traceback (most recent call last):\nValueError: boom"

    monkeypatch.setattr(runner_module, "execute_all", fake_execute_all)
    monkeypatch.setattr(runner_module.tqdm, "monitor", None)  # none started yet, as in a new process
    before = set(threading.enumerate())
    runner_module.run_plan(specs, open_store(tmp_path / "r"), progress=progress)
    assert set(threading.enumerate()) - before == set()
