"""The checks of a ``ColumnTokenizer`` rebuilt from saved data (:mod:`tabmoe.persistence`):
its vocabularies, offsets, bin edges and value ranges against each other, so that a
damaged or hand-edited file is refused with the part that does not fit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._bin_position import check_value_range

if TYPE_CHECKING:
    from .tokenizer import ColumnTokenizer


def check_length(name: str, values: Any, n: int, what: str = "columns") -> None:
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries for {n} {what}")


def check_state(tok: ColumnTokenizer, n_special: int) -> None:
    """Vocabulary sizes, offsets and bin edges of a rebuilt ``ColumnTokenizer`` agree (its
    ``_from_state``; ``n_special`` reserved ids come before the first column's)."""
    tok._validate_params()
    n = tok.n_features_in_
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"tokenizer n_features_in {n!r} is not a positive integer")
    for name in ("is_categorical_", "categories_", "_infrequent", "bin_edges_", "offsets_",
                 "n_tokens_per_column_"):
        check_length(f"tokenizer {name}", getattr(tok, name), n)
    for name in ("feature_names_in_", "_column_labels", "value_range_", "_numeric_kinds", "_tz_aware", "missing_seen_"):
        if getattr(tok, name, None) is not None:
            check_length(f"tokenizer {name}", getattr(tok, name), n)
    kinds = getattr(tok, "_numeric_kinds", None)
    if kinds is not None and ([k is None for k in kinds] != [bool(c) for c in tok.is_categorical_]
                              or not all(k in (None, "number", "datetime", "timedelta") for k in kinds)):
        raise ValueError(f"tokenizer numeric_kinds {kinds!r} do not fit its columns")
    ranges, bins = getattr(tok, "value_range_", None), tok.n_bins_
    bounded = isinstance(bins, int) and all(e is None or len(e) < bins for e in tok.bin_edges_)
    if isinstance(bins, bool) or not bounded or bins < 2:
        raise ValueError(f"tokenizer n_bins {bins!r} is not an integer >= 2 that bounds every column's bins")
    sizes = tok.n_tokens_per_column_
    if tok.vocabulary == "shared":
        values = getattr(tok, "shared_values_", None)
        if values is None or not values.is_unique:
            raise ValueError("tokenizer shared_values missing or not unique")
        offsets = np.full(n, n_special)
        expected_sizes = np.full(n, len(values))
    else:
        expected_sizes = np.asarray([len(c) if cat else len(e) + 1 for cat, c, e in zip(
            tok.is_categorical_, tok.categories_, tok.bin_edges_, strict=True)], dtype=np.int64)
        offsets = n_special + np.concatenate([[0], np.cumsum(expected_sizes)[:-1]])
    for j in range(n):
        categorical = bool(tok.is_categorical_[j])
        if categorical != (tok.categories_[j] is not None) or categorical != (tok.bin_edges_[j] is None) \
                or categorical != (tok._infrequent[j] is not None) \
                or (categorical and ranges is not None and ranges[j] is not None):
            raise ValueError(f"tokenizer column {j}: categories and bin edges do not fit its kind")
        if categorical and tok.vocabulary == "shared" and (values.get_indexer(tok.categories_[j]) < 0).any():
            raise ValueError(f"tokenizer column {j}: categories missing from the shared vocabulary")
        if not categorical:
            edges = tok.bin_edges_[j]
            if edges.ndim != 1 or np.isnan(edges).any() or (edges[1:] < edges[:-1]).any():  # (np.diff overflows)
                raise ValueError(f"tokenizer column {j}: bin edges are not sorted numbers")
            if len(edges) + 1 > sizes[j]:
                raise ValueError(f"tokenizer column {j}: {len(edges) + 1} bins for {sizes[j]} tokens")
            bounds = None if ranges is None else ranges[j]
            if bounds is not None:
                check_value_range(j, bounds, edges)
    if not np.array_equal(sizes, expected_sizes):
        raise ValueError(f"tokenizer n_tokens_per_column {sizes.tolist()} does not fit the vocabularies "
                         f"({expected_sizes.tolist()})")
    if not np.array_equal(tok.offsets_, offsets):
        raise ValueError(f"tokenizer offsets {tok.offsets_.tolist()} are not those of its vocabularies "
                         f"({offsets.tolist()})")
    if tok.n_tokens_ != n_special + (int(sizes[0]) if tok.vocabulary == "shared" else int(sizes.sum())):
        raise ValueError(f"tokenizer n_tokens {tok.n_tokens_!r} does not fit its vocabularies")
