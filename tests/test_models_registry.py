"""The model registry: every model buildable with its paper defaults, every space sampleable."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV

from tabmoe import TabularMoEClassifier, paper_config
from tabmoe.baselines import EncodedClassifier, reference
from tabmoe.registry import MODELS, TABMOE_DEFAULT_TRIAL, available_models, get_model

NAMES = available_models()


def test_registry_holds_tabmoe_and_every_baseline():
    assert set(MODELS) >= {
        "tabmoe",
        "ft_transformer",
        "tab_transformer",
        "tabnet",
        "logistic_regression",
        "random_forest",
        "gradient_boosting",
        "hist_gradient_boosting",
        "mlp",
        "xgboost",
        "catboost",
        "lightgbm",
        "tabm",
    }
    assert set(NAMES) <= set(MODELS)
    with pytest.raises(ValueError, match="Unknown model 'nope'.*tabmoe"):
        get_model("nope")


@pytest.mark.parametrize("name", [["tabmoe"], None, 3, b"tabmoe"])
def test_get_model_names_a_name_that_is_not_a_string(name):
    # a list raised TypeError "unhashable type: 'list'", naming neither get_model nor its names
    message = r"get_model's name must be a model name \(str\), one of \['tabmoe'.*; got "
    with pytest.raises(TypeError, match=message + type(name).__name__):
        get_model(name)


@pytest.mark.parametrize("name", NAMES)
def test_make_applies_the_paper_defaults(name):
    spec = get_model(name)
    estimator = spec.make()
    assert is_classifier(estimator)
    params = estimator.get_params()
    prefix = "estimator__" if isinstance(estimator, EncodedClassifier) else ""
    for key, value in spec.paper_defaults.items():
        assert params[prefix + key] == value, key
    clone(estimator)


def test_tabmoe_reads_general_tables_by_dtype_and_make_paper_is_the_paper_config():
    spec = get_model("tabmoe")
    general = spec.make()
    assert isinstance(general, TabularMoEClassifier)
    assert general.categorical_features == "auto" and general.vocabulary == "per_column"
    # how the fixed-budget runs were made: 10 unordered bins, patience 10 (the class default then)
    binned = {"n_bins": 10, "numeric_embedding": "bins", "n_iter_no_change": 10}
    expected = {**paper_config(), "categorical_features": "auto", "vocabulary": "per_column", **binned}
    assert dict(spec.paper_defaults) == expected
    paper = spec.make_paper()
    assert {k: v for k, v in paper.get_params().items() if k in paper_config()} == paper_config()
    # inert in the paper's setup: categorical_features="all" leaves no numeric column, and
    # early_stopping=False no patience
    assert spec.paper_params == {**paper_config(), **binned}


def test_registry_tabmoe_bins_numeric_columns():
    """A float column (a fare, an age) is binned, not one token per distinct value."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"fare": rng.exponential(30, 200), "port": rng.choice(["C", "Q", "S"], 200)})
    y = (X["fare"] > 30).astype(int)
    clf = get_model("tabmoe").make(max_epochs=1, random_state=0).fit(X, y)
    assert clf.tokenizer_.is_categorical_.tolist() == [False, True]


@pytest.mark.parametrize("name", NAMES)
def test_make_paper_wraps_grid_tuned_models_in_the_papers_search(name):
    spec = get_model(name)
    estimator = (
        spec.make_paper(random_state=0) if name != "logistic_regression" else (spec.make_paper())
    )
    if name in reference.PAPER_GRIDS:
        assert isinstance(estimator, GridSearchCV)
        assert estimator.param_grid == {
            f"estimator__{k}": v for k, v in reference.PAPER_GRIDS[name].items()
        }
    else:
        assert not isinstance(estimator, GridSearchCV)


