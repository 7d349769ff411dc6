"""The gradient-boosting references (CatBoost, LightGBM, XGBoost) behind EncodedClassifier:
what each library does differently, and what the wrapper makes of it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier

from tabmoe import NearUniqueColumnWarning
from tabmoe.baselines import EncodedClassifier, reference

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("pqr"), n)})
    return X, np.where(X["x"] > 0, "yes", "no")


@pytest.mark.parametrize(
    "params",
    [{"class_weights": [1.0, 2.0]}, {"custom_metric": ["AUC"]}],
    ids=["class_weights", "custom_metric"],
)
def test_catboost_with_a_list_parameter_clones_and_fits(params):
    # CatBoost's get_params returns deep copies, which clone took for a constructor that
    # changed them: RuntimeError "Cannot clone object" at fit, clone and cross-validation
    pytest.importorskip("catboost")
    X, y = table()
    clf = reference.catboost(iterations=5, thread_count=1, **params)
    copied = clone(clf)
    assert copied.estimator is not clf.estimator
    assert copied.estimator.get_params() == clf.estimator.get_params()
    fitted = copied.fit(X, y)
    assert fitted.predict_proba(X).shape == (len(X), 2)
    assert not clf.estimator.is_fitted()  # the template is left unfitted


@pytest.mark.parametrize("labels", [[1, 2, 3], ["b", "a", "c"], [0, 1, 2]])
def test_catboost_reads_a_class_weights_dict_by_label(labels):
    # CatBoost saw class codes and read the dict's keys as its class names: "Unknown class
    # label" (1, 2, 3), "Not all class names are numeric" (strings), a class left out
    # unknown (0, 1, 2 weighted {0: 1, 2: 50}), as test_references_read_a_class_weight_dict_
    # by_label for the class_weight of the others
    pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=90), "b": rng.choice(list("pq"), 90)})
    y = np.array(labels)[rng.integers(0, 3, 90)]
    weights = {labels[0]: 1.0, labels[2]: 50.0}  # labels[1] absent: weight 1
    clf = reference.catboost(iterations=20, thread_count=1, class_weights=weights).fit(X, y)
    expected = [{labels[0]: 1.0, labels[2]: 50.0}.get(c, 1.0) for c in clf.classes_]
    assert clf.estimator_.get_params()["class_weights"] == expected
    heavy = int(np.flatnonzero(clf.classes_ == labels[2])[0])
    assert clf.predict_proba(X)[:, heavy].mean() > 0.8  # the class weighted 50x
    with pytest.raises(ValueError, match=r"class_weights has labels not in y: \['z'\]"):
        reference.catboost(iterations=2, class_weights={"z": 2.0}).fit(X, y)


def test_catboost_class_weights_dict_order_leaves_the_columns_in_classes_order():
    # a dict's key order was CatBoost's class order: {2: 1, 0: 1, 1: 1} permuted the
    # columns of predict_proba (argmax accuracy 0.0 where predict's was 1.0)
    pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=300)})
    y = np.where(X["x"] > 0.5, 2, np.where(X["x"] < -0.5, 0, 1))
    clf = reference.catboost(iterations=50, thread_count=1, class_weights={2: 1, 0: 1, 1: 1})
    clf.fit(X, y)
    by_proba = clf.classes_[clf.predict_proba(X).argmax(axis=1)]
    np.testing.assert_array_equal(by_proba, clf.predict(X))
    assert (by_proba == y).mean() > 0.95


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0, "heavy"])
@pytest.mark.parametrize("name", ["catboost", "lightgbm", "logistic_regression", "random_forest"])
def test_a_class_weight_that_is_not_a_finite_non_negative_number_is_named(name, bad):
    # NaN: CatBoost dropped every parameter it was given (1000 trees, unweighted, where
    # iterations=5 was asked), LightGBM and LogisticRegression fit nonsense, RandomForest
    # failed at predict ("probabilities contain NaN"); -1: CatBoost's "Weight[0] is negative"
    from tabmoe.registry import get_model

    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name} needs {', '.join(spec.requires)}")
    X, y = table()
    param = "class_weights" if name == "catboost" else "class_weight"
    message = rf"{param} must be finite and not negative: got \{{'no': "
    with pytest.raises(ValueError, match=message):
        spec.make_default(**{param: {"no": bad, "yes": 1.0}}).fit(X, y)
    if name == "catboost":  # CatBoost's list, in classes_ order
        with pytest.raises(ValueError, match=r"class_weights must be finite and not negative"):
            spec.make_default(class_weights=[bad, 1.0]).fit(X, y)


def constant_table(n: int = 90) -> tuple[pd.DataFrame, np.ndarray]:
    X = pd.DataFrame({"x": np.full(n, 2.0), "c": ["p"] * n})
    y = np.array([1] * (n // 2) + [2] * (n // 3) + [3] * (n - n // 2 - n // 3))
    return X, y


@pytest.mark.parametrize(
    "params, sample_weight, class_weight",
    [
        ({}, None, [1.0, 1.0, 1.0]),
        ({}, "ramp", [1.0, 1.0, 1.0]),
        ({"class_weights": {3: 4.0}}, None, [1.0, 1.0, 4.0]),
        ({"class_weights": [2.0, 1.0, 0.5]}, "ramp", [2.0, 1.0, 0.5]),
        ({"auto_class_weights": "Balanced"}, None, "balanced"),
        ({"auto_class_weights": "SqrtBalanced"}, "ramp", "sqrt"),
    ],
)
def test_catboost_on_constant_features_predicts_the_weighted_prior(
    params, sample_weight, class_weight
):
    # CatBoostError "All features are either constant or ignored", where LightGBM, XGBoost
    # and HistGradientBoosting predict the class prior (weighted by sample and class weight)
    pytest.importorskip("catboost")
    X, y = constant_table()
    weight = np.ones(len(y)) if sample_weight is None else np.linspace(0.5, 2.0, len(y))
    clf = reference.catboost(iterations=5, thread_count=1, **params)
    clf.fit(X, y, sample_weight=None if sample_weight is None else weight)
    totals = np.array([weight[y == c].sum() for c in (1, 2, 3)])
    if class_weight == "balanced":
        class_weight = totals.max() / totals
    elif class_weight == "sqrt":
        class_weight = np.sqrt(totals.max() / totals)
    expected = totals * class_weight / (totals * class_weight).sum()
    proba = clf.predict_proba(X.iloc[:2])
    np.testing.assert_allclose(proba, [expected, expected], rtol=1e-12)
    assert (clf.predict(X.iloc[:2]) == clf.classes_[np.argmax(expected)]).all()


@pytest.mark.parametrize("name", ["lightgbm", "xgboost", "hist_gradient_boosting"])
def test_the_other_boosting_references_predict_the_prior_on_constant_features(name):
    # what the CatBoost fallback above follows
    from tabmoe.registry import get_model

    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name} needs {', '.join(spec.requires)}")
    X, y = constant_table()
    weight = np.linspace(0.5, 2.0, len(y))
    clf = spec.make_default(class_weight={3: 4.0}) if name != "xgboost" else spec.make_default()
    clf.fit(X, y, sample_weight=weight)
    factor = np.array([1.0, 1.0, 4.0]) if name != "xgboost" else np.ones(3)
    totals = np.array([weight[y == c].sum() for c in (1, 2, 3)]) * factor
    np.testing.assert_allclose(clf.predict_proba(X.iloc[:1])[0], totals / totals.sum(), rtol=1e-5)


def test_catboost_prior_has_one_stage():
    pytest.importorskip("catboost")
    X, y = constant_table()
    clf = reference.catboost(iterations=5, thread_count=1).fit(X, y)
    stages = list(clf.staged_predict(X.iloc[:3]))
    assert len(stages) == 1
    np.testing.assert_array_equal(stages[0], [1, 1, 1])  # the most frequent class


@pytest.mark.parametrize("n_classes", [2, 3])
def test_catboost_staged_predict_gives_one_class_per_row(n_classes):
    # CatBoost's multiclass staged_predict yields (n, 1) codes: each stage was an (n, 1)
    # array of classes, which compared with predict's (n,) broadcast to (n, n)
    pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=90), "c": rng.choice(list("pqr"), 90)})
    y = np.array(["a", "b", "c"][:n_classes])[rng.integers(0, n_classes, 90)]
    clf = reference.catboost(iterations=5, thread_count=1).fit(X, y)
    stages = list(clf.staged_predict(X))
    assert len(stages) == 5
    assert all(stage.shape == (len(X),) for stage in stages)
    np.testing.assert_array_equal(stages[-1], clf.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_xgboost_probabilities_are_float64_rows_summing_to_one(n_classes):
    # XGBoost's predict_proba is float32 (row sums off 1 by up to 5e-8); every other model's
    # is float64
    pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=300), "c": rng.choice(list("pqr"), 300)})
    y = np.digitize(X["x"], np.quantile(X["x"], np.linspace(0, 1, n_classes + 1)[1:-1]))
    clf = reference.xgboost(n_estimators=20, n_jobs=1, random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=4 * np.finfo(np.float64).eps)
    raw = clf.estimator_.predict_proba(clf._encoded(X)[1])
    np.testing.assert_allclose(proba, raw, rtol=1e-6)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert clf.predict_log_proba(X).dtype == np.float64


@pytest.mark.parametrize(
    "params, message",
    [
        ({"num_leafs": 3}, r"no parameter 'num_leafs' \(did you mean 'num_leaf'\?\): it would"),
        ({"foo": 1}, r"no parameter 'foo': it would ignore it"),
        (
            {"n_estimator": 3, "lamda_l2": 1.0},
            r"'n_estimator' \(did you mean 'n_estimators'\?\), 'lamda_l2' \(did you mean "
            r"'lambda_l2'\?\): it would ignore them",
        ),
    ],
)
def test_lightgbm_parameter_it_does_not_know_is_named(params, message):
    # LightGBM ignored it with an "Unknown parameter" log line, which verbose=-1 silences,
    # and fit at its defaults: num_leafs=3 grew 31-leaf trees, n_estimator=3 100 trees
    pytest.importorskip("lightgbm")
    X, y = table()
    with pytest.raises(ValueError, match=message):
        reference.lightgbm(n_jobs=1, **params).fit(X, y)


def test_lightgbm_takes_every_parameter_and_alias_of_its_own_table():
    lightgbm = pytest.importorskip("lightgbm")
    from lightgbm.basic import _ConfigAliases

    from tabmoe.baselines._gbdt import check_lightgbm_params

    names = {
        alias for aliases in _ConfigAliases._get_all_param_aliases().values() for alias in aliases
    }
    assert {"num_leaves", "min_data_in_leaf", "lambda_l2", "bagging_fraction", "verbose"} <= names
    check_lightgbm_params(lightgbm.LGBMClassifier(**dict.fromkeys(names)))
    wrapper = set(lightgbm.LGBMClassifier().get_params())  # n_estimators, subsample, ...
    check_lightgbm_params(lightgbm.LGBMClassifier(**dict.fromkeys(wrapper)))
    X, y = table()
    suggested = {"num_leaves": 8, "subsample": 0.8, "subsample_freq": 1, "reg_lambda": 1e-3}
    reference.lightgbm(n_estimators=5, n_jobs=1, min_data_in_leaf=5, **suggested).fit(X, y)


def test_catboost_prior_names_scale_pos_weight_on_a_multiclass_target():
    # the constant-table fallback indexed [1, w] by class code 2: IndexError
    pytest.importorskip("catboost")
    X, y = constant_table()
    with pytest.raises(ValueError, match=r"scale_pos_weight is for a binary target; y has 3"):
        reference.catboost(iterations=2, thread_count=1, scale_pos_weight=2.0).fit(X, y)
    binary = reference.catboost(iterations=2, thread_count=1, scale_pos_weight=3.0)
    proba = binary.fit(X, np.where(y == 1, 1, 2)).predict_proba(X.iloc[:1])[0]
    np.testing.assert_allclose(proba, [45 / 180, 45 * 3 / 180], rtol=1e-12)  # 45 rows each


SMALL = {  # a few trees, one thread
    "catboost": {"iterations": 3, "thread_count": 1},
    "lightgbm": {"n_estimators": 3, "n_jobs": 1},
    "xgboost": {"n_estimators": 3, "n_jobs": 1},
    "hist_gradient_boosting": {"max_iter": 3},
}


def small_model(name: str, **params) -> reference.EncodedClassifier:
    """The registry's model, ``params`` set on its inner estimator (the factory takes
    ``categorical_features`` as the wrapper's)."""
    from tabmoe.registry import get_model

    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name} needs {', '.join(spec.requires)}")
    inner = {f"estimator__{key}": value for key, value in params.items()}
    return spec.make_default(**SMALL.get(name, {})).set_params(**inner)


