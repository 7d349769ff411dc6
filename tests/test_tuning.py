"""tabmoe.tuning.tune: registry specs, estimators and factories; validation-only selection;
stored studies that resume; bad input named."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

pytest.importorskip("optuna")  # extra "tuning"

import optuna

from tabmoe import TabularMoEClassifier
from tabmoe.baselines.reference import logistic_regression
from tabmoe.bench.suites import load_suite
from tabmoe.metrics import score_estimator
from tabmoe.registry import MODELS, get_model
from tabmoe.tuning import open_storage, set_random_states, tune


@pytest.fixture(scope="module")
def split():
    return load_suite("smoke").splits[0].make(0)


@pytest.fixture(scope="module")
def data(split):
    X, y = split.features("train"), split.train[split.target]
    val = (split.features("validation"), split.validation[split.target])
    return X, y, val


def test_spec_is_tuned_on_the_validation_part(split, data):
    X, y, (X_val, y_val) = data
    seen = []
    result = tune(
        get_model("logistic_regression"), X, y, validation=split, n_trials=4, random_state=0,
        trial_attrs=lambda est: seen.append(est) or {"n_classes": len(est.classes_)},
    )
    study = result.study
    assert len(study.trials) == 4 and all(t.state.name == "COMPLETE" for t in study.trials)
    values = [t.value for t in study.trials]
    assert result.best_score == max(values) == study.best_value
    assert set(result.best_params) == {"C"}
    # The best estimator is the best trial's own model, scored on the validation rows.
    assert result.best_estimator is seen[result.best_trial]
    assert score_estimator(result.best_estimator, X_val, y_val)["accuracy"] == result.best_score
    assert result.best_estimator.estimator_.C == result.best_params["C"]
    assert all(t.user_attrs["n_classes"] == 4 for t in study.trials)


def test_log_loss_is_minimised(data):
    X, y, val = data
    result = tune(get_model("logistic_regression"), X, y, validation=val, metric="log_loss",
                  n_trials=3, random_state=1)
    assert result.study.direction.name == "MINIMIZE"
    assert result.best_score == min(t.value for t in result.study.trials)


def test_estimator_instance_with_a_grid_mapping_and_cv(data):
    X, y, _ = data
    grid = {"estimator__C": [0.01, 1.0, 100.0]}
    result = tune(logistic_regression(), X, y, grid, cv=3, n_trials=3, random_state=0,
                  sampler=optuna.samplers.GridSampler({"estimator__C": grid["estimator__C"]}))
    assert sorted(t.params["estimator__C"] for t in result.study.trials) == grid["estimator__C"]
    assert result.best_estimator.estimator_.C == result.best_params["estimator__C"]  # refit on all X


def test_factory_with_optuna_distributions_and_fixed_params(data):
    X, y, val = data
    space = {"C": optuna.distributions.FloatDistribution(1e-2, 1e2, log=True),
             "fit_intercept": optuna.distributions.CategoricalDistribution([True, False])}
    result = tune(lambda **p: logistic_regression(**p), X, y, space, validation=val, n_trials=2,
                  params={"max_iter": 50}, random_state=0)
    assert result.best_estimator.estimator_.max_iter == 50
    assert set(result.best_params) == {"C", "fit_intercept"}


def test_a_parameter_both_fixed_and_searched_is_warned_about(data):
    # Was silent: params won over the suggestions, every trial fitted the same C, and
    # best_params reported a C that was never fitted.
    X, y, val = data
    space = {"estimator__C": [0.001, 100.0]}
    with pytest.warns(UserWarning, match=r"params \['estimator__C'\] are in the search space too") as caught:
        result = tune(logistic_regression(), X, y, space, validation=val,
                      params={"estimator__C": 1.0}, n_trials=2, random_state=0)
    assert len([w for w in caught if "search space too" in str(w.message)]) == 1
    assert caught[0].filename == __file__  # the user's call, not tabmoe's internals
    assert result.best_estimator.estimator_.C == 1.0
    with warnings.catch_warnings():  # apart, as before, unwarned
        warnings.filterwarnings("error", message=".*search space too")
        tune(logistic_regression(), X, y, space, validation=val,
             params={"estimator__max_iter": 200}, n_trials=1, random_state=0)


def test_failing_trials_do_not_stop_the_study(data):
    X, y, val = data

    def factory(C):
        if C > 1:
            raise ValueError("C too large for this test")
        return logistic_regression(C=C)

    sampler = optuna.samplers.GridSampler({"C": [0.1, 10.0, 1.0]})
    result = tune(factory, X, y, {"C": [0.1, 10.0, 1.0]}, validation=val, n_trials=3, sampler=sampler)
    states = sorted(t.state.name for t in result.study.trials)
    assert states == ["COMPLETE", "COMPLETE", "FAIL"]
    with pytest.raises(RuntimeError, match="no trial of study .* completed; last failure: .*C too large"):
        tune(factory, X, y, {"C": [10.0]}, validation=val, n_trials=1)


def test_a_study_whose_trials_were_all_pruned_says_so():
    """A search space raising optuna.TrialPruned (Optuna's way to skip a configuration) in
    every trial ended in "no trial ... completed; last failure: no trial ran"."""
    X, y = _small_table()

    def space(trial):
        trial.suggest_float("C", 0.1, 1.0)
        raise optuna.TrialPruned("an invalid combination")

    with pytest.raises(RuntimeError, match=r"no trial of study .* completed; 2 trial\(s\) pruned"):
        tune(LogisticRegression(), X, y, space, cv=2, n_trials=2)


def test_stored_study_resumes_to_the_total_budget(tmp_path, data):
    X, y, val = data
    journal = tmp_path / "studies" / "optuna.journal"
    first = tune(get_model("logistic_regression"), X, y, validation=val, n_trials=2,
                 storage=journal, study_name="lr", random_state=0)
    assert len(first.study.trials) == 2
    again = tune(get_model("logistic_regression"), X, y, validation=val, n_trials=5,
                 storage=journal, study_name="lr", random_state=0)
    assert [t.number for t in again.study.trials] == [0, 1, 2, 3, 4]
    # The continued study proposes new configurations, not its first ones again.
    assert len({t.params["C"] for t in again.study.trials}) == 5
    done = tune(get_model("logistic_regression"), X, y, validation=val, n_trials=5,
                storage=str(journal), study_name="lr", random_state=0)
    assert len(done.study.trials) == 5  # budget spent: no new trial, best refit
    assert done.best_estimator is not None and done.best_trial == again.best_trial
    sqlite = tune(get_model("logistic_regression"), X, y, validation=val, n_trials=1,
                  storage=f"sqlite:///{tmp_path / 'o.db'}", study_name="lr")
    assert isinstance(open_storage(f"sqlite:///{tmp_path / 'o.db'}"), optuna.storages.RDBStorage)
    assert len(sqlite.study.trials) == 1


def test_resumed_study_samples_anew_and_reproducibly(tmp_path, data):
    X, y, val = data
    spec = get_model("logistic_regression")

    def two_calls(journal):
        tune(spec, X, y, validation=val, n_trials=3, storage=journal, study_name="s", random_state=0)
        return [t.params["C"] for t in tune(spec, X, y, validation=val, n_trials=6, storage=journal,
                                            study_name="s", random_state=0).study.trials]

    resumed = two_calls(tmp_path / "a.journal")
    assert resumed[3:] != resumed[:3] and len(set(resumed)) == 6
    assert two_calls(tmp_path / "b.journal") == resumed  # the same calls, the same trials
    # A fresh study seeded alike starts where the first call did.
    fresh = tune(spec, X, y, validation=val, n_trials=3, random_state=0)
    assert [t.params["C"] for t in fresh.study.trials] == resumed[:3]


def test_best_params_of_an_earlier_call_are_the_original_objects(tmp_path, data):
    X, y, val = data
    weights = {"acc": 1, "unacc": 5}  # keyed by labels (EncodedClassifier re-keys them by code)
    space = {"estimator__class_weight": [weights], "estimator__C": [0.5]}
    journal = tmp_path / "optuna.journal"
    first = tune(logistic_regression(), X, y, space, validation=val, n_trials=1, storage=journal, study_name="w")
    again = tune(logistic_regression(), X, y, space, validation=val, n_trials=1, storage=journal, study_name="w")
    assert len(again.study.trials) == 1  # nothing ran: the best is an earlier call's, refit here
    assert again.best_params == first.best_params == {"estimator__class_weight": weights, "estimator__C": 0.5}
    assert again.best_estimator.get_params()["estimator__class_weight"] == weights
    bare = tune(logistic_regression(), X, y, space, validation=val, n_trials=1, storage=journal, study_name="w",
                refit=False)
    assert bare.best_estimator is None and bare.best_params["estimator__class_weight"] == weights
    # A study continued with another space cannot name its best trial's parameters.
    with pytest.raises(ValueError, match=r"cannot rebuild .* it suggests no \['estimator__class_weight'\]"):
        tune(logistic_regression(), X, y, {"estimator__C": [0.5]}, validation=val, n_trials=1,
             storage=journal, study_name="w")
    with pytest.raises(ValueError, match="cannot rebuild .* 'estimator__tol' is not found"):
        tune(logistic_regression(), X, y, {**space, "estimator__tol": [1e-3]}, validation=val, n_trials=1,
             storage=journal, study_name="w")


def test_integer_likes_random_states_and_splitters_are_accepted(data):
    X, y, val = data
    spec = get_model("logistic_regression")
    result = tune(spec, X, y, validation=val, n_trials=np.int64(2), timeout=np.float64(600.0),
                  random_state=np.int64(3))
    assert len(result.study.trials) == 2
    runs = [tune(spec, X, y, validation=val, n_trials=2, random_state=np.random.RandomState(0)) for _ in range(2)]
    assert [t.params for t in runs[0].study.trials] == [t.params for t in runs[1].study.trials]
    assert runs[0].best_estimator.estimator_.random_state == runs[1].best_estimator.estimator_.random_state
    split = tune(spec, X, y, cv=KFold(3, shuffle=True, random_state=0), n_trials=2, random_state=0)
    assert split.best_estimator is not None
    assert tune(spec, X, y, cv=np.int64(2), n_trials=1, random_state=0).best_estimator is not None


def test_enqueued_parameter_sets_run_first_once_and_within_the_budget(tmp_path, data):
    X, y, val = data
    spec, journal = get_model("logistic_regression"), tmp_path / "optuna.journal"
    first = tune(spec, X, y, validation=val, n_trials=3, random_state=0, storage=journal,
                 study_name="q", enqueue=[{"C": 123.0}, {"C": 0.0042}])
    assert [t.params["C"] for t in first.study.trials][:2] == [123.0, 0.0042]
    assert len(first.study.trials) == 3
    again = tune(spec, X, y, validation=val, n_trials=4, random_state=0, storage=journal,
                 study_name="q", enqueue=[{"C": 123.0}])  # held already: not run twice
    assert [t.params["C"] for t in again.study.trials].count(123.0) == 1
    assert len(again.study.trials) == 4
    small = tune(spec, X, y, validation=val, n_trials=1, enqueue=[{"C": 1.0}, {"C": 2.0}])
    assert [(t.params["C"], t.state.name) for t in small.study.trials] == [(1.0, "COMPLETE")]
    # A queue as long as the budget runs in full (queued trials are not spent budget) ...
    full = tune(spec, X, y, validation=val, n_trials=2, enqueue=[{"C": 1.0}, {"C": np.float32(2.0)}])
    assert [(t.params["C"], t.state.name) for t in full.study.trials] == [(1.0, "COMPLETE"), (2.0, "COMPLETE")]
    # ... and sets the study holds are skipped before the budget is counted.
    more = tune(spec, X, y, validation=val, n_trials=6, random_state=0, storage=journal, study_name="q",
                enqueue=[{"C": 123.0}, {"C": 0.0042}, {"C": np.float64(7.0)}, {"C": 8.0}, {"C": 9.0}])
    assert [t.params["C"] for t in more.study.trials][4:] == [7.0, 8.0]
    assert {t.state.name for t in more.study.trials} == {"COMPLETE"}
    typo = tune(spec, X, y, validation=val, n_trials=2, enqueue=[{"c": 1.0}])
    assert [t.state.name for t in typo.study.trials] == ["FAIL", "COMPLETE"]
    assert "enqueued parameter(s) ['c'] are not in the search space" in typo.study.trials[0].user_attrs["error"]
    with pytest.raises(ValueError, match=r"enqueue\[1\] must be a mapping"):
        tune(spec, X, y, validation=val, n_trials=1, enqueue=[{"C": 1.0}, 5])


def test_timeout_alone_is_a_budget(data):
    X, y, val = data
    result = tune(get_model("logistic_regression"), X, y, validation=val, n_trials=None, timeout=0.01)
    assert len(result.study.trials) >= 1


def test_a_spec_is_tuned_from_the_model_as_a_user_constructs_it(data):
    """tabmoe's paper defaults are the paper's schedule (no early stopping, 128/L-row batches);
    tune searches from TabularMoEClassifier()'s defaults instead."""
    X, y, val = data
    result = tune(get_model("tabmoe"), X, y, validation=val, n_trials=1, params={"max_epochs": 1},
                  random_state=0, enqueue=[{"d_model": 32, "n_layers": 1}])
    params = result.best_estimator.get_params()
    defaults = TabularMoEClassifier().get_params()
    assert params["d_model"] == 32 and params["max_epochs"] == 1
    for name in ("early_stopping", "batch_size", "validation_fraction", "n_iter_no_change"):
        assert params[name] == defaults[name], name


def test_random_states_are_set_everywhere():
    est = set_random_states(logistic_regression(), 7)
    assert est.get_params()["estimator__random_state"] == 7
    clf = set_random_states(get_model("tabmoe").make(), 3)
    assert clf.random_state == 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"metric": "f1"}, "metric='f1' is not one of"),
        ({"n_trials": None}, "give n_trials, timeout or both"),
        ({"n_trials": 0}, "n_trials must be a positive integer"),
        ({"cv": 3}, "exactly one of validation"),
        ({"validation": None}, "exactly one of validation"),
        ({"validation": "val"}, r"validation must be \(X_val, y_val\)"),
        ({"timeout": -1}, "timeout must be positive"),
    ],
)
def test_bad_input_is_named(data, kwargs, message):
    X, y, val = data
    args = {"validation": val, "n_trials": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        tune(get_model("logistic_regression"), X, y, **args)


def _frame(val, columns):
    return val[0][columns], val[1]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"n_trials": 2.0}, TypeError, "n_trials must be a positive integer"),
        ({"n_trials": True}, TypeError, "n_trials must be a positive integer"),
        ({"timeout": "10"}, TypeError, "timeout must be positive seconds"),
        ({"timeout": float("nan")}, ValueError, "timeout must be positive seconds"),
        ({"random_state": -1}, ValueError, r"random_state must be in \[0, 2\*\*32 - 1\]"),
        ({"random_state": 2**32}, ValueError, r"random_state must be in \[0, 2\*\*32 - 1\]"),
        ({"random_state": "0"}, TypeError, "random_state must be None, an integer or a numpy.random.RandomState"),
        ({"sampler": "tpe"}, TypeError, "sampler must be an optuna.samplers.BaseSampler"),
        ({"validation": None, "cv": 1}, ValueError, "cv must be an integer >= 2"),
        ({"validation": None, "cv": True}, TypeError, "cv must be an integer >= 2"),
        ({"validation": None, "cv": "3"}, TypeError, "cv must be an integer >= 2"),
        ({"validation": None, "cv": 10_000}, ValueError, r"cv=10000 cannot split \(X, y\)"),
        ("short y_val", ValueError, "validation's X_val and y_val must have the same number of rows, got 68 and 67"),
        ("reordered", ValueError, "validation's X_val must have the columns of X in the same order: in another order"),
        ("dropped", ValueError, r"validation's X_val must have the columns of X .*: missing \['\w+'\], unexpected \[\]"),
        ("short y", ValueError, "X and y must have the same number of rows"),
        ("narrow array", ValueError, r"validation's X_val must have as many columns as X, got (\d+) and (?!\1)\d+"),
        ({"validation": (5, [1])}, TypeError, "validation's X_val must be array-like"),
    ],
)
def test_bad_arguments_are_named_before_the_study_starts(tmp_path, data, kwargs, error, message):
    X, y, val = data
    if kwargs == "short y_val":
        kwargs = {"validation": (val[0], val[1].iloc[:-1])}
    elif kwargs == "reordered":
        kwargs = {"validation": _frame(val, list(val[0].columns[::-1]))}
    elif kwargs == "dropped":
        kwargs = {"validation": _frame(val, list(val[0].columns[1:]))}
    elif kwargs == "narrow array":  # every trial would fit, then fail to predict
        kwargs = {"validation": (val[0].to_numpy()[:, 1:], val[1])}
    elif kwargs == "short y":
        kwargs, y = {}, y.iloc[:-1]
    journal = tmp_path / "optuna.journal"
    args = {"validation": val, "n_trials": 1, "storage": journal, "study_name": "bad", **kwargs}
    with pytest.raises(error, match=message):
        tune(get_model("logistic_regression"), X, y, **args)
    assert not journal.exists()  # no study, so no trial of its budget spent


