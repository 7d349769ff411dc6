"""What a user is told: save refusals name the column or the labels, the unseen-value
warning shows values as Python values (2 and '2' differ), the tokenizer's output
names follow scikit-learn's ``input_features`` rule, and columns absent or renamed at
predict are matched or named by their labels, strings or not."""

import datetime
import decimal
import re
import warnings

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
    # said at fit already, not only after the training (the first-hour review, D9)
    with pytest.warns(UserWarning, match=r"Cannot save category value Decimal\('1.5'\) of type Decimal in column "
                                         r"'price'.* The model fits and predicts, but save\(\) will raise: convert them before fit\.$"):
        clf = TabularMoEClassifier(**FAST).fit(X, y)
    with pytest.raises(TypeError, match=r"Cannot save category value Decimal\('1.5'\) of type Decimal in column 'price'"):
        clf.save(tmp_path / "m.tabmoe")


def test_date_objects_are_named_at_fit_with_how_to_bin_them_as_dates():
    # datetime.date objects (SQL drivers, Series.dt.date) stay an object column: categories
    X, y = _frame()
    X["day"] = [datetime.date(2020, 1, 1 + i % 28) for i in range(len(X))]
    with pytest.warns(UserWarning, match=r"of type date in column 'day'.*convert them before fit \(dates: pd\.to_datetime"):
        TabularMoEClassifier(**FAST).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converted, or without such values: no warning
        TabularMoEClassifier(**FAST).fit(X.assign(day=pd.to_datetime(X["day"])), y)
        TabularMoEClassifier(**FAST).fit(X.drop(columns="day"), y)


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


@pytest.mark.parametrize("labels", [list("abcdefgh"), [0, 1, 2, 3, 4, 5, 6, 7, 8][1:], [("t", 1), ("t", 2), 3, 4, 5, 6, 7, 8]])
@pytest.mark.parametrize("kept", [[1, 3, 7], [0], [0, 1, 2, 3, 4, 5, 6]])
def test_exclude_rebuilds_the_fitted_columns_with_their_dtypes_and_labels(labels, kept):
    """missing="exclude": X's columns come back by position among the fitted ones (dtypes,
    values, labels, index kept), each absent one float64 NaN (a positional take, not a Series
    per column)."""
    from tabmoe._frame import fitted_columns, label_reprs

    X = pd.DataFrame({
        0: [1, 2, 3], 1: pd.Categorical(["x", "y", None]), 2: pd.to_datetime(["2020", "2021", None]).tz_localize("UTC"),
        3: pd.array([1, None, 3], dtype="Int64"), 4: np.array(["p", None, "q"], dtype=object),
        5: pd.array(["u", "v", None], dtype="string"), 6: [True, False, True], 7: [1.5, 2.5, np.nan],
    }, index=[5, 5, 7]).set_axis(pd.Index(labels, dtype=object, tupleize_cols=False), axis=1)
    strings = all(isinstance(v, str) for v in labels)
    names = np.asarray(labels, dtype=object) if strings else None
    got = fitted_columns(X.iloc[:, kept], names, None if strings else label_reprs(X.columns), "exclude")
    assert got.columns.tolist() == labels and got.index.tolist() == [5, 5, 7]
    for j in range(8):
        if j in kept:
            pd.testing.assert_series_equal(got.iloc[:, j], X.iloc[:, j])
        else:
            assert got.iloc[:, j].dtype == np.float64 and got.iloc[:, j].isna().all()


def test_other_columns_named_absent_and_extra_in_their_order():
    """check_other_columns names the columns X_val lacks and those X lacks, in order (by a set,
    not a scan of the list per label)."""
    from tabmoe._frame import check_other_columns

    X = pd.DataFrame(np.zeros((2, 5)), columns=list("abcde"))
    with pytest.raises(ValueError, match=re.escape("(lacks ['b', 'd']; ['z', 'y'] not in X)")):
        check_other_columns(X, X[["a", "c", "e"]].assign(z=0, y=0), True, "X_val")


