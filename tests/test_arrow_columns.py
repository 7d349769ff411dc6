"""pyarrow-backed columns read as their pandas counterparts: a dictionary column (what
``read_parquet(dtype_backend="pyarrow")`` gives a category) is categorical, dates and
durations are binned like datetime64 and timedelta64."""

import datetime as dt
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from tabmoe import ColumnTokenizer, TabularMoEClassifier
from tabmoe.tokenizer import NumbersAsTextWarning

pa = pytest.importorskip("pyarrow")  # an optional dependency (extra "data"); CI installs it


def _frame(n=120, seed=0):
    r = np.random.default_rng(seed)
    days = [dt.date(2020, 1, 1) + dt.timedelta(days=int(i)) for i in r.integers(0, 900, n)]
    return pd.DataFrame({
        "cat": pd.Categorical(r.choice(["x", "y", "z", None], n)),
        "day": pd.Series(days, dtype="datetime64[ms]"),
        "wait": pd.to_timedelta(r.integers(0, 9000, n), unit="s"),
    })


def _arrow(frame):
    return frame.assign(
        cat=frame["cat"].astype(pd.ArrowDtype(pa.dictionary(pa.int8(), pa.string()))),
        day=pd.Series(frame["day"].dt.date, dtype=pd.ArrowDtype(pa.date32())),
        wait=frame["wait"].astype(pd.ArrowDtype(pa.duration("s"))),
    )


def test_arrow_columns_tokenize_as_their_pandas_counterparts():
    frame = _frame()
    frame.loc[3, "day"] = pd.NaT
    arrow = _arrow(frame)
    tok = ColumnTokenizer().fit(frame)
    arrow_tok = ColumnTokenizer().fit(arrow)
    np.testing.assert_array_equal(arrow_tok.is_categorical_, [True, False, False])
    np.testing.assert_array_equal(arrow_tok.transform(arrow), tok.transform(frame))
    np.testing.assert_array_equal(tok.transform(arrow), tok.transform(frame))  # fitted on one, given the other


def test_the_classifier_fits_a_frame_read_back_from_parquet(tmp_path):
    frame = _frame()
    y = np.where(frame["cat"].astype(object) == "x", "yes", "no")
    frame.to_parquet(tmp_path / "t.parquet")
    read = pd.read_parquet(tmp_path / "t.parquet", dtype_backend="pyarrow")
    assert str(read["cat"].dtype).startswith("dictionary<")
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(read, y)
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, [True, False, False])
    assert clf.predict_proba(read).shape == (len(read), 2)


def _aware(n=120, seed=0):
    r = np.random.default_rng(seed)
    when = pd.Series(pd.to_datetime("2020-03-20") + pd.to_timedelta(r.integers(0, 90 * 24, n), unit="h"))
    when = when.dt.tz_localize("Europe/Paris", nonexistent="shift_forward", ambiguous=False)
    when[3] = pd.NaT
    numpy = pd.DataFrame({"when": when, "x": r.normal(size=n)})
    return numpy, numpy.assign(when=when.astype("timestamp[us, tz=Europe/Paris][pyarrow]"))


def test_arrow_time_zone_aware_timestamps_read_as_their_pandas_counterparts():
    # their time zone sits on the pyarrow type: they were read as naive, then crashed
    # (Timestamp / timedelta), and a model fitted on datetime64[ns, tz] refused them as naive
    numpy, arrow = _aware()
    assert str(arrow["when"].dtype) == "timestamp[us, tz=Europe/Paris][pyarrow]"
    tok = ColumnTokenizer(n_bins=20).fit(numpy)
    arrow_tok = ColumnTokenizer(n_bins=20).fit(arrow)
    np.testing.assert_array_equal(arrow_tok.transform(arrow), tok.transform(numpy))
    np.testing.assert_array_equal(tok.transform(arrow), tok.transform(numpy))
    np.testing.assert_array_equal(arrow_tok.transform(numpy), tok.transform(numpy))
    naive = numpy.assign(when=numpy["when"].dt.tz_localize(None))
    with pytest.raises(TypeError, match="'when' held time-zone-aware datetimes at fit and holds naive"):
        arrow_tok.transform(naive)
    with pytest.raises(TypeError, match="'when' held naive datetimes at fit and holds time-zone-aware"):
        ColumnTokenizer().fit(naive).transform(arrow)


