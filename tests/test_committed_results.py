"""The committed benchmark results regenerate the committed reports with one CLI command.

``benchmarks/results/<suite>/runs/`` holds one JSON record per finished run and
``benchmarks/results/<suite>/report.md`` the report the docs embed; a change to the
records, the suite file or the report code that is not followed by
``tabmoe-bench report <suite> --results benchmarks/results/<suite>`` fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tabmoe.bench.cli import main

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SUITES = ["smoke", "paper", "openml-ood"]


@pytest.mark.parametrize("suite", SUITES)
def test_committed_report_is_regenerated_from_committed_runs(suite, tmp_path):
    folder = RESULTS / suite
    if not (folder / "runs").is_dir():
        pytest.skip(f"no committed runs for {suite}")
    result = CliRunner().invoke(main, ["report", suite, "--results", str(folder), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    committed = (folder / "report.md").read_text(encoding="utf8")
    regenerated = (tmp_path / "report.md").read_text(encoding="utf8")
    assert regenerated == committed, (
        f"benchmarks/results/{suite}/report.md is stale: run "
        f"`tabmoe-bench report {suite} --results benchmarks/results/{suite}`"
    )
    for name in ("summary.csv", "per_split.csv"):
        assert (tmp_path / name).read_text() == (folder / name).read_text(), name