def test_pyarrow_tables_are_tuned_as_their_frames(data):
    # validation's check compared the Tables' columns (their data, unhashable): TypeError
    # "unhashable type: 'pyarrow.lib.ChunkedArray'"; cv folds were object arrays, unnamed
    pa = pytest.importorskip("pyarrow")  # extra "data"; CI installs it
    X, y, (X_val, y_val) = data
    table, table_val = (pa.Table.from_pandas(f, preserve_index=False) for f in (X, X_val))
    args = {"search_space": {"estimator__C": [0.5]}, "n_trials": 1, "random_state": 0}
    for given, frames in (({"validation": (table_val, y_val)}, {"validation": (X_val, y_val)}), ({"cv": 2}, {"cv": 2})):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # no "X has feature names, but ..."
            tuned = tune(logistic_regression(), table, y, **given, **args)
        assert tuned.best_score == tune(logistic_regression(), X, y, **frames, **args).best_score
    reordered = table_val.select(table_val.column_names[::-1])
    with pytest.raises(ValueError, match="validation's X_val must have the columns of X in the same order: in another order"):
        tune(logistic_regression(), table, y, validation=(reordered, y_val), **args)


def test_polars_frames_are_tuned_as_their_pandas_frames(data):
    # cv folds of a polars frame were np.asarray of it (unnamed objects), the refit a frame
    pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
    pytest.importorskip("pyarrow")  # polars frames are read through pyarrow (extra "data")
    X, y, (X_val, y_val) = data
    args = {"search_space": {"estimator__C": [0.5]}, "n_trials": 1, "random_state": 0}
    for given in ({"validation": (pl.from_pandas(X_val), y_val)}, {"cv": 2}):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # no "X has feature names, but ..."
            tuned = tune(logistic_regression(), pl.from_pandas(X), y, **given, **args)
        frames = {"validation": (X_val, y_val)} if "validation" in given else given
        assert tuned.best_score == tune(logistic_regression(), X, y, **frames, **args).best_score


