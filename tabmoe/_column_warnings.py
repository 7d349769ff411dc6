"""Warnings at fit about columns read as categories that the user most likely did not mean
as categories: numbers stored as text, and near-unique (identifier-like) columns (and, from
:func:`warn_label_column`, the label left among the features). Gathered over the columns of one
:meth:`~tabmoe.tokenizer.ColumnTokenizer.fit`, the one place every model (tabmoe's and the
baselines', through :class:`~tabmoe.baselines.encoding.TableEncoder`) reads column types,
and warned about once per fit (one warning of each kind), naming all such columns; a column
is named in one of them only."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._frame import is_arrow_binary, listed
from ._stack import user_stacklevel


class ColumnWarning(UserWarning):
    """A column that is read, but most likely not as meant (the base of the warnings below,
    so that ``warnings.filterwarnings("ignore", category=ColumnWarning)`` silences them all)."""


class NumbersAsTextWarning(ColumnWarning):
    """Columns holding only numbers, as text (dtype object or string), read as categories."""


class NearUniqueColumnWarning(ColumnWarning):
    """Categorical columns with a value of their own in most rows (ids, names, timestamps)."""


class LabelColumnWarning(ColumnWarning):
    """A column of ``X`` named as ``y`` and equal to it in every row: the label left among the
    features (``fit(data, data["class"])``), from which the model reads the answer."""


def warn_label_column(frame: pd.DataFrame, y: Any) -> None:
    """Warn (:class:`LabelColumnWarning`) where ``y``, a named pandas Series (or a one-column
    DataFrame), is also a column of ``frame`` holding the same value in every row (missing
    where ``y`` is). One column compared, only when the names match: no cost on other fits."""
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:  # y = data[["class"]]: its one column
        y = y.iloc[:, 0]
    name = getattr(y, "name", None) if isinstance(y, pd.Series) else None
    if name is None or len(frame) != len(y):
        return
    try:
        column = frame[name] if name in frame.columns else None
        if not isinstance(column, pd.Series):  # absent, or a duplicated name
            return
        a, b = column.to_numpy(dtype=object), y.to_numpy(dtype=object)
        same = bool(np.all((a == b) | (pd.isna(a) & pd.isna(b))))
    except (TypeError, ValueError):  # unhashable name, values that do not compare
        return
    if same:
        warnings.warn(
            f"X holds the label: its column {name!r} equals y in every row, so the model reads "
            "the answer from it (scores near 1 on rows that have it, nothing learned for rows "
            f"that do not). Fit without it: X = data.drop(columns={name!r}).",
            LabelColumnWarning,
            stacklevel=user_stacklevel(),
        )


# More distinct numbers than this before numbers as text are warned about. Integer codes
# stored as text are often real categories: ratings (1-5, 1-10), months, weekdays, hours of
# the day (24) and days of the month (31) stay at or below it, as do small enumerations.
# Above it, each number being a word of its own costs the order, and values unseen at fit
# (common with many distinct numbers) become UNKNOWN at predict time.
MAX_CODES = 31
# The values parsed are the distinct ones the tokenizer counted anyway (no second pass over
# the rows), first SAMPLE of them spread over the column: a column of words fails on them,
# for well under a millisecond. Only a column of numbers goes on to a second, larger spread of
# at most CONFIRM values, which bounds the cost at about 50 ms a column; parsing all 10^6
# distinct values of an id column took 0.5 s, on a fit of 1.8 s.
SAMPLE, CONFIRM = 1_000, 100_000
# A number written with a leading zero: a code ("02139", "007"), not a quantity.
_CODE = r"\s*[+-]?0\d"
# Near-unique: more than half of the non-missing training rows hold a value that occurs in no
# other row. That share is the Good-Turing estimate of the share of new rows whose value was
# not seen during fit: over half of them would be UNKNOWN at predict time, and the rows seen
# could only be memorised. A real category rarely has half its rows in singletons, an id, a
# name, a timestamp or free text nearly always (100%).
NEAR_UNIQUE = 0.5
# And at least this many values that occur once: fewer, and the table is too small to tell an
# identifier from a rare category (toy tables, scikit-learn's estimator checks: 20-30 rows).
MIN_SINGLETONS = 50


class ColumnChecks:
    """The columns of one fit to warn about, gathered column by column (:meth:`add`), then
    warned about once (:meth:`warn`)."""

    def __init__(self, min_frequency: int = 1) -> None:
        # min_frequency >= 2 folds the values seen once into UNKNOWN, which training then sees:
        # what docs/reliability.md recommends for an id-like column, so not warned about
        self.folds_singletons = min_frequency > 1
        self.numbers_as_text: list[Any] = []
        self.near_unique: list[tuple[Any, float]] = []  # (name, share of rows in singletons)

    def add(self, name: Any, dtype: Any, counts: pd.Series, by_dtype: bool) -> None:
        """Check categorical column ``name`` of ``dtype``, whose distinct non-missing values
        occur ``counts`` times (all > 0); ``by_dtype``: categorical because of its dtype
        (``"auto"``), not declared so by the user (who chose: not warned about numbers as
        text, but still about near-unique values, which no choice of type makes useful)."""
        n = counts.to_numpy()
        singletons = int((n == 1).sum())
        share = singletons / max(int(n.sum()), 1)
        near_unique = (
            singletons >= MIN_SINGLETONS and share > NEAR_UNIQUE and not self.folds_singletons
        )
        numbers = None
        if by_dtype and _text_dtype(dtype) and len(counts) > MAX_CODES:
            numbers = _numbers(counts.index)
        # One warning per column: near-unique integers are ids written as numbers (account
        # numbers, epoch seconds), other numbers are quantities (prices, weights).
        if numbers is not None and not (near_unique and (numbers == np.round(numbers)).all()):
            self.numbers_as_text.append(name)
        elif near_unique:
            self.near_unique.append((name, share))

    def warn(self) -> None:
        if self.numbers_as_text:
            names = listed(self.numbers_as_text, repr)
            warnings.warn(
                f"Column(s) {names} hold only numbers, but as text (dtype object or string), "
                "so they are read as categories: each distinct number is a token of its own, "
                "their order is lost, and numbers not seen during fit become UNKNOWN at predict "
                "time. If they are quantities, convert them before fit (e.g. "
                "X[col] = pd.to_numeric(X[col])), or pass categorical_features naming only the "
                "categorical columns (the others are then read as numbers). If they are codes, "
                "give them the 'category' dtype (X[col].astype('category')), which keeps them "
                "categorical without this warning.",
                NumbersAsTextWarning,
                stacklevel=user_stacklevel(),  # the user's fit
            )
        if self.near_unique:
            names = listed([f"{name!r} ({share:.0%})" for name, share in self.near_unique])
            warnings.warn(
                f"Column(s) {names} have a value of their own in most rows: the share of "
                "training rows whose value occurs only once, shown for each, is about the share "
                "of new rows whose value will not have been seen during fit (UNKNOWN at predict "
                "time). Such a column (an identifier, a name, a timestamp or free text) can only "
                "be memorised: drop it, derive coarser features from it (e.g. pd.to_datetime, "
                "then the month or weekday), or fit with min_frequency=2, which gives the values "
                "seen once the UNKNOWN token during training too; if it holds numbers, convert "
                "it with pd.to_numeric.",
                NearUniqueColumnWarning,
                stacklevel=user_stacklevel(),
            )


def _text_dtype(dtype: Any) -> bool:
    """object or string dtypes (pyarrow's too, and its bytes); not category, bool or interval, whose values
    the user (or the file format) chose as categories."""
    if isinstance(dtype, pd.CategoricalDtype | pd.IntervalDtype):
        return False
    if isinstance(dtype, pd.ArrowDtype):  # bytes too, as in an object column
        return is_arrow_binary(dtype) or (
            pd.api.types.is_string_dtype(dtype) and not str(dtype.pyarrow_dtype).startswith("dictionary<")
        )
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _numbers(values: pd.Index) -> np.ndarray | None:
    """The values (distinct, non-missing) as floats if every one is a number: parses as a
    finite float and is not written with a leading zero, as codes are ("02139", "007";
    pd.to_numeric would drop the zero); else None. Values spread over the column, first
    SAMPLE, then CONFIRM of them (the floats returned: those of the last)."""
    parsed = None
    for size in (SAMPLE,) if len(values) <= SAMPLE else (SAMPLE, CONFIRM):
        parsed = _parsed(_spread(values, size))
        if parsed is None:
            return None
    return parsed


def _spread(values: pd.Index, size: int) -> pd.Index:
    """At most ``size`` of ``values``, evenly spaced (deterministic: no random state)."""
    if len(values) <= size:
        return values
    return values[np.linspace(0, len(values) - 1, size).astype(np.int64)]


def _parsed(values: pd.Index) -> np.ndarray | None:
    """``values`` as floats if all are numbers (see :func:`_numbers`), else None."""
    objects = pd.Series(values.to_numpy(dtype=object), dtype=object)
    try:
        numbers = pd.to_numeric(objects, errors="coerce")
        if pd.api.types.is_complex_dtype(numbers.dtype):  # no numeric column takes them
            return None
        parsed = numbers.to_numpy(dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # e.g. tuples; ints beyond floats
        return None
    if not np.isfinite(parsed).all():  # NaN: a value that is not a number
        return None
    try:
        coded = objects.str.match(_CODE, na=False).any()
    except (AttributeError, TypeError):  # no text (numbers), or bytes (scipy's arff nominals)
        coded = any(
            re.match(_CODE.encode() if isinstance(v, bytes) else _CODE, v)
            for v in objects
            if isinstance(v, (str, bytes))
        )
    return None if coded else parsed
