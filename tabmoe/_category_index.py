"""The tokenizer's helpers for a categorical column's values as a pandas Index: sorting
mixed types, concatenating without re-inference, and reading a pandas categorical's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd


def sorted_values(values: pd.Index) -> pd.Index:
    """Sort category values; mixed types sort by (type name, str) so order is deterministic."""
    try:
        return values.sort_values()
    except TypeError:
        keys = [(type(v).__name__, str(v)) for v in values]
        order = sorted(range(len(values)), key=keys.__getitem__)
        return values[order]


def concat_objects(indexes: list[pd.Index]) -> pd.Index:
    """Concatenate as an object Index. ``Index.append`` re-infers the dtype: str values become a
    pyarrow string index (which cannot hold a lone surrogate) and Timedeltas a timedelta64[ns]
    one (which overflows beyond +-292 years)."""
    arrays = [index.to_numpy(dtype=object) for index in indexes]
    return pd.Index(np.concatenate(arrays) if arrays else [], dtype=object)


def category_codes(index: pd.Index, column: pd.Series) -> np.ndarray:
    """Position in ``index`` of each row of a pandas categorical ``column`` (-1: absent or
    missing): each category is looked up once, then rows are indexed by their integer codes.
    Only the categories the rows use are looked up when the dtype has more categories than
    there are rows: a batch of a column whose dtype lists 10^6 categories costs its rows, not
    10^6 lookups (predict tokenizes a few thousand rows at a time)."""
    categories, cat_codes = column.cat.categories, column.cat.codes.to_numpy()
    present = cat_codes >= 0  # (a column may have no categories at all)
    codes = np.full(len(cat_codes), -1, dtype=np.intp)
    if len(categories) > len(cat_codes):
        used, rows = np.unique(cat_codes[present], return_inverse=True)
        codes[present] = index.get_indexer(pd.Index(categories[used], dtype=object))[rows]
    else:
        codes[present] = index.get_indexer(pd.Index(categories, dtype=object))[cat_codes[present]]
    return codes
