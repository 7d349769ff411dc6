"""``lr_warmup_epochs``: the learning rate rises linearly over the steps of the first epochs
(torch's LinearLR), then stays at ``learning_rate``; 0 changes nothing."""

import numpy as np
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError
from torch import nn

from tabmoe import TabularMoEClassifier
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table

FAST = dict(max_epochs=3, random_state=0, device="cpu")


def _rates(warmup_epochs=0, epochs=3, lr_decay_patience=None, constant_loss=False, **config):
    """The learning rate of every optimisation step: 64 rows in batches of 16, 4 steps an
    epoch (``constant_loss``: a loss that never improves, so a plateau schedule divides;
    ``config``: other TrainerConfig fields)."""
    torch.manual_seed(0)
    module = nn.Linear(3, 1)
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(1))
    data = {"x": x, "y": x.sum(1)}
    optimizer = torch.optim.AdamW(module.parameters(), lr=0.01)
    rates = []

    def loss(m, batch):
        if m.training:
            rates.append(optimizer.param_groups[0]["lr"])
        err = (m(batch["x"]).squeeze(-1) - batch["y"]) ** 2
        if constant_loss:
            err = err * 0 + 1
        return err.sum(), torch.tensor(float(len(err)))

    config = TrainerConfig(max_epochs=epochs, batch_size=16, lr=0.01, lr_warmup_epochs=warmup_epochs,
                           lr_decay_patience=lr_decay_patience, **config)
    result = Trainer(config).fit(module, data, loss, optimizer=optimizer)
    return rates, result.history


def test_step_k_of_the_warmup_trains_at_k_over_s_of_the_rate():
    rates, history = _rates(2)  # S = 8 warm-up steps, then 4 at the full rate
    np.testing.assert_allclose(rates, [0.01 * k / 8 for k in range(1, 9)] + [0.01] * 4, rtol=1e-6)
    assert [h["lr"] for h in history] == pytest.approx([0.01 / 8, 0.01 * 5 / 8, 0.01])


def test_no_warmup_is_a_constant_rate():
    assert _rates(0)[0] == [0.01] * 12
    assert "lr" not in _rates(0)[1][0]


def test_a_plateau_division_inside_the_warmup_scales_the_rest_of_it():
    # patience 1 and a loss that never improves: the rate is divided by 5 after epochs 2
    # and 3; the warm-up (S = 12 steps over 3 epochs) goes on from the divided rate
    rates, history = _rates(3, epochs=4, lr_decay_patience=1, constant_loss=True)
    expected = [0.01 * k / 12 for k in range(1, 9)] + [0.002 * k / 12 for k in range(9, 13)] + [0.0004] * 4
    np.testing.assert_allclose(rates, expected, rtol=1e-6)
    assert [h["lr"] for h in history] == pytest.approx([expected[0], expected[4], expected[8], expected[12]])


def test_the_estimator_warms_up():
    X, y = toy_table(n=120, seed=0)
    expected = TabularMoEClassifier(**FAST).fit(X, y).predict_proba(X)
    warm = TabularMoEClassifier(**FAST, lr_warmup_epochs=2).fit(X, y)
    assert warm.history_[0]["lr"] < warm.history_[1]["lr"] < warm.history_[2]["lr"] == pytest.approx(1e-3)
    assert not np.array_equal(warm.predict_proba(X), expected)


def test_the_rate_is_recorded_when_the_warmup_is_a_single_step():
    # batches of the whole table: lr_warmup_epochs=1 is one step at the full rate (no
    # scheduler), and history_ still has the lr its docstring promises with lr_warmup_epochs
    X, y = toy_table(n=60, seed=0)
    model = TabularMoEClassifier(**{**FAST, "batch_size": 1000}, lr_warmup_epochs=1).fit(X, y)
    assert [h["lr"] for h in model.history_] == pytest.approx([1e-3] * len(model.history_))


@pytest.mark.parametrize("bad", [-1, 0.5, "1"])
def test_a_bad_warmup_is_refused_by_name(bad):
    X, y = toy_table(n=60, seed=0)
    with pytest.raises(InvalidParameterError, match="lr_warmup_epochs"):
        TabularMoEClassifier(**FAST, lr_warmup_epochs=bad).fit(X, y)


def test_the_trainer_refuses_a_negative_warmup():
    with pytest.raises(ValueError, match=r"lr_warmup_epochs must be >= 0"):
        _rates(-1)
