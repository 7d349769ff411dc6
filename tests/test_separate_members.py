"""Study 60's research-only ensemble of separately trained networks
(benchmarks/separate_members.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tabmoe import TabularMoEClassifier

from .test_research_rules import import_benchmark


def test_members_are_separate_fits_and_probabilities_their_mean(mixed_frame):
    mod = import_benchmark("separate_members")
    X, y = mixed_frame
    params = {"max_epochs": 4, "device": "cpu", "n_jobs": 1}
    ens = mod.SeparateMembersClassifier(params, random_state=5, members=2).fit(X, y)
    alone = TabularMoEClassifier(**params, random_state=5).fit(X, y)
    other = TabularMoEClassifier(**params, random_state=5 + mod.SEED_STRIDE).fit(X, y)
    # member 0 is the plain estimator at the run's seed, member 1 another seed's whole fit
    np.testing.assert_array_equal(ens.estimators_[0].predict_proba(X), alone.predict_proba(X))
    np.testing.assert_allclose(ens.predict_proba(X), (alone.predict_proba(X) + other.predict_proba(X)) / 2)
    assert not np.allclose(alone.predict_proba(X), other.predict_proba(X))
    assert ens.n_iter_ == alone.n_iter_ + other.n_iter_
    np.testing.assert_array_equal(ens.predict(X), ens.classes_[ens.predict_proba(X).argmax(1)])


def test_make_tabmoe_builds_it_and_refuses_bad_values():
    research = import_benchmark("research_models")
    model = research.make_tabmoe({"separate_members": 3, "max_epochs": 2}, 7)
    assert type(model).__name__ == "SeparateMembersClassifier"
    assert (model.members, model.random_state, model.params) == (3, 7, {"max_epochs": 2})
    assert type(research.make_tabmoe({"separate_members": 1}, 0)) is TabularMoEClassifier
    for bad in (0, True, 1.5, "2"):
        with pytest.raises(SystemExit, match="separate_members must be an integer"):
            research.make_tabmoe({"separate_members": bad}, 0)
    with pytest.raises(SystemExit, match="does not combine"):
        research.make_tabmoe({"separate_members": 2, "n_members": 2}, 0)
    with pytest.raises(SystemExit, match="does not combine"):
        research.make_tabmoe({"separate_members": 2, "stop_on": "error"}, 0)
    with pytest.raises(ValueError, match="d_model"):  # research.py's check before any fit
        research.make_tabmoe({"separate_members": 2, "d_model": -1}, 0)._validate_params()
