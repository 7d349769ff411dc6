import datetime
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from tabmoe import TabularMoEClassifier
from tabmoe import tokenizer as tokenizer_module
from tabmoe.tokenizer import MASK, MISSING, N_SPECIAL, UNKNOWN, ColumnTokenizer


def test_reserved_ids_and_per_column_ranges():
    X = pd.DataFrame({"a": ["x", "y", "x", None], "b": [1.0, 2.0, np.nan, 4.0]})
    tok = ColumnTokenizer(n_bins=10).fit(X)
    t = tok.transform(X)
    assert (MASK, MISSING, UNKNOWN, N_SPECIAL) == (0, 1, 2, 3)
    assert tok.is_categorical_.tolist() == [True, False]
    assert t[3, 0] == MISSING and t[2, 1] == MISSING
    # column a owns [3, 5), column b (3 distinct values -> 3 bins) owns [5, 8)
    assert tok.offsets_.tolist() == [3, 5]
    assert tok.n_tokens_per_column_.tolist() == [2, 3]
    assert tok.n_tokens_ == 8
    assert t[:3, 0].tolist() == [3, 4, 3]
    assert t[[0, 1, 3], 1].tolist() == [5, 6, 7]
    assert t.dtype == np.int16


def test_unseen_category_warns_with_column_and_rate():
    tok = ColumnTokenizer().fit(pd.DataFrame({"city": ["a", "b", "a"]}))
    with pytest.warns(UserWarning, match=r"'city'.*1 value\(s\) \(50.0% of rows\)"):
        t = tok.transform(pd.DataFrame({"city": ["a", "zzz"]}))
    assert t[1, 0] == UNKNOWN


def test_unseen_long_texts_are_cut_in_the_warning():
    # a text of 10^6 characters unseen at fit made a warning of 10^6 characters
    tok = ColumnTokenizer().fit(pd.DataFrame({"note": ["a", "b"]}))
    long_text = "z" * 1_000_000
    with pytest.warns(UserWarning) as record:
        tok.transform(pd.DataFrame({"note": [long_text, "short", long_text]}))
    [message] = [str(w.message) for w in record]
    assert len(message) < 500
    assert f"e.g. ['{'z' * 99}... (1,000,002 characters), 'short']" in message


def test_a_long_text_in_a_numeric_column_is_cut_in_the_error():
    # pandas' message quotes the value: a text of 10^6 characters made an error as long
    tok = ColumnTokenizer().fit(pd.DataFrame({"x": [1.0, 2.0]}))
    with pytest.raises(TypeError, match=r"Column 'x' is numeric .*'qqq+\.\.\. \(1,000,002 characters\) of type str in the "
                       r"row with index 1\)\. If it is") as error:
        tok.transform(pd.DataFrame({"x": ["1", "q" * 1_000_000]}))
    assert len(str(error.value)) < 500


def test_a_non_numeric_value_is_named_with_its_row_in_x_not_in_its_batch():
    # pandas gives the value's position in the rows passed: predict tokenizes batches, and a
    # bad value in row 66,000 of X was "at position 464"; an object (a date, a tuple) was
    # "Invalid object type at position 0", without the value
    tok = ColumnTokenizer().fit(pd.DataFrame({"price": np.arange(10.0)}))
    prices = pd.Series(np.arange(100.0), dtype=object)
    prices[57] = "12,5"
    with pytest.raises(TypeError, match=r"Column 'price' .*\(e\.g\. '12,5' of type str in the row with index 57\)"):
        list(tok.transform_batches(pd.DataFrame({"price": prices}), 10))
    dates = pd.DataFrame({"day": [None, datetime.date(2020, 1, 2)]}, index=["a", "b"])
    with pytest.raises(TypeError, match=r"datetime\.date\(2020, 1, 2\) of type date in the row with index 'b'; "
                       r"dates or times held as Python objects: convert the column with pd\.to_datetime"):
        ColumnTokenizer(categorical_features=[]).fit(dates)


def test_the_value_named_is_one_to_numeric_refuses_not_an_empty_text_it_reads_as_missing():
    # to_numeric reads "" (and b"") as NaN, without an error: the first value it *coerces*
    # to NaN was named, so "" was blamed for the 'abc' after it (pandas had said 'abc')
    tok = ColumnTokenizer().fit(pd.DataFrame({"x": [1.0, 2.0, 3.0]}))
    values = pd.Series(["1", "", b"", "2", "abc", ""], dtype=object)
    with pytest.raises(TypeError, match=r"\(e\.g\. 'abc' of type str in the row with index 4\)"):
        tok.transform(pd.DataFrame({"x": values}))


def test_the_row_of_a_non_numeric_value_is_its_label_as_written_not_numpys_repr():
    # a filtered frame's index is int64, not a RangeIndex: its label read "np.int64(66000)"
    tok = ColumnTokenizer().fit(pd.DataFrame({"x": [1.0, 2.0, 3.0]}))
    rows = pd.DataFrame({"x": pd.Series(["1", "n/a", "2"], dtype=object, index=[65999, 66000, 66001])})
    with pytest.raises(TypeError, match=r"'n/a' of type str in the row with index 66000\)"):
        tok.transform(rows)


def test_transform_batches_equal_transform_and_warn_once_for_all_rows():
    """Batches of 3 rows: the same tokens as one transform, and one unseen-value warning per
    column whose count, rate and examples cover every batch (values in later batches too)."""
    tok = ColumnTokenizer().fit(pd.DataFrame({"city": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]}))
    X = pd.DataFrame({"city": ["a", "u1", "b", "a", "u2", "u1", "b", "u3", "u4", "a"], "x": 1.0})
    with pytest.warns(UserWarning) as whole:
        expected = tok.transform(X)
    batches = tok.transform_batches(X, 3)
    with pytest.warns(UserWarning) as batched:
        parts = list(batches)
    assert [rows for rows, _ in parts] == [slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 10)]
    assert np.array_equal(np.concatenate([t for _, t in parts]), expected)
    messages = [str(w.message) for w in batched]
    assert messages == [str(w.message) for w in whole]
    assert messages == [
        "Column 'city': 5 value(s) (50.0% of rows) were not seen during fit and map to the "
        "UNKNOWN token (e.g. ['u1', 'u2', 'u3'])."
    ]


MISSING_WARNING = "are missing and map to the MISSING token, which fit never saw in this column."


