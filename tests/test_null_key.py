"""Study 67's research-only network (benchmarks/null_key.py): a learned null token in every
row's keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe.nn.network import MultiHeadAttention

from .test_research_rules import import_benchmark

SMALL = {"max_epochs": 3, "d_model": 8, "n_heads": 2, "ff_dim": 8}


@pytest.fixture(scope="module")
def null_key():
    import_benchmark("research")  # puts benchmarks/ on the path
    return import_benchmark("null_key")


def attention(null_key, seed: int = 0) -> MultiHeadAttention:
    torch.manual_seed(seed)
    att = MultiHeadAttention(d_model=8, n_heads=2, key_dim=4)
    for lin in (att.query, att.key, att.value, att.output):  # biases off 0, as after training
        torch.nn.init.normal_(lin.bias, std=0.3)
    plain = MultiHeadAttention(8, 2, 4)
    plain.load_state_dict(att.state_dict())
    net = torch.nn.Module()
    net.blocks = torch.nn.ModuleList([torch.nn.Module()])
    net.blocks[0].attention = att
    null_key.add_null_key(net)
    with torch.no_grad():
        att.null.normal_()
    return att, plain


def test_forward_is_attention_over_the_row_and_the_null_token(null_key):
    att, plain = attention(null_key)
    x = torch.randn(5, 6, 8)
    attend = torch.rand(5, 6) > 0.3
    attend[:, 0] = True
    q = torch.randn(5, 2, 8)
    with_null = torch.cat([x, att.null.expand(5, 1, 8)], 1)  # the null token as a 7th key
    attend_null = torch.cat([attend, torch.ones(5, 1, dtype=torch.bool)], 1)
    torch.testing.assert_close(att(q, x, attend), plain(q, with_null, attend_null))
    assert not torch.allclose(att(q, x, attend), plain(q, x, attend))  # the null slot counts
    gates = att.weights(q, x, attend)  # the columns' gates: the first six of seven slots
    torch.testing.assert_close(gates, plain.weights(q, with_null, attend_null)[..., :6])
    assert (gates.sum(-1) < 1).all()


@pytest.mark.parametrize("query", [None, [4, 1]])
def test_forward_loo_is_forward_on_each_masked_copy(null_key, query):
    att, _ = attention(null_key, 1)
    x = torch.randn(3, 5, 8)
    x_mask = torch.randn(5, 8)
    attend = torch.ones(3, 5, dtype=torch.bool)
    attend[0, 2] = False
    q = None if query is None else torch.tensor(query)
    out = att.forward_loo(x, x_mask, attend, q)
    for n, i in enumerate(range(5) if query is None else query):
        copy = x.clone()
        copy[:, i] = x_mask[i]
        a = attend.clone()
        a[:, i] = True  # the masked position is always attended
        torch.testing.assert_close(out[:, n], att(x_mask[i].expand(3, 1, 8), copy, a)[:, 0])


def test_the_classifier_trains_the_null_token_and_refuses_what_it_does_not_cover(null_key):
    research = import_benchmark("research")
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, 150)
    X = pd.DataFrame({"a": pd.Categorical(np.where(rng.rand(150) < 0.8, y, 1 - y).astype(str)),
                      "b": rng.randn(150) + y})
    model = research.make_tabmoe({**SMALL, "max_epochs": 30, "null_key": True}, 0)
    assert isinstance(model, null_key.NullKeyClassifier)
    model.fit(X, y)
    null = model.module_.blocks[0].attention.null
    assert null.abs().sum() > 0  # started at 0, trained
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    assert (model.predict(X) == y).mean() > 0.7
    for bad in ({"null_key": "True"}, {"null_key": True, "n_members": 2}, {"null_key": True, "gate": "tanhmax"},
                {"null_key": True, "swap_rate": 0.1}):
        with pytest.raises(SystemExit, match="null_key"):
            research.make_tabmoe({**SMALL, **bad}, 0)
