"""Reference models from scikit-learn (and XGBoost when installed) on the shared front end.

:class:`EncodedClassifier` puts any scikit-learn classifier behind
:class:`~tabmoe.baselines.encoding.TableEncoder`, so the references accept the same
DataFrames as every other model (categoricals, numerics, NaN, unseen values, any label
type) and see the same codes:

* ``categorical_encoding="onehot"``: sparse one-hot of the categorical codes next to the
  standardised numeric block. The paper's references used one-hot features with the first
  level of each column dropped (``drop="first"``): with it, LogisticRegression on the
  auto-mpg origin split scores 0.6571, the paper's Table 5 figure (0.7214 without);
* ``categorical_encoding="native"``: the codes themselves, declared categorical to an
  estimator that splits on categories natively (HistGradientBoosting's
  ``categorical_features``, XGBoost's ``feature_types``, LightGBM's ``categorical_feature``,
  CatBoost's ``cat_features``, which take the codes as integers and apply CatBoost's own
  ordered target statistics to them).

The factories give the paper's models (docs/paper.md section 3): ``LogisticRegression(max_iter=
2000)``, and RandomForest, GradientBoosting and MLP (``learning_rate_init=0.01,
max_iter=2000``) tuned by a 5-fold stratified grid search, the paper's protocol, over
:data:`PAPER_GRIDS` (:func:`paper_grid_search`; the authors' grids, from their code: the
paper's text does not list them); HistGradientBoosting with native categorical support,
which the paper did not run, takes the GradientBoosting grid (``n_estimators`` ->
``max_iter``).
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .._optional import optional_import
from ..nn._base import FitInputs, start_fit
from ._float32 import float32_named
from ._gbdt import (
    catboost_prior,
    check_lightgbm_params,
    clone_estimator,
    has_no_usable_feature,
    library,
)
from ._inner_params import COLUMN_PARAMS as COLUMN_PARAMS  # public here
from ._inner_params import INDEX_PARAMS as INDEX_PARAMS
from ._inner_params import LABEL_PARAMS as LABEL_PARAMS
from ._inner_params import (
    callers_random_state,
    check_no_user_names,
    class_weight_by_code,
    class_weights,
)
from .encoding import ENCODER_PARAMETER_CONSTRAINTS, N_RESERVED_CODES, TableEncoder
from .staged_search import StagedGridSearchCV

#: The grids of the paper's 5-fold grid search (docs/paper.md section 3), by factory name.
#: The paper's text does not list them; the random forest, gradient boosting and MLP grids
#: are those of the authors' code (``baseline_results.py`` in yixinw-lab/attention-uai @
#: ae59cd7, tabular-experiment/tabular-simulation), axis for axis; HistGradientBoosting's is
#: tabmoe's copy of the GradientBoosting grid. The MLP's learning_rate axis changes nothing
#: under its adam solver (scikit-learn reads it for solver="sgd" only), in the authors' search
#: as here; it stays so that the committed paper-suite searches regenerate.
PAPER_GRIDS: dict[str, dict[str, list]] = {
    "random_forest": {
        "criterion": ["gini", "entropy"],
        "n_estimators": [50, 100, 200],
        "max_depth": [1, 3, None],
    },
    "gradient_boosting": {
        "learning_rate": [0.01, 0.1, 1.0],
        "n_estimators": [50, 100, 200],
        "max_depth": [1, 3, 5],
    },
    "hist_gradient_boosting": {
        "learning_rate": [0.01, 0.1, 1.0],
        "max_iter": [50, 100, 200],
        "max_depth": [1, 3, 5],
    },
    "mlp": {
        "hidden_layer_sizes": [(50,), (100,), (100, 50)],
        "alpha": [1e-4, 1e-3, 1e-2],
        "learning_rate": ["constant", "adaptive"],
    },
}

#: The paper's fixed settings of each reference (everything else: scikit-learn defaults).
PAPER_DEFAULTS: dict[str, dict[str, Any]] = {
    "logistic_regression": {"max_iter": 2000},
    "random_forest": {},
    "gradient_boosting": {},
    "hist_gradient_boosting": {},
    "mlp": {"learning_rate_init": 0.01, "max_iter": 2000},
    "xgboost": {},
    # The anchors run at their libraries' own defaults; these settings only silence them.
    "catboost": {"verbose": 0, "allow_writing_files": False},
    "lightgbm": {"verbose": -1},
}


class EncodedClassifier(ClassifierMixin, BaseEstimator):
    """A scikit-learn classifier behind the baselines' shared DataFrame front end.

    Parameters
    ----------
    estimator : classifier
        Cloned at fit; it sees the encoded matrix and integer class codes. A numpy
        ``RandomState`` as its ``random_state`` stays the caller's (not cloned): each fit
        draws from it, as the estimator alone does. Its parameters
        that name the user's columns (CatBoost's ``cat_features``, scikit-learn's
        ``categorical_features``, XGBoost's ``feature_types``, LightGBM's
        ``categorical_feature`` and aliases) or labels (CatBoost's ``class_names``) are a
        ValueError at fit; ``categorical_features`` below declares the categorical columns.
        So are those that index columns to ignore, constrain, weight or bin them
        (:data:`INDEX_PARAMS`: ``ignored_features``, ``monotonic_cst``,
        ``monotone_constraints``, ``interaction_constraints``, ``feature_weights``, ...):
        the encoded matrix's columns are not the table's. A rule for every column alike
        (HistGradientBoosting's ``interaction_cst="no_interactions"`` or ``"pairwise"``) is
        taken.
    categorical_encoding : {"onehot", "native"}, default="onehot"
        ``"onehot"``: sparse one-hot codes + numeric block. ``"native"``: the codes as
        categorical features of an estimator with a ``categorical_features``
        (scikit-learn) or ``feature_types`` (XGBoost) parameter, or of a CatBoost
        (``cat_features``) or LightGBM (``categorical_feature`` of ``fit``) classifier.
    categorical_features, min_frequency, max_categories, drop :
        Passed to :class:`~tabmoe.baselines.encoding.TableEncoder` (``drop`` applies to
        the one-hot encoding only). With ``"native"`` and an estimator that takes at most
        ``max_bins`` categories per column (HistGradientBoosting), ``max_categories`` is at
        most its ``max_bins``: the most frequent values keep their code, the rest share
        UNKNOWN, as :func:`hist_gradient_boosting` sets it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    encoder_ : TableEncoder
    estimator_ : the fitted clone of ``estimator``; for CatBoost, which refuses a table in
        which every feature is constant, a ``DummyClassifier(strategy="prior")`` fitted to
        the weighted class prior there (what the other boosting libraries predict on it);
        where the rows of non-zero weight hold one class only, a ``DummyClassifier``
        predicting it; where the encoded matrix has no column (one-hot with
        ``drop="first"`` of a table whose every column is categorical with one value at
        fit, or missing in every row), a ``DummyClassifier(strategy="prior")`` fitted to the
        sample- and class-weighted class prior, as the boosting references predict there.
        Its class codes are those of the classes with rows of non-zero weight (all of
        ``classes_`` but for a class whose rows all weigh 0).
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "categorical_encoding": [StrOptions({"onehot", "native"})],
        **ENCODER_PARAMETER_CONSTRAINTS,
        "drop": [StrOptions({"first"}), None],
    }

    def __init__(
        self,
        estimator: Any,
        categorical_encoding: str = "onehot",
        categorical_features: Any = "auto",
        min_frequency: int = 1,
        max_categories: int | None = None,
        drop: str | None = None,
    ):
        self.estimator = estimator
        self.categorical_encoding = categorical_encoding
        self.categorical_features = categorical_features
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.drop = drop

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> EncodedClassifier:
        """Encode ``X`` (n_samples, n_features) and fit the estimator on the class codes.

        Rows of weight 0 (``sample_weight`` times a ``class_weight`` dict's) are absent rows,
        as in the torch models: neither the encoder (categories, reference levels, missing
        indicators, scaling) nor the estimator is fitted on them, and a class with no other
        row gets probability 0. ``"balanced"`` class weights are those of every row given,
        ``n_rows / (n_classes * n_rows_of_its_class)``, as without them.
        """
        check_no_user_names(self.estimator)  # the user's: the wrapper sets some on its clone
        inputs = start_fit(self, X, y, sample_weight)
        self.estimator_ = clone_estimator(self.estimator)
        callers_random_state(self.estimator, self.estimator_)
        check_lightgbm_params(self.estimator_)
        weights = class_weights(self.estimator_, self.classes_, inputs.y_codes)
        inputs, kept = _weighted_rows(self.estimator_, inputs, weights, sample_weight)
        # the estimator's classes: codes of those left (positions in ``codes``)
        codes = np.unique(inputs.y_codes)
        self._codes = None if len(codes) == len(self.classes_) else codes
        # rows of weight 0 left out of the library's fit, or sample weights, which scikit-learn's
        # LogisticRegression and forests count "balanced" by (1.7+): the documented rule then
        resolve = inputs.n_rows is not None or sample_weight is not None
        class_weight_by_code(self.estimator_, self.classes_, codes, weights, resolve)
        y_codes = np.searchsorted(codes, inputs.y_codes)
        one_hot = self.categorical_encoding == "onehot"
        self.encoder_ = TableEncoder(
            categorical_features=self.categorical_features,
            min_frequency=self.min_frequency,
            max_categories=_category_cap(self.estimator_, self.max_categories, one_hot),
            one_hot=one_hot,
            drop=self.drop,
        ).fit(inputs.frame, sample_weight=inputs.weight)
        fit_params = {}
        if not one_hot:
            fit_params = _declare_categorical(
                self.estimator_, self.encoder_.categorical_output_mask
            )
        if sample_weight is not None:
            if not has_fit_parameter(self.estimator_, "sample_weight"):
                raise ValueError(
                    f"{type(self.estimator_).__name__} does not support sample_weight."
                )
            fit_params["sample_weight"] = inputs.weight
        Z = self._estimator_input(self.encoder_.transform(inputs.frame))
        if len(codes) == 1:  # one class left: what a classifier could learn (most refuse)
            self.estimator_ = DummyClassifier(strategy="prior").fit(Z, y_codes)
            return self
        if Z.shape[1] == 0:  # one-hot, drop="first", every column one value: no feature
            row_weight = inputs.weight if weights is None else inputs.weight * weights[inputs.y_codes]
            self.estimator_ = DummyClassifier(strategy="prior").fit(Z, y_codes, sample_weight=row_weight)
            return self
        try:
            with float32_named(self, inputs.frame, "fitting", None if kept.all() else np.flatnonzero(kept)):
                self.estimator_.fit(Z, y_codes, **fit_params)
        except Exception as error:
            if not has_no_usable_feature(self.estimator_, error):
                raise
            self.estimator_ = catboost_prior(self.estimator_, Z, y_codes, inputs.weight, len(codes))
        return self

    def _classes(self, codes: Any) -> np.ndarray:
        """The labels of the estimator's class codes (CatBoost's: shape (n_samples, 1))."""
        codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        fitted = getattr(self, "_codes", None)
        return self.classes_[codes if fitted is None else fitted[codes]]

    def _estimator_input(self, Z: Any) -> Any:
        """CatBoost takes categorical features as integers: a DataFrame with int64 code
        columns beside the float numeric block. A scikit-learn estimator whose tags refuse
        sparse input (HistGradientBoosting) takes the one-hot matrix dense: float64, one
        column per kept category (bound it with ``max_categories``). Every other
        estimator, and CatBoost on the one-hot matrix (no categorical column), takes ``Z``
        as is."""
        if sparse.issparse(Z) and library(self.estimator_) == "sklearn":
            return Z if get_tags(self.estimator_).input_tags.sparse else Z.toarray()
        if library(self.estimator_) != "catboost" or self.encoder_.one_hot:  # as fitted
            return Z
        mask = self.encoder_.categorical_output_mask
        return pd.DataFrame(
            {f"f{j}": Z[:, j].astype(np.int64) if mask[j] else Z[:, j] for j in range(Z.shape[1])}
        )

    def _encoded(self, X: Any) -> tuple[pd.DataFrame, Any]:
        """``X`` checked, and as the estimator takes it (a float32 refusal names the value:
        :func:`~tabmoe.baselines._float32.float32_named`)."""
        check_is_fitted(self)
        frame = self.encoder_.checked_frame(self, X)
        return frame, self._estimator_input(self.encoder_.transform(frame))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, float64 of shape (n_samples, n_classes), columns in
        ``classes_`` order, each row summing to 1."""
        frame, Z = self._encoded(X)
        with float32_named(self, frame, "predicting"):
            proba = self.estimator_.predict_proba(Z)
        if proba.dtype != np.float64:
            # XGBoost's are float32, their rows summing to 1 within ~5e-8 only
            proba = proba.astype(np.float64)
            proba /= proba.sum(axis=1, keepdims=True)
        fitted = getattr(self, "_codes", None)
        if fitted is None:
            return proba
        every = np.zeros((len(proba), len(self.classes_)))
        every[:, fitted] = proba  # a class whose rows all weighed 0: probability 0
        return every

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log class probabilities, shape (n_samples, n_classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class per row, shape (n_samples,)."""
        frame, Z = self._encoded(X)
        with float32_named(self, frame, "predicting"):
            return self._classes(self.estimator_.predict(Z))

    @available_if(lambda self: hasattr(self.estimator, "staged_predict"))
    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """The classes predicted after each stage of a staged estimator (boosting), each
        of shape (n_samples,); one stage for CatBoost's class prior (no usable feature)."""
        frame, Z = self._encoded(X)
        if not hasattr(self.estimator_, "staged_predict"):  # the DummyClassifier prior
            yield self._classes(self.estimator_.predict(Z))
            return
        with float32_named(self, frame, "predicting"):
            for codes in self.estimator_.staged_predict(Z):
                yield self._classes(codes)

    def __sklearn_clone__(self) -> EncodedClassifier:
        """scikit-learn's ``clone``, with a CatBoost estimator made anew from its parameters
        (:func:`~tabmoe.baselines._gbdt.clone_estimator`)."""
        if library(self.estimator) != "catboost":
            return super().__sklearn_clone__()
        template = copy.copy(self)
        template.estimator = None
        new = clone(template)
        new.estimator = clone_estimator(self.estimator)
        return new

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


def _category_cap(estimator: Any, max_categories: int | None, one_hot: bool) -> int | None:
    """``max_categories``, at most the ``max_bins`` of a native scikit-learn estimator
    (HistGradientBoosting refuses a column of more categories, naming its position in the
    encoded matrix: a 314-value column failed "Categorical feature at index 0 is expected
    to have a cardinality <= 255"). A ``max_bins`` below 3 (the two reserved codes and one
    value) is a ValueError raised here, naming it (:func:`_max_bins_message`)."""
    max_bins = estimator.get_params(deep=False).get("max_bins")
    if one_hot or library(estimator) != "sklearn" or not isinstance(max_bins, numbers.Integral):
        return max_categories
    if max_bins < N_RESERVED_CODES + 1:
        raise ValueError(_max_bins_message(estimator, max_bins))
    return int(max_bins) if max_categories is None else min(max_categories, int(max_bins))


def _max_bins_message(estimator: Any, max_bins: Any) -> str:
    return (f"{type(estimator).__name__}'s max_bins must be at least {N_RESERVED_CODES + 1} to split natively "
            f"on categories ({N_RESERVED_CODES} codes are reserved, for missing and unseen values), got {max_bins!r}")


def _declare_categorical(estimator: Any, mask: np.ndarray) -> dict[str, Any]:
    """Tell ``estimator`` which encoded columns are categorical (in place); the extra
    keyword arguments its ``fit`` needs for that (LightGBM's ``categorical_feature``)."""
    params = estimator.get_params(deep=False)
    indices = [int(j) for j in np.flatnonzero(mask)]
    if "categorical_features" in params:
        estimator.set_params(categorical_features=mask)
    elif "feature_types" in params:
        estimator.set_params(
            feature_types=["c" if m else "q" for m in mask], enable_categorical=True
        )
    elif library(estimator) == "catboost":
        estimator.set_params(cat_features=indices)
    elif library(estimator) == "lightgbm":
        return {"categorical_feature": indices}
    else:
        raise ValueError(
            "categorical_encoding='native' needs an estimator with a categorical_features "
            "(scikit-learn) or feature_types (XGBoost) parameter, or a CatBoost or LightGBM "
            f"classifier; {type(estimator).__name__} is none of these. Use "
            "categorical_encoding='onehot'."
        )
    return {}


def _weighted_rows(
    estimator: Any, inputs: FitInputs, weights: np.ndarray | None, sample_weight: Any
) -> tuple[FitInputs, np.ndarray]:
    """``inputs`` without the rows of weight 0 (``sample_weight`` times the class weight
    ``weights``, :func:`~tabmoe.baselines._inner_params.class_weights`), in order, and the
    mask of the rows kept; the weights kept are the sample weights (the estimator applies
    its class weights itself). ValueError when no row is left."""
    row_weight = inputs.weight if weights is None else inputs.weight * weights[inputs.y_codes]
    keep = row_weight > 0
    if not keep.any():  # sample_weight alone: scikit-learn's check in start_fit
        name = "class_weights" if library(estimator) == "catboost" else "class_weight"
        times = "" if sample_weight is None else " times sample_weight"
        raise ValueError(
            f"{name}={estimator.get_params(deep=False)[name]!r}{times} gives every row "
            "weight 0: no row to train on."
        )
    return inputs.weighted(keep), keep


# ------------------------------------------------------------------ factories
# The one-hot references drop each column's first level, as the paper's did (PAPER_DROP).
PAPER_DROP = "first"


def logistic_regression(
    categorical_features: Any = "auto", drop: str | None = PAPER_DROP, **params: Any
) -> EncodedClassifier:
    """``LogisticRegression(max_iter=2000)`` on one-hot features (the paper's LR)."""
    estimator = LogisticRegression(**{**PAPER_DEFAULTS["logistic_regression"], **params})
    return EncodedClassifier(estimator, "onehot", categorical_features, drop=drop)


def random_forest(
    categorical_features: Any = "auto", drop: str | None = PAPER_DROP, **params: Any
) -> EncodedClassifier:
    """``RandomForestClassifier`` on one-hot features (the paper tuned it by grid search)."""
    estimator = RandomForestClassifier(**params)
    return EncodedClassifier(estimator, "onehot", categorical_features, drop=drop)


def gradient_boosting(
    categorical_features: Any = "auto", drop: str | None = PAPER_DROP, **params: Any
) -> EncodedClassifier:
    """The paper's ``GradientBoostingClassifier`` on one-hot features."""
    estimator = GradientBoostingClassifier(**params)
    return EncodedClassifier(estimator, "onehot", categorical_features, drop=drop)


def hist_gradient_boosting(categorical_features: Any = "auto", **params: Any) -> EncodedClassifier:
    """``HistGradientBoostingClassifier`` splitting natively on categories.

    At most ``max_bins`` (255) categories per column: rarer values share UNKNOWN.
    """
    estimator = HistGradientBoostingClassifier(**params)
    max_bins = estimator.max_bins
    if isinstance(max_bins, numbers.Integral) and max_bins < N_RESERVED_CODES + 1:  # else named max_categories
        raise ValueError(_max_bins_message(estimator, max_bins))
    return EncodedClassifier(estimator, "native", categorical_features, max_categories=max_bins)


def mlp(
    categorical_features: Any = "auto", drop: str | None = PAPER_DROP, **params: Any
) -> EncodedClassifier:
    """The paper's ``MLPClassifier(learning_rate_init=0.01, max_iter=2000)`` on one-hot."""
    estimator = MLPClassifier(**{**PAPER_DEFAULTS["mlp"], **params})
    return EncodedClassifier(estimator, "onehot", categorical_features, drop=drop)


def xgboost(categorical_features: Any = "auto", **params: Any) -> EncodedClassifier:
    """``xgboost.XGBClassifier`` splitting natively on categories (optional dependency)."""
    XGBClassifier = optional_import("xgboost", "XGBClassifier", extra="gbdt")
    return EncodedClassifier(XGBClassifier(**params), "native", categorical_features)


def catboost(categorical_features: Any = "auto", **params: Any) -> EncodedClassifier:
    """``catboost.CatBoostClassifier`` at CatBoost's defaults, categorical columns passed as
    ``cat_features`` (its ordered target statistics), numerics as numbers (optional
    dependency). Only ``random_state`` (CatBoost's own default seed, 0, unless given) and
    quiet output are set: ``verbose=0`` and ``allow_writing_files=False`` (no
    ``catboost_info/`` folder). ``thread_count`` (default -1: every core) is CatBoost's.
    A numpy ``RandomState`` or ``Generator`` as ``random_state``: each fit draws the int
    seed CatBoost takes from it.
    A ``class_weights`` dict is keyed by the labels of ``y``, a label left out weighing 1."""
    CatBoostClassifier = optional_import("catboost", "CatBoostClassifier", extra="gbdt")
    params = {"random_state": 0, "thread_count": -1, **PAPER_DEFAULTS["catboost"], **params}
    return EncodedClassifier(CatBoostClassifier(**params), "native", categorical_features)


def lightgbm(categorical_features: Any = "auto", **params: Any) -> EncodedClassifier:
    """``lightgbm.LGBMClassifier`` at LightGBM's defaults, categorical columns declared as
    ``categorical_feature`` (its native category splits); ``verbose=-1`` (optional
    dependency). A parameter LightGBM does not know (``num_leafs=3``) is a ValueError at fit,
    where LightGBM would ignore it."""
    LGBMClassifier = optional_import("lightgbm", "LGBMClassifier", extra="gbdt")
    params = {**PAPER_DEFAULTS["lightgbm"], **params}
    return EncodedClassifier(LGBMClassifier(**params), "native", categorical_features)


def paper_grid_search(
    estimator: EncodedClassifier, grid: dict[str, list], n_jobs: int | None = None
) -> GridSearchCV:
    """The paper's protocol: 5-fold stratified grid search over the inner estimator's ``grid``
    (e.g. ``PAPER_GRIDS["random_forest"]``), refitting the best on all training rows.

    GradientBoosting's ``n_estimators`` axis is scored from one fit at its largest value
    (:class:`~tabmoe.baselines.staged_search.StagedGridSearchCV`: same scores and choice
    as ``GridSearchCV`` for a fixed ``random_state``, 57 % of the trees for the paper's
    grid) when early stopping is off; the other models take a plain ``GridSearchCV``.
    """
    param_grid = {f"estimator__{key}": values for key, values in grid.items()}
    inner = getattr(estimator, "estimator", None)
    if (
        isinstance(inner, GradientBoostingClassifier)
        and "n_estimators" in grid
        and inner.n_iter_no_change is None
    ):
        return StagedGridSearchCV(
            estimator,
            param_grid,
            staged_param="estimator__n_estimators",
            cv=StratifiedKFold(5),
            n_jobs=n_jobs,
        )
    return GridSearchCV(estimator, param_grid, cv=StratifiedKFold(5), n_jobs=n_jobs)


# -------------------------------------------------------------- search spaces
def suggest_logistic_regression(trial: Any) -> dict:
    """Inverse regularisation strength, log scale (ours; the paper used the default C=1)."""
    return {"C": trial.suggest_float("C", 1e-3, 1e3, log=True)}


class _GridSuggester:
    """A search space over :data:`PAPER_GRIDS`' grid for ``name`` (each axis a categorical
    choice). A module-level class, not a closure, so that a registry spec holding it pickles
    (``joblib``'s process workers, ``multiprocessing``) as the other specs do; equal by name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__doc__ = (
            f"The grid searched for {name} under the paper's protocol (PAPER_GRIDS) as categorical choices."
        )

    def __call__(self, trial: Any) -> dict:
        out = {}
        for key, values in PAPER_GRIDS[self.name].items():
            # Optuna stores categorical choices by value; tuples are kept as their repr.
            choices = [repr(v) if isinstance(v, tuple) else v for v in values]
            chosen = trial.suggest_categorical(key, choices)
            out[key] = values[choices.index(chosen)]
        return out

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self), self.name))

    def __repr__(self) -> str:
        return f"grid_suggester({self.name!r})"


def grid_suggester(name: str) -> _GridSuggester:
    """A search space over :data:`PAPER_GRIDS`' grid for ``name`` (each axis a categorical choice)."""
    return _GridSuggester(name)


def suggest_xgboost(trial: Any) -> dict:
    """A common XGBoost space (ours): depth, trees, learning rate, sampling, regularisation."""
    return {
        "max_depth": trial.suggest_int("max_depth", 1, 10),
        "n_estimators": trial.suggest_int("n_estimators", 50, 1000, log=True),
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 0.7, log=True),
        "subsample": trial.suggest_float("subsample", 0.5, 1.0),
        "colsample_bytree": trial.suggest_float("colsample_bytree", 0.5, 1.0),
        "min_child_weight": trial.suggest_float("min_child_weight", 1.0, 100.0, log=True),
        "reg_alpha": trial.suggest_float("reg_alpha", 1e-8, 1e2, log=True),
        "reg_lambda": trial.suggest_float("reg_lambda", 1.0, 4.0, log=True),
    }