def test_a_missing_value_in_a_column_that_held_none_at_fit_is_warned_once_per_column():
    """Was: read as MISSING, a token fit never saw in that column, in silence. Now one warning
    per column for all the batches (count, rate), as for unseen values; none for a column
    that held a missing value at fit. The tokens are unchanged."""
    tok = ColumnTokenizer().fit(pd.DataFrame({"city": ["a", "b", "a"], "x": [1.0, 2.0, 3.0], "y": [1.0, np.nan, 2.0]}))
    assert tok.missing_seen_ == [False, False, True]
    X = pd.DataFrame({"city": ["a", None, "b", "a", "b", None, "a", "b", "a", np.nan],
                      "x": [1.0, 2.0, np.nan, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0], "y": np.nan})
    with pytest.warns(UserWarning) as whole:
        expected = tok.transform(X)
    assert (expected == MISSING).sum(axis=0).tolist() == [3, 1, 10]
    messages = [f"Column 'city': 3 value(s) (30.0% of rows) {MISSING_WARNING}",
                f"Column 'x': 1 value(s) (10.0% of rows) {MISSING_WARNING}"]
    assert [str(w.message) for w in whole] == messages
    with pytest.warns(UserWarning) as batched:
        parts = list(tok.transform_batches(X, 3, unseen_note="Unseen.", missing_note="Missing."))
    assert np.array_equal(np.concatenate([t for _, t in parts]), expected)
    assert [str(w.message) for w in batched] == [f"{m} Missing." for m in messages]
    assert all(w.filename == __file__ for w in batched)  # the user's call
    with warnings.catch_warnings():  # None: a model that does not attend to MISSING
        warnings.simplefilter("error")
        assert np.array_equal(np.concatenate([t for _, t in tok.transform_batches(X, 3, missing_note=None)]), expected)
    with pytest.warns(UserWarning) as categorical_only:  # a reader of the numbers (the baselines' encoders)
        parts = list(tok.transform_batches(X, 3, numeric_missing=False))
    assert np.array_equal(np.concatenate([t for _, t in parts]), expected)
    assert [str(w.message) for w in categorical_only] == messages[:1]


def test_a_tokenizer_saved_before_missing_seen_does_not_warn_of_missing_values():
    tok = ColumnTokenizer().fit(pd.DataFrame({"city": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]}))
    X = pd.DataFrame({"city": ["a", None], "x": [np.nan, 2.0]})
    with pytest.warns(UserWarning, match=MISSING_WARNING):
        expected = tok.transform(X)
    pickled = pickle.loads(pickle.dumps(tok))
    del pickled.__dict__["missing_seen_"]
    state = tok._get_state()
    assert ColumnTokenizer._from_state(state).missing_seen_ == [False, False]  # saved and loaded
    del state["missing_seen"]
    for old in (pickle.loads(pickle.dumps(pickled)), ColumnTokenizer._from_state(state)):
        assert not hasattr(old, "missing_seen_")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # unknown whether fit saw one: no warning
            np.testing.assert_array_equal(old.transform(X), expected)
            np.testing.assert_array_equal(next(old.transform_batches(X, 2))[1], expected)


def test_transform_batches_checks_columns_before_the_first_batch():
    tok = ColumnTokenizer().fit(pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="same order"):
        tok.transform_batches(pd.DataFrame({"b": [1.0], "a": ["x"]}), 10)  # not iterated yet


def test_min_frequency_folds_rare_values_without_warning(recwarn):
    X = pd.DataFrame({"c": ["a"] * 5 + ["b"] * 5 + ["rare"]})
    tok = ColumnTokenizer(min_frequency=2).fit(X)
    t = tok.transform(X)
    assert t[-1, 0] == UNKNOWN
    assert tok.n_tokens_per_column_.tolist() == [2]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_an_unused_category_at_fit_is_reported_as_unseen():
    # OpenML tables declare every value as a category: "sep" may be declared yet absent
    # from the training rows. It is unseen, and warns as any unseen value does.
    cats = ["a", "b", "z"]
    tok = ColumnTokenizer().fit(pd.DataFrame({"c": pd.Categorical(["a", "b", "a"], categories=cats)}))
    for column in (pd.Categorical(["z", "a"], categories=cats), ["z", "a"]):
        with pytest.warns(UserWarning, match=r"'c'.*1 value\(s\) \(50.0% of rows\)"):
            t = tok.transform(pd.DataFrame({"c": column}))
        assert t[0, 0] == UNKNOWN


def test_an_object_array_with_pd_na_keeps_its_numeric_columns_numeric():
    X = pd.DataFrame({"n": pd.array([1, None, 3] * 10, dtype="Int64"), "c": list("abc") * 10})
    from_frame, from_array = ColumnTokenizer().fit(X), ColumnTokenizer().fit(X.to_numpy())
    assert from_frame.is_categorical_.tolist() == from_array.is_categorical_.tolist() == [False, True]
    np.testing.assert_array_equal(from_frame.transform(X), from_array.transform(X.to_numpy()))


def test_a_list_of_rows_mixing_numbers_and_text_keeps_its_numeric_columns_numeric():
    # numpy made such a list a str array ('1.5', 'True'): its numeric columns were read as
    # categories, unless one None made the array object, which keeps each value's type
    X = pd.DataFrame({"n": [0.5, 1.5, 2.5] * 10, "c": list("abc") * 10, "b": [True, False, True] * 10})
    rows = X.to_numpy().tolist()
    with_none = [list(r) for r in rows]
    with_none[0][1] = None
    from_frame = ColumnTokenizer().fit(X)
    for given in (rows, [tuple(r) for r in rows], with_none):
        tok = ColumnTokenizer().fit(given)
        assert tok.is_categorical_.tolist() == [False, True, True]
        assert tok.bin_edges_[0].tolist() == from_frame.bin_edges_[0].tolist()
        assert tok.categories_[2].tolist() == [False, True]
    np.testing.assert_array_equal(ColumnTokenizer().fit(rows).transform(rows), from_frame.transform(X))


