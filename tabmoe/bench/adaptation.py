"""The ``unlabeled-target`` protocol: unlabeled OOD rows at fit, and importance weighting.

Each split's OOD test rows are halved (:func:`split_adaptation`: seeded, stratified by
label); the *adaptation* half goes to ``fit`` without labels, the other half is scored.
:func:`fit_adapted` gives the rows to every model the way it can use them:

* models whose ``fit`` takes ``X_unlabeled`` train on them: tabmoe's masked-feature
  objective (:class:`~tabmoe.TabularMoEClassifier`), TabNet's self-supervised
  pre-training (pytorch-tabnet's ``TabNetPretrainer``, then ``from_unsupervised``);
* models whose ``fit`` takes ``sample_weight`` are trained with covariate-shift importance
  weights (:func:`importance_weights`), tabmoe and TabNet included;
* a model with neither is fitted as in ``defaults``; its record says so.

Importance weighting (Shimodaira 2000): under covariate shift, p_T(y | x) = p_S(y | x) but
p_T(x) != p_S(x), the target risk is the source risk weighted by
w(x) = p_T(x) / p_S(x), which matters most for misspecified models. The density ratio is
estimated discriminatively (Bickel, Brückner & Scheffer 2007): a domain classifier
separating the ID training rows (d = 0) from the adaptation rows (d = 1) gives

    w(x) = p(d=1 | x) / p(d=0 | x) * n_source / n_target.

The classifier is a logistic regression (C = 1) on the shared one-hot front end
(:func:`tabmoe.baselines.reference.logistic_regression`, no level dropped). Weights are
cross-fitted: each ID row's probability comes from a classifier of a ``K_FOLDS``-fold split
(stratified by domain) that did not see that row, so a row the classifier memorised is not
up-weighted by its own fit. They are clipped to ``CLIP`` = [0.1, 10] (a bounded ratio trades
a little bias for much lower variance, as in Sugiyama et al. 2007's flattened weights
w(x)^lambda and the usual truncation), then normalised to mean 1 over the ID training rows.
The weights' effective sample size, (sum w)^2 / sum w^2, is recorded with each run.

References: H. Shimodaira, *Improving predictive inference under covariate shift by
weighting the log-likelihood function*, J. Stat. Plan. Inference 90 (2000); M. Sugiyama,
M. Krauledat, K.-R. Müller, *Covariate shift adaptation by importance weighted cross
validation*, JMLR 8 (2007); S. Bickel, M. Brückner, T. Scheffer, *Discriminative learning
for differing training and test distributions*, ICML 2007.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils.validation import has_fit_parameter

from ..baselines import reference

#: Share of the OOD test rows given to fit without labels (the rest is scored).
ADAPTATION_FRACTION = 0.5
#: Folds of the cross-fitted domain classifier.
K_FOLDS = 5
#: Bounds of the importance weights before normalisation to mean 1.
CLIP = (0.1, 10.0)


def adaptation_config() -> dict[str, Any]:
    """The protocol's settings, stored in (and hashed with) every ``unlabeled-target`` run."""
    return {
        "fraction": ADAPTATION_FRACTION,
        "weights": {
            "domain_classifier": "logistic_regression(C=1) on one-hot",
            "k_folds": K_FOLDS,
            "clip": list(CLIP),
            "normalise": "mean 1",
        },
    }


def split_adaptation(
    X: pd.DataFrame, y: pd.Series | np.ndarray, seed: int, fraction: float = ADAPTATION_FRACTION
) -> tuple[np.ndarray, np.ndarray]:
    """(adaptation row positions, test row positions) of the OOD rows ``X``, ``y``:
    seeded, stratified by label (plain random halves when a class has a single row)."""
    if len(X) < 2:  # else scikit-learn's "With n_samples=1, ... the resulting train set will be empty"
        raise ValueError(
            f"unlabeled-target: {len(X)} OOD test row(s) cannot be halved into adaptation and "
            "test rows; the split needs at least 2 OOD test rows for this protocol"
        )
    positions = np.arange(len(X))
    labels = np.asarray(y)
    _, counts = np.unique(labels.astype(str), return_counts=True)
    stratify = labels if counts.min() >= 2 else None
    adapt, test = train_test_split(
        positions, train_size=fraction, random_state=seed, stratify=stratify
    )
    return np.sort(adapt), np.sort(test)


