"""scikit-learn's estimator checks on the public estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from tabmoe import ColumnTokenizer, TabularMoEClassifier

# Checks run on small numeric arrays; 30 epochs keep the suite quick while
# check_classifiers_train's accuracy bar (0.83) is still met.
CHECKED = [TabularMoEClassifier(max_epochs=30, device="cpu"), ColumnTokenizer()]


@parametrize_with_checks(CHECKED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