def test_naive_and_time_zone_aware_datetimes_are_not_mixed():
    naive = pd.Series(pd.date_range("2020-06-01", periods=48, freq="h"))
    aware = naive.dt.tz_localize("Europe/Paris")
    for fit, other in ((naive, aware), (aware, naive)):
        tok = ColumnTokenizer(n_bins=48).fit(pd.DataFrame({"when": fit}))
        tok.transform(pd.DataFrame({"when": fit}))
        with pytest.raises(TypeError, match="'when' held .* datetimes at fit and holds"):
            tok.transform(pd.DataFrame({"when": other}))
    # another zone is the same instants: read as UTC, as before
    tok = ColumnTokenizer(n_bins=48).fit(pd.DataFrame({"when": aware}))
    np.testing.assert_array_equal(tok.transform(pd.DataFrame({"when": aware})),
                                  tok.transform(pd.DataFrame({"when": aware.dt.tz_convert("UTC")})))


def test_periods_are_binned_as_the_instants_they_start_at():
    # As ordinals (counts of their freq), months at fit and days at predict were on two
    # scales: every day fell in the last bin, silently; and NaT was read as -2**63.
    months = pd.Series(pd.period_range("2015-01", periods=48, freq="M"))
    tok = ColumnTokenizer(n_bins=12).fit(pd.DataFrame({"month": months}))
    assert tok._numeric_kinds == ["datetime"]
    expected = tok.transform(pd.DataFrame({"month": months}))
    assert len(np.unique(expected)) == 12
    for same in (months.dt.asfreq("D", how="start"), months.dt.asfreq("h", how="start"), months.dt.to_timestamp()):
        np.testing.assert_array_equal(tok.transform(pd.DataFrame({"month": same})), expected)
    with_nat = pd.Series([months[0], pd.NaT], dtype=months.dtype)
    assert tok.transform(pd.DataFrame({"month": with_nat}))[:, 0].tolist() == [expected[0, 0], MISSING]
    with pytest.raises(TypeError, match="'month' held datetime values at fit and holds number"):
        tok.transform(pd.DataFrame({"month": np.arange(48)}))
    with pytest.raises(TypeError, match="'month' held naive datetimes at fit"):
        tok.transform(pd.DataFrame({"month": months.dt.to_timestamp().dt.tz_localize("UTC")}))


def test_a_tokenizer_that_binned_period_ordinals_refuses_periods_saying_how_to_read_them_so():
    # fitted before periods were instants, a period column's kind was "number" (its ordinals)
    months = pd.Series(pd.period_range("2015-01", periods=48, freq="M"))
    old = ColumnTokenizer(n_bins=12).fit(pd.DataFrame({"month": months.array.asi8}))
    with pytest.raises(TypeError, match=r"held number values at fit .* pass X\['month'\]\.array\.asi8 to predict as it did"):
        old.transform(pd.DataFrame({"month": months}))
    ordinals = old.transform(pd.DataFrame({"month": months.array.asi8}))
    assert len(np.unique(ordinals)) == 12


def test_quantile_bins_and_numeric_extremes():
    x = np.arange(1000, dtype=float)
    tok = ColumnTokenizer(n_bins=4).fit(pd.DataFrame({"x": x}))
    counts = np.bincount(tok.transform(pd.DataFrame({"x": x}))[:, 0] - 3)
    assert counts.tolist() == [250, 250, 250, 250]
    t = tok.transform(pd.DataFrame({"x": [-1e9, 1e9]}))[:, 0]
    assert t.tolist() == [3, 6]


def _bins_of(values, n_bins=10):
    tok = ColumnTokenizer(n_bins=n_bins).fit(pd.DataFrame({"x": values}))
    return tok, tok.transform(pd.DataFrame({"x": values}))[:, 0]


def test_a_value_holding_many_rows_gets_a_bin_of_its_own():
    # 92% zeros: the quantiles below 0.9 are all 0. One edge on 0 put the zeros in a bin
    # with every positive value (one token for the whole column).
    rng = np.random.RandomState(0)
    gain = np.where(rng.rand(400) < 0.92, 0.0, rng.uniform(1, 1000, 400))
    tok, t = _bins_of(gain)
    assert len(set(t[gain == 0])) == 1 and not set(t[gain == 0]) & set(t[gain > 0])
    # one quantile on the minimum: still a bin of its own (two bins, 60% zeros)
    sixty = np.where(rng.rand(400) < 0.6, 0.0, rng.uniform(1, 10, 400))
    _, t = _bins_of(sixty, n_bins=2)
    assert set(t[sixty == 0]) != set(t[sixty > 0]) and len(set(t)) == 2
    below = tok.transform(pd.DataFrame({"x": [-5.0]}))[0, 0]
    assert below == t[gain == 0][0]  # below the training range: the first bin, not an unseen one
    # ... at the maximum: the mass alone, values below in bins of their own
    top = np.where(rng.rand(400) < 0.92, 5.0, rng.uniform(0, 5, 400))
    _, t = _bins_of(top)
    assert len(set(t[top == 5])) == 1 and not set(t[top == 5]) & set(t[top < 5])
    # ... inside the range: separated from its neighbours on both sides
    mid = np.where(rng.rand(400) < 0.5, 3.0, rng.uniform(0, 6, 400))
    _, t = _bins_of(mid)
    at = set(t[mid == 3])
    assert len(at) == 1 and not at & set(t[mid < 3]) and not at & set(t[mid > 3])
    assert t[mid < 3].max() < t[mid == 3][0] < t[mid > 3].min()  # the bins stay ordered


def test_distinct_continuous_values_keep_their_quantile_edges():
    x = np.random.RandomState(1).normal(size=1000)
    tok, _ = _bins_of(x)
    np.testing.assert_array_equal(tok.bin_edges_[0], np.quantile(x, np.linspace(0, 1, 11)[1:-1]))


def test_inf_is_rejected_naming_the_column():
    X = pd.DataFrame({"ok": [1.0, 2.0], "bad": [1.0, np.inf]})
    with pytest.raises(ValueError, match="infinity in column 'bad'"):
        ColumnTokenizer().fit(X)