def test_bad_search_spaces_are_named(data):
    X, y, val = data
    with pytest.raises(ValueError, match="search_space is required"):
        tune(LogisticRegression(), X, y, validation=val)
    with pytest.raises(ValueError, match="entry 'C': expected a non-empty list"):
        tune(LogisticRegression(), X, y, {"C": []}, validation=val, n_trials=1)
    empty = (val[0].iloc[:0], val[1].iloc[:0])
    with pytest.raises(ValueError, match="validation has no rows"):
        tune(get_model("logistic_regression"), X, y, validation=empty)
    assert np.isfinite(tune(get_model("logistic_regression"), X, y, validation=val, n_trials=1).best_score)


@pytest.mark.parametrize(
    "model, space, params, message",
    [
        (LogisticRegression(), {"Cc": [1.0]}, None, r"LogisticRegression has no parameter\(s\) \['Cc'\] \(in the search space\)"),
        (LogisticRegression(), {"C": [1.0]}, {"max_iters": 50}, r"no parameter\(s\) \['max_iters'\] \(in params\)"),
        (Pipeline([("clf", LogisticRegression())]), {"clf__c": [1.0]}, None, r"\['clf__c'\]"),
        ("tabmoe", {"dmodel": optuna.distributions.IntDistribution(8, 16)}, None, r"TabularMoEClassifier has no parameter\(s\) \['dmodel'\]"),
        ("tabmoe", None, {"max_epoch": 2}, r"no parameter\(s\) \['max_epoch'\] \(in params\)"),
        (lambda C=1.0: LogisticRegression(C=C), {"c": [1.0]}, None, r"has no parameter\(s\) \['c'\]"),
        # registry specs whose builders take **kwargs: XGBoost ignored "max_dept" (the trial fit
        # its default depth), the scikit-learn references failed every trial
        ("xgboost", None, {"max_dept": 3}, r"xgboost has no parameter\(s\) \['max_dept'\] \(in params\)"),
        ("random_forest", {"max_dept": [2, 3]}, None, r"random_forest has no parameter\(s\) \['max_dept'\] \(in the search space\)"),
        # a suggest(trial) function's names (those of one suggestion): only a mapping's were
        # checked, and every trial failed on the name, spending the stored study's budget
        (LogisticRegression(), lambda t: {"Cc": t.suggest_float("Cc", 0.1, 10.0, log=True)}, None,
         r"LogisticRegression has no parameter\(s\) \['Cc'\] \(in the search space\)"),
        ("random_forest", lambda t: {"max_dept": t.suggest_int("max_dept", 2, 3)}, None,
         r"random_forest has no parameter\(s\) \['max_dept'\] \(in the search space\)"),
    ],
)
def test_misspelt_parameter_names_are_named_before_the_study_starts(tmp_path, data, model, space, params, message):
    """A name the model does not take failed every trial and stored the failures, so that the
    corrected call found the budget spent (a first-hour review)."""
    X, y, val = data
    journal = tmp_path / "optuna.journal"
    model = get_model(model) if isinstance(model, str) else model
    with pytest.raises(ValueError, match=message):
        tune(model, X, y, space, validation=val, n_trials=2, params=params, storage=journal, study_name="typo")
    assert not journal.exists()


