"""Early-stopping settings in ``TrainerConfig``: Keras's ``start_from_epoch``, epochs
before the hold-out is watched (study 50), ``restore_best_weights`` (study 51), AutoGluon's
``patience_rate`` (study 59) and ``watch_below`` (study 71)."""

import math

import pytest
import torch

from tabmoe.nn.trainer import Trainer, TrainerConfig


def _fit(val_losses, **config):
    """Fit a linear model with early stopping (patience 2), the validation loss read from
    the list; returns the result, the module and its weights after each epoch."""
    losses = iter(val_losses)
    module = torch.nn.Linear(3, 1)
    weights = []

    def val_loss(m, batch):  # called once after each epoch's steps
        weights.append(m.weight.detach().clone())
        return torch.tensor(next(losses)), torch.tensor(1.0)

    def loss(m, batch):
        out = m(batch["x"]).squeeze(-1)
        return ((out - batch["y"]) ** 2).sum(), torch.tensor(float(len(out)))

    torch.manual_seed(0)
    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=len(val_losses), batch_size=8, lr=0.1, early_stopping=True,
                        n_iter_no_change=2, **config)
    result = Trainer(cfg).fit(module, data, loss, validation=data, val_loss_fn=val_loss)
    return result, module, weights


LOSSES = [0.1, 1.0, 1.0, 1.0, 1.0, 0.9, 0.95, 0.95, 0.5, 0.4]


def test_by_default_the_first_epoch_is_watched():
    result, module, weights = _fit(LOSSES)
    assert result.best_epoch == 1 and result.stopped_early and len(result.history) == 3
    assert torch.equal(module.weight, weights[0])


def test_the_first_k_epochs_are_recorded_but_neither_kept_nor_counted():
    # epochs 1-3 unwatched; 4 is the first best, 5 no better, 6 better (kept), 7 and 8 no
    # better: patience 2 runs out at epoch 8, before the lower losses of 9 and 10
    result, module, weights = _fit(LOSSES, start_from_epoch=3)
    assert [r["val_loss"] for r in result.history] == pytest.approx(LOSSES[:8])
    assert result.best_epoch == 6 and result.stopped_early
    assert torch.equal(module.weight, weights[5]) and not torch.equal(module.weight, weights[-1])


def test_a_start_at_or_past_the_last_epoch_keeps_the_last_weights():
    result, module, weights = _fit(LOSSES[:4], start_from_epoch=4)
    assert result.best_epoch is None and not result.stopped_early and len(result.history) == 4
    assert torch.equal(module.weight, weights[-1])


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_bad_start_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="start_from_epoch"):
        _fit(LOSSES, start_from_epoch=bad)


def test_without_restoring_the_last_epoch_is_kept_and_named():
    # as test_the_first_k_epochs_...: epoch 6 is the best, the fit stops after epoch 8
    result, module, weights = _fit(LOSSES, start_from_epoch=3, restore_best_weights=False)
    assert result.stopped_early and len(result.history) == 8 and result.best_epoch == 8
    assert torch.equal(module.weight, weights[7]) and not torch.equal(module.weight, weights[5])


def test_without_restoring_a_divergence_still_restores_the_best():
    losses = iter([1.0, 0.5, 0.9])
    module = torch.nn.Linear(3, 1)
    weights = []

    def val_loss(m, batch):
        weights.append(m.weight.detach().clone())
        return torch.tensor(next(losses)), torch.tensor(1.0)

    def loss(m, batch):  # finite for three epochs (6 steps), then NaN
        calls.append(1)
        out = m(batch["x"]).squeeze(-1)
        value = ((out - batch["y"]) ** 2).sum()
        return (value * math.nan if len(calls) > 6 else value), torch.tensor(float(len(out)))

    calls = []
    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=10, batch_size=8, lr=0.1, early_stopping=True, n_iter_no_change=5,
                        restore_best_weights=False)
    with pytest.warns(RuntimeWarning, match="diverged"):
        result = Trainer(cfg).fit(module, data, loss, validation=data, val_loss_fn=val_loss)
    assert result.best_epoch == 2 and torch.equal(module.weight, weights[1])


def test_without_restoring_an_average_of_the_weights_keeps_its_last_epoch():
    # with ema_decay the averaged weights are what is validated (so what _fit records each
    # epoch) and what is returned: here those of the last epoch, not of the best (epoch 6)
    result, module, weights = _fit(LOSSES, start_from_epoch=3, restore_best_weights=False, ema_decay=0.5)
    assert result.best_epoch == 8
    assert torch.equal(module.weight, weights[7]) and not torch.equal(module.weight, weights[5])


