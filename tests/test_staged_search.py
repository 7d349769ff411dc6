"""StagedGridSearchCV gives GridSearchCV's scores, choice and refit with fewer tree fits."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import GridSearchCV, GroupKFold, StratifiedKFold

from tabmoe.baselines import reference
from tabmoe.baselines.staged_search import StagedGridSearchCV
from tabmoe.tuning import set_random_states

GRID = {"learning_rate": [0.1, 1.0], "n_estimators": [3, 10, 6], "max_depth": [1, 3]}


def noisy_table(n: int = 240, n_classes: int = 3, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Categorical and numeric columns with a label noisy enough that depth and stages matter."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue", "grey"], n).astype(object),
            "size": rng.normal(size=n),
            "weight": rng.normal(size=n),
        }
    )
    signal = (X["colour"] == "red") * 1.0 + X["size"] + 0.5 * X["weight"] ** 2
    y = np.digitize(signal + rng.normal(scale=1.0, size=n), np.quantile(signal, [1 / 3, 2 / 3]))
    return X, np.array(["low", "mid", "high"])[y % n_classes]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_staged_search_equals_grid_search(n_classes):
    X, y = noisy_table(n_classes=n_classes)
    model = reference.gradient_boosting(random_state=7)
    param_grid = {f"estimator__{k}": v for k, v in GRID.items()}
    plain = GridSearchCV(model, param_grid, cv=StratifiedKFold(4)).fit(X, y)
    staged = StagedGridSearchCV(
        model, param_grid, staged_param="estimator__n_estimators", cv=StratifiedKFold(4)
    ).fit(X, y)

    assert staged.cv_results_["params"] == plain.cv_results_["params"]
    for key in ["mean_test_score", "std_test_score", "rank_test_score"] + [
        f"split{s}_test_score" for s in range(4)
    ]:
        np.testing.assert_array_equal(staged.cv_results_[key], plain.cv_results_[key], err_msg=key)
    # The grid has ties on this data; the choice must break them as GridSearchCV does.
    assert len(set(plain.cv_results_["rank_test_score"])) < len(plain.cv_results_["params"])
    assert staged.best_index_ == plain.best_index_
    assert staged.best_params_ == plain.best_params_
    assert staged.best_score_ == plain.best_score_
    np.testing.assert_array_equal(staged.predict_proba(X), plain.predict_proba(X))
    np.testing.assert_array_equal(staged.classes_, plain.classes_)
    assert staged.score(X, y) == plain.score(X, y)
    assert list(staged.cv_results_["param_estimator__n_estimators"]) == list(
        plain.cv_results_["param_estimator__n_estimators"]
    )
    assert pickle.loads(pickle.dumps(staged)).predict(X).tolist() == staged.predict(X).tolist()


def test_paper_grid_search_stages_gradient_boosting_only():
    gb = reference.paper_grid_search(
        reference.gradient_boosting(), reference.PAPER_GRIDS["gradient_boosting"]
    )
    assert isinstance(gb, StagedGridSearchCV)
    assert gb.staged_param == "estimator__n_estimators"
    assert gb.cv.n_splits == 5 and type(gb.cv).__name__ == "StratifiedKFold"
    # The harness sets every random_state on the search afterwards, and clone keeps it staged.
    seeded = clone(set_random_states(gb, 3))
    assert isinstance(seeded, StagedGridSearchCV)
    assert seeded.estimator.estimator.random_state == 3

    early = reference.gradient_boosting(n_iter_no_change=5)
    assert type(reference.paper_grid_search(early, {"n_estimators": [5, 10]})) is GridSearchCV
    rf = reference.paper_grid_search(reference.random_forest(), reference.PAPER_GRIDS["random_forest"])
    assert type(rf) is GridSearchCV


def test_staged_predict_gives_classes_after_each_stage():
    X, y = noisy_table()
    clf = reference.gradient_boosting(n_estimators=4, random_state=0).fit(X, y)
    stages = list(clf.staged_predict(X))
    assert len(stages) == 4
    assert set(stages[-1]) <= set(clf.classes_)
    np.testing.assert_array_equal(stages[-1], clf.predict(X))
    assert not hasattr(reference.random_forest(), "staged_predict")


@pytest.mark.parametrize(
    ("staged_param", "values", "match"),
    [
        ("estimator__depth", None, "staged_param='estimator__depth' is not a key of param_grid"),
        ("estimator__n_estimators", [0, 5], r"param_grid\['estimator__n_estimators'\] must hold positive"),
        ("estimator__n_estimators", [2.5], "must hold positive integers"),
    ],
)
def test_bad_staged_param_names_it(staged_param, values, match):
    X, y = noisy_table(60)
    grid = {"estimator__n_estimators": values or [2]}
    search = StagedGridSearchCV(
        reference.gradient_boosting(random_state=0), grid, staged_param=staged_param, cv=3
    )
    with pytest.raises(ValueError, match=match):
        search.fit(X, y)


def test_staged_search_works_on_a_bare_gradient_boosting():
    X, y = noisy_table()
    Z = pd.get_dummies(X).to_numpy(dtype=float)
    grid = {"n_estimators": [2, 5], "max_depth": [1, 2]}
    gb = GradientBoostingClassifier(random_state=1)
    plain = GridSearchCV(gb, grid, cv=3).fit(Z, y)
    staged = StagedGridSearchCV(gb, grid, staged_param="n_estimators", cv=3).fit(Z, y)
    np.testing.assert_array_equal(staged.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    assert staged.best_params_ == plain.best_params_


def test_feature_names_in_is_set_as_grid_search_sets_it():
    """GridSearchCV keeps the refit's feature_names_in_; the staged search left it out, so
    make_paper() of gradient_boosting had none where random_forest's had the names."""
    X, y = noisy_table(60)
    grid = {"estimator__n_estimators": [2, 3]}
    model = reference.gradient_boosting(random_state=0)
    staged = StagedGridSearchCV(model, grid, staged_param="estimator__n_estimators", cv=3).fit(X, y)
    plain = GridSearchCV(model, grid, cv=3).fit(X, y)
    assert staged.feature_names_in_.tolist() == plain.feature_names_in_.tolist() == ["colour", "size", "weight"]
    staged = clone(staged).fit(X.to_numpy(), y)  # no names: no attribute, as GridSearchCV
    assert not hasattr(staged, "feature_names_in_")
    assert not hasattr(GridSearchCV(model, grid, cv=3).fit(X.to_numpy(), y), "feature_names_in_")