def test_parameter_objects_are_copied_for_every_trial():
    rng = np.random.RandomState(0)
    X, X_val = rng.normal(size=(100, 3)), rng.normal(size=(50, 3))
    y, y_val = (X[:, 0] + rng.normal(scale=0.5, size=100) > 0).astype(int), (X_val[:, 0] > 0).astype(int)
    inner = LogisticRegression()
    result = tune(Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())]), X, y, {"clf__C": [1.0, 1e-4]},
                  validation=(X_val, y_val), metric="log_loss", n_trials=2, params={"clf": inner},
                  enqueue=[{"clf__C": 1.0}, {"clf__C": 1e-4}])
    assert result.best_trial == 0 and result.best_params == {"clf__C": 1.0}
    # The best trial's model kept its own classifier: the second trial did not refit it.
    assert result.best_estimator.get_params()["clf__C"] == 1.0
    assert score_estimator(result.best_estimator, X_val, y_val)["log_loss"] == result.best_score
    assert inner.C == 1.0 and not hasattr(inner, "coef_")  # the caller's object is never fitted


def test_a_stored_study_is_continued_only_with_its_metric(tmp_path, data):
    X, y, val = data
    spec, journal = get_model("logistic_regression"), tmp_path / "optuna.journal"
    first = tune(spec, X, y, validation=val, n_trials=1, storage=journal, study_name="s", random_state=0)
    assert first.study.user_attrs["metric"] == "accuracy"
    for metric in ("log_loss", "balanced_accuracy"):  # log losses were maximised as accuracies
        with pytest.raises(ValueError, match=f"study 's' was tuned with metric='accuracy', not metric='{metric}'"):
            tune(spec, X, y, validation=val, metric=metric, n_trials=2, storage=journal, study_name="s")
    assert len(tune(spec, X, y, validation=val, n_trials=2, storage=journal, study_name="s").study.trials) == 2
    storage = open_storage(journal)
    optuna.create_study(storage=storage, study_name="own", direction="minimize")
    with pytest.raises(ValueError, match=r"study 'own' was tuned with direction \['MINIMIZE'\], not metric='accuracy'"):
        tune(spec, X, y, validation=val, n_trials=1, storage=storage, study_name="own")
    assert tune(spec, X, y, validation=val, metric="log_loss", n_trials=1, storage=storage,
                study_name="own").study.user_attrs["metric"] == "log_loss"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"cv": 2, "metric": "log_loss"},
         r"metric='log_loss' is undefined on the test rows of fold \d of cv=2: label\(s\) \['rare'\] not in its"),
        ({"validation": (np.zeros((3, 2)), ["a", "b", "new"]), "metric": "log_loss"},
         r"metric='log_loss' is undefined on validation's y_val: label\(s\) \['new'\] not in y"),
        ({"validation": (np.zeros((3, 2)), ["a", "a", "new"]), "metric": "roc_auc"},
         "metric='roc_auc' is undefined on validation's y_val: fewer than two labels of y"),
        # labels a model's classes cannot be compared with: every trial's scoring raised alike
        ({"validation": (np.zeros((3, 2)), [0, 1, 1])},
         r"validation's y_val cannot be scored against the labels of y: Mix of label input types \(string and number\)"),
        ({"validation": (np.zeros((3, 2)), np.array([0, 1, 1], dtype=np.int8)), "metric": "balanced_accuracy"},
         r"validation's y_val cannot be scored against the labels of y: Mix of label input types"),
    ],
)
def test_a_metric_undefined_on_the_scored_rows_is_named_before_the_study_starts(tmp_path, kwargs, message):
    X, y = np.random.RandomState(0).normal(size=(21, 2)), np.array(["a", "b"] * 10 + ["rare"])
    journal = tmp_path / "optuna.journal"
    with pytest.raises(ValueError, match=message):  # every trial would fail (cv: a TypeError)
        tune(LogisticRegression(), X, y, {"C": [1.0]}, n_trials=2, storage=journal, study_name="m", **kwargs)
    assert not journal.exists()


LABELS = np.array(["a", "b"] * 10 + ["a"], dtype=object)


