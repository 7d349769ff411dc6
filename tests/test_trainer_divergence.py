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
    assert result.diverged  # (a refit's error says so)


def _last_step_overflows(early_stopping: bool, restore_best_weights: bool = True):
    """SGD on a linear model whose last epoch's loss is scaled by 1e30: the loss read before
    that step is finite, the weights after it are ~1e30 and every later loss is inf."""
    epoch = {"n": 0}

    def loss(module, batch):
        out = ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum()
        return out * (1e30 if epoch["n"] == 3 else 1.0), torch.tensor(float(len(batch["y"])))

    loss.set_epoch = lambda n: epoch.update(n=n)

    def val_loss(module, batch):
        return ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    torch.manual_seed(0)
    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=3, batch_size=16, lr=0.01, early_stopping=early_stopping,
                        restore_best_weights=restore_best_weights)
    module = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01)
    result = Trainer(cfg).fit(module, data, loss, validation=data, val_loss_fn=val_loss, optimizer=optimizer)
    return result, module


def test_a_last_step_that_overflows_is_a_divergence_not_a_network_predicting_nan():
    """Only the loss before each step was checked: a fit whose last step overflowed returned
    its broken weights (TabularMoEClassifier(learning_rate=1e6, max_epochs=1), one batch:
    predict_proba all NaN, predict the first class)."""
    with pytest.raises(FloatingPointError, match=r"diverged in epoch 3: after its last step the loss is not finite"):
        _last_step_overflows(early_stopping=False)
    # early stopping that keeps the last epoch's weights falls back to the best, as for a late divergence
    with pytest.warns(RuntimeWarning, match="diverged in epoch 3.*weights of epoch 2"):
        result, module = _last_step_overflows(early_stopping=True, restore_best_weights=False)
    assert result.best_epoch == 2 and all(torch.isfinite(p).all() for p in module.parameters())
    result, module = _last_step_overflows(early_stopping=True)  # the best weights restored: as before, quiet
    assert result.best_epoch == 2


def test_an_estimator_whose_last_step_diverged_raises_instead_of_predicting_nan():
    import numpy as np
    import pandas as pd

    from tabmoe import TabularMoEClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 200), "b": rng.normal(size=200)})
    y = np.where(X["a"] == "x", "p", "q")
    clf = TabularMoEClassifier(max_epochs=1, batch_size=256, learning_rate=1e6, early_stopping=False,
                               device="cpu", random_state=0)
    with pytest.raises(FloatingPointError, match="diverged in epoch 1"):
        clf.fit(X, y)
    assert not hasattr(clf, "module_")


def test_the_warning_of_a_late_divergence_points_at_the_callers_fit():
    """stacklevel=2 pointed it at tabmoe/nn/_base.py (the estimator's call of the trainer),
    where every other warning of fit points at the user's line."""
    import numpy as np
    import pandas as pd

    from tabmoe import TabularMoEClassifier

    class LateDivergence(TabularMoEClassifier):
        def _get_loss(self):
            objective, epoch = super()._get_loss(), {"n": 0}

            def loss(module, batch):
                s, w = objective(module, batch)
                return (s * math.inf if epoch["n"] >= 3 else s), w

            loss.set_epoch = lambda n: (epoch.update(n=n), objective.set_epoch(n))
            return loss

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where(X["a"] == "x", "p", "q")
    clf = LateDivergence(max_epochs=5, device="cpu", random_state=0, n_iter_no_change=5)
    with pytest.warns(RuntimeWarning, match="diverged in epoch 3") as caught:
        clf.fit(X, y)
    assert [w.filename for w in caught if "diverged" in str(w.message)] == [__file__]


def test_the_end_of_fit_check_takes_a_device_given_as_text():
    """The check of the weights a fit ends with read config.device.type: a
    TrainerConfig(device="cpu"), which fitted before, failed at the end of every fit
    without validation with "'str' object has no attribute 'type'"."""
    def loss(module, batch):
        return ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=2, batch_size=8, early_stopping=False, device="cpu")
    assert len(Trainer(cfg).fit(torch.nn.Linear(3, 1), data, loss).history) == 2


def test_mixed_precision_takes_a_device_given_as_text():
    """bf16 autocast read config.device.type: TrainerConfig(device="cpu", mixed_precision=True)
    failed at its first step with "'str' object has no attribute 'type'"; it trains in bf16."""
    dtypes = []

    def loss(module, batch):
        out = module(batch["x"]).squeeze(-1)
        dtypes.append(out.dtype)
        return ((out.float() - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=2, batch_size=8, device="cpu", mixed_precision=True)
    assert len(Trainer(cfg).fit(torch.nn.Linear(3, 1), data, loss).history) == 2
    assert dtypes[0] == torch.bfloat16


def test_a_fit_on_no_rows_still_says_it_made_no_step():
    """The end-of-fit check read the first batch of the data with next(): on no rows it raised
    a bare StopIteration instead of "Training made no optimisation step"."""
    def loss(module, batch):
        return ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum(), torch.tensor(float(len(batch["y"])))

    data = {"x": torch.randn(0, 3), "y": torch.randn(0)}
    with pytest.raises(RuntimeError, match="no optimisation step"):
        Trainer(TrainerConfig(max_epochs=2, batch_size=8, early_stopping=False)).fit(torch.nn.Linear(3, 1), data, loss)


@pytest.mark.parametrize("error", [KeyboardInterrupt, FloatingPointError])
def test_a_fit_that_raises_leaves_the_module_in_eval_mode(error):
    """A fit ends in eval mode; one that raised (Ctrl-C in a step, a divergence) left the
    module in train mode: its dropout then drew at every later forward pass."""
    module = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Dropout(0.5))

    def loss(module, batch):
        if error is KeyboardInterrupt:
            raise KeyboardInterrupt
        return module(batch["x"]).sum() * math.inf, torch.tensor(4.0)

    with pytest.raises(error):
        Trainer(TrainerConfig(max_epochs=2, batch_size=4)).fit(module, {"x": torch.randn(4, 3)}, loss)
    assert not module.training
