"""Research-only (study 60): an ensemble of separately trained networks.

``n_members=M`` trains M networks at once under ``torch.func.vmap`` and stops them together
on the sum of their hold-out losses, so no member keeps its own best epoch (study 35: two
members -0.0008 ID validation). Here each member is a whole ``TabularMoEClassifier`` fit of
its own (its own hold-out, early stopping and best epoch, as a deep ensemble's members are
trained); prediction averages the members' class probabilities. Member 0 is the plain
estimator at the run's seed, so the pair with the defaults isolates what the other members
add.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from tabmoe import TabularMoEClassifier

#: Member m > 0 is fitted with ``random_state = seed + SEED_STRIDE * m``: distinct from every
#: seed a study runs (0-14) and from the other members'.
SEED_STRIDE = 7919


class SeparateMembersClassifier(ClassifierMixin, BaseEstimator):
    """``members`` separately fitted ``TabularMoEClassifier(**params)``; probabilities averaged."""

    def __init__(self, params: dict, random_state: int = 0, members: int = 2):
        self.params = params
        self.random_state = random_state
        self.members = members

    def _validate_params(self) -> None:
        """research.py's check before any fit: the members' parameters, as their fits check them."""
        member = TabularMoEClassifier(**self.params)
        member._validate_params()
        member._check_params()

    def fit(self, X, y):
        self.estimators_ = [
            TabularMoEClassifier(**self.params, random_state=self.random_state + SEED_STRIDE * m).fit(X, y)
            for m in range(self.members)
        ]
        self.classes_ = self.estimators_[0].classes_
        for est in self.estimators_[1:]:  # the same labels: every member saw the same rows
            if not np.array_equal(est.classes_, self.classes_):
                raise RuntimeError("the members' classes differ")
        self.n_iter_ = sum(est.n_iter_ for est in self.estimators_)  # the epochs the fit cost
        self.best_epoch_ = self.estimators_[0].best_epoch_
        return self

    def predict_proba(self, X) -> np.ndarray:
        return np.mean([est.predict_proba(X) for est in self.estimators_], axis=0)

    def predict(self, X) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
