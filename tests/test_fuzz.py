"""Property-based tests: messy tables into ColumnTokenizer and TabularMoEClassifier.

Every outcome is either a correct result (right shape, classes, finite probabilities summing
to 1, tokens in range) or the ValueError / TypeError that an oracle computed from the drawn
data expects, with a message naming the problem. Anything else (IndexError, KeyError, a
RuntimeWarning, NaN probabilities, a wrong shape) fails the test.

Example counts come from the Hypothesis profile (tests/conftest.py): ``HYPOTHESIS_PROFILE=ci``
runs ten times as many. ``pytest --hypothesis-show-statistics`` prints what ran.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tabmoe import ColumnTokenizer, TabularMoEClassifier
from tabmoe.tokenizer import MASK, MISSING, UNKNOWN

from .strategies import (
    NUMERIC_KINDS,
    Schema,
    inf_columns,
    labels,
    rows_of,
    schemas,
    unsaveable_values,
)

# values unseen at fit, and missing values in a column that held none at fit: both documented
UNSEEN_WARNING = r"(?:not seen during fit|are missing and map to the MISSING token)"
UNSAVEABLE_WARNING = r"Cannot save category value .* save\(\) will raise"
# early stopping's hold-out where every class is seen once (a 2-row table of 2 classes)
HOLD_OUT_WARNING = r"that leave each of the \d+ classes a training row"
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@contextmanager
def strict_warnings():
    """Every warning is an error except the documented unseen-value UserWarnings, the
    hold-out's warning of a class held out whole, and fit's warning of category values
    ``save`` cannot write, which is recorded (yielded)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=f".*{UNSEEN_WARNING}", category=UserWarning)
        warnings.filterwarnings("ignore", message=f".*{HOLD_OUT_WARNING}", category=UserWarning)
        warnings.filterwarnings("always", message=f".*{UNSAVEABLE_WARNING}", category=UserWarning)
        yield caught


def expected_error(schema: Schema, X: pd.DataFrame, y: np.ndarray | None, vocabulary: str):
    """(exception type, message regex, label) that fitting must raise; None: it must succeed.

    Checked in the order the code checks: column names, then y, then the values.
    """
    if schema.names == "duplicated":
        return ValueError, r"Column names must be unique; duplicated", "duplicated names"
    if schema.names == "mixed":
        return (
            TypeError,
            r"Feature names are only supported if all input features have string",
            "str/int names",
        )
    if y is not None and pd.isna(y).any():
        return ValueError, r"Input y contains NaN", "missing label"
    if y is not None and len(np.unique(y)) < 2:
        return ValueError, r"only one class", "one class"
    return inf_error(schema, X, vocabulary)


def inf_error(schema: Schema, X: pd.DataFrame, vocabulary: str):
    infinite = inf_columns(schema, X) if vocabulary == "per_column" else []
    if infinite:
        return ValueError, re.escape(f"infinity in column {infinite[0]!r}"), "inf in a column"
    return None


def outcome(expected, action, what: str):
    """Run ``action``; it must raise ``expected`` (type, regex, label) or, if None, succeed."""
    event(f"{what}: " + ("ok" if expected is None else f"{expected[0].__name__} ({expected[2]})"))
    if expected is None:
        return action()
    with pytest.raises(expected[0], match=expected[1]):
        action()
    return None


# ---------------------------------------------------------------- tokenizer
def _kind(schema: Schema, j: int) -> str:
    col = schema.columns[j]
    return col.extra[0] if col.kind == "constant" else col.kind


