"""The wrapped estimator's parameters that :class:`~tabmoe.baselines.reference.EncodedClassifier`
refuses or rewrites: it passes the estimator an encoded matrix (columns ``f0, f1, ...``) and
class codes ``0 .. n_classes - 1``, never the user's columns or labels."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..nn._class_weight import class_weight_codes
from ._gbdt import library

#: Parameters naming columns of the estimator's input: CatBoost's, scikit-learn's,
#: XGBoost's, and LightGBM's ``categorical_feature`` with its aliases (its own table).
COLUMN_PARAMS = (
    "cat_features",
    "categorical_features",
    "feature_types",
    "categorical_feature",
    "cat_feature",
    "categorical_column",
    "cat_column",
)
#: Parameters naming the classes of the estimator's target (CatBoost's).
LABEL_PARAMS = ("class_names",)
#: Parameters that index or name columns of the estimator's input to ignore, constrain,
#: weight or bin them: CatBoost's, HistGradientBoosting's, XGBoost's, and LightGBM's with
#: their aliases (its own table). The encoded matrix puts the categorical columns' codes
#: first (native) or spreads each over its one-hot columns, so an index meant for the
#: user's table reached another column: CatBoost(ignored_features=[0]) on columns
#: ("x", "c") ignored "c", silently.
INDEX_PARAMS = (
    # CatBoost
    "ignored_features",
    "text_features",
    "embedding_features",
    "monotone_constraints",
    "feature_weights",
    "per_feature_ctr",
    "per_float_feature_quantization",
    "first_feature_use_penalties",
    "per_object_feature_penalties",
    # scikit-learn's HistGradientBoosting (monotonic_cst is also LightGBM's alias)
    "monotonic_cst",
    "interaction_cst",
    # XGBoost (monotone_constraints, feature_weights above)
    "interaction_constraints",
    # LightGBM (monotone_constraints, monotonic_cst, interaction_constraints above)
    "mc",
    "monotone_constraint",
    "tree_interaction_constraints",
    "feature_contri",
    "feature_contrib",
    "fc",
    "fp",
    "feature_penalty",
    "forcedsplits_filename",
    "fs",
    "forced_splits_filename",
    "forced_splits_file",
    "forced_splits",
    "forcedbins_filename",
    "max_bin_by_feature",
    "cegb_penalty_feature_lazy",
    "cegb_penalty_feature_coupled",
    "ignore_column",
    "ignore_feature",
    "blacklist",
)


def check_no_user_names(estimator: Any) -> None:
    """ValueError naming a parameter of ``estimator`` that names the user's columns or class
    labels: the estimator sees the encoded matrix (columns ``f0, f1, ...``, one-hot or
    codes) and the class codes. With ``categorical_encoding="native"`` the wrapper's own
    declaration overwrote them silently; with "onehot" they named columns that are not
    there. CatBoost's ``class_names`` failed ("Not all class names are numeric") or were
    codes. The :data:`INDEX_PARAMS` (columns to ignore, constrain, weight or bin) reached
    other columns. None, an empty list of columns, an empty string (LightGBM's file names)
    and the estimator's own default (HistGradientBoosting's "from_dtype") name nothing
    (:func:`names_nothing`)."""
    params = estimator.get_params(deep=False)
    name = type(estimator).__name__
    for param in (*COLUMN_PARAMS, *LABEL_PARAMS, *INDEX_PARAMS):
        if names_nothing(estimator, param, params.get(param)):
            continue
        if param in INDEX_PARAMS:
            raise ValueError(
                f"{name}({param}=...) indexes columns of the encoded matrix, which "
                "EncodedClassifier builds (the categorical columns' codes first, or their "
                "one-hot columns), so it would not reach the columns of your table; leave "
                f"{param} unset, or fit {name} on a matrix you encode yourself."
            )
        if param in LABEL_PARAMS:
            raise ValueError(
                f"{name}({param}=...) names the labels of y, but EncodedClassifier passes "
                f"{name} the class codes 0 .. n_classes - 1 and keeps the labels in "
                f"classes_; leave {param} unset."
            )
        raise ValueError(
            f"{name}({param}=...) names columns of the encoded matrix, which "
            "EncodedClassifier builds; pass the categorical columns as "
            "EncodedClassifier(categorical_features=[...]) instead (with "
            f"categorical_encoding='native' it declares their codes to {name} itself)."
        )


def names_nothing(estimator: Any, param: str, value: Any) -> bool:
    """Whether ``value`` of ``param`` is None, an empty list of columns, an empty string, or
    the default of the estimator's constructor (LightGBM's and XGBoost's, passed through
    ``**kwargs``, have none: None)."""
    if value is None or (isinstance(value, str) and value == ""):
        return True
    # An empty list of categorical columns names none; XGBoost's feature_types is a type
    # per column, which an empty list gets wrong on the one-hot matrix.
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0 and param != "feature_types":
        return True
    signature = inspect.signature(type(estimator).__init__).parameters.get(param)
    default = None if signature is None else signature.default
    return isinstance(value, str) and isinstance(default, str) and value == default


def class_weight_by_code(estimator: Any, classes: np.ndarray) -> None:
    """The estimator sees class codes ``0 .. n_classes - 1``: a ``class_weight`` dict keyed
    by the user's labels (CatBoost's ``class_weights``) is re-keyed by their codes (in
    place). Labels 1, 2, 3 weighted ``{1: 1, 3: 50}`` were read as codes: 50 went to
    nothing, or to another class. CatBoost takes the weights as a list in code order, a
    class left out weighing 1 as in scikit-learn (a dict's keys are CatBoost's class names:
    a class left out was "Unknown class label"). ValueError naming the parameter for a label
    not in ``y``."""
    name = "class_weights" if library(estimator) == "catboost" else "class_weight"
    weights = estimator.get_params(deep=False).get(name)
    check_class_weights(name, weights)
    if not isinstance(weights, Mapping):
        return
    codes = class_weight_codes(name, weights, classes)
    by_code = {int(code): weights[label] for label, code in zip(weights, codes, strict=True)}
    if name == "class_weights":
        by_code = [by_code.get(code, 1.0) for code in range(len(classes))]
    estimator.set_params(**{name: by_code})


def check_class_weights(name: str, weights: Any) -> None:
    """ValueError naming ``name`` for a NaN, infinite or negative class weight (a dict's, or
    a CatBoost list's). A NaN made CatBoost drop every parameter it was given (1000 trees at
    its default learning rate, unweighted, where ``iterations=5`` was asked), LightGBM and
    LogisticRegression fit nonsense and RandomForest fail at predict ("probabilities contain
    NaN")."""
    if isinstance(weights, Mapping):
        values = list(weights.values())
    elif isinstance(weights, (list, tuple, np.ndarray)):
        values = list(weights)
    else:
        return  # None, "balanced", CatBoost's auto_class_weights: computed from y
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.array([np.nan])
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name} must be finite and not negative: got {weights!r}.")
