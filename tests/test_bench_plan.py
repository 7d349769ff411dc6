"""Planning a suite run: models x splits x seeds x protocols, every name checked up front."""

from __future__ import annotations

import dataclasses
import re
import shutil

import pytest

pytest.importorskip("yaml")  # extra "data": the suite files

from tabmoe.bench.plan import Budget, current_config_hash, plan_runs
from tabmoe.bench.suites import load_suite

from .bench_helpers import tiny_suite

SMOKE = load_suite("smoke")


def test_smoke_plan_uses_the_suite_settings():
    runs = plan_runs(SMOKE)
    assert len(runs) == 2 * 2 * 4 * 2  # splits x seeds x models x protocols
    assert len({r.run_id for r in runs}) == len(runs)
    assert runs[0].run_id == "smoke/car-buying-vhigh/tabmoe/fixed-budget/seed0"
    assert dict(runs[0].fixed) == SMOKE.models["tabmoe"]
    assert runs[0].budget == Budget(**SMOKE.tuning)
    assert {r.protocol for r in runs} == {"fixed-budget", "tuned"}


def test_subsets_and_overrides():
    runs = plan_runs(SMOKE, models=["logistic_regression"], splits=["car-cluster"], seeds=[5, 6],
                     protocols=["tuned"], budget=Budget(n_trials=3), threads=2, study_storage="x.journal")
    assert [r.run_id for r in runs] == [
        "smoke/car-cluster/logistic_regression/tuned/seed5",
        "smoke/car-cluster/logistic_regression/tuned/seed6",
    ]
    assert runs[0].budget.n_trials == 3 and runs[0].threads == 2 and runs[0].study_storage == "x.journal"
    assert runs[0].tuned and runs[0].study_name == runs[0].run_id


def test_config_hash_tracks_the_configuration_not_the_checkout(tmp_path):
    a = plan_runs(SMOKE, models=["tabmoe"], seeds=[0], protocols=["tuned"])[0]
    copy = tmp_path / "suites"
    shutil.copytree(SMOKE.path.parent, copy)  # the suites and their data/ folder
    moved = plan_runs(load_suite("smoke", copy), models=["tabmoe"], seeds=[0], protocols=["tuned"])[0]
    assert moved.config_hash == a.config_hash  # same suite in another folder
    assert plan_runs(SMOKE, models=["tabmoe"], seeds=[0], protocols=["tuned"],
                     budget=Budget(n_trials=9))[0].config_hash != a.config_hash
    capped = dataclasses.replace(SMOKE, splits=tuple(dataclasses.replace(s, max_id_rows=100) for s in SMOKE.splits))
    assert plan_runs(capped, models=["tabmoe"], seeds=[0], protocols=["tuned"])[0].config_hash != a.config_hash


def test_paper_suite_defaults_to_the_paper_protocol():
    paper = load_suite("paper")
    runs = plan_runs(paper, splits=["sim-5-0.9-0.0"], seeds=[4951])
    assert {r.protocol for r in runs} == {"paper"}
    assert {r.model for r in runs} >= {"tabmoe", "logistic_regression", "random_forest", "gradient_boosting", "mlp"}
    with pytest.raises(ValueError, match=r"no ID validation part .* --protocol fixed-budget, defaults or paper"):
        plan_runs(paper, protocols=["tuned"])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"models": ["nope"]}, ValueError, r"unknown model\(s\) \['nope'\]; known models: \['tabmoe'"),
        ({"splits": ["zzz"]}, KeyError, "has no split 'zzz'"),
        ({"protocols": ["oracle"]}, ValueError, r"unknown protocol\(s\) \['oracle'\]"),
        # a list or None among the names: TypeError "unhashable type: 'list'", naming nothing
        (
            {"models": [["tabmoe"]]},
            TypeError,
            r"model names must be strings, .*got \[\['tabmoe'\]\]",
        ),
        ({"models": [None, "mlp"]}, TypeError, r"model names must be strings, .*got \[None\]"),
        (
            {"protocols": [["tuned"]]},
            TypeError,
            r"protocol names must be strings, .*got \[\['tuned'\]\]",
        ),
    ],
)
def test_bad_names_fail_before_any_work(kwargs, error, message):
    with pytest.raises(error, match=message):
        plan_runs(SMOKE, **kwargs)