def test_complex_numbers_in_a_numeric_object_column_are_refused_naming_it():
    # to_numeric gives complex: the float cast kept the real part (3+4j read as 3.0), with
    # numpy's ComplexWarning naming no column, at fit (declared numeric) and at predict
    complex_values = pd.DataFrame({"z": pd.Series([3 + 4j, 5.0, None], dtype=object)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning before the error
        with pytest.raises(ValueError, match=r"Complex data not supported \(column 'z'"):
            ColumnTokenizer(categorical_features=[]).fit(complex_values)
        tok = ColumnTokenizer().fit(pd.DataFrame({"z": [1.0, 2.0, 7.0]}))
        with pytest.raises(ValueError, match=r"Complex data not supported \(column 'z'"):
            tok.transform(complex_values)
    # read as categories (the default for an object column), each value is one
    tok = ColumnTokenizer().fit(complex_values)
    assert tok.transform(complex_values)[:, 0].tolist()[:2] == [N_SPECIAL + 0, N_SPECIAL + 1]


def test_categorical_features_by_name_index_and_mask():
    X = pd.DataFrame({"a": [1, 2, 3, 1], "b": [0.5, 0.1, 0.2, 0.3]})
    for spec in (["a"], [0], [True, False]):
        tok = ColumnTokenizer(categorical_features=spec).fit(X)
        assert tok.is_categorical_.tolist() == [True, False]
    with pytest.raises(ValueError, match="'nope'"):
        ColumnTokenizer(categorical_features=["nope"]).fit(X)
    with pytest.raises(ValueError, match="index 5 is out of range"):
        ColumnTokenizer(categorical_features=[5]).fit(X)


def test_a_bool_among_column_indices_is_refused_not_read_as_every_column():
    # [True, 1] is no mask (not all booleans): True was taken as an index, and mask[True] = True
    # made every column categorical (np.True_ was refused, as it is now)
    X = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 0.1, 0.2], "c": [4, 5, 6]})
    for spec in ([True, 1], [2, True], [0, False]):
        with pytest.raises(ValueError, match="must be column names or indices, got (True|False)"):
            ColumnTokenizer(categorical_features=spec).fit(X)
    assert ColumnTokenizer(categorical_features=[True, False, True]).fit(X).is_categorical_.tolist() == [True, False, True]


class _CountedLabel(str):
    """A column label counting the comparisons made with it."""

    comparisons = 0

    def __eq__(self, other):
        _CountedLabel.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_categorical_features_by_name_are_found_without_a_scan_per_name():
    # each name was searched for in the list of columns: 16,000 names took 2.2 s
    names = [f"c{j}" for j in range(400)]
    X = pd.DataFrame(np.zeros((2, 400)), columns=pd.Index([_CountedLabel(n) for n in names], dtype=object))
    tok = ColumnTokenizer(categorical_features=names[::2])
    _CountedLabel.comparisons = 0
    assert tok._categorical_mask(X).tolist() == [True, False] * 200
    assert _CountedLabel.comparisons <= 2 * 200


def test_categorical_features_lists_take_tuple_names_and_names_beside_indices():
    # np.asarray of the list made a tuple label (a MultiIndex frame's) a row of text, refused
    # as "entries must be column names or indices, got ['g', 'b']", and ["c", 0] all text,
    # index 0 refused as a column named '0'
    X = pd.DataFrame({("g", "a"): [1, 2, 3, 1], ("g", "b"): [0.5, 0.1, 0.2, 0.3], ("h", "c"): [4, 5, 6, 7]})
    for spec in ([("g", "a"), ("h", "c")], (("g", "a"), 2), [2, ("g", "a")], np.array([True, False, True])):
        tok = ColumnTokenizer(categorical_features=spec).fit(X)
        assert tok.is_categorical_.tolist() == [True, False, True]
    with pytest.raises(ValueError, match=r"names column \('g', 'x'\), which is not in X"):
        ColumnTokenizer(categorical_features=[("g", "x")]).fit(X)
    named = pd.DataFrame({"a": [1, 2, 3, 1], "b": [0.5, 0.1, 0.2, 0.3], "c": [4, 5, 6, 7]})
    tok = ColumnTokenizer(categorical_features=["c", 0]).fit(named)
    assert tok.is_categorical_.tolist() == [True, False, True]
    clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0, categorical_features=[("h", "c")])
    assert clf.fit(X, [0, 1, 0, 1]).tokenizer_.is_categorical_.tolist() == [False, False, True]


def test_shared_vocabulary_is_one_code_space():
    X = pd.DataFrame({"x0": [0, 1, 2], "x1": [2, 2, 0]})
    tok = ColumnTokenizer(vocabulary="shared").fit(X)
    t = tok.transform(X)
    assert t[2, 0] == t[0, 1] == N_SPECIAL + 2  # code 2 is one token in any column
    assert tok.offsets_.tolist() == [3, 3] and tok.n_tokens_ == 6


def test_shared_vocabulary_reads_a_code_of_another_column_as_its_token():
    """The paper's one code space (docs/paper.md section 2): the authors' model looks a code
    up whatever its column. A code that x0 never held at fit but x1 did was UNKNOWN in x0,
    with a warning that it was not seen during fit; it is that code's token. A code no
    column kept stays UNKNOWN, and so does one rarer than min_frequency in its own column."""
    X = pd.DataFrame({"x0": [0, 1, 0, 1], "x1": [2, 2, 0, 0]})
    tok = ColumnTokenizer(vocabulary="shared").fit(X)
    with pytest.warns(UserWarning, match="not seen during fit") as caught:
        t = tok.transform(pd.DataFrame({"x0": [2, 5], "x1": [1, 0]}))
    assert t.tolist() == [[N_SPECIAL + 2, N_SPECIAL + 1], [UNKNOWN, N_SPECIAL]]
    assert [str(w.message).split(":")[0] for w in caught] == ["Column 'x0'"]  # for 5 only
    assert "e.g. [5]" in str(caught[0].message)
    assert tok.token_id(0, 2) == N_SPECIAL + 2 and tok.token_id(0, 5) is None
    rare = ColumnTokenizer(vocabulary="shared", min_frequency=2).fit(
        pd.DataFrame({"x0": [0, 0, 1], "x1": [1, 1, 0]})
    )
    assert rare.transform(pd.DataFrame({"x0": [1], "x1": [1]})).tolist() == [[UNKNOWN, N_SPECIAL + 1]]


def test_mixed_type_object_column_and_bool():
    X = pd.DataFrame({"m": [1, "a", 2.5, None, "a"], "flag": [True, False, True, True, False]})
    tok = ColumnTokenizer().fit(X)
    t = tok.transform(X)
    assert tok.is_categorical_.all()
    assert t[1, 0] == t[4, 0] and t[3, 0] == MISSING
    assert len(set(t[:, 0].tolist())) == 4