@pytest.mark.parametrize(
    ("model", "y", "y_val", "message"),
    [
        # missing labels: every fit refuses them (a cv split sorting them: a TypeError)
        (LogisticRegression(), np.where(np.arange(21) == 3, None, LABELS), None,
         r"y contains 1 missing label\(s\) \(NaN, None or NA\), e.g. at position\(s\) \[3\]"),
        (LogisticRegression(), LABELS, np.where(np.arange(21) == 5, None, LABELS),
         r"validation's y_val contains 1 missing label\(s\) .* \[5\]"),
        (LogisticRegression(), LABELS == "a", np.where(np.arange(21) == 2, np.nan, 1.0),
         r"validation's y_val contains 1 missing label\(s\) .* \[2\]"),
        (LogisticRegression(), np.c_[LABELS, LABELS], None, r"y must be 1-d or one column, got .* \(21, 2\)"),
        (LogisticRegression(), LABELS, np.c_[LABELS, LABELS], r"validation's y_val must be 1-d or one column"),
        # a registry model refuses regression targets and a single class in fit, as they all do
        (get_model("logistic_regression"), np.linspace(0, 1, 21), None, "Unknown label type: continuous"),
        (get_model("logistic_regression"), np.ones(21), None, r"only one class is present: y holds only \[1.0\]"),
    ],
)
@pytest.mark.parametrize("scoring", ["validation", "cv"])
def test_labels_every_trial_would_fail_on_are_refused_before_the_study_starts(tmp_path, model, y, y_val, message, scoring):
    """They failed every trial alike (each logged with its traceback, a stored study's
    budget spent on failures), then "no trial ... completed"; y_val with a None label and
    metric="accuracy" was a TypeError of sorting after a trial's fit, y with one under
    cv=3 another (StratifiedKFold's)."""
    X = pd.DataFrame({"c": np.random.RandomState(0).choice(["x", "y"], 21)})
    if scoring == "cv" and y_val is not None:  # cv scores folds of y: a y_val fault has no cv case
        y, message = y_val, message.replace("validation's y_val", "y")
    kwargs = {"cv": 3} if scoring == "cv" else {"validation": (X, LABELS if y_val is None else y_val)}
    journal = tmp_path / "optuna.journal"
    with pytest.raises(ValueError, match=message):
        tune(model, X, y, {"C": [1.0]}, n_trials=3, storage=journal, study_name="m", **kwargs)
    assert not journal.exists()


def test_choices_may_be_arrays_ranges_and_numpy_scalars(data):
    X, y, val = data
    space = {"estimator__C": np.logspace(-1, 1, 3), "estimator__max_iter": list(np.arange(50, 70, 10)),
             "estimator__tol": range(1, 2)}
    result = tune(logistic_regression(), X, y, space, validation=val, n_trials=2, random_state=0,
                  enqueue=[{"estimator__C": 10.0, "estimator__max_iter": 60, "estimator__tol": 1}])
    first = result.study.trials[0]
    assert first.state.name == "COMPLETE"  # the queued plain values are among the choices
    assert first.params == {"estimator__C": 10.0, "estimator__max_iter": 60, "estimator__tol": 1}
    assert {type(v) for t in result.study.trials for v in t.params.values()} <= {int, float}


def test_choices_equal_to_another_of_another_type_are_each_tried_and_rebuilt():
    """Of the choices 1 and 1.0 (max_features: one feature, or all) every trial fitted 1:
    Optuna returned 1.0, and tune looked it up by == among the choices."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.RandomState(0)
    X = rng.normal(size=(90, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    seen = []

    def tree(**params):
        seen.append(params["max_features"])
        return DecisionTreeClassifier(**params)

    result = tune(tree, X, y, {"max_features": [1, 1.0]}, cv=2, n_trials=8, random_state=0)
    assert {type(v) for v in seen} == {int, float}
    best = result.study.best_trial.user_attrs["params"]["max_features"]  # what the best trial fitted
    assert type(result.best_params["max_features"]) is type(best)  # the refit's too
    assert type(result.best_estimator.max_features) is type(best)


# the column vector is the input under test; scikit-learn's fit warns about it by design
@pytest.mark.filterwarnings("ignore:A column-vector y was passed")
def test_one_column_labels_are_scored_as_their_column():
    rng = np.random.RandomState(0)
    X, X_val = rng.normal(size=(60, 3)), rng.normal(size=(40, 3))
    y, y_val = (X[:, 0] > 0).astype(int), (X_val[:, 0] > 0).astype(int)
    for metric in ("accuracy", "log_loss"):
        args = {"metric": metric, "n_trials": 1, "random_state": 0}
        as_column = tune(LogisticRegression(), X, y, {"C": [1.0]}, validation=(X_val, pd.DataFrame({"t": y_val})), **args)
        assert as_column.best_score == tune(LogisticRegression(), X, y, {"C": [1.0]}, validation=(X_val, y_val),
                                            **args).best_score  # accuracy was 0.515 for 0.975 (n x n pairs)
        folds = tune(LogisticRegression(), X, y[:, None], {"C": [1.0]}, cv=2, **args)
        assert folds.best_score == tune(LogisticRegression(), X, y, {"C": [1.0]}, cv=2, **args).best_score


def test_a_failing_trial_attrs_recorder_does_not_change_the_selection(data):
    """The harness records OOD scores with trial_attrs: a recorder that raised failed its
    trial, so what the OOD rows did decided which trial could be best."""
    X, y, val = data
    spec, queue = get_model("logistic_regression"), [{"C": 1e-3}, {"C": 1.0}]
    plain = tune(spec, X, y, validation=val, n_trials=2, enqueue=queue)
    assert plain.best_params == {"C": 1.0} and plain.study.trials[0].value < plain.study.trials[1].value

    def attrs(estimator):
        if estimator.get_params()["estimator__C"] == 1.0:
            raise ValueError("cannot predict the OOD rows")
        return {"ood": 1.0}

    with pytest.warns(RuntimeWarning, match="trial 1: trial_attrs raised ValueError: cannot predict the OOD rows"):
        recorded = tune(spec, X, y, validation=val, n_trials=2, enqueue=queue, trial_attrs=attrs)
    assert [t.value for t in recorded.study.trials] == [t.value for t in plain.study.trials]
    assert recorded.best_trial == plain.best_trial and recorded.best_params == plain.best_params
    first, second = recorded.study.trials
    assert first.user_attrs["ood"] == 1.0 and "ood" not in second.user_attrs
    assert second.state.name == "COMPLETE" and "cannot predict" in second.user_attrs["trial_attrs_error"]


def test_a_model_whose_optional_package_is_missing_is_named_before_the_study_starts(tmp_path, data, monkeypatch):
    """Its first trial failed on the import and stopped the study, a failed trial stored in its budget."""
    X, y, val = data
    monkeypatch.setitem(sys.modules, "xgboost", None)  # as if not installed
    journal = tmp_path / "optuna.journal"
    with pytest.raises(ImportError, match=r"model 'xgboost' needs the optional package\(s\) \['xgboost'\], not installed"):
        tune(get_model("xgboost"), X, y, validation=val, n_trials=2, storage=journal, study_name="x")
    assert not journal.exists()


def test_tune_without_optuna_names_the_extra(data, monkeypatch):
    """It failed with Python's bare "No module named 'optuna'", naming no extra."""
    X, y, val = data
    monkeypatch.setitem(sys.modules, "optuna", None)  # as if not installed
    with pytest.raises(ImportError, match=r"tune needs the optional package 'optuna': install the extra 'tuning'"):
        tune(LogisticRegression(), X, y, {"C": [0.1, 1.0]}, validation=val, n_trials=1)


