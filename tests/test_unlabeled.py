"""Unlabeled rows in fit (X_unlabeled) and adapt()."""

import copy

import numpy as np
import pandas as pd
import pytest
import torch

import tabmoe._estimator_adapt as adapt_module
from tabmoe import TabularMoEClassifier
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.tokenizer import MASK

from .moe_data import toy_table


def make(**kw):
    params = dict(max_epochs=3, random_state=0, device="cpu", batch_size=32, early_stopping=False)
    params.update(kw)
    return TabularMoEClassifier(**params)


def test_unlabeled_rows_train_features_only():
    X, y = toy_table()
    clf = make().fit(X, y)
    tokens = clf._tokens(X.head(10), None)
    assert np.all(tokens[:, -1] == MASK)
    batch = clf._rows(tokens, np.ones(10))
    _, weight = MaskedFeatureObjective()(clf.module_.eval(), batch)
    assert weight == 10 * X.shape[1]  # every feature scored, the label never
    X_u, _ = toy_table(n=100, seed=5)
    semi = make().fit(X, y, X_unlabeled=X_u)
    assert not np.allclose(semi.predict_proba(X), clf.predict_proba(X))
    # the tokenizer saw the unlabeled rows, the stored labelled sample did not
    assert len(semi.train_sample_tokens_) == len(X)
    assert set(semi.tokenizer_.categories_[2]) == set(X.noise0) | set(X_u.noise0)


def test_unlabeled_columns_must_match():
    X, y = toy_table()
    with pytest.raises(ValueError, match="X_unlabeled must have the same columns"):
        make().fit(X, y, X_unlabeled=X.drop(columns="size"))
    # numbers given as strings would make the training column categorical, silently
    with pytest.raises(ValueError, match=r"X_unlabeled has column\(s\) of another type than X: 'size' "
                       r"\(number in X, categorical in X_unlabeled\)"):
        make().fit(X, y, X_unlabeled=X.assign(size=X["size"].astype(str)))
    # all missing (an object column of None): read with X's dtype, the column stays numeric
    semi = make().fit(X, y, X_unlabeled=X.assign(size=None))
    assert not semi.tokenizer_.is_categorical_[list(X.columns).index("size")]
    stamps = X.assign(when=pd.date_range("2020-01-01", periods=len(X), tz="UTC"))
    with pytest.raises(ValueError, match=r"'when' \(datetime \(UTC\) in X, datetime in X_unlabeled\)"):
        make().fit(stamps, y, X_unlabeled=stamps.assign(when=stamps["when"].dt.tz_localize(None)))


def test_adapt_mixes_training_rows_and_is_seeded(monkeypatch):
    X, y = toy_table()
    X_t, _ = toy_table(n=90, seed=7)
    fitted = make().fit(X, y)
    before = fitted.predict_proba(X_t)
    a = copy.deepcopy(fitted).adapt(X_t, max_epochs=2)
    b = copy.deepcopy(fitted).adapt(X_t, max_epochs=2)
    np.testing.assert_array_equal(a.predict_proba(X_t), b.predict_proba(X_t))
    assert not np.allclose(before, a.predict_proba(X_t))
    assert len(a.adapt_history_) == 2
    control = copy.deepcopy(fitted).adapt(None, max_epochs=2)
    assert not np.allclose(control.predict_proba(X_t), a.predict_proba(X_t))
    # every epoch covers the labelled sample plus the target rows
    seen = []
    real = adapt_module.Trainer.fit

    def spy(self, module, train, *args, **kw):
        seen.append(len(train["tokens"]))
        labelled = (train["tokens"][:, -1] != MASK).sum().item()
        seen.append(labelled)
        return real(self, module, train, *args, **kw)

    monkeypatch.setattr(adapt_module.Trainer, "fit", spy)
    copy.deepcopy(fitted).adapt(X_t, max_epochs=1)
    assert seen[-2:] == [len(X) + len(X_t), len(X)]


def test_adapt_validation_and_ensembles():
    X, y = toy_table()
    clf = make(n_members=2).fit(X, y)
    with pytest.raises(ValueError, match="max_epochs"):
        clf.adapt(X, max_epochs=0)
    clf.adapt(X.head(30), max_epochs=1)
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(1), 1, atol=1e-6)
    with torch.no_grad():
        assert clf.module_.module.token_embedding.weight.shape[0] == 2


