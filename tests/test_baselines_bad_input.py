"""Bad input for every baseline, beyond the project-wide contract of tests/test_bad_input.py.

That file runs over tests/classifiers.py, which includes every baseline; here: missing values
in every dtype and whole rows of them, renamed and narrower input, inf at fit and predict,
every label type, and the 10^5-category column through the shared encoder.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe.baselines import TableEncoder

from .baseline_factories import BASELINE_FACTORIES

torch.set_num_threads(1)
NAMES = sorted(BASELINE_FACTORIES)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Mixed table: strings, a float, a pandas category, an int and a bool column."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n).astype(object),
            "size": rng.normal(size=n),
            "kind": pd.Categorical(rng.choice(["a", "b"], n)),
            "count": rng.integers(0, 5, n),
            "flag": rng.random(n) > 0.5,
        }
    )
    y = np.where((X["colour"] == "red") | (X["size"] > 1.0), "yes", "no")
    return X, y


def check_predictions(clf, X, classes) -> None:
    pred = clf.predict(X)
    assert len(pred) == len(X)
    assert set(pred) <= set(classes)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), len(classes))
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_missing_values_in_every_column(name):
    X, y = table()
    X = X.astype({"flag": object, "count": float})
    for j, column in enumerate(X.columns):
        X.loc[X.index[j::7], column] = None  # None / NaN in every column, every dtype
    X.loc[X.index[:4], "colour"] = np.nan
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    check_predictions(clf, X, np.unique(y))
    all_missing = pd.DataFrame({c: pd.Series([None] * 5, dtype=X[c].dtype) for c in X.columns})
    check_predictions(clf, all_missing, np.unique(y))


@pytest.mark.parametrize("name", NAMES)
def test_renamed_or_narrower_input_is_a_clear_error(name):
    """Beyond tests/test_bad_input.py: both names of a rename, and array input's width."""
    X, y = table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    with pytest.raises(ValueError, match="(?s)colour.*hue|hue.*colour"):
        clf.predict(X.rename(columns={"colour": "hue"}))
    with pytest.raises(ValueError, match="5 features"):
        clf.predict(X.to_numpy()[:, :4])


@pytest.mark.parametrize("name", NAMES)
def test_a_named_frame_after_a_fit_without_names_warns_once(name):
    # scikit-learn's warning came three times, the encoder's and its tokenizer's after the
    # classifier's (found comparing the baselines with TabularMoEClassifier, which warns once)
    X, y = table()
    for fitted_on in (X.to_numpy(), X.set_axis(range(X.shape[1]), axis=1)):
        clf = BASELINE_FACTORIES[name]().fit(fitted_on, y)
        expected = clf.predict_proba(fitted_on)
        with pytest.warns(UserWarning, match="fitted without feature names") as record:
            proba = clf.predict_proba(X)
        assert [str(w.message) for w in record] == [
            f"X has feature names, but {type(clf).__name__} was fitted without feature names"
        ]
        np.testing.assert_allclose(proba, expected)


@pytest.mark.parametrize("name", NAMES)
def test_a_frame_without_names_after_a_named_fit_warns_once(name):
    # pd.DataFrame(array) (labels 0..n-1) after a fit on names is read by position, as
    # scikit-learn reads it, with its warning once: the encoder's and its tokenizer's came
    # after the classifier's, naming tabmoe's internals (TableEncoder, ColumnTokenizer)
    X, y = table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    unnamed = X.set_axis(range(X.shape[1]), axis=1)
    with pytest.warns(UserWarning, match="valid feature names") as record:
        proba = clf.predict_proba(unnamed)
    assert [str(w.message) for w in record] == [
        f"X does not have valid feature names, but {type(clf).__name__} was fitted with feature names"
    ]
    np.testing.assert_allclose(proba, clf.predict_proba(X))


@pytest.mark.parametrize("name", NAMES)
def test_no_feature_columns_is_an_error(name):
    X, y = table()
    with pytest.raises(ValueError, match="0 feature"):
        BASELINE_FACTORIES[name]().fit(X.iloc[:, :0], y)


@pytest.mark.parametrize("name", NAMES)
def test_inf_in_a_numeric_column_names_it(name):
    X, y = table()
    bad = X.copy()
    bad.loc[bad.index[3], "size"] = np.inf
    with pytest.raises(ValueError, match="infinity in column 'size'"):
        BASELINE_FACTORIES[name]().fit(bad, y)
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    with pytest.raises(ValueError, match="infinity in column 'size'"):
        clf.predict(bad)


