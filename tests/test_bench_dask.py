"""Scale-out: a real Dask distributed cluster (a LocalCluster of two worker processes on
loopback, reached through its scheduler address exactly as a remote one would be) and
local worker processes (--jobs)."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("click")  # extra "bench"

from click.testing import CliRunner

from tabmoe.bench.cli import main

from .bench_helpers import tiny_suite


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, worker_dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        yield cluster.scheduler_address, set(client.run(lambda: __import__("os").getpid()).values())


@pytest.mark.slow  # two worker processes importing torch: ~30 s on 2 busy cores
def test_run_on_a_dask_cluster(cluster, tmp_path):
    address, worker_pids = cluster
    suite = tiny_suite(tmp_path, models={"logistic_regression": {}, "tabmoe": {"max_epochs": 2}},
                       seeds=(0, 1), protocols=("fixed-budget", "tuned"), n_trials=1)
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--scheduler", address, "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "tiny: 8 planned, 0 already finished, 8 run now, 0 failed" in result.output
    records = [json.loads(p.read_text()) for p in (results / "runs").rglob("*.json")]
    assert len({r["run_id"] for r in records}) == 8
    pids = {r["pid"] for r in records}
    assert pids <= worker_pids and len(pids) == 2  # ran in both worker processes, not here
    assert (results / "report.md").is_file()
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "8 already finished, 0 run now" in again.output


@pytest.mark.parametrize("address, message", [
    (None, "cannot reach the Dask scheduler at tcp://127.0.0.1:"),
    ("garbage", "--scheduler 'garbage' is not a Dask scheduler address such as tcp://host:8786"),
    ("http://127.0.0.1:8786", "--scheduler 'http://127.0.0.1:8786' is not a Dask scheduler address"),
])
def test_unreachable_scheduler_is_a_usage_error(tmp_path, address, message):
    """Nothing is created: the results folder with its .lock, runs/ and failures/ was left
    behind (the scheduler was reached only once the runs started), and a malformed address
    was a traceback with exit code 1."""
    from .bench_helpers import free_port

    pytest.importorskip("distributed")  # extra "bench": the message comes from its client
    suite = tiny_suite(tmp_path)
    results = tmp_path / "r"
    address = address or f"tcp://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(main, ["run", str(suite), "--results", str(results), "--scheduler",
                                       address, "--no-progress", "--storage", f"sqlite:///{tmp_path}/db"])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not results.exists() and not (tmp_path / "db").exists()


def test_a_scheduler_without_distributed_names_the_extra(monkeypatch):
    """``--scheduler`` (``connect``) and ``run_plan(scheduler=...)`` failed with Python's bare
    "No module named 'distributed'" from inside tabmoe.bench.engines, naming no extra."""
    from tabmoe.bench.engines import _dask, connect

    for name in [m for m in sys.modules if m == "distributed" or m.startswith("distributed.")] or ["distributed"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    message = r"Running on a Dask scheduler needs the optional package 'distributed': install the extra 'bench'"
    with pytest.raises(ImportError, match=message):
        connect("tcp://127.0.0.1:8786")
    with pytest.raises(ImportError, match=message):
        next(_dask([], "tcp://127.0.0.1:8786"))


@pytest.mark.slow  # loky worker processes importing torch
def test_run_in_local_worker_processes(tmp_path):
    import os

    suite = tiny_suite(tmp_path, seeds=(0, 1), protocols=("fixed-budget", "tuned"), n_trials=1)
    results = tmp_path / "results"
    result = CliRunner().invoke(main, ["run", str(suite), "--results", str(results), "--jobs", "2",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "tiny: 4 planned, 0 already finished, 4 run now, 0 failed" in result.output
    records = [json.loads(p.read_text()) for p in (results / "runs").rglob("*.json")]
    assert len({r["run_id"] for r in records}) == 4
    assert os.getpid() not in {r["pid"] for r in records}  # ran in worker processes


def test_run_on_a_scheduler_without_a_default_client(tmp_path, monkeypatch):
    """The command's client is not the process's default one: waiting on its tasks failed
    with "ValueError: No clients found" (the cluster fixture's Client hid it)."""
    distributed = pytest.importorskip("distributed")  # extra "bench", as the cluster fixture above
    import weakref

    # no default client in this process, whatever other tests left
    monkeypatch.setattr(distributed.client, "_global_clients", weakref.WeakValueDictionary())
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
        dashboard_address=None, worker_dashboard_address=None,
    ) as cluster:
        result = CliRunner().invoke(main, ["run", str(suite), "--results", str(results), "--scheduler",
                                           cluster.scheduler_address, "--no-progress", "--no-report"])
    assert result.exit_code == 0, result.output
    assert "tiny: 1 planned, 0 already finished, 1 run now, 0 failed" in result.output
    assert len(list((results / "runs").rglob("*.json"))) == 1
