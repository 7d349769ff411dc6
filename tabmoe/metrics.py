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


def ovr_roc_auc(y: Any, proba: Any, classes: Any) -> float | None:
    """Binary AUC, or macro one-vs-rest AUC over the classes present in ``y`` (None if < 2).

    ``y``, ``proba`` and ``classes`` may be lists: they are read as arrays (a list of labels
    compared with one class is one False, which read every class as absent: None)."""
    y, classes, proba = _labels(y), _labels(classes), np.asarray(proba)
    present = [i for i, c in enumerate(classes) if np.any(y == c)]
    if len(present) < 2:
        return None
    if len(classes) == 2:
        return float(roc_auc_score(y == classes[1], proba[:, 1]))
    return float(np.mean([roc_auc_score(y == classes[i], proba[:, i]) for i in present]))


def _log_loss(y: np.ndarray, proba: np.ndarray, classes: np.ndarray, dtype: np.dtype) -> float:
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
        return float(log_loss(codes, proba, labels=np.arange(len(classes))))


def classification_scores(y_true: Any, proba: np.ndarray, classes: np.ndarray) -> dict[str, Any]:
    """Metrics of class probabilities ``proba`` (n, n_classes) against labels ``y_true`` (n,).

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
    bad = np.flatnonzero(~np.isfinite(proba).all(axis=1))
    if len(bad):  # argmax would pick a NaN column as the prediction
        raise ValueError(
            f"predict_proba returned NaN or infinite probabilities (proba) in {len(bad)} of "
            f"{len(proba)} rows, e.g. row {bad[0]}"
        )
    if len(y) == 0:
        return {"n": 0, **dict.fromkeys(["accuracy", "balanced_accuracy", "log_loss", "roc_auc", "bin_mse"])}
    # the labels as given: np.asarray(["b", nan]) holds the string "nan"
    given_y = np.asarray(y_true, dtype=object) if isinstance(y_true, (list, tuple)) else y_true
    missing = np.flatnonzero(np.asarray(pd.isna(given_y), dtype=bool).reshape(len(y), -1).any(axis=1))
    if len(missing):  # a NaN among strings was scored as one more class, None or a float NaN raised
        raise ValueError(
            f"y_true contains {len(missing)} missing label(s) (NaN, None or NA), e.g. at "
            f"position(s) {missing[:5].tolist()}: rows without a label cannot be scored; drop them."
        )
    pred = classes[proba.argmax(axis=1)]
    seen = np.isin(y, classes)
    with catch_warnings():  # "y_pred contains classes not in y_true"
        warnings.simplefilter("ignore", UserWarning)
        balanced = float(balanced_accuracy_score(y, pred))
    integer_labels = classes.dtype.kind in "iu" or (  # not bool: no order of bins
        classes.dtype.kind == "f" and np.all(np.mod(classes, 1) == 0)
    )
    return {
        "n": int(len(y)),
        "accuracy": float(np.mean(pred == y)),
        "balanced_accuracy": balanced,
        "log_loss": _log_loss(y, proba, classes, given.dtype) if seen.all() and len(classes) > 1 else None,
        "roc_auc": ovr_roc_auc(y, proba, classes),
        "bin_mse": float(np.mean((pred.astype(float) - y.astype(float)) ** 2)) if integer_labels else None,
    }


def score_estimator(estimator: Any, X: Any, y: Any) -> dict[str, Any]:
    """:func:`classification_scores` of a fitted classifier on (X, y)."""
    try:
        n_rows = _num_samples(X)
    except TypeError:  # no length to compare: the shape check below still holds
        n_rows = None
    n_labels = len(_labels(y))
    if n_rows is not None and n_rows != n_labels:  # else "predict_proba returned shape (40, 2), expected (30, 2)"
        raise ValueError(f"X has {n_rows} rows but y has {n_labels} labels: they must have one row per label.")
    return classification_scores(y, estimator.predict_proba(X), estimator.classes_)
