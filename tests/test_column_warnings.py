"""Warnings at fit about columns read as categories that are likely not meant so: numbers
stored as text (NumbersAsTextWarning) and near-unique, identifier-like columns
(NearUniqueColumnWarning). One warning of each kind per fit, naming every such column."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tabmoe import ColumnTokenizer, TabularMoEClassifier
from tabmoe.tokenizer import ColumnWarning, NearUniqueColumnWarning, NumbersAsTextWarning

from .classifiers import CLASSIFIER_FACTORIES

N = 300


def _fit_warnings(X, **params) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ColumnTokenizer(**params).fit(X)
    return [w for w in caught if issubclass(w.category, ColumnWarning)]


def _prices(rng, n=N) -> list[str]:
    return [f"{v:.2f}" for v in rng.gamma(2.0, 10.0, n)]


def _quarters(rng, n=N) -> list[str]:
    """Numbers as text, 100 distinct values, most in several rows (not near-unique)."""
    return [f"{v / 4:.2f}" for v in rng.integers(0, 100, n)]


def _codes(rng, k: int, n=N) -> list[str]:
    """Integer codes as text with exactly ``k`` distinct values."""
    return [str(v) for v in np.r_[np.arange(k), rng.integers(0, k, n - k)]]


def test_warning_classes_are_user_warnings():
    assert issubclass(ColumnWarning, UserWarning)
    assert issubclass(NumbersAsTextWarning, ColumnWarning)
    assert issubclass(NearUniqueColumnWarning, ColumnWarning)
    import tabmoe

    assert tabmoe.NumbersAsTextWarning is NumbersAsTextWarning
    assert tabmoe.NearUniqueColumnWarning is NearUniqueColumnWarning


def test_numbers_as_text_one_warning_naming_every_column():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "price": _prices(rng),
            "colour": rng.choice(["red", "blue"], N),
            "weight": [f"{v:g}" for v in rng.normal(70, 10, N).round(1)],
        }
    )
    caught = _fit_warnings(X)
    assert [w.category for w in caught] == [NumbersAsTextWarning]
    message = str(caught[0].message)
    assert "'price'" in message and "'weight'" in message and "'colour'" not in message
    assert "pd.to_numeric" in message and "categorical_features" in message
    assert caught[0].filename == __file__  # points at the user's fit


def test_numbers_as_text_with_missing_and_string_dtype_and_exponents():
    rng = np.random.default_rng(1)
    values = _prices(rng)
    values[::7] = [None] * len(values[::7])
    values[1] = "-1e3"
    X = pd.DataFrame({"a": pd.array(values, dtype="string"), "b": values})
    X.loc[3, "b"] = np.nan
    caught = _fit_warnings(X)
    assert len(caught) == 1 and "'a'" in str(caught[0].message) and "'b'" in str(caught[0].message)


def test_numbers_as_text_in_an_object_array():
    rng = np.random.default_rng(2)
    X = np.column_stack([np.array(_prices(rng), dtype=object), rng.choice(["x", "y"], N)])
    caught = _fit_warnings(X)
    assert len(caught) == 1 and caught[0].category is NumbersAsTextWarning
    assert "[0]" in str(caught[0].message)


def test_low_cardinality_codes_stay_quiet_and_the_threshold_has_two_sides():
    rng = np.random.default_rng(3)
    quiet = pd.DataFrame({"rating": _codes(rng, 5), "day": _codes(rng, 31)})
    assert _fit_warnings(quiet) == []
    loud = pd.DataFrame({"rating": _codes(rng, 5), "age": _codes(rng, 32)})
    caught = _fit_warnings(loud)
    assert len(caught) == 1 and "'age'" in str(caught[0].message)
    assert "'rating'" not in str(caught[0].message)


def test_explicit_choices_stay_quiet():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"price": _quarters(rng), "colour": rng.choice(["red", "blue"], N)})
    assert len(_fit_warnings(X)) == 1
    assert _fit_warnings(X.astype({"price": "category"})) == []  # the user's choice
    assert _fit_warnings(X, categorical_features=["price", "colour"]) == []
    # the fix the message suggests: unlisted columns are read as numbers
    tokenizer = ColumnTokenizer(categorical_features=["colour"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ColumnWarning)
        tokenizer.fit(X)
    assert tokenizer.is_categorical_.tolist() == [False, True]
    assert _fit_warnings(X.assign(price=pd.to_numeric(X["price"]))) == []


def test_codes_with_leading_zeros_are_not_numbers():
    rng = np.random.default_rng(5)
    zips = [
        f"{v:05d}" for v in rng.choice(np.arange(500, 100_000, 500), N)
    ]  # 19 of 199 start with 0
    assert _fit_warnings(pd.DataFrame({"zip": zips})) == []


def test_text_that_is_not_all_numbers_stays_quiet():
    rng = np.random.default_rng(6)
    values = _codes(rng, 80)
    values[10] = "n/a"
    assert _fit_warnings(pd.DataFrame({"mostly": values})) == []


def test_near_unique_column_is_named():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(
        {
            "customer": [f"C{i:06d}" for i in rng.permutation(N)],
            "when": pd.date_range("2020-01-01", periods=N, freq="h").astype(str),
            "colour": rng.choice(["red", "blue"], N),
        }
    )
    caught = _fit_warnings(X)
    assert [w.category for w in caught] == [NearUniqueColumnWarning]
    message = str(caught[0].message)
    assert "'customer'" in message and "'when'" in message and "'colour'" not in message
    assert "100%" in message  # share of rows whose value occurs once: the expected UNKNOWN rate


def test_near_unique_threshold_both_sides():
    # 60% of the rows hold a value of their own: warned
    own = [f"id{i}" for i in range(180)] + [f"g{i % 30}" for i in range(120)]
    # 40%: the others are repeated categories, most new rows hold a known one
    some = [f"id{i}" for i in range(120)] + [f"g{i % 30}" for i in range(180)]
    X = pd.DataFrame({"own": own, "some": some})
    caught = _fit_warnings(X)
    assert len(caught) == 1 and "'own'" in str(caught[0].message)
    assert "'some'" not in str(caught[0].message)


def test_near_unique_needs_fifty_values_of_their_own():
    def column(own: int) -> list[str]:  # ``own`` values of their own, 20 rows in repeats
        return [f"id{i}" for i in range(own)] + ["a", "b"] * 10

    assert _fit_warnings(pd.DataFrame({"name": column(49)})) == []
    caught = _fit_warnings(pd.DataFrame({"name": column(50)}))
    assert [w.category for w in caught] == [NearUniqueColumnWarning]


def test_near_unique_is_warned_whatever_the_declared_type():
    # a category dtype or categorical_features keeps numbers as text quiet, not an id
    ids = pd.Series([f"C{i:06d}" for i in range(N)])
    for X, params in (
        (pd.DataFrame({"id": ids.astype("category")}), {}),
        (pd.DataFrame({"id": ids}), {"categorical_features": ["id"]}),
        (pd.DataFrame({"id": ids}), {"vocabulary": "shared"}),
    ):
        caught = _fit_warnings(X, **params)
        assert [w.category for w in caught] == [NearUniqueColumnWarning]


def test_near_unique_is_not_warned_when_min_frequency_folds_the_singletons():
    X = pd.DataFrame({"id": [f"C{i:06d}" for i in range(N)]})
    assert [w.category for w in _fit_warnings(X)] == [NearUniqueColumnWarning]
    assert "min_frequency=2" in str(_fit_warnings(X)[0].message)
    assert _fit_warnings(X, min_frequency=2) == []


def test_tiny_tables_do_not_warn():
    X = pd.DataFrame({"name": [f"n{i}" for i in range(30)], "x": [f"{i}.5" for i in range(30)]})
    assert _fit_warnings(X) == []


def test_a_column_is_warned_about_once():
    rng = np.random.default_rng(9)
    X = pd.DataFrame(
        {
            "price": _prices(rng),  # near-unique numbers: numbers as text only
            "account": [
                str(100000 + i) for i in rng.permutation(N)
            ],  # integers, one per row: an id
        }
    )
    caught = _fit_warnings(X)
    by_kind = {w.category: str(w.message) for w in caught}
    assert len(caught) == 2
    assert (
        "'price'" in by_kind[NumbersAsTextWarning]
        and "'account'" not in by_kind[NumbersAsTextWarning]
    )
    assert (
        "'account'" in by_kind[NearUniqueColumnWarning]
        and "'price'" not in by_kind[NearUniqueColumnWarning]
    )


@pytest.mark.parametrize("name", ["tabmoe", "ft_transformer", "logistic_regression"])
def test_each_model_warns_once_per_fit(name):
    rng = np.random.default_rng(10)
    X = pd.DataFrame({"price": _prices(rng), "colour": rng.choice(["red", "blue"], N)})
    y = rng.integers(0, 2, N)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CLASSIFIER_FACTORIES[name]().fit(X, y)
    ours = [w for w in caught if issubclass(w.category, ColumnWarning)]
    assert len(ours) == 1 and ours[0].filename == __file__


def test_estimator_with_unlabeled_rows_warns_once():
    rng = np.random.default_rng(11)
    X = pd.DataFrame({"price": _prices(rng), "colour": rng.choice(["red", "blue"], N)})
    y = rng.integers(0, 2, N)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, y, X_unlabeled=X)
    assert len([w for w in caught if issubclass(w.category, ColumnWarning)]) == 1


def test_numbers_as_bytes_fit_and_codes_with_leading_zeros_stay_quiet():
    """scipy.io.arff.loadarff gives nominal values as bytes: a column of more than 31 numeric
    codes as bytes was a TypeError at fit (pandas' .str.match refuses bytes)."""
    rng = np.random.default_rng(12)
    numbers = pd.DataFrame({"code": [str(v).encode() for v in _codes(rng, 40)]})
    caught = _fit_warnings(numbers)
    assert [w.category for w in caught] == [NumbersAsTextWarning]
    zeros = pd.DataFrame({"code": [f"{int(v):03d}".encode() for v in _codes(rng, 40)]})
    assert _fit_warnings(zeros) == []
    mixed = [f"{int(v):03d}" for v in _codes(rng, 40)]
    mixed[::2] = [v.encode() for v in mixed[::2]]
    assert _fit_warnings(pd.DataFrame({"code": mixed})) == []


def test_complex_numbers_are_not_numbers_as_text():
    # to_numeric parses complex numbers: they were "numbers as text" (whose advice,
    # pd.to_numeric, gives a column fit refuses), with numpy's ComplexWarning from the check
    X = pd.DataFrame({"z": pd.Series([complex(i, 1) for i in range(40)], dtype=object)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = ColumnTokenizer().fit(X)
    assert tok.is_categorical_.tolist() == [True]
