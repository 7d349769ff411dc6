"""The tabmoe-bench command line, through click's CliRunner."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("click")  # extra "bench"

from click.testing import CliRunner

from tabmoe.bench.cli import main
from tabmoe.bench.suites import load_suite


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_suites_lists_every_suite_and_split(runner):
    result = runner.invoke(main, ["suites"])
    assert result.exit_code == 0, result.output
    for name in ("smoke:", "paper:", "openml-ood:", "car-buying-vhigh", "sim-5-0.9-0.0", "bank-later-period"):
        assert name in result.output


def test_shift_report_smoke(runner, monkeypatch, tmp_path):
    monkeypatch.setenv("TABMOE_OPENML_CACHE", str(tmp_path / "no-cache"))  # smoke needs no cache
    result = runner.invoke(main, ["shift-report", "smoke", "--labels"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| car-")]
    assert [row.split("|")[1].strip() for row in rows] == ["car-buying-vhigh", "car-cluster"]
    assert "car-cluster: label distribution" in result.output


def test_shift_report_one_split_and_seed(runner):
    result = runner.invoke(main, ["shift-report", "smoke", "--split", "car-cluster", "--seed", "7", "--cv", "3"])
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.output.splitlines() if line.startswith("| car-")]
    assert row.split("|")[4].strip() == "7"


def test_shift_report_suite_file_path(runner, tmp_path):
    suite = tmp_path / "mine.yaml"
    csv = load_suite("smoke").splits[0].data.file
    suite.write_text(
        "name: mine\nseeds: [0]\nsplits:\n"
        f"  - {{name: a, data: {{file: {csv}, target: class}}, split: {{by: values, column: safety, ood_values: [low]}}}}\n"
    )
    result = runner.invoke(main, ["shift-report", str(suite)])
    assert result.exit_code == 0, result.output
    assert "| a | car-smoke | safety |" in result.output


def test_bad_input_is_a_clean_error(runner):
    result = runner.invoke(main, ["shift-report", "nope"])
    assert result.exit_code == 2 and "no suite 'nope'" in result.output
    result = runner.invoke(main, ["shift-report", "smoke", "--split", "zzz"])
    assert result.exit_code == 2 and "has no split 'zzz'" in result.output
    for seed in ("-1", "4294967296"):  # numpy's refusal, without naming --seed
        result = runner.invoke(main, ["shift-report", "smoke", "--seed", seed])
        assert result.exit_code == 2 and f"--seed: {seed} is not in [0, 2**32)" in result.output


@pytest.mark.parametrize("args", [[], ["suites"], ["shift-report"]])
def test_help_explains_every_option(runner, args):
    result = runner.invoke(main, [*args, "--help"])
    assert result.exit_code == 0
    options = re.findall(r"^\s+(-[-\w/ ,]+?)\s{2,}(\S.*)$", result.output, flags=re.M)
    command = main if not args else main.commands[args[0]]
    declared = {opt for param in command.params for opt in getattr(param, "opts", []) if opt.startswith("--")}
    documented = {name for line, _ in options for name in re.findall(r"--[\w-]+", line)}
    assert declared <= documented, declared - documented
    for param in command.params:
        if param.param_type_name == "option":
            assert param.help and len(param.help) > 20, param.name


def test_max_rows_help_describes_the_subsample_drawn(runner):
    """--max-rows's help said "stratified subsample of ID + OOD rows", but covariate_auc keeps
    the smaller side whole up to half of the rows (3,000 ID rows against 30,000 OOD ones
    under 20,000: all 3,000 ID rows, 15% of those kept, not their 9%)."""
    from tabmoe.data.shift import _subsample

    assert [len(rows) for rows in _subsample(3_000, 30_000, 20_000, 0)] == [3_000, 17_000]
    text = " ".join(runner.invoke(main, ["shift-report", "--help"]).output.split())
    assert "stratified" not in text
    assert "the smaller side (ID or OOD) whole up to half of them, the larger side the rest" in text
