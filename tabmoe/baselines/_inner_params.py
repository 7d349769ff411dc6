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
#: Values of an :data:`INDEX_PARAMS` parameter that index no column: one rule for every
#: column alike, whatever the encoded matrix's order (HistGradientBoosting's
#: ``interaction_cst="no_interactions"``, an additive model, and ``"pairwise"``).
EVERY_COLUMN_VALUES: dict[str, tuple[str, ...]] = {
    "interaction_cst": ("pairwise", "no_interactions"),
}


def check_no_user_names(estimator: Any) -> None:
    """ValueError naming a parameter of ``estimator`` that names the user's columns or class
    labels: the estimator sees the encoded matrix (columns ``f0, f1, ...``, one-hot or
    codes) and the class codes. With ``categorical_encoding="native"`` the wrapper's own
    declaration overwrote them silently; with "onehot" they named columns that are not
    there. CatBoost's ``class_names`` failed ("Not all class names are numeric") or were
    codes. The :data:`INDEX_PARAMS` (columns to ignore, constrain, weight or bin) reached
    other columns. None, an empty list of columns, an empty string (LightGBM's file names),
    the estimator's own default (HistGradientBoosting's "from_dtype") and a rule for every
    column alike (``interaction_cst="no_interactions"``) name nothing (:func:`names_nothing`)."""
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
    """Whether ``value`` of ``param`` is None, an empty list of columns, an empty string, a
    rule for every column (:data:`EVERY_COLUMN_VALUES`), or the default of the estimator's
    constructor (LightGBM's and XGBoost's, passed through ``**kwargs``, have none: None)."""
    if value is None or (isinstance(value, str) and value == ""):
        return True
    if isinstance(value, str) and value in EVERY_COLUMN_VALUES.get(param, ()):
        return True
    # An empty list of categorical columns names none; XGBoost's feature_types is a type
    # per column, which an empty list gets wrong on the one-hot matrix.
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0 and param != "feature_types":
        return True
    signature = inspect.signature(type(estimator).__init__).parameters.get(param)
    default = None if signature is None else signature.default
    return isinstance(value, str) and isinstance(default, str) and value == default


def class_weights(estimator: Any, classes: np.ndarray, y_codes: np.ndarray) -> np.ndarray | None:
    """Each class's weight, in code order, under the estimator's ``class_weight`` (CatBoost's
    ``class_weights``): a dict keyed by the labels of ``y`` (a label left out weighing 1),
    CatBoost's list in code order, or ``"balanced"``, scikit-learn's
    ``n_rows / (n_classes * n_rows_of_its_class)`` over ``y_codes`` (every row given to fit).
    None for anything else (None, RandomForest's ``"balanced_subsample"``, CatBoost's
    ``auto_class_weights``, a list of the wrong length: the library's to read or refuse).
    ValueError naming the parameter for a label not in ``y``, or a NaN, infinite or
    negative weight."""
    name = "class_weights" if library(estimator) == "catboost" else "class_weight"
    weights = estimator.get_params(deep=False).get(name)
    check_class_weights(name, weights)
    if isinstance(weights, Mapping):
        codes = class_weight_codes(name, weights, classes)
        by_code = np.ones(len(classes))
        by_code[codes] = [float(weights[label]) for label in weights]
        return by_code
    if name == "class_weights" and isinstance(weights, (list, tuple, np.ndarray)):
        return np.asarray(weights, dtype=np.float64) if len(weights) == len(classes) else None
    if name == "class_weight" and isinstance(weights, str) and weights == "balanced":
        counts = np.bincount(y_codes, minlength=len(classes))
        return len(y_codes) / (len(classes) * counts)
    return None


def class_weight_by_code(
    estimator: Any, classes: np.ndarray, codes: np.ndarray, weights: np.ndarray | None, resolve: bool
) -> None:
    """The estimator sees class codes ``0 .. len(codes) - 1``, positions in ``codes`` (the
    codes of the classes of ``classes`` it is fitted on): its class weights are re-keyed by
    them (in place). Labels 1, 2, 3 weighted ``{1: 1, 3: 50}`` were read as codes: 50 went
    to nothing, or to another class. CatBoost takes the weights as a list in code order, a
    class left out weighing 1 as in scikit-learn (a dict's keys are CatBoost's class names:
    a class left out was "Unknown class label"). ``"balanced"`` and CatBoost's own list are
    left to the library unless ``resolve`` (rows of weight 0 left out of its fit: it would
    count the rows kept only), where they become ``weights`` (:func:`class_weights`)."""
    name = "class_weights" if library(estimator) == "catboost" else "class_weight"
    given = estimator.get_params(deep=False).get(name)
    if weights is None or (not isinstance(given, Mapping) and not resolve):
        return
    position = {int(code): i for i, code in enumerate(codes)}
    if isinstance(given, Mapping):
        labels = zip(given, class_weight_codes(name, given, classes), strict=True)
        by_code = {position[int(c)]: given[label] for label, c in labels if int(c) in position}
    else:
        by_code = {i: float(weights[code]) for i, code in enumerate(codes)}
    if name == "class_weights":
        by_code = [by_code.get(i, 1.0) for i in range(len(codes))]
    estimator.set_params(**{name: by_code})


def callers_random_state(template: Any, estimator: Any) -> None:
    """Give ``estimator`` (the fit's clone of ``template``) the numpy ``RandomState`` or
    ``Generator`` that ``template``'s ``random_state`` holds, the caller's own object:
    ``clone`` deep-copies it, so every fit drew from the same copy (a refit gave the same
    model, the caller's generator never advanced), where the estimator alone draws from it
    (scikit-learn's convention: each fit draws anew). CatBoost, which takes an int seed only
    (it failed with "Object of type RandomState is not JSON serializable"), gets an int drawn
    from it (``random_state`` or ``random_seed``), as scikit-learn's estimators draw theirs."""
    if library(template) != "catboost":
        state = template.get_params(deep=False).get("random_state")
        if isinstance(state, (np.random.RandomState, np.random.Generator)):
            estimator.set_params(random_state=state)
        return
    # the caller's own objects: CatBoost's get_params and get_param return deep copies, from
    # which every fit drew the same seed
    params = getattr(template, "_init_params", None)
    if not isinstance(params, Mapping):
        params = template.get_params(deep=False)
    for name in ("random_state", "random_seed"):
        state = params.get(name)
        if isinstance(state, np.random.RandomState):
            estimator.set_params(**{name: int(state.randint(np.iinfo(np.int32).max))})
        elif isinstance(state, np.random.Generator):
            estimator.set_params(**{name: int(state.integers(np.iinfo(np.int32).max))})


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
