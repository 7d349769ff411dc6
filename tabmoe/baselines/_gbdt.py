"""What :class:`~tabmoe.baselines.reference.EncodedClassifier` does differently for the
gradient-boosting libraries it wraps (CatBoost, LightGBM, XGBoost)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier


def library(estimator: Any) -> str:
    """Top-level package of the estimator's class (``"catboost"``, ``"lightgbm"``, ...)."""
    return type(estimator).__module__.split(".")[0]


def clone_estimator(estimator: Any) -> Any:
    """scikit-learn's ``clone``; a CatBoost estimator is made anew from its parameters.

    CatBoost's ``get_params`` returns deep copies, which ``clone`` takes for a constructor
    that changed its parameters: every list or dict parameter (``class_weights``,
    ``custom_metric=["AUC"]``, ``ignored_features``, ...) was a RuntimeError "Cannot clone
    object" at fit.
    """
    if library(estimator) != "catboost":
        return clone(estimator)
    return type(estimator)(**clone(estimator.get_params(deep=False), safe=False))


#: CatBoost's error when no feature can be split on: every column constant (after its
#: float32 quantization, NaN its own value), or ignored.
CATBOOST_NO_FEATURE = "All features are either constant or ignored"


def has_no_usable_feature(estimator: Any, error: Exception) -> bool:
    """Whether ``error``, raised by ``estimator.fit``, is CatBoost's refusal to fit a table
    in which every feature is constant or ignored."""
    return library(estimator) == "catboost" and CATBOOST_NO_FEATURE in str(error)


def catboost_prior(
    estimator: Any, Z: Any, y_codes: np.ndarray, weight: np.ndarray, n_classes: int
) -> DummyClassifier:
    """The weighted class prior, for a CatBoost ``estimator`` that refused a table with no
    usable feature: what boosting trees with no split converge to (LightGBM, XGBoost and
    HistGradientBoosting predict it exactly on such a table). The row weights are
    ``weight`` (sample_weight) times CatBoost's class weights: ``class_weights`` (a list in
    code order by now), ``scale_pos_weight``, or ``auto_class_weights`` ("Balanced":
    ``max_c W_c / W_k`` for W_k the weight of class k; "SqrtBalanced": its square root)."""
    params = estimator.get_params()
    totals = np.bincount(y_codes, weights=weight, minlength=n_classes)
    class_weight = np.ones(n_classes)
    if params.get("class_weights") is not None:
        class_weight = np.asarray(params["class_weights"], dtype=np.float64)
    elif params.get("scale_pos_weight") is not None:
        class_weight = np.array([1.0, float(params["scale_pos_weight"])])
    elif params.get("auto_class_weights") in ("Balanced", "SqrtBalanced"):
        class_weight = totals.max() / np.maximum(totals, np.finfo(np.float64).tiny)
        if params["auto_class_weights"] == "SqrtBalanced":
            class_weight = np.sqrt(class_weight)
    prior = DummyClassifier(strategy="prior")
    return prior.fit(Z, y_codes, sample_weight=weight * class_weight[y_codes])
