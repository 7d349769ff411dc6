"""A classifier's probabilities moved to the class balance of unlabeled target rows.

Under label shift (p(x | y) the same, p(y) changed) a classifier trained where class c had
prior ``pi_s(c)`` predicts ``p_s(c | x)``; on rows whose prior is ``pi_t(c)`` the right
posterior is ``p_s(c | x) * pi_t(c) / pi_s(c)``, renormalised. :func:`em_label_shift`
estimates ``pi_t`` from the unlabeled target rows alone by expectation-maximisation
(Saerens, Latinne & Decaestecker 2002, "Adjusting the outputs of a classifier to new a
priori probabilities"): reweight the posteriors with the current estimate, average them
into the next one, repeat to a fixed point. It is a maximum-likelihood estimate, so it is
only as good as the classifier's calibration (Alexandari, Kundaje & Shrikumar 2020:
calibrate first, e.g. on ID validation rows), and it assumes the shift is in p(y) only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from sklearn.exceptions import ConvergenceWarning

from .._stack import user_stacklevel


@dataclass(frozen=True)
class LabelShiftEstimate:
    """What :func:`em_label_shift` found, classes in the columns' order."""

    prior: np.ndarray  # (C,) the estimated class balance of the target rows
    proba: np.ndarray  # (n, C) the probabilities reweighted to it
    n_iter: int
    converged: bool


def _as_floats(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a float array; ValueError naming ``name`` for values that are no numbers
    (numpy's "could not convert string to float: 'a'" named no argument)."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers: {exc}.") from None


def _check_proba(proba: ArrayLike) -> np.ndarray:
    p = _as_floats(proba, "proba")
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"proba must be a 2-D array of n >= 1 rows and >= 2 classes, got shape {p.shape}.")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("proba must hold finite, non-negative probabilities.")
    sums = p.sum(axis=1)
    if np.abs(sums - 1).max() > 1e-6:
        row = int(np.argmax(np.abs(sums - 1)))
        raise ValueError(f"proba's rows must sum to 1 (row {row} sums to {sums[row]:.6g}).")
    return p / sums[:, None]


def _check_prior(prior: ArrayLike, n_classes: int, name: str) -> np.ndarray:
    q = _as_floats(prior, name)
    if q.shape != (n_classes,):
        raise ValueError(f"{name} must have one entry per column of proba ({n_classes}), got shape {q.shape}.")
    if not np.isfinite(q).all() or (q <= 0).any():
        raise ValueError(
            f"{name} must be finite and positive for every class, got {q.tolist()} (a class "
            "with no training rows cannot be reweighted)."
        )
    if not np.isfinite(q.sum()):  # counts near the float limit: the sum overflowed (prior 0)
        q = q / q.max()
    return q / q.sum()


def em_label_shift(
    proba: ArrayLike, source_prior: ArrayLike, *, max_iter: int = 1000, tol: float = 1e-8
) -> LabelShiftEstimate:
    """Estimate the class balance of unlabeled rows and move ``proba`` to it (EM).

    Parameters
    ----------
    proba : array of shape (n_rows, n_classes)
        A classifier's ``predict_proba`` on the target rows (no labels needed).
    source_prior : array of shape (n_classes,)
        The class balance the classifier was trained under, in ``proba``'s column order:
        e.g. ``[np.mean(y_train == c) for c in clf.classes_]`` (normalised here).
    max_iter, tol : stop after ``max_iter`` rounds, or once no class's estimate moves by
        more than ``tol``.

    Returns
    -------
    LabelShiftEstimate
        ``prior`` (the estimate), ``proba`` (``proba * prior / source_prior``, rows
        renormalised: predict with ``proba.argmax(1)``), ``n_iter`` and ``converged``
        (False after ``max_iter`` rounds, with a ``ConvergenceWarning``).
    """
    p = _check_proba(proba)
    source = _check_prior(source_prior, p.shape[1], "source_prior")
    # a bool is an int to Python, but max_iter=True is a mistake, not one round
    if isinstance(max_iter, bool) or not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}.")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"tol must be a real number > 0, got {tol!r}.")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}.")
    prior, converged, n_iter = source.copy(), False, 0
    while n_iter < max_iter and not converged:
        n_iter += 1
        new = _reweight(p, _ratio(prior, source)).mean(axis=0)
        converged = bool(np.abs(new - prior).max() <= tol)
        prior = new
    if not converged:  # as scikit-learn's iterative estimators say it (the flag alone went unread)
        warnings.warn(
            f"em_label_shift stopped after max_iter={max_iter} rounds with the estimate still "
            f"moving by more than tol={tol!r}: raise max_iter, or read converged=False.",
            ConvergenceWarning, stacklevel=user_stacklevel(),
        )
    return LabelShiftEstimate(prior, _reweight(p, _ratio(prior, source)), n_iter, converged)


def _ratio(prior: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``prior / source`` scaled so its largest entry is 1 (the rows are renormalised, so
    the scale is free): a tiny, even subnormal, source prior cannot overflow it to inf."""
    with np.errstate(divide="ignore"):  # a class the estimate dropped to 0: log 0 = -inf
        log_ratio = np.log(prior) - np.log(source)
    return np.exp(log_ratio - log_ratio.max())


def _reweight(p: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    w = p * ratio
    total = w.sum(axis=1, keepdims=True)
    # a row whose every class has been driven to 0 keeps its own probabilities
    return np.divide(w, total, out=p.copy(), where=total > 0)
