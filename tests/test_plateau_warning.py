"""A fit that early stopping ended within 5% of the class prior's loss warns (ConvergenceWarning),
naming the loss, the prior's and n_iter_no_change: R's Star stopped on a 40-epoch plateau at
the prior (0.40 accuracy against 0.89 with a longer patience), silently."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from tabmoe import TabularMoEClassifier
from tabmoe.baselines import FTTransformerClassifier, TabNetClassifier
from tabmoe.nn._plateau import prior_log_loss, warn_if_at_prior
from tabmoe.nn.trainer import TrainResult

SMALL = {"d_model": 8, "n_heads": 2, "ff_dim": 8, "n_iter_no_change": 2, "max_epochs": 60, "random_state": 0}


def result(val_losses: list[float], best: int, stopped: bool = True) -> TrainResult:
    history = [{"epoch": e, "train_loss": 1.0, "val_loss": v, "seconds": 0.0} for e, v in enumerate(val_losses, 1)]
    return TrainResult(history=history, best_epoch=best, stopped_early=stopped)


def test_the_prior_is_the_weighted_training_frequencies_log_loss():
    y_train, w_train = np.array([0, 0, 1, 1]), np.array([1.0, 1.0, 1.0, 3.0])  # weighted: 2/6, 4/6
    y_val, w_val = np.array([0, 1]), np.array([1.0, 1.0])
    assert prior_log_loss(y_train, w_train, y_val, w_val) == pytest.approx(-(np.log(1 / 3) + np.log(2 / 3)) / 2)
    assert prior_log_loss(y_train, w_train, np.array([2]), np.array([1.0])) == np.inf  # a class unseen


def test_warns_only_when_the_best_loss_is_within_five_percent_of_the_prior():
    sides = ((np.array([0, 1, 0, 1]), np.ones(4)), (np.array([0, 1]), np.ones(2)))  # prior: log 2 = 0.6931
    with pytest.warns(ConvergenceWarning, match=r"^M: early stopping ended the fit at epoch 4 with a validation "
                                                r"log loss of 0\.6600 \(epoch 2\), not 5% below that of predicting "
                                                r"the training class frequencies \(0\.6931\).*n_iter_no_change \(now 2\)"):
        warn_if_at_prior("M", result([0.70, 0.66, 0.70, 0.71], 2), 2, *sides)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_at_prior("M", result([0.70, 0.65, 0.70, 0.71], 2), 2, *sides)  # 6.2% below the prior
        warn_if_at_prior("M", result([0.70, 0.69, 0.70], 2, stopped=False), 2, *sides)  # max_epochs ended it


def test_the_message_of_an_auto_patience_says_what_it_waited():
    sides = ((np.array([0, 1, 0, 1]), np.ones(4)), (np.array([0, 1]), np.ones(2)))
    with pytest.warns(ConvergenceWarning, match=r"raise n_iter_no_change \(now 'auto': 10 epochs plus 0\.3 per epoch before the best\)"):
        warn_if_at_prior("M", result([0.70, 0.69, 0.70, 0.71], 2), "auto", *sides)


def test_no_warning_where_the_prior_is_perfect():
    """Only one class of weight above 0 (a supported sample_weight): the constant model's
    loss is 0 on a hold-out of that class, which no fit is 5% below; every such fit that
    early stopping ended warned "not 5% below ... (-0.0000)"."""
    sides = ((np.array([0, 0, 0]), np.ones(3)), (np.array([0, 0]), np.ones(2)))
    assert prior_log_loss(*sides[0], *sides[1]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_at_prior("M", result([0.01, 0.003, 0.0031, 0.0032], 2), 2, *sides)



def test_the_prior_of_weighted_rows_is_called_the_weighted_frequencies():
    """class_weight="balanced" on a 3:1 table: the prior is log 2 (the weighted frequencies are
    1/2, 1/2), not the 0.5623 of the frequencies; the message said "the training class
    frequencies (0.6931)"."""
    y_train = np.array([0, 0, 0, 1])
    balanced = ((y_train, np.array([2 / 3, 2 / 3, 2 / 3, 2.0])), (np.array([0, 0, 0, 1]), np.ones(4)))
    with pytest.warns(ConvergenceWarning, match=r"predicting the training rows' weighted class frequencies \(0\.6931\)"):
        warn_if_at_prior("M", result([0.70, 0.69, 0.70, 0.71], 2), 2, *balanced)
    equal = ((y_train, np.full(4, 3.0)), balanced[1])  # a constant sample_weight weighs nothing
    with pytest.warns(ConvergenceWarning, match=r"predicting the training class frequencies \(0\.5623\)"):
        warn_if_at_prior("M", result([0.70, 0.69, 0.70, 0.71], 2), 2, *equal)

def plateau_table(n: int = 400):
    """Labels independent of the features: no network beats the prior on its hold-out."""
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pqrs"), n), "b": rng.randn(n)})
    return X, rng.randint(0, 2, n)


@pytest.mark.parametrize("make", [lambda: TabularMoEClassifier(**SMALL), lambda: FTTransformerClassifier(
    d_block=8, n_blocks=1, attention_n_heads=2, learning_rate=1e-3, n_iter_no_change=2, max_epochs=60, random_state=0),
    # pytorch-tabnet's own loop: its history read after the fit (early stopping is "auto", off below 10,000 rows)
    lambda: TabNetClassifier(n_iter_no_change=2, max_epochs=60, early_stopping=True, random_state=0)])
def test_a_fit_that_learned_nothing_warns_and_one_that_learned_does_not(make):
    X, y = plateau_table()
    with pytest.warns(ConvergenceWarning, match="below that of predicting the training class frequencies") as record:
        model = make().fit(X, y)
    [warned] = [w for w in record if w.category is ConvergenceWarning]  # (pytorch-tabnet's import warns too)
    assert model.n_iter_ < 60 and warned.filename == __file__  # once, at the user's line
    learnable = (X["a"].isin(["p", "q"])).astype(int).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        make().fit(X, learnable)
    # early stopping on an eval_set reads that set's labels: warned alike
    with pytest.warns(ConvergenceWarning, match="5% below"):
        make().fit(X, y, eval_set=(X.iloc[:100], y[:100]))
