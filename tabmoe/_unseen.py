"""Values not seen at fit, gathered over one ``transform`` and warned about once per column
(the tokenizer maps them to UNKNOWN): a categorical value outside the column's categories,
or a finite number in a numeric column that held no finite number at fit. Likewise missing
values in a column that held none at fit (the tokenizer maps them to MISSING)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ._stack import user_stacklevel

#: Characters of an example's repr in the warning: a longer one (free text) is cut there and
#: its length given, so that a text of 10^6 characters does not make a warning as long.
MAX_EXAMPLE_CHARS = 100


def shown_value(value: Any) -> str:
    """``repr(value)``, cut to ``MAX_EXAMPLE_CHARS`` characters with its length when longer."""
    text = repr(value)
    if len(text) <= MAX_EXAMPLE_CHARS:
        return text
    return f"{text[:MAX_EXAMPLE_CHARS]}... ({len(text):,} characters)"


class UnseenValues:
    """Values not seen at fit (categorical ones, or numbers in a numeric column missing in
    every row at fit), per column, gathered over the row batches of one
    ``transform``: one warning per column for all the rows (count, rate, first 3 values).
    Missing values in a column that held none at fit likewise (count, rate).

    ``note`` ends the unseen values' warnings (e.g. how a model reads UNKNOWN),
    ``missing_note`` the missing values' (None: no such warning, for a model that leaves
    missing values out of the attention); ``numeric_missing=False``: none for numeric
    columns either (a reader of numbers that does not read the MISSING token)."""

    N_EXAMPLES = 3

    def __init__(self, note: str = "", missing_note: str | None = "", numeric_missing: bool = True) -> None:
        self.note, self.missing_note, self.numeric_missing = note, missing_note, numeric_missing
        self.counts: dict[int, int] = {}
        self.names: dict[int, Any] = {}
        self.examples: dict[int, list] = {}
        self.numeric: set[int] = set()
        self.missing: dict[int, int] = {}

    def add(self, j: int, name: Any, values: np.ndarray, numeric: bool = False) -> None:
        """Record the unseen ``values`` (object array) of column ``j`` in one batch;
        ``numeric``: numbers in a numeric column that held none at fit."""
        self.counts[j] = self.counts.get(j, 0) + len(values)
        self.names[j] = name
        if numeric:
            self.numeric.add(j)
        seen = self.examples.get(j, [])
        if len(seen) < self.N_EXAMPLES:
            candidates = [*seen, *pd.unique(values)[: self.N_EXAMPLES]]
            both = np.empty(len(candidates), dtype=object)
            for i, v in enumerate(candidates):  # one by one: a tuple stays one value
                both[i] = v
            seen = list(pd.unique(both)[: self.N_EXAMPLES])
        self.examples[j] = seen

    def add_missing(self, j: int, name: Any, count: int, numeric: bool = False) -> None:
        """Record ``count`` missing values of column ``j`` (numeric or not) in one batch, a
        column that held no missing value at fit."""
        if count and self.missing_note is not None and (self.numeric_missing or not numeric):
            self.missing[j] = self.missing.get(j, 0) + count
            self.names[j] = name

    def batches(
        self, frame: pd.DataFrame, rows: int, tokens: Callable[[pd.DataFrame, UnseenValues], np.ndarray]
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """``(rows, tokens(frame.iloc[rows], self))`` for each batch of ``rows`` rows of
        ``frame``, then the warnings, once, for all of them."""
        for start in range(0, len(frame), rows):
            part = slice(start, min(start + rows, len(frame)))
            yield part, tokens(frame.iloc[part], self)
        self.warn(len(frame))

    def warn(self, n_rows: int) -> None:
        """One warning per column and kind; the notes end them."""
        for j in sorted(self.counts.keys() | self.missing.keys()):
            if j in self.counts:
                self._warn(self._unseen_message(j, n_rows), self.note)
            if j in self.missing:
                count = self.missing[j]
                # Not "not seen during fit": a filter on the unseen values' warning keeps to them.
                message = (f"Column {self.names[j]!r}: {count} value(s) ({count / n_rows:.1%} of rows) "
                           "are missing and map to the MISSING token, which fit never saw in this column.")
                self._warn(message, self.missing_note)

    def _unseen_message(self, j: int, n_rows: int) -> str:
        count = self.counts[j]
        # repr() per value, so that the int 2 and the str '2' look different (a column read
        # as text at fit and as numbers now); Series.astype(str) fails on a lone surrogate
        # under pyarrow; a long one is cut
        examples = "[" + ", ".join(shown_value(v) for v in self.examples[j]) + "]"
        # Numbers: the tokenizer maps them to UNKNOWN, TableEncoder's numeric block reads
        # them as missing, so the reading is left to the caller's note and the docs.
        reading = (", where the column was missing in every row" if j in self.numeric
                   else " and map to the UNKNOWN token")
        return (f"Column {self.names[j]!r}: {count} value(s) ({count / n_rows:.1%} of rows) "
                f"were not seen during fit{reading} (e.g. {examples}).")

    @staticmethod
    def _warn(message: str, note: str | None) -> None:
        warnings.warn(
            f"{message}{' ' + note if note else ''}",
            UserWarning,
            stacklevel=user_stacklevel(),  # the user's call (predict, transform, ...)
        )
