"""The four leaderboard protocols end to end on a tiny suite: defaults, fixed-budget, tuned,
unlabeled-target (and the old name ``untuned``)."""

from __future__ import annotations

import dataclasses
import functools
import json

import pandas as pd
import pytest

pytest.importorskip("click")  # extra "bench"

from click.testing import CliRunner

from tabmoe import TabularMoEClassifier
from tabmoe.bench.cli import main
from tabmoe.bench.plan import plan_runs
from tabmoe.bench.suites import load_suite
from tabmoe.registry import MODELS

from .bench_helpers import tiny_suite

PROTOCOLS = ("defaults", "fixed-budget", "tuned", "unlabeled-target")


@pytest.fixture
def quick_tabmoe(monkeypatch):
    """tabmoe's registry entry with a 2-epoch CPU factory (runs execute in this process)."""
    spec = dataclasses.replace(
        MODELS["tabmoe"],
        factory=functools.partial(TabularMoEClassifier, max_epochs=2, device="cpu"),
    )
    monkeypatch.setitem(MODELS, "tabmoe", spec)


def records(results) -> dict[str, dict]:
    out = {}
    for path in (results / "runs").rglob("*.json"):
        record = json.loads(path.read_text())
        out[f"{record['model']}/{record['protocol']}"] = record
    return out


def test_every_protocol_runs_end_to_end_and_reports(tmp_path, quick_tabmoe):
    models = {"logistic_regression": {"C": 0.5}, "hist_gradient_boosting": {"max_iter": 20},
              "tabmoe": {"max_epochs": 1}}
    suite = tiny_suite(tmp_path, models=models, protocols=PROTOCOLS, n_trials=2)
    results = tmp_path / "results"
    out = CliRunner().invoke(main, ["run", str(suite), "--results", str(results), "--no-progress"])
    assert out.exit_code == 0, out.output
    runs = records(results)
    assert len(runs) == 12

    # defaults: Model() -- the suite's parameters are not applied; fixed-budget applies them.
    assert runs["logistic_regression/defaults"]["params"]["C"] == 1.0
    assert runs["logistic_regression/defaults"]["config"]["fixed"] == {}
    assert runs["logistic_regression/fixed-budget"]["params"]["C"] == 0.5
    assert runs["hist_gradient_boosting/defaults"]["params"]["max_iter"] == 100
    assert runs["tabmoe/defaults"]["params"]["max_epochs"] == 2  # the (patched) factory's own
    assert runs["tabmoe/fixed-budget"]["params"]["max_epochs"] == 1
    tuned = runs["logistic_regression/tuned"]
    assert tuned["search"]["n_trials"] == 2
    # tuned records what was fitted: the defaults, the best trial's values, the seed
    assert tuned["params"]["random_state"] == tuned["seed"] and tuned["params"]["max_iter"] == 2000
    assert tuned["params"]["C"] == 0.5  # the suite's fixed C wins over the searched one

    # unlabeled-target: half the OOD rows to fit (no labels), the other half scored.
    adapted = runs["tabmoe/unlabeled-target"]
    n = adapted["n_rows"]
    assert n["ood_adaptation"] + n["ood_test"] == runs["tabmoe/defaults"]["n_rows"]["ood_test"]
    assert adapted["rows"] == runs["tabmoe/defaults"]["rows"] == runs["logistic_regression/tuned"]["rows"]
    from tabmoe.bench._environment import cpu_model

    assert {r["cpu"] for r in runs.values()} == {cpu_model()} and cpu_model()  # where a record's fit ran
    assert {r["accelerator"] for r in runs.values()} == {None}  # tabmoe trained on the CPU here
    assert abs(n["ood_adaptation"] - n["ood_test"]) <= 1
    assert adapted["ood_test"]["n"] == n["ood_test"]
    assert adapted["adaptation"]["unlabeled_rows"] is True  # tabmoe's masked objective
    assert adapted["adaptation"]["importance_weights"]["n"] == n["train"]
    lr = runs["logistic_regression/unlabeled-target"]["adaptation"]
    assert lr["unlabeled_rows"] is False and lr["importance_weights"] and lr["adapted"]
    assert runs["logistic_regression/unlabeled-target"]["config"]["adaptation"]["fraction"] == 0.5
    assert "adaptation" not in runs["logistic_regression/defaults"]["config"]

    # One report section per protocol; summary.csv names the protocols.
    report = (results / "report.md").read_text()
    for protocol in PROTOCOLS:
        assert f"## Protocol `{protocol}`" in report
    assert "### What each model did with the unlabeled rows" in report
    summary = pd.read_csv(results / "summary.csv")
    assert list(dict.fromkeys(summary["protocol"])) == list(PROTOCOLS)
    assert set(summary["model"]) == set(models)