@pytest.mark.parametrize(
    "cells", [[["a", "b"], ["a"]], [{"k": 1}, {"k": 2}], [np.array([1, 2]), np.array([3, 4])]],
    ids=["lists", "dicts", "arrays"],
)
def test_unhashable_cells_are_refused_at_fit_naming_the_column(cells, recwarn):
    """pandas 3 counts lists, dicts and arrays: the tokenizer fitted, the estimator warned
    that "the model fits and predicts" and failed at transform, and arrays raised numpy's
    "truth value of an array ... is ambiguous", naming no column."""
    X = pd.DataFrame({"a": ["x", "y"] * 20, "tags": (cells * 20)[:40]})
    with pytest.raises(TypeError, match="Column 'tags' holds unhashable values"):
        ColumnTokenizer().fit(X)
    with pytest.raises(TypeError, match="Column 'tags' holds unhashable values"):
        TabularMoEClassifier(max_epochs=1).fit(X, ["p", "q"] * 20)
    assert not [w for w in recwarn if "save() will raise" in str(w.message)]


def test_a_column_of_datetime_objects_fits_without_pandas_2_2s_value_counts_warning(monkeypatch):
    """pandas 2.2 (which pyproject admits) warns on value_counts of an object column whose
    values it infers as datetimes ("The behavior of value_counts with object-dtype is
    deprecated"): every fit on such a column, categorical under "auto", showed that
    FutureWarning at tabmoe/tokenizer.py. pandas 3 has no such warning: its rule is applied
    here as pandas 2.2 applies it (on 2.2 the real warning is raised as well)."""
    original = pd.Series.value_counts

    def value_counts(self, *args, **kwargs):
        counts = original(self, *args, **kwargs)
        if self.dtype == object and pd.Index(counts.index.to_numpy(dtype=object)).dtype != object:
            warnings.warn("The behavior of value_counts with object-dtype is deprecated. In a future "
                          "version, this will *not* perform dtype inference on the resulting index.",
                          FutureWarning, stacklevel=2)
        return counts

    monkeypatch.setattr(pd.Series, "value_counts", value_counts)
    days = list(pd.date_range("2020-01-01", periods=10, freq="D")) * 4
    X = pd.DataFrame({"when": pd.Series(days, dtype=object), "x": np.arange(40.0)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = ColumnTokenizer().fit(X)
    assert tok.is_categorical_.tolist() == [True, False]
    assert tok.categories_[0].tolist() == days[:10]
    with pytest.warns(FutureWarning, match="value_counts with object-dtype"):  # not silenced for the caller
        X["when"].value_counts()


def test_columns_missing_extra_or_renamed_raise_naming_them():
    X = pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]})
    tok = ColumnTokenizer().fit(X)
    with pytest.raises(ValueError, match="b"):
        tok.transform(X[["a"]])
    with pytest.raises(ValueError, match="extra"):
        tok.transform(X.assign(extra=1))
    with pytest.raises(ValueError, match="renamed"):
        tok.transform(X.rename(columns={"b": "renamed"}))


def test_empty_input_raises():
    with pytest.raises(ValueError, match="0 sample"):
        ColumnTokenizer().fit(pd.DataFrame({"a": pd.Series([], dtype=object)}))


def test_hundred_thousand_categories_stay_compact():
    n = 100_000
    X = pd.DataFrame({"id": [f"u{i}" for i in range(n)]})
    tok = ColumnTokenizer().fit(X)
    t = tok.transform(X)
    assert tok.n_tokens_ == n + 3
    assert t.dtype == np.int32 and t.nbytes == 4 * n
    assert len(np.unique(t)) == n


def test_a_batch_looks_up_only_the_categories_its_rows_use(monkeypatch):
    # Each batch of a column whose category dtype lists many categories looked up every one
    # of them: predict on 200,000 rows of a 10^6-category dtype took 44 s instead of 1.5 s.
    categories = [f"v{i}" for i in range(5_000)] + list(pd.date_range("2000", periods=5))
    codes = np.resize([-1, 0, 3, 6, 5_002, 4_000], 200)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, categories=categories)})
    tokenizer = ColumnTokenizer().fit(X[codes != 4_000])  # v4000: unseen
    looked_up, get_indexer = [], pd.Index.get_indexer

    def counted(index, target, *args, **kwargs):
        looked_up.append(len(target))
        return get_indexer(index, target, *args, **kwargs)

    with pytest.warns(UserWarning, match="not seen during fit"):
        expected = tokenizer.transform(X.astype(object))  # looked up value by value
    monkeypatch.setattr(pd.Index, "get_indexer", counted)
    with pytest.warns(UserWarning, match="not seen during fit"):
        batches = [tokens for _, tokens in tokenizer.transform_batches(X, 16)]
    assert looked_up and max(looked_up) <= 16
    np.testing.assert_array_equal(np.vstack(batches), expected)


@pytest.mark.parametrize("copying_infer_objects", [False, True], ids=["installed", "pandas-2-infer_objects"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, bool])
def test_an_array_is_read_without_a_copy(dtype, copying_infer_objects, monkeypatch):
    # pandas 3's DataFrame(ndarray) copies: predict_proba on a 305 MiB array grew by 480 MiB.
    # pandas 2's infer_objects copies (copy=True by default without copy-on-write): called on
    # every array, it copied a numeric one too there (pyproject admits pandas >= 2.0)
    if copying_infer_objects:
        monkeypatch.setattr(pd.DataFrame, "infer_objects", lambda self, *args, **kwargs: self.copy())
    X = (np.arange(12).reshape(4, 3) % 2).astype(dtype)
    frame = tokenizer_module.to_frame(X)
    assert all(np.shares_memory(frame[j].to_numpy(), X) for j in frame.columns)
    assert (frame.dtypes == X.dtype).all()
    np.testing.assert_array_equal(frame.to_numpy(), X)


def test_all_missing_object_column_maps_to_missing_and_unknown():
    X = pd.DataFrame({"empty": pd.Series([None, None, None], dtype=object), "x": [1.0, 2.0, 3.0]})
    tok = ColumnTokenizer().fit(X)
    assert tok.transform(X)[:, 0].tolist() == [MISSING] * 3
    with pytest.warns(UserWarning, match="'empty'"):
        assert tok.transform(X.assign(empty=["a", None, None]))[0, 0] == UNKNOWN


