"""Study 72's research-only initialisation (benchmarks/prior_bias.py): output heads' biases
at the training rows' log frequencies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from .test_research_rules import import_benchmark

SMALL = {"d_model": 8, "n_heads": 2, "ff_dim": 8, "early_stopping": False, "max_epochs": 1}


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")  # puts benchmarks/ on the path


def table(n: int = 120):
    rng = np.random.RandomState(0)
    y = np.where(rng.rand(n) < 0.75, "yes", "no")
    X = pd.DataFrame({"a": pd.Categorical(rng.choice(["p", "q", "r"], n, p=[0.6, 0.3, 0.1])),
                      "b": rng.randn(n)})
    return X, y


def test_log_frequencies_are_add_one_smoothed_and_weighted(research):
    prior_bias = import_benchmark("prior_bias")
    tokens = np.array([5, 5, 6, 9])  # 9: not among the ids (MISSING), not counted
    got = prior_bias.log_frequencies(tokens, np.array([1.0, 1.0, 2.0, 1.0]), np.array([5, 6, 7]))
    # weights scaled to sum to 4: 0.8, 0.8, 1.6, (0.8); counts 1.6, 1.6, 0 of 3.2
    np.testing.assert_allclose(np.exp(got), np.array([2.6, 2.6, 1.0]) / 6.2)


@pytest.mark.parametrize("prior", ["label", "all"])
def test_the_heads_start_at_the_training_rows_frequencies(research, prior):
    X, y = table()
    model = research.make_tabmoe({**SMALL, "prior_bias": prior}, 0)
    model.fit(X, y)
    # the network as built, before any step: rebuilt under one seed from the fit's rows
    torch.manual_seed(0)
    net = model._initialize_module()
    heads = net.heads.bias.detach().numpy()
    label_ids = model.label_token_ids_
    expected = np.log((np.array([(y == c).sum() for c in model.classes_]) + 1.0) / (len(y) + 2))
    np.testing.assert_allclose(heads[label_ids], expected, rtol=1e-5)
    a_ids = model.tokenizer_.output_token_ids(0)
    if prior == "all":
        assert np.all(heads[a_ids] < 0) and np.ptp(heads[a_ids]) > 0.5  # p, q, r at 0.6 / 0.3 / 0.1
    else:
        np.testing.assert_array_equal(heads[a_ids], 0.0)
    plain = research.make_tabmoe(SMALL, 0).fit(X, y)
    torch.manual_seed(0)
    # every other weight is the defaults' under the same seed: no random draw was taken
    other = plain._initialize_module().state_dict()
    assert other.keys() == net.state_dict().keys()
    for name, p in net.state_dict().items():
        assert torch.equal(p, other[name]) == (name != "heads.bias"), name


def test_bad_prior_bias_settings_are_named(research):
    for bad in ({"prior_bias": "labels"}, {"prior_bias": "label", "n_members": 2},
                {"prior_bias": "all", "vocabulary": "shared"}, {"prior_bias": "label", "swap_rate": 0.1}):
        with pytest.raises(SystemExit, match="prior_bias"):
            research.make_tabmoe({**SMALL, **bad}, 0)