@pytest.mark.parametrize("name", ["ft_transformer", "tab_transformer", "tabm", "tabnet"])
def test_a_value_the_float32_network_overflows_on_is_named_at_predict(name):
    # a finite float64 beyond float32's range gave NaN probabilities (and predict the first
    # class) silently, FT-Transformer's from about 1e25; TabNet failed inside its sparsemax,
    # "index -1 is out of bounds for dimension 1 with size 1"
    X, y = table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    bad = X.copy()
    bad.loc[bad.index[3], "size"] = 1e39
    message = (
        r"network overflowed\. The most extreme numeric value there is 1e\+39 in column "
        r"'size' \(row position 3\), [0-9.e+]+ standard deviations from its training mean"
    )
    for method in (clf.predict, clf.predict_proba, clf.predict_log_proba):
        with pytest.raises(ValueError, match=message):
            method(bad)
    check_predictions(clf, X, np.unique(y))


@pytest.mark.parametrize("name", ["random_forest", "gradient_boosting"])
def test_a_value_beyond_float32_is_named_by_the_tree_references(name):
    # scikit-learn's trees read X as float32: "Input X contains infinity or a value too large
    # for dtype('float32')", naming neither the column nor the row
    X, y = table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    bad = X.copy()
    bad.loc[bad.index[3], "size"] = 1e39
    message = (
        r"reads X as float32, whose largest value is 3\.4e\+38: 1 standardised numeric value\(s\) "
        r"are beyond it\. The most extreme is 1e\+39 in column 'size' \(row position 3\), "
        r"[0-9.e+]+ standard deviations from its training mean; clip or transform"
    )
    methods = [clf.predict, clf.predict_proba, clf.predict_log_proba]
    if name == "gradient_boosting":
        methods.append(lambda Xp: list(clf.staged_predict(Xp)))
    for method in methods:
        with pytest.raises(ValueError, match=message):
            method(bad)
    check_predictions(clf, X, np.unique(y))
    # at fit: a row of tiny weight keeps its value far from the weighted mean; the row of
    # weight 0 before it is left out of the fit, not out of the count of positions
    weight = np.ones(len(X))
    weight[[1, 5]] = 0.0, 1e-90
    far = X.copy()
    far.loc[far.index[5], "size"] = 1e60
    with pytest.raises(ValueError, match=r"float32.* 1e\+60 in column 'size' \(row position 5\).* before fitting"):
        BASELINE_FACTORIES[name]().fit(far, y, sample_weight=weight)


@pytest.mark.parametrize("name", ["random_forest", "gradient_boosting"])
def test_a_value_beyond_float32_names_an_integer_column_label_as_python_writes_it(name):
    # int64 column labels (not a RangeIndex): the column was named by NumPy 2's repr of the
    # index's element, "in column np.int64(11)"
    X, y = table()
    X = X.set_axis(pd.Index([10, 11, 12, 13, 14], dtype="int64"), axis=1)
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    bad = X.copy()
    bad.loc[bad.index[3], 11] = 1e39
    with pytest.raises(ValueError, match=r"1e\+39 in column 11 \(row position 3\)"):
        clf.predict(bad)


@pytest.mark.parametrize(
    "labels",
    [["no", "yes"], [0, 1], [False, True], ["a", "b", "c"], [3, 7, 11, 20]],
    ids=["str-binary", "int-binary", "bool", "str-multiclass", "int-multiclass"],
)
@pytest.mark.parametrize("name", NAMES)
def test_label_types_binary_and_multiclass(name, labels):
    X, _ = table(n=160)
    rng = np.random.default_rng(1)
    y = np.asarray(labels, dtype=object)[rng.integers(0, len(labels), len(X))]
    y = y.astype(type(labels[0]))
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    np.testing.assert_array_equal(clf.classes_, np.unique(y))
    assert clf.predict(X).dtype == clf.classes_.dtype
    check_predictions(clf, X, np.unique(y))
    assert 0.0 <= clf.score(X, y) <= 1.0


#: TabM one-hot encodes categorical columns densely: uncapped (``max_categories=None``) this
#: fit took over 8 minutes and 3.5 GiB on one thread; its default cap of 256 makes it 15 s.
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_hundred_thousand_category_column(name):
    """10^5 distinct values fit and predict (memory: test_encoder_high_cardinality_memory,
    and the subprocess RSS bound in tests/test_bad_input.py)."""
    X, y = high_cardinality_table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    with pytest.warns(UserWarning, match="'id'"):
        pred = clf.predict(pd.DataFrame({"id": ["v1", "new"], "x": [1.0, -1.0]}))
    assert set(pred) <= {"pos", "neg"}


def high_cardinality_table(n: int = 100_000) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"id": [f"v{i}" for i in rng.permutation(n)], "x": rng.normal(size=n)})
    return X, np.where(X["x"] > 0, "pos", "neg")


