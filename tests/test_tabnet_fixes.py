"""TabNet adapter: early stopping when the validation rows lack a class, and pickling a model
fitted off the CPU."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import log_loss

from tabmoe.baselines import TabNetClassifier
from tabmoe.baselines.tabnet import ClassLogLoss, _trained_classes_only

pytest.importorskip("pytorch_tabnet")  # an optional extra; the adapter imports without it


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def rare_class_table(n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    """Two common classes and a class of one row (which no hold-out can put on both sides)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"num": rng.normal(size=n), "cat": rng.choice(list("abc"), n)})
    y = np.where(X["num"] > 0, "p", "q").astype(object)
    y[5] = "rare"
    return X, y


def small_tabnet(**kw) -> TabNetClassifier:
    return TabNetClassifier(
        n_d=4, n_a=4, n_steps=1, max_epochs=2, device="cpu", random_state=0, **kw
    )


def test_class_log_loss_scores_validation_rows_that_lack_a_class():
    y_true = np.array([0, 1, 1, 0])
    y_score = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.6, 0.1], [0.5, 0.3, 0.2]])
    expected = log_loss(y_true, y_score, labels=[0, 1, 2])
    assert ClassLogLoss()(y_true, y_score) == pytest.approx(expected)
    assert ClassLogLoss._maximize is False  # early stopping minimises it


def test_early_stopping_with_a_class_missing_from_the_hold_out():
    X, y = rare_class_table()
    clf = small_tabnet(early_stopping=True).fit(X, y)
    assert [sorted(r) for r in clf.history_] == [["epoch", "train_loss", "val_loss"]] * 2
    assert all(np.isfinite(r["val_loss"]) for r in clf.history_)
    assert clf.best_epoch_ in (1, 2)
    assert clf.predict_proba(X).shape == (len(X), 3)


def test_early_stopping_keeps_a_class_seen_once_in_training():
    X, y = rare_class_table()
    # random_state=1 drew the one "rare" row into the hold-out before such a row was kept
    # on the training side; TabNet then trained on "p" and "q" only. The hold-out that lacks
    # a class is still handled (an eval_set without one, below; _trained_classes_only).
    clf = small_tabnet(early_stopping=True, validation_fraction=0.5).set_params(random_state=1)
    clf.fit(X, y)
    assert list(clf.model_.classes_) == [0, 1, 2]
    assert len(clf.history_) == 2 and all(np.isfinite(r["val_loss"]) for r in clf.history_)
    assert clf.predict_proba(X).shape == (len(X), 3)


def test_early_stopping_on_an_eval_set_that_lacks_a_class():
    X, y = rare_class_table()
    common = y != "rare"
    clf = small_tabnet().fit(X, y, eval_set=(X[common], y[common]))
    assert len(clf.history_) == 2 and all(np.isfinite(r["val_loss"]) for r in clf.history_)
    assert list(clf.classes_) == ["p", "q", "rare"]


def test_validation_rows_of_untrained_classes_are_left_out():
    Z = np.arange(8, dtype=np.float32).reshape(4, 2)
    Z_val, y_val = _trained_classes_only((Z, np.array([0, 2, 1, 2])), np.array([0, 1, 1]))
    np.testing.assert_array_equal(y_val, [0, 1])
    np.testing.assert_array_equal(Z_val, Z[[0, 2]])
    with pytest.raises(ValueError, match="validation_fraction.*early_stopping=False"):
        _trained_classes_only((Z, np.array([2, 2, 2, 2])), np.array([0, 1]))


def on_fake_accelerator(clf: TabNetClassifier) -> TabNetClassifier:
    """``clf`` as if fitted on an accelerator: the device pytorch-tabnet records is not the
    CPU (no CUDA here; the tensors stay where they are)."""
    clf.model_.device = torch.device("meta")
    clf.model_.device_name = "meta"
    return clf


def test_the_hold_out_is_drawn_among_rows_of_non_zero_weight(monkeypatch):
    # as every other model's (nn._base.hold_out): rows weighted 0 stay on the training side;
    # TabNet's hold-out drew them too, so its early stopping scored rows the user excluded
    from tabmoe.baselines import tabnet

    X, y = rare_class_table(200)
    y[y == "rare"] = "p"
    weight = np.where(y == "q", 0.0, 1.0)
    held_out = []

    def spy(validation, y_train):
        held_out.append(validation[1])
        return _trained_classes_only(validation, y_train)

    monkeypatch.setattr(tabnet, "_trained_classes_only", spy)
    clf = small_tabnet(early_stopping=True).fit(X, y, sample_weight=weight)
    code_q = int(np.flatnonzero(clf.classes_ == "q")[0])
    assert len(held_out) == 1 and len(held_out[0]) == np.ceil(0.1 * (weight > 0).sum())
    assert code_q not in held_out[0]


@pytest.mark.parametrize("early_stopping", [False, True])
def test_rows_of_weight_zero_change_nothing(early_stopping):
    # as every other torch model's (nn._base.FitInputs.weighted): TabNet kept them in its weighted
    # sampler's epoch, which drew as many rows as X has from the weighted ones alone (80
    # rows, 40 of weight 0: 15 steps in 3 epochs where the 40 rows alone take 6)
    X, y = rare_class_table(80)
    y[y == "rare"] = "p"
    params = {"batch_size": 16, "virtual_batch_size": 8, "early_stopping": early_stopping}
    plain = small_tabnet(**params).set_params(max_epochs=3).fit(X[:40], y[:40])
    padded = small_tabnet(**params).set_params(max_epochs=3).fit(X, y, sample_weight=np.r_[np.ones(40), np.zeros(40)])
    assert padded.n_steps_ == plain.n_steps_
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=0, atol=1e-6)


