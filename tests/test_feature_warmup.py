"""``feature_warmup_epochs``: the features' share of the loss on a schedule (study 14)."""

import numpy as np
import pytest
import torch

import tabmoe._estimator_adapt
from tabmoe import TabularMoEClassifier
from tabmoe.nn.ensemble import MemberLoss
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table


def position_weights(objective):
    return objective.position_weights(3, torch.device("cpu")).tolist()


def test_feature_weight_moves_linearly_from_one_over_the_warmup():
    objective = MaskedFeatureObjective(feature_loss_weight=0.1, feature_warmup_epochs=4)
    weights = [objective.feature_weight(epoch) for epoch in range(1, 8)]
    np.testing.assert_allclose(weights, [1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1])
    assert position_weights(objective) == [1.0, 1.0, 1.0]  # epoch 1 before any set_epoch
    objective.set_epoch(2)
    np.testing.assert_allclose(position_weights(objective), [0.775, 0.775, 1.0])
    constant = MaskedFeatureObjective(feature_loss_weight=0.1)
    constant.set_epoch(1)
    assert constant.feature_weight(1) == 0.1
    np.testing.assert_allclose(position_weights(constant), [0.1, 0.1, 1.0])
    with pytest.raises(ValueError, match="feature_warmup_epochs"):
        MaskedFeatureObjective(feature_warmup_epochs=-1)


def test_trainer_tells_a_scheduled_loss_each_epoch_and_ensembles_pass_it_on():
    seen = []

    class Loss:
        def __call__(self, module, batch):
            out = module(batch["x"]).squeeze(-1)
            return ((out - batch["y"]) ** 2).sum(), torch.tensor(float(len(out)))

        def set_epoch(self, epoch):
            seen.append(epoch)

    data = {"x": torch.randn(20, 3), "y": torch.randn(20)}
    Trainer(TrainerConfig(max_epochs=3, batch_size=8)).fit(torch.nn.Linear(3, 1), data, Loss())
    assert seen == [1, 2, 3]
    objective = MaskedFeatureObjective(feature_loss_weight=0.1, feature_warmup_epochs=2)
    MemberLoss(objective).set_epoch(5)
    np.testing.assert_allclose(position_weights(objective), [0.1, 0.1, 1.0])
    MemberLoss(lambda m, b: None).set_epoch(5)  # a plain loss: nothing to tell


def test_warmup_weights_the_features_in_the_first_epochs_of_fit_only():
    X, y = toy_table()
    params = dict(max_epochs=3, random_state=0, device="cpu", batch_size=32, early_stopping=False)
    plain = TabularMoEClassifier(**params).fit(X, y)
    warm = TabularMoEClassifier(feature_warmup_epochs=2, **params).fit(X, y)
    # epoch 1 weights every feature term 1 instead of 0.1: a larger training loss
    assert warm.history_[0]["train_loss"] > 1.5 * plain.history_[0]["train_loss"]
    losses = []

    class Recording(Trainer):
        def fit(self, module, train, loss_fn, *args, **kwargs):
            losses.append(loss_fn)
            return super().fit(module, train, loss_fn, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tabmoe._estimator_adapt, "Trainer", Recording)
        warm.adapt(X, max_epochs=1)
    assert [loss.feature_warmup_epochs for loss in losses] == [0]  # adapt: the plain weight


def test_negative_warmup_is_refused_naming_the_parameter():
    X, y = toy_table()
    with pytest.raises(ValueError, match="feature_warmup_epochs"):
        TabularMoEClassifier(feature_warmup_epochs=-1).fit(X, y)


def test_one_compiled_graph_serves_every_epoch_of_the_warmup():
    from torch._dynamo.testing import CompileCounter

    objective = MaskedFeatureObjective(feature_loss_weight=0.1, feature_warmup_epochs=4)
    counter = CompileCounter()
    weights = torch.compile(lambda: objective.position_weights(3, torch.device("cpu")) * 1.0, backend=counter)
    seen = []
    for epoch in range(1, 7):
        objective.set_epoch(epoch)
        seen.append(weights()[0].item())
    np.testing.assert_allclose(seen, [1.0, 0.775, 0.55, 0.325, 0.1, 0.1], rtol=1e-6)
    assert counter.frame_count == 1