def _comparable(column: pd.Series) -> pd.Series:
    """Float64 values in the precision the tokenizer bins in (NaN = missing)."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        if getattr(column.dtype, "tz", None) is not None:
            column = column.dt.tz_convert(None)
        column = pd.Series(column.to_numpy() - np.datetime64(0, "s"))
    if pd.api.types.is_timedelta64_dtype(column.dtype):
        return pd.Series(column.to_numpy() / np.timedelta64(1, "s"))
    return pd.Series(column.to_numpy(dtype=np.float64, na_value=np.nan))


def check_numeric_column(tok: ColumnTokenizer, j: int, column: pd.Series, tokens: np.ndarray):
    """Bins are monotone in the value; at most n_bins distinct values get one bin each."""
    values = _comparable(column).to_numpy()
    present = ~np.isnan(values)
    assert (tokens[~present] == MISSING).all()
    v, t = values[present], tokens[present].astype(np.int64)
    order = np.argsort(v, kind="stable")
    v, t = v[order], t[order]
    assert (np.diff(t) >= 0).all(), f"bins of column {j} not monotone in the value"
    same = np.diff(v) == 0
    assert (np.diff(t)[same] == 0).all()
    if len(np.unique(v)) <= tok.n_bins:
        assert (np.diff(t)[~same] > 0).all(), f"distinct values of column {j} share a bin"


def _group_counts(values: list) -> dict:
    """Python-equality groups (1 == 1.0 == True, as pandas' hash tables group them)."""
    counts: dict = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def check_categorical_column(tok, j, column: pd.Series, tokens: np.ndarray, fitted: bool):
    missing = column.isna().to_numpy()
    assert (tokens[missing] == MISSING).all() and (tokens[~missing] != MISSING).all()
    values = [v for v, m in zip(column.tolist(), missing, strict=True) if not m]
    t = tokens[~missing].astype(np.int64)
    if fitted:  # tokens identify the value; rare values (< min_frequency) are UNKNOWN
        counts = _group_counts(values)
        for value, token in zip(values, t, strict=True):
            assert (token == UNKNOWN) == (counts[value] < tok.min_frequency), (value, token)
        first: dict = {}
        for value, token in zip(values, t, strict=True):
            assert first.setdefault(value, token) == token, f"{value!r} has two tokens"
        known = {v: tk for v, tk in first.items() if tk != UNKNOWN}
        assert len(set(known.values())) == len(known), "distinct values share a token"


# The two property tests below are slow-marked (26 s of the default suite): CI's hypothesis
# step (`HYPOTHESIS_PROFILE=ci pytest tests/test_fuzz.py`, no -m filter) runs them with 10x
# the examples, and the slow suite with the default profile.
@pytest.mark.slow
@settings(max_examples=4 * settings.default.max_examples, suppress_health_check=HEALTH)
@given(
    data=st.data(),
    schema=schemas(),
    n_rows=st.integers(1, 12),
    vocabulary=st.sampled_from(["per_column", "shared"]),
    min_frequency=st.sampled_from([1, 1, 2]),
    n_bins=st.sampled_from([2, 3, 10]),
)
def test_tokenizer_on_messy_tables(data, schema, n_rows, vocabulary, min_frequency, n_bins):
    X = data.draw(rows_of(schema, n_rows), label="X")
    tok = ColumnTokenizer(n_bins=n_bins, min_frequency=min_frequency, vocabulary=vocabulary)
    with strict_warnings():
        fitted = outcome(expected_error(schema, X, None, vocabulary), lambda: tok.fit(X), "fit")
        if fitted is None:
            return
        tokens = tok.transform(X)
    assert tokens.shape == X.shape and tokens.dtype.kind == "i"
    assert ((tokens > MASK) & (tokens < tok.n_tokens_)).all()
    for j in range(X.shape[1]):
        column, t = X.iloc[:, j], tokens[:, j]
        if vocabulary == "per_column":
            value = (t >= tok.offsets_[j]) & (t < tok.offsets_[j] + tok.n_tokens_per_column_[j])
            assert (value | (t == MISSING) | (t == UNKNOWN)).all()
        if tok.is_categorical_[j]:
            check_categorical_column(tok, j, column, t, fitted=True)
        else:
            assert _kind(schema, j) in NUMERIC_KINDS or schema.columns[j].kind == "missing"
            check_numeric_column(tok, j, column, t)

    # Unseen values: UNKNOWN with a warning naming the column; saved state transforms alike.
    X_new = data.draw(rows_of(schema, data.draw(st.integers(1, 6)), unseen=True), label="X_new")
    if unsaveable_values(X):
        with pytest.raises(TypeError, match="Cannot save category value"):
            tok._get_state()
        return
    restored = ColumnTokenizer._from_state(json.loads(json.dumps(tok._get_state())))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        new = outcome(
            inf_error(schema, X_new, vocabulary), lambda: tok.transform(X_new), "transform unseen"
        )
        if new is not None:
            assert np.array_equal(restored.transform(X_new), new)
    assert np.array_equal(restored.transform(X), tokens)
    for w in caught:
        assert issubclass(w.category, UserWarning) and re.search(UNSEEN_WARNING, str(w.message))
    if new is None:
        return
    for j in np.flatnonzero(tok.is_categorical_):
        column = X_new.iloc[:, j]
        seen = set(X.iloc[:, j].dropna().tolist())
        if vocabulary == "shared":  # one code space: a value another column kept is its token
            seen |= set(tok.shared_values_.tolist())
        fresh = [
            not m and v not in seen for v, m in zip(column.tolist(), column.isna(), strict=True)
        ]
        assert (new[fresh, j] == UNKNOWN).all()
        if any(fresh):
            assert any(repr(X.columns[j]) in str(w.message) for w in caught)


# ---------------------------------------------------------------- estimator
def check_predictions(clf: TabularMoEClassifier, X: pd.DataFrame, classes: np.ndarray):
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), len(classes))
    assert np.isfinite(proba).all() and (proba >= 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    pred = clf.predict(X)
    assert pred.shape == (len(X),) and pred.dtype == classes.dtype
    assert np.isin(pred, classes).all()
    assert np.array_equal(pred, clf.classes_[proba.argmax(axis=1)])
    return proba


@pytest.mark.slow
@settings(suppress_health_check=HEALTH)
@given(
    data=st.data(),
    schema=schemas(),
    n_rows=st.integers(1, 10),
    vocabulary=st.sampled_from(["per_column", "shared"]),
    min_frequency=st.sampled_from([1, 1, 2]),
    n_layers=st.sampled_from([1, 1, 2]),
    batch_size=st.sampled_from(["auto", 1, 4]),
)
def test_classifier_on_messy_tables(
    data, schema, n_rows, vocabulary, min_frequency, n_layers, batch_size
):
    X = data.draw(rows_of(schema, n_rows), label="X")
    y = data.draw(labels(n_rows), label="y")
    clf = TabularMoEClassifier(
        d_model=4, n_heads=2, ff_dim=4, n_layers=n_layers, vocabulary=vocabulary,
        min_frequency=min_frequency, max_epochs=2, batch_size=batch_size, device="cpu",
        random_state=0,
    )  # fmt: skip
    with strict_warnings() as caught:
        fitted = outcome(expected_error(schema, X, y, vocabulary), lambda: clf.fit(X, y), "fit")
        if fitted is None:
            return
        # fit names a value save cannot write, once, and only then
        assert len(caught) == int(unsaveable_values(X)), [str(w.message) for w in caught]
        classes = np.unique(y)
        assert np.array_equal(clf.classes_, classes)
        proba = check_predictions(clf, X, classes)
        check_predictions(clf, X.iloc[:1], classes)

        # the saved file predicts the same, bit for bit (or save names the unsaveable value)
        with tempfile.TemporaryDirectory() as tmp:
            if unsaveable_values(X):
                event("save: TypeError Cannot save category value")
                with pytest.raises(TypeError, match="Cannot save category value"):
                    clf.save(Path(tmp) / "m.tabmoe")
            else:
                clf.save(Path(tmp) / "m.tabmoe")
                loaded = TabularMoEClassifier.load(Path(tmp) / "m.tabmoe")
                assert np.array_equal(loaded.predict_proba(X), proba)

        # new rows from the same schema, with unseen categories
        X_new = data.draw(rows_of(schema, data.draw(st.integers(1, 6)), unseen=True), "X_new")
        outcome(
            inf_error(schema, X_new, vocabulary),
            lambda: check_predictions(clf, X_new, classes),
            "predict unseen",
        )

        # columns shuffled: scikit-learn's clear error, for numeric column labels too
        if X.shape[1] > 1:
            order = data.draw(st.permutations(range(X.shape[1])), label="order")
            shuffled = X.iloc[:, order]
            if list(order) == sorted(order):
                check_predictions(clf, shuffled, classes)
            else:
                event("predict shuffled columns: ValueError same order")
                with pytest.raises(ValueError, match="same order"):
                    clf.predict(shuffled)


# ------------------------------------------- regressions found by the property tests
def fit_predict(X: pd.DataFrame, **params) -> np.ndarray:
    y = np.arange(len(X)) % 2
    clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0, **params).fit(X, y)
    proba = check_predictions(clf, X, clf.classes_)
    with tempfile.TemporaryDirectory() as tmp:
        clf.save(Path(tmp) / "m.tabmoe")
        assert np.array_equal(
            TabularMoEClassifier.load(Path(tmp) / "m.tabmoe").predict_proba(X), proba
        )
    return proba


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([None] * 4, dtype=object),
        pd.Series(pd.Categorical([None] * 4, categories=["never", "seen"])),
        pd.Series(pd.Categorical([None] * 4)),  # no categories at all
        pd.Series(pd.array([None] * 4, dtype="string")),
    ],
    ids=["object", "category", "category-empty", "string"],
)
def test_all_missing_categorical_column(column):
    """Was IndexError (tokenizer, empty vocabulary) / RuntimeError (zero-width output head)."""
    fit_predict(pd.DataFrame({"empty": column}))
    fit_predict(pd.DataFrame({"empty": column, "other": ["a", "b", "a", "b"]}))