@pytest.mark.parametrize("one_hot", [False, True])
def test_encoder_high_cardinality_memory(one_hot):
    """The shared front end stays O(rows): codes, or a sparse one-hot (dense would be 80 GB)."""
    X, _ = high_cardinality_table()
    tracemalloc.start()
    try:
        encoder = TableEncoder(one_hot=one_hot).fit(X)
        Z = encoder.transform(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert encoder.cardinalities_.tolist() == [100_000 + 2]
    assert Z.shape == (100_000, (100_000 if one_hot else 1) + 1)  # values seen at fit + x
    assert peak < 200 * 1024**2, f"peak traced memory {peak / 1024**2:.0f} MiB"


def test_a_column_missing_in_every_row_fits_without_numpy_warnings():
    # The shared encoder's StandardScaler divided 0 by 0 for it: three "RuntimeWarning:
    # invalid value encountered in divide" from sklearn/utils/extmath.py at every fit of
    # every baseline, naming no column.
    import warnings

    X, _ = table()
    X["empty"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoder = TableEncoder().fit(X)
    Z = encoder.transform(X)
    assert np.isfinite(Z).all()
    assert encoder.n_numeric_ == 3 + 1  # size, count, empty, and empty's missing indicator
    np.testing.assert_array_equal(Z[:, -1], 1.0)


@pytest.mark.parametrize("one_hot", [False, True])
def test_the_encoder_warns_of_missing_categories_where_fit_saw_none_not_of_missing_numbers(one_hot):
    """A categorical column's missing value where fit saw none is its MISSING code, never
    trained there: warned about once per column, over the batches too. A numeric column's is
    the training mean (no indicator was fitted for it), read as before: no word of a MISSING token."""
    encoder = TableEncoder(one_hot=one_hot).fit(pd.DataFrame({"city": ["a", "b", "a", "b"], "size": [1.0, 2.0, 3.0, 4.0]}))
    X = pd.DataFrame({"city": ["a", None, "b", None], "size": [np.nan, 2.0, np.nan, 1.0]})
    expected = "^Column 'city': 2 value\\(s\\) \\(50\\.0% of rows\\) are missing and map to the MISSING token"
    with pytest.warns(UserWarning, match=expected) as caught:
        codes, numeric = encoder.encode(X)
        encoder.transform(X)
    with pytest.warns(UserWarning, match=expected) as batched:
        parts = list(encoder.encode_batches(X, 1))
    assert len(caught) == 2 and len(batched) == 1  # one each: none for 'size'
    assert codes[:, 0].tolist() == [2, 0, 3, 0] and numeric[[0, 2], 0].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(np.concatenate([c for _, c, _ in parts]), codes)


def single_valued_table(n: int = 40) -> tuple[pd.DataFrame, np.ndarray]:
    """Every column categorical with one value at fit, or missing in every row."""
    X = pd.DataFrame(
        {
            "city": ["paris"] * n,
            "flag": np.ones(n, dtype=bool),
            "note": pd.Series([None] * n, dtype=object),
        }
    )
    return X, np.array(["no"] * 25 + ["yes"] * (n - 25))


@pytest.mark.parametrize("name", NAMES)
def test_a_table_of_single_valued_categorical_columns_fits(name):
    # The one-hot references drop each column's first level (drop="first"), which left such
    # a table no feature: LogisticRegression, RandomForest, GradientBoosting and MLP failed
    # with "Found array with 0 feature(s) (shape=(40, 0))", though X has 3 columns.
    X, y = single_valued_table()
    clf = BASELINE_FACTORIES[name]().fit(X, y)
    Xp = pd.DataFrame({"city": ["paris", "rome", None], "flag": [True, False, True], "note": [None, "x", None]})
    with pytest.warns(UserWarning, match="not seen during fit"):
        check_predictions(clf, Xp, ["no", "yes"])


@pytest.mark.parametrize("name", ["logistic_regression", "random_forest", "gradient_boosting", "mlp"])
def test_one_hot_references_without_a_feature_predict_the_weighted_prior(name):
    X, y = single_valued_table()
    weight = np.where(y == "no", 0.2, 1.0)  # 25 x 0.2 = 5 against 15
    clf = BASELINE_FACTORIES[name]().fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(clf.predict_proba(X), np.tile([0.25, 0.75], (len(X), 1)))
    assert set(clf.predict(X)) == {"yes"}
    if name in ("logistic_regression", "random_forest"):  # times the class weights
        clf = BASELINE_FACTORIES[name]().set_params(estimator__class_weight={"no": 3.0})
        np.testing.assert_allclose(clf.fit(X, y, sample_weight=weight).predict_proba(X)[0], [0.5, 0.5])


def test_the_papers_gradient_boosting_search_fits_a_table_without_a_feature():
    # With no feature left, each fold's model is the class prior, one stage only: the
    # staged search's scorer failed on it and the search raised KeyError 'split0_test_stage_50'.
    from tabmoe.registry import get_model

    X, y = single_valued_table()
    search = get_model("gradient_boosting").make_paper().fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], 25 / 40)
    np.testing.assert_allclose(search.predict_proba(X)[0], [25 / 40, 15 / 40])
