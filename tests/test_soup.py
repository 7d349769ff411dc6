"""Study 74's research-only weights (tabmoe/nn/_soup.py): the average of the best epochs'."""

from __future__ import annotations

import math

import pytest
import torch

from tabmoe.nn._soup import kept_top, mean_state
from tabmoe.nn.trainer import Trainer, TrainerConfig


def test_kept_top_keeps_the_k_lowest_losses_sorted_and_never_nan():
    module = torch.nn.Linear(2, 1)
    top = []
    for epoch, loss in enumerate([0.5, 0.4, math.nan, 0.45, 0.6, 0.4, 0.3], 1):
        top = kept_top(top, loss, epoch, module, 3)
    assert [(loss, epoch) for loss, epoch, _ in top] == [(0.3, 7), (0.4, 2), (0.4, 6)]


def test_kept_top_copies_the_weights_of_its_epoch():
    module = torch.nn.Linear(2, 1)
    top = kept_top([], 0.1, 1, module, 2)
    with torch.no_grad():
        module.weight.add_(1.0)
    assert not torch.equal(top[0][2]["weight"], module.weight)


def test_mean_state_averages_floats_and_keeps_the_first_index_buffers():
    a = {"w": torch.tensor([1.0, 3.0]), "ids": torch.tensor([4, 5])}
    b = {"w": torch.tensor([3.0, 5.0]), "ids": torch.tensor([9, 9])}
    out = mean_state([a, b])
    assert torch.equal(out["w"], torch.tensor([2.0, 4.0])) and torch.equal(out["ids"], a["ids"])


def fit(soup_top: int, greedy: bool):
    """A noisy linear regression whose greedy soup (top 5) keeps two epochs, the best and one more."""
    torch.manual_seed(0)
    w = torch.randn(3)
    x = torch.randn(64, 3)
    data = {"x": x, "y": x @ w + torch.randn(64)}
    x_held = torch.randn(16, 3)
    held = {"x": x_held, "y": x_held @ w + torch.randn(16)}

    def loss(module, batch):
        return ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    cfg = TrainerConfig(max_epochs=40, batch_size=8, lr=0.1, early_stopping=True, n_iter_no_change=5,
                        soup_top=soup_top, soup_greedy=greedy)
    module = torch.nn.Linear(3, 1)
    trainer = Trainer(cfg)
    result = trainer.fit(module, data, loss, validation=held)
    return result, trainer.evaluate(module, held, loss)


def test_the_uniform_soup_averages_the_best_epochs_by_validation_loss():
    result, _ = fit(3, greedy=False)
    losses = {r["epoch"]: r["val_loss"] for r in result.history}
    best_three = sorted(losses, key=lambda e: (losses[e], e))[:3]
    assert result.soup_epochs[0] == result.best_epoch and sorted(result.soup_epochs) == sorted(best_three)


def test_the_greedy_soup_is_never_worse_on_the_hold_out_than_the_best_epoch():
    result, final = fit(5, greedy=True)
    plain, plain_final = fit(1, greedy=True)
    assert plain.soup_epochs == [] and result.best_epoch == plain.best_epoch  # the same run up to the end
    best = next(r["val_loss"] for r in result.history if r["epoch"] == result.best_epoch)
    assert plain_final == pytest.approx(best, rel=1e-5)
    assert len(result.soup_epochs) == 2 and final < best  # one epoch more lowered the hold-out's loss


@pytest.mark.parametrize(("options", "message"), [
    ({"soup_top": 0}, "soup_top must be an integer >= 1"),
    ({"soup_top": True}, "soup_top must be an integer >= 1"),
    ({"soup_top": 3, "early_stopping": False}, "needs early_stopping"),
    ({"soup_top": 3, "ema_decay": 0.9}, "no ema_decay"),
])
def test_bad_soup_settings_are_named(options, message):
    data = {"x": torch.randn(8, 3)}
    cfg = TrainerConfig(**{"max_epochs": 2, "batch_size": 4, "early_stopping": True, **options})
    with pytest.raises(ValueError, match=message):
        Trainer(cfg).fit(torch.nn.Linear(3, 1), data, lambda m, b: (m(b["x"]).sum(), torch.tensor(4.0)), validation=data)
