"""``ema_decay``: the trainer validates, keeps and returns an exponential moving average of
the weights, updated after every optimisation step."""

import numpy as np
import pytest
import torch
from torch import nn

from tabmoe import TabularMoEClassifier
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table


def _data(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return {"x": x, "y": x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(n, generator=g)}


def _fit(ema_decay, seen=None, validation=None, **config):
    torch.manual_seed(0)
    module = nn.Linear(3, 1)

    def loss(m, batch):
        if seen is not None and m.training:  # the weights each step starts from
            seen.append(torch.cat([p.detach().flatten().clone() for p in m.parameters()]))
        err = (m(batch["x"]).squeeze(-1) - batch["y"]) ** 2
        return err.sum(), torch.tensor(float(len(err)))

    cfg = TrainerConfig(max_epochs=3, batch_size=16, lr=0.05, ema_decay=ema_decay, **config)
    result = Trainer(cfg).fit(module, _data(), loss, validation=validation)
    return module, result, loss


def test_the_returned_weights_are_the_moving_average_of_the_steps():
    seen = []
    plain, _, _ = _fit(None, seen)
    after = [*seen[1:], torch.cat([p.detach().flatten() for p in plain.parameters()])]
    decay, ema = 0.7, None
    for weights in after:  # torch's AveragedModel: the first update copies
        ema = weights.clone() if ema is None else decay * ema + (1 - decay) * weights
    averaged, result, _ = _fit(decay)
    assert result.n_steps == len(after) == 12
    got = torch.cat([p.detach().flatten() for p in averaged.parameters()])
    torch.testing.assert_close(got, ema, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(got, after[-1], atol=1e-4)  # not the last step's weights


def test_early_stopping_validates_and_restores_the_averaged_weights():
    validation = _data(32, seed=1)
    module, result, loss = _fit(0.9, validation=validation, early_stopping=True, n_iter_no_change=2)
    restored = Trainer(TrainerConfig(batch_size=16)).evaluate(module, validation, loss)
    best = min(r["val_loss"] for r in result.history)
    assert restored == pytest.approx(best, rel=1e-6)
    assert result.history[result.best_epoch - 1]["val_loss"] == best


def test_a_decay_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="ema_decay"):
        _fit(1.0)


@pytest.mark.parametrize("n_members", [1, 2])
def test_estimator_averages_in_fit_and_saves_the_averaged_network(tmp_path, n_members):
    X, y = toy_table()
    params = dict(random_state=0, device="cpu", batch_size=32, max_epochs=6, n_members=n_members)
    averaged = TabularMoEClassifier(ema_decay=0.9, **params).fit(X, y)
    plain = TabularMoEClassifier(**params).fit(X, y)
    # the same trajectory, validated on other weights
    assert [r["train_loss"] for r in averaged.history_] == [r["train_loss"] for r in plain.history_]
    assert [r["val_loss"] for r in averaged.history_] != [r["val_loss"] for r in plain.history_]
    averaged.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.ema_decay == 0.9
    np.testing.assert_allclose(loaded.predict_proba(X), averaged.predict_proba(X), atol=1e-6)
    with pytest.raises(ValueError, match="ema_decay"):
        TabularMoEClassifier(ema_decay=1.0).fit(X, y)
