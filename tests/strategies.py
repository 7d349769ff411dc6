"""Hypothesis strategies for messy tables: a schema (column names + kinds), then rows.

A :class:`Schema` draws each column's kind (pandas dtype family) and a small pool of
values, so that values repeat across rows (categories seen at fit) and a second draw from
the same schema can bring unseen values (``unseen=True``). Kinds cover what users feed in:
category, object with mixed types, string, bool / nullable boolean, int / nullable Int64,
float with NaN (and inf when the schema allows it), datetimes (naive and tz-aware),
timedeltas, constant and all-missing columns. Column names are unicode strings (empty
included), numbers, a str/int mix (scikit-learn refuses it) or duplicated.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd
from hypothesis import strategies as st

SPECIAL_TEXT = ["", " ", "a", "A", "é", "日本", "🙂", "\x00", "NaN", "None", "nan", "\u200b"]
#: Object columns may also hold a lone surrogate: valid in Python, not encodable as UTF-8.
OBJECT_TEXT = [*SPECIAL_TEXT, "\ud800"]

text = st.one_of(st.sampled_from(SPECIAL_TEXT), st.text(max_size=4))
object_values = st.one_of(
    st.sampled_from(OBJECT_TEXT),
    st.text(max_size=3),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=True),
    st.booleans(),
    st.sampled_from([None, np.nan, pd.NA, pd.NaT]),
    st.one_of(st.binary(max_size=2), st.tuples(st.integers(0, 2)), st.dates()),  # unsaveable
)
UNSAVEABLE = (bytes, tuple, dt.date)
timezones = st.sampled_from([dt.timezone.utc, dt.timezone(dt.timedelta(hours=-7, minutes=-30))])

KINDS = (
    "category", "object", "string", "bool", "boolean", "int", "Int64", "float",
    "datetime", "datetime_tz", "timedelta", "constant", "missing",
)  # fmt: skip
#: Kinds that "auto" tokenizes as numeric (quantile bins); the rest are categorical.
NUMERIC_KINDS = {"int", "Int64", "float", "datetime", "datetime_tz", "timedelta"}
MISSING_FORMS = ("object", "float", "category", "Int64", "datetime", "string")


@dataclass(frozen=True)
class Column:
    name: object
    kind: str
    pool: tuple  # values the column takes (missing markers included where the kind has them)
    extra: object = None  # kind-specific: tz, missing form, constant's kind, allow_inf


@dataclass(frozen=True)
class Schema:
    columns: tuple[Column, ...]
    names: str  # "str", "number", "mixed" or "duplicated"

    @property
    def labels(self) -> list:
        return [c.name for c in self.columns]


def _elements(kind: str, extra: object):
    """Strategy of non-missing values of a column kind."""
    if kind in ("category", "string"):
        return text
    if kind == "object":
        return object_values
    if kind in ("bool", "boolean"):
        return st.booleans()
    if kind in ("int", "Int64"):
        return st.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max)
    if kind == "float":
        return st.floats(allow_nan=False, allow_infinity=bool(extra))
    if kind == "datetime":
        return st.datetimes()
    if kind == "datetime_tz":
        return st.datetimes(timezones=st.just(extra))
    if kind == "timedelta":
        return st.timedeltas(
            min_value=dt.timedelta(days=-(10**6)), max_value=dt.timedelta(days=10**6)
        )
    raise AssertionError(kind)


@st.composite
def columns(draw, name: object) -> Column:
    kind = draw(st.sampled_from(KINDS))
    extra = None
    if kind == "missing":
        return Column(name, kind, (), draw(st.sampled_from(MISSING_FORMS)))
    if kind == "constant":
        inner = draw(st.sampled_from([k for k in KINDS if k not in ("constant", "missing")]))
        inner_extra = draw(timezones) if inner == "datetime_tz" else None
        value = draw(_elements(inner, inner_extra))
        return Column(name, kind, (value,), (inner, inner_extra))
    if kind == "datetime_tz":
        extra = draw(timezones)
    if kind == "float":
        extra = draw(st.sampled_from([False, False, False, True]))  # allow inf, rarely
    pool = draw(st.lists(_elements(kind, extra), min_size=1, max_size=4))
    if kind == "float" and extra:
        pool.append(draw(st.sampled_from([np.inf, -np.inf])))  # st.floats rarely draws them
    return Column(name, kind, tuple(pool), extra)


NAME_MODES = ["str", "str", "str", "number", "number", "mixed", "duplicated"]


@st.composite
def _names(draw, n: int) -> tuple[str, list]:
    """(mode, n column labels); "mixed" and "duplicated" need two columns."""
    mode = draw(st.sampled_from(NAME_MODES if n >= 2 else ["str", "number"]))
    if mode == "number":
        numbers = st.one_of(st.integers(-5, 50), st.sampled_from([0.5, -1.25]))
        return mode, draw(st.lists(numbers, min_size=n, max_size=n, unique=True))
    names = draw(st.lists(text, min_size=n, max_size=n, unique=True))
    if mode == "mixed":
        names[draw(st.integers(0, n - 1))] = 7
    elif mode == "duplicated":
        names[-1] = names[0]
    return mode, names


@st.composite
def schemas(draw, max_columns: int = 4) -> Schema:
    mode, names = draw(_names(draw(st.integers(1, max_columns))))
    return Schema(tuple(draw(columns(name)) for name in names), mode)


def _missing_series(form: str, n: int) -> pd.Series:
    if form == "object":
        return pd.Series([None] * n, dtype=object)
    if form == "float":
        return pd.Series(np.full(n, np.nan))
    if form == "category":
        return pd.Series(pd.Categorical([None] * n, categories=["never"]))
    if form == "Int64":
        return pd.Series(pd.array([None] * n, dtype="Int64"))
    if form == "datetime":
        return pd.Series(pd.to_datetime([None] * n))
    return pd.Series(pd.array([None] * n, dtype="string"))


def _series(kind: str, values: list, extra: object) -> pd.Series:
    """A column of ``kind`` from python values (``None`` = missing)."""
    if kind == "category":
        return pd.Series(pd.Categorical(values))
    if kind == "object":
        return pd.Series(values, dtype=object)
    if kind == "string":
        return pd.Series(pd.array(values, dtype="string"))
    if kind == "bool":
        return pd.Series(np.array([bool(v) for v in values], dtype=bool))
    if kind == "boolean":
        return pd.Series(pd.array(values, dtype="boolean"))
    if kind == "int":
        return pd.Series(np.array([0 if v is None else v for v in values], dtype=np.int64))
    if kind == "Int64":
        return pd.Series(pd.array(values, dtype="Int64"))
    if kind == "float":
        return pd.Series(np.array([np.nan if v is None else v for v in values], dtype=np.float64))
    # Microsecond resolution stated outright: pandas 3 infers it from Python objects, pandas 2
    # would cast to nanoseconds and overflow beyond 1677-2262 / +-292 years.
    if kind == "datetime":
        return pd.Series(np.array(values, dtype="datetime64[us]"))
    if kind == "datetime_tz":
        wall = [None if v is None else v.replace(tzinfo=None) for v in values]  # fixed offsets
        return pd.Series(np.array(wall, dtype="datetime64[us]")).dt.tz_localize(extra)
    if kind == "timedelta":
        return pd.Series(np.array(values, dtype="timedelta64[us]"))
    raise AssertionError(kind)


#: kinds without a missing value of their own (numpy bool and int64)
NO_MISSING = {"bool", "int"}


@st.composite
def rows_of(draw, schema: Schema, n_rows: int, unseen: bool = False) -> pd.DataFrame:
    """``n_rows`` rows of ``schema``; ``unseen=True`` adds values outside each column's pool."""
    series = []
    for col in schema.columns:
        if col.kind == "missing":
            series.append(_missing_series(col.extra, n_rows))
            continue
        kind, extra = col.extra if col.kind == "constant" else (col.kind, col.extra)
        pool = list(col.pool)
        if unseen and col.kind != "constant":
            pool += draw(st.lists(_elements(kind, extra), min_size=1, max_size=2))
        choices = st.sampled_from(pool)
        if kind not in NO_MISSING and col.kind != "constant" and kind != "object":
            choices = st.one_of(choices, st.none())
        values = draw(st.lists(choices, min_size=n_rows, max_size=n_rows))
        series.append(_series(kind, values, extra))
    frame = pd.concat([s.rename(i) for i, s in enumerate(series)], axis=1)
    frame.columns = pd.Index(schema.labels, dtype=object)
    return frame