@pytest.mark.parametrize("name", sorted(reference.PAPER_GRIDS))
def test_make_paper_searches_an_axis_that_params_set_at_that_value_alone(name):
    """make_paper(max_depth=7) built the estimator with max_depth=7 and searched max_depth
    over the paper's grid all the same, which replaced it: the parameter was lost silently
    (and the bench's paper protocol recorded the suite's fixed value as used)."""
    spec = get_model(name)
    axis, values = next(iter(spec.paper_grid.items()))
    value = 7 if isinstance(values[0], int) else values[-1]
    search = spec.make_paper(**{axis: value})
    assert search.param_grid[f"estimator__{axis}"] == [value]
    others = {k: list(v) for k, v in spec.paper_grid.items() if k != axis}
    assert {k: search.param_grid[f"estimator__{k}"] for k in others} == others  # searched as before
    if name == "random_forest":
        X = pd.DataFrame({"a": np.arange(40.0)})
        y = np.arange(40) % 2
        fitted = spec.make_paper(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
        assert fitted.best_params_["estimator__max_depth"] == 2
        assert fitted.best_estimator_.estimator.n_estimators == 5


@pytest.mark.parametrize("name", NAMES)
def test_make_paper_n_jobs_is_the_estimators_where_there_is_no_grid(name):
    """make_paper(n_jobs=2) was the grid search's n_jobs, and dropped silently where the paper
    ran no grid search: TabularMoEClassifier(n_jobs=None) came back."""
    spec = get_model(name)
    if spec.paper_grid is not None:
        assert spec.make_paper(n_jobs=2).n_jobs == 2  # the grid search's
        return
    if "n_jobs" not in {key.split("__")[-1] for key in spec.make().get_params()}:
        with pytest.raises(TypeError, match="n_jobs"):  # refused, as make(n_jobs=2) is
            spec.make_paper(n_jobs=2)
        return
    params = spec.make_paper(n_jobs=2).get_params()
    assert params.get("n_jobs", params.get("estimator__n_jobs")) == 2
    assert repr(spec.make_paper()) == repr(spec.make_paper(n_jobs=None))


@pytest.mark.parametrize("name", NAMES)
def test_search_space_samples_valid_parameters(name):
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    spec = get_model(name)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = set()
    for _ in range(20):
        trial = study.ask()
        params = spec.suggest(trial)
        estimator = spec.make_default(**params)  # what tune builds
        inner = estimator.estimator if isinstance(estimator, EncodedClassifier) else estimator
        if hasattr(inner, "_parameter_constraints"):  # XGBoost has none
            inner._validate_params()  # scikit-learn's parameter constraints
        if hasattr(estimator, "_check_params"):
            estimator._check_params()  # cross-parameter rules (e.g. d_block vs heads)
        if name == "tabmoe":
            estimator._check_architecture()
        study.tell(trial, 0.0)
        seen.add(tuple(sorted((k, repr(v)) for k, v in params.items())))
    assert len(seen) > 1  # the space is not a single point


@pytest.mark.parametrize("name", NAMES)
def test_make_default_is_the_class_defaults_and_make_differs_only_for_tabmoe(name):
    spec = get_model(name)

    def params(estimator):  # nested estimators by their repr (equal objects, not the same one)
        return {key: repr(value) for key, value in estimator.get_params().items()}

    default, paper = params(spec.make_default()), params(spec.make())
    assert default == params(spec.factory())
    if name == "tabmoe":
        assert default == params(TabularMoEClassifier())
        assert paper["batch_size"] == "'paper'" and default["batch_size"] == "'auto'"
    else:  # tune's starting point moved for tabmoe alone
        assert default == paper


def test_tabmoe_space_holds_the_defaults():
    """The class's defaults are one point of the registry's space (enqueue can start there);
    n_layers="auto" is one of the space's two depths on any table."""
    optuna = pytest.importorskip("optuna")  # the space samples from an Optuna trial (extra "tuning")
    defaults = TabularMoEClassifier().get_params()
    params = get_model("tabmoe").suggest(optuna.trial.FixedTrial(TABMOE_DEFAULT_TRIAL))
    assert params["n_layers"] == 1 and defaults["n_layers"] == "auto"
    assert {k: v for k, v in params.items() if k != "n_layers"} == {k: defaults[k] for k in params if k != "n_layers"}


def test_ft_transformer_space_is_gorishniy_et_al():
    optuna = pytest.importorskip("optuna")
    trial = optuna.trial.FixedTrial(
        {
            "n_blocks": 4,
            "d_block": 512,
            "attention_dropout": 0.5,
            "ffn_d_hidden_multiplier": 8 / 3,
            "ffn_dropout": 0.5,
            "residual_dropout": 0.2,
            "learning_rate": 1e-3,
            "weight_decay": 1e-3,
        }
    )
    assert get_model("ft_transformer").suggest(trial)["d_block"] == 512
    # The ranges of the paper's appendix (residual dropout: the uniform part of its "0 or
    # uniform"). Was pytest.raises(ValueError) around a FixedTrial({"n_blocks": 5}): that
    # raised because d_block was not given, whatever the range of n_blocks (a FixedTrial only
    # warns of a value out of range), so no range was checked.
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    asked = optuna.create_study().ask()
    get_model("ft_transformer").suggest(asked)
    Int, Float = optuna.distributions.IntDistribution, optuna.distributions.FloatDistribution
    assert asked.distributions == {
        "n_blocks": Int(1, 4),
        "d_block": Int(64, 512, step=8),
        "attention_dropout": Float(0.0, 0.5),
        "ffn_d_hidden_multiplier": Float(2 / 3, 8 / 3),
        "ffn_dropout": Float(0.0, 0.5),
        "residual_dropout": Float(0.0, 0.2),
        "learning_rate": Float(1e-5, 1e-3, log=True),
        "weight_decay": Float(1e-6, 1e-3, log=True),
    }


@pytest.mark.parametrize("name", ["ft_transformer", "tab_transformer", "tabm"])
def test_the_paper_protocol_trains_the_deep_baselines_without_a_hold_out(name):
    # their default is early stopping on a hold-out; the paper's tables have no validation
    # part, and the committed paper runs trained on every row
    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name}'s package is not installed")
    assert spec.factory().early_stopping is True
    assert spec.make().early_stopping is True
    assert spec.make_paper().early_stopping == "auto"


