"""The one-pass leave-one-out form equals the L materialised copies."""

import numpy as np
import pytest
import torch

from tabmoe.nn.network import TabularMoE
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.tokenizer import MASK, MISSING, N_SPECIAL


def make_model(n_columns, n_heads, d_model=20, block="transformer", gate="softmax", n_layers=1, vocab=6):
    ids = [N_SPECIAL + vocab * j + np.arange(vocab) for j in range(n_columns)]
    torch.manual_seed(n_columns * 10 + n_heads)
    model = TabularMoE(N_SPECIAL + vocab * n_columns, ids, d_model=d_model, n_heads=n_heads,
                       ff_dim=5, n_layers=n_layers, block=block, gate=gate)
    return model.eval(), ids


def random_tokens(ids, n_rows, seed=0):
    g = torch.Generator().manual_seed(seed)
    cols = [torch.as_tensor(i)[torch.randint(len(i), (n_rows,), generator=g)] for i in ids]
    return torch.stack(cols, dim=1)


def all_logits(model, hidden, ids):
    return torch.cat([model.heads.column_logits(hidden[:, j], torch.as_tensor(i))
                      for j, i in enumerate(ids)], dim=1)


@pytest.mark.parametrize("n_columns", [2, 5, 9, 17])
@pytest.mark.parametrize("n_heads", [1, 4])
@pytest.mark.parametrize("block", ["transformer", "attention"])
@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
def test_one_pass_logits_equal_copies(n_columns, n_heads, block, gate):
    model, ids = make_model(n_columns, n_heads, block=block, gate=gate)
    tokens = random_tokens(ids, 32)
    with torch.no_grad():
        one = all_logits(model, model.hidden_loo(tokens), ids)
        ref = all_logits(model, model.hidden_copies(tokens), ids)
    assert (one - ref).abs().max().item() <= 1e-5


def test_one_pass_gradients_equal_copies():
    model, ids = make_model(7, 5)
    tokens = random_tokens(ids, 16)
    batch = {"tokens": tokens, "weight": torch.ones(16)}
    grads = {}
    for masking in ("leave_one_out", "copies"):
        model.zero_grad()
        s, w = MaskedFeatureObjective(masking)(model, batch)
        (s / w).backward()
        grads[masking] = torch.cat([p.grad.flatten() for p in model.parameters()])
    assert (grads["leave_one_out"] - grads["copies"]).abs().max().item() <= 1e-5


def test_one_pass_with_absent_columns_equals_copies():
    model, ids = make_model(6, 2)
    tokens = random_tokens(ids, 8)
    attend = torch.ones(8, 6, dtype=torch.bool)
    attend[0, 1] = attend[3, 2] = attend[5, 0] = False
    with torch.no_grad():
        one = model.hidden_loo(tokens, attend)
        ref = model.hidden_copies(tokens, attend)
    keep = attend.clone()  # outputs at absent positions are not used
    assert (one - ref)[keep].abs().max().item() <= 1e-5


def test_label_logits_mask_label_and_match_copies():
    model, ids = make_model(5, 5)
    tokens = random_tokens(ids, 16)
    with torch.no_grad():
        from_label_query = model.label_logits(tokens)
        from_features_only = model.label_logits(tokens[:, :-1])
        ref = model.heads.column_logits(model.hidden_copies(tokens)[:, -1], model.label_ids)
    assert torch.equal(from_label_query, from_features_only)
    assert (from_label_query - ref).abs().max().item() <= 1e-5


def test_deep_model_last_layer_query_only_matches_full_forward():
    model, ids = make_model(6, 2, n_layers=3)
    tokens = random_tokens(ids, 8)
    tokens[:, -1] = MASK
    with torch.no_grad():
        full = model.hidden(tokens)[:, -1]
        fast = model.hidden(tokens, query=torch.tensor([5]))[:, 0]
    assert (full - fast).abs().max().item() <= 1e-5
    with pytest.raises(ValueError, match="n_layers=1"):
        model.hidden_loo(tokens)


