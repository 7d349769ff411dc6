"""Classification metrics of one fitted model on one part of a split.

Every model is scored from the same thing, its ``predict_proba`` (n_rows, n_classes) in
``classes_`` order, so the harness times one prediction per part and derives:

* ``accuracy`` and ``balanced_accuracy`` of the most probable class;
* ``log_loss`` (natural log, labels = the model's classes; ``None`` when the part holds a
  label the model never saw, or the model has one class: scikit-learn's needs two);
* ``roc_auc``: binary ROC AUC of the second class, or for more classes the macro average of
  one-vs-rest AUCs over the classes present in the part (scikit-learn's ``multi_class="ovr"``
  when every class is present); ``None`` with fewer than two classes present;
* ``bin_mse``: mean squared difference between predicted and true label, only for integer
  labels (the paper's binned targets, docs/paper.md section 3); ``None`` otherwise.

A missing label (NaN, None, NA, NaT) is a ValueError naming its positions, as in ``fit``.

``sample_weight`` (one non-negative, finite number a row) weights every metric as
scikit-learn's own metrics weight it; a row of weight 0 is left out, as if absent (``n``
counts the others).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score
from sklearn.utils.validation import _num_samples

from ._stack import catch_warnings

#: name -> whether greater is better. The tuner's ``metric`` is one of these.
METRICS: dict[str, bool] = {
    "accuracy": True,
    "balanced_accuracy": True,
    "log_loss": False,
    "roc_auc": True,
}


def _labels(y: Any) -> np.ndarray:
    """``y`` as a plain 1-d array (pandas categoricals become their values; labels other than
    bool, numbers, dates and durations become objects).

    A one-column frame or column vector is read as its column, as scikit-learn's classifiers
    read it in ``fit``; compared as it is, ``pred == y`` would broadcast to (n, n).
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    elif y.ndim != 1:
        raise ValueError(f"labels must be 1-d or one column, got an array of shape {y.shape}")
    return y.astype(object) if y.dtype.kind not in "biufMm" else y


def ovr_roc_auc(y: Any, proba: Any, classes: Any, sample_weight: np.ndarray | None = None) -> float | None:
    """Binary AUC, or macro one-vs-rest AUC over the classes present in ``y`` (None if < 2),
    each weighted by ``sample_weight`` (positive weights: see :func:`classification_scores`).

    ``y``, ``proba`` and ``classes`` may be lists: they are read as arrays (a list of labels
    compared with one class is one False, which read every class as absent: None)."""
    y, classes, proba = _labels(y), _labels(classes), np.asarray(proba)
    present = [i for i, c in enumerate(classes) if np.any(y == c)]
    if len(present) < 2:
        return None
    w = sample_weight
    if len(classes) == 2:
        return float(roc_auc_score(y == classes[1], proba[:, 1], sample_weight=w))
    return float(np.mean([roc_auc_score(y == classes[i], proba[:, i], sample_weight=w) for i in present]))