def test_the_classifier_predicts_arrow_time_zone_aware_timestamps_as_numpy_ones(tmp_path):
    numpy, arrow = _aware()
    y = np.where(numpy["x"] > 0, "yes", "no")
    numpy.to_parquet(tmp_path / "t.parquet")
    read = pd.read_parquet(tmp_path / "t.parquet", dtype_backend="pyarrow")
    assert isinstance(read["when"].dtype, pd.ArrowDtype) and read["when"].dtype.pyarrow_dtype.tz
    kw = dict(max_epochs=2, random_state=0, device="cpu")
    expected = TabularMoEClassifier(**kw).fit(numpy, y).predict_proba(numpy)
    for fit in (arrow, read):
        model = TabularMoEClassifier(**kw).fit(fit, y)
        for other in (fit, numpy):
            np.testing.assert_allclose(model.predict_proba(other), expected, rtol=1e-6)
    model = TabularMoEClassifier(**kw).fit(numpy, y)
    np.testing.assert_allclose(model.predict_proba(read), expected, rtol=1e-6)


def test_arrow_time_zone_aware_unlabeled_rows_beside_numpy_ones_are_read_as_the_same_type():
    # X_unlabeled's types were compared through dtype.tz, which a pyarrow timestamp has not:
    # an aware pyarrow column beside a numpy one in the same zone was refused as naive
    numpy, arrow = _aware()
    y = np.where(numpy["x"] > 0, "yes", "no")
    kw = dict(max_epochs=2, random_state=0, device="cpu")
    expected = TabularMoEClassifier(**kw).fit(numpy, y, X_unlabeled=numpy).predict_proba(numpy)
    for fit, unlabeled in ((numpy, arrow), (arrow, numpy), (arrow, arrow)):
        model = TabularMoEClassifier(**kw).fit(fit, y, X_unlabeled=unlabeled)
        np.testing.assert_allclose(model.predict_proba(numpy), expected, rtol=1e-6)
    utc = numpy.assign(when=numpy["when"].dt.tz_convert("UTC").astype("timestamp[us, tz=UTC][pyarrow]"))
    with pytest.raises(ValueError, match=re.escape("'when' (datetime (Europe/Paris) in X, datetime (UTC) in X_unlabeled)")):
        TabularMoEClassifier(**kw).fit(numpy, y, X_unlabeled=utc)


def test_aware_numpy_and_pyarrow_rows_are_joined_as_datetimes_where_pandas_2_joins_objects(monkeypatch):
    """pandas 2 (which pyproject admits) concatenates aware datetimes of numpy and of pyarrow
    in one zone as objects (pandas 3: as pyarrow timestamps): fitted with X_unlabeled of the
    other kind, the column was read as categories there (the test above failed on pandas
    2.2). pandas 2's concat is imitated here for such columns."""
    concat = pd.concat

    def pandas_2_concat(objs, **kwargs):
        joined = concat(objs, **kwargs)
        rows = isinstance(joined, pd.DataFrame) and kwargs.get("axis", 0) in (0, "index")
        for name in joined.columns if rows else ():
            dtypes = {str(part[name].dtype) for part in objs if name in part}
            if len(dtypes) > 1 and all("tz=" in d or ", " in d for d in dtypes):
                joined[name] = joined[name].astype(object)
        return joined

    monkeypatch.setattr(pd, "concat", pandas_2_concat)
    numpy, arrow = _aware()
    assert pd.concat([numpy, arrow], ignore_index=True)["when"].dtype == object  # as pandas 2's
    kw, y = dict(max_epochs=1, random_state=0, device="cpu"), np.arange(120) % 2
    expected = TabularMoEClassifier(**kw).fit(numpy, y, X_unlabeled=numpy).tokenizer_.transform(numpy)
    for fit, unlabeled in ((numpy, arrow), (arrow, numpy)):
        model = TabularMoEClassifier(**kw).fit(fit, y, X_unlabeled=unlabeled)
        assert model.tokenizer_.is_categorical_.tolist() == [False, False]
        np.testing.assert_array_equal(model.tokenizer_.transform(numpy), expected)