@pytest.mark.parametrize("storage", [None, "optuna.journal", "sqlite:///optuna.db"])
def test_open_storage_without_optuna_names_the_extra(storage, tmp_path, monkeypatch):
    """open_storage (public, and where a tuned tabmoe-bench run starts) failed with Python's
    bare "No module named 'optuna'", naming no extra."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "optuna", None)  # as if not installed
    with pytest.raises(ImportError, match=r"open_storage needs the optional package 'optuna': install the extra 'tuning'"):
        open_storage(storage)


def test_a_postgresql_url_without_a_driver_names_both_and_the_extra(monkeypatch):
    """A bare postgresql:// URL without psycopg 3 nor psycopg2 failed inside SQLAlchemy with
    "No module named 'psycopg2'" (or 'psycopg'), naming neither the other driver nor the extra."""
    from tabmoe._optional import MissingExtraError
    from tabmoe.tuning import database_url

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    if importlib.util.find_spec("psycopg2") is not None:
        assert database_url("postgresql://user@host/db") == "postgresql+psycopg2://user@host/db"
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    with pytest.raises(MissingExtraError, match=r"needs a PostgreSQL driver, psycopg2 or psycopg: install the extra 'bench'"):
        database_url("postgresql://user@host/db")
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_a_postgresql_url_with_only_psycopg_3_is_pinned_to_it(monkeypatch):
    """SQLAlchemy 1.4 / 2.0 read a bare postgresql:// as psycopg2: with only psycopg 3
    installed it failed on "No module named 'psycopg2'"."""
    from tabmoe.tuning import database_url

    real = importlib.util.find_spec

    def only_psycopg3(name, *args, **kwargs):
        if name == "psycopg":
            return importlib.machinery.ModuleSpec("psycopg", None)
        if name == "psycopg2":
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", only_psycopg3)
    assert database_url("postgresql://user@host/db") == "postgresql+psycopg://user@host/db"
    assert database_url("postgresql+psycopg2://user@host/db") == "postgresql+psycopg2://user@host/db"


def test_a_stored_study_is_continued_only_with_its_model(tmp_path):
    """Another model's trials were added to the study, and its best trial (the first model's)
    was refit with the second model and returned with the first model's score."""
    rng = np.random.RandomState(0)
    X, X_val = rng.normal(size=(80, 3)), rng.normal(size=(40, 3))
    y, y_val = (X[:, 0] > 0).astype(int), (X_val[:, 0] > 0).astype(int)
    args = {"validation": (X_val, y_val), "storage": tmp_path / "optuna.journal", "study_name": "s"}
    first = tune(LogisticRegression(), X, y, {"C": [0.01, 1.0]}, n_trials=2, random_state=0, **args)
    assert first.study.user_attrs["model"] == "LogisticRegression"
    with pytest.raises(ValueError, match="study 's' was tuned for model 'LogisticRegression', not 'Pipeline'"):
        tune(Pipeline([("clf", LogisticRegression())]), X, y, {"clf__C": [0.01, 1.0]}, n_trials=3, **args)
    with pytest.raises(ValueError, match="tuned for model 'LogisticRegression', not 'tabmoe.registry:logistic_regression'"):
        tune(get_model("logistic_regression"), X, y, n_trials=3, **args)
    assert len(first.study.trials) == 2  # nothing ran
    again = tune(LogisticRegression(), X, y, {"C": [0.01, 1.0]}, n_trials=3, random_state=0, **args)
    assert len(again.study.trials) == 3 and isinstance(again.best_estimator, LogisticRegression)


def test_a_stored_study_is_continued_only_with_a_space_its_trials_can_share(tmp_path):
    """Optuna refuses, in each trial, a parameter suggested with another distribution kind or
    list of choices than the study's trials had: every trial of the continued study failed."""
    rng = np.random.RandomState(0)
    X, X_val = rng.normal(size=(80, 3)), rng.normal(size=(40, 3))
    y, y_val = (X[:, 0] > 0).astype(int), (X_val[:, 0] > 0).astype(int)
    args = {"validation": (X_val, y_val), "storage": tmp_path / "optuna.journal", "study_name": "s"}
    first = tune(LogisticRegression(), X, y, {"C": [0.01, 1.0]}, n_trials=2, random_state=0, **args)
    for space in ({"C": [0.01, 1.0, 10.0]}, {"C": optuna.distributions.FloatDistribution(0.01, 10.0)},
                  lambda trial: {"C": trial.suggest_float("C", 0.01, 10.0, log=True)}):
        with pytest.raises(ValueError, match=r"study 's' holds trials whose search space gives 'C' as "
                                             r"CategoricalDistribution\(choices=\(0.01, 1.0\)\), not "):
            tune(LogisticRegression(), X, y, space, n_trials=4, **args)
    assert len(first.study.trials) == 2  # nothing ran
    ranges = tmp_path / "ranges.journal"  # a float range may grow, as Optuna allows
    tune(LogisticRegression(), X, y, {"C": optuna.distributions.FloatDistribution(0.1, 1.0)},
         validation=(X_val, y_val), n_trials=1, storage=ranges, study_name="r", random_state=0)
    wider = tune(LogisticRegression(), X, y, {"C": optuna.distributions.FloatDistribution(0.01, 10.0)},
                 validation=(X_val, y_val), n_trials=2, storage=ranges, study_name="r", random_state=0)
    assert [t.state.name for t in wider.study.trials] == ["COMPLETE", "COMPLETE"]


