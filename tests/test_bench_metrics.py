"""Scores of one model on one part: accuracy, balanced accuracy, log loss, ROC AUC, bin MSE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score

from tabmoe.metrics import classification_scores


def test_binary_scores_match_scikit_learn():
    y = np.array(["no", "yes", "yes", "no", "yes"])
    proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.4, 0.6], [0.1, 0.9]])
    s = classification_scores(y, proba, np.array(["no", "yes"]))
    assert s["n"] == 5
    assert s["accuracy"] == pytest.approx(3 / 5)
    assert s["balanced_accuracy"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert s["log_loss"] == pytest.approx(log_loss(y, proba, labels=["no", "yes"]))
    assert s["roc_auc"] == pytest.approx(roc_auc_score(y == "yes", proba[:, 1]))
    assert s["bin_mse"] is None  # string labels
    flags = classification_scores(y == "yes", proba, np.array([False, True]))
    assert flags["accuracy"] == s["accuracy"] and flags["bin_mse"] is None  # bool labels: no bins


def test_sample_weight_weights_every_score_and_weight_0_removes_a_row():
    """classification_scores(..., sample_weight=w) scores as scikit-learn's metrics do with
    the same weights; a row of weight 0 scores as an absent row; bad weights name
    sample_weight."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 40)
    proba = rng.dirichlet(np.ones(3), 40)
    w = rng.uniform(0, 3, 40)
    s = classification_scores(y, proba, np.arange(3), sample_weight=w)
    pred = proba.argmax(1)
    assert s["accuracy"] == pytest.approx(np.average(pred == y, weights=w))
    assert s["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred, sample_weight=w))
    assert s["log_loss"] == pytest.approx(log_loss(y, proba, sample_weight=w))
    aucs = [roc_auc_score(y == k, proba[:, k], sample_weight=w) for k in range(3)]
    assert s["roc_auc"] == pytest.approx(np.mean(aucs))
    assert s["bin_mse"] == pytest.approx(np.average((pred - y) ** 2, weights=w))
    w[:5] = 0
    zero = classification_scores(y, proba, np.arange(3), sample_weight=w)
    assert zero == pytest.approx(classification_scores(y[5:], proba[5:], np.arange(3), sample_weight=w[5:]))
    assert zero["n"] == 35
    for bad in (w[1:], np.r_[-1.0, w[1:]], np.r_[np.nan, w[1:]]):
        with pytest.raises(ValueError, match="sample_weight"):
            classification_scores(y, proba, np.arange(3), sample_weight=bad)


def test_multiclass_auc_is_one_vs_rest_macro():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 60)
    proba = rng.dirichlet(np.ones(3), 60)
    s = classification_scores(y, proba, np.arange(3))
    assert s["roc_auc"] == pytest.approx(roc_auc_score(y, proba, multi_class="ovr"))
    pred = proba.argmax(1)
    assert s["bin_mse"] == pytest.approx(np.mean((pred - y) ** 2))


def test_log_loss_reads_the_columns_in_the_order_of_classes():
    """A classifier whose ``classes_`` is not sorted (skorch's ``classes=``, a wrapper's own
    order) gives ``proba`` columns in that order. scikit-learn's ``log_loss`` reads the
    columns in the sorted order of ``labels`` whatever order they are passed in, so the log
    loss paired each label with another's probability (1.6256 here instead of 0.6192), while
    accuracy and ROC AUC read the columns as given. Every score now reads them alike."""
    y = np.array(["c", "b", "a", "a"])
    proba = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    by_hand = -np.mean(np.log([0.7, 0.5, 0.8, 0.3]))  # column 0 is "c", 2 is "a"
    s = classification_scores(y, proba, np.array(["c", "b", "a"]))
    assert s["log_loss"] == pytest.approx(by_hand)
    assert s["accuracy"] == 0.75
    # the same model with its columns sorted scores the same, as scikit-learn computes it
    order = [2, 1, 0]
    sorted_ = classification_scores(y, proba[:, order], np.array(["a", "b", "c"]))
    assert sorted_["log_loss"] == s["log_loss"] == pytest.approx(log_loss(y, proba[:, order]))
    assert sorted_["roc_auc"] == s["roc_auc"] and sorted_["balanced_accuracy"] == s["balanced_accuracy"]


