"""A fit that raises leaves the estimator as it was, and a network changed by set_params
after fit is not saved or adapted as if it were the fitted one."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from tabmoe import TabularMoEClassifier

from .moe_data import toy_table

FAST = dict(max_epochs=2, random_state=0, device="cpu")


@pytest.fixture(scope="module")
def data():
    return toy_table(n=120, seed=0)


def test_a_refit_that_raises_keeps_the_previous_model_whole(data):
    X, y = data
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    before, classes, tokenizer = clf.predict_proba(X), clf.classes_.copy(), clf.tokenizer_
    X_new = X.assign(extra=X["size"] * 3)
    with pytest.raises(ValueError, match="eval_set y"):  # a label not in y: refused after the tokenizer is refitted
        clf.fit(X_new, y, eval_set=(X_new[:5], ["maybe"] * 5))
    with pytest.raises(ValueError, match="size"):  # inf: refused after classes_ is replaced
        clf.fit(X.assign(size=X["size"].where(X.index != 7, np.inf)), (y == "low").astype(int))
    assert clf.tokenizer_ is tokenizer and clf.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(clf.classes_, classes)
    np.testing.assert_array_equal(clf.predict_proba(X), before)


def test_a_first_fit_that_raises_leaves_it_unfitted(data, monkeypatch):
    X, y = data
    clf = TabularMoEClassifier(**FAST)
    with pytest.raises(ValueError, match="eval_set y"):
        clf.fit(X, y, eval_set=(X[:5], ["maybe"] * 5))
    with pytest.raises(NotFittedError):
        clf.predict(X)

    def interrupted(*args, **kwargs):  # e.g. Ctrl-C, or a network that diverged, mid-training
        raise KeyboardInterrupt

    monkeypatch.setattr(TabularMoEClassifier, "_train", interrupted)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert not any(name.endswith("_") and not name.startswith("_") for name in vars(clf))


@pytest.mark.parametrize(("name", "value"), [("n_heads", 2), ("gate", "tanhmax"), ("d_model", 16), ("n_members", 2)])
def test_save_and_adapt_refuse_a_network_parameter_changed_after_fit(data, tmp_path, name, value):
    X, y = data
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    old = clf.get_params()[name]
    clf.set_params(**{name: value})
    with pytest.raises(ValueError, match=rf"Cannot save: set_params changed {name}={old!r} -> {value!r} after fit"):
        clf.save(tmp_path / "m.tabmoe")
    with pytest.raises(ValueError, match=rf"Cannot adapt: set_params changed {name}="):
        clf.adapt(X, max_epochs=1)
    assert not (tmp_path / "m.tabmoe").exists()
    clf.set_params(**{name: old})  # set back: the file is the fitted model
    clf.save(tmp_path / "m.tabmoe")
    np.testing.assert_array_equal(TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X), clf.predict_proba(X))


def test_parameters_of_prediction_and_training_may_still_change(data, tmp_path):
    X, y = data
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    clf.set_params(unknown="exclude", dropout=0.2, learning_rate=0.01)
    clf.save(tmp_path / "m.tabmoe")
    assert TabularMoEClassifier.load(tmp_path / "m.tabmoe").get_params()["unknown"] == "exclude"
    clf.adapt(X, max_epochs=1)


def test_adapt_refuses_a_combination_fit_refuses_of_the_parameters_it_trains_with(data):
    X, y = data
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    before = clf.predict_proba(X)
    # unknown_rate swaps tokens for UNKNOWN after the "exclude" mask is drawn: they were attended to
    clf.set_params(unknown="exclude", unknown_rate=0.2)
    with pytest.raises(ValueError, match="unknown_rate trains the UNKNOWN token") as by_fit:
        clf.fit(X, y)
    with pytest.raises(ValueError, match="unknown_rate trains the UNKNOWN token") as by_adapt:
        clf.adapt(X, max_epochs=1)
    assert str(by_adapt.value) == str(by_fit.value)  # one check, run by both
    assert not hasattr(clf, "adapt_history_")
    np.testing.assert_array_equal(clf.predict_proba(X), before)
    # a combination of parameters adapt does not use (refit, lr_decay_patience: fit only) stays its own
    clf.set_params(unknown_rate=0.0, refit=True, lr_decay_patience=2)
    clf.adapt(X, max_epochs=1)


def test_a_diverged_fit_leaves_no_nan_network_behind(data):
    X, y = data
    diverging = dict(FAST, learning_rate=1e6, early_stopping=False)
    clf = TabularMoEClassifier(**diverging)
    with pytest.raises(FloatingPointError, match="diverged"):
        clf.fit(X, y)
    with pytest.raises(NotFittedError):
        clf.predict_proba(X)
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(FloatingPointError):
        clf.set_params(learning_rate=1e6, early_stopping=False).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), before)


@pytest.mark.parametrize(("name", "value"), [("dropout", 5), ("missing", "Token"), ("learning_rate", float("nan")), ("device", None)])
def test_save_refuses_a_parameter_set_after_fit_that_load_would_refuse(data, tmp_path, name, value):
    # save wrote the file (over an existing one too) and load refused it: "does not describe
    # a valid model: InvalidParameterError(...)"
    X, y = data
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    expected = clf.predict_proba(X)  # after set_params, predict refuses the value too
    clf.set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=rf"Cannot save: The '{name}' parameter"):
        clf.save(tmp_path / "m.tabmoe")
    np.testing.assert_array_equal(TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X), expected)


@pytest.mark.parametrize("error", [FloatingPointError, KeyboardInterrupt])
def test_an_adaptation_that_raises_leaves_the_network_in_eval_mode(data, monkeypatch, error):
    """A diverged (or interrupted) adapt restored the weights but left ``module_`` in train
    mode: with dropout, ``label_gates(clf.module_, ...)`` differed from call to call."""
    from tabmoe.interpret.moe import label_gates
    from tabmoe.nn.trainer import Trainer

    X, y = data
    clf = TabularMoEClassifier(**FAST, n_layers=2, dropout=0.5).fit(X, y)
    tokens = torch.from_numpy(clf.train_sample_tokens_[:5, :-1])
    expected = label_gates(clf.module_, tokens)
    if error is KeyboardInterrupt:
        def interrupted(*args, **kwargs):  # Ctrl-C in the middle of a step
            raise KeyboardInterrupt

        monkeypatch.setattr(Trainer, "_step", interrupted)
    with pytest.raises(error):
        clf.adapt(X, max_epochs=2, learning_rate=1e30)
    assert not clf.module_.training
    assert torch.equal(label_gates(clf.module_, tokens), expected)