@pytest.mark.parametrize("dtype", [pa.list_(pa.int64()), pa.struct([("a", pa.int64())])], ids=["list", "struct"])
def test_a_nested_arrow_column_is_refused_naming_it_and_its_dtype(dtype):
    # categorical_features="auto" read a list column as numeric: fit said it was "numeric
    # (declared so, or numeric at fit)"; declared categorical, pyarrow's value_counts failed
    values = [[1, 2], [3]] * 30 if pa.types.is_list(dtype) else [{"a": 1}, {"a": 2}] * 30
    X = _frame(60).assign(nested=pd.Series(values, dtype=pd.ArrowDtype(dtype)))
    match = f"Column 'nested' has dtype {re.escape(str(X['nested'].dtype))}, whose values hold several"
    for categorical in ("auto", ["cat", "nested"]):
        with pytest.raises(TypeError, match=match):
            ColumnTokenizer(categorical_features=categorical).fit(X)
    with pytest.raises(TypeError, match=match):
        TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, np.arange(60) % 2)
    tokenizer = ColumnTokenizer().fit(X.assign(nested=np.arange(60.0)))
    with pytest.raises(TypeError, match=match):  # at transform too
        tokenizer.transform(X)


def test_arrow_decimals_with_nulls_are_binned_as_their_floats():
    # SQL / parquet DECIMAL columns (read with dtype_backend="pyarrow"); pandas' to_numeric
    # dropped the rows of their nulls, and the column was refused with "Length of values
    # (40) does not match length of index (60)"
    from decimal import Decimal

    values = [Decimal("1.50"), Decimal("2.25"), None] * 20
    arrow = pd.DataFrame({"price": pd.Series(values, dtype=pd.ArrowDtype(pa.decimal128(5, 2)))})
    floats = pd.DataFrame({"price": [np.nan if v is None else float(v) for v in values]})
    tok = ColumnTokenizer().fit(arrow)
    assert not tok.is_categorical_[0]
    expected = ColumnTokenizer().fit(floats).transform(floats)
    np.testing.assert_array_equal(tok.transform(arrow), expected)
    np.testing.assert_array_equal(tok.transform(floats), tok.transform(arrow))


def test_arrow_half_floats_are_binned_as_numpys():
    # parquet FLOAT16 read with dtype_backend="pyarrow": to_numeric refused the column with
    # "holds non-numeric values (FloatingArray does not support np.float16 dtype.)"
    values = np.array([0.5, 1.5, np.nan, 2.25, 3.0, -1.0] * 10, dtype=np.float16)
    numpy = pd.DataFrame({"x": values})
    arrow = pd.DataFrame({"x": pd.Series(pa.array(values, type=pa.float16(), from_pandas=True),
                                         dtype=pd.ArrowDtype(pa.float16()))})
    tok = ColumnTokenizer().fit(arrow)
    assert not tok.is_categorical_[0]
    expected = ColumnTokenizer().fit(numpy)
    np.testing.assert_array_equal(tok.transform(arrow), expected.transform(numpy))
    np.testing.assert_array_equal(expected.transform(arrow), expected.transform(numpy))
    np.testing.assert_array_equal(expected.bin_positions(arrow), expected.bin_positions(numpy))


