"""Study 68's research-only numeric embedding (benchmarks/periodic.py): periodic embeddings of
each numeric value's normal quantile."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm

from tabmoe.tokenizer import MASK

from .test_research_rules import import_benchmark

SMALL = {"d_model": 8, "n_heads": 2, "ff_dim": 8}


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


@pytest.fixture(scope="module")
def table():
    rng = np.random.RandomState(0)
    n = 160
    y = rng.randint(0, 2, n)
    X = pd.DataFrame({
        "a": pd.Categorical(np.where(rng.rand(n) < 0.8, y, 1 - y).astype(str)),
        "b": rng.randn(n) + y,
        "c": rng.choice(list("xyz"), n),
        "d": rng.rand(n) * 10 - 3 * y,
    })
    X.loc[::17, "d"] = np.nan  # MISSING keeps its token
    return X, y


def test_numeric_cells_enter_as_periodic_embeddings_of_their_quantile(research, table):
    X, y = table
    model = research.make_tabmoe({**SMALL, "max_epochs": 2, "periodic": 0.5}, 0).fit(X, y)
    net, tok = model.module_, model.tokenizer_
    assert type(net).__name__ == "PeriodicMoE" and model.frequency_init_scale == 0.5
    tokens = model._transform(X)  # (n, 4)
    fraction = tok.bin_positions(X)
    t = torch.as_tensor(np.pad(tokens, ((0, 0), (0, 1)), constant_values=MASK), dtype=torch.long)
    f = torch.as_tensor(np.pad(fraction, ((0, 0), (0, 1)), constant_values=1.0))
    t[:5, 1] = MASK  # a masked numeric cell: MASK's token
    with torch.no_grad():
        x = net.embed(t, f)
        col, table_ = net.column_embedding, net.token_embedding.weight
        for k, j in enumerate([1, 3]):  # the numeric columns, in order
            ids = tok.output_token_ids(j)  # its bins' tokens, in value order
            bin_ = np.searchsorted(ids, tokens[:, j])
            numeric = np.isin(tokens[:, j], ids) & (np.arange(len(X)) >= (5 if j == 1 else 0))
            z = norm.ppf(np.clip((bin_ + fraction[:, j]) / len(ids), 1e-3, 1 - 1e-3))
            expected = net.periodic(torch.as_tensor(z, dtype=torch.float32)[:, None].expand(-1, 2))[:, k] + col[j]
            torch.testing.assert_close(x[numeric, j], expected[numeric], rtol=1e-4, atol=1e-5)
            other = ~numeric  # MASK, MISSING: their own rows
            assert other.sum() >= 5
            torch.testing.assert_close(x[other, j], table_[t[other, j]] + col[j])
        for j in (0, 2):  # categorical columns: their tokens
            torch.testing.assert_close(x[:, j], table_[t[:, j]] + col[j])


def test_the_classifier_trains_the_periodic_embeddings(research, table):
    X, y = table
    model = research.make_tabmoe({**SMALL, "max_epochs": 30, "early_stopping": False, "periodic": 0.01}, 0).fit(X, y)
    short = research.make_tabmoe({**SMALL, "max_epochs": 1, "early_stopping": False, "periodic": 0.01}, 0).fit(X, y)
    # the same draws (one seed), then 1 and 30 epochs: the optimiser holds the new parameters
    for a, b in zip(model.module_.periodic.parameters(), short.module_.periodic.parameters(), strict=True):
        assert not torch.allclose(a, b)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    assert (model.predict(X) == y).mean() > 0.7
    for bad in ({"periodic": "1"}, {"periodic": 0.1, "n_members": 2}, {"periodic": 0.1, "numeric_embedding": "bins"},
                {"periodic": 0.1, "null_key": True}):
        with pytest.raises(SystemExit, match="periodic"):
            research.make_tabmoe({**SMALL, **bad}, 0)
