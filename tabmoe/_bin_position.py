"""Where a numeric value lies inside its quantile bin: the input of piecewise-linear
numeric embeddings (``numeric_embedding="piecewise"``, docs/research.md#study-33)."""

from __future__ import annotations

from typing import Any

import numpy as np


def value_range(values: np.ndarray) -> tuple[float, float] | None:
    """(min, max) of the finite values, None when there are none."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else None


def bin_position(values: np.ndarray, edges: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """(n,) float32 in [0, 1]: each value's position between its bin's lower and upper
    bound (the fitted minimum below the first inner edge, the maximum above the last).

    Values outside the fitted range are clipped to 0 or 1 (the embedding stops at the end
    bins, as trees do); NaN and bins of zero width give 1."""
    if bounds is None:
        return np.ones(len(values), dtype=np.float32)
    k = np.searchsorted(edges, values, side="right")  # the bin, as the tokenizer reads it
    lower = np.concatenate([[bounds[0]], edges])[k]
    upper = np.concatenate([edges, [bounds[1]]])[k]
    with np.errstate(all="ignore"):  # x / 0 and NaN: replaced below
        # Halved, so that a bin wider than the float range (-1e308 to 1e308) does not overflow.
        # The bin a repeated 0 has of its own, [0, 5e-324), halves to width 0 and so reads 1
        # (7.0 in [7.0, 7.0 + ulp) reads 0): kept, as the committed piecewise records (study 33,
        # tuned runs) were made so; adult's capital-gain and bank's V15 hold such a bin.
        position = (values / 2 - lower / 2) / (upper / 2 - lower / 2)
    position = np.where(upper > lower, position, 1.0)
    position = np.where(np.isnan(position), 1.0, np.clip(position, 0.0, 1.0))
    return position.astype(np.float32)


def check_value_range(j: int, bounds: Any, edges: np.ndarray) -> None:
    """Column ``j``'s loaded (min, max): two finite numbers around its finite inner edges
    (tokenizers fitted before ``np.quantile``'s overflow was caught may hold infinite edges
    on values that span the float range)."""
    finite = edges[np.isfinite(edges)]
    ok = len(bounds) == 2 and bool(np.isfinite(bounds).all()) and bounds[0] <= bounds[1]
    if not ok or (finite.size and not (bounds[0] <= finite[0] and finite[-1] <= bounds[1])):
        raise ValueError(
            f"tokenizer column {j}: value range {list(bounds)} is not a (min, max) that holds its bin edges"
        )