@pytest.mark.parametrize("encoding", ["native", "onehot"])
@pytest.mark.parametrize(
    "name, param, value",
    [
        ("catboost", "cat_features", ["c"]),
        ("catboost", "cat_features", [1]),
        ("hist_gradient_boosting", "categorical_features", ["c"]),
        ("hist_gradient_boosting", "categorical_features", [False, True]),
        ("xgboost", "feature_types", ["q", "c"]),
        ("xgboost", "feature_types", []),  # a type per column: empty is wrong on one-hot
        ("lightgbm", "categorical_feature", ["c"]),
        ("lightgbm", "categorical_feature", "auto"),  # fit's default, not the constructor's
        ("lightgbm", "cat_feature", [1]),
    ],
)
def test_an_estimator_parameter_naming_the_users_columns_is_named(name, param, value, encoding):
    # the estimator sees the encoded matrix (f0, f1, ...): native encoding overwrote the
    # declaration silently (LightGBM with a warning); on one-hot it named columns that are
    # not there (XGBoost's "feature types must have the same length", LightGBM's Fatal
    # "categorical_feature is not a number", HistGradientBoosting's "array of integers")
    assert_param_refused(name, param, value, encoding, (
        r"names columns of the encoded matrix, which EncodedClassifier builds; pass the "
        r"categorical columns as EncodedClassifier\(categorical_features=\[\.\.\.\]\) instead"
    ))  # fmt: skip


