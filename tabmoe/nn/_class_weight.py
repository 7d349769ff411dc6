"""``sample_weight`` checked; the labels of a ``class_weight`` dict, checked against the
classes of ``y``, and the row weights it gives times ``sample_weight``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import compute_sample_weight
from sklearn.utils.validation import _check_sample_weight

from .._frame import python_value


def checked_sample_weight(sample_weight: Any, X: Any, dtype: Any = np.float64) -> np.ndarray:
    """scikit-learn's ``_check_sample_weight`` (not negative; a copy), whose conversion errors
    named nothing: weights read as text (a CSV's "1,5") raised "could not convert string to
    float: '1,5'", a dict "float() argument must be a string or a real number, not 'dict'",
    complex ones "Complex data not supported" and the whole array. They name
    ``sample_weight`` now; scikit-learn's own messages (NaN, negative, length, all 0) stay."""
    try:
        return np.array(_check_sample_weight(sample_weight, X, dtype=dtype, ensure_non_negative=True))
    except (TypeError, ValueError) as exc:
        words = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
        if "sample_weight" in words or "Sample weights" in words:
            raise
        text = " (weights read as text: convert them first, e.g. with pd.to_numeric)" if "convert string" in words else ""
        raise type(exc)(
            f"sample_weight must be numbers, one a row of X or one for every row: {words}{text}."
        ) from None


def class_weight_codes(name: str, weights: Any, classes: np.ndarray, *, strict: bool = True) -> np.ndarray | None:
    """The code (position in ``classes``) of each label of the dict ``weights``, -1 for a
    label not in ``y``; a ValueError naming ``name`` and those labels, always when
    ``strict``, else only where scikit-learn's ``compute_sample_weight`` refuses the dict
    (a class left out too): its own message named the classes left out ("The classes, [1],
    are not in class_weight"), which may weigh 1, not the label at fault (``{2: 3, 9: 5}``,
    or ``{"2": 3}`` for integer labels). A dict naming every class and more is accepted
    there, as scikit-learn's. None when ``weights`` is not a dict ("balanced", None)."""
    if not isinstance(weights, Mapping):
        return None
    labels = list(weights)
    codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(labels, dtype=object))
    unknown = [python_value(label) for label, code in zip(labels, codes, strict=True) if code < 0]
    if unknown and (strict or len(set(codes[codes >= 0].tolist())) < len(classes)):
        raise ValueError(f"{name} has labels not in y: {unknown}; the classes are {classes.tolist()}.")
    return codes


def class_weight_rows(weights: Any, classes: np.ndarray, y_codes: np.ndarray) -> np.ndarray:
    """Each row's weight under ``class_weight`` (``"balanced"`` or a dict by the labels of
    ``y``; checked by :func:`class_weight_codes`, not strict): scikit-learn's
    ``compute_sample_weight`` on the class codes, a dict re-keyed by them. On the labels
    themselves it looked ``"1"`` up as ``int("1")``, so labels "1", "2" weighted ``{"1": 3}``
    were refused ("The classes, [1, 2], are not in class_weight")."""
    codes = class_weight_codes("class_weight", weights, classes, strict=False)
    given = weights
    if codes is not None:
        weights = {int(code): weights[label] for label, code in zip(weights, codes, strict=True) if code >= 0}
    try:
        return compute_sample_weight(weights, y_codes)
    except (TypeError, ValueError) as exc:  # numpy's "could not convert string to float: 'abc'"
        words = str(exc).rstrip(".")
        raise ValueError(f"class_weight's weights must be numbers: got {given!r} ({words}).") from None


def class_weighted(weight: np.ndarray, weights: Any, classes: np.ndarray, y_codes: np.ndarray) -> np.ndarray:
    """``weight`` (checked sample weights) times each row's :func:`class_weight_rows`. A
    ValueError naming ``class_weight`` for weights that are not numbers (numpy's "could not
    convert string to float: 'abc'" named nothing), not finite or negative (a negative loss
    weight maximises the loss; a NaN one left every weight NaN). Where the product leaves
    float64's range, each factor is first scaled by a power of two (the loss is a weighted
    mean, so the scale is free): sample weights 1e200 times class weights 1e200 overflowed to
    inf and were refused as "class_weight must be finite", 1e-200 times 1e-200 as "gives
    every row weight 0"."""
    rows = class_weight_rows(weights, classes, y_codes)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise ValueError(f"class_weight must be finite and not negative: got {weights!r}.")
    with np.errstate(over="ignore", under="ignore"):
        product = weight * rows
        if (~np.isfinite(product) | ((product == 0) & (weight > 0) & (rows > 0))).any():
            product = _scaled(weight) * _scaled(rows)
    return product


def _scaled(weight: np.ndarray) -> np.ndarray:
    """``weight`` times the power of two that brings its largest into [1, 2) (0s as they are)."""
    top = float(weight.max())
    return weight if top <= 0 else np.ldexp(weight, 1 - np.frexp(top)[1])