def _small(estimator):
    """Fewest epochs / trees, seeded, so that every model fits quickly and reproducibly."""
    small = {"max_epochs": 1, "n_estimators": 2, "max_iter": 2, "iterations": 2, "random_state": 0}
    keys = [k for k in estimator.get_params() if k.split("__")[-1] in small]
    return estimator.set_params(**{k: small[k.split("__")[-1]] for k in keys})


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", [n for n in NAMES if n != "tabmoe"])
def test_every_baseline_fits_under_sklearns_pandas_output(name):
    # the TableEncoder indexed its inner transformers' outputs as arrays; with
    # transform_output="pandas" they were DataFrames (InvalidIndexError) or refused sparse output
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=60),
            "b": rng.choice(list("xyz"), 60),
            "c": np.where(rng.random(60) < 0.1, np.nan, rng.normal(size=60)),
        }
    )
    y = rng.choice(["p", "q"], 60)
    expected = _small(get_model(name).make())
    with sklearn.config_context(transform_output="pandas"):
        model = clone(expected).fit(X, y)
        proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, expected.fit(X, y).predict_proba(X), rtol=1e-5, atol=1e-7)


def test_a_specs_paper_settings_are_read_only_copies():
    """paper_defaults was the module's dict itself: get_model("mlp").paper_defaults["max_iter"] = 3
    (or a change to reference.PAPER_DEFAULTS) changed every later make(), and appending to a
    make_paper() grid search's param_grid changed the registry's (and PAPER_GRIDS') grid."""
    spec = get_model("random_forest")
    for mapping in (spec.paper_defaults, spec.paper_overrides, spec.paper_grid):
        with pytest.raises(TypeError):
            mapping["n_estimators"] = 1
    mlp = get_model("mlp")
    with pytest.raises(TypeError):
        mlp.paper_defaults["max_iter"] = 3
    saved = reference.PAPER_DEFAULTS["mlp"]["max_iter"]
    try:
        reference.PAPER_DEFAULTS["mlp"]["max_iter"] = 3  # the dict the spec was made from
        assert mlp.paper_defaults["max_iter"] == saved == 2000
        assert mlp.make().estimator.max_iter == 2000
    finally:
        reference.PAPER_DEFAULTS["mlp"]["max_iter"] = saved
    search = spec.make_paper()
    search.param_grid["estimator__max_depth"].append(99)
    assert list(spec.paper_grid["max_depth"]) == [1, 3, None]
    assert reference.PAPER_GRIDS["random_forest"]["max_depth"] == [1, 3, None]
    assert spec.make_paper().param_grid["estimator__max_depth"] == [1, 3, None]
    restored = pickle.loads(pickle.dumps(get_model("tabmoe")))  # as before: a spec pickles
    assert restored.paper_defaults == get_model("tabmoe").paper_defaults
    assert copy.deepcopy(spec).paper_grid == spec.paper_grid
    with pytest.raises(TypeError):
        restored.paper_defaults["d_model"] = 1


def test_a_spec_converts_with_dataclasses_asdict_and_astuple():
    """The read-only mappingproxy of paper_defaults made dataclasses.asdict(spec) and astuple
    a TypeError "cannot pickle 'mappingproxy' object" (they deep-copy field values)."""
    import dataclasses

    spec = get_model("random_forest")
    as_dict = dataclasses.asdict(spec)
    assert dict(as_dict["paper_defaults"]) == dict(spec.paper_defaults)
    assert dict(as_dict["paper_grid"]) == dict(spec.paper_grid)
    assert len(dataclasses.astuple(spec)) == len(dataclasses.fields(spec))
    copied = copy.deepcopy(spec.paper_defaults)
    assert copied == spec.paper_defaults and copied is not spec.paper_defaults
    with pytest.raises(TypeError):
        copied["n_estimators"] = 1
    assert pickle.loads(pickle.dumps(spec.paper_grid)) == spec.paper_grid


def test_every_spec_pickles_with_its_search_space():
    """The specs of random_forest, gradient_boosting, hist_gradient_boosting and mlp held a
    closure as their search space: pickling them (joblib's process workers, multiprocessing)
    raised "Can't pickle local object 'grid_suggester.<locals>.suggest'", where every other
    spec pickles. The restored spec equals the registry's and suggests the same grid."""
    optuna = pytest.importorskip("optuna")  # the space samples from an Optuna trial (extra "tuning")

    for name, spec in MODELS.items():
        restored = pickle.loads(pickle.dumps(spec))
        assert restored == spec, name
    restored = pickle.loads(pickle.dumps(get_model("mlp")))
    trial = optuna.trial.FixedTrial({"hidden_layer_sizes": "(100, 50)", "alpha": 1e-3, "learning_rate": "adaptive"})
    assert restored.suggest(trial) == {"hidden_layer_sizes": (100, 50), "alpha": 1e-3, "learning_rate": "adaptive"}
    assert "random_forest" in get_model("random_forest").suggest.__doc__