@pytest.mark.parametrize("encoding", ["native", "onehot"])
@pytest.mark.parametrize(
    "name, param, value",
    [
        ("catboost", "ignored_features", [0]),
        ("catboost", "monotone_constraints", [1, 0]),
        ("catboost", "feature_weights", [2.0, 1.0]),
        ("catboost", "per_float_feature_quantization", ["0:border_count=8"]),
        ("hist_gradient_boosting", "monotonic_cst", [1, 0]),
        ("hist_gradient_boosting", "monotonic_cst", {"x": 1}),
        ("hist_gradient_boosting", "interaction_cst", [[0], [1]]),
        ("xgboost", "monotone_constraints", "(1,0)"),
        ("xgboost", "interaction_constraints", [[0], [1]]),
        ("xgboost", "feature_weights", [2.0, 1.0]),
        ("lightgbm", "monotone_constraints", [1, 0]),
        ("lightgbm", "mc", [1, 0]),
        ("lightgbm", "feature_penalty", [0.5, 1.0]),
        ("lightgbm", "forcedsplits_filename", "splits.json"),
    ],
)
def test_an_estimator_parameter_indexing_the_users_columns_is_named(name, param, value, encoding):
    # the encoded matrix puts the categorical codes first (native) or spreads a column over
    # its one-hot columns: CatBoost(ignored_features=[0]) on ("x", "c") ignored "c" silently
    # (accuracy 0.68 where "c" alone gives 1.0), HistGradientBoosting's monotonic_cst=[1, 0]
    # constrained the categorical codes
    assert_param_refused(name, param, value, encoding, (
        r"indexes columns of the encoded matrix, which EncodedClassifier builds \(the "
        r"categorical columns' codes first, or their one-hot columns\), so it would not reach "
        rf"the columns of your table; leave {param} unset"
    ))  # fmt: skip


