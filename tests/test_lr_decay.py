"""``lr_decay_patience``: the learning rate divided on a plateau of the loss (study 15)."""

import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table


def _fit(val_losses, patience, **config):
    """Fit a linear model for len(val_losses) epochs, the validation loss read from the list."""
    losses = iter(val_losses)

    def val_loss(module, batch):
        return torch.tensor(next(losses)), torch.tensor(1.0)

    def loss(module, batch):
        out = module(batch["x"]).squeeze(-1)
        return ((out - batch["y"]) ** 2).sum(), torch.tensor(float(len(out)))

    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=len(val_losses), batch_size=8, lr=1.0, lr_decay_patience=patience, **config)
    return Trainer(cfg).fit(torch.nn.Linear(3, 1), data, loss, validation=data, val_loss_fn=val_loss)


def test_learning_rate_is_divided_after_patience_epochs_without_improvement():
    # improvement in epochs 1-2, then none: the 2nd epoch without one (4) divides the rate
    # for epoch 5, 2 more without (5, 6) divide it again; the improvement of epoch 7 resets
    # the count, so epoch 8 alone does not divide it. history holds the rate each epoch used.
    result = _fit([1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.5, 0.6, 0.6], patience=2)
    lrs = [r["lr"] for r in result.history]
    assert lrs == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.2, 0.2, 0.04, 0.04, 0.04])


def test_improvement_is_absolute_and_must_exceed_tol():
    # 10 -> 9.995 improves by 0.005 > tol (a relative 1e-3 would need 0.01); 9.995 -> 9.9945
    # improves by 0.0005 < tol, so it counts as none and divides the rate for epoch 4.
    result = _fit([10.0, 9.995, 9.9945, 9.9944], patience=1, tol=1e-3)
    assert [r["lr"] for r in result.history] == pytest.approx([1.0, 1.0, 1.0, 0.2])


def test_without_validation_the_training_loss_is_watched():
    data = {"x": torch.zeros(8, 3), "y": torch.zeros(8)}  # a zero loss: never improves after epoch 1
    cfg = TrainerConfig(max_epochs=3, batch_size=8, lr_decay_patience=1)
    result = Trainer(cfg).fit(
        torch.nn.Linear(3, 1, bias=False), data,
        lambda m, b: (((m(b["x"]).squeeze(-1) - b["y"]) ** 2).sum(), torch.tensor(8.0)),
    )
    assert [r["lr"] for r in result.history] == pytest.approx([1e-3, 1e-3, 2e-4])


def test_constant_rate_by_default_and_a_patience_below_one_refused():
    result = _fit([1.0, 1.0, 1.0], patience=None)
    assert all("lr" not in r for r in result.history)
    with pytest.raises(ValueError, match="lr_decay_patience"):
        _fit([1.0], patience=0)


@pytest.mark.parametrize("n_members", [1, 2])
def test_estimator_passes_it_to_fit_only_and_refuses_a_bad_value_naming_it(n_members):
    X, y = toy_table()
    # tol=10: no epoch improves on the first, so the rate is divided after every epoch
    params = dict(max_epochs=5, random_state=0, device="cpu", batch_size=32, n_members=n_members)
    model = TabularMoEClassifier(lr_decay_patience=1, tol=10.0, **params).fit(X, y)
    assert [r["lr"] for r in model.history_] == pytest.approx([1e-3, 1e-3, 2e-4, 4e-5, 8e-6])
    model.adapt(X, max_epochs=2)
    assert all("lr" not in r for r in model.adapt_history_)
    assert all("lr" not in r for r in TabularMoEClassifier(**params).fit(X, y).history_)
    with pytest.raises(ValueError, match="lr_decay_patience"):
        TabularMoEClassifier(lr_decay_patience=0).fit(X, y)
