"""Thermometer ("ordered") embeddings of numeric bins: numeric_embedding="ordered"."""

import numpy as np
import pytest
import torch
from sklearn.base import clone

from tabmoe import TabularMoEClassifier
from tabmoe.nn.network import TabularMoE
from tabmoe.tokenizer import MASK, MISSING, N_SPECIAL

from .numeric_data import mixed_table

FAST = dict(max_epochs=3, random_state=0, device="cpu")


def _model(ordered_columns):
    ids = [N_SPECIAL + 4 * j + np.arange(4) for j in range(3)]
    torch.manual_seed(0)
    ordered = [ids[j] for j in ordered_columns]
    return TabularMoE(N_SPECIAL + 12, ids, d_model=8, n_heads=2, ff_dim=4, ordered_ids=ordered), ids


def test_ordered_rows_are_cumulative_sums_within_each_column():
    model, ids = _model([0, 2])
    weight = model.token_embedding.weight.detach()
    table = model.token_table().detach()
    for j in (0, 2):
        expected = weight[ids[j]].cumsum(0)  # bin k = the sum of the first k + 1 steps
        torch.testing.assert_close(table[ids[j]], expected)
    torch.testing.assert_close(table[ids[1]], weight[ids[1]])  # a categorical column: as is
    for special in (MASK, MISSING):
        torch.testing.assert_close(table[special], weight[special])
    tokens = torch.as_tensor([[ids[0][3], ids[1][2], MISSING], [ids[0][0], MASK, ids[2][1]]])
    torch.testing.assert_close(model.embed(tokens), table[tokens] + model.column_embedding)


def test_ordered_gradients_reach_every_lower_step():
    model, ids = _model([0])
    tokens = torch.as_tensor([[ids[0][2], ids[1][0], ids[2][0]]])
    model.embed(tokens).sum().backward()
    grad = model.token_embedding.weight.grad.abs().sum(1)
    assert (grad[ids[0][:3]] > 0).all() and grad[ids[0][3]] == 0


def test_both_lookups_give_the_same_embeddings_and_gradients():
    """embed() looks up the (V, d) token table once when the batch has at least V tokens,
    else both tables row by row: the same values and gradients."""
    model, ids = _model([0, 2])
    g = torch.Generator().manual_seed(0)
    tokens = torch.stack([torch.as_tensor(i)[torch.randint(4, (8,), generator=g)] for i in ids], 1)  # (8, 3)
    assert tokens.numel() >= model.token_embedding.num_embeddings > 3
    whole = model.embed(tokens)  # one lookup
    whole.square().sum().backward()
    grad_whole = model.token_embedding.weight.grad.clone()
    model.zero_grad()
    rows = torch.cat([model.embed(tokens[i : i + 1]) for i in range(len(tokens))])  # row by row
    rows.square().sum().backward()
    torch.testing.assert_close(whole, rows)
    torch.testing.assert_close(grad_whole, model.token_embedding.weight.grad)


@pytest.mark.parametrize("n_members", [1, 2])
def test_ordered_estimator_fits_saves_and_loads(tmp_path, n_members):
    X, y = mixed_table()
    clf = TabularMoEClassifier(numeric_embedding="ordered", n_members=n_members, **FAST).fit(X, y)
    module = clf.module_ if n_members == 1 else clf.module_.member(0)
    assert module.ordered_ids.numel() == 2 * clf.tokenizer_.n_bins_  # two numeric columns, n_bins_ bins each
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.numeric_embedding == "ordered"
    np.testing.assert_allclose(loaded.predict_proba(X), clf.predict_proba(X), atol=1e-6)
    assert clone(clf).get_params()["numeric_embedding"] == "ordered"


def test_ordered_changes_nothing_without_numeric_columns():
    X, y = mixed_table()
    X = X[["c"]].assign(d=np.where(y == 1, "p", "q"))
    a = TabularMoEClassifier(numeric_embedding="bins", **FAST).fit(X, y)
    b = TabularMoEClassifier(numeric_embedding="ordered", **FAST).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_numeric_embedding_is_validated():
    X, y = mixed_table()
    with pytest.raises(ValueError, match="numeric_embedding"):
        TabularMoEClassifier(numeric_embedding="linear").fit(X, y)


def test_the_fitted_embedding_is_saved_not_the_parameter(tmp_path):
    """set_params after fit changes the next fit, not what save writes (the weights would
    load into the other network without an error)."""
    X, y = mixed_table()
    clf = TabularMoEClassifier(numeric_embedding="bins", **FAST).fit(X, y)
    expected = clf.predict_proba(X)
    clf.set_params(numeric_embedding="ordered")
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.numeric_embedding_ == "bins" and loaded.module_.ordered_ids.numel() == 0
    np.testing.assert_allclose(loaded.predict_proba(X), expected, atol=1e-6)
    assert clf.fit(X, y).numeric_embedding_ == "ordered"


def test_wide_tables_sum_each_column_on_its_own():
    """2,000 numeric columns: bin 0 of the last column is its own row exactly (a running sum
    over all columns minus the earlier ones drifted by 1e-3 in float32)."""
    groups = [N_SPECIAL + 20 * i + np.arange(20) for i in range(2000)]
    model = TabularMoE(N_SPECIAL + 40_000, [np.arange(10)], d_model=8, n_heads=2, ff_dim=4, ordered_ids=groups)
    with torch.no_grad():
        model.token_embedding.weight.uniform_(0.2, 0.4)
    table, weight = model.token_table().detach(), model.token_embedding.weight.detach()
    torch.testing.assert_close(table[groups[-1][0]], weight[groups[-1][0]], rtol=0, atol=0)
    torch.testing.assert_close(table[groups[-1]], weight[groups[-1]].cumsum(0))