def test_undefined_metrics_are_none():
    proba = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1]])
    one_class = classification_scores(np.array([1, 1]), proba, np.arange(3))
    assert one_class["roc_auc"] is None and one_class["accuracy"] == 0.5
    unseen = classification_scores(np.array([0, 7]), proba, np.arange(3))  # label 7 never fitted
    assert unseen["log_loss"] is None and unseen["accuracy"] == 0.5
    empty = classification_scores(np.array([]), np.zeros((0, 3)), np.arange(3))
    assert empty == {"n": 0, "accuracy": None, "balanced_accuracy": None, "log_loss": None,
                     "roc_auc": None, "bin_mse": None}
    with pytest.raises(ValueError, match=r"shape \(2, 3\), expected \(2, 2\)"):
        classification_scores(np.array([0, 1]), proba, np.arange(2))


def test_float32_probabilities_that_sum_to_one_do_not_warn():
    """predict_proba in float32 (XGBoost's) was cast to float64 before log_loss, whose check
    then held the float32 rounding of the row sums (~1e-7) to float64 precision: "The y_prob
    values do not sum to one" was recorded on 194 committed XGBoost runs. The score is that of
    the float64 probabilities, as before."""
    import warnings

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(500, 7)) * 3
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    proba32 = proba.astype(np.float32)
    assert not np.allclose(proba32.astype(np.float64).sum(axis=1), 1, rtol=1e-8, atol=1e-8)
    y = rng.integers(0, 7, 500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = classification_scores(y, proba32, np.arange(7))
    with warnings.catch_warnings():  # the reference: scikit-learn on the float64 copy warns
        warnings.simplefilter("ignore", UserWarning)
        expected = log_loss(y, proba32.astype(np.float64), labels=np.arange(7))
    assert s["log_loss"] == expected
    with pytest.warns(UserWarning, match="do not sum to one"):  # still warned where they do not
        classification_scores(y, proba32 * np.float32(0.9), np.arange(7))


def test_non_finite_probabilities_are_refused():
    """NaN probabilities (a diverged network) were scored where log_loss and ROC AUC are
    undefined: argmax read NaN as the first class, accuracy 0.5 below. scikit-learn's
    log_loss refuses NaN; so does every score now, naming proba."""
    nan = np.full((2, 3), np.nan)
    with pytest.raises(ValueError, match=r"NaN or infinite probabilities \(proba\)"):
        classification_scores(np.array([0, 7]), nan, np.arange(3))
    with pytest.raises(ValueError, match="proba"):
        classification_scores(np.array([0, 1]), np.array([[np.inf, 0.0], [0.5, 0.5]]), np.arange(2))


def test_non_finite_probabilities_name_the_model_part_and_rows(monkeypatch):
    """A run whose model returned NaN probabilities on one part failed with "predict_proba
    returned NaN or infinite probabilities (proba)": not which part (the run id names the
    model, not the part) nor how many rows. The message names the model, part and rows."""
    import tabmoe.bench.execute as execute_module
    from tabmoe.bench.plan import RunSpec
    from tabmoe.bench.suites import load_suite

    split = load_suite("smoke").split("car-buying-vhigh")
    n_ood = len(split.make(0).parts["ood_test"])
    assert n_ood not in {len(part) for name, part in split.make(0).parts.items() if name != "ood_test"}
    real = execute_module.set_random_states

    def nan_on_ood_test(estimator, seed):
        estimator = real(estimator, seed)
        predict_proba = estimator.predict_proba

        def proba(X):
            out = predict_proba(X)
            if len(X) == n_ood:  # the OOD test rows only
                out[[3, 5]] = np.nan
            return out

        estimator.predict_proba = proba
        return estimator

    monkeypatch.setattr(execute_module, "set_random_states", nan_on_ood_test)
    spec = RunSpec(suite="smoke", split=split, model="logistic_regression", protocol="defaults", seed=0)
    with pytest.raises(ValueError, match=r"logistic_regression on part 'ood_test': predict_proba returned "
                                         rf"NaN or infinite probabilities \(proba\) in 2 of {n_ood} rows, e\.g\. row 3"):
        execute_module.execute(spec)


def test_a_one_class_model_is_scored_with_log_loss_none():
    """A model fitted on one class (scikit-learn's DummyClassifier, a random forest) failed
    the whole scoring with scikit-learn's "The labels array needs to contain at least two
    labels": its log loss is undefined there, so it is None as the other undefined metrics."""
    from sklearn.dummy import DummyClassifier

    from tabmoe.metrics import score_estimator

    model = DummyClassifier().fit([[0], [1]], ["a", "a"])
    s = score_estimator(model, [[0], [1], [2]], ["a", "a", "b"])
    assert s["log_loss"] is None and s["roc_auc"] is None
    assert s["accuracy"] == pytest.approx(2 / 3) and s["balanced_accuracy"] == 0.5
    assert score_estimator(model, [[0]], ["a"])["log_loss"] is None


@pytest.mark.parametrize("unit", ["datetime64[ns]", "timedelta64[s]"])
def test_date_and_duration_labels_are_scored_as_their_codes_would_be(unit):
    """Every classifier fits, predicts, scores and saves datetime64 / timedelta64 labels (as
    scikit-learn's do), but their metrics failed with sklearn's `ValueError: unknown is not
    supported`: the labels were turned into objects, which for nanoseconds are plain ints."""
    classes = np.array([0, 86400, 2 * 86400]).astype("timedelta64[s]")
    if unit.startswith("datetime"):
        classes = (np.datetime64("2020-01-01") + classes).astype(unit)
    codes = np.array([0, 1, 2, 0, 1])
    proba = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1], [0.6, 0.3, 0.1]])
    as_codes = {**classification_scores(codes, proba, np.arange(3)), "bin_mse": None}  # not bins
    assert classification_scores(classes[codes], proba, classes) == as_codes
    assert classification_scores(pd.Series(classes[codes]), proba, classes) == as_codes
    assert as_codes["accuracy"] == 0.8


