"""scikit-learn's estimator checks on the public estimators."""

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
    },
}


@parametrize_with_checks(
    CHECKED,
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(type(est).__name__, {}),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
