"""``refit=True``: after early stopping on the hold-out, a fresh network trains the best
epoch's count of epochs on every training row."""

import numpy as np
import pytest

from tabmoe import TabularMoEClassifier

from .moe_data import toy_table

PARAMS = dict(random_state=0, device="cpu", batch_size=32, max_epochs=8, n_iter_no_change=2)


@pytest.mark.parametrize("n_members", [1, 2])
def test_refit_is_a_fit_on_every_row_for_the_best_epoch_count(n_members):
    X, y = toy_table()
    X_unlabeled = toy_table(n=60, seed=1)[0]
    weight = np.random.RandomState(0).uniform(0.5, 2.0, len(X))
    kw = dict(sample_weight=weight, X_unlabeled=X_unlabeled)
    params = dict(n_members=n_members, feature_warmup_epochs=2, **PARAMS)
    refitted = TabularMoEClassifier(refit=True, **params).fit(X, y, **kw)
    stopped = TabularMoEClassifier(**params).fit(X, y, **kw)
    # the choice of epochs is the early-stopped fit's, unchanged
    def losses(model):
        return [(r["train_loss"], r["val_loss"]) for r in model.history_]

    assert losses(refitted) == losses(stopped)
    assert stopped.refit_history_ is None
    best = refitted.best_epoch_
    assert best == stopped.best_epoch_ and best is not None
    assert [r["epoch"] for r in refitted.refit_history_] == list(range(1, best + 1))
    assert refitted.n_iter_ == len(refitted.history_) + best  # a refit's epochs are run too
    assert stopped.n_iter_ == len(stopped.history_)
    assert all("val_loss" not in r for r in refitted.refit_history_)
    # the same network as a fit without early stopping on all rows for that many epochs
    plain = TabularMoEClassifier(**{**params, "max_epochs": best}, early_stopping=False).fit(X, y, **kw)
    np.testing.assert_allclose(refitted.predict_proba(X), plain.predict_proba(X), atol=1e-6)
    assert not np.allclose(refitted.predict_proba(X), stopped.predict_proba(X), atol=1e-4)
    # the stored training sample is every row, not the 90% the selection fit trained on
    assert len(refitted.train_sample_tokens_) == len(X)
    assert len(stopped.train_sample_tokens_) < len(X)


@pytest.mark.parametrize("how", ["eval_set", "no_early_stopping"])
def test_refit_changes_nothing_without_a_hold_out_from_the_training_rows(how):
    X, y = toy_table()
    fit_kw = {"eval_set": (X.iloc[:40], y[:40])} if how == "eval_set" else {}
    params = {**PARAMS, "early_stopping": how == "eval_set"}
    refitted = TabularMoEClassifier(refit=True, **params).fit(X, y, **fit_kw)
    plain = TabularMoEClassifier(**params).fit(X, y, **fit_kw)
    assert refitted.refit_history_ is None
    np.testing.assert_array_equal(refitted.predict_proba(X), plain.predict_proba(X))


def test_refit_with_a_learning_rate_schedule_is_refused_naming_both():
    X, y = toy_table(n=60)
    clf = TabularMoEClassifier(refit=True, lr_decay_patience=2)
    with pytest.raises(ValueError, match="refit=True.*lr_decay_patience=None"):
        clf.fit(X, y)  # early stopping on a hold-out of X: the refit would run
    assert not hasattr(clf, "tokenizer_")  # refused before training, and left unfitted
    with pytest.raises(ValueError, match="refit"):
        TabularMoEClassifier(refit="yes").fit(X, y)


@pytest.mark.parametrize("how", ["eval_set", "no_early_stopping"])
def test_refit_with_a_learning_rate_schedule_is_accepted_where_it_has_no_effect(how):
    """Without a hold-out from the training rows refit=True does nothing (the docstring), so
    there is no schedule to replay: the pair is not refused there."""
    X, y = toy_table(n=60)
    fit_kw = {"eval_set": (X.iloc[:20], y[:20])} if how == "eval_set" else {}
    params = {**PARAMS, "max_epochs": 3, "lr_decay_patience": 1, "early_stopping": how == "eval_set"}
    refitted = TabularMoEClassifier(refit=True, **params).fit(X, y, **fit_kw)
    plain = TabularMoEClassifier(**params).fit(X, y, **fit_kw)
    assert refitted.refit_history_ is None and all("lr" in r for r in refitted.history_)
    np.testing.assert_array_equal(refitted.predict_proba(X), plain.predict_proba(X))


def test_refit_history_survives_save_and_load(tmp_path):
    X, y = toy_table()
    model = TabularMoEClassifier(refit=True, **PARAMS).fit(X, y)
    model.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.refit and loaded.refit_history_ == model.refit_history_
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X), atol=1e-6)


def test_a_diverging_refit_says_it_is_the_refit_and_leaves_the_model_as_it_was(monkeypatch):
    """A refit that diverged raised the trainer's bare "Training diverged in epoch 4", read as
    the early-stopped fit's (which had kept its best epoch): it now names the refit."""
    import tabmoe.nn._base as base
    from tabmoe.nn.trainer import _divergence

    class Trainer(base.Trainer):
        def fit(self, module, train, loss_fn, **kwargs):
            if "refit" in self.config.description:  # the refit's weights stop being finite
                raise FloatingPointError(_divergence(self.config, 1, "the training loss is nan"))
            return super().fit(module, train, loss_fn, **kwargs)

    monkeypatch.setattr(base, "Trainer", Trainer)
    X, y = toy_table()
    clf = TabularMoEClassifier(refit=True, **PARAMS)
    with pytest.raises(FloatingPointError, match=r"^refit=True: the refit on every training row diverged, "
                       r"the early-stopped fit did not \(it kept epoch \d+\)\. Training diverged in epoch 1: "
                       r".*Lower the learning rate .* Or set refit=False to keep that fit\.$"):
        clf.fit(X, y)
    assert not hasattr(clf, "module_")  # the failed fit left nothing behind


def test_a_diverging_refit_after_a_fit_that_diverged_too_does_not_say_that_one_did_not(monkeypatch):
    """The early-stopped fit may itself diverge after its best epoch (it warns and keeps that
    epoch's weights); the refit's error then said "the early-stopped fit did not" diverge."""
    import tabmoe.nn._base as base
    from tabmoe.nn.trainer import _divergence

    class Trainer(base.Trainer):
        def fit(self, module, train, loss_fn, **kwargs):
            if "refit" in self.config.description:
                raise FloatingPointError(_divergence(self.config, 1, "the training loss is nan"))
            steps = []

            def poisoned(m, batch):  # the weights stop being finite after 20 steps (epoch 3)
                s, w = loss_fn(m, batch)
                steps.append(m.training)
                return (s * float("nan") if sum(steps) > 20 and m.training else s), w

            return super().fit(module, train, poisoned, **kwargs)

    monkeypatch.setattr(base, "Trainer", Trainer)
    X, y = toy_table()
    clf = TabularMoEClassifier(refit=True, **PARAMS)
    with pytest.warns(RuntimeWarning, match="Training diverged in epoch 3"):
        with pytest.raises(FloatingPointError, match=r"^refit=True: the refit on every training row diverged, "
                           r"as the early-stopped fit did after the epoch it kept \(epoch [12]\)\. Training diverged"):
            clf.fit(X, y)
