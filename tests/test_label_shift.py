"""em_label_shift: the class balance of unlabeled rows from a calibrated classifier's
probabilities (Saerens et al. 2002), checked where the true posteriors are known."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from tabmoe.data.label_shift import em_label_shift

MEANS = np.array([-2.0, 0.0, 2.0])  # class c: x ~ N(MEANS[c], 1)


def _rows(prior, n, seed):
    """Labels drawn with ``prior`` and the exact posteriors of a classifier trained under a
    uniform prior (the Bayes posteriors for it: perfectly calibrated there)."""
    rng = np.random.default_rng(seed)
    y = rng.choice(len(prior), size=n, p=prior)
    x = rng.normal(MEANS[y], 1.0)
    likelihood = np.exp(-0.5 * (x[:, None] - MEANS[None, :]) ** 2)
    return y, likelihood / likelihood.sum(1, keepdims=True)


@pytest.mark.parametrize("target", [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.05, 0.9, 0.05]])
def test_recovers_the_target_balance_and_the_bayes_posteriors(target):
    y, proba = _rows(target, 20_000, seed=0)
    est = em_label_shift(proba, [1 / 3] * 3)
    assert est.converged and est.n_iter < 1000
    np.testing.assert_allclose(est.prior, np.bincount(y, minlength=3) / len(y), atol=0.02)
    bayes = proba * np.array(target)
    bayes /= bayes.sum(1, keepdims=True)
    assert np.abs(est.proba - bayes).max() < 0.05
    assert np.mean(est.proba.argmax(1) == y) > np.mean(proba.argmax(1) == y) + 0.02


def test_rows_with_the_source_balance_stay_as_they_are():
    y, proba = _rows([1 / 3] * 3, 20_000, seed=1)
    est = em_label_shift(proba, [1, 1, 1])  # any positive scale: normalised
    np.testing.assert_allclose(est.prior, [1 / 3] * 3, atol=0.02)
    assert np.abs(est.proba - proba).max() < 0.05


def test_the_estimate_is_a_fixed_point():
    _, proba = _rows([0.6, 0.3, 0.1], 2_000, seed=2)
    est = em_label_shift(proba, [0.5, 0.25, 0.25], tol=1e-12)
    np.testing.assert_allclose(est.proba.mean(0), est.prior, atol=1e-9)
    np.testing.assert_allclose(est.proba.sum(1), 1.0)
    # said, as scikit-learn's iterative estimators say it (the flag alone went unread)
    with pytest.warns(ConvergenceWarning, match=r"stopped after max_iter=1 rounds .* raise max_iter"):
        capped = em_label_shift(proba, [0.5, 0.25, 0.25], max_iter=1)
    assert capped.n_iter == 1 and not capped.converged


def test_a_row_certain_of_a_class_the_estimate_drops_keeps_its_probabilities():
    proba = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    est = em_label_shift(proba, [0.5, 0.5])
    np.testing.assert_allclose(est.prior, [0.25, 0.75])
    np.testing.assert_array_equal(est.proba, proba)


@pytest.mark.parametrize(
    ("proba", "prior", "kwargs", "message"),
    [
        ([0.5, 0.5], [0.5, 0.5], {}, "proba must be a 2-D array"),
        ([[1.0]], [1.0], {}, "proba must be a 2-D array"),
        ([[0.5, 0.6]], [0.5, 0.5], {}, r"rows must sum to 1 \(row 0 sums to 1.1\)"),
        ([[1.5, -0.5]], [0.5, 0.5], {}, "non-negative"),
        ([[np.nan, 1.0]], [0.5, 0.5], {}, "finite"),
        ([[0.5, 0.5]], [0.5, 0.3, 0.2], {}, r"source_prior must have one entry per column of proba \(2\)"),
        ([[0.5, 0.5]], [1.0, 0.0], {}, "source_prior must be finite and positive"),
        ([[0.5, 0.5]], [0.5, 0.5], {"max_iter": 0}, "max_iter must be an integer >= 1"),
        ([[0.5, 0.5]], [0.5, 0.5], {"tol": 0}, "tol must be > 0"),
        ([[0.5, 0.5]], [0.5, 0.5], {"max_iter": True}, "max_iter must be an integer >= 1, got True"),
    ],
)
def test_bad_input_is_refused_by_name(proba, prior, kwargs, message):
    with pytest.raises(ValueError, match=message):
        em_label_shift(proba, prior, **kwargs)


@pytest.mark.parametrize("tol", ["a", True, None])
def test_a_tol_that_is_not_a_number_is_refused_by_name(tol):
    with pytest.raises(TypeError, match="tol must be a real number"):
        em_label_shift([[0.5, 0.5]], [0.5, 0.5], tol=tol)


@pytest.mark.parametrize("source_prior", [[1e-320, 1.0], [1e-300, 1e10], [1e-308, 1.0, 1.0, 1.0]])
def test_a_tiny_source_prior_gives_a_finite_estimate(source_prior):
    # prior / source_prior overflowed to inf for a subnormal class and the estimate was NaN
    n = len(source_prior)
    proba = np.array([[0.4] + [0.6 / (n - 1)] * (n - 1), [0.6] + [0.4 / (n - 1)] * (n - 1)])
    est = em_label_shift(proba, source_prior)
    assert np.isfinite(est.prior).all() and np.isfinite(est.proba).all()
    np.testing.assert_allclose(est.prior.sum(), 1.0)
    np.testing.assert_allclose(est.proba.sum(1), 1.0)
    assert est.prior[0] > 0.99  # the rows' class-0 posterior is huge next to its source prior


@pytest.mark.parametrize("scale", [1.0, 1e307, 1e308])
def test_a_source_prior_of_huge_counts_is_normalised_not_overflowed(scale):
    """source_prior is normalised here, but its sum overflowed to inf for counts near the
    float limit: every class's prior became 0 and the estimate, "converged", was the plain
    mean of proba ([0.73, 0.27] below, not [1, 0])."""
    proba = [[0.9, 0.1], [0.6, 0.4], [0.7, 0.3]]
    expected = em_label_shift(proba, [0.5, 0.5])
    est = em_label_shift(proba, [scale, scale])
    np.testing.assert_allclose(est.prior, expected.prior)
    np.testing.assert_allclose(est.proba, expected.proba)
    assert est.n_iter == expected.n_iter and est.converged


def test_a_prior_that_does_not_overflow_is_normalised_as_before():
    # the overflow fix divided every prior by its largest entry first, which moved the last
    # bits of most results (155 of 300 random calls, up to 1.9e-15)
    from tabmoe.data.label_shift import _check_prior

    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(1, 10_000, size=int(rng.integers(2, 6))).astype(float)
        np.testing.assert_array_equal(_check_prior(counts, len(counts), "source_prior"), counts / counts.sum())


@pytest.mark.parametrize(
    ("proba", "prior", "message"),
    [
        ([["a", "b"]], [0.5, 0.5], r"^proba must hold numbers: could not convert string to float: 'a'\.$"),
        ([[0.5 + 1j, 0.5]], [0.5, 0.5], r"^proba must hold numbers: .*complex"),
        ([[0.5, 0.5]], ["a", "b"], r"^source_prior must hold numbers: could not convert string to float: 'a'\.$"),
    ],
)
def test_values_that_are_no_numbers_are_refused_naming_the_argument(proba, prior, message):
    # numpy's "could not convert string to float: 'a'" (a TypeError for complex numbers)
    # named neither proba nor source_prior
    with pytest.raises(ValueError, match=message):
        em_label_shift(proba, prior)