def test_a_stored_study_whose_best_trial_the_space_cannot_rebuild_is_refused_before_any_trial(tmp_path):
    """A parameter added to (or dropped from) the space of a stored study: every trial of the
    call ran, then tune raised on rebuilding the study's best trial, an earlier one."""
    rng = np.random.RandomState(0)
    X, X_val = rng.normal(size=(120, 3)), rng.normal(size=(40, 3))
    y, y_val = (X[:, 0] + rng.normal(size=120) > 0).astype(int), (X_val[:, 0] > 0).astype(int)
    args = {"validation": (X_val, y_val), "storage": tmp_path / "optuna.journal", "study_name": "s"}
    first = tune(LogisticRegression(), X, y, {"C": [1.0]}, n_trials=1, random_state=0, **args)
    worse = {"C": [1.0], "class_weight": [{0: 1000, 1: 1}]}  # predicts 0 only: never the best
    for space in (worse, lambda trial: {"C": trial.suggest_categorical("C", [1.0]), "class_weight": {0: 1000, 1: 1},
                                        "tol": trial.suggest_float("tol", 1e-4, 1e-3)}):
        with pytest.raises(ValueError, match=r"cannot rebuild the parameters \{'C': 1.0\} of the best trial 0 of "
                                             r"study 's'.*No trial ran"):
            tune(LogisticRegression(), X, y, space, n_trials=3, random_state=0, **args)
    assert len(first.study.trials) == 1  # nothing ran
    again = tune(LogisticRegression(), X, y, {"C": [1.0]}, n_trials=2, random_state=0, **args)
    assert again.best_params == {"C": 1.0} and len(again.study.trials) == 2


def _interrupting(after: int):
    """A trial_attrs recorder that raises KeyboardInterrupt (as Ctrl-C does) in trial ``after``."""
    calls = []

    def attrs(estimator):
        calls.append(estimator)
        if len(calls) == after + 1:
            raise KeyboardInterrupt
        return {}

    return attrs


def _small_table():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    return X, (X[:, 0] + rng.normal(scale=0.5, size=60) > 0).astype(int)


def test_an_interrupted_in_memory_study_is_carried_by_the_keyboard_interrupt():
    """With storage=None, Ctrl-C lost every completed trial: the study was internal to tune."""
    X, y = _small_table()
    space = {"C": [0.01, 0.1, 1.0, 10.0]}
    with pytest.warns(
        RuntimeWarning,
        match=r"interrupted with 2 completed trial\(s\) in study "
        r"'.*', kept in memory \(storage=None\).*exc\.study.*Give storage",
    ):
        with pytest.raises(KeyboardInterrupt) as info:
            tune(
                LogisticRegression(),
                X,
                y,
                space,
                validation=(X, y),
                n_trials=5,
                random_state=0,
                trial_attrs=_interrupting(after=2),
            )
    study = info.value.study
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE", "FAIL"]
    assert study.best_trial.number in (0, 1)
    # interrupted in the refit of the best (cv scores no model it keeps): the study is there too
    builds = []

    def factory(**params):
        builds.append(params)
        if len(builds) == 2 * 2 + 1:  # two trials of two folds, then the refit
            raise KeyboardInterrupt
        return LogisticRegression(**params)

    with pytest.warns(RuntimeWarning, match=r"interrupted with 2 completed trial\(s\)"):
        with pytest.raises(KeyboardInterrupt) as info:
            tune(factory, X, y, space, cv=2, n_trials=2, random_state=0)
    assert [t.state.name for t in info.value.study.trials] == ["COMPLETE", "COMPLETE"]


