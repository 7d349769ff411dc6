"""scikit-learn's estimator checks on the public estimators."""

import numpy as np
import pandas as pd
from sklearn.utils.estimator_checks import parametrize_with_checks

from tabmoe import ColumnTokenizer, TabularMoEClassifier

# Checks run on small numeric arrays; 30 epochs keep the suite quick while
# check_classifiers_train's accuracy bar (0.83) is still met.
CHECKED = [TabularMoEClassifier(max_epochs=30, device="cpu"), ColumnTokenizer()]

EXPECTED_FAILED_CHECKS = {
    "TabularMoEClassifier": {
        # Minibatch training: a row of weight 2 and the same row duplicated give the same loss
        # in expectation, but different batches, batch counts and hence different weights
        # after a finite number of steps (scikit-learn lists the same exception for
        # SGDClassifier and MLP-style estimators).
        "check_sample_weight_equivalence_on_dense_data": "stochastic minibatch training",
        # float32 network: a row's probabilities differ in the 7th digit (the check's atol is
        # 1e-7) with the rows batched beside it, as the torch baselines' (the default width,
        # d_model 64 / ff_dim 128, takes other matmul kernels for one row than for many).
        # Non-strict: on an AMD EPYC (avx512f) the largest difference, 1.1e-7, is 0.91 of the
        # check's bar (atol + rtol * p), an XPASS; another CPU's kernels cross it. Being
        # expected to fail, the check can never fail: test_a_rows_probabilities_do_not_depend_
        # _on_the_rows_predicted_with_it below checks the same property at a float32 bar.
        "check_methods_subset_invariance": "float32 outputs differ by ~1e-7 with batching",
    },
}


@parametrize_with_checks(
    CHECKED,
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(type(est).__name__, {}),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_a_rows_probabilities_do_not_depend_on_the_rows_predicted_with_it():
    """scikit-learn's check_methods_subset_invariance is an expected failure above (float32
    noise at its 1e-7 bar), so nothing checked that a row's prediction is its own: the same
    check, each row predicted alone and in slices, at 1e-6 (the noise is 1e-7), on the
    check's 20 numeric rows and on a mixed table with missing values."""
    rnd = np.random.RandomState(0)
    numeric = 3 * rnd.uniform(size=(20, 3))
    mixed = pd.DataFrame({
        "colour": rnd.choice(["red", "green", "blue", None], 40).astype(object),
        "size": np.where(rnd.uniform(size=40) < 0.2, np.nan, rnd.normal(size=40)),
        "kind": pd.Categorical(rnd.choice(["a", "b"], 40)),
    })
    for X, y in ((numeric, numeric[:, 0].astype(int)), (mixed, np.where(mixed["size"] > 0, "p", "q"))):
        clf = TabularMoEClassifier(max_epochs=5, device="cpu", random_state=1).fit(X, y)
        whole = clf.predict_proba(X)
        for step in (1, 3):
            parts = np.vstack([clf.predict_proba(X[i : i + step]) for i in range(0, len(X), step)])
            np.testing.assert_allclose(parts, whole, rtol=0, atol=1e-6, err_msg=f"{step} row(s) at a time")
        alone = np.concatenate([clf.predict(X[i : i + 1]) for i in range(len(X))])
        np.testing.assert_array_equal(alone, clf.predict(X))
