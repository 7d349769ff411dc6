"""Options of research study 12: ``n_bins="auto"``, ``unknown="exclude"``, ``label_smoothing``."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tabmoe import TabularMoEClassifier
from tabmoe.nn._base import encode_targets
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.tokenizer import UNKNOWN, ColumnTokenizer, auto_bins

from .moe_data import toy_table


def fit(**kw):
    X, y = toy_table()
    params = dict(max_epochs=3, random_state=0, device="cpu", batch_size=32)
    params.update(kw)
    return TabularMoEClassifier(**params).fit(X, y), X, y


# ------------------------------------------------------------------ n_bins="auto"
@pytest.mark.parametrize(("n", "bins"), [(1, 2), (8, 4), (125, 10), (1000, 20), (10_000, 43)])
def test_auto_bins_is_the_rice_rule(n, bins):
    assert auto_bins(n) == bins


def test_auto_n_bins_follows_the_rows_given_to_fit():
    rs = np.random.RandomState(0)
    for n in (125, 1000):
        X = rs.normal(size=(n, 2))
        tok = ColumnTokenizer(n_bins="auto").fit(X)
        assert tok.n_bins_ == auto_bins(n)
        assert [len(e) + 1 for e in tok.bin_edges_] == [auto_bins(n)] * 2
    assert ColumnTokenizer(n_bins=7).fit(X).n_bins_ == 7
    with pytest.raises(ValueError, match="n_bins"):
        ColumnTokenizer(n_bins="many").fit(X)


def test_auto_n_bins_in_the_estimator_survives_save_and_load(tmp_path):
    clf, X, _ = fit(n_bins="auto")
    assert clf.tokenizer_.n_bins_ == auto_bins(len(X))
    clf.save(tmp_path / "m.tabmoe")
    again = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert again.tokenizer_.n_bins_ == clf.tokenizer_.n_bins_ and again.n_bins == "auto"
    np.testing.assert_allclose(again.predict_proba(X), clf.predict_proba(X), atol=1e-6)


# ------------------------------------------------------------------ unknown="exclude"
def test_unknown_exclude_leaves_unseen_categories_out_of_the_attention():
    clf, X, _ = fit(unknown="exclude", missing="exclude")
    unseen = X.assign(color="purple")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the unseen-category warning
        assert (clf.tokenizer_.transform(unseen)[:, 0] == UNKNOWN).all()
        as_unseen = clf.predict_proba(unseen)
        # an unseen value is read as a missing one (both left out), not as the UNKNOWN token
        np.testing.assert_allclose(as_unseen, clf.predict_proba(X.assign(color=None)), atol=1e-7)
        with torch.no_grad():
            clf.module_.token_embedding.weight[UNKNOWN] += 5.0
        np.testing.assert_allclose(clf.predict_proba(unseen), as_unseen, atol=1e-7)
        token, _, _ = fit(missing="exclude")
        assert not np.allclose(token.predict_proba(unseen), token.predict_proba(X.assign(color=None)))
    with pytest.raises(ValueError, match="unknown"):
        fit(unknown="drop")
    with pytest.raises(ValueError, match="unknown_rate.*unknown='exclude'"):
        fit(unknown="exclude", unknown_rate=0.1)


@pytest.mark.parametrize(
    ("unknown", "reading"),
    [("token", "The model attends to UNKNOWN; unknown='exclude' leaves such values out of the attention."),
     ("exclude", "With unknown='exclude' the model leaves them out of the attention."),
     ("borrow", "predict reads a row's one such value that other columns kept as their tokens of it "
                "(unknown='borrow'), any other as UNKNOWN; unknown='exclude' leaves them out of the attention.")],
)
def test_the_unseen_value_warning_says_how_the_model_reads_them(unknown, reading):
    """Every way in (predict, explain, adapt's target rows) ends the tokenizer's warning with
    the estimator's reading of UNKNOWN; the tokenizer alone says only what it maps to."""
    clf, X, _ = fit(unknown=unknown)
    unseen = X.assign(color="purple")
    calls = [clf.predict_proba, clf.explain, lambda Z: clf.adapt(Z, max_epochs=1)]
    for call in calls:
        with pytest.warns(UserWarning) as caught:
            call(unseen)
        messages = [str(w.message) for w in caught if "not seen during fit" in str(w.message)]
        assert len(messages) == 1 and messages[0].startswith("Column 'color'")
        assert messages[0].endswith(f"(e.g. ['purple']). {reading}"), messages[0]
    with pytest.warns(UserWarning) as caught:
        clf.tokenizer_.transform(unseen)
    assert str(caught[0].message).endswith("to the UNKNOWN token (e.g. ['purple']).")


def test_a_saved_bin_count_is_checked(tmp_path):
    clf, _, _ = fit(n_bins="auto")
    state = clf.tokenizer_._get_state()
    for bad in ("x", True, 1, 3):  # 3 < the bins the numeric column has
        with pytest.raises(ValueError, match="n_bins"):
            ColumnTokenizer._from_state({**state, "n_bins": bad})


# ------------------------------------------------------------------ label_smoothing
def test_smoothed_nll_is_torch_cross_entropy_with_label_smoothing():
    clf, X, y = fit()
    tokens = torch.from_numpy(clf._tokens(X, encode_targets(clf.classes_, y)))
    heads = clf.module_.heads
    with torch.no_grad():
        hidden = clf.module_.hidden_loo(tokens, None, None)
        nll, valid = heads.nll(hidden, tokens, 0.2)
        plain, _ = heads.nll(hidden, tokens)
        tok = clf.tokenizer_
        output_ids = [tok.output_token_ids(j) for j in range(tok.n_features_in_)] + [clf.label_token_ids_]
        for j, column_ids in enumerate(output_ids):
            ids = torch.as_tensor(np.sort(column_ids))
            logits = heads.column_logits(hidden[:, j], ids)
            target = torch.searchsorted(ids, tokens[:, j].contiguous())
            expected = F.cross_entropy(logits, target, reduction="none", label_smoothing=0.2)
            np.testing.assert_allclose(nll[:, j], expected, rtol=1e-5, atol=1e-6)
    assert valid.all() and (nll != plain).any()


def test_label_smoothing_trains_only_and_changes_the_fit():
    clf0, X, y = fit()
    clf1, _, _ = fit(label_smoothing=0.1)
    assert not np.allclose(clf0.predict_proba(X), clf1.predict_proba(X))
    tokens = clf1._tokens(X, encode_targets(clf1.classes_, y))
    batch = clf1._rows(tokens, np.ones(len(tokens)))
    with torch.no_grad():
        smoothed = MaskedFeatureObjective(label_smoothing=0.3)(clf1.module_.eval(), batch)
        plain = MaskedFeatureObjective()(clf1.module_.eval(), batch)
        losses = []
        for smoothing in (0.0, 0.3):  # training mode, the same dropout masks
            torch.manual_seed(0)
            losses.append(MaskedFeatureObjective(label_smoothing=smoothing)(clf1.module_.train(), batch)[0])
    assert smoothed[0] == plain[0]  # eval mode (early stopping's loss): the plain NLL
    assert losses[1] > losses[0]  # smoothed targets cost more than the model's own fit of the true ones
    with pytest.raises(ValueError, match="label_smoothing"):
        MaskedFeatureObjective(label_smoothing=1.0)
    with pytest.raises(ValueError, match="label_smoothing"):
        fit(label_smoothing=-0.1)