@pytest.mark.parametrize("stored", ["journal", "in_memory_storage"])
def test_an_interrupted_stored_study_keeps_its_trials_and_the_same_call_continues_it(
    tmp_path, stored
):
    X, y = _small_table()
    storage = (
        tmp_path / "optuna.journal" if stored == "journal" else optuna.storages.InMemoryStorage()
    )
    args = {
        "validation": (X, y),
        "n_trials": 5,
        "random_state": 0,
        "storage": storage,
        "study_name": "s",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no warning: the trials are stored
        with pytest.raises(KeyboardInterrupt) as info:
            tune(
                LogisticRegression(),
                X,
                y,
                {"C": [0.01, 0.1, 1.0, 10.0]},
                trial_attrs=_interrupting(after=2),
                **args,
            )
    assert [t.state.name for t in info.value.study.trials] == ["COMPLETE", "COMPLETE", "FAIL"]
    result = tune(LogisticRegression(), X, y, {"C": [0.01, 0.1, 1.0, 10.0]}, **args)
    states = [t.state.name for t in result.study.trials]
    assert states == ["COMPLETE", "COMPLETE", "FAIL", "COMPLETE", "COMPLETE"]


def test_the_interrupted_in_memory_warning_points_at_the_users_tune_call():
    """stacklevel=3 pointed it at tune's own line in tabmoe/tuning.py."""
    X, y = _small_table()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            tune(LogisticRegression(), X, y, {"C": [0.1, 1.0]}, validation=(X, y), n_trials=3,
                 random_state=0, trial_attrs=_interrupting(after=1))
    ours = [w for w in caught if "tune was interrupted" in str(w.message)]
    assert len(ours) == 1 and ours[0].filename == __file__


class _WeightRecorder(LogisticRegression):
    """LogisticRegression that records the sample_weight and extra argument of each fit."""

    seen: list = []

    def fit(self, X, y, sample_weight=None, note=None):
        _WeightRecorder.seen.append((len(X), None if sample_weight is None else np.asarray(sample_weight), note))
        return super().fit(X, y, sample_weight=sample_weight)


def test_fit_params_reach_every_fit_indexed_by_each_fold():
    """fit_params (sample_weight) reach the trials, each cv fold (a per-row value indexed by
    its training rows, another passed whole) and the refit; weights change the fit; a weight
    of another length and a non-mapping are refused before the study starts."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    y = np.where(X["a"] + 0.5 * rng.normal(size=60) > 0, "p", "q")
    w = np.arange(1.0, 61.0)
    folds = KFold(3, shuffle=True, random_state=0)
    _WeightRecorder.seen = []
    result = tune(_WeightRecorder(), X, y, {"C": [0.1, 1.0]}, cv=folds, n_trials=1, random_state=0,
                  fit_params={"sample_weight": w, "note": "whole"})
    seen = _WeightRecorder.seen
    assert len(seen) == 4  # three folds, then the refit
    for (train, _), (n, weight, note) in zip(folds.split(X), seen[:3], strict=True):
        assert n == len(train) and note == "whole"
        np.testing.assert_array_equal(weight, w[train])
    np.testing.assert_array_equal(seen[3][1], w)
    unweighted = LogisticRegression(C=result.best_params["C"]).fit(X, y)
    assert not np.allclose(result.best_estimator.coef_, unweighted.coef_)
    _WeightRecorder.seen = []
    tune(_WeightRecorder(), X, y, {"C": [1.0]}, validation=(X, y), n_trials=1, random_state=0,
         fit_params={"sample_weight": list(w)})
    np.testing.assert_array_equal(_WeightRecorder.seen[0][1], w)
    tune(_WeightRecorder(), X, y, {"C": [1.0]}, validation=(X, y), n_trials=1, fit_params={"sample_weight": 2.0})
    with pytest.raises(ValueError, match=r"sample_weight must have one entry per row of X \(60\), got shape \(59,\)"):
        tune(_WeightRecorder(), X, y, {"C": [1.0]}, validation=(X, y), n_trials=1, fit_params={"sample_weight": w[1:]})
    with pytest.raises(TypeError, match="fit_params must be a mapping"):
        tune(_WeightRecorder(), X, y, {"C": [1.0]}, validation=(X, y), n_trials=1, fit_params=[("sample_weight", w)])


def test_cv_fold_scores_are_weighted_by_sample_weight_as_grid_search_weights_them():
    """fit_params' sample_weight weighted the fold fits but not the fold scores, which the
    docstring said matched GridSearchCV's default; GridSearchCV (scikit-learn 1.7+) weights
    them by the test rows' weights: 0.7655 against its 0.7885 here. Now the same, for every
    metric (log loss too, against GridSearchCV's neg_log_loss)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.choice(["x", "y", "z"], 200)})
    y = pd.Series(np.where(X["a"] + rng.normal(size=200) > 0, "p", "q"))
    w = rng.uniform(0, 5, 200)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    for metric, scoring, sign in [("accuracy", None, 1), ("log_loss", "neg_log_loss", -1)]:
        grid = GridSearchCV(logistic_regression(), {"estimator__C": [1.0]}, cv=folds, scoring=scoring)
        expected = sign * grid.fit(X, y, sample_weight=w).cv_results_["mean_test_score"][0]
        result = tune(logistic_regression(), X, y, {"estimator__C": [1.0]}, cv=folds, metric=metric,
                      n_trials=1, fit_params={"sample_weight": w}, random_state=0, refit=False)
        assert result.best_score == pytest.approx(expected, rel=1e-12)


def test_sparse_rows_are_split_into_cv_folds_as_their_dense_rows():
    """A scipy sparse X with cv (as GridSearchCV takes it) raised an IndexError in the first
    trial: its folds were taken from np.asarray(X), a 0-d object array."""
    import scipy.sparse

    rng = np.random.RandomState(0)
    dense = rng.binomial(1, 0.3, size=(90, 5)).astype(float)
    y = (dense[:, 0] + rng.normal(scale=0.5, size=90) > 0.5).astype(int)
    args = {"search_space": {"C": [0.01, 0.1, 1.0]}, "cv": 3, "n_trials": 3, "random_state": 0}
    expected = tune(LogisticRegression(), dense, y, **args)
    for matrix in (scipy.sparse.csr_matrix, scipy.sparse.coo_matrix, scipy.sparse.csc_array):
        result = tune(LogisticRegression(), matrix(dense), y, **args)
        assert [t.value for t in result.study.trials] == pytest.approx([t.value for t in expected.study.trials])
        assert result.best_params == expected.best_params


def test_cv_as_given_train_test_positions_scores_as_the_splitter_that_made_them(data):
    """scikit-learn's searches take cv as an iterable of (train, test) positions (the way to
    pass groups: GroupKFold().split(X, y, groups)); tune refused it naming only ints and
    splitters."""
    from sklearn.model_selection import GroupKFold, KFold

    X, y, _ = data
    grid = {"estimator__C": [0.01, 1.0]}
    folds = list(KFold(3).split(X))

    def values(cv):
        result = tune(logistic_regression(), X, y, grid, cv=cv, n_trials=2, random_state=0,
                      sampler=optuna.samplers.GridSampler(grid, seed=0))
        return [t.value for t in result.study.trials]

    assert values(KFold(3)) == values(folds) == values(iter(folds))
    groups = np.arange(len(y)) % 4
    assert len(values(GroupKFold(4).split(X, y, groups))) == 2


@pytest.mark.parametrize(("cv", "message"), [
    ([], "cv gave no"),
    ([(np.arange(5),)], "cv fold 0 must be a \\(train, test\\) pair"),
    ([(np.arange(5), np.array([], dtype=int))], "cv fold 0 has no test rows"),
    ([(np.arange(5), np.array([10**6]))], "cv fold 0's test rows must be positions in \\[0, "),
    ([(np.ones(5, dtype=bool), np.arange(3))], "cv fold 0's train rows must be 1-d integer positions"),
])
def test_bad_given_folds_are_named(data, cv, message):
    X, y, _ = data
    with pytest.raises(ValueError, match=message):
        tune(logistic_regression(), X, y, {"estimator__C": [1.0]}, cv=cv, n_trials=1, random_state=0)


def test_given_folds_are_named_by_position_not_printed_whole():
    """A fold of given (train, test) positions on which the metric is undefined was named
    as "fold 0 of cv=[(array([0, 1, ...]), array([...]))...]": every fold's positions
    printed, 19,127 characters for three GroupKFold folds of 3,000 rows."""
    from sklearn.model_selection import GroupKFold

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(3000, 3)), np.r_[np.zeros(2000, int), np.ones(1000, int)]
    folds = GroupKFold(3).split(X, y, np.arange(3000) // 1000)
    with pytest.raises(ValueError, match=r"^metric='roc_auc' is undefined on the test rows of fold 0 of the cv "
                                         r"folds given: fewer than two labels of its training rows$"):
        tune(LogisticRegression(), X, y, {"C": [1.0]}, cv=folds, metric="roc_auc", n_trials=1)
    with pytest.raises(ValueError, match=r"fold 0 of cv=KFold\(n_splits=3"):  # a splitter: named as before
        tune(LogisticRegression(), X, y, {"C": [1.0]}, cv=KFold(3), metric="roc_auc", n_trials=1)


@pytest.mark.parametrize("model, params", [("catboost", {"depth": 2, "iterations": 5}),
                                           ("xgboost", {"max_depth": 2, "n_estimators": 5}),
                                           ("logistic_regression", {"C": 0.5})])
def test_a_registry_specs_parameters_pass_the_name_check(data, model, params):
    # the names are its model's, bare (C for estimator__C), and the constructor's own where
    # get_params lists only the parameters given (CatBoost: no "depth")
    if model != "logistic_regression":  # the gbdt extra's packages
        pytest.importorskip(model)
    X, y, val = data
    result = tune(get_model(model), X, y, {next(iter(params)): [next(iter(params.values()))]},
                  validation=val, n_trials=1, params=dict(list(params.items())[1:]))
    assert np.isfinite(result.best_score)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_registry_search_spaces_pass_the_name_check(name):
    """The registry's own suggest functions, whose names the check reads from one suggestion,
    name only their models' parameters (else every tuned run of the benchmark would fail)."""
    from tabmoe._tuning_checks import _check_parameter_names

    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name}: {spec.install_hint()}")
    _check_parameter_names(spec, spec.make_default, spec.suggest, {})
