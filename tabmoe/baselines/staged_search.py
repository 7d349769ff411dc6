"""A grid search that scores a boosting model's number-of-stages axis from one fit.

``GradientBoostingClassifier`` with an integer ``random_state`` draws every stage from one
sequential random stream, so the first ``k`` stages of a 200-stage fit *are* the ``k``-stage
model: same trees, same decision values. The paper's GradientBoosting grid
(``n_estimators`` in 50/100/200 × 3 learning rates × 3 depths, 5 folds) can therefore score
its ``n_estimators`` axis with ``staged_predict`` from one 200-stage fit per other
candidate: 9 × 200 instead of 9 × 350 trees per fold (57 %), with the same fold scores, the
same choice (ties broken by grid order, as in ``GridSearchCV``) and the same refit.
``tests/test_staged_search.py`` checks the equality against ``GridSearchCV``.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn import get_config
from sklearn.base import clone
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, ParameterGrid
from sklearn.utils.metadata_routing import get_routing_for_object, process_routing


class _StagedAccuracies:
    """Scorer ``(estimator, X, y, sample_weight=None) -> {"stage_k": accuracy}``: the
    (weighted) accuracy of the model cut after each of ``stages`` stages, from one pass of
    ``staged_predict``. It takes ``sample_weight`` as the classifier's ``score`` does, so that
    ``GridSearchCV`` weights the fold scores alike. Under scikit-learn's metadata routing it
    requests what ``estimator``'s ``score`` requests, as ``GridSearchCV``'s default scorer
    does (a plain callable requests nothing: its fold scores went unweighted there)."""

    def __init__(self, stages: list[int], estimator: Any = None):
        self.stages = sorted(set(stages))
        self.estimator = estimator

    def get_metadata_routing(self) -> Any:
        """``estimator``'s requests (``score``'s reach the scorer), as ``_PassthroughScorer``'s."""
        return get_routing_for_object(self.estimator)

    def __call__(self, estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> dict[str, float]:
        inner = getattr(estimator, "estimator_", None)
        if inner is not None and not hasattr(inner, "staged_predict"):
            # EncodedClassifier's class prior (no feature, or one class of non-zero weight):
            # its one stage is what every stage predicts
            accuracy = float(accuracy_score(y, estimator.predict(X), sample_weight=sample_weight))
            return {f"stage_{k}": accuracy for k in self.stages}
        scores = {}
        for done, predicted in enumerate(estimator.staged_predict(X), start=1):
            if done in self.stages:
                scores[f"stage_{done}"] = float(accuracy_score(y, predicted, sample_weight=sample_weight))
            if done == self.stages[-1]:
                return scores
        raise ValueError(f"the estimator has fewer than {self.stages[-1]} stages")


class StagedGridSearchCV(GridSearchCV):
    """:class:`~sklearn.model_selection.GridSearchCV` (accuracy, refit) that scores the
    ``staged_param`` axis of ``param_grid`` from one fit at its largest value.

    Valid only for estimators whose ``k``-stage model is the prefix of a longer fit and
    that have ``staged_predict``: ``GradientBoostingClassifier`` with an integer (or fixed)
    ``random_state`` and no early stopping (``n_iter_no_change=None``, or an estimator's
    ``early_stopping=False``; anything else is refused before any fit), alone or inside a
    wrapper such as :class:`~tabmoe.baselines.reference.EncodedClassifier`.

    Parameters
    ----------
    estimator, param_grid, cv, n_jobs, error_score :
        As in ``GridSearchCV``; ``param_grid`` is one dict. Scoring is accuracy (the
        classifier's ``score``) and the best candidate is refitted on all rows.
    staged_param : str
        The key of ``param_grid`` that counts stages, e.g. ``"estimator__n_estimators"``.

    Attributes
    ----------
    cv_results_, best_index_, best_params_, best_score_, best_estimator_, refit_time_,
    n_splits_, scorer_, multimetric_, feature_names_in_ :
        As in ``GridSearchCV``, one row per candidate of the full grid in
        ``ParameterGrid`` order. ``mean_fit_time`` is the time of the shared fit that
        scored the candidate.
    """

    def __init__(
        self,
        estimator: Any,
        param_grid: dict[str, list],
        *,
        staged_param: str,
        cv: Any = None,
        n_jobs: int | None = None,
        error_score: Any = np.nan,
    ):
        super().__init__(estimator, param_grid, cv=cv, n_jobs=n_jobs, error_score=error_score)
        self.staged_param = staged_param

    def _stages(self) -> list[int]:
        if not isinstance(self.param_grid, Mapping):
            raise ValueError(
                f"StagedGridSearchCV takes one param_grid dict, got {type(self.param_grid).__name__}"
            )
        if self.staged_param not in self.param_grid:
            raise ValueError(
                f"staged_param={self.staged_param!r} is not a key of param_grid "
                f"({sorted(self.param_grid)})"
            )
        early = self._early_stopping()
        if early:  # every fold's scorer failed alike; GridSearchCV then raised an obscure TypeError
            raise ValueError(
                f"StagedGridSearchCV scores the stages of one full fit, so early stopping must be off: "
                f"got {early} (set it to None, or early_stopping=False where the estimator has it)"
            )
        stages = list(self.param_grid[self.staged_param])
        bad = [s for s in stages if not isinstance(s, numbers.Integral) or isinstance(s, bool) or s < 1]
        if not stages or bad:
            raise ValueError(
                f"param_grid[{self.staged_param!r}] must hold positive integers, got {stages}"
            )
        return stages

    def _early_stopping(self) -> dict[str, Any]:
        """The ``n_iter_no_change`` settings (of the estimator or the grid) that turn early
        stopping on: not None, unless the same estimator's ``early_stopping`` is False
        (HistGradientBoosting's default ``n_iter_no_change=10`` stops nothing then)."""
        params = self.estimator.get_params(deep=True)

        def values(key: str) -> list:
            return list(self.param_grid[key]) if key in self.param_grid else [params[key]] if key in params else []

        early = {}
        for key in [*params, *(k for k in self.param_grid if k not in params)]:
            if key.split("__")[-1] != "n_iter_no_change":
                continue
            switch = values(key.removesuffix("n_iter_no_change") + "early_stopping")
            if switch and all(v is False for v in switch):
                continue
            on = [v for v in values(key) if v is not None]
            if on:
                early[key] = on[-1]
        return early

    def fit(self, X: Any, y: Any = None, **params: Any) -> StagedGridSearchCV:
        """Score every candidate on ``cv``'s folds, then refit the best on ``X``, ``y``.

        ``params`` are taken as ``GridSearchCV`` takes them: ``sample_weight`` weights the
        fits and the fold scores, ``groups`` go to the splitter only, the rest to the fits."""
        stages = self._stages()
        longest = max(stages)
        shared = GridSearchCV(
            self.estimator,
            {**self.param_grid, self.staged_param: [longest]},
            scoring=_StagedAccuracies(stages, self.estimator),
            refit=False,
            cv=self.cv,
            n_jobs=self.n_jobs,
            error_score=self.error_score,
        ).fit(X, y, **params)
        shared_results = shared.cv_results_
        n_splits = shared.n_splits_

        candidates = list(ParameterGrid(self.param_grid))
        shared_index = {
            _key(p, self.staged_param): i for i, p in enumerate(shared_results["params"])
        }
        rows = [shared_index[_key(p, self.staged_param)] for p in candidates]
        # (n_candidates, n_splits): candidate c's fold scores, read off its shared fit.
        scores = np.array(
            [
                [shared_results[f"split{s}_test_stage_{p[self.staged_param]}"][row] for s in range(n_splits)]
                for p, row in zip(candidates, rows, strict=True)
            ]
        )
        self.cv_results_ = _results(candidates, scores, shared_results, rows)
        self.n_splits_ = n_splits
        self.multimetric_ = False
        self.scorer_ = _accuracy
        self.best_index_ = int(self.cv_results_["rank_test_score"].argmin())
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.best_params_ = candidates[self.best_index_]

        started = time.perf_counter()
        self.best_estimator_ = clone(self.estimator).set_params(**clone(self.best_params_, safe=False))
        # groups are the splitter's (GridSearchCV routes them there), not the estimator's; under
        # metadata routing the refit takes what the estimator's fit requests, as GridSearchCV's
        fit_params = {k: v for k, v in params.items() if k != "groups"}
        if get_config()["enable_metadata_routing"]:
            fit_params = process_routing(self, "fit", **params).estimator.fit
        self.best_estimator_.fit(X, y, **fit_params)
        self.refit_time_ = time.perf_counter() - started
        if hasattr(self.best_estimator_, "feature_names_in_"):  # as GridSearchCV sets it
            self.feature_names_in_ = self.best_estimator_.feature_names_in_
        return self


def _accuracy(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
    """The classifier's own score (accuracy), as ``GridSearchCV`` uses with ``scoring=None``."""
    return float(estimator.score(X, y, sample_weight=sample_weight))


def _key(params: dict, staged_param: str) -> tuple:
    """A candidate's identity without its staged parameter (hashable, order-free)."""
    return tuple(sorted((k, repr(v)) for k, v in params.items() if k != staged_param))


def _results(candidates: list[dict], scores: np.ndarray, shared: dict, rows: list[int]) -> dict:
    """``cv_results_`` in ``GridSearchCV``'s layout (mean, std and rank as its ``_store``)."""
    results: dict[str, Any] = {}
    for name in ("fit_time", "score_time"):
        for stat in ("mean", "std"):
            results[f"{stat}_{name}"] = np.asarray(shared[f"{stat}_{name}"])[rows]
    for name in candidates[0]:
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=False)
        column[:] = [p[name] for p in candidates]
        results[f"param_{name}"] = column
    results["params"] = candidates
    for s in range(scores.shape[1]):
        results[f"split{s}_test_score"] = scores[:, s]
    means = scores.mean(axis=1)
    results["mean_test_score"] = means
    results["std_test_score"] = np.sqrt(((scores - means[:, None]) ** 2).mean(axis=1))
    if np.isnan(means).all():
        results["rank_test_score"] = np.ones(len(means), dtype=np.int32)
    else:
        filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
        results["rank_test_score"] = rankdata(-filled, method="min").astype(np.int32)
    return results