def test_a_new_fit_forgets_the_previous_adaptation(tmp_path):
    # adapt_history_ outlived a refit, and save wrote it: a loaded model looked adapted
    X, y = toy_table()
    X2, y2 = toy_table(n=90, seed=7)
    clf = make().fit(X, y).adapt(X2, max_epochs=1)
    clf.save(tmp_path / "adapted.tabmoe")
    assert len(TabularMoEClassifier.load(tmp_path / "adapted.tabmoe").adapt_history_) == 1
    clf.fit(X2, y2)
    assert not hasattr(clf, "adapt_history_")
    fresh = make().fit(X2, y2)
    np.testing.assert_array_equal(clf.feature_importances_, fresh.feature_importances_)
    clf.save(tmp_path / "refitted.tabmoe")
    assert not hasattr(TabularMoEClassifier.load(tmp_path / "refitted.tabmoe"), "adapt_history_")


def test_adapt_arguments_are_checked_and_a_diverged_adaptation_changes_nothing():
    X, y = toy_table()
    clf = make().fit(X, y)
    before = clf.predict_proba(X)
    for kwargs, match in [
        (dict(max_epochs=True), "max_epochs"),
        (dict(learning_rate="a"), "learning_rate must be a finite number"),
        (dict(learning_rate=float("inf")), "learning_rate must be a finite number"),
        # numpy's "Seed must be between 0 and 2**32 - 1" named no argument
        (dict(random_state=-1), r"adapt's random_state must be None, an int in \[0, 2\*\*32 - 1\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            clf.adapt(X, **kwargs)
    with pytest.raises(FloatingPointError, match=r"Training diverged in epoch 1.*learning_rate=1e\+12"):
        clf.adapt(X, learning_rate=1e12)
    np.testing.assert_array_equal(clf.predict_proba(X), before)  # the weights were restored


def test_a_diverged_fit_is_an_error_not_nan_probabilities():
    X, y = toy_table()
    with pytest.raises(FloatingPointError, match="Lower the learning rate"):
        make(learning_rate=1e8).fit(X, y)


def test_the_scale_of_sample_weight_does_not_set_the_unlabeled_rows_share():
    """Unlabeled and target rows weighed 1 whatever the labelled weights: weights summing to
    1 left the label head almost untrained (test log loss 0.71 against 0.42)."""
    X, y = toy_table()
    X_u, _ = toy_table(n=200, seed=5)
    ones, small = np.ones(len(y)), np.full(len(y), 1 / len(y))
    fitted = [make().fit(X, y, sample_weight=w, X_unlabeled=X_u) for w in (ones, small)]
    np.testing.assert_allclose(fitted[0].predict_proba(X), fitted[1].predict_proba(X), atol=1e-4)
    adapted = [make().fit(X, y, sample_weight=w).adapt(X_u, max_epochs=2) for w in (ones, small)]
    np.testing.assert_allclose(adapted[0].predict_proba(X), adapted[1].predict_proba(X), atol=1e-4)


def test_the_hold_out_is_drawn_among_weighted_rows_and_best_epoch_names_kept_weights_only():
    """A hold-out of rows of weight 0 had a NaN validation loss every epoch: training stopped
    after n_iter_no_change epochs, silently."""
    from sklearn.utils import check_random_state

    from tabmoe.nn._base import validation_split

    X, y = toy_table()
    seed = int(check_random_state(0).randint(np.iinfo(np.int32).max))  # the fit's, random_state=0
    train_rows, _ = validation_split(np.unique(y, return_inverse=True)[1], "auto", seed)
    weight = np.zeros(len(y))
    weight[train_rows[:40]] = 1.0  # none of the rows a hold-out over every row would take
    clf = TabularMoEClassifier(max_epochs=12, n_iter_no_change=3, random_state=0, device="cpu")
    clf.fit(X, y, sample_weight=weight)
    assert all(np.isfinite(r["val_loss"]) for r in clf.history_) and clf.best_epoch_ is not None
    weight[:] = 0.0
    weight[0] = 1.0
    with pytest.raises(ValueError, match=r"Only the 1 rows of non-zero weight are held out"):
        TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(X, y, sample_weight=weight)
    no_stop = make(max_epochs=4).fit(X, y, eval_set=(X, y))  # validated, nothing restored
    assert "val_loss" in no_stop.history_[0] and no_stop.best_epoch_ is None


def test_unlabeled_columns_follow_predicts_rule():
    # an array after a DataFrame X was refused ("X_unlabeled must have the same columns"),
    # though predict reads an array by position
    X, y = toy_table()
    X_u, _ = toy_table(n=100, seed=5)
    by_name = make().fit(X, y, X_unlabeled=X_u)
    by_position = make().fit(X, y, X_unlabeled=X_u.to_numpy(dtype=object))
    np.testing.assert_array_equal(by_position.predict_proba(X), by_name.predict_proba(X))
    with pytest.raises(ValueError, match=rf"^X_unlabeled has {X.shape[1] - 1} features, but X has {X.shape[1]}: "
                                         "an array is read by position"):
        make().fit(X, y, X_unlabeled=X_u.iloc[:, 1:].to_numpy(dtype=object))
    with pytest.raises(ValueError, match=r"X_unlabeled must have the same columns as X, in the same order: .*"
                                         r"\(in another order\)\.$"):
        make().fit(X, y, X_unlabeled=X_u.iloc[:, ::-1])
    # a fit on an array reads a frame of other labels by position, as predict does
    on_array = make().fit(X.to_numpy(dtype=object), y, X_unlabeled=X_u)
    assert on_array.tokenizer_.categories_[2].equals(by_name.tokenizer_.categories_[2])


@pytest.mark.parametrize("n_members", [1, 2])
def test_adapt_trains_with_a_dropout_set_after_fit_as_a_saved_copy_does(tmp_path, n_members):
    """set_params(dropout=...) after fit is allowed (save writes it, and a loaded copy builds
    its network with it), but adapt trained the in-memory network with the fit's dropout: the
    model and its saved copy adapted to different models."""
    X, y = toy_table()
    X_t, _ = toy_table(n=90, seed=7)
    clf = make(dropout=0.0, n_members=n_members).fit(X, y).set_params(dropout=0.5)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    for model in (clf, loaded):
        model.adapt(X_t, max_epochs=1)
    np.testing.assert_array_equal(clf.predict_proba(X_t), loaded.predict_proba(X_t))


def test_empty_or_1d_unlabeled_rows_are_named():
    """scikit-learn's words alone ('Found array with 0 sample(s)') named no argument."""
    X, y = toy_table()
    with pytest.raises(ValueError, match=r"^X_unlabeled: Found array with 0 sample\(s\)"):
        make().fit(X, y, X_unlabeled=X.iloc[:0])
    with pytest.raises(ValueError, match=r"^X_unlabeled: Expected 2D array, got 1D array"):
        make().fit(X, y, X_unlabeled=X["size"])


def test_empty_or_1d_adapt_rows_are_named_as_fit_names_x_unlabeled():
    """``adapt(X.iloc[:0])`` raised scikit-learn's 'Found array with 0 sample(s)' alone."""
    X, y = toy_table()
    clf = make(max_epochs=1).fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match=r"^X_target: Found array with 0 sample\(s\)"):
        clf.adapt(X.iloc[:0], max_epochs=1)
    with pytest.raises(ValueError, match=r"^X_target: Expected 2D array, got 1D array"):
        clf.adapt(X["size"], max_epochs=1)
    np.testing.assert_array_equal(clf.predict_proba(X), before)


def test_errors_reading_unlabeled_or_target_rows_name_them_not_x():
    """An inf in X_unlabeled (or adapt's X_target, or eval_set's X_val) was refused as "Input X
    contains infinity in column 'size'", while X held none; text in a numeric column of X_target
    named no argument."""
    X, y = toy_table()
    bad = X.assign(size=np.inf)
    with pytest.raises(ValueError, match=r"^X_unlabeled contains infinity in column 'size'"):
        make(max_epochs=1).fit(X, y, X_unlabeled=bad)
    with pytest.raises(ValueError, match=r"^eval_set's X_val contains infinity in column 'size'"):
        make(max_epochs=1).fit(X, y, eval_set=(bad, y))
    with pytest.raises(ValueError, match=r"^Input X contains infinity in column 'size'"):  # X's own, as before
        make(max_epochs=1).fit(bad, y, X_unlabeled=X)
    clf = make(max_epochs=1).fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match=r"^X_target contains infinity in column 'size'"):
        clf.adapt(bad, max_epochs=1)
    with pytest.raises(TypeError, match=r"^X_target: Column 'size' is numeric .* non-numeric values"):
        clf.adapt(X.assign(size="big"), max_epochs=1)
    np.testing.assert_array_equal(clf.predict_proba(X), before)