@pytest.mark.parametrize("missing", ["token", "exclude"])
def test_reordered_columns_are_refused_with_or_without_exclude(missing):
    # with missing='exclude' a reordered subset was realigned by name while the reordered full
    # set was refused ("same order"), as every reordering is without it
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "f": rng.choice(["x", "y"], 60), "g": rng.normal(size=60)})
    clf = TabularMoEClassifier(**FAST, missing=missing).fit(X, np.where(X["a"] > 0, "p", "q"))
    with pytest.raises(ValueError, match="same order"):
        clf.predict(X[["g", "a", "f"]])
    if missing == "exclude":
        np.testing.assert_array_equal(clf.predict_proba(X[["a", "g"]]), clf.predict_proba(X.assign(f=None)))
        with pytest.raises(ValueError, match=r"same order as they were in fit: fitted \['a', 'f', 'g'\], got "
                                             r"\['g', 'a'\]; missing='exclude' accepts absent columns"):
            clf.predict(X[["g", "a"]])
    unnamed = TabularMoEClassifier(**FAST, missing=missing).fit(X.to_numpy(), np.where(X["a"] > 0, "p", "q"))
    with pytest.raises(ValueError, match="same order"):
        unnamed.predict(X.set_axis([0, 1, 2], axis=1)[[2, 0, 1]])
    if missing == "exclude":
        with pytest.raises(ValueError, match=r"fitted \[0, 1, 2\], got \[2, 0\]"):
            unnamed.predict(X.set_axis([0, 1, 2], axis=1)[[2, 0]])


def _int_labelled(n=60):
    X, y = _frame(n)
    return X.assign(size=np.arange(n) % 7).set_axis([10, 20, 30], axis=1), y


@pytest.mark.parametrize("labels", [[10, 20, 30], [("a", 1), ("b", 2), ("c", 3)]], ids=["int", "tuple"])
def test_exclude_matches_non_string_column_labels_as_names(labels, tmp_path):
    # only string names were matched: "X has 2 features, but ... is expecting 3"
    X, y = _int_labelled()
    X.columns = pd.MultiIndex.from_tuples(labels) if isinstance(labels[0], tuple) else labels
    clf = TabularMoEClassifier(**FAST, missing="exclude").fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    for model in (clf, TabularMoEClassifier.load(tmp_path / "m.tabmoe")):  # labels kept as reprs
        without, middle_missing = X.drop(columns=[labels[1]]), X.copy()
        middle_missing[labels[1]] = np.nan
        expected = model.predict_proba(middle_missing)
        np.testing.assert_allclose(model.predict_proba(without), expected, rtol=1e-6)
        with pytest.raises(ValueError, match="same order"):  # as without missing='exclude'
            model.predict_proba(without.iloc[:, ::-1])
        explanation = model.explain(without[:3])
        assert list(explanation.gates.columns)[:3] == labels  # the absent column too, by its label
        assert (explanation.gates[labels[1]] == 0).all()
    with pytest.raises(ValueError, match=r"seen during fit are absent from X\. missing='exclude' predicts"):
        clf.predict(X[[]])
    token = TabularMoEClassifier(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=rf"Column\(s\) \[{re.escape(repr(labels[1]))}\] seen during fit are absent "
                                         r"from X\. Create the estimator with missing='exclude'"):
        token.predict(X.drop(columns=[labels[1]]))


