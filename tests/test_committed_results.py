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
# openml-ood's regeneration (19 s) runs in the slow suite, to keep the default one short.
SUITES = ["smoke", "paper", pytest.param("openml-ood", marks=pytest.mark.slow)]


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


@pytest.mark.parametrize("suite", ["smoke", "paper", "openml-ood"])
def test_committed_runs_match_the_plan_of_their_suite(suite):
    """Every committed record has the run id and configuration hash the suite plans today
    (so the renamed ``untuned`` -> ``fixed-budget`` records are resumed, not rerun)."""
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.storage import open_store
    from tabmoe.bench.suites import load_suite
    from tabmoe.registry import get_model

    folder = RESULTS / suite
    if not (folder / "runs").is_dir():
        pytest.skip(f"no committed runs for {suite}")
    # runs of models whose optional packages are not installed here cannot be planned: the
    # others are still checked
    finished = {
        run_id: digest for run_id, digest in open_store(folder, None).finished(suite).items()
        if get_model(run_id.split("/")[2]).available()
    }
    loaded = load_suite(suite)
    protocols = sorted({run_id.split("/")[3] for run_id in finished})
    models = sorted({run_id.split("/")[2] for run_id in finished})
    planned = {s.run_id: s.config_hash for s in plan_runs(loaded, models=models, protocols=protocols)}
    assert "untuned" not in protocols
    mismatched = [run_id for run_id, digest in finished.items() if planned.get(run_id) != digest]
    assert not mismatched, mismatched[:5]