def test_nll_ignores_missing_targets_and_matches_cross_entropy():
    model, ids = make_model(3, 1)
    tokens = random_tokens(ids, 4)
    tokens[0, 1] = MISSING
    h = torch.randn(4, 3, 20)
    nll, valid = model.heads.nll(h, tokens)
    assert not valid[0, 1] and nll[0, 1] == 0 and valid.sum() == 11
    j, i = 2, 3
    logits = model.heads.column_logits(h[i, j][None], torch.as_tensor(ids[j]))
    target = int(tokens[i, j]) - int(ids[j][0])
    expected = torch.nn.functional.cross_entropy(logits, torch.tensor([target]))
    assert torch.allclose(nll[i, j], expected, atol=1e-6)


def test_random_masking_scores_label_always():
    model, ids = make_model(4, 2, n_layers=2)
    model.train()
    tokens = random_tokens(ids, 32)
    s, w = MaskedFeatureObjective("random", mask_rate=0.0)(model, {"tokens": tokens, "weight": torch.ones(32)})
    assert w.item() == 32  # only the label of each row is scored
    s.backward()


@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
def test_one_pass_query_subset_equals_full_at_those_positions(gate):
    model, ids = make_model(9, 4, gate=gate)
    tokens = random_tokens(ids, 16)
    attend = torch.ones(16, 9, dtype=torch.bool)
    attend[2, 3] = attend[7, 0] = False
    query = torch.tensor([0, 3, 4, 8])
    with torch.no_grad():
        full = model.hidden_loo(tokens, attend)
        part = model.hidden_loo(tokens, attend, query)
    assert part.shape == (16, 4, 20)
    assert (part - full[:, query]).abs().max().item() <= 1e-6


def scored_loss(model, tokens, k):
    objective = MaskedFeatureObjective("leave_one_out", feature_loss_weight=0.3, max_scored_features=k)
    return objective(model, {"tokens": tokens, "weight": torch.linspace(0.5, 1.5, len(tokens))})


def test_scored_features_is_an_unbiased_estimate_of_every_column():
    model, ids = make_model(7, 2)
    model.train()  # the subset is drawn in training only; the model has no dropout here
    for block in model.blocks:
        block.dropout.p = block.dropout2.p = 0.0
    tokens = random_tokens(ids, 24)
    tokens[0, 2] = MISSING  # an unscored target among the drawn ones
    with torch.no_grad():
        full_sum, full_weight = scored_loss(model, tokens, None)
        assert scored_loss(model, tokens, 6)[0].item() == pytest.approx(full_sum.item(), rel=1e-6)  # k >= L - 1
        torch.manual_seed(0)
        draws = torch.tensor([[float(v) for v in scored_loss(model, tokens, 2)] for _ in range(600)])
    assert not torch.allclose(draws[0], draws[1])  # the subsets differ from batch to batch
    assert draws[:, 0].mean().item() == pytest.approx(full_sum.item(), rel=0.03)
    assert draws[:, 1].mean().item() == pytest.approx(full_weight.item(), rel=0.03)


def test_scored_features_subset_trains_the_drawn_heads_and_the_label():
    model, ids = make_model(6, 2)
    model.train()
    torch.manual_seed(1)
    s, w = scored_loss(model, random_tokens(ids, 16), 1)
    (s / w).backward()
    touched = (model.heads.weight.grad.abs().sum(1) > 0).nonzero().flatten().tolist()
    columns = {j for j, i in enumerate(ids) for t in touched if t in set(i.tolist())}
    assert 5 in columns and len(columns) == 2  # the label and one drawn feature


def test_scored_features_rejects_zero():
    with pytest.raises(ValueError, match="max_scored_features"):
        MaskedFeatureObjective("leave_one_out", max_scored_features=0)


def test_dropout_keeps_one_minus_p_scaled_and_is_identity_in_eval():
    from tabmoe.nn.network import Dropout

    drop = Dropout(0.25)
    x = torch.ones(200, 50, 20)
    torch.manual_seed(0)
    out = drop(x)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.01
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / 0.75))
    assert torch.equal(drop.eval()(x), x)
    assert torch.equal(Dropout(0.0)(x), x)
