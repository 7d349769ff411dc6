"""Rows per training step when the output layers are huge."""

from __future__ import annotations

import warnings

import numpy as np

from .._stack import user_stacklevel

#: Training computes every column's output logits for every row of a batch: rows x W floats,
#: W = the summed vocabulary sizes. Batches are capped at this many logits (128 MiB in
#: float32, about 0.5 GiB with the copies autograd keeps); the cap binds only for columns with
#: ~10^5 or more categories. Measured at 10^6 categories: 256 rows per batch peak at 4.0 GiB.
MAX_BATCH_LOGITS = 2**25


def cap_rows_for_heads(
    rows: int, sizes: np.ndarray, n_classes: int, n_members: int, labels: list[str] | None,
    n_rows: int | None = None,
) -> int:
    """``rows``, or fewer when the output layers of columns with ``sizes`` tokens (plus the
    label's ``n_classes``, for each of ``n_members`` networks) exceed ``MAX_BATCH_LOGITS``
    logits a batch; then a warning names what makes them: the label's classes, the largest
    column (``labels[j]``, or ``#j``) where it holds half of them or more, else the columns.
    ``n_rows``: the rows trained on; a batch holds at most those, so a ``batch_size`` above
    them is capped as before (a refit trains on more) but warned about only when the rows
    there are exceed the cap."""
    width = (int(sizes.sum()) + n_classes) * n_members  # logits a row
    cap = max(1, MAX_BATCH_LOGITS // width)
    if rows <= cap:
        return rows
    held = rows if n_rows is None else min(rows, n_rows)
    if held <= cap:  # every row fits in one batch of the cap: nothing changes for them
        return cap
    j = int(np.argmax(sizes))
    column = labels[j] if labels else f"#{j}"
    capped = f"training batches are capped at {cap} rows (instead of {held}) to bound the memory of the output layers"
    per_row = int(sizes.sum()) + n_classes
    if n_classes > sizes[j] and 2 * n_classes >= per_row:  # the label's head, not a column's
        message = (f"The label has {n_classes:,} classes: {capped}. Training time grows with rows x "
                   "classes; check that y holds class labels (not an id or a measurement).")
    elif 2 * sizes[j] >= per_row:
        message = (f"Column {column} has {sizes[j]:,} categories: {capped}. Training time grows with "
                   "rows x categories; consider min_frequency (e.g. 2 maps values seen once to "
                   "UNKNOWN) or dropping the column.")
    else:  # many columns, none of them most of the logits (a wide table)
        message = (f"The {len(sizes):,} columns and the label have {per_row:,} values to score a row "
                   f"(the most: column {column}, {sizes[j]:,}): {capped}. Training time grows with rows "
                   "x values; consider fewer n_bins, min_frequency or fewer columns.")
    warnings.warn(
        message,
        UserWarning,
        stacklevel=user_stacklevel(),  # the caller of fit, through scikit-learn's _fit_context
    )
    return cap


#: Attention scores a training batch holds, in floats, above which fit warns: a layer that
#: computes every position's query holds rows x heads x queries x positions of them (twice
#: for tanhmax's slots, per member), about four times over at a step's peak with autograd's
#: copies (measured at 500 columns: +252 MiB a step for +61 MiB of scores). They grow with
#: the square of the number of columns: 256 rows of 1,000 columns take 3.8 GiB a tensor.
MAX_BATCH_SCORES = 2**27


def max_rows_for_scores(scores_per_row: int) -> int:
    """Rows a batch outside training (early stopping's validation, prediction, ``explain``,
    ``feature_importances_``) may hold: at most ``MAX_BATCH_SCORES`` attention scores of
    ``scores_per_row`` a row, at least one row. Binds only for a deeper network on a wide
    table: its first layer computes every position's query (11,000 x 200 at the default 4
    heads: 830 rows a validation batch instead of 1,024)."""
    return max(1, MAX_BATCH_SCORES // max(1, int(scores_per_row)))


def warn_attention_scores(rows: int, n_heads: int, n_queries: int, n_positions: int, factor: int) -> None:
    """Warn when a training batch of ``rows`` rows holds more than ``MAX_BATCH_SCORES``
    attention scores (``factor``: tanhmax's slots x members, and copies of each row)."""
    floats = rows * n_heads * n_queries * n_positions * factor
    if floats <= MAX_BATCH_SCORES:
        return
    warnings.warn(
        f"Training holds {floats * 4 / 2**30:.1f} GiB of attention scores a batch ({rows} rows x "
        f"{n_heads} heads x {n_queries} x {n_positions} positions{f' x {factor}' if factor > 1 else ''}, "
        "float32), several times over at each step: memory and time grow with the square of the "
        "number of columns. Lower batch_size, or (masking='leave_one_out') score fewer columns a "
        "batch with max_scored_features.",
        UserWarning,
        stacklevel=user_stacklevel(),  # the caller of fit or adapt
    )
