"""Warnings at fit about columns read as categories that the user most likely did not mean
as categories: numbers stored as text. Gathered over the columns of one
:meth:`~tabmoe.tokenizer.ColumnTokenizer.fit`, the one place every model (tabmoe's and the
baselines', through :class:`~tabmoe.baselines.encoding.TableEncoder`) reads column types,
and warned about once per fit, naming all such columns."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._frame import listed
from ._stack import user_stacklevel


class ColumnWarning(UserWarning):
    """A column that is read, but most likely not as meant (the base of the warnings below,
    so that ``warnings.filterwarnings("ignore", category=ColumnWarning)`` silences them all)."""


class NumbersAsTextWarning(ColumnWarning):
    """Columns holding only numbers, as text (dtype object or string), read as categories."""


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


class ColumnChecks:
    """The columns of one fit to warn about, gathered column by column (:meth:`add`), then
    warned about once (:meth:`warn`)."""

    def __init__(self) -> None:
        self.numbers_as_text: list[Any] = []

    def add(self, name: Any, dtype: Any, values: pd.Index, by_dtype: bool) -> None:
        """Check categorical column ``name`` of ``dtype``, with distinct non-missing
        ``values``; ``by_dtype``: categorical because of its dtype (``"auto"``), not declared
        so by the user (who chose, and is not warned)."""
        if by_dtype and _text_dtype(dtype) and len(values) > MAX_CODES and _numbers(values):
            self.numbers_as_text.append(name)

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


def _text_dtype(dtype: Any) -> bool:
    """object or string dtypes (pyarrow's too); not category, bool or interval, whose values
    the user (or the file format) chose as categories."""
    if isinstance(dtype, pd.CategoricalDtype | pd.IntervalDtype):
        return False
    if isinstance(dtype, pd.ArrowDtype):
        return pd.api.types.is_string_dtype(dtype) and not str(dtype.pyarrow_dtype).startswith(
            "dictionary<"
        )
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _numbers(values: pd.Index) -> bool:
    """Whether every value (distinct, non-missing) is a number: parses as a finite float and
    is not written with a leading zero, as codes are ("02139", "007"; pd.to_numeric would
    drop the zero). Values spread over the column, first SAMPLE, then CONFIRM of them."""
    sizes = (SAMPLE,) if len(values) <= SAMPLE else (SAMPLE, CONFIRM)
    return all(_all_numbers(_spread(values, size)) for size in sizes)


def _spread(values: pd.Index, size: int) -> pd.Index:
    """At most ``size`` of ``values``, evenly spaced (deterministic: no random state)."""
    if len(values) <= size:
        return values
    return values[np.linspace(0, len(values) - 1, size).astype(np.int64)]


def _all_numbers(values: pd.Index) -> bool:
    objects = pd.Series(values.to_numpy(dtype=object), dtype=object)
    try:
        parsed = pd.to_numeric(objects, errors="coerce")
    except (TypeError, ValueError):  # values pd.to_numeric does not coerce (e.g. tuples)
        return False
    if parsed.isna().any() or not np.isfinite(parsed.to_numpy(dtype=np.float64)).all():
        return False
    try:
        coded = objects.str.match(r"\s*[+-]?0\d", na=False)
    except AttributeError:  # no text at all (numbers in an object column)
        return True
    return not coded.any()