def test_sample_weight_and_groups_are_taken_as_grid_search_takes_them():
    """Weights reached the fits but not the fold scores (GridSearchCV weights those too), so
    the scores and choice differed; groups, the splitter's, were passed to the refit's fit,
    which raised a TypeError after the whole search."""
    X, y = noisy_table()
    Z = pd.get_dummies(X).to_numpy(dtype=float)
    weights = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    groups = np.arange(len(y)) % 6
    grid = {"n_estimators": [2, 8, 4], "max_depth": [1, 2]}
    gb = GradientBoostingClassifier(random_state=1)
    for cv, params in [(3, {"sample_weight": weights}), (GroupKFold(3), {"groups": groups})]:
        plain = GridSearchCV(gb, grid, cv=cv).fit(Z, y, **params)
        staged = StagedGridSearchCV(gb, grid, staged_param="n_estimators", cv=cv).fit(Z, y, **params)
        np.testing.assert_array_equal(staged.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
        assert staged.best_params_ == plain.best_params_ and staged.best_score_ == plain.best_score_
        np.testing.assert_array_equal(staged.predict_proba(Z), plain.predict_proba(Z))


def _routed_searches(fit_request: bool, score_request: bool) -> tuple:
    """GridSearchCV and the staged search fitted with weights under metadata routing, the
    estimator requesting them for fit and score as given; and the features they were fit on."""
    X, y = noisy_table()
    Z = pd.get_dummies(X).to_numpy(dtype=float)
    weights = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    grid = {"n_estimators": [2, 8, 4], "max_depth": [1, 2]}
    with sklearn.config_context(enable_metadata_routing=True):
        gb = GradientBoostingClassifier(random_state=1).set_fit_request(sample_weight=fit_request)
        gb.set_score_request(sample_weight=score_request)
        plain = GridSearchCV(gb, grid, cv=3).fit(Z, y, sample_weight=weights)
        staged = StagedGridSearchCV(gb, grid, staged_param="n_estimators", cv=3).fit(Z, y, sample_weight=weights)
    return plain, staged, Z


@pytest.mark.parametrize("score_request", [True, False])
def test_sample_weight_under_metadata_routing_is_scored_as_grid_search_scores_it(score_request):
    """With scikit-learn's metadata routing on, GridSearchCV's default scorer weights the fold
    scores when the estimator's score requests sample_weight; the staged scorer, a plain
    callable, requested nothing, so its scores went unweighted and the choice could differ."""
    plain, staged, _ = _routed_searches(fit_request=True, score_request=score_request)
    np.testing.assert_array_equal(staged.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    assert staged.best_params_ == plain.best_params_ and staged.best_score_ == plain.best_score_


def test_refit_under_metadata_routing_takes_what_fit_requests():
    """Under metadata routing GridSearchCV refits with the metadata the estimator's fit
    requests; the staged search passed every fit parameter to its refit, so weights meant for
    the scores only (set_fit_request(sample_weight=False)) weighted the refit."""
    plain, staged, Z = _routed_searches(fit_request=False, score_request=True)
    assert staged.best_params_ == plain.best_params_
    np.testing.assert_array_equal(staged.predict_proba(Z), plain.predict_proba(Z))


@pytest.mark.parametrize(
    ("model", "grid"),
    [
        (GradientBoostingClassifier(random_state=0, n_iter_no_change=2), {"n_estimators": [5, 200]}),
        (reference.gradient_boosting(random_state=0),
         {"estimator__n_estimators": [5, 200], "estimator__n_iter_no_change": [None, 3]}),
    ],
)
def test_early_stopping_is_named(model, grid):
    """A fit that stopped early failed its fold's scorer, and the search ended in
    "TypeError: 'float' object is not subscriptable" or "KeyError: 'split0_test_stage_5'"."""
    X, y = noisy_table(60)
    Z = pd.get_dummies(X).to_numpy(dtype=float) if isinstance(model, GradientBoostingClassifier) else X
    search = StagedGridSearchCV(model, grid, staged_param=next(iter(grid)), cv=3)
    with pytest.raises(ValueError, match=r"early stopping must be off: got \{'(estimator__)?n_iter_no_change': [23]\}"):
        search.fit(Z, y)


def test_an_n_iter_no_change_that_early_stopping_false_switches_off_is_taken():
    """HistGradientBoosting's default n_iter_no_change=10 stops nothing with early_stopping=False,
    yet it was refused as early stopping (and its advice, None, is no valid value there)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = noisy_table(60)
    Z = pd.get_dummies(X).to_numpy(dtype=float)
    grid = {"max_iter": [2, 6, 4]}
    hgb = HistGradientBoostingClassifier(early_stopping=False, random_state=0)
    plain = GridSearchCV(hgb, grid, cv=3).fit(Z, y)
    staged = StagedGridSearchCV(hgb, grid, staged_param="max_iter", cv=3).fit(Z, y)
    np.testing.assert_array_equal(staged.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    assert staged.best_params_ == plain.best_params_
    for switch in (True, "auto"):
        on = clone(hgb).set_params(early_stopping=switch)
        with pytest.raises(ValueError, match=r"early stopping must be off: got \{'n_iter_no_change': 10\}"):
            StagedGridSearchCV(on, grid, staged_param="max_iter", cv=3).fit(Z, y)
    with pytest.raises(ValueError, match=r"got \{'n_iter_no_change': 10\}"):  # switched on in the grid
        StagedGridSearchCV(HistGradientBoostingClassifier(early_stopping=False), {**grid, "early_stopping": [False, True]},
                           staged_param="max_iter", cv=3).fit(Z, y)