def test_an_adaptive_patience_grows_with_the_epochs_before_the_best():
    """AutoGluon's AdaptiveES (study 59): patience n_iter_no_change + round(rate x (best - 1)).
    Patience 2 alone stops 2 epochs after the best at epoch 6; with rate 0.6 the best at 6
    gets 2 + 3 = 5 epochs (the better loss of epoch 10 is reached), the best at 10 gets
    2 + round(5.4) = 7 (epoch 16's is reached, and kept)."""
    result, _, _ = _fit(LOSSES, patience_rate=0.6)
    assert len(result.history) == 3 and result.best_epoch == 1  # epoch 1's patience: 2 + 0
    losses = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.55, 0.55, 0.55, 0.4, 0.45, 0.45, 0.45, 0.45, 0.45, 0.3]
    fixed, _, _ = _fit(losses)
    assert fixed.best_epoch == 6 and len(fixed.history) == 8
    grown, module, weights = _fit(losses, patience_rate=0.6)
    assert grown.best_epoch == 16 and len(grown.history) == 16
    assert torch.equal(module.weight, weights[15])
    short, _, _ = _fit(losses[:15], patience_rate=0.6)  # 5 epochs after 10 without a better loss
    assert short.best_epoch == 10 and len(short.history) == 15 and not short.stopped_early


@pytest.mark.parametrize("bad", [-0.1, float("nan"), True, "0.3"])
def test_a_bad_patience_rate_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="patience_rate"):
        _fit(LOSSES, patience_rate=bad)


PLATEAU = [1.0, 1.0, 1.05, 0.99, 1.0, 0.6, 0.7, 0.7, 0.5, 0.55]


def test_patience_waits_for_the_loss_to_go_below_watch_below():
    """Study 71: with ``watch_below`` patience counts only once the best loss is under it.
    Patience 2 alone stops at epoch 3 on the plateau; with 0.8 the epochs on the plateau are
    not counted, epoch 6 (0.6) is the first best under the line, and patience runs out at 8."""
    result, _, _ = _fit(PLATEAU)
    assert len(result.history) == 3 and result.best_epoch == 1
    result, module, weights = _fit(PLATEAU, watch_below=0.8)
    assert len(result.history) == 8 and result.best_epoch == 6 and result.stopped_early
    assert torch.equal(module.weight, weights[5])


def test_a_line_never_reached_trains_every_epoch_and_keeps_the_best():
    result, module, weights = _fit(PLATEAU[:5], watch_below=0.8)
    assert len(result.history) == 5 and not result.stopped_early and result.best_epoch == 4
    assert torch.equal(module.weight, weights[3])


@pytest.mark.parametrize("bad", [True, "0.5", [0.5]])
def test_a_bad_watch_below_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="watch_below"):
        _fit(PLATEAU, watch_below=bad)


def test_the_estimators_auto_patience_is_study_75s_adaptive_rule(monkeypatch):
    """``n_iter_no_change="auto"`` reaches the trainer as patience 10 at rate 0.3 (the
    research variant study 75 passed); an integer stays a fixed patience, no rate."""
    import numpy as np
    import pandas as pd

    from tabmoe import TabularMoEClassifier
    from tabmoe.nn import trainer as trainer_module

    configs = []
    init = trainer_module.Trainer.__init__
    monkeypatch.setattr(trainer_module.Trainer, "__init__", lambda self, config: configs.append(config) or init(self, config))
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pqrs"), 200)})
    y = np.array(X["a"].isin(["p", "q"]), dtype=int)
    y[rng.rand(200) < 0.2] ^= 1  # a slow learning rate and noisy labels: the best epoch comes late
    small = {"d_model": 8, "n_heads": 2, "ff_dim": 8, "max_epochs": 150, "learning_rate": 3e-4, "random_state": 0}
    auto = TabularMoEClassifier(n_iter_no_change="auto", **small).fit(X, y)
    assert (configs[-1].n_iter_no_change, configs[-1].patience_rate) == (10, 0.3)
    assert auto.best_epoch_ >= 20 and auto.n_iter_ < 150  # (here 50 and 75)
    assert auto.n_iter_ == auto.best_epoch_ + 10 + round(0.3 * (auto.best_epoch_ - 1))
    fixed = TabularMoEClassifier(n_iter_no_change=10, **small).fit(X, y)
    assert (configs[-1].n_iter_no_change, configs[-1].patience_rate) == (10, 0.0)
    assert fixed.n_iter_ == fixed.best_epoch_ + 10 < auto.n_iter_
    assert TabularMoEClassifier().n_iter_no_change == "auto"  # the default since study 75
    from tabmoe.registry import get_model

    assert get_model("tabmoe").make().n_iter_no_change == 10  # fixed-budget: as its committed runs
    with pytest.raises(ValueError, match="'n_iter_no_change' parameter of TabularMoEClassifier must be an int"):
        TabularMoEClassifier(n_iter_no_change="adaptive", **small).fit(X, y)