def test_a_column_renamed_by_case_whitespace_or_unicode_form_is_named_with_the_rename():
    # "Age" or "age " for "age" (a CSV header's accident), or "é" decomposed for "é" composed,
    # which printed alike: "Column(s) ['âge'] ... absent from X, and X has column(s) ['âge']"
    from sklearn.linear_model import LogisticRegression

    from tabmoe.baselines import EncodedClassifier

    X, y = _frame()
    X = X.rename(columns={"a": "âge"})
    decomposed = "a\u0302ge"
    renamed = X.rename(columns={"âge": decomposed, "code": " Code"})
    rename = re.escape(f"rename them, X.rename(columns={{{decomposed!r}: 'âge', ' Code': 'code'}}).")
    for model in (TabularMoEClassifier(**FAST), EncodedClassifier(LogisticRegression()), ColumnTokenizer()):
        model.fit(X, y)
        method = model.transform if isinstance(model, ColumnTokenizer) else model.predict
        with pytest.raises(ValueError, match=r"differ from the fitted \['âge', 'code'\] only in letter case, "
                                             r"whitespace or Unicode normalization \(in ASCII, 'a\\u0302ge' for "
                                             rf"'\\xe2ge'\): {rename}$"):
            method(renamed)
    plain = X.rename(columns={"code": "kode"})
    for method in (TabularMoEClassifier(**FAST).fit(X, y).predict, ColumnTokenizer().fit(X).transform):
        with pytest.raises(ValueError, match="kode") as refused:  # not a near rename: no guess
            method(plain)
        assert "rename" not in str(refused.value)


def test_renamed_non_string_columns_are_refused_naming_them():
    # a renaming of int labels was read by position, silently
    X, y = _int_labelled()
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=r"Column\(s\) \[20, 30\] seen during fit are absent from X, and X has "
                                         r"column\(s\) \[2, 3\] not seen during fit"):
        clf.predict(X.set_axis([10, 2, 3], axis=1))
    with pytest.raises(ValueError, match=r"^X has column\(s\) \[40\] not seen during fit\.$"):
        clf.predict(X.assign(**{"x": 0}).set_axis([10, 20, 30, 40], axis=1))
    with pytest.raises(ValueError, match="same order"):
        clf.predict(X[[20, 10, 30]])
    with pytest.raises(ValueError, match=r"Column\(s\) \[30\] seen during fit .* column\(s\) \[3\] not seen"):
        clf.tokenizer_.transform(X.set_axis([10, 20, 3], axis=1))
    # the hint to use missing='exclude' only where it would help: not with extra columns
    with pytest.raises(ValueError, match=r"not seen during fit\.$"):
        clf.predict(X.set_axis([10, 2, 3], axis=1))


def test_arrays_are_read_by_position_after_a_fit_on_int_labels():
    # the array became a frame labelled 0..n-1, refused as "[10, 20, 30] ... absent from X"
    X, y = _int_labelled()
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    expected = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.predict_proba(X.to_numpy()), expected)
    np.testing.assert_array_equal(clf.tokenizer_.transform(X.to_numpy()), clf.tokenizer_.transform(X))
    assert list(clf.explain(X.to_numpy()[:2]).gates.columns)[:3] == [10, 20, 30]