def test_an_adaptation_interrupted_after_training_changes_nothing(monkeypatch):
    """A Ctrl-C while adapt() recomputed feature_importances_ left the adapted weights and
    adapt_history_ beside the fit's importances: neither the fitted model nor the adapted one."""
    X, y = toy_table()
    fitted, adapted = make().fit(X, y), make().fit(X, y).adapt(X, max_epochs=1)
    kept = [(clf, clf.predict_proba(X), clf.feature_importances_) for clf in (fitted, adapted)]
    history = adapted.adapt_history_

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(TabularMoEClassifier, "_update_importances", interrupted)
    for clf, before, importances in kept:
        with pytest.raises(KeyboardInterrupt):
            clf.adapt(X, max_epochs=1)
        np.testing.assert_array_equal(clf.predict_proba(X), before)
        assert clf.feature_importances_ is importances
    assert not hasattr(fitted, "adapt_history_") and adapted.adapt_history_ is history


def test_adapt_validates_the_parameters_set_params_changed_as_fit_does():
    """set_params validates nothing and adapt trained with whatever it left: a negative
    weight_decay or mask_rate=5 trained silently, batch_size=0 was a ZeroDivisionError, and
    dropout=2 was set on the network before training failed, so predict failed after."""
    X, y = toy_table(n=120)
    clf = make(max_epochs=2).fit(X, y)
    before = clf.predict_proba(X)
    for name, bad in [("weight_decay", -1.0), ("mask_rate", 5.0), ("batch_size", 0), ("dropout", 2.0)]:
        good = clf.get_params()[name]
        with pytest.raises(ValueError, match=rf"The '{name}' parameter of TabularMoEClassifier must be"):
            clf.set_params(**{name: bad}).adapt(X, max_epochs=1)
        clf.set_params(**{name: good})
        np.testing.assert_array_equal(clf.predict_proba(X), before)
    assert not hasattr(clf, "adapt_history_")


