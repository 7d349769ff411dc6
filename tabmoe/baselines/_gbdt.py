"""What :class:`~tabmoe.baselines.reference.EncodedClassifier` does differently for the
gradient-boosting libraries it wraps (CatBoost, LightGBM, XGBoost)."""

from __future__ import annotations

import difflib
import importlib
import inspect
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
    ``custom_metric=["AUC"]``, ...) was a RuntimeError "Cannot clone
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
        if n_classes != 2:  # CatBoost's own error on a table it can fit: "class weights size"
            raise ValueError(
                f"scale_pos_weight is for a binary target; y has {n_classes} classes "
                "(use class_weights or auto_class_weights)."
            )
        class_weight = np.array([1.0, float(params["scale_pos_weight"])])
    elif params.get("auto_class_weights") in ("Balanced", "SqrtBalanced"):
        class_weight = totals.max() / np.maximum(totals, np.finfo(np.float64).tiny)
        if params["auto_class_weights"] == "SqrtBalanced":
            class_weight = np.sqrt(class_weight)
    prior = DummyClassifier(strategy="prior")
    return prior.fit(Z, y_codes, sample_weight=weight * class_weight[y_codes])


def check_lightgbm_params(estimator: Any) -> None:
    """ValueError naming each parameter of a LightGBM ``estimator`` that LightGBM does not
    know: it ignores one (``num_leafs=3``, ``n_estimator=10``, ``foo=1``) with an "Unknown
    parameter" line of its own log only, which ``verbose=-1`` silences, and fits at its
    defaults. The known names: the scikit-learn wrapper's arguments, and every parameter
    and alias of LightGBM's own table (its C API's ``LGBM_DumpParamAliases``, read through
    ``lightgbm.basic._ConfigAliases``; without it, as in a LightGBM that lacks it, nothing
    is checked)."""
    if library(estimator) != "lightgbm":
        return
    config = getattr(importlib.import_module("lightgbm.basic"), "_ConfigAliases", None)
    table = getattr(config, "_get_all_param_aliases", None)
    if table is None:
        return
    known = {alias for aliases in table().values() for alias in aliases}
    known |= set(inspect.signature(type(estimator).__init__).parameters) - {"self", "kwargs"}
    unknown = [name for name in estimator.get_params(deep=False) if name not in known]
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(
            f"LightGBM has no parameter {', '.join(hints)}: it would ignore "
            f"{'it' if len(unknown) == 1 else 'them'} and fit at its defaults."
        )
