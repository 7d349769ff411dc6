"""What a user is told: save refusals name the column or the labels, the unseen-value
warning shows values as Python values (2 and '2' differ), and the tokenizer's output
names follow scikit-learn's ``input_features`` rule."""

import decimal

import numpy as np
import pandas as pd
import pytest

from tabmoe import ColumnTokenizer, TabularMoEClassifier

FAST = dict(max_epochs=1, random_state=0, device="cpu")


def _frame(n=60):
    r = np.random.default_rng(0)
    X = pd.DataFrame({"a": r.choice(["x", "y"], n), "code": r.integers(1, 4, n).astype(str)})
    return X, np.where(X["a"] == "x", "yes", "no")


def test_a_value_save_cannot_write_is_named_with_its_column(tmp_path):
    X, y = _frame()
    X["price"] = pd.Series([decimal.Decimal("1.5"), decimal.Decimal("2.5")] * 30, dtype=object)
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    with pytest.raises(TypeError, match=r"Cannot save category value Decimal\('1.5'\) of type Decimal in column 'price'"):
        clf.save(tmp_path / "m.tabmoe")


def test_a_label_save_cannot_write_is_called_a_class_label(tmp_path):
    X, y = _frame()
    labels = np.array([decimal.Decimal(1) if v == "yes" else decimal.Decimal(2) for v in y], dtype=object)
    clf = TabularMoEClassifier(**FAST).fit(X, labels.astype(str))  # str labels fit and save
    clf.classes_ = np.array([decimal.Decimal(1), decimal.Decimal(2)], dtype=object)  # as if fitted on them
    with pytest.raises(TypeError, match=r"Cannot save class label Decimal\('1'\) of type Decimal:"):
        clf.save(tmp_path / "m.tabmoe")


def test_the_unseen_value_warning_tells_an_int_from_a_str():
    X, y = _frame()
    clf = TabularMoEClassifier(**FAST).fit(X, y)  # "code" holds the strings '1', '2', '3'
    with pytest.warns(UserWarning, match=r"Column 'code': .* \(e\.g\. \[\d(, \d)*\]\)"):
        clf.predict(X.assign(code=X["code"].astype(int)))


def test_feature_names_out_follow_input_features():
    X, _ = _frame()
    tok = ColumnTokenizer().fit(X)
    np.testing.assert_array_equal(tok.get_feature_names_out(), ["a", "code"])
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        tok.get_feature_names_out(["b", "code"])
    unnamed = ColumnTokenizer().fit(X.to_numpy())
    np.testing.assert_array_equal(unnamed.get_feature_names_out(), ["x0", "x1"])
    np.testing.assert_array_equal(unnamed.get_feature_names_out(["p", "q"]), ["p", "q"])


def test_exclude_predicts_without_some_fitted_columns_but_not_without_all():
    X, y = _frame()
    clf = TabularMoEClassifier(**FAST, missing="exclude").fit(X, y)
    assert clf.predict_proba(X[["a"]]).shape == (len(X), 2)
    with pytest.raises(ValueError, match=r"\['a', 'code'\] seen during fit are absent from X\. missing='exclude' "
                                         r"predicts without some of them, not without all"):
        clf.predict_proba(pd.DataFrame(index=range(3)))