def test_ovr_roc_auc_reads_lists_as_arrays():
    """The public ``ovr_roc_auc`` given labels and classes as lists compared the whole list
    with each class (one False), found no class present and returned None for a perfect
    ranking; it now scores them as arrays, as scikit-learn's ``roc_auc_score`` does."""
    from tabmoe.metrics import ovr_roc_auc

    proba = [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]
    assert ovr_roc_auc([0, 1, 0, 1], proba, [0, 1]) == pytest.approx(1.0)
    assert ovr_roc_auc(["a", "b", "a", "b"], np.array(proba), np.array(["a", "b"])) == pytest.approx(1.0)
    three = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.2, 0.3]]
    expected = roc_auc_score([0, 1, 2, 1], np.array(three), multi_class="ovr")
    assert ovr_roc_auc(["a", "b", "c", "b"], three, ["a", "b", "c"]) == pytest.approx(expected)
    assert ovr_roc_auc([0, 0], proba[:2], [0, 1]) is None  # one class present: undefined


@pytest.mark.parametrize(
    "y",
    [["b", np.nan, "b"], pd.Series(["b", None, "b"]), np.array([1.0, np.nan, 1.0])],
    ids=["nan-among-strings", "none-in-a-series", "float-nan"],
)
def test_missing_labels_are_refused_alike(y):
    """A NaN among string labels was scored as one more class (accuracy 2/3 and balanced
    accuracy 0.5 for three rows the model ranks perfectly, the unlabelled one counted wrong),
    where None raised a TypeError from sorting and a float NaN scikit-learn's "Input y_true
    contains NaN". Each is now a ValueError naming the positions."""
    proba = np.array([[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    classes = np.array([0.0, 1.0]) if isinstance(y, np.ndarray) else np.array(["a", "b"])
    with pytest.raises(ValueError, match=r"1 missing label\(s\).*position\(s\) \[1\]"):
        classification_scores(y, proba, classes)



def test_x_and_y_of_different_lengths_are_named_as_such():
    """score_estimator on X of 40 rows and 30 labels said "predict_proba returned shape
    (40, 2), expected (30, 2)", blaming the model for a mismatch of X and y."""
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    from tabmoe.metrics import score_estimator

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    for X_, y_ in ((X, y[:30]), (pd.DataFrame(X), pd.Series(y[:30])), (X.tolist(), y[:30].tolist())):
        with pytest.raises(ValueError, match="X has 40 rows but y has 30 labels"):
            score_estimator(model, X_, y_)
    with pytest.raises(ValueError, match="X has 30 rows but y has 40 labels"):
        score_estimator(model, X[:30], y)
    assert score_estimator(model, X, y)["n"] == 40