def suggest_catboost(trial: Any) -> dict:
    """CatBoost's tuning guide (learning rate, depth, L2, random strength, bagging
    temperature, one-hot limit) with the ranges of Gorishniy et al. 2021 / TabM's benchmark;
    ``iterations`` fixed at CatBoost's default 1000."""
    return {
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 1.0, log=True),
        "depth": trial.suggest_int("depth", 3, 10),
        "l2_leaf_reg": trial.suggest_float("l2_leaf_reg", 1.0, 10.0, log=True),
        "random_strength": trial.suggest_float("random_strength", 1e-2, 10.0, log=True),
        "bagging_temperature": trial.suggest_float("bagging_temperature", 0.0, 1.0),
        "one_hot_max_size": trial.suggest_int("one_hot_max_size", 2, 25),
        "leaf_estimation_iterations": trial.suggest_int("leaf_estimation_iterations", 1, 10),
    }


def suggest_lightgbm(trial: Any) -> dict:
    """LightGBM's parameter-tuning guide (leaves, minimum leaf size, feature and row
    subsampling, L1/L2) with the ranges of Gorishniy et al. 2021 / TabM's benchmark."""
    return {
        "n_estimators": trial.suggest_int("n_estimators", 50, 1000, log=True),
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 0.3, log=True),
        "num_leaves": trial.suggest_int("num_leaves", 4, 128, log=True),
        "min_child_samples": trial.suggest_int("min_child_samples", 2, 100, log=True),
        "min_child_weight": trial.suggest_float("min_child_weight", 1e-5, 1e-1, log=True),
        "subsample": trial.suggest_float("subsample", 0.5, 1.0),
        "subsample_freq": 1,
        "colsample_bytree": trial.suggest_float("colsample_bytree", 0.5, 1.0),
        "reg_lambda": trial.suggest_float("reg_lambda", 1e-8, 10.0, log=True),
    }
