"""The unlabeled-target protocol's pieces: the OOD halves, importance weights, fit_adapted."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier

from tabmoe.baselines import TabNetClassifier, reference
from tabmoe.bench import adaptation
from tabmoe.bench.adaptation import fit_adapted, importance_weights, split_adaptation

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def shifted(n: int, mean: float, sd: float, rng) -> tuple[pd.DataFrame, np.ndarray]:
    """y = 1 far from 0 (|x| > 1): a logistic regression on x alone is misspecified."""
    x = rng.normal(mean, sd, n)
    return pd.DataFrame({"x": x}), np.where(np.abs(x) > 1, "far", "near")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_importance_weighting_helps_a_misspecified_model_under_covariate_shift(seed):
    """Source x ~ N(0, 1), target x ~ N(1.5, 0.5^2), same p(y | x). Unweighted, the linear
    model predicts the source majority ("near") everywhere: ~0.16 on the target. Weighted by
    p_T(x) / p_S(x) it fits the boundary at x = 1 that matters there (0.88-0.93 measured)."""
    rng = np.random.default_rng(seed)
    X_source, y_source = shifted(2000, 0.0, 1.0, rng)
    X_adapt, _ = shifted(1000, 1.5, 0.5, rng)  # labels never used
    X_test, y_test = shifted(1000, 1.5, 0.5, rng)

    plain = reference.logistic_regression().fit(X_source, y_source).score(X_test, y_test)
    model = reference.logistic_regression()
    record = fit_adapted(model, X_source, y_source, X_adapt, seed)
    weighted = model.score(X_test, y_test)

    assert record["importance_weights"] is not None and not record["unlabeled_rows"]
    assert weighted >= 0.8 and weighted - plain >= 0.5, (plain, weighted)
    # The bar is not met without the correction: the same fit with all-ones weights.
    ones = reference.logistic_regression().fit(
        X_source, y_source, sample_weight=np.ones(len(X_source))
    )
    assert ones.score(X_test, y_test) < 0.8


def test_weights_are_clipped_normalised_and_near_one_without_shift():
    rng = np.random.default_rng(0)
    X_source, _ = shifted(1500, 0.0, 1.0, rng)
    X_target, _ = shifted(500, 0.0, 1.0, rng)
    same = importance_weights(X_source, X_target, random_state=0)
    assert same.weights.mean() == pytest.approx(1.0)
    assert same.domain_auc < 0.6 and same.clipped_fraction == 0.0
    assert np.abs(same.weights - 1).max() < 0.5

    X_far, _ = shifted(500, 3.0, 0.5, rng)
    far = importance_weights(X_source, X_far, random_state=0)
    low, high = adaptation.CLIP
    assert far.weights.mean() == pytest.approx(1.0)
    assert far.weights.max() / far.weights.min() == pytest.approx(high / low)  # both bounds hit
    assert far.clipped_fraction > 0.5 and far.domain_auc > 0.95
    summary = far.summary()
    assert summary["n"] == 1500 and 0 < summary["effective_sample_size"] < 1500


def test_weights_are_cross_fitted(monkeypatch):
    """Every source row's weight comes from a domain classifier that did not train on it."""
    rng = np.random.default_rng(0)
    X_source, _ = shifted(200, 0.0, 1.0, rng)
    X_target, _ = shifted(100, 1.0, 1.0, rng)
    seen: list[tuple[set, set]] = []
    real = reference.logistic_regression

    def spy(**kwargs):
        model = real(**kwargs)
        fit, predict = model.fit, model.predict_proba

        def fit_spy(X, y, **kw):
            seen.append((set(X["x"]), set()))
            return fit(X, y, **kw)

        def predict_spy(X):
            seen[-1][1].update(X["x"])
            return predict(X)

        model.fit, model.predict_proba = fit_spy, predict_spy
        return model

    monkeypatch.setattr(adaptation.reference, "logistic_regression", spy)
    importance_weights(X_source, X_target, random_state=0, k_folds=4)
    assert len(seen) == 4
    for trained, predicted in seen:
        assert predicted and not trained & predicted
    assert set().union(*(p for _, p in seen)) == set(X_source["x"]) | set(X_target["x"])


def test_split_adaptation_halves_are_disjoint_stratified_and_seeded():
    y = pd.Series(["a"] * 60 + ["b"] * 20)
    X = pd.DataFrame({"v": range(80)})
    adapt, test = split_adaptation(X, y, seed=3)
    assert len(adapt) == len(test) == 40 and not set(adapt) & set(test)
    assert (y.iloc[adapt] == "b").sum() == 10  # stratified
    again = split_adaptation(X, y, seed=3)
    assert np.array_equal(again[0], adapt)
    assert not np.array_equal(split_adaptation(X, y, seed=4)[0], adapt)
    # A class with one row cannot be stratified: plain random halves instead of an error.
    adapt, test = split_adaptation(X, pd.Series(["a"] * 79 + ["b"]), seed=0)
    assert len(adapt) + len(test) == 80


