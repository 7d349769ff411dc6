"""Quick-to-fit instances of every baseline, for the parametrised contract tests.

Each entry: name -> callable returning a fresh classifier. The shared bad-input tests run
over all of them (and ``tests/classifiers.py`` adds them to the project-wide list).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from sklearn.base import ClassifierMixin

from tabmoe.baselines import (
    FTTransformerClassifier,
    TabMClassifier,
    TabNetClassifier,
    TabTransformerClassifier,
    reference,
)

BASELINE_FACTORIES: dict[str, Callable[[], ClassifierMixin]] = {
    "ft_transformer": lambda: FTTransformerClassifier(
        n_blocks=1,
        d_block=16,
        attention_n_heads=2,
        max_epochs=2,
        batch_size=1024,
        random_state=0,
        device="cpu",
    ),
    "tab_transformer": lambda: TabTransformerClassifier(
        dim=16, depth=1, heads=2, max_epochs=2, batch_size=1024, random_state=0, device="cpu"
    ),
    "tabnet": lambda: TabNetClassifier(max_epochs=2, random_state=0, device="cpu"),
    "tabm": lambda: TabMClassifier(
        k=4, n_blocks=1, d_block=16, max_epochs=2, batch_size=1024, random_state=0, device="cpu"
    ),
    "logistic_regression": lambda: reference.logistic_regression(),
    "random_forest": lambda: reference.random_forest(n_estimators=10, max_depth=8, random_state=0),
    "gradient_boosting": lambda: reference.gradient_boosting(n_estimators=10, random_state=0),
    "hist_gradient_boosting": lambda: reference.hist_gradient_boosting(max_iter=10, random_state=0),
    "mlp": lambda: reference.mlp(
        hidden_layer_sizes=(16,), max_iter=3, batch_size=1000, random_state=0
    ),
}
if importlib.util.find_spec("xgboost") is not None:
    BASELINE_FACTORIES["xgboost"] = lambda: reference.xgboost(
        n_estimators=10, n_jobs=1, random_state=0
    )
if importlib.util.find_spec("catboost") is not None:
    BASELINE_FACTORIES["catboost"] = lambda: reference.catboost(
        iterations=10, thread_count=1, random_state=0
    )
if importlib.util.find_spec("lightgbm") is not None:
    BASELINE_FACTORIES["lightgbm"] = lambda: reference.lightgbm(
        n_estimators=10, n_jobs=1, random_state=0
    )