@st.composite
def labels(draw, n_rows: int) -> np.ndarray:
    """y: ints, unicode strings or bools; every drawn class occurs (one class is refused);
    one time in ten, one label is None, NaN or pd.NA (refused)."""
    kind = draw(st.sampled_from(["int", "text", "bool"]))
    n_classes = draw(st.sampled_from([2, 2, 2, 2, 3, 3, 1]))
    if kind == "bool":
        pool = draw(st.permutations([False, True]))[:n_classes]
    else:
        values = st.integers(-2, 5) if kind == "int" else text
        pool = draw(st.lists(values, min_size=n_classes, max_size=n_classes, unique=True))
    y = pool[:n_rows] + draw(st.lists(st.sampled_from(pool), min_size=n_rows, max_size=n_rows))
    y = np.asarray(draw(st.permutations(y[:n_rows])))
    if draw(st.integers(0, 9)) == 0:  # a missing label (refused: "Input y contains NaN")
        y = y.astype(object)
        y[draw(st.integers(0, n_rows - 1))] = draw(st.sampled_from([None, np.nan, pd.NA]))
    return y


def inf_columns(schema: Schema, frame: pd.DataFrame) -> list:
    """Names of numeric columns of ``frame`` that hold +-inf (the tokenizer refuses them)."""
    out = []
    for j, col in enumerate(schema.columns):
        kind = col.extra[0] if col.kind == "constant" else col.kind
        if kind == "float" and np.isinf(frame.iloc[:, j].to_numpy(dtype=float)).any():
            out.append(col.name)
    return out


def unsaveable_values(frame: pd.DataFrame) -> bool:
    """Whether an object column holds values that ``save`` cannot write (bytes, tuples, dates)."""
    for _, column in frame.items():
        if column.dtype == object and any(_unsaveable(v) for v in column.tolist()):
            return True
    return False


def _unsaveable(value: object) -> bool:
    # NaT (missing) and Timestamps are dates too, but saveable
    return isinstance(value, UNSAVEABLE) and not isinstance(value, pd.Timestamp | type(pd.NaT))
