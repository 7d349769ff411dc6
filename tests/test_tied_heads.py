"""Study 54's research-only network (benchmarks/tied_heads.py): heads tied to the input
embeddings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe import TabularMoEClassifier

from .test_research_rules import import_benchmark

SMALL = {"max_epochs": 3, "d_model": 8, "n_heads": 2, "ff_dim": 8}


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


@pytest.fixture(scope="module")
def table():
    rng = np.random.RandomState(0)
    n = 200
    y = rng.randint(0, 3, n)
    X = pd.DataFrame({
        "a": pd.Categorical(np.where(rng.rand(n) < 0.8, y, rng.randint(0, 3, n)).astype(str)),
        "b": pd.Categorical(rng.choice(list("xyz"), n)),
        "c": rng.randn(n) + y,  # numeric: thermometer tokens
    })
    return X, y


@pytest.mark.parametrize("mode", ["all", "features"])
def test_heads_read_the_token_table(research, table, mode):
    X, y = table
    model = research.make_tabmoe({**SMALL, "tie_heads": mode}, 0).fit(X, y)
    net = model.module_
    names = {name for name, _ in net.named_parameters()}
    assert "heads.weight" not in names
    assert ("heads.label_weight" in names) == (mode == "features")
    weight, table_ = net.heads.weight, net.token_table()
    features = torch.ones(len(table_), dtype=torch.bool)
    features[net.label_ids] = False
    # Thermometer rows (the numeric column's bins) are the table's sums, not raw steps.
    assert net.ordered_ids.numel() > 0
    assert torch.equal(weight[features], table_[features])
    label_rows = weight[net.label_ids]
    if mode == "all":
        assert torch.equal(label_rows, table_[net.label_ids])
    else:
        assert torch.equal(label_rows, net.heads.label_weight)
        assert not torch.equal(label_rows, table_[net.label_ids])
    # A head's loss trains the input embeddings.
    net.zero_grad()
    h = torch.randn(4, net.n_columns, net.token_embedding.embedding_dim)
    targets = torch.as_tensor(model._transform(X.iloc[:4]), dtype=torch.long)
    targets = torch.cat([targets, net.label_ids[:1].expand(4, 1)], 1)
    nll, valid = net.heads.nll(h, targets)
    (nll * valid).sum().backward()
    assert net.token_embedding.weight.grad.abs().sum() > 0
    assert model.predict_proba(X).shape == (len(X), 3)


def test_tied_network_starts_from_the_defaults_draws(research, table):
    X, y = table
    plain = TabularMoEClassifier(**{**SMALL, "max_epochs": 1}, random_state=0)
    tied = research.make_tabmoe({**SMALL, "max_epochs": 1, "tie_heads": "all"}, 0)
    for model in (plain, tied):
        model._initial = None
        original = model._initialize_module

        def keep(model=model, original=original):
            net = original()
            model._initial = {k: v.clone() for k, v in net.token_embedding.state_dict().items()}
            return net

        model._initialize_module = keep
        model.fit(X, y)
    assert torch.equal(plain._initial["weight"], tied._initial["weight"])


def test_make_tabmoe_checks_tie_heads(research):
    assert type(research.make_tabmoe({"tie_heads": "none"}, 0)) is TabularMoEClassifier
    with pytest.raises(SystemExit, match="tie_heads must be one of"):
        research.make_tabmoe({"tie_heads": "label"}, 0)
    for other in ({"row_weight": 0.1}, {"n_members": 2}, {"embedding_weight_decay": 1.0}):
        with pytest.raises(SystemExit, match="tie_heads"):
            research.make_tabmoe({"tie_heads": "all", **other}, 0)
