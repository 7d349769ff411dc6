"""Classifier factories shared by the parametrised contract tests (bad input, ...).

Each entry: name -> callable returning a fresh, quick-to-fit classifier. Baselines add
themselves here so that every model meets the same contract.
"""

from __future__ import annotations

from collections.abc import Callable

from sklearn.base import ClassifierMixin

from tabmoe import TabularMoEClassifier

from .baseline_factories import BASELINE_FACTORIES

CLASSIFIER_FACTORIES: dict[str, Callable[[], ClassifierMixin]] = {
    "tabmoe": lambda: TabularMoEClassifier(max_epochs=3, random_state=0, device="cpu"),
    **BASELINE_FACTORIES,
}
