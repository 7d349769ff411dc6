"""One loaded table: features and label in one DataFrame, plus where it came from.

Every loader (OpenML, local files, the paper's experiments) returns a :class:`Table`, so the
split definitions in :mod:`tabmoe.data.splits` work on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..tokenizer import is_categorical_dtype


@dataclass
class Table:
    """A labelled table.

    Attributes
    ----------
    data : DataFrame, shape (n_rows, n_features + 1)
        Features and the label column ``target``. Nominal columns are pandas ``category``;
        numeric columns keep their numeric dtype. The index is ``0..n_rows-1`` (row
        positions in the source), which the split leakage checks rely on.
    target : str
        Name of the label column in ``data``.
    name : str
        Human-readable name (``"credit-g"``).
    source : str
        Where it came from (``"openml:31"``, ``"file:/path/car.csv"``, ``"paper:simulation"``).
    description : str
        Free text (OpenML's description, a file's provenance), possibly empty.
    """

    data: pd.DataFrame
    target: str
    name: str
    source: str
    description: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Else ``data[name]`` is a frame: a split on such a column failed with "'DataFrame'
        # object has no attribute 'unique'", a repeated label made ``y`` a frame.
        repeated = self.data.columns[self.data.columns.duplicated()].unique()
        if len(repeated):
            raise ValueError(
                f"table {self.name!r} has duplicate column names {list(repeated)}; rename them"
            )
        if self.target not in self.data.columns:
            raise ValueError(
                f"target column {self.target!r} not in table {self.name!r}; columns are "
                f"{list(self.data.columns)}"
            )
        if not self.data.index.equals(pd.RangeIndex(len(self.data))):
            self.data = self.data.reset_index(drop=True)

    @property
    def X(self) -> pd.DataFrame:
        """Features, shape (n_rows, n_features)."""
        return self.data.drop(columns=self.target)

    @property
    def y(self) -> pd.Series:
        """Label, shape (n_rows,)."""
        return self.data[self.target]

    @property
    def categorical_columns(self) -> list[str]:
        """Feature columns with a categorical dtype (category, object, string, bool)."""
        return [c for c in self.X.columns if is_categorical_dtype(self.data[c].dtype)]

    @property
    def numeric_columns(self) -> list[str]:
        """Feature columns that are not categorical."""
        categorical = set(self.categorical_columns)
        return [c for c in self.X.columns if c not in categorical]