def test_a_fit_on_an_array_reads_other_frames_by_position_and_its_own_labels_by_label():
    # fitted without labels (an array: columns 0..n-1): arrays are read by position, so are
    # frames with string names (with scikit-learn's warning) and frames with other labels
    # (as scikit-learn reads them); frames with labels among 0..n-1 are matched by label
    X, y = _int_labelled()
    unnamed = TabularMoEClassifier(**FAST).fit(X.to_numpy(), y)
    expected = unnamed.predict_proba(X.to_numpy())
    np.testing.assert_array_equal(unnamed.predict_proba(X.set_axis([0, 1, 2], axis=1)), expected)
    np.testing.assert_array_equal(unnamed.predict_proba(X), expected)  # labels 10, 20, 30
    with pytest.warns(UserWarning, match="X has feature names"):
        np.testing.assert_array_equal(unnamed.predict_proba(X.set_axis(["p", "q", "r"], axis=1)), expected)
    with pytest.raises(ValueError, match="same order"):
        unnamed.predict(X.set_axis([2, 0, 1], axis=1))
    # labels of 0..n-1 out of their place: matched by label, so refused (they were read by position)
    with pytest.raises(ValueError, match=r"Column\(s\) \[2\] seen during fit are absent from X, and X has column\(s\) \[5\]"):
        unnamed.predict(X.set_axis([1, 0, 5], axis=1))
    np.testing.assert_array_equal(unnamed.predict_proba(X.set_axis([0, 1, 5], axis=1)), expected)  # in place
    with pytest.raises(ValueError, match="same order"):  # numpy ints in an object index too
        unnamed.predict(X.set_axis(pd.Index([np.int64(2), np.int64(0), np.int64(1)], dtype=object), axis=1))
    exclude = TabularMoEClassifier(**FAST, missing="exclude").fit(X.to_numpy(), y)  # read_csv(header=None)
    middle_missing = X.set_axis([0, 1, 2], axis=1)
    middle_missing[1] = np.nan
    np.testing.assert_allclose(exclude.predict_proba(middle_missing[[0, 2]]), exclude.predict_proba(middle_missing))


@pytest.mark.parametrize("missing", ["token", "exclude"])
@pytest.mark.parametrize("columns", [["a", "a", "c"], [10, 20, 20]])
def test_duplicate_column_labels_are_refused_naming_them(missing, columns):
    # with missing='exclude' and a fitted column absent, the last of two duplicates was used, silently
    X, y = _int_labelled()
    clf = TabularMoEClassifier(**FAST, missing=missing).fit(X.set_axis(["a", "b", "c"] if columns[0] == "a" else [10, 20, 30], axis=1), y)
    with pytest.raises(ValueError, match=rf"Column names must be unique; duplicated: \[{re.escape(repr(columns[1 if columns[0] == 'a' else 2]))}\]"):
        clf.predict(X.set_axis(columns, axis=1))