def test_datetimes_outside_the_nanosecond_range_keep_their_order():
    """Were cast to ns with silent overflow: year 9999 sorted before year 2000."""
    years = [1, 1677, 2000, 2263, 9999]
    # microseconds stated outright: pandas 2 cannot infer a non-nanosecond unit from objects
    X = pd.DataFrame({"when": np.array([dt.datetime(y, 1, 1) for y in years], dtype="datetime64[us]")})
    t = ColumnTokenizer().fit_transform(X)[:, 0]
    assert X["when"].dtype == "datetime64[us]" and (np.diff(t) > 0).all()


def test_tz_aware_datetimes_are_binned_in_utc():
    """Was ValueError 'Could not convert object to NumPy timedelta', naming no column."""
    when = pd.to_datetime(["2020-01-01 00:00", "2020-01-01 01:00", None, "2020-01-02 00:00"])
    X = pd.DataFrame({"when": when.tz_localize("Europe/Paris")})
    t = ColumnTokenizer().fit_transform(X)[:, 0]
    assert t[2] == MISSING and t[0] < t[1] < t[3]
    fit_predict(X)


def test_timedelta_categories_beyond_292_years():
    """Were cast to ns at lookup (OutOfBoundsTimedelta) and at save (OverflowError)."""
    days = np.array([0, 10**6, None, 10**6], dtype="timedelta64[D]").astype("timedelta64[us]")
    X = pd.DataFrame({"span": days})  # timedelta64[us]: pandas 2 has no unit="D" beyond 292 years
    tok = ColumnTokenizer(vocabulary="shared").fit(X)
    t = tok.transform(X)[:, 0]
    assert t[1] == t[3] != t[0] and t[2] == MISSING
    fit_predict(X, vocabulary="shared")