@pytest.mark.parametrize(
    "categories",
    [
        pd.date_range("2020-01-01", periods=3),
        pd.date_range("2020-01-01", periods=3, tz="UTC"),
        pd.timedelta_range("1D", periods=3),
        pd.period_range("2020-01", periods=3, freq="M"),
        pd.interval_range(0, 3),
    ],
    ids=["datetime", "datetime-tz", "timedelta", "period", "interval"],
)
def test_category_columns_of_dates_periods_and_intervals_keep_their_values(categories, recwarn):
    # pandas' DatetimeIndex.isin(CategoricalIndex) is all False: these columns were UNKNOWN.
    X = pd.DataFrame({"c": pd.Categorical(categories.repeat(2))})
    tokenizer = ColumnTokenizer().fit(X)
    assert list(tokenizer.categories_[0]) == list(categories)
    tokens = tokenizer.transform(X).ravel()
    assert UNKNOWN not in tokens and len(set(tokens)) == 3
    assert not [w for w in recwarn if "not seen during fit" in str(w.message)]


def test_an_interval_column_is_categorical_under_auto(tmp_path):
    # an IntervalArray column was read as numeric, and fit failed with "is numeric (declared so,
    # or numeric at fit) but holds non-numeric values" though nothing was declared
    from tabmoe import TabularMoEClassifier

    intervals = pd.arrays.IntervalArray.from_breaks([0, 10, 20, 30])
    X = pd.DataFrame({"x": np.arange(30.0), "age": intervals[np.arange(30) % 3]})
    tokenizer = ColumnTokenizer().fit(X)
    assert tokenizer.is_categorical_.tolist() == [False, True]
    assert list(tokenizer.categories_[1]) == list(intervals)  # in their order
    assert len(set(tokenizer.transform(X)[:, 1])) == 3
    y = np.arange(30) % 3 == 0
    clf = TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    np.testing.assert_array_equal(TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize(
    "fit_values, new_values, match",
    [
        (np.arange(6.0), pd.date_range("2020-01-01", periods=6), "held number values at fit and holds datetime"),
        (pd.date_range("2020-01-01", periods=6), np.arange(6.0), "held datetime values at fit and holds number"),
        (pd.to_timedelta(np.arange(6), unit="D"), pd.date_range("2020-01-01", periods=6), "held timedelta"),
    ],
    ids=["number-then-datetime", "datetime-then-number", "timedelta-then-datetime"],
)
def test_a_numeric_column_of_another_kind_at_transform_is_named(fit_values, new_values, match, tmp_path):
    # datetimes read as numbers (or the reverse) were nanoseconds in the wrong bins, silently
    tokenizer = ColumnTokenizer().fit(pd.DataFrame({"t": fit_values}))
    with pytest.raises(TypeError, match=f"Column 't' {match}"):
        tokenizer.transform(pd.DataFrame({"t": new_values}))
    # as strings: a datetime column says so; a number column leaves them to to_numeric
    strings = "non-numeric values" if match.startswith("held number") else "holds object values"
    with pytest.raises(TypeError, match=strings):
        tokenizer.transform(pd.DataFrame({"t": pd.Series(new_values).astype(str)}))
    # a column of missing values only is MISSING whatever its dtype
    assert (tokenizer.transform(pd.DataFrame({"t": [np.nan, np.nan]})) == MISSING).all()


def test_datetimes_and_timedeltas_held_as_objects_are_read_as_their_values():
    # pd.concat with a frame whose column was all None, or row.to_frame().T, makes a datetime
    # column objects: refused ("held datetime values at fit and holds object values"), where
    # numbers held as objects are read as numbers
    days = pd.Series(pd.date_range("2020-01-01", periods=8, freq="7D"))
    X = pd.DataFrame({"t": days, "z": days.dt.tz_localize("Europe/Paris"), "d": days - days[0]})
    tokenizer = ColumnTokenizer(n_bins=4).fit(X)
    missing = X.copy()
    missing.loc[3, :] = pd.NaT
    expected = tokenizer.transform(missing)
    objects = missing.astype(object)
    objects.loc[3, "t"] = None  # None, NaT: missing beside them
    assert all(pd.api.types.is_object_dtype(dtype) for dtype in objects.dtypes)
    np.testing.assert_array_equal(tokenizer.transform(objects), expected)
    np.testing.assert_array_equal(  # Python's own types: datetime.date, datetime.timedelta
        tokenizer.transform(X.assign(t=X["t"].dt.date, d=pd.Series([v.to_pytimedelta() for v in X["d"]], dtype=object))),
        tokenizer.transform(X))
    # rows without t (pandas 2's concat keeps datetime64: the cast makes pandas 3's objects on both)
    appended = pd.concat([X[:2], X[2:].assign(t=None)], ignore_index=True).astype({"t": object})
    assert pd.api.types.is_object_dtype(appended["t"])
    np.testing.assert_array_equal(tokenizer.transform(appended),
                                  tokenizer.transform(X.assign(t=X["t"].where(X.index < 2))))
    # text, time zones mixed, and naive datetimes for aware ones are refused as before
    with pytest.raises(TypeError, match=r"'t' held datetime values at fit and holds object values"):
        tokenizer.transform(X.assign(t=X["t"].astype(str).astype(object)))
    mixed = pd.Series([X["z"][0], X["z"][1].tz_convert("UTC"), *X["z"][2:]], dtype=object)
    with pytest.raises(TypeError, match=r"'z' held datetime values at fit and holds object values"):
        tokenizer.transform(X.assign(z=mixed))
    with pytest.raises(TypeError, match=r"'z' held time-zone-aware datetimes at fit and holds naive ones now \(object\)"):
        tokenizer.transform(X.assign(z=X["t"].astype(object)))


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(pd.date_range("2020-01-01", periods=6)),
        pd.Series(pd.date_range("2020-01-01", periods=6, tz="Europe/Paris")),
        pd.Series(pd.to_timedelta(np.arange(6), unit="h")),
        pd.Series(pd.period_range("2020-01", periods=6, freq="M")),
    ],
    ids=["datetime", "tz-aware", "timedelta", "period"],
)
def test_a_category_of_datetimes_is_read_as_its_values_in_a_numeric_column(values):
    # X.astype("category") at predict: refused as "holds number values (category)"; a
    # category of numbers was read as its numbers
    X = pd.DataFrame({"t": values.where(values.index != 2)})
    tokenizer = ColumnTokenizer().fit(X)
    expected = tokenizer.transform(X)
    as_category = X.astype("category")
    np.testing.assert_array_equal(tokenizer.transform(as_category), expected)
    declared = ColumnTokenizer(categorical_features=[]).fit(as_category)  # numeric at fit too
    np.testing.assert_array_equal(declared.transform(X), expected)
    np.testing.assert_array_equal(declared.transform(as_category), expected)
    with pytest.raises(TypeError, match=r"'t' held number values at fit and holds \w+ values \(category\)"):
        ColumnTokenizer().fit(pd.DataFrame({"t": np.arange(6.0)})).transform(as_category)