def assert_param_refused(name: str, param: str, value, encoding: str, reason: str) -> None:
    """The registry model ``name`` with ``param=value`` on its inner estimator is refused at
    fit with ``Estimator(param=...) <reason>``."""
    clf = small_model(name, **{param: value}).set_params(categorical_encoding=encoding)
    estimator = type(clf.estimator).__name__
    assert_refused(clf, rf"^{estimator}\({param}=\.\.\.\) {reason}")


def assert_refused(clf: reference.EncodedClassifier, message: str) -> None:
    """``fit`` raises ``message`` before fitting anything, the user's estimator unchanged."""
    X, y = table()
    before = clf.estimator.get_params(deep=False)
    with pytest.raises(ValueError, match=message):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_") and not hasattr(clf, "estimator_")  # nothing fitted
    assert str(clf.estimator.get_params(deep=False)) == str(before)  # unchanged, values too


@pytest.mark.parametrize("class_names", [["no", "yes"], [0, 1]])
def test_catboost_class_names_are_named(class_names):
    # CatBoost sees class codes: the labels failed ("Not all class names are numeric"), and
    # codes are the wrapper's to give
    assert_refused(small_model("catboost", class_names=class_names), (
        r"^CatBoostClassifier\(class_names=\.\.\.\) names the labels of y, but "
        r"EncodedClassifier passes CatBoostClassifier the class codes 0 \.\. n_classes - 1 "
        r"and keeps the labels in classes_"
    ))  # fmt: skip