@pytest.mark.parametrize("unit", [pa.time64("us"), pa.time32("s")], ids=["time64", "time32"])
def test_an_arrow_time_of_day_column_is_refused_naming_it_and_its_dtype(unit):
    # it was refused as "numeric (declared so, or numeric at fit) but holds non-numeric
    # values (Invalid object type at position 0)"
    times = pd.Series([dt.time(1, 2), dt.time(13, 4), None] * 20, dtype=pd.ArrowDtype(unit))
    X = _frame(60).assign(clock=times)
    match = f"Column 'clock' has dtype {re.escape(str(X['clock'].dtype))} \\(times of day\\), which is not supported"
    with pytest.raises(TypeError, match=match):
        ColumnTokenizer().fit(X)
    with pytest.raises(TypeError, match=match):
        TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, np.arange(60) % 2)
    with pytest.raises(TypeError, match=match):  # at transform, after a fit on numbers
        ColumnTokenizer().fit(X.assign(clock=np.arange(60.0))).transform(X)
    categorical = ColumnTokenizer(categorical_features=["cat", "clock"]).fit(X)  # declared: kept as it was
    assert categorical.is_categorical_[list(X.columns).index("clock")]


def test_a_pyarrow_table_is_read_as_a_frame_of_its_columns():
    # scikit-learn reads a Table's column names, but it was tokenized as np.asarray of it:
    # object values (its decimals categories) and, the tokenizer fitted without the names,
    # "X has feature names, but ColumnTokenizer was fitted without feature names" at every predict
    from decimal import Decimal

    frame = _arrow(_frame()).assign(price=pd.Series([Decimal(i) / 4 for i in range(120)], dtype=pd.ArrowDtype(pa.decimal128(6, 2))))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    y = np.where(frame["cat"].astype(object) == "x", "yes", "no")
    expected = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(table, y)
        proba = clf.predict_proba(table)
        np.testing.assert_array_equal(clf.predict_proba(frame), proba)
        assert ColumnTokenizer().fit(table).transform(table).shape == (120, 4)
    assert clf.feature_names_in_.tolist() == ["cat", "day", "wait", "price"]
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, [True, False, False, False])
    np.testing.assert_array_equal(proba, expected.predict_proba(frame))
    # a stored pandas index is a column of the table, as scikit-learn counts them
    indexed = pa.Table.from_pandas(frame.set_index(frame.index + 7), preserve_index=True)
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(indexed, y)
    assert clf.n_features_in_ == len(clf.tokenizer_.is_categorical_) == 5
    assert clf.predict(indexed).shape == (120,)


