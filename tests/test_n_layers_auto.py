"""``n_layers="auto"``: two layers above ``AUTO_LAYERS_ROWS`` training rows, one otherwise,
resolved once at fit into ``n_layers_``. The threshold is lowered to a few dozen rows so that
tiny fits stand on either side of it."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone

from tabmoe import TabularMoEClassifier, paper_config
from tabmoe import _paper_config as defaults
from tabmoe.interpret.moe import MixtureOfExperts
from tabmoe.persistence import IncompatibleFileError, checksum

from .moe_data import toy_table

ROWS = 40  # the lowered threshold: "auto" gives 1 layer at 40 training rows, 2 at 41
TINY = dict(d_model=4, n_heads=2, ff_dim=4, max_epochs=1, random_state=0, device="cpu")
MODELS = Path(__file__).resolve().parent / "fixtures" / "models"


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    monkeypatch.setattr(defaults, "AUTO_LAYERS_ROWS", ROWS)


@pytest.mark.parametrize("n_rows, layers, masking", [(ROWS, 1, "leave_one_out"), (ROWS + 1, 2, "random")])
def test_auto_chooses_the_depth_from_the_training_rows(n_rows, layers, masking):
    X, y = toy_table(n=n_rows)
    clf = TabularMoEClassifier(n_layers="auto", **TINY).fit(X, y)
    assert clf.n_layers_ == layers and clf.module_.n_layers == layers
    assert clf._masking() == masking  # masking="auto" follows the depth chosen
    assert clf.get_params()["n_layers"] == "auto"
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and not hasattr(twin, "n_layers_")


def test_auto_counts_the_rows_before_the_hold_out_and_not_the_unlabeled_ones():
    X, y = toy_table(n=ROWS + 1)
    # early stopping holds out 5 of the 41 rows: the network trains on 36, "auto" counts 41
    held = TabularMoEClassifier(n_layers="auto", **{**TINY, "early_stopping": True}).fit(X, y)
    assert "val_loss" in held.history_[0] and held.n_layers_ == 2
    X_unlabeled, _ = toy_table(n=30)
    small = TabularMoEClassifier(n_layers="auto", **TINY).fit(X[:ROWS], y[:ROWS], X_unlabeled=X_unlabeled)
    assert small.n_layers_ == 1


def test_a_number_of_layers_is_used_as_given_and_refits_resolve_again():
    X, y = toy_table(n=ROWS + 1)
    assert TabularMoEClassifier(n_layers=1, **TINY).fit(X, y).n_layers_ == 1
    assert TabularMoEClassifier(n_layers=np.int64(3), **TINY).fit(X[:10], y[:10]).n_layers_ == 3
    clf = TabularMoEClassifier(n_layers="auto", **TINY).fit(X, y)
    assert clf.fit(X[:ROWS], y[:ROWS]).n_layers_ == 1 and clf.module_.n_layers == 1


@pytest.mark.parametrize("n_rows, layers", [(ROWS, 1), (ROWS + 1, 2)])
def test_an_auto_model_is_the_model_of_the_depth_it_chose(n_rows, layers):
    """Fit, prediction, explain and the exact MoE form of an "auto" model are those of
    ``n_layers`` set to the depth it chose, bit for bit."""
    X, y = toy_table(n=n_rows)
    params = dict(TINY, block="attention", max_epochs=2)
    auto = TabularMoEClassifier(n_layers="auto", **params).fit(X, y)
    fixed = TabularMoEClassifier(n_layers=layers, **params).fit(X, y)
    assert np.array_equal(auto.predict_proba(X), fixed.predict_proba(X))
    assert np.array_equal(auto.feature_importances_, fixed.feature_importances_)
    ours, theirs = auto.explain(X), fixed.explain(X)
    pd.testing.assert_frame_equal(ours.gates, theirs.gates)
    if layers == 1:  # the exact CBOW-MoE form: per-column contributions that sum to the logits
        pd.testing.assert_frame_equal(ours.contributions, theirs.contributions)
        moe = MixtureOfExperts.from_model(auto.module_)
        assert torch.equal(moe.token_experts, MixtureOfExperts.from_model(fixed.module_).token_experts)
    else:  # deeper: last-layer gates only, and no expert form
        assert ours.contributions is None and theirs.contributions is None
        with pytest.raises(ValueError, match="one-layer"):
            MixtureOfExperts.from_model(auto.module_)
    assert auto.rows_per_batch(n_rows) == fixed.rows_per_batch(n_rows)
    auto.adapt(X.head(10), max_epochs=1, random_state=0)
    fixed.adapt(X.head(10), max_epochs=1, random_state=0)
    assert np.array_equal(auto.predict_proba(X), fixed.predict_proba(X))


def test_save_load_and_pickle_keep_the_depth_and_the_auto(tmp_path, monkeypatch):
    X, y = toy_table(n=ROWS + 1)
    clf = TabularMoEClassifier(n_layers="auto", **TINY).fit(X, y)
    expected = clf.predict_proba(X)
    clf.save(tmp_path / "m.tabmoe")
    monkeypatch.setattr(defaults, "AUTO_LAYERS_ROWS", 10_000)  # loading does not choose again
    for again in (TabularMoEClassifier.load(tmp_path / "m.tabmoe"), pickle.loads(pickle.dumps(clf))):
        assert again.n_layers_ == 2 and again.get_params()["n_layers"] == "auto"
        assert np.array_equal(again.predict_proba(X), expected)
        assert again._masking() == "random"
    # a file whose recorded depth is not one of its n_layers describes no valid model
    payload = torch.load(tmp_path / "m.tabmoe", weights_only=True)
    fitted = json.loads(payload["fitted"])
    for wrong in (0, True, "auto"):
        payload["fitted"] = json.dumps({**fitted, "n_layers": wrong})
        payload["checksum"] = checksum(payload)
        torch.save(payload, tmp_path / "wrong.tabmoe")
        with pytest.raises(IncompatibleFileError, match="n_layers"):
            TabularMoEClassifier.load(tmp_path / "wrong.tabmoe")


@pytest.mark.parametrize("n_rows, layers", [(ROWS, 1), (ROWS + 1, 2)])
def test_n_layers_set_to_the_depth_auto_chose_changes_nothing(tmp_path, n_rows, layers):
    X, y = toy_table(n=n_rows)
    clf = TabularMoEClassifier(n_layers="auto", **TINY).fit(X, y)
    assert clf.n_layers_ == layers
    expected = clf.predict_proba(X)
    clf.set_params(n_layers=layers)  # the network's depth: save and adapt accept it
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.get_params()["n_layers"] == layers and loaded.n_layers_ == layers
    np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    clf.adapt(X.head(10), max_epochs=1)
    for other in (3 - layers, 3, True):  # another depth, or a bool (True == 1): still refused
        clf.set_params(n_layers=other)
        with pytest.raises(ValueError, match=rf"Cannot save: set_params changed n_layers='auto' -> {other!r}"):
            clf.save(tmp_path / "other.tabmoe")
        with pytest.raises(ValueError, match=rf"Cannot adapt: set_params changed n_layers='auto' -> {other!r}"):
            clf.adapt(X.head(10), max_epochs=1)


def test_models_saved_before_auto_take_their_n_layers(tmp_path):
    X, y = toy_table(n=30)
    clf = TabularMoEClassifier(n_layers=2, **TINY).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    payload = torch.load(tmp_path / "m.tabmoe", weights_only=True)
    fitted = json.loads(payload["fitted"])
    del fitted["n_layers"]  # as written before n_layers_ existed
    payload["fitted"] = json.dumps(fitted)
    payload["checksum"] = checksum(payload)
    torch.save(payload, tmp_path / "old.tabmoe")
    old = TabularMoEClassifier.load(tmp_path / "old.tabmoe")
    assert old.n_layers_ == 2 and np.array_equal(old.predict_proba(X), clf.predict_proba(X))
    state = dict(clf.__getstate__())
    del state["n_layers_"]
    unpickled = TabularMoEClassifier.__new__(TabularMoEClassifier)
    unpickled.__setstate__(state)
    assert unpickled.n_layers_ == 2 and unpickled._masking() == "random"
    # the committed v0.1.0 file (its pickle needs NumPy 2)
    assert TabularMoEClassifier.load(MODELS / "v0.1.0-tabmoe.tabmoe").n_layers_ == 1
    if int(np.__version__.split(".")[0]) >= 2:
        with open(MODELS / "v0.1.0-tabmoe.pkl", "rb") as file:
            assert pickle.load(file).n_layers_ == 1  # a committed file of ours: trusted


@pytest.mark.parametrize("bad", ["two", 0, 2.5, True, -1, None])
def test_invalid_n_layers_are_refused_naming_it(bad):
    X, y = toy_table(n=20)
    clf = TabularMoEClassifier(n_layers=bad, **TINY)
    with pytest.raises(ValueError, match="'n_layers' parameter of TabularMoEClassifier must be an int"):
        clf.fit(X, y)
    assert not hasattr(clf, "n_layers_")


def test_a_masking_of_one_layer_trains_auto_below_the_threshold_and_is_refused_above():
    X, y = toy_table(n=ROWS + 1)
    clf = TabularMoEClassifier(n_layers="auto", masking="leave_one_out", **TINY)
    assert clf.fit(X[:ROWS], y[:ROWS]).n_layers_ == 1
    with pytest.raises(ValueError, match="needs n_layers=1 .*n_layers='auto', which chose 2 layers"):
        clf.fit(X, y)
    assert clf.n_layers_ == 1 and clf.module_.n_layers == 1  # the refused fit left the model as it was


def test_the_paper_and_the_search_space_keep_a_number_of_layers():
    optuna = pytest.importorskip("optuna")  # the search space samples from an Optuna trial (extra "tuning")
    from tabmoe.registry import suggest_tabmoe

    assert paper_config()["n_layers"] == 1
    for seed in range(5):
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        layers = suggest_tabmoe(study.ask())["n_layers"]
        assert isinstance(layers, int) and 1 <= layers <= 2