def test_bad_budgets_are_named(tmp_path):
    with pytest.raises(ValueError, match="n_trials must be a positive integer"):
        Budget(n_trials=0)
    with pytest.raises(ValueError, match="metric 'f1' is not one of"):
        Budget(metric="f1")
    with pytest.raises(ValueError, match="give n_trials, timeout or both"):
        Budget(n_trials=None)
    suite = load_suite(tiny_suite(tmp_path))
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['trials'\]"):
        Budget.from_dict({"trials": 3})
    assert plan_runs(suite)[0].run_id == "tiny/price/logistic_regression/fixed-budget/seed0"


def test_budget_values_of_the_wrong_type_are_named():
    """A quoted timeout ("60") and a metric written as a list were TypeErrors naming nothing
    ("'>' not supported between instances of 'str' and 'int'", "unhashable type: 'list'"),
    a traceback from `tabmoe-bench run`."""
    with pytest.raises(ValueError, match=r"tuning.timeout \(--timeout\) must be positive, finite seconds, got '60'"):
        Budget.from_dict({"timeout": "60"})
    with pytest.raises(ValueError, match=r"tuning.metric \['accuracy'\] is not one of"):
        Budget.from_dict({"metric": ["accuracy"]})
    assert Budget.from_dict({"timeout": 60, "metric": "accuracy"}).timeout == 60


def test_a_suites_bad_budget_names_the_suite_file(tmp_path):
    """`tuning: {n_trials: "2"}` said "tuning.n_trials must be a positive integer, got '2'",
    naming no file, where the suite's other errors name it ("<file>.models...")."""
    path = tiny_suite(tmp_path, models={"random_forest": {"random_state": 5}}, protocols=("tuned",))
    where = re.escape(f"suite {path}")
    with pytest.raises(ValueError, match=rf"^{where}\.models\.random_forest: \['random_state'\] cannot be fixed"):
        plan_runs(load_suite(path))
    for tuning, message in (('{n_trials: "2"}', r"\.tuning\.n_trials must be a positive integer, got '2'"),
                            ('{timeout: "60"}', r"\.tuning\.timeout \(--timeout\) must be positive"),
                            ("{n_trials: null}", r"\.tuning: give n_trials, timeout or both"),
                            ("{metric: f1}", r"\.tuning\.metric 'f1' is not one of"),
                            ("{trials: 2}", r"\.tuning: unknown key\(s\) \['trials'\]")):
        path.write_text(re.sub(r"(?m)^tuning:.*(\n  .*)*", f"tuning: {tuning}", path.read_text()))
        suite = load_suite(path)
        assert suite.tuning  # the file was edited
        with pytest.raises(ValueError, match=rf"^{where}{message}"):
            plan_runs(suite, models=["logistic_regression"])
        with pytest.raises(ValueError, match=rf"^{where}{message}"):
            Budget.of_suite(suite)
        if "metric" in tuning:  # the command line's value replaces the suite's
            assert Budget.of_suite(suite, metric="accuracy", n_trials=None).metric == "accuracy"


@pytest.mark.parametrize("timeout", [float("inf"), float("nan")])
def test_a_timeout_that_is_not_finite_is_refused(timeout):
    """`--timeout inf` planned runs hashed with Infinity whose records stored null, and
    `--timeout nan` passed click's range to fail with a message that named no option."""
    with pytest.raises(ValueError, match=r"tuning.timeout \(--timeout\) must be positive, finite"):
        Budget.from_dict({"timeout": timeout})


def test_a_random_state_among_a_models_fixed_parameters_is_refused(tmp_path):
    """The run set it to the seed, and its record stated the suite's value as the one used."""
    for key in ("random_state", "estimator__random_state"):
        suite = load_suite(tiny_suite(tmp_path, models={"random_forest": {key: 5, "n_estimators": 5}}))
        with pytest.raises(ValueError, match=rf"models.random_forest: \['{key}'\] cannot be fixed"):
            plan_runs(suite)
    assert plan_runs(suite, models=["logistic_regression"])[0].model == "logistic_regression"


