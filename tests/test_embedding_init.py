"""Study 56's research-only network (benchmarks/embedding_init.py): token embeddings drawn
on a larger scale, everything else as the defaults draw it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe import TabularMoEClassifier

from .test_research_rules import import_benchmark

SMALL = {"max_epochs": 1, "d_model": 8, "n_heads": 2, "ff_dim": 8}


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


def initial_state(model, X, y) -> dict:
    """The network's parameters as ``_initialize_module`` returned them, then fit."""
    original = model._initialize_module
    kept = {}

    def keep():
        net = original()
        kept.update({k: v.detach().clone() for k, v in net.state_dict().items()})
        return net

    model._initialize_module = keep
    model.fit(X, y)
    return kept


def test_token_embeddings_are_the_defaults_draws_scaled(research):
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pqr"), 150), "c": rng.randn(150)})
    y = rng.randint(0, 2, 150)
    plain = initial_state(TabularMoEClassifier(**SMALL, random_state=0), X, y)
    scaled_model = research.make_tabmoe({**SMALL, "embedding_init": 0.125}, 0)
    scaled = initial_state(scaled_model, X, y)
    assert set(plain) == set(scaled)
    for name in plain:
        if name == "token_embedding.weight":
            torch.testing.assert_close(scaled[name], plain[name] * 2.5)
            assert scaled[name].abs().max() <= 0.125
        else:
            assert torch.equal(scaled[name], plain[name]), name
    # Its thermometer tokens (the numeric column's) scale with the rows they sum.
    assert scaled_model.predict_proba(X).shape == (150, 2)


def test_make_tabmoe_checks_embedding_init(research):
    model = research.make_tabmoe({"embedding_init": 0.25}, 3)
    assert type(model).__name__ == "ScaledInitClassifier" and model.embedding_init == 0.25
    for bad in ({"embedding_init": 0}, {"embedding_init": 0.1, "n_members": 2},
                {"embedding_init": 0.1, "tie_heads": "all"}):
        with pytest.raises(SystemExit, match="embedding_init needs"):
            research.make_tabmoe(bad, 0)