def test_a_model_that_cannot_use_the_rows_is_fitted_plainly_and_marked():
    rng = np.random.default_rng(0)
    X, y = shifted(100, 0.0, 1.0, rng)
    X_adapt, _ = shifted(50, 1.0, 1.0, rng)
    model = KNeighborsClassifier(3)  # fit(X, y): no sample_weight, no X_unlabeled
    record = fit_adapted(model, X, y, X_adapt, 0)
    assert record == {"unlabeled_rows": False, "importance_weights": None, "adapted": False}
    assert model.score(X, y) > 0.8


def test_a_single_ood_row_cannot_be_halved_and_says_so():
    """It failed as scikit-learn's "With n_samples=1, test_size=None and train_size=0.5, the
    resulting train set will be empty", naming neither the OOD rows nor the protocol."""
    X = pd.DataFrame({"x": [0.0]})
    with pytest.raises(ValueError, match=r"unlabeled-target: 1 OOD test row\(s\) cannot be halved"):
        split_adaptation(X, np.array(["a"]), 0)
    adapt, test = split_adaptation(pd.DataFrame({"x": [0.0, 1.0]}), np.array(["a", "b"]), 0)
    assert len(adapt) == len(test) == 1


def test_a_single_adaptation_row_cannot_be_cross_fitted_and_says_so():
    """2 or 3 OOD test rows halve into 1 adaptation row; a fold's domain classifier then saw
    no target row and failed as scikit-learn's "Classifier can't train when only one class
    is present", naming neither the adaptation rows nor the protocol."""
    rng = np.random.default_rng(0)
    X, y = shifted(50, 0.0, 1.0, rng)
    X_ood = pd.DataFrame({"x": [0.5, 1.0, 1.5]})
    adapt, _ = split_adaptation(X_ood, np.array(["a", "b", "a"]), 0)
    assert len(adapt) == 1
    with pytest.raises(ValueError, match=r"unlabeled-target: .* at least 2 rows of each domain, "
                       r"got 50 ID training and 1 adaptation row\(s\)"):
        fit_adapted(reference.logistic_regression(), X, y, X_ood.iloc[adapt], 0)
    weights = importance_weights(X, X_ood.iloc[:2], random_state=0)  # 2 rows: cross-fitted
    assert weights.weights.mean() == pytest.approx(1.0)


def test_tabnet_pretrains_on_the_unlabeled_rows():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["p", "q", "r"], 300), "v": rng.normal(size=300)})
    y = np.where(X["v"] > 0, "yes", "no")
    X_adapt = X.sample(100, random_state=0).assign(v=lambda f: f["v"] + 1)
    model = TabNetClassifier(max_epochs=2, random_state=0, device="cpu")
    record = fit_adapted(model, X, y, X_adapt, 0)
    assert record["unlabeled_rows"] and record["importance_weights"] and record["adapted"]
    assert len(model.pretrain_history_) == 2
    assert TabNetClassifier(max_epochs=2, device="cpu").fit(X, y).pretrain_history_ is None


def test_tabnet_names_x_unlabeled_when_it_does_not_fit_x():
    """TabNet's X_unlabeled reached its encoder unchecked: other or reordered columns gave
    scikit-learn's "The feature names should match those that were passed during fit", an
    empty or 1-d one "Found array with 0 sample(s)", naming neither X_unlabeled nor X (as
    TabularMoEClassifier's own check does)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["p", "q"], 60), "v": rng.normal(size=60)})
    y = np.where(X["v"] > 0, "yes", "no")
    model = TabNetClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, y)
    expected = model.predict_proba(X)
    for X_unlabeled, message in (
        (X.rename(columns={"v": "w"}), r"^X_unlabeled must have the same columns as X.*lacks \['v'\]"),
        (X[["v", "c"]], r"^X_unlabeled must have the same columns as X.*in another order"),
        (X.iloc[:0], r"^X_unlabeled: Found array with 0 sample"),
        (X.to_numpy()[:, :1], r"^X_unlabeled has 1 features, but X has 2"),
    ):
        with pytest.raises(ValueError, match=message):
            model.fit(X, y, X_unlabeled=X_unlabeled)
        np.testing.assert_array_equal(model.predict_proba(X), expected)  # the fit before kept


def test_tabnet_names_x_unlabeled_in_its_unseen_value_warning():
    """TabNet's encoder is fitted on X alone, so values of X_unlabeled unseen in X map to
    UNKNOWN for pre-training with the tokenizer's warning, raised during fit: "Column 'c': 20
    value(s) (33.3% of rows) were not seen during fit", which read as a problem of X (X has no
    such value). It now names X_unlabeled at its end, as eval_set's X_val is named."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["p", "q"], 60), "v": rng.normal(size=60)})
    y = np.where(X["v"] > 0, "yes", "no")
    X_unlabeled = X.assign(c=np.where(np.arange(60) < 20, "new", X["c"]))
    model = TabNetClassifier(max_epochs=1, random_state=0, device="cpu")
    with pytest.warns(UserWarning, match=r"^Column 'c': 20 value\(s\).* \(In X_unlabeled\.\)$") as record:
        model.fit(X, y, X_unlabeled=X_unlabeled)
    assert not [w for w in record if "not seen during fit" in str(w.message) and "X_unlabeled" not in str(w.message)]


