"""A training loss that stops being finite: an error, unless early stopping kept weights."""

import math

import pytest
import torch

from tabmoe.nn.trainer import Trainer, TrainerConfig


def _fit(diverge_at: int, early_stopping: bool, weight_decay: float = 0.0):
    """A linear model whose training loss is infinite from epoch ``diverge_at`` on."""
    epoch = {"n": 0}

    def loss(module, batch):
        out = ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum()
        if epoch["n"] >= diverge_at:
            out = out * math.inf
        return out, torch.tensor(float(len(batch["y"])))

    def val_loss(module, batch):
        epoch["n"] += 1  # validated once per epoch, after its training steps
        return ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    torch.manual_seed(0)
    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=10, batch_size=16, lr=0.01, early_stopping=early_stopping, n_iter_no_change=3,
                        weight_decay=weight_decay)
    module = torch.nn.Linear(3, 1)
    return Trainer(cfg).fit(module, data, loss, validation=data, val_loss_fn=val_loss), module


def test_divergence_before_any_kept_weights_is_an_error_naming_the_learning_rate():
    with pytest.raises(FloatingPointError, match=r"diverged in epoch 1.*learning_rate=0\.01"):
        _fit(diverge_at=0, early_stopping=True)
    with pytest.raises(FloatingPointError, match="diverged in epoch 4"):
        _fit(diverge_at=3, early_stopping=False)
    with pytest.raises(FloatingPointError, match=r"learning_rate=0\.01\)\.$"):  # no decay: not named
        _fit(diverge_at=0, early_stopping=False)


def test_divergence_names_the_weight_decay_where_there_is_one():
    """weight_decay x learning_rate above ~2 makes AdamW's decay overshoot (weight_decay=5000
    at 1e-3 diverged), and the message named the learning rate alone."""
    with pytest.raises(FloatingPointError, match=r"learning_rate=0\.01\) or the weight decay \(weight_decay=5000\)"):
        _fit(diverge_at=0, early_stopping=False, weight_decay=5000.0)


def test_late_divergence_with_early_stopping_keeps_the_best_weights():
    with pytest.warns(RuntimeWarning, match="diverged in epoch 4.*weights of epoch 3"):
        result, module = _fit(diverge_at=3, early_stopping=True)
    assert all(torch.isfinite(p).all() for p in module.parameters())  # epoch 3's, restored
    assert result.stopped_early and result.best_epoch == 3 and len(result.history) == 4
    assert not math.isfinite(result.history[-1]["train_loss"])