@dataclass(frozen=True)
class ImportanceWeights:
    """Per-source-row weights (mean 1) and the domain classifier's diagnostics."""

    weights: np.ndarray
    clipped_fraction: float
    domain_auc: float

    def summary(self) -> dict[str, float]:
        w = self.weights
        return {
            "min": float(w.min()),
            "max": float(w.max()),
            "effective_sample_size": float(w.sum() ** 2 / np.sum(w**2)),
            "n": len(w),
            "clipped_fraction": self.clipped_fraction,
            "domain_auc": self.domain_auc,
        }


def importance_weights(
    X_source: pd.DataFrame,
    X_target: pd.DataFrame,
    *,
    random_state: int | None = 0,
    k_folds: int = K_FOLDS,
    clip: tuple[float, float] = CLIP,
) -> ImportanceWeights:
    """Cross-fitted, clipped, mean-1 importance weights p_T(x) / p_S(x) of the source rows
    from a logistic-regression domain classifier (module docstring)."""
    from sklearn.metrics import roc_auc_score

    if min(len(X_source), len(X_target)) < 2:  # else a fold's classifier sees one domain only
        raise ValueError(
            f"unlabeled-target: the cross-fitted domain classifier of the importance weights "
            f"needs at least 2 rows of each domain, got {len(X_source)} ID training and "
            f"{len(X_target)} adaptation row(s); the split needs at least 4 OOD test rows for "
            "this protocol (half of them adaptation rows)"
        )
    if max(len(X_source), len(X_target)) < k_folds:  # else scikit-learn's "n_splits=5 cannot be
        raise ValueError(  # greater than the number of members in each class", naming nothing
            f"unlabeled-target: the cross-fitted domain classifier of the importance weights "
            f"needs at least k_folds = {k_folds} rows of one domain for its {k_folds} folds, got "
            f"{len(X_source)} ID training and {len(X_target)} adaptation row(s)"
        )
    if set(X_source.columns) != set(X_target.columns):  # concat would fill NaN on one side
        only = [sorted(map(str, set(a.columns) - set(b.columns))) for a, b in
                ((X_source, X_target), (X_target, X_source))]
        raise ValueError(
            f"importance weights: X_source and X_target must have the same columns: only in "
            f"X_source {only[0]}, only in X_target {only[1]} (a column on one side only tells "
            "the domains apart by itself, and every weight would be clipped to one bound)"
        )
    X_all = pd.concat([X_source, X_target], ignore_index=True)
    domain = np.r_[np.zeros(len(X_source), int), np.ones(len(X_target), int)]
    p_target = np.empty(len(X_all))
    folds = StratifiedKFold(n_splits=k_folds, shuffle=True, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen categories of a fold: UNKNOWN code, expected
        for fit_rows, held_out in folds.split(X_all, domain):
            classifier = reference.logistic_regression(drop=None)
            classifier.fit(X_all.iloc[fit_rows], domain[fit_rows])
            p_target[held_out] = classifier.predict_proba(X_all.iloc[held_out])[:, 1]
    p = np.clip(p_target[: len(X_source)], 1e-12, 1 - 1e-12)
    ratio = p / (1 - p) * (len(X_source) / len(X_target))
    low, high = clip
    clipped = float(np.mean((ratio < low) | (ratio > high)))
    w = np.clip(ratio, low, high)
    return ImportanceWeights(
        weights=w / w.mean(),
        clipped_fraction=clipped,
        domain_auc=float(roc_auc_score(domain, p_target)),
    )


def fit_adapted(
    estimator: Any, X: pd.DataFrame, y: Any, X_adapt: pd.DataFrame, seed: int
) -> dict[str, Any]:
    """Fit ``estimator`` on the labelled ``X``, ``y`` using the unlabeled ``X_adapt`` every
    way it can (module docstring); what it got, for the run's record."""
    fit_params: dict[str, Any] = {}
    record: dict[str, Any] = {"unlabeled_rows": False, "importance_weights": None}
    if has_fit_parameter(estimator, "X_unlabeled"):
        fit_params["X_unlabeled"] = X_adapt
        record["unlabeled_rows"] = True
    if has_fit_parameter(estimator, "sample_weight"):
        weights = importance_weights(X, X_adapt, random_state=seed)
        fit_params["sample_weight"] = weights.weights
        record["importance_weights"] = weights.summary()
    record["adapted"] = bool(fit_params)
    estimator.fit(X, y, **fit_params)
    return record
