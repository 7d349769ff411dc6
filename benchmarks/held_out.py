"""Study 12's and study 52's ID-only checks of values unseen at fit (``research.py run
--unseen-check`` / ``--held-out-value``): the altered rows and the (column, value) taken out
of training."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd

from tabmoe.tokenizer import is_categorical_dtype

UNSEEN = "<a value unseen at fit>"


def with_unseen_values(estimator, X: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``X`` with one categorical column per row, drawn at random, set to a value never seen at fit."""
    columns = np.flatnonzero(estimator.tokenizer_.is_categorical_)
    pick = np.random.RandomState(seed).choice(columns, size=len(X))
    out = X.copy()
    for j in columns:
        rows = pick == j
        if rows.any():
            name = out.columns[j]
            out[name] = out[name].astype(object)
            out.loc[out.index[rows], name] = UNSEEN
    return out


def unseen_scores(estimator, X: pd.DataFrame, y, seed: int) -> dict:
    """Accuracy on the altered rows with each way of reading an unseen value (same network:
    ``unknown`` acts only where UNKNOWN tokens occur, and training holds none at
    ``min_frequency=1``)."""
    if not estimator.tokenizer_.is_categorical_.any():
        return {}
    altered = with_unseen_values(estimator, X, seed)
    out = {}
    for mode in ("token", "exclude"):
        reader = copy.copy(estimator).set_params(unknown=mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[f"validation_unseen_{mode}"] = float(np.mean(reader.predict(altered) == np.asarray(y)))
    return out


#: Study 52's eligible values: a share of the training rows in this range (a real part of the
#: table, not all of it), and at least this many ID-validation rows to score.
HELD_OUT_SHARE = (0.05, 0.5)
HELD_OUT_MIN_ROWS = 10


def held_out_pick(X: pd.DataFrame, X_val: pd.DataFrame, seed: int) -> tuple[str, object] | None:
    """Study 52's (column, value), drawn with ``RandomState(seed)`` from every eligible pair
    of a categorical column and one of its observed values (missing values are not values):
    a training share within ``HELD_OUT_SHARE``, at least ``HELD_OUT_MIN_ROWS`` validation rows,
    and another value left in the column's training rows. None if no pair is eligible."""
    pairs = []
    for column in X.columns:
        if not is_categorical_dtype(X[column].dtype):
            continue
        counts = X[column].dropna().astype(str).value_counts()
        if len(counts) < 2:
            continue
        val_counts = X_val[column].dropna().astype(str).value_counts()
        for value in sorted(counts.index):
            share = counts[value] / len(X)
            if HELD_OUT_SHARE[0] <= share <= HELD_OUT_SHARE[1] and val_counts.get(value, 0) >= HELD_OUT_MIN_ROWS:
                pairs.append((str(column), value))
    if not pairs:
        return None
    return pairs[np.random.RandomState(seed).randint(len(pairs))]
