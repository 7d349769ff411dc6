"""Values not seen at fit, gathered over one ``transform`` and warned about once per column
(the tokenizer maps them to UNKNOWN): a categorical value outside the column's categories,
or a finite number in a numeric column that held no finite number at fit."""

from __future__ import annotations

import warnings
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
    ``transform``: one warning per column for all the rows (count, rate, first 3 values)."""

    N_EXAMPLES = 3

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.names: dict[int, Any] = {}
        self.examples: dict[int, list] = {}
        self.numeric: set[int] = set()

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

    def warn(self, n_rows: int, note: str = "") -> None:
        """One warning per column; ``note`` (e.g. how a model reads UNKNOWN) ends each."""
        for j in sorted(self.counts):
            count = self.counts[j]
            # repr() per value, so that the int 2 and the str '2' look different (a column read
            # as text at fit and as numbers now); Series.astype(str) fails on a lone surrogate
            # under pyarrow; a long one is cut
            examples = "[" + ", ".join(shown_value(v) for v in self.examples[j]) + "]"
            # Numbers: the tokenizer maps them to UNKNOWN, TableEncoder's numeric block reads
            # them as missing, so the reading is left to the caller's note and the docs.
            reading = (", where the column was missing in every row" if j in self.numeric
                       else " and map to the UNKNOWN token")
            warnings.warn(
                f"Column {self.names[j]!r}: {count} value(s) ({count / n_rows:.1%} of rows) "
                f"were not seen during fit{reading} (e.g. {examples}).{' ' + note if note else ''}",
                UserWarning,
                stacklevel=user_stacklevel(),  # the user's call (predict, transform, ...)
            )