@pytest.mark.parametrize("encoding", ["native", "onehot"])
@pytest.mark.parametrize(
    "name, params",
    [
        ("catboost", {"cat_features": None, "class_names": None}),
        ("hist_gradient_boosting", {"categorical_features": "from_dtype"}),
        ("hist_gradient_boosting", {"categorical_features": None}),
        ("xgboost", {"feature_types": None}),
        ("lightgbm", {"categorical_feature": None}),
        ("catboost", {"cat_features": []}),
        ("hist_gradient_boosting", {"categorical_features": []}),
        ("lightgbm", {"categorical_feature": []}),
        ("catboost", {"ignored_features": None, "monotone_constraints": None}),
        ("hist_gradient_boosting", {"monotonic_cst": None, "interaction_cst": None}),
        ("xgboost", {"monotone_constraints": None, "interaction_constraints": None}),
        ("lightgbm", {"monotone_constraints": [], "forcedsplits_filename": ""}),
    ],
)
def test_an_estimators_default_column_parameter_is_taken(name, params, encoding):
    X, y = table()
    clf = small_model(name, **params).set_params(categorical_encoding=encoding).fit(X, y)
    assert clf.predict_proba(X).shape == (len(X), 2)


@pytest.mark.parametrize("encoding", ["native", "onehot"])
@pytest.mark.parametrize("rule", ["no_interactions", "pairwise"])
def test_an_interaction_rule_for_every_column_is_taken(rule, encoding):
    # interaction_cst="no_interactions" (an additive model) or "pairwise" names no column, so
    # the encoded matrix's order cannot misdirect it; it was refused as "indexes columns"
    X, y = table()
    clf = small_model("hist_gradient_boosting", interaction_cst=rule)
    clf.set_params(categorical_encoding=encoding).fit(X, y)
    assert clf.estimator_.interaction_cst == rule
    assert clf.predict_proba(X).shape == (len(X), 2)


@pytest.mark.parametrize("name", list(SMALL))
def test_native_declaration_is_set_on_the_clone_only(name):
    # the wrapper declares the categorical codes on estimator_: refitting, and a clone of
    # the fitted model, see the user's estimator as it was
    X, y = table()
    clf = small_model(name)
    before = clf.estimator.get_params(deep=False)
    first = clf.fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(clf.fit(X, y).predict_proba(X), first)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), first)
    assert str(clf.estimator.get_params(deep=False)) == str(before)  # unchanged, values too