def test_unlabeled_rows_keep_a_category_column_categorical_in_its_order():
    # pd.concat of two category columns with other categories made int codes int64 (binned
    # as numbers under "auto") and text objects (the dtype's order lost, sorted instead)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "code": pd.Categorical(rng.choice([10, 20, 30], 120)),
        "level": pd.Categorical(rng.choice(["lo", "mid", "hi"], 120), categories=["lo", "mid", "hi"], ordered=True),
    })
    y = (X.code == 10).to_numpy().astype(int)
    X_u = pd.DataFrame({"code": pd.Categorical([10, 20, 40]), "level": pd.Series(["hi", "top", None], dtype=object)})
    tok = make(max_epochs=1).fit(X, y, X_unlabeled=X_u).tokenizer_
    assert tok.is_categorical_.tolist() == [True, True]
    assert tok.categories_[0].tolist() == [10, 20, 30, 40]
    assert tok.categories_[1].tolist() == ["lo", "mid", "hi", "top"]
    # the same categories in X_unlabeled: the tokenizer is fitted as before
    same = make(max_epochs=1).fit(X, y, X_unlabeled=X.head(5)).tokenizer_
    assert same.categories_[1].tolist() == ["lo", "mid", "hi"]


def test_an_error_named_for_x_target_keeps_its_cause_and_where_it_was_raised():
    """Renamed for X_target (or X_unlabeled, eval_set's X_val), the error was raised anew
    ``from None``: pandas' own error (its cause, shown for X's) and every frame below tabmoe's
    renaming were gone, the traceback ending in errors_about."""
    import traceback

    X, y = toy_table()
    clf = make(max_epochs=1).fit(X, y)
    with pytest.raises(TypeError, match=r"^X_target: Column 'size' is numeric") as caught:
        clf.adapt(X.assign(size="big"), max_epochs=1)
    assert isinstance(caught.value.__cause__, ValueError)  # pandas' "Unable to parse string"
    frames = [f.name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert "numeric_values" in frames, frames
