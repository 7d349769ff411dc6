"""Labels in: the ``y`` and the ``eval_set`` of every classifier's ``fit`` checked (missing
labels, shape, label type) and encoded as class codes, with errors that name the argument.
Used by :func:`~tabmoe.nn._base.start_fit` and ``TorchClassifier._fit``."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _num_samples, column_or_1d

from ..tokenizer import to_frame


def validate_targets(y: Any, what: str = "y") -> np.ndarray:
    """``y`` as a 1-d array of classification targets (ValueError for None, missing labels,
    an object array of text beside other labels or of no text, or regression y; ``what``
    names ``y`` in them)."""
    if y is None:
        raise ValueError(f"requires {what} to be passed, but the target {what} is None.")
    if isinstance(y, str):  # fit(data, "label"): "y should be a 1d array, got an array of shape ()"
        raise ValueError(
            f"{what} is the text {y!r}, not one label per row: pass the labels themselves, e.g. "
            f"X, y = data.drop(columns={y!r}), data[{y!r}] (a label column left in X gives "
            "the answer away)."
        )
    _check_no_missing_labels(y, what)
    try:
        y = column_or_1d(y, warn=True)
    except ValueError as exc:  # scikit-learn's words name "y" ("y should be a 1d array")
        raise _named(exc, what) from None
    types = {type(v) for v in y} if y.dtype == object else set()
    text = {t for t in types if issubclass(t, str)}
    if text and types - text:  # np.unique's "'<' not supported between instances of 'int' and 'str'"
        raise ValueError(
            f"Input {what} mixes text with labels of another type ({_names(types)}), which cannot "
            "be sorted into classes: make them one type, e.g. y.astype(str)."
        )
    try:
        check_classification_targets(y)
    except ValueError as exc:
        if types and not text and type_of_target(y) == "unknown":  # "Maybe ... regression target"
            raise ValueError(
                f"Input {what} is an object array of {_names(types)} labels, whose type scikit-learn "
                f"does not read (\"Unknown label type: unknown\"; df.to_numpy()[:, -1] of a frame "
                f"with a text column gives one): convert it, e.g. {_conversion(types)}."
            ) from None
        raise _named(exc, what) from None
    return y


def _named(exc: ValueError, what: str) -> ValueError:
    """scikit-learn's error about ``y``, naming ``what`` where that is not fit's ``y``."""
    return exc if what == "y" else ValueError(f"{what}: {exc}")


def _names(types: set[type]) -> str:
    return ", ".join(sorted({t.__name__ for t in types}))


def _conversion(types: set[type]) -> str:
    """The ``astype`` that gives labels of ``types`` (Python objects) a numpy dtype."""
    if all(issubclass(t, bool | np.bool_) for t in types):
        return "y.astype(bool)"
    if all(issubclass(t, numbers.Integral | np.integer) for t in types):
        return "y.astype(int)"
    if all(issubclass(t, numbers.Real | np.floating) for t in types):
        return "y.astype(float)"
    return "y.astype(str)"


def _check_no_missing_labels(y: Any, what: str) -> None:
    """ValueError like scikit-learn's ("Input y contains NaN") for NaN, None, NaT or pd.NA
    labels, in any container and dtype (an object array mixing NaN and strings would
    otherwise fail in sorting with a TypeError). A list or tuple is read as objects: pandas
    takes a tuple for one value, and numpy made ('a', nan) the text 'nan', a class."""
    try:
        as_objects = isinstance(y, list | tuple)
        missing = np.asarray(pd.isna(np.asarray(y, dtype=object) if as_objects else y), dtype=bool)
    except (TypeError, ValueError):  # ragged or exotic input: column_or_1d will say what is wrong
        return
    if missing.any():
        rows = np.flatnonzero(missing.reshape(len(missing), -1).any(axis=1)) if missing.ndim else [0]
        raise ValueError(
            f"Input {what} contains NaN: {len(rows)} missing label(s) (NaN, None or NA), e.g. at "
            f"position(s) {[int(i) for i in rows[:5]]}. Drop those rows or fill their labels."
        )


def encode_targets(classes: np.ndarray, y: np.ndarray, what: str = "y") -> np.ndarray:
    """Index of each label of ``y`` in ``classes`` (ValueError naming unseen labels)."""
    codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(y, dtype=object))
    if (codes < 0).any():
        unknown = pd.unique(pd.Series(y[codes < 0], dtype=object))[:5].tolist()
        raise ValueError(f"{what} contains labels not seen in the training y: {unknown}.")
    return codes


def _is_pair(item: Any) -> bool:
    """Whether ``item`` looks like an ``(X, y)`` pair: two items, the first 2-d (the first
    item of a real ``X_val`` given as a list of rows is a row, 1-d)."""
    if not isinstance(item, tuple | list) or len(item) != 2:
        return False
    shape = getattr(item[0], "shape", None)
    try:
        return len(shape) == 2 if shape is not None else np.ndim(item[0]) == 2
    except (TypeError, ValueError):  # ragged rows: not one 2-d table
        return False


def eval_pair(eval_set: Any) -> tuple[Any, np.ndarray]:
    """``eval_set`` as ``(X_val, y_val)`` of equal length, ``y_val`` checked by
    :func:`validate_targets`, or a ValueError naming it (a list of pairs, XGBoost's and
    LightGBM's form, too: two pairs were read as one)."""
    if isinstance(eval_set, tuple | list) and eval_set and all(_is_pair(item) for item in eval_set):
        n = len(eval_set)
        raise ValueError(
            f"eval_set takes one pair (X_val, y_val), not a {type(eval_set).__name__} of {n} "
            f"pair{'s' * (n > 1)} (XGBoost's and LightGBM's form): pass eval_set=(X_val, y_val), "
            "the rows to validate on."
        )
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
        raise ValueError(f"eval_set must be a pair (X_val, y_val); got {type(eval_set).__name__}.")
    X_val, y_val = eval_set
    try:  # empty or 1-d: scikit-learn's words, which name neither eval_set nor X_val
        to_frame(X_val)
    except ValueError as exc:
        raise ValueError(f"eval_set's X_val: {exc}") from None
    y_val = validate_targets(y_val, "eval_set y")  # None was "Expected sequence or array-like"
    n_x, n_y = _num_samples(X_val), len(y_val)
    if n_x != n_y:
        raise ValueError(f"eval_set: X_val has {n_x} rows and y_val has {n_y} labels.")
    return X_val, y_val
