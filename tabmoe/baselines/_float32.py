"""The column and row behind scikit-learn's float32 refusal, for the references that read X as
float32 (RandomForest, GradientBoosting, any of scikit-learn's trees): "Input X contains
infinity or a value too large for dtype('float32')" named neither."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from .._frame import python_value

#: float32's largest value, 3.4e38: a standardised value beyond it is refused.
FLOAT32_MAX = float(np.finfo(np.float32).max)

#: What scikit-learn's ``check_array`` says of such a value (and of inf).
FLOAT32_REFUSAL = "too large for dtype('float32')"


@contextmanager
def float32_named(
    model: Any, frame: pd.DataFrame, doing: str, positions: np.ndarray | None = None
) -> Iterator[None]:
    """Turns the inner estimator's float32 refusal, in the block, into a ValueError naming
    the most extreme standardised value of ``frame`` (the rows ``model``, an
    :class:`~tabmoe.baselines.reference.EncodedClassifier`, encoded), its column and its row
    position in X (``positions[i]`` for the frame's row ``i``, where fit left rows out).
    ``doing``: "fitting" or "predicting". Any other error goes on as it is."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        if FLOAT32_REFUSAL not in message:
            raise
        named = _message(model, frame, doing, positions)
        if named is None:
            raise
        raise ValueError(named) from error


def most_extreme_value(
    encoder: Any, frame: pd.DataFrame, numeric: np.ndarray, rows: np.ndarray, positions: np.ndarray
) -> str | None:
    """"<value> in column <name> (row position p), d standard deviations from its training
    mean" for the largest |standardised value| of ``numeric`` (the numeric block of the
    rows ``rows`` of ``frame``, the numeric columns first; ``positions``: those rows'
    positions in X); None where the encoder has no numeric column."""
    n_columns = len(encoder.numeric_columns_)
    if not n_columns:
        return None
    distance = np.abs(numeric[:, :n_columns])
    i, k = np.unravel_index(np.argmax(distance), distance.shape)
    column = int(encoder.numeric_columns_[k])
    label = python_value(frame.columns[column])  # an int64 index's element: 11, not np.int64(11)
    return (f"{frame.iloc[rows[i], column]} in column {label!r} (row position "
            f"{positions[i]}), {distance[i, k]:.3g} standard deviations from its training mean")


def _message(model: Any, frame: pd.DataFrame, doing: str, positions: np.ndarray | None) -> str | None:
    encoder = model.encoder_
    numeric = encoder._numeric_block(frame)
    beyond = ~(np.abs(numeric[:, : len(encoder.numeric_columns_)]) <= FLOAT32_MAX)  # standardised values
    if not beyond.any():
        return None
    rows = np.arange(len(frame))
    extreme = most_extreme_value(encoder, frame, numeric, rows, rows if positions is None else positions)
    return (
        f"{type(model.estimator_).__name__} reads X as float32, whose largest value is "
        f"{FLOAT32_MAX:.3g}: {int(beyond.sum())} standardised numeric value(s) are beyond it. "
        f"The most extreme is {extreme}; clip or transform (e.g. log) such values before {doing}, "
        "or use a reference that reads float64 (logistic_regression, hist_gradient_boosting)."
    )
