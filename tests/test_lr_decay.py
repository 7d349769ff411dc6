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
    # improvement in epochs 1-2, then none: the 2nd epoch without one (4) divides the rate,
    # then 2 more without (5, 6) divide it again; an improvement (7) resets the count
    result = _fit([1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.5, 0.6], patience=2)
    lrs = [r["lr"] for r in result.history]
    assert lrs == pytest.approx([1.0, 1.0, 1.0, 0.2, 0.2, 0.04, 0.04, 0.04])


def test_an_improvement_smaller_than_tol_counts_as_none():
    result = _fit([1.0, 0.99995, 0.9999], patience=1, tol=1e-3)
    assert [r["lr"] for r in result.history] == pytest.approx([1.0, 0.2, 0.04])


def test_without_validation_the_training_loss_is_watched():
    data = {"x": torch.zeros(8, 3), "y": torch.zeros(8)}  # a zero loss: never improves after epoch 1
    cfg = TrainerConfig(max_epochs=3, batch_size=8, lr_decay_patience=1)
    result = Trainer(cfg).fit(
        torch.nn.Linear(3, 1, bias=False), data,
        lambda m, b: (((m(b["x"]).squeeze(-1) - b["y"]) ** 2).sum(), torch.tensor(8.0)),
    )
    assert [r["lr"] for r in result.history] == pytest.approx([1e-3, 2e-4, 4e-5])


def test_constant_rate_by_default_and_no_lr_in_history():
    result = _fit([1.0, 1.0, 1.0], patience=None)
    assert all("lr" not in r for r in result.history)


def test_estimator_passes_it_to_fit_and_refuses_a_bad_value_naming_it():
    X, y = toy_table()
    params = dict(max_epochs=6, random_state=0, device="cpu", batch_size=32)
    model = TabularMoEClassifier(lr_decay_patience=1, **params).fit(X, y)
    lrs = [r["lr"] for r in model.history_]
    assert lrs[0] <= 1e-3 and lrs == sorted(lrs, reverse=True)
    assert all("lr" not in r for r in TabularMoEClassifier(**params).fit(X, y).history_)
    with pytest.raises(ValueError, match="lr_decay_patience"):
        TabularMoEClassifier(lr_decay_patience=0).fit(X, y)
