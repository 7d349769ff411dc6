"""The gradient-boosting references (CatBoost, LightGBM, XGBoost) behind EncodedClassifier:
what each library does differently, and what the wrapper makes of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from tabmoe.baselines import reference


@pytest.fixture(autouse=True)
def one_thread():
    with threadpool_limits(1):
        yield


def table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("pqr"), n)})
    return X, np.where(X["x"] > 0, "yes", "no")


@pytest.mark.parametrize(
    "params",
    [{"class_weights": [1.0, 2.0]}, {"custom_metric": ["AUC"]}, {"ignored_features": [0]}],
    ids=["class_weights", "custom_metric", "ignored_features"],
)
def test_catboost_with_a_list_parameter_clones_and_fits(params):
    # CatBoost's get_params returns deep copies, which clone took for a constructor that
    # changed them: RuntimeError "Cannot clone object" at fit, clone and cross-validation
    pytest.importorskip("catboost")
    X, y = table()
    clf = reference.catboost(iterations=5, thread_count=1, **params)
    copied = clone(clf)
    assert copied.estimator is not clf.estimator
    assert copied.estimator.get_params() == clf.estimator.get_params()
    fitted = copied.fit(X, y)
    assert fitted.predict_proba(X).shape == (len(X), 2)
    assert not clf.estimator.is_fitted()  # the template is left unfitted
