"""``linear_term=True``: a learned vector per feature value, summed over the feature columns,
added to the label's output (a one-hot linear term beside the MoE)."""

import pickle

import numpy as np
import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.interpret.moe import MixtureOfExperts
from tabmoe.nn.network import TabularMoE
from tabmoe.tokenizer import MASK, MISSING, N_SPECIAL, UNKNOWN

from .moe_data import toy_table

FAST = dict(max_epochs=3, random_state=0, device="cpu")
IDS = [N_SPECIAL + 4 * j + np.arange(4) for j in range(4)]  # 3 features and the label


def _model(linear_term, n_layers=1):
    torch.manual_seed(0)
    return TabularMoE(N_SPECIAL + 16, IDS, d_model=8, n_heads=2, ff_dim=4, n_layers=n_layers,
                      linear_term=linear_term).eval()


def _tokens():
    return torch.as_tensor([
        [IDS[0][1], IDS[1][2], IDS[2][0], IDS[3][1]],
        [IDS[0][3], MISSING, IDS[2][2], IDS[3][0]],
        [IDS[0][0], IDS[1][1], MASK, IDS[3][3]],
    ])


def _randomise(model):
    with torch.no_grad():
        model.linear.weight.normal_(generator=torch.Generator().manual_seed(1))


def test_at_initialisation_the_network_computes_what_the_plain_one_does():
    plain, linear = _model(False), _model(True)
    assert plain.linear is None and torch.count_nonzero(linear.linear.weight) == 0
    torch.testing.assert_close(linear.hidden_loo(_tokens()), plain.hidden_loo(_tokens()))
    torch.testing.assert_close(linear.label_logits(_tokens()), plain.label_logits(_tokens()))


def test_the_term_is_the_sum_of_the_feature_rows_at_the_label_only():
    plain, linear = _model(False), _model(True)
    _randomise(linear)
    tokens = _tokens()
    rows = linear.linear.weight.detach()
    keep = (tokens[:, :-1] != MASK).unsqueeze(-1)
    expected = (rows[tokens[:, :-1]] * keep).sum(1)  # MASK (a masked feature) adds nothing
    diff = linear.hidden_loo(tokens) - plain.hidden_loo(tokens)
    torch.testing.assert_close(diff[:, -1], expected)
    torch.testing.assert_close(diff[:, :-1], torch.zeros_like(diff[:, :-1]))  # features: none


def test_the_label_token_never_enters_the_term():
    model = _model(True)
    _randomise(model)
    tokens, other = _tokens(), _tokens()
    other[:, -1] = IDS[3][2]
    torch.testing.assert_close(model.hidden_loo(tokens)[:, -1], model.hidden_loo(other)[:, -1])


def test_absent_columns_add_nothing():
    plain, linear = _model(False), _model(True)
    _randomise(linear)
    attend = torch.ones(3, 4, dtype=torch.bool)
    attend[0, 1] = False
    diff = linear.hidden_loo(_tokens(), attend) - plain.hidden_loo(_tokens(), attend)
    rows = linear.linear.weight.detach()
    t = _tokens()[0]
    torch.testing.assert_close(diff[0, -1], rows[t[0]] + rows[t[2]])


def test_one_pass_leave_one_out_equals_the_masked_copies():
    model = _model(True)
    _randomise(model)
    torch.testing.assert_close(model.hidden_loo(_tokens()), model.hidden_copies(_tokens()), atol=1e-5, rtol=1e-5)


def test_label_logits_use_the_term_in_a_deeper_network():
    plain, linear = _model(False, n_layers=2), _model(True, n_layers=2)
    _randomise(linear)
    assert not torch.allclose(plain.label_logits(_tokens()), linear.label_logits(_tokens()))


def test_fit_predict_save_and_load(tmp_path):
    X, y = toy_table()
    model = TabularMoEClassifier(linear_term=True, **FAST).fit(X, y)
    weight = model.module_.linear.weight.detach()
    assert torch.count_nonzero(weight[N_SPECIAL:]) > 0
    for never_seen in (MASK, UNKNOWN):  # no gradient reaches them: unseen values add nothing
        assert torch.count_nonzero(weight[never_seen]) == 0
    path = tmp_path / "m.tabmoe"
    model.save(path)
    loaded = TabularMoEClassifier.load(path)
    assert loaded.linear_term is True
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    plain = TabularMoEClassifier(**FAST).fit(X, y)
    assert not np.allclose(plain.predict_proba(X), model.predict_proba(X))


def test_a_shared_vocabulary_is_refused_by_name():
    X, y = toy_table()
    with pytest.raises(ValueError, match="linear_term=True .* vocabulary='shared'"):
        TabularMoEClassifier(linear_term=True, vocabulary="shared", **FAST).fit(X, y)


def test_the_zero_table_draws_nothing_from_the_random_stream():
    # so ensemble members and dropout masks after it are drawn as without the term
    torch.manual_seed(0)
    a = TabularMoE(N_SPECIAL + 16, IDS, d_model=8, n_heads=2, ff_dim=4)
    after_plain = torch.rand(1)
    torch.manual_seed(0)
    TabularMoE(N_SPECIAL + 16, IDS, d_model=8, n_heads=2, ff_dim=4, linear_term=True)
    assert torch.equal(torch.rand(1), after_plain) and a.linear is None


def test_an_ensemble_and_a_deeper_model_fit():
    X, y = toy_table()
    for params in (dict(n_members=2), dict(n_layers=2)):
        model = TabularMoEClassifier(linear_term=True, **params, **FAST).fit(X, y)
        assert model.predict_proba(X).shape == (len(X), 3)


def test_a_model_pickled_before_the_option_loads_without_the_term():
    X, y = toy_table()
    model = TabularMoEClassifier(**FAST).fit(X, y)
    old = pickle.loads(pickle.dumps(model))
    del old.__dict__["linear_term"]  # as pickled before linear_term existed
    del old.module_.__dict__["linear"]
    restored = pickle.loads(pickle.dumps(old))
    assert restored.linear_term is False and restored.module_.linear is None
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))


def test_the_exact_moe_form_refuses_the_term_and_explain_still_runs():
    X, y = toy_table()
    model = TabularMoEClassifier(linear_term=True, block="attention", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="linear_term"):
        MixtureOfExperts.from_model(model.module_)
    explanation = model.explain(X.head(5))
    assert explanation.contributions is None  # the per-column MoE sum would leave the term out
    probabilities = torch.softmax(torch.tensor(explanation.logits.to_numpy()), -1).numpy()
    np.testing.assert_allclose(probabilities, model.predict_proba(X.head(5)), atol=1e-5)
