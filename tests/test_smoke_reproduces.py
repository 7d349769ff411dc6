"""A fresh run of README's main job (the smoke suite) reproduces the committed reference.

The smoke suite is deterministic (fixed seeds, one thread per run), so a run into an empty
folder must give the accuracy tables of ``benchmarks/results/smoke/report.md``
(``scripts/compare_reports.py``: everything before the cost section, without the git /
versions line). About 40 s on 2 idle cores, minutes on busy ones: marked slow (CI runs
the slow tests, and its fresh-clone check, scripts/check_fresh_clone.sh, compares the same
way after README's own command).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("click")  # extra "bench"

from click.testing import CliRunner

from tabmoe.bench.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "benchmarks" / "results" / "smoke" / "report.md"


def _compare_reports():
    spec = importlib.util.spec_from_file_location("compare_reports", ROOT / "scripts" / "compare_reports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_accuracy_part_ignores_revision_and_costs_only():
    compare = _compare_reports()
    text = COMMITTED.read_text(encoding="utf8")
    part = compare.accuracy_part(text)
    assert any(line.startswith("| tabmoe |") for line in part) and not any("fit s" in line for line in part)
    changed = text.replace("| car-cluster | tabmoe |", "| car-cluster | tabmoe | 0.001", 1)
    assert compare.accuracy_part(changed) != part
    other_costs = text.replace("Code: git ", "Code: git 0000000 ", 1).replace("Total compute: ", "Total compute: 9", 1)
    assert compare.accuracy_part(other_costs) == part
    # A run's own report knows its plan ("0 failed or unfinished."); a standalone report
    # (the committed ones, regenerated from their runs) says it cannot count runs never
    # started: the same counts compare equal, other counts do not.
    line = next(line for line in text.splitlines() if " finished runs " in line)
    count = line.split("; ", 1)[0]
    after_run = text.replace(line, f"{count}; 0 failed or unfinished.", 1)
    assert compare.accuracy_part(after_run) == part
    assert compare.accuracy_part(text.replace(line, f"{count}; 1 failed or unfinished.", 1)) != part


@pytest.mark.slow
def test_fresh_smoke_run_reproduces_the_committed_accuracy_tables(tmp_path):
    results = tmp_path / "smoke"
    result = CliRunner().invoke(main, ["run", "smoke", "--results", str(results), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "32 planned, 0 already finished, 32 run now, 0 failed" in result.output
    diff = _compare_reports().differences(COMMITTED, results / "report.md")
    assert not diff, "\n".join(diff)
