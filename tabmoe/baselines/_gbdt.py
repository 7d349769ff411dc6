"""What :class:`~tabmoe.baselines.reference.EncodedClassifier` does differently for the
gradient-boosting libraries it wraps (CatBoost, LightGBM, XGBoost)."""

from __future__ import annotations

from typing import Any

from sklearn.base import clone


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