def test_numeric_kinds_survive_the_state_and_old_states_skip_the_check():
    X = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=6), "c": list("abcabc")})
    tokenizer = ColumnTokenizer().fit(X)
    rebuilt = ColumnTokenizer._from_state(tokenizer._get_state())
    assert rebuilt._numeric_kinds == ["datetime", None]
    with pytest.raises(TypeError, match="held datetime values at fit"):
        rebuilt.transform(X.assign(t=np.arange(6.0)))
    old = tokenizer._get_state()
    del old["numeric_kinds"]  # saved before the kinds were kept: read as before
    assert ColumnTokenizer._from_state(old).transform(X.assign(t=np.arange(6.0))).shape == (6, 2)
    for broken in (["number", "number"], ["date", None], [None, None]):
        bad = tokenizer._get_state()
        bad["numeric_kinds"] = broken
        with pytest.raises(ValueError, match="numeric_kinds"):
            ColumnTokenizer._from_state(bad)


def test_match_kinds_reads_all_missing_columns_without_inventing_values():
    from tabmoe._frame import match_kinds

    X = pd.DataFrame({"i": [1, 2, 3], "b": [True, False, True], "d": pd.to_datetime(["2020-01-01"] * 3)})
    other = match_kinds(X, pd.DataFrame({name: [None, None] for name in X.columns}), "X_unlabeled")
    assert other["b"].isna().all()  # not cast to bool, which reads None as False
    assert other["i"].dtype == np.float64 and other["i"].isna().all()  # int64 cannot hold NaN
    assert pd.api.types.is_datetime64_any_dtype(other["d"]) and other["d"].isna().all()
    tokenizer = ColumnTokenizer().fit(pd.concat([X, other]))
    assert tokenizer.is_categorical_.tolist() == [False, True, False]
    assert (tokenizer.transform(other) == MISSING).all()


def test_match_kinds_keeps_all_missing_categorical_columns_categorical():
    # X_unlabeled's rows never observing a categorical column (all NaN, so float64, as
    # reindex gives an absent column) were refused as numbers; predict and eval_set take them
    from tabmoe._frame import match_kinds

    columns = {"s": ["x", "y", "x"], "b": [True, False, True], "c": pd.Categorical(["u", "v", "u"])}
    X = pd.DataFrame(columns)
    all_nan = pd.DataFrame({name: [np.nan, np.nan] for name in X.columns})
    other = match_kinds(X, all_nan, "X_unlabeled")
    tokenizer = ColumnTokenizer().fit(pd.concat([X, other], ignore_index=True))
    assert tokenizer.is_categorical_.tolist() == [True, True, True]
    assert [sorted(c) for c in tokenizer.categories_] == [["x", "y"], [False, True], ["u", "v"]]
    np.testing.assert_array_equal(tokenizer.transform(X), ColumnTokenizer().fit(X).transform(X))
    assert (tokenizer.transform(other) == MISSING).all()

def test_match_kinds_gives_all_missing_columns_of_any_dtype_the_kind_of_x():
    # X_unlabeled's column of NaT (pd.Series([pd.NaT]) is naive datetimes) beside X's
    # timedeltas or aware datetimes, or a category of text all NaN beside X's numbers, was cast
    # with astype: pandas' TypeError naming no column ("Cannot cast DatetimeArray to dtype
    # timedelta64[us]"), where predict reads such rows as missing
    from tabmoe._frame import match_kinds

    X = pd.DataFrame({"wait": pd.to_timedelta([1, 2, 3], unit="h"),
                      "at": pd.date_range("2020-01-01", periods=3, tz="Europe/Paris"),
                      "x": [1.0, 2.0, 3.0]})
    unlabeled = pd.DataFrame({"wait": [pd.NaT] * 2, "at": [pd.NaT] * 2,
                              "x": pd.Categorical([None, None], categories=["a"])}, index=[7, 7])
    given = unlabeled.copy()
    other = match_kinds(X, unlabeled, "X_unlabeled")
    assert other.dtypes.tolist() == X.dtypes.tolist() and other.isna().all().all()
    assert other.index.tolist() == [7, 7]
    pd.testing.assert_frame_equal(unlabeled, given)  # X_unlabeled itself unchanged
    tokenizer = ColumnTokenizer().fit(pd.concat([X, other], ignore_index=True))
    assert tokenizer.is_categorical_.tolist() == [False, False, False]
    assert (tokenizer.transform(other) == MISSING).all()


def test_match_kinds_refuses_periods_of_another_freq():
    # concatenated for one fit, period[M] and period[D] (or datetimes) give an object column,
    # which the tokenizer would read as categories
    from tabmoe._frame import match_kinds

    X = pd.DataFrame({"month": pd.period_range("2015-01", periods=3, freq="M")})
    pd.testing.assert_frame_equal(match_kinds(X, X, "X_unlabeled"), X)
    for other in (X["month"].dt.asfreq("D"), X["month"].dt.to_timestamp()):
        with pytest.raises(ValueError, match=r"'month' \(datetime \(period\[M\]\) in X, datetime.* in X_unlabeled\)"):
            match_kinds(X, pd.DataFrame({"month": other}), "X_unlabeled")
    other = match_kinds(X, pd.DataFrame({"month": [None, None]}), "X_unlabeled")
    assert other["month"].dtype == X["month"].dtype and other["month"].isna().all()


def test_the_docstring_says_which_values_get_a_bin_of_their_own():
    # Two quantile steps of the rows (20% at n_bins=10) inside the range: always a bin of its own.
    rng = np.random.RandomState(2)
    for _ in range(50):
        start = rng.randint(1, 70)
        x = np.concatenate([np.arange(start, dtype=float), np.full(21, 500.0), 1000.0 + np.arange(79 - start)])
        _, t = _bins_of(x)
        assert not set(t[x == 500]) & (set(t[x < 500]) | set(t[x > 500]))
    # One and a half steps: here one quantile only falls on it, and it shares its bin with
    # the values above it. The module docstring said a quantile step of the rows sufficed.
    x = np.concatenate([np.arange(21.0), np.full(15, 50.0), np.arange(60.0, 124.0)])
    _, t = _bins_of(x)
    assert set(t[x == 50]) & set(t[x > 50])
    doc = " ".join(tokenizer_module.__doc__.split())
    assert "two quantile steps of the rows or more always does" in doc


