"""``max_grad_norm``: each step's gradients are rescaled to at most that L2 norm before the
optimiser steps (torch's ``clip_grad_norm_``), in ``fit`` and ``adapt``."""

import numpy as np
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError
from torch import nn

from tabmoe import TabularMoEClassifier
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table

FAST = dict(max_epochs=3, random_state=0, device="cpu")


def _steps(max_grad_norm):
    """Weights before and after one epoch of four steps, and the gradient norm each step
    handed to the optimiser."""
    torch.manual_seed(0)
    module = nn.Linear(3, 1)
    g = torch.Generator().manual_seed(1)
    x = 100 * torch.randn(64, 3, generator=g)
    data = {"x": x, "y": x @ torch.tensor([1.0, -2.0, 0.5])}
    norms = []

    def loss(m, batch):
        if m.training and m.weight.grad is not None:  # the previous step's clipped gradient
            norms.append(torch.cat([p.grad.flatten() for p in m.parameters()]).norm().item())
        err = (m(batch["x"]).squeeze(-1) - batch["y"]) ** 2
        return err.sum(), torch.tensor(float(len(err)))

    before = torch.cat([p.detach().flatten().clone() for p in module.parameters()])
    Trainer(TrainerConfig(max_epochs=1, batch_size=16, max_grad_norm=max_grad_norm)).fit(module, data, loss)
    return before, torch.cat([p.detach().flatten() for p in module.parameters()]), norms


def test_the_optimiser_sees_gradients_of_at_most_the_norm():
    _, _, plain = _steps(None)
    _, _, clipped = _steps(0.5)
    assert len(plain) == len(clipped) == 3 and min(plain) > 100  # steps 2-4 (the first has no previous)
    assert max(clipped) <= 0.5 * (1 + 1e-5)


def test_a_tiny_norm_all_but_stops_training():
    # Adam divides the step by the gradient's scale, so only gradients far below its eps
    # (1e-7) shrink the steps: the weights then barely move
    before, plain, _ = _steps(None)
    _, tiny, _ = _steps(1e-12)
    assert (tiny - before).abs().max() < 1e-3 * (plain - before).abs().max()


@pytest.mark.parametrize("n_members", [1, 2])
def test_a_norm_never_reached_changes_nothing(n_members):
    X, y = toy_table(n=120, seed=0)
    expected = TabularMoEClassifier(**FAST, n_members=n_members).fit(X, y).predict_proba(X)
    loose = TabularMoEClassifier(**FAST, n_members=n_members, max_grad_norm=1e9).fit(X, y)
    np.testing.assert_array_equal(loose.predict_proba(X), expected)
    clipped = TabularMoEClassifier(**FAST, n_members=n_members, max_grad_norm=1e-3).fit(X, y)
    assert not np.array_equal(clipped.predict_proba(X), expected)


@pytest.mark.parametrize("bad", [0, -1.0, "1"])
def test_a_bad_norm_is_refused_by_name(bad):
    X, y = toy_table(n=60, seed=0)
    with pytest.raises(InvalidParameterError, match="max_grad_norm"):
        TabularMoEClassifier(**FAST, max_grad_norm=bad).fit(X, y)


def test_adapt_clips_and_refuses_a_bad_norm_leaving_the_model_as_it_was():
    X, y = toy_table(n=120, seed=0)
    clf = TabularMoEClassifier(**FAST, max_grad_norm=1e-3).fit(X, y)
    before = clf.predict_proba(X)
    clf.adapt(X, max_epochs=1)  # clips there too (no error)
    adapted = clf.predict_proba(X)
    for bad in (0.0, -1.0):  # set_params does not validate; adapt refuses, as fit does
        with pytest.raises(ValueError, match=r"'max_grad_norm' parameter .* must be a float in the range \(0.0, inf\) or None"):
            clf.set_params(max_grad_norm=bad).adapt(X, max_epochs=1)
        np.testing.assert_array_equal(clf.predict_proba(X), adapted)
    assert not np.array_equal(adapted, before)


def test_an_ensemble_clips_each_member_on_its_own():
    from tabmoe.nn.ensemble import StackedModel

    torch.manual_seed(0)
    stacked = StackedModel([nn.Linear(3, 2), nn.Linear(3, 2)])
    weight, bias = stacked.module.weight, stacked.module.bias  # (2, 2, 3), (2, 2)
    weight.grad = torch.stack([torch.full((2, 3), 10.0), torch.full((2, 3), 0.01)])
    bias.grad = torch.stack([torch.full((2,), 10.0), torch.full((2,), 0.01)])
    small = torch.cat([weight.grad[1].flatten(), bias.grad[1]]).clone()
    norms = stacked.clip_grad_norm_(1.0)
    np.testing.assert_allclose(norms.numpy(), [10 * 8**0.5, 0.01 * 8**0.5], rtol=1e-5)
    clipped = torch.cat([weight.grad[0].flatten(), bias.grad[0]])
    assert clipped.norm().item() == pytest.approx(1.0, rel=1e-4)
    torch.testing.assert_close(torch.cat([weight.grad[1].flatten(), bias.grad[1]]), small)