def test_empty_string_and_nul_are_distinct_shared_categories():
    """pd.unique merged "" and "\\x00" on pandas 3.0 (found by Hypothesis on pandas 3.0.6)."""
    X = pd.DataFrame({"a": pd.Series([""], dtype=object), "b": pd.Series(["\x00"], dtype=object)})
    t = ColumnTokenizer(vocabulary="shared").fit_transform(X)[0]
    assert t[0] != t[1] and UNKNOWN not in t


def test_lone_surrogate_category():
    """Index.append re-inferred str values as pyarrow strings, which cannot hold one."""
    X = pd.DataFrame({"text": pd.Series(["\ud800", "a", "\ud800", "a"], dtype=object)})
    fit_predict(X)
    tok = ColumnTokenizer().fit(X)
    with pytest.warns(UserWarning, match=r"'text'.*\\udfff"):
        tok.transform(pd.DataFrame({"text": pd.Series(["\udfff"], dtype=object)}))


def test_extreme_and_adjacent_floats_get_their_own_bins():
    """Midpoints overflowed to inf near +-1.8e308 and collapsed between adjacent floats."""
    x = np.array([-1.7e308, 0.0, 5e-324, 1e308, 1.7e308])
    t = ColumnTokenizer(n_bins=10).fit_transform(pd.DataFrame({"x": x}))[:, 0]
    assert len(np.unique(t)) == 5 and (np.diff(t) > 0).all()


