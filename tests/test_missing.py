"""Absent and missing columns left out of the attention; feature dropout."""

import numpy as np
import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn._base import encode_targets
from tabmoe.nn.objective import MaskedFeatureObjective, drop_features
from tabmoe.tokenizer import MISSING

from .moe_data import toy_table


def fit(**kw):
    X, y = toy_table()
    params = dict(max_epochs=3, random_state=0, device="cpu", batch_size=32)
    params.update(kw)
    return TabularMoEClassifier(**params).fit(X, y), X, y


def test_default_absent_column_is_a_clear_error():
    clf, X, _ = fit()
    with pytest.raises(ValueError, match=r"\['size'\].*missing='exclude'"):
        clf.predict(X.drop(columns="size"))


def test_exclude_absent_equals_nan_equals_not_attended():
    clf, X, _ = fit(missing="exclude", block="attention")
    absent = clf.predict_proba(X.drop(columns=["size", "noise1"]))
    nan = clf.predict_proba(X.assign(size=np.nan, noise1=None))
    np.testing.assert_allclose(absent, nan, atol=1e-7)
    tokens = torch.from_numpy(clf.tokenizer_.transform(X))
    attend = torch.ones_like(tokens, dtype=torch.bool)
    attend[:, [1, 3]] = False
    with torch.no_grad():
        logits = clf.module_.label_logits(tokens, attend)
    order = np.searchsorted(np.sort(clf.label_token_ids_), clf.label_token_ids_)
    np.testing.assert_allclose(absent, torch.softmax(logits.double(), 1).numpy()[:, order], atol=1e-6)
    e = clf.explain(X.drop(columns="size"))
    assert np.all(e.gates["size"] == 0) and np.all(e.head_gates.xs("size", axis=1, level="column") == 0)
    # the value in an excluded column does not matter, and "token" mode differs
    assert not np.allclose(absent, clf.predict_proba(X))
    with pytest.raises(ValueError, match=r"\['size'\].*\['extra'\] not seen during fit"):
        clf.predict(X.drop(columns="size").assign(extra=1))


def test_exclude_ignores_the_missing_token_at_fit_and_predict():
    """With missing='exclude' the MISSING embedding is never used: changing it changes nothing."""
    X, y = toy_table()
    X.loc[::4, "color"] = None
    X.loc[1::5, "size"] = np.nan
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", missing="exclude").fit(X, y)
    ref = clf.predict_proba(X)
    grads = []

    def loss_grad():
        clf.module_.zero_grad()
        tokens = clf._tokens(X, encode_targets(clf.classes_, y))
        batch = clf._rows(tokens, np.ones(len(tokens)))
        s, w = MaskedFeatureObjective()(clf.module_.eval(), batch)
        (s / w).backward()
        return clf.module_.token_embedding.weight.grad[MISSING].clone()

    grads.append(loss_grad())
    with torch.no_grad():
        clf.module_.token_embedding.weight[MISSING] += 5.0
    np.testing.assert_allclose(clf.predict_proba(X), ref, atol=1e-6)
    assert torch.all(grads[0] == 0)


def test_default_nan_is_an_attended_token():
    X, y = toy_table()
    X.loc[::4, "color"] = None
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(X, y)
    ref = clf.predict_proba(X)
    with torch.no_grad():
        clf.module_.token_embedding.weight[MISSING] += 5.0
    assert not np.allclose(clf.predict_proba(X), ref)


def test_drop_features_keeps_label_and_rate():
    torch.manual_seed(0)
    keep = drop_features(torch.Size([4000, 6]), 0.3, torch.device("cpu"), None)
    assert keep[:, -1].all()
    assert abs(1 - keep[:, :-1].float().mean().item() - 0.3) < 0.02
    attend = torch.ones(4000, 6, dtype=torch.bool)
    attend[:, 0] = False
    assert not drop_features(torch.Size([4000, 6]), 0.3, torch.device("cpu"), attend)[:, 0].any()


def test_feature_dropout_only_in_training_and_changes_the_fit():
    clf0, X, _ = fit(feature_dropout=0.0)
    clf1, _, _ = fit(feature_dropout=0.3)
    clf1b, _, _ = fit(feature_dropout=0.3)
    assert not np.allclose(clf0.predict_proba(X), clf1.predict_proba(X))
    np.testing.assert_array_equal(clf1.predict_proba(X), clf1b.predict_proba(X))  # seeded
    # eval mode: no dropout, so the objective is deterministic
    obj = MaskedFeatureObjective(feature_dropout=0.5)
    tokens = clf1._tokens(X, encode_targets(clf1.classes_, toy_table()[1]))
    batch = clf1._rows(tokens, np.ones(len(tokens)))
    with torch.no_grad():
        a, b = obj(clf1.module_.eval(), batch), obj(clf1.module_.eval(), batch)
    assert a[0] == b[0] and a[1] == b[1]
    with pytest.raises(ValueError, match="feature_dropout"):
        MaskedFeatureObjective(feature_dropout=1.0)


@pytest.mark.parametrize("name", ["missing", "unknown"])
def test_a_reading_mode_set_after_fit_is_read_and_an_invalid_one_refused(name):
    """missing and unknown are read where rows are read (predict, explain, adapt): set_params
    after fit changes the fitted network's reading; a typo ("exlcude") was read as "token"
    in silence by predict and explain (adapt and save refused it)."""
    clf, X, _ = fit()
    rows = X.assign(size=np.nan, color="never seen").iloc[:20]
    with pytest.warns(UserWarning, match="not seen during fit"):
        as_token = clf.predict_proba(rows)
    clf.set_params(**{name: "exclude"})
    with pytest.warns(UserWarning, match="not seen during fit"):
        assert not np.allclose(clf.predict_proba(rows), as_token)
    clf.set_params(**{name: "exlcude"})
    for read in (clf.predict_proba, clf.explain):
        with pytest.raises(ValueError, match=rf"'{name}' parameter .* Got 'exlcude' .*set_params after fit"):
            read(rows)
    clf.set_params(**{name: "token"})
    with pytest.warns(UserWarning, match="not seen during fit"):
        np.testing.assert_array_equal(clf.predict_proba(rows), as_token)