def _row_weights(sample_weight: Any, n_rows: int) -> np.ndarray | None:
    """``sample_weight`` as float64, one finite non-negative number a row (None: unweighted),
    or a ValueError naming it."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must hold numbers: {exc}") from None
    if w.shape != (n_rows,):
        raise ValueError(f"sample_weight must have one entry per label ({n_rows}), got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and not negative")
    return w


def _log_loss(
    y: np.ndarray, proba: np.ndarray, classes: np.ndarray, dtype: np.dtype, sample_weight: np.ndarray | None = None
) -> float:
    """scikit-learn's ``log_loss`` of the float64 ``proba``, whose rows are checked to sum to
    one at the precision they were given in: float32 probabilities (XGBoost's, torch's) that
    sum to one within float32 rounding are not "probabilities that do not sum to one".

    Scored on the labels' positions in ``classes`` (every label is one of them): scikit-learn
    reads ``proba``'s columns in the sorted order of ``labels`` whatever order they are given
    in, so ``classes`` not sorted (a classifier's own order) paired the wrong columns."""
    codes = np.zeros(len(y), dtype=np.intp)
    for i, c in enumerate(classes):
        codes[y == c] = i
    eps = np.finfo(dtype if dtype.kind == "f" else np.float64).eps
    with catch_warnings():
        if np.all(np.isclose(proba.sum(axis=1), 1, rtol=np.sqrt(eps))):
            warnings.filterwarnings("ignore", "The y_prob values do not sum to one", UserWarning)
        return float(log_loss(codes, proba, labels=np.arange(len(classes)), sample_weight=sample_weight))


def classification_scores(
    y_true: Any, proba: np.ndarray, classes: np.ndarray, sample_weight: Any = None
) -> dict[str, Any]:
    """Metrics of class probabilities ``proba`` (n, n_classes) against labels ``y_true`` (n,),
    weighted by ``sample_weight`` (n,) when given (rows of weight 0 left out).

    Returns ``{"n", "accuracy", "balanced_accuracy", "log_loss", "roc_auc", "bin_mse"}``;
    undefined metrics are ``None`` (see the module docstring).
    """
    y = _labels(y_true)
    classes = _labels(classes)
    given = np.asarray(proba)
    proba = given.astype(np.float64)
    if proba.shape != (len(y), len(classes)):
        raise ValueError(
            f"predict_proba returned shape {proba.shape}, expected ({len(y)}, {len(classes)})"
        )
    w = _row_weights(sample_weight, len(y))
    bad = np.flatnonzero(~np.isfinite(proba).all(axis=1))
    if len(bad):  # argmax would pick a NaN column as the prediction
        raise ValueError(
            f"predict_proba returned NaN or infinite probabilities (proba) in {len(bad)} of "
            f"{len(proba)} rows, e.g. row {bad[0]}"
        )
    if len(y) == 0:
        return _no_scores()
    # the labels as given: np.asarray(["b", nan]) holds the string "nan"
    given_y = np.asarray(y_true, dtype=object) if isinstance(y_true, (list, tuple)) else y_true
    missing = np.flatnonzero(np.asarray(pd.isna(given_y), dtype=bool).reshape(len(y), -1).any(axis=1))
    if len(missing):  # a NaN among strings was scored as one more class, None or a float NaN raised
        raise ValueError(
            f"y_true contains {len(missing)} missing label(s) (NaN, None or NA), e.g. at "
            f"position(s) {missing[:5].tolist()}: rows without a label cannot be scored; drop them."
        )
    if w is not None and not (w > 0).all():  # a row of weight 0 is an absent row
        y, proba, given, w = y[w > 0], proba[w > 0], given[w > 0], w[w > 0]
        if len(y) == 0:
            return _no_scores()
    pred = classes[proba.argmax(axis=1)]
    seen = np.isin(y, classes)
    with catch_warnings():  # "y_pred contains classes not in y_true"
        warnings.simplefilter("ignore", UserWarning)
        balanced = float(balanced_accuracy_score(y, pred, sample_weight=w))
    integer_labels = classes.dtype.kind in "iu" or (  # not bool: no order of bins
        classes.dtype.kind == "f" and np.all(np.mod(classes, 1) == 0)
    )
    return {
        "n": int(len(y)),
        "accuracy": float(np.average(pred == y, weights=w)),
        "balanced_accuracy": balanced,
        "log_loss": _log_loss(y, proba, classes, given.dtype, w) if seen.all() and len(classes) > 1 else None,
        "roc_auc": ovr_roc_auc(y, proba, classes, w),
        "bin_mse": float(np.average((pred.astype(float) - y.astype(float)) ** 2, weights=w)) if integer_labels else None,
    }


def _no_scores() -> dict[str, Any]:
    """The scores of no row: every metric undefined."""
    return {"n": 0, **dict.fromkeys(["accuracy", "balanced_accuracy", "log_loss", "roc_auc", "bin_mse"])}


def score_estimator(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> dict[str, Any]:
    """:func:`classification_scores` of a fitted classifier on (X, y), weighted by
    ``sample_weight`` when given."""
    try:
        n_rows = _num_samples(X)
    except TypeError:  # no length to compare: the shape check below still holds
        n_rows = None
    n_labels = len(_labels(y))
    if n_rows is not None and n_rows != n_labels:  # else "predict_proba returned shape (40, 2), expected (30, 2)"
        raise ValueError(f"X has {n_rows} rows but y has {n_labels} labels: they must have one row per label.")
    return classification_scores(y, estimator.predict_proba(X), estimator.classes_, sample_weight)