def test_column_params_hold_lightgbms_aliases():
    pytest.importorskip("lightgbm")
    from lightgbm.basic import _ConfigAliases

    assert _ConfigAliases.get("categorical_feature") <= set(reference.COLUMN_PARAMS)
    indexing = [
        "monotone_constraints",
        "interaction_constraints",
        "tree_interaction_constraints",
        "feature_contri",
        "forcedsplits_filename",
        "forcedbins_filename",
        "max_bin_by_feature",
        "cegb_penalty_feature_lazy",
        "cegb_penalty_feature_coupled",
        "ignore_column",
    ]
    for param in indexing:
        assert _ConfigAliases.get(param) <= set(reference.INDEX_PARAMS), param


@pytest.mark.parametrize("name", ["catboost", "hist_gradient_boosting"])
def test_one_hot_encoding_fits_the_estimators_that_read_codes_or_dense_data(name):
    # CatBoost's input was built from the native mask (an IndexError on the wider one-hot
    # matrix); HistGradientBoosting refuses the sparse one-hot matrix ("dense data is
    # required"), which the user cannot convert: the wrapper builds it
    X, y = table(n=200)
    clf = small_model(name).set_params(categorical_encoding="onehot").fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(1)])
    assert clf.score(X, y) > 0.9  # the label is x > 0: learnt from the numeric block


def test_catboost_input_follows_the_fitted_encoding_not_the_parameter():
    # predict builds CatBoost's input as fit did, whatever set_params changed since
    X, y = table()
    clf = small_model("catboost").fit(X, y)
    proba = clf.predict_proba(X)
    clf.set_params(categorical_encoding="onehot")
    np.testing.assert_array_equal(clf.predict_proba(X), proba)


def padded_table(label: str) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
    """``table()`` and, after it, 40 rows of class ``label`` holding a new category and NaN."""
    X, y = table()
    extra = pd.DataFrame({"x": np.r_[np.nan, np.linspace(-9, 9, 39)], "c": ["s"] * 40})
    return X, y, pd.concat([X, extra], ignore_index=True), np.r_[y, [label] * 40]