def test_untuned_is_an_alias_of_fixed_budget(tmp_path):
    suite = tiny_suite(tmp_path, protocols=("untuned",))
    results = tmp_path / "results"
    out = CliRunner().invoke(
        main, ["run", str(suite), "--results", str(results), "--no-progress", "--no-report"]
    )
    assert out.exit_code == 0, out.output
    (path,) = (results / "runs").rglob("*.json")
    assert path.name == "fixed-budget-seed0.json"
    again = CliRunner().invoke(
        main, ["run", str(suite), "--results", str(results), "--no-progress", "--no-report",
               "--protocol", "untuned"]
    )
    assert "1 planned, 1 already finished, 0 run now" in again.output


def test_plan_rejects_unknown_protocols_and_keeps_fixed_params_out_of_bare_ones():
    suite = load_suite("smoke")
    with pytest.raises(ValueError, match="unknown protocol.*'nope'.*defaults"):
        plan_runs(suite, protocols=["nope"])
    specs = plan_runs(suite, models=["tabmoe"], seeds=[0], protocols=list(PROTOCOLS))
    fixed = {s.protocol: dict(s.fixed) for s in specs}
    assert fixed["defaults"] == fixed["unlabeled-target"] == {}
    assert fixed["fixed-budget"] == fixed["tuned"] == dict(suite.models["tabmoe"]) != {}


def test_catboost_threads_follow_the_run():
    """CatBoost's own thread pool ignores threadpoolctl: the run sets its thread_count."""
    pytest.importorskip("catboost")
    from tabmoe.baselines import reference
    from tabmoe.bench.execute import _thread_params

    assert _thread_params(reference.catboost(), 2) == {"estimator__thread_count": 2}
    assert _thread_params(reference.lightgbm(), 2) == {}  # OpenMP: limited_threads covers it


def test_a_kept_domain_column_reaches_the_models_fit(monkeypatch):
    # keep_domain: true kept the column in the split's parts, but SplitData.features removed
    # it, so no model saw the held-out values it was meant to extrapolate to
    import dataclasses

    import tabmoe.bench.execute as execute_module
    from tabmoe.bench.plan import RunSpec
    from tabmoe.bench.suites import load_suite

    split = dataclasses.replace(load_suite("smoke").split("car-buying-vhigh"), keep_domain=True)
    seen = {}
    real = execute_module.set_random_states

    def spy(estimator, seed):
        estimator = real(estimator, seed)
        fit = estimator.fit

        def recording_fit(X, y, **kwargs):
            seen["columns"] = list(X.columns)
            return fit(X, y, **kwargs)

        estimator.fit = recording_fit
        return estimator

    monkeypatch.setattr(execute_module, "set_random_states", spy)
    spec = RunSpec(suite="smoke", split=split, model="logistic_regression", protocol="defaults", seed=0)
    execute_module.execute(spec)
    assert "buying" in seen["columns"]


def test_a_tuned_run_closes_its_database_connections(tmp_path, monkeypatch):
    # Each tuned run opened an Optuna RDB storage whose engine kept its pooled connections
    # open until the garbage collector found it: 60 tuned runs in one process held up to 29
    # connections to the sqlite file at once (on PostgreSQL, a server's connection slots).
    import tabmoe.bench.execute as execute_module
    from tabmoe.bench.plan import Budget, RunSpec
    from tabmoe.bench.suites import load_suite

    opened = []
    real = execute_module.open_storage

    def spy(storage):
        opened.append(real(storage))
        return opened[-1]

    monkeypatch.setattr(execute_module, "open_storage", spy)
    spec = RunSpec(suite="smoke", split=load_suite("smoke").split("car-buying-vhigh"),
                   model="logistic_regression", protocol="tuned", seed=0, budget=Budget(n_trials=2),
                   study_storage=f"sqlite:///{tmp_path / 'studies.db'}")
    record = execute_module.execute(spec)
    assert record["search"]["n_complete"] == 2
    (storage,) = opened
    assert storage.engine.pool.checkedin() == 0
    assert len(storage.get_all_studies()) == 1  # disposed, the storage still reads


def test_a_runs_threads_reach_the_torch_models_fits():
    """Each torch fit sets its own thread count from n_jobs=None: one thread whatever
    `--threads` said, while the record stated `threads: 2`. Inside a run, n_jobs=None now
    reads the run's count (joblib's context, as scikit-learn's estimators read it)."""
    from tabmoe.bench._environment import limited_threads
    from tabmoe.nn._threads import resolve_n_jobs

    with limited_threads(2):
        assert resolve_n_jobs(None) == 2
    with limited_threads(1):
        assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(None) == 1
