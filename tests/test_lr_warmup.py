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


def _rates(warmup_epochs, epochs=3, lr_decay_patience=None):
    """The learning rate of every optimisation step: 64 rows in batches of 16, 4 steps an epoch."""
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
        return err.sum(), torch.tensor(float(len(err)))

    config = TrainerConfig(max_epochs=epochs, batch_size=16, lr=0.01, lr_warmup_epochs=warmup_epochs,
                           lr_decay_patience=lr_decay_patience)
    result = Trainer(config).fit(module, data, loss, optimizer=optimizer)
    return rates, result.history


def test_step_k_of_the_warmup_trains_at_k_over_s_of_the_rate():
    rates, history = _rates(2)  # S = 8 warm-up steps, then 4 at the full rate
    np.testing.assert_allclose(rates, [0.01 * k / 8 for k in range(1, 9)] + [0.01] * 4, rtol=1e-6)
    assert [h["lr"] for h in history] == pytest.approx([0.01 / 8, 0.01 * 5 / 8, 0.01])


def test_no_warmup_is_a_constant_rate():
    assert _rates(0)[0] == [0.01] * 12
    assert "lr" not in _rates(0)[1][0]


def test_the_plateau_schedule_runs_beside_the_warmup():
    # patience 1 with a training loss that improves every epoch: no division, so the
    # warm-up alone sets the rates when both schedules run
    rates, _ = _rates(1, epochs=2, lr_decay_patience=1)
    np.testing.assert_allclose(rates, [0.01 * k / 4 for k in range(1, 5)] + [0.01] * 4, rtol=1e-6)


def test_the_estimator_warms_up_and_zero_changes_nothing():
    X, y = toy_table(n=120, seed=0)
    expected = TabularMoEClassifier(**FAST).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(TabularMoEClassifier(**FAST, lr_warmup_epochs=0).fit(X, y).predict_proba(X), expected)
    warm = TabularMoEClassifier(**FAST, lr_warmup_epochs=2).fit(X, y)
    assert warm.history_[0]["lr"] < warm.history_[1]["lr"] < warm.history_[2]["lr"] == pytest.approx(1e-3)
    assert not np.array_equal(warm.predict_proba(X), expected)


@pytest.mark.parametrize("bad", [-1, 0.5, "1"])
def test_a_bad_warmup_is_refused_by_name(bad):
    X, y = toy_table(n=60, seed=0)
    with pytest.raises(InvalidParameterError, match="lr_warmup_epochs"):
        TabularMoEClassifier(**FAST, lr_warmup_epochs=bad).fit(X, y)


def test_the_trainer_refuses_a_negative_warmup():
    with pytest.raises(ValueError, match=r"lr_warmup_epochs must be >= 0"):
        _rates(-1)
