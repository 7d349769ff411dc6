"""n_members: M models trained side by side as one batched model."""

import copy
import re
from dataclasses import replace

import numpy as np
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn.ensemble import MemberLoss, StackedModel
from tabmoe.nn.network import TabularMoE
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table


def test_members_train_exactly_as_separate_models():
    from .test_moe import make_model, random_tokens

    members = [make_model(seed=s, scale=0.3, dtype=torch.float32).train() for s in range(3)]
    for m in members:
        for block in m.blocks:
            block.dropout.p = 0.0  # deterministic, so batched == separate
    separate = [copy.deepcopy(m) for m in members]
    stacked = StackedModel(members)
    tokens = random_tokens(96)
    data = {"tokens": tokens, "weight": torch.ones(len(tokens))}
    objective = MaskedFeatureObjective()
    config = TrainerConfig(max_epochs=2, batch_size=16, seed=0)
    stacked_history = Trainer(replace(config, n_members=3)).fit(stacked, data, MemberLoss(objective)).history
    separate_losses = []
    for m, model in enumerate(separate):
        history = Trainer(config).fit(model, data, objective).history  # the same batches
        separate_losses.append([r["train_loss"] for r in history])
        trained = stacked.member(m)
        for (name, p), q in zip(model.named_parameters(), trained.parameters(), strict=True):
            if name.endswith("key.bias"):
                # softmax is invariant to it (q . b_K is the same for every key): its gradient
                # is rounding noise, which Adam normalises; it does not change any output
                continue
            torch.testing.assert_close(p, q, atol=2e-6, rtol=1e-5, msg=name)
        with torch.no_grad():
            torch.testing.assert_close(model.eval().label_logits(tokens), trained.label_logits(tokens), atol=1e-5, rtol=1e-5)
    # the stacked model minimises the members' summed loss; its train_loss is their mean
    np.testing.assert_allclose([r["train_loss"] for r in stacked_history], np.mean(separate_losses, 0), rtol=1e-5)


def test_stacked_logits_average_member_probabilities():
    from .test_moe import make_model, random_tokens

    members = [make_model(seed=s, scale=0.3) for s in range(4)]
    stacked = StackedModel(members).eval()
    tokens = random_tokens(20)
    with torch.no_grad():
        got = torch.softmax(stacked.label_logits(tokens), -1)
        expected = torch.stack([torch.softmax(m.label_logits(tokens), -1) for m in members]).mean(0)
    torch.testing.assert_close(got, expected)
    assert stacked.label_ids is members[0].label_ids or torch.equal(stacked.label_ids, members[0].label_ids)


def test_estimator_members_are_independent_and_default_is_single():
    X, y = toy_table()
    single = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(X, y)
    assert isinstance(single.module_, TabularMoE)
    ens = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", n_members=3).fit(X, y)
    assert isinstance(ens.module_, StackedModel) and ens.module_.n_members == 3
    weights = [m.token_embedding.weight for m in ens.module_.members()]
    assert not torch.allclose(weights[0], weights[1])
    # member 0 has the single model's initialisation (same seed, built first)
    p = ens.predict_proba(X)
    np.testing.assert_allclose(p.sum(1), 1, atol=1e-6)
    assert all(np.isfinite(r["train_loss"]) for r in ens.history_)


def test_save_load_round_trip_keeps_members_sample_and_importances(tmp_path):
    X, y = toy_table()
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", n_members=2).fit(X, y)
    clf.save(tmp_path / "ens.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "ens.tabmoe")
    assert isinstance(loaded.module_, StackedModel)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.train_sample_tokens_, clf.train_sample_tokens_)
    np.testing.assert_array_equal(loaded.feature_importances_, clf.feature_importances_)
    # adapt continues identically from a loaded model
    a = loaded.adapt(X.head(40), max_epochs=1).predict_proba(X)
    b = clf.adapt(X.head(40), max_epochs=1).predict_proba(X)
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_progress_bar_shows_the_members_mean_train_loss_that_history_holds(capsys):
    """The bar showed the trainer's sum over the members: twice history_'s mean, with two."""
    X, y = toy_table(n=120)
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", n_members=2, verbose=1).fit(X, y)
    shown = re.findall(r"train_loss=([\d.]+)", capsys.readouterr().err)
    assert shown and shown[-1] == f"{clf.history_[-1]['train_loss']:.4f}"
    clf.adapt(X, max_epochs=1)
    shown = re.findall(r"train_loss=([\d.]+)", capsys.readouterr().err)
    assert shown and shown[-1] == f"{clf.adapt_history_[-1]['train_loss']:.4f}"


def test_early_stopping_watches_the_ensembles_averaged_probabilities():
    """docs/guide/training.md: an ensemble stops as one, on the log-loss of its members'
    averaged probabilities (not their mean log-loss); every member keeps that epoch."""
    from sklearn.metrics import log_loss

    X, y = toy_table(n=160)
    X_val, y_val = toy_table(n=80, seed=1)
    clf = TabularMoEClassifier(max_epochs=3, random_state=0, device="cpu", n_members=2,
                               early_stopping=True).fit(X, y, eval_set=(X_val, y_val))
    kept = clf.history_[clf.best_epoch_ - 1]
    assert kept["epoch"] == clf.best_epoch_
    ensemble = log_loss(y_val, clf.predict_proba(X_val), labels=clf.classes_)
    np.testing.assert_allclose(kept["val_loss"], ensemble, rtol=1e-4)
    tokens, attend, position = clf._feature_tokens(X_val)
    order = np.searchsorted(np.sort(clf.label_token_ids_), clf.label_token_ids_)
    with torch.no_grad():
        members = [torch.softmax(m.label_logits(tokens.long(), attend, position), -1).numpy()[:, order]
                   for m in clf.module_.members()]
    assert abs(np.mean([log_loss(y_val, p, labels=clf.classes_) for p in members]) - ensemble) > 1e-4