def _views(frame: pd.DataFrame):
    """``frame`` as a pyarrow Table whose text is ``string_view`` (a category's values too),
    as polars exports its columns."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    def view(t):
        if pa.types.is_dictionary(t):
            return pa.dictionary(t.index_type, pa.string_view())
        return pa.string_view() if pa.types.is_string(t) or pa.types.is_large_string(t) else t
    return table.cast(pa.schema([f.with_type(view(f.type)) for f in table.schema]))


def test_text_of_arrows_view_types_is_read_as_text():
    # pandas' ArrowDtype cannot hold string_view (NotImplementedError at the first dtype
    # check): a Table of views, as polars exports, failed to fit
    frame = _frame().assign(code=lambda f: np.where(np.arange(len(f)) % 3 == 0, "p", "q"))
    table = _views(frame)
    assert pa.types.is_string_view(table.schema.field("code").type)
    y = np.where(frame["cat"] == "x", "yes", "no")
    expected = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(table, y)
        np.testing.assert_array_equal(clf.predict_proba(table), expected.predict_proba(frame))
    np.testing.assert_array_equal(ColumnTokenizer().fit(table).transform(table), expected.tokenizer_.transform(frame))


def test_a_polars_frame_is_read_as_the_pandas_frame_it_holds():
    # scikit-learn reads a polars frame's column names, but it was tokenized as np.asarray
    # of it: every predict warned "X has feature names, but ColumnTokenizer was fitted
    # without feature names"
    pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
    frame = _frame().assign(code=lambda f: np.where(np.arange(len(f)) % 3 == 0, "p", "q"))
    y = np.where(frame["cat"] == "x", "yes", "no")
    expected = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(frame, y)
    polars = pl.from_pandas(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(polars, y)
        np.testing.assert_array_equal(clf.predict_proba(polars), expected.predict_proba(frame))
        np.testing.assert_array_equal(clf.predict_proba(frame), expected.predict_proba(frame))
    assert clf.feature_names_in_.tolist() == frame.columns.tolist()
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, expected.tokenizer_.is_categorical_)


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_a_reordered_table_as_eval_set_or_unlabeled_rows_is_named(kind):
    # read by name since pyarrow Tables are read as frames, but the check of eval_set's
    # X_val and X_unlabeled skipped anything but a DataFrame: scikit-learn's "The feature
    # names should match those that were passed during fit", naming neither argument
    frame = _frame()
    y = np.where(frame["cat"] == "x", "yes", "no")
    reordered = pa.Table.from_pandas(frame.iloc[:30][["wait", "day", "cat"]], preserve_index=False)
    if kind == "polars":  # as the changelog says of a polars frame too
        reordered = pytest.importorskip("polars").from_arrow(reordered)  # extra "dev"
    clf = TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu")
    with pytest.raises(ValueError, match=r"^eval_set's X_val must have the same columns as X, in the same order"):
        clf.fit(frame, y, eval_set=(reordered, y[:30]))
    with pytest.raises(ValueError, match=r"^X_unlabeled must have the same columns as X, in the same order"):
        clf.fit(frame, y, X_unlabeled=reordered)


@pytest.mark.filterwarnings("ignore:Cannot save category value b'a'")  # bytes: save() refuses them
@pytest.mark.parametrize("binary", [pa.binary(), pa.large_binary(), pa.binary(1)])
def test_arrow_bytes_are_categories_as_bytes_in_an_object_column_are(binary):
    # pyarrow's bytes (a parquet BYTE_ARRAY without a text annotation, a polars Binary) were
    # numeric under "auto", and fit failed: "holds non-numeric values (Unable to parse
    # string b'a' at position 0)"; the same bytes in an object column are categories
    r = np.random.default_rng(0)
    codes = pd.Series(r.choice([b"a", b"b", b"c", None], 120), dtype=object)
    frame = pd.DataFrame({"code": codes, "x": r.normal(size=120)})
    table = pa.table({"code": pa.array(codes.tolist(), type=binary), "x": frame["x"]})
    y = np.where(codes == b"a", "yes", "no")
    expected = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(frame, y)
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(table, y)
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, [True, False])
    np.testing.assert_array_equal(clf.predict_proba(table), expected.predict_proba(frame))
    np.testing.assert_array_equal(expected.predict_proba(table), expected.predict_proba(frame))
    numbers = pa.array([str(i).encode() for i in range(10, 50)], type=pa.binary(2) if binary == pa.binary(1) else binary)
    with pytest.warns(NumbersAsTextWarning):  # as for the bytes of numbers in an object column
        ColumnTokenizer().fit(pa.table({"n": numbers}))


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_columns_absent_from_a_table_or_polars_frame_are_named_and_excluded_as_a_frames(kind):
    # matched by name since such frames are read as DataFrames, but the absent-column check
    # skipped anything but a pandas DataFrame: with missing="exclude" predict and explain
    # failed ("Feature names seen at fit time, yet now missing: - wait"), and with the
    # default the error gave no hint of missing="exclude"
    if kind == "polars":
        pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
        as_kind = pl.from_pandas
    else:
        def as_kind(frame):
            return pa.Table.from_pandas(frame, preserve_index=False)
    frame = _frame().assign(code=lambda f: np.where(np.arange(len(f)) % 3 == 0, "p", "q"))
    y = np.where(frame["cat"] == "x", "yes", "no")
    partial = frame.drop(columns="wait")
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", missing="exclude").fit(frame, y)
    np.testing.assert_array_equal(clf.predict_proba(as_kind(partial)), clf.predict_proba(partial))
    pd.testing.assert_frame_equal(clf.explain(as_kind(partial)).gates, clf.explain(partial).gates)
    default = TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(as_kind(frame), y)
    message = re.escape("Column(s) ['wait'] seen during fit are absent from X. Create the estimator with missing='exclude'")
    with pytest.raises(ValueError, match=message):
        default.predict(as_kind(partial))


def _polars_frame(pl, n=120, seed=0):
    """A polars frame of the dtypes a polars table holds: text, categoricals, enums and
    booleans with nulls, integers and floats with nulls (and a NaN), dates, zoned
    datetimes and durations; and the labels."""
    r = np.random.default_rng(seed)
    cat = r.choice(["x", "y", "z"], n)
    gap = np.arange(n) % 7 == 0  # null rows
    def nulls(values):
        return [None if g else v for g, v in zip(gap, values, strict=True)]
    frame = pl.DataFrame({
        "text": nulls(cat.tolist()),
        "categorical": pl.Series(nulls(cat[::-1].tolist()), dtype=pl.Categorical),
        "enum": pl.Series(r.choice(["lo", "mid", "hi"], n).tolist(), dtype=pl.Enum(["lo", "mid", "hi"])),
        "flag": nulls((r.random(n) > 0.5).tolist()),
        "count": nulls(r.integers(0, 60, n).tolist()),
        "price": [float("nan") if i == 3 else v for i, v in enumerate(nulls(r.normal(size=n).tolist()))],
        "day": nulls([dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in r.integers(0, 900, n)]),
        "at": pl.Series([dt.datetime(2020, 1, 1) + dt.timedelta(hours=int(h)) for h in r.integers(0, 9000, n)]).dt.replace_time_zone("Europe/Paris"),
        "wait": [dt.timedelta(minutes=int(m)) for m in r.integers(0, 9000, n)],
    })
    return frame, np.where(cat == "x", "yes", "no")


def test_polars_dtypes_fit_predict_explain_and_save_as_the_table_they_export(tmp_path):
    # what the changelog says a polars frame is: "read as the pyarrow Table it exports"
    # (pandas' own to_pandas() orders a Categorical's tokens otherwise: by its categories,
    # the table's dictionary by sorted values); each column of its kind (docs/guide/columns.md)
    pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
    frame, y = _polars_frame(pl)
    table = frame.to_arrow()
    expected = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(table, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(frame, y)
        proba = clf.predict_proba(frame)
        np.testing.assert_array_equal(proba, expected.predict_proba(table))
        np.testing.assert_array_equal(clf.predict(frame), expected.predict(table))
        pd.testing.assert_frame_equal(clf.explain(frame[:5]).gates, expected.explain(table.slice(0, 5)).gates)
        clf.save(tmp_path / "polars.tabmoe")
        loaded = TabularMoEClassifier.load(tmp_path / "polars.tabmoe")
        np.testing.assert_array_equal(loaded.predict_proba(frame), proba)
    assert clf.feature_names_in_.tolist() == frame.columns
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, [True] * 4 + [False] * 5)
    # a batch whose column is all null is of polars' Null dtype: read as missing values
    blank = frame.with_columns(pl.lit(None).alias("price"), pl.lit(None).alias("text"))
    missing = frame.to_pandas().assign(price=np.nan, text=None)
    np.testing.assert_array_equal(loaded.predict_proba(blank), loaded.predict_proba(missing))


def test_a_lazy_polars_frame_is_named_not_read_as_a_0d_array():
    # np.asarray of a LazyFrame is one object: "Expected 2D array, got 0D array instead.
    # Reshape your data either using array.reshape(-1, 1) ...", which it cannot be
    pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
    frame = _frame()
    y = np.where(frame["cat"] == "x", "yes", "no")
    lazy = pl.from_pandas(frame).lazy()
    message = r"^Expected 2D array or DataFrame, got polars\..*LazyFrame, which numpy reads as one value: a lazy frame, collect\(\) it first\.$"
    with pytest.raises(ValueError, match=message):
        TabularMoEClassifier(max_epochs=1, device="cpu").fit(lazy, y)
    clf = TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(lazy.collect(), y)
    for method in (clf.predict, clf.predict_proba, clf.explain):
        with pytest.raises(ValueError, match=message):
            method(lazy)
    with pytest.raises(ValueError, match=r"^Expected 2D array or DataFrame, got builtins\.object, which numpy reads as one value\.$"):
        clf.predict(object())