def test_a_frame_after_a_fit_on_an_array_warns_once_and_the_reverse_too():
    # the estimator's warning came again from its tokenizer ("... but ColumnTokenizer was fitted")
    X, y = _frame()
    for fitted_on, given, message in ((X.to_numpy(), X, "X has feature names, but TabularMoEClassifier"),
                                      (X, X.to_numpy(), "X does not have valid feature names, but TabularMoEClassifier")):
        clf = TabularMoEClassifier(**FAST).fit(fitted_on, y)
        expected = clf.predict_proba(fitted_on)
        proba, explanation = [], []
        for run, out in ((clf.predict_proba, proba), (clf.explain, explanation)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out.append(run(given))
            messages = [str(w.message) for w in caught if "feature names" in str(w.message)]
            assert len(messages) == 1 and message in messages[0], messages
        np.testing.assert_array_equal(proba[0], expected)  # read by position
        assert list(explanation[0].gates.columns)[:2] == (["a", "code"] if fitted_on is X else [0, 1])  # the fit's labels


@pytest.mark.parametrize("columns", [[0, 1, 2], pd.MultiIndex.from_tuples([("x", "a"), ("x", "b"), ("y", "c")])])
def test_reordered_non_string_labels_are_printed_as_written(columns):
    # the tokenizer printed the labels' reprs quoted: ['0', '1', '2'], ["('x', 'a')", ...]
    X = pd.DataFrame(np.arange(12.0).reshape(4, 3), columns=columns)
    tok = ColumnTokenizer().fit(X)
    shown = [repr(label) for label in X.columns]
    fitted, got = ", ".join(shown), ", ".join(shown[j] for j in (2, 0, 1))
    with pytest.raises(ValueError, match=re.escape(f"fitted [{fitted}], got [{got}].")):
        tok.transform(X.iloc[:, [2, 0, 1]])


def test_column_errors_of_wide_tables_say_how_many_and_where_the_order_parts():
    """The lists of column errors stop at ten: 30 int-labelled columns with the last two
    swapped were refused as "fitted [1, 2, ..., 10, ...], got [1, 2, ..., 10, ...]", two
    identical lists, and 15 absent columns were ten names and "...". The lists now say how
    many there are, and an order error where they first differ beyond the tenth."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 30)), columns=range(1, 31))
    y = np.arange(40) % 2
    cols = [*range(1, 29), 30, 29]
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=re.escape(
            "10, ... (30 in all)], got [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... (30 in all)], first differing at "
            "position 28: fitted 29, got 30.")):
        clf.predict(X[cols])
    with pytest.raises(ValueError, match=re.escape("Column(s) [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, ... (15 in all)] seen")):
        clf.predict(X.iloc[:, :15])
    with pytest.raises(ValueError, match=re.escape("(in another order, first differing at position 28: X 29, eval_set's X_val 30)")):
        TabularMoEClassifier(**FAST).fit(X, y, eval_set=(X[cols], y))
    exclude = TabularMoEClassifier(**FAST, missing="exclude").fit(X, y)
    with pytest.raises(ValueError, match=re.escape("(29 in all)], first differing at position 27: fitted 29, got 30; missing=")):
        exclude.predict(X[cols].drop(columns=[3]))


def test_eval_set_columns_of_other_labels_are_named_as_eval_sets():
    # a reordered or absent int label in eval_set's X_val was the tokenizer's error about "X"
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 3)))
    y = np.arange(60) % 2
    for X_val, detail in ((X[[2, 0, 1]], r"\[2, 0, 1\] \(in another order\)"), (X[[0, 1]], r"\[0, 1\] \(lacks \[2\]\)")):
        with pytest.raises(ValueError, match=rf"^eval_set's X_val must have the same columns as X, in the same "
                                             rf"order: X has \[0, 1, 2\], eval_set's X_val has {detail}\.$"):
            TabularMoEClassifier(**FAST).fit(X, y, eval_set=(X_val, y))
    # labels that predict reads by position are read so here too, those it refuses are refused
    assert TabularMoEClassifier(**FAST).fit(X, y, eval_set=(X.set_axis([5, 6, 7], axis=1), y)).n_iter_ >= 1
    named = X.set_axis(["a", "b", "c"], axis=1)
    with pytest.raises(ValueError, match=r"X_val has \[0, 1, 2\] \(lacks \['a', 'b', 'c'\]; \[0, 1, 2\] not in X\)"):
        TabularMoEClassifier(**FAST).fit(named, y, eval_set=(X, y))


def test_every_column_save_cannot_write_is_named_at_fit():
    """The warning named the first such column only; fixing it, the next fit named the next."""
    X, y = _frame()
    X["price"] = pd.Series([decimal.Decimal("1.5"), decimal.Decimal("2.5")] * 30, dtype=object)
    X["day"] = [datetime.date(2020, 1, 1 + i % 28) for i in range(len(X))]
    with pytest.warns(UserWarning, match=r"in column 'price'.* Nor can values in column 'day'\. The model fits and "
                                         r"predicts, but save\(\) will raise: convert them before fit \(dates: pd\.to_datetime"):
        TabularMoEClassifier(**FAST).fit(X, y)


def test_a_column_whose_kept_and_rare_values_save_cannot_write_is_named_once():
    """A column's kept categories and its rare ones (min_frequency) are checked apart: the
    warning named the first column a second time ("... in column 'price'. Nor can values in
    column 'price'.")."""
    X, y = _frame()
    X["price"] = pd.Series([decimal.Decimal(i % 3) for i in range(len(X) - 1)] + [decimal.Decimal(99)], dtype=object)
    with pytest.warns(UserWarning, match=r"in column 'price'") as caught:
        TabularMoEClassifier(**FAST, min_frequency=2).fit(X, y)
    message = next(str(w.message) for w in caught if "save()" in str(w.message))
    assert "Nor can" not in message and message.count("'price'") == 1, message