def test_duplicated_and_reordered_numeric_column_names():
    X = pd.DataFrame([[1, "a"], [2, "b"], [3, "a"], [4, "b"]], columns=["x", "x"])
    with pytest.raises(ValueError, match=r"unique; duplicated: \['x'\]"):
        TabularMoEClassifier(max_epochs=1, device="cpu").fit(X, [0, 1, 0, 1])
    X = pd.DataFrame({0: [1.0, 2.0, 3.0, 4.0], 1: [0.5, 0.1, 0.2, 0.3]})
    clf = TabularMoEClassifier(max_epochs=1, device="cpu").fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"same order as they were in fit: fitted \[0, 1\], got \[1, 0\]"):
        clf.predict(X[[1, 0]])
    assert clf.predict(X.to_numpy()[:, [1, 0]]).shape == (4,)  # arrays are positional


# ------------------------------------------------------------------ run records
SMOKE = Path(__file__).resolve().parents[1] / "benchmarks/results/smoke/runs/smoke/car-cluster/hist_gradient_boosting"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _schema_paths(spec, prefix: tuple = ()) -> list[tuple]:
    """Every field path the record schema names (nested ones included)."""
    out = []
    for key, sub in spec.fields.items():
        out.append((*prefix, key))
        out += _schema_paths(sub, (*prefix, key))
    return out


@settings(max_examples=min(200, settings.default.max_examples), suppress_health_check=HEALTH)
@given(data=st.data())
def test_a_record_the_schema_accepts_never_breaks_the_report(data):
    """Any JSON value in any field the report uses (or the field deleted): the schema refuses
    the record with a RecordError naming a field, or every report table is built from it."""
    from tabmoe.bench import report
    from tabmoe.bench.schema import RECORD, RecordError, check_record

    records = [json.loads((SMOKE / f"{protocol}-seed{k}.json").read_text())
               for protocol in ("fixed-budget", "tuned") for k in (0, 1)]
    record = records[data.draw(st.integers(0, 3), label="record")]
    path = data.draw(st.sampled_from(_schema_paths(RECORD)), label="field")
    parent = record
    for key in path[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(parent, dict):
        event("field under a null part: nothing to change")
        return
    if data.draw(st.booleans(), label="delete"):
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = data.draw(JSON_VALUES, label="value")
    record = json.loads(json.dumps(record))  # as stored
    try:
        check_record(record)
    except RecordError as exc:
        assert str(exc).startswith("field ")
        event("refused by the schema")
        return
    event("accepted")
    runs = report.runs_frame(records)
    table = report.per_split(runs)
    overall = report.summary(table)
    for protocol in dict.fromkeys(table["protocol"]):
        report._summary_md(overall[overall["protocol"] == protocol], "tabmoe")
        report._per_split_md(table[table["protocol"] == protocol])
        report._budget_text(records, protocol)
    report._cost_md(runs)
    report._compute_text(records)
    report.paired_with_paper(runs)