def test_a_misspelt_fixed_parameter_is_a_usage_error_before_any_run(tmp_path):
    """It failed every run of the model with a TypeError that did not name the suite file."""
    suite = load_suite(tiny_suite(tmp_path, models={"hist_gradient_boosting": {"max_iters": 5}}))
    with pytest.raises(ValueError, match=r"suite .*tiny.yaml.models.hist_gradient_boosting: .*'max_iters'"):
        plan_runs(suite)
    # the parameters are not applied under defaults, nor to another model
    assert plan_runs(suite, protocols=["defaults"])[0].model == "hist_gradient_boosting"
    assert plan_runs(suite, models=["logistic_regression"])[0].model == "logistic_regression"


@pytest.mark.parametrize("models, message", [
    ({"logistic_regression": {"C": "abc"}}, r"The 'C' parameter of LogisticRegression must be .*Got 'abc'"),
    ({"tabmoe": {"max_epochs": "20"}}, r"The 'max_epochs' parameter of TabularMoEClassifier must be "),
    ({"tabmoe": {"learning_rate": "1e-3"}}, r"The 'learning_rate' parameter of .* Got '1e-3' instead\. \(YAML reads '1e-3' as text"),
    ({"random_forest": {"drop": "last"}}, r"The 'drop' parameter of EncodedClassifier must be "),
])
def test_a_fixed_parameter_the_estimator_refuses_is_named_before_any_run(tmp_path, models, message):
    """A value of the wrong type or range passed planning and failed every run at fit."""
    path = tiny_suite(tmp_path, models=models)
    (model,) = models
    with pytest.raises(ValueError, match=rf"^{re.escape(f'suite {path}.models.{model}: ')}{message}"):
        plan_runs(load_suite(path))
    assert plan_runs(load_suite(path), protocols=["defaults"])[0].model == model  # not applied there


def test_current_config_hash_is_the_hash_run_plans_for_a_records_run():
    """What the report compares a record's config_hash with (its OLD CONFIGURATION note)."""
    protocols = ["defaults", "fixed-budget", "tuned", "unlabeled-target"]
    runs = plan_runs(SMOKE, seeds=[0, 1], protocols=protocols)
    assert {r.model for r in runs} >= {"tabmoe", "logistic_regression"}
    for run in runs:
        record = {"split": run.split.name, "model": run.model, "protocol": run.protocol}
        assert current_config_hash(SMOKE, record) == run.config_hash, run.run_id
    record = {"split": runs[0].split.name, "model": "tabmoe", "protocol": "untuned", "seed": 0}
    assert current_config_hash(SMOKE, record) is None  # an old name: its hash was made with it
    assert current_config_hash(SMOKE, {**record, "protocol": "tuned", "split": "gone"}) is None


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"models": "tabmoe"}, "models"),
        ({"splits": "car-cluster"}, "splits"),
        ({"protocols": "tuned"}, "protocols"),
        ({"seeds": "12"}, "seeds"),
        ({"seeds": [0.5]}, "seeds"),
        ({"seeds": [True]}, "seeds"),
    ],
)
def test_plan_runs_refuses_a_string_for_a_list(kwargs, named):
    # list("tabmoe") planned six unknown models; seeds="12" planned seeds 1 and 2
    with pytest.raises(TypeError, match=f"plan_runs' {named} must be a list"):
        plan_runs(SMOKE, **kwargs)


def test_plan_runs_takes_numpy_seeds():
    import numpy as np

    runs = plan_runs(SMOKE, models=["logistic_regression"], seeds=np.array([3, 4]))
    assert {r.seed for r in runs} == {3, 4}
    assert all(type(r.seed) is int for r in runs)


def test_a_name_or_seed_given_twice_plans_its_runs_once():
    runs = plan_runs(SMOKE, models=["logistic_regression", "logistic_regression"],
                     splits=["car-cluster", "car-cluster"], seeds=[0, 0], protocols=["fixed-budget", "untuned"])
    assert [r.run_id for r in runs] == ["smoke/car-cluster/logistic_regression/fixed-budget/seed0"]


def test_a_split_without_a_data_source_is_refused_naming_it():
    # a suite built in Python with SplitDefinition(data=None): the first run's config raised
    # "'NoneType' object has no attribute 'describe'"
    split = dataclasses.replace(SMOKE.splits[0], data=None)
    suite = dataclasses.replace(SMOKE, splits=(split, *SMOKE.splits[1:]))
    with pytest.raises(ValueError, match=rf"\['{split.name}'\] of suite .* have no data source \(data=None\)"):
        plan_runs(suite, models=["logistic_regression"])
