"""A real SIGKILL of a running ``tabmoe-bench run`` loses only the runs in flight: rerunning the
same command skips every finished run (its file untouched), redoes the rest, and leaves
exactly one intact record per run and one complete study per tuned run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("optuna")  # extra "tuning"

import optuna

from tabmoe.tuning import open_storage

from .bench_helpers import tiny_suite


@pytest.mark.slow  # three CLI processes: ~30 s on 2 busy cores
def test_sigkill_then_rerun_skips_finished_work(tmp_path):
    suite = tiny_suite(
        tmp_path, models={"tabmoe": {"max_epochs": 4}, "logistic_regression": {}},
        seeds=(0, 1), protocols=("fixed-budget", "tuned"), n_trials=2,
    )
    results = tmp_path / "results"
    command = [sys.executable, "-m", "tabmoe.bench", "run", str(suite), "--results", str(results),
               "--no-progress"]
    runs_dir = results / "runs" / "tiny"
    proc = subprocess.Popen([*command, "--no-report"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not list(runs_dir.rglob("*.json")):  # wait for the first finished run
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run finished in time"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    before = {p: p.stat().st_mtime_ns for p in runs_dir.rglob("*.json")}
    assert 1 <= len(before) < 8, "the kill must leave work unfinished"
    for path in before:  # finished records are whole
        assert json.loads(path.read_text())["run_id"].startswith("tiny/price/")

    rerun = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (f"tiny: 8 planned, {len(before)} already finished, {8 - len(before)} run now, 0 failed"
            in rerun.stdout), rerun.stdout
    after = sorted(runs_dir.rglob("*.json"))
    assert len(after) == 8
    records = [json.loads(p.read_text()) for p in after]
    expected = {f"tiny/price/{m}/{p}/seed{s}" for m in ("tabmoe", "logistic_regression")
                for p in ("fixed-budget", "tuned") for s in (0, 1)}
    assert sorted(r["run_id"] for r in records) == sorted(expected)  # each run exactly once
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in before.items())  # skipped, not redone
    assert not [p for p in after if p.name.startswith(".")]
    # One complete study per tuned run: the killed attempt's partial study was dropped.
    storage = open_storage(results / "optuna.journal")
    studies = {s.study_name: s for s in optuna.get_all_study_summaries(storage)}
    tuned = sorted(r for r in expected if "/tuned/" in r)
    assert sorted(studies) == tuned
    for name in tuned:
        trials = optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)
        assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"], name
    assert (results / "report.md").is_file()
