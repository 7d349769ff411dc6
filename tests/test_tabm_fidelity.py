"""TabM against the ``tabm`` package it wraps: the authors' defaults (``TabM.make``), the
mean-over-members training loss and the mean-of-probabilities prediction."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tabmoe.baselines.tabm import PAPER_DEFAULTS, TabMClassifier, member_mean_loss

tabm = pytest.importorskip("tabm")  # extra "baselines" (tabmoe.baselines.tabm imports it lazily)

CARDINALITIES, N_NUMERIC, N_CLASSES = [5, 3], 4, 3


def batch(rows: int = 6, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "codes": torch.stack([torch.randint(0, c, (rows,), generator=g) for c in CARDINALITIES], 1),
        "numeric": torch.randn(rows, N_NUMERIC, generator=g),
        "y": torch.randint(0, N_CLASSES, (rows,), generator=g),
        "weight": torch.rand(rows, generator=g) + 0.5,
    }


def test_the_default_network_is_tabm_make_with_no_model_arguments():
    ours = TabMClassifier()._build_network(CARDINALITIES, N_NUMERIC, N_CLASSES).model
    theirs = tabm.TabM.make(n_num_features=N_NUMERIC, cat_cardinalities=CARDINALITIES, d_out=N_CLASSES)
    assert ours.k == theirs.k == PAPER_DEFAULTS["k"]
    shapes = {n: p.shape for n, p in ours.named_parameters()}
    assert shapes == {n: p.shape for n, p in theirs.named_parameters()}
    assert [type(m).__name__ for m in ours.modules()] == [type(m).__name__ for m in theirs.modules()]
    dropout = [m.p for m in ours.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropout and set(dropout) == {PAPER_DEFAULTS["dropout"]}


def test_the_classifier_defaults_are_the_papers():
    params = TabMClassifier().get_params()
    assert {k: params[k] for k in PAPER_DEFAULTS} == PAPER_DEFAULTS


def small_network(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return TabMClassifier(k=4, n_blocks=1, d_block=16)._build_network(CARDINALITIES, N_NUMERIC, N_CLASSES)


def test_the_training_loss_is_the_weighted_mean_over_members_of_each_members_cross_entropy():
    module, b = small_network().train(), batch()
    torch.manual_seed(1)
    total, weight = member_mean_loss(module, b)
    torch.manual_seed(1)  # the same dropout masks
    logits = module(b["codes"], b["numeric"])  # (B, k, C)
    per_member = torch.stack([F.cross_entropy(logits[:, m], b["y"], reduction="none") for m in range(4)], 1)
    torch.testing.assert_close(total, (per_member.mean(1) * b["weight"]).sum())
    torch.testing.assert_close(weight, b["weight"].sum())


def test_prediction_is_the_log_of_the_members_mean_probability():
    module, b = small_network().eval(), batch()
    with torch.no_grad():
        out = module(b["codes"], b["numeric"])  # (B, C)
        members = module.model(b["numeric"], b["codes"])  # (B, k, C)
    expected = torch.log(F.softmax(members, dim=-1).mean(1))
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(out.exp().sum(1), torch.ones(len(out)))
    assert not math.isclose(float((out - F.log_softmax(members.mean(1), -1)).abs().max()), 0.0)