def test_pickled_state_holds_the_tabnet_on_the_cpu_and_leaves_the_live_model_alone():
    X, y = rare_class_table()
    clf = on_fake_accelerator(small_tabnet(early_stopping=True).fit(X, y))
    live_model, live_network = clf.model_, clf.model_.network
    state = clf.__getstate__()
    copy = state["model_"]
    assert copy is not live_model and copy.network is not live_network
    assert copy.device == torch.device("cpu") and copy.device_name == "cpu"
    assert all(p.device.type == "cpu" for p in copy.network.parameters())
    assert clf.model_ is live_model and clf.model_.network is live_network
    assert live_model.device == torch.device("meta")


def test_pickle_round_trip_of_an_accelerator_model_predicts_on_the_cpu():
    X, y = rare_class_table()
    clf = small_tabnet(early_stopping=True).fit(X, y)
    expected = clf.predict_proba(X)
    clone = pickle.loads(pickle.dumps(on_fake_accelerator(clf)))
    assert clone.model_.device == torch.device("cpu")
    assert clone._module_device().type == "cpu"
    np.testing.assert_array_equal(clone.predict_proba(X), expected)
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))


def test_a_cpu_model_is_pickled_as_it_is():
    X, y = rare_class_table()
    clf = small_tabnet().fit(X, y)
    assert clf.__getstate__()["model_"] is clf.model_


def test_validation_loss_is_weighted_by_the_held_out_rows_weights(monkeypatch):
    # as every other model's early stopping (nn._base.hold_out keeps the weights); TabNet
    # scored its hold-out unweighted: log_loss got no sample_weight
    from tabmoe.baselines import tabnet

    X, y = rare_class_table(200)
    y[y == "rare"] = "p"
    weight = 1.0 + np.arange(len(y)) / len(y)  # one weight per row: the weight names the row
    calls = []

    def spy(y_true, y_score, **kw):
        calls.append((np.asarray(y_true), kw.get("sample_weight")))
        return log_loss(y_true, y_score, **kw)

    monkeypatch.setattr(tabnet, "log_loss", spy)
    clf = small_tabnet(early_stopping=True).fit(X, y, sample_weight=weight)
    assert len(calls) == 2  # one per epoch
    codes = np.searchsorted(clf.classes_, y)
    for y_true, held_out in calls:
        assert held_out is not None and len(held_out) == len(y_true) == 20
        rows = np.rint((held_out - 1.0) * len(y)).astype(int)
        np.testing.assert_array_equal(weight[rows], held_out)
        np.testing.assert_array_equal(codes[rows], y_true)  # aligned with the scored rows
    metrics = clf.model_._metric_container_dict["val"].metrics
    assert all(metric.sample_weight is None for metric in metrics)  # handed back after fit


def test_an_eval_set_is_scored_with_unit_weights(monkeypatch):
    from tabmoe.baselines import tabnet

    X, y = rare_class_table(100)
    y[y == "rare"] = "p"
    calls = []

    def spy(y_true, y_score, **kw):
        calls.append(kw.get("sample_weight"))
        return log_loss(y_true, y_score, **kw)

    monkeypatch.setattr(tabnet, "log_loss", spy)
    small_tabnet().fit(X, y, sample_weight=np.linspace(1, 2, len(y)), eval_set=(X[:30], y[:30]))
    # unweighted, as every model's eval_set (the training rows' weights do not name its rows)
    assert len(calls) == 2 and all(w is None or np.array_equal(w, np.ones(30)) for w in calls)


def test_a_tabnet_fit_in_a_thread_leaves_other_threads_output_alone(monkeypatch, capsys):
    """A quiet TabNet fit redirected sys.stdout, which is process-wide, for the whole fit: a
    caller printing while the fit ran in a background thread lost every line."""
    import threading

    from tabmoe.baselines import tabnet

    inside, printed = threading.Event(), threading.Event()
    counted = tabnet.StepCounter.on_batch_end

    def on_batch_end(self, batch, logs=None):
        inside.set()
        printed.wait(timeout=30)
        counted(self, batch, logs)

    monkeypatch.setattr(tabnet.StepCounter, "on_batch_end", on_batch_end)
    X, y = rare_class_table()
    fit = threading.Thread(target=small_tabnet(early_stopping=True).fit, args=(X, y))
    fit.start()
    try:
        assert inside.wait(timeout=60)
        print("the caller's line")
    finally:
        printed.set()
        fit.join(timeout=120)
    assert not fit.is_alive()
    out = capsys.readouterr().out
    assert "the caller's line" in out
    assert "Stop training" not in out  # pytorch-tabnet's own lines stay silenced


def test_an_inf_in_x_unlabeled_or_x_val_is_named_not_called_input_x():
    """"Input X contains infinity in column 'num'" was about X_unlabeled (or eval_set's X_val),
    while X held none."""
    X, y = rare_class_table()
    bad = X.assign(num=np.inf)
    with pytest.raises(ValueError, match=r"^X_unlabeled contains infinity in column 'num'"):
        small_tabnet().fit(X, y, X_unlabeled=bad)
    with pytest.raises(ValueError, match=r"^eval_set's X_val contains infinity in column 'num'"):
        small_tabnet().fit(X, y, eval_set=(bad, y))