def test_tabnet_reads_an_array_x_unlabeled_by_position_without_a_warning():
    """An array X_unlabeled after a DataFrame X is read by position, as predict reads it and
    as TabularMoEClassifier reads it, silently: TabNet warned twice, naming its internals,
    "X does not have valid feature names, but TableEncoder was fitted with feature names"
    and the same of ColumnTokenizer."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["p", "q"], 60), "v": rng.normal(size=60)})
    y = np.where(X["v"] > 0, "yes", "no")
    by_name = TabNetClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, y, X_unlabeled=X)
    model = TabNetClassifier(max_epochs=1, random_state=0, device="cpu")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names")
        model.fit(X, y, X_unlabeled=X.to_numpy(dtype=object))
    assert model.pretrain_history_ == by_name.pretrain_history_
    np.testing.assert_array_equal(model.predict_proba(X), by_name.predict_proba(X))


def test_target_rows_with_other_columns_are_refused_not_weighted_as_unshifted():
    """A column on one side only was filled with NaN on the other by the concatenation: the
    domain classifier told the domains apart by that alone (AUC 1.0), every ratio was
    clipped to one bound, so the weights came out all 1 (a renamed column) and fit_adapted
    recorded an adaptation that did nothing (2,000 source and 1,000 target rows: a logistic
    regression scored 0.156 on the target instead of 0.898)."""
    rng = np.random.default_rng(0)
    X_source, y_source = shifted(400, 0.0, 1.0, rng)
    X_target, _ = shifted(200, 1.5, 0.5, rng)
    for other, message in (
        (X_target.rename(columns={"x": "X"}), r"only in X_source \['x'\], only in X_target \['X'\]"),
        (X_target.assign(row=np.arange(200)), r"only in X_source \[\], only in X_target \['row'\]"),
    ):
        with pytest.raises(ValueError, match=r"^importance weights: X_source and X_target must have "
                           r"the same columns: " + message):
            importance_weights(X_source, other, random_state=0)
        with pytest.raises(ValueError, match="must have the same columns"):
            fit_adapted(reference.logistic_regression(), X_source, y_source, other, 0)
    # The same columns in another order are the same rows: the same weights.
    both = X_target.assign(z=1.0)
    ordered = importance_weights(X_source.assign(z=1.0), both, random_state=0)
    reordered = importance_weights(X_source.assign(z=1.0), both[["z", "x"]], random_state=0)
    np.testing.assert_allclose(reordered.weights, ordered.weights)


@pytest.mark.parametrize(("n_source", "n_target"), [(2, 2), (3, 2), (4, 4)])
def test_too_few_rows_for_the_folds_say_so(n_source, n_target):
    """At least 2 rows of each domain passed the check, but with fewer than 5 rows on both
    sides the 5-fold split failed as scikit-learn's "n_splits=5 cannot be greater than the
    number of members in each class" (or "... greater than the number of samples: n_samples=4"),
    naming neither the protocol nor the rows."""
    rng = np.random.default_rng(0)
    X_source, _ = shifted(n_source, 0.0, 1.0, rng)
    X_target, _ = shifted(n_target, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match=rf"^unlabeled-target: .* needs at least k_folds = 5 rows of "
                       rf"one domain .* got {n_source} ID training and {n_target} adaptation row"):
        importance_weights(X_source, X_target, random_state=0)
    # 5 rows of one side are enough: every fold's classifier sees both domains.
    X_more, _ = shifted(5, 0.0, 1.0, rng)
    weights = importance_weights(X_more, X_target, random_state=0)
    assert len(weights.weights) == 5 and weights.weights.mean() == pytest.approx(1.0)