def test_token_id_names_an_unfitted_tokenizer_and_a_column_it_cannot_read():
    # AttributeError "_lookup" before fit; a numeric column (no lookup) gave "cannot unpack
    # non-iterable NoneType"; an index past the columns an IndexError naming nothing
    from sklearn.exceptions import NotFittedError

    frame = pd.DataFrame({"c": list("abca"), "x": [0.5, 1.0, 2.0, 3.0]})
    with pytest.raises(NotFittedError):
        ColumnTokenizer().token_id(0, "a")
    tok = ColumnTokenizer().fit(frame)
    assert tok.token_id(0, "a") == tok.transform(frame)[0, 0] and tok.token_id(0, "z") is None
    with pytest.raises(ValueError, match=r"^token_id: column 1 is a numeric column of the 2 fitted"):
        tok.token_id(1, 0.5)
    with pytest.raises(ValueError, match=r"^token_id: j must be a column position, an integer in 0\.\.1, got 2$"):
        tok.token_id(2, "a")


def test_column_position_helpers_name_their_argument_and_agree_on_negatives():
    # token_id("colour", ...) raised "'<=' not supported between instances of 'int' and
    # 'str'"; output_token_ids(9) a raw IndexError and output_token_ids(-1) the last
    # column's ids (token_id(-1, ...) refused); transform_batches(X, 0) "range() arg 3 must
    # not be zero"
    frame = pd.DataFrame({"colour": ["red", "blue", "red"], "n": [1.0, 2.0, 3.0]})
    tok = ColumnTokenizer().fit(frame)
    with pytest.raises(ValueError, match=r"^token_id: j must be a column position, an integer in 0\.\.1, "
                                         r"got 'colour' \(column 'colour' is at position 0\)$"):
        tok.token_id("colour", "red")
    for j in (9, -1, 1.0, True):
        with pytest.raises(ValueError, match=rf"^output_token_ids: j must be a column position, .*got {j!r}$"):
            tok.output_token_ids(j)
    with pytest.raises(ValueError, match=r"^token_id: j must be a column position, .*got -1$"):
        tok.token_id(-1, "red")
    with pytest.raises(ValueError, match=r"^transform_batches: batch_rows must be an integer >= 1, got 0$"):
        tok.transform_batches(frame, 0)
    assert tok.token_id(np.int64(0), "red") == tok.transform(frame)[0, 0]
    assert tok.output_token_ids(np.int64(1)).tolist() == tok.output_token_ids(1).tolist()


class _UnreadNames(np.ndarray):
    """Column names that count how often they are listed."""

    reads = 0

    def __iter__(self):
        type(self).reads += 1
        return super().__iter__()


def test_a_valid_column_position_does_not_list_the_column_names():
    # output_token_ids / token_id listed feature_names_in_ on every call to name a bad j:
    # building a network calls output_token_ids once a column, so 16,000 columns took 2.1 s
    X = pd.DataFrame({"a": list("xyx"), "b": list("uvv")})
    tok = ColumnTokenizer(categorical_features="all").fit(X)
    tok.feature_names_in_ = tok.feature_names_in_.view(_UnreadNames)
    assert [len(tok.output_token_ids(j)) for j in range(2)] == [2, 2] and tok.token_id(1, "v") is not None
    assert _UnreadNames.reads == 0
    with pytest.raises(ValueError, match=r"column 'b' is at position 1"):
        tok.output_token_ids("b")


def test_token_id_reads_missing_and_rare_values_as_transform_does():
    # token_id(0, nan) returned None (documented as "unknown") while transform reads a
    # missing value as MISSING; a value rarer than min_frequency reads UNKNOWN in both
    frame = pd.DataFrame({"c": ["a"] * 3 + ["b"] * 3 + ["rare", None]})
    tok = ColumnTokenizer(min_frequency=2).fit(frame)
    ids = tok.transform(frame)[:, 0]
    for value, expected in ((None, MISSING), (np.nan, MISSING), (pd.NA, MISSING), (pd.NaT, MISSING),
                            ("rare", UNKNOWN), ("a", ids[0])):
        assert tok.token_id(0, value) == expected, value
    assert ids[7] == MISSING and ids[6] == UNKNOWN and tok.token_id(0, "zzz") is None


def test_a_number_in_a_numeric_column_missing_at_fit_is_unseen_and_warned_about(tmp_path):
    # Was: it took the column's one bin token, never trained, in silence, where a categorical
    # column's new value is warned about and maps to UNKNOWN.
    tok = ColumnTokenizer().fit(pd.DataFrame({"a": ["x", "y", "x"], "n": [np.nan] * 3}))
    X = pd.DataFrame({"a": ["x", "y", "x", "y"], "n": [1.5, np.nan, -2.0, 1e9]})
    with pytest.warns(UserWarning) as caught:
        tokens = tok.transform(X)
    assert tokens[:, 1].tolist() == [UNKNOWN, MISSING, UNKNOWN, UNKNOWN]
    assert [str(w.message) for w in caught] == [
        "Column 'n': 3 value(s) (75.0% of rows) were not seen during fit, where the column was "
        "missing in every row (e.g. [1.5, -2.0, 1000000000.0])."
    ]
    # A column that held numbers keeps binning values beyond its range, unwarned.
    seen = ColumnTokenizer().fit(pd.DataFrame({"n": [0.0, 1.0, np.nan]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert seen.transform(pd.DataFrame({"n": [-5.0, 7.0]}))[:, 0].tolist() == [3, 4]
    # Through a model, and after a save and load.
    X_fit = pd.DataFrame({"a": ["x", "y"] * 20, "n": np.nan})
    clf = TabularMoEClassifier(max_epochs=1, random_state=0).fit(X_fit, [0, 1] * 20)
    path = tmp_path / "m.tabmoe"
    clf.save(path)
    for model in (clf, TabularMoEClassifier.load(path)):
        with pytest.warns(UserWarning, match=r"Column 'n': 3 value\(s\).*missing in every row"):
            assert model.tokenizer_.transform(X)[:, 1].tolist() == [UNKNOWN, MISSING, UNKNOWN, UNKNOWN]