@pytest.mark.parametrize(
    "name", ["logistic_regression", "random_forest", "hist_gradient_boosting", "lightgbm"]
)
def test_balanced_class_weights_count_the_rows_of_weight_zero(name):
    # Rows of weight 0 are left out of the references' fit, but "balanced" stays
    # n_rows / (n_classes * n_rows_of_its_class) over every row given (scikit-learn's and the
    # torch models' rule): left to the library it would count the kept rows only.
    X, y, padded_X, padded_y = padded_table("yes")
    weight = np.r_[np.ones(len(X)), np.zeros(40)]
    balanced = small_model(name, class_weight="balanced", random_state=0).fit(
        padded_X, padded_y, sample_weight=weight
    )
    formula = {label: len(padded_y) / (2 * (padded_y == label).sum()) for label in ("no", "yes")}
    alone = small_model(name, class_weight=formula, random_state=0)
    alone.fit(X, y, sample_weight=np.ones(len(X)))
    np.testing.assert_allclose(balanced.predict_proba(X), alone.predict_proba(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["logistic_regression", "catboost"])
def test_rows_of_class_weight_zero_are_absent_rows(name):
    # A class weighted 0 left its rows in the fit at weight 0: the encoder learnt their
    # category and missing indicator, and the estimator their class (some probability for
    # it, the others' moved). They are absent rows now, as those of sample_weight 0.
    X, y, padded_X, padded_y = padded_table("maybe")
    param = "class_weights" if name == "catboost" else "class_weight"
    weighted = small_model(name, **{param: {"maybe": 0.0, "yes": 2.0}}).fit(padded_X, padded_y)
    alone = small_model(name, **{param: {"yes": 2.0}}).fit(X, y)
    np.testing.assert_array_equal(
        weighted.encoder_.get_feature_names_out(), alone.encoder_.get_feature_names_out()
    )
    proba = weighted.predict_proba(X)
    assert (proba[:, 0] == 0).all()
    np.testing.assert_allclose(proba[:, 1:], alone.predict_proba(X), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match=rf"{param}=\{{'no': 0.0, 'yes': 0.0, 'maybe': 0.0\}} gives every row weight 0"):
        small_model(name, **{param: {"no": 0.0, "yes": 0.0, "maybe": 0.0}}).fit(padded_X, padded_y)


@pytest.mark.parametrize(
    "make",
    [
        lambda: EncodedClassifier(HistGradientBoostingClassifier(max_iter=3), "native"),
        lambda: reference.hist_gradient_boosting(max_iter=3).set_params(estimator__max_bins=20),
    ],
    ids=["bare-estimator", "max_bins-set-after"],
)
def test_hist_gradient_boosting_takes_a_column_of_more_categories_than_max_bins(make):
    # Each failed "Categorical feature at index 0 is expected to have a cardinality <= 255
    # but actually has a cardinality of 314" (<= 20 ... of 254 after the factory's cap of
    # 255), naming a position of the encoded matrix (the column is X's second): the cap on
    # categories did not follow max_bins.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=600), "id": [f"v{i}" for i in rng.integers(0, 400, 600)]})
    y = np.where(X["x"] > 0, "pos", "neg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NearUniqueColumnWarning)
        clf = make().fit(X, y)
    max_bins = clf.estimator_.max_bins
    assert clf.encoder_.cardinalities_.tolist() == [max_bins]  # the most frequent values
    assert clf.score(X, y) > 0.9


def test_a_max_bins_too_small_for_categories_is_named():
    """max_bins 2 leaves no code for a category (two are reserved): the factory failed at fit
    naming max_categories, a parameter the user never set, and set_params(estimator__max_bins=2)
    with HistGradientBoosting's "cardinality <= 2 but actually has a cardinality of 3"."""
    X = pd.DataFrame({"c": list("abcab" * 8)})
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match=r"HistGradientBoostingClassifier's max_bins must be at least 3 .* got 2"):
        reference.hist_gradient_boosting(max_bins=2)
    with pytest.raises(ValueError, match=r"HistGradientBoostingClassifier's max_bins must be at least 3 .* got 2"):
        reference.hist_gradient_boosting().set_params(estimator__max_bins=2).fit(X, y)


@pytest.mark.parametrize(
    "name", ["logistic_regression", "random_forest", "hist_gradient_boosting", "lightgbm"]
)
def test_balanced_class_weights_follow_one_rule_with_sample_weights(name):
    """With sample weights of all non-zero values, "balanced" was left to the library, and
    scikit-learn's LogisticRegression and forests (1.7+) count classes by weight there, so
    the rule changed with whether some row weighed exactly 0 (an extra row of weight 0
    moved LogisticRegression's probabilities by up to 0.39). It is now the documented
    n_rows / (n_classes * n_rows_of_its_class) over every row given, whatever the weights."""
    X, y, _, _ = padded_table("yes")
    weight = np.where(np.asarray(y) == "yes", 5.0, 1.0)
    formula = {label: len(y) / (2 * (np.asarray(y) == label).sum()) for label in ("no", "yes")}
    balanced = small_model(name, class_weight="balanced", random_state=0).fit(X, y, sample_weight=weight)
    given = small_model(name, class_weight=formula, random_state=0).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(balanced.predict_proba(X), given.predict_proba(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("make", [np.random.RandomState, np.random.default_rng], ids=["RandomState", "Generator"])
def test_catboost_draws_its_seed_from_a_numpy_generator(make):
    # CatBoost takes an int seed only: a RandomState (scikit-learn's convention) or a
    # Generator failed at fit with "Object of type RandomState is not JSON serializable"
    pytest.importorskip("catboost")
    X, y = table()
    first = reference.catboost(iterations=5, thread_count=1, random_state=make(0)).fit(X, y)
    again = reference.catboost(iterations=5, thread_count=1, random_state=make(0)).fit(X, y)
    np.testing.assert_array_equal(first.predict_proba(X), again.predict_proba(X))
    assert isinstance(first.estimator_.get_params()["random_state"], int)
    assert isinstance(first.estimator.get_params()["random_state"], type(make(0)))  # the caller's, kept
    rng = make(0)
    clf = reference.catboost(iterations=5, thread_count=1, random_state=rng)
    seeds = [clf.fit(X, y).estimator_.get_params()["random_state"] for _ in range(2)]
    assert seeds[0] != seeds[1]  # each fit draws anew from the caller's generator
    assert rng.random() != make(0).random()  # which those draws advanced
