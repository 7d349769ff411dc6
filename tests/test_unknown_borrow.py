"""``unknown="borrow"`` (study 70): a category unseen in its column, kept by other categorical
columns, read at predict as their tokens of it, the label's probabilities averaged."""

import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError

from tabmoe import TabularMoEClassifier
from tabmoe._estimator_predict import borrowed_cells
from tabmoe.tokenizer import UNKNOWN


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pq"), 300), "b": rng.choice(list("pqr"), 300),
                      "c": rng.choice(list("pqr"), 300), "n": rng.normal(size=300)})
    y = np.where((X["b"] == "r") ^ (X["n"] > 0), "yes", "no")
    model = TabularMoEClassifier(max_epochs=5, random_state=0, device="cpu", unknown="borrow").fit(X, y)
    return model, X


def quiet(call, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args)


def test_a_value_other_columns_kept_is_read_as_the_mean_over_their_tokens(fitted):
    model, X = fitted
    row = pd.DataFrame({"a": ["r"], "b": ["p"], "c": ["q"], "n": [0.3]})
    tok = model.tokenizer_
    base = quiet(model.tokenizer_.transform, row).astype(np.int64)
    assert base[0, 0] == UNKNOWN
    probs = []
    for other in (1, 2):  # b and c both kept "r"
        t = base.copy()
        t[0, 0] = tok.token_id(other, "r")
        logits = model.module_.eval().label_logits(torch.from_numpy(t), None, None).detach().float()
        column = np.searchsorted(np.sort(model.label_token_ids_), model.label_token_ids_)
        probs.append(torch.softmax(logits[:, column], 1).numpy())
    expected = np.mean(probs, axis=0)
    assert np.allclose(quiet(model.predict_proba, row), expected, atol=1e-6)
    token = quiet(model.set_params(unknown="token").predict_proba, row)
    model.set_params(unknown="borrow")
    assert not np.allclose(token, expected, atol=1e-4)  # the reading moved the row


def test_other_rows_read_as_with_the_unknown_token(fitted):
    model, X = fitted
    rows = pd.DataFrame({"a": ["p", "z", "r"], "b": ["q", "p", "z"], "c": ["r", "q", "z"], "n": [0.1, -1.0, 2.0]})
    # row 0: no unseen value; row 1: "z" kept by no column; row 2: two unseen cells
    assert borrowed_cells(model.tokenizer_, rows, quiet(model.tokenizer_.transform, rows)) == []
    borrow = quiet(model.predict_proba, rows)
    token = quiet(model.set_params(unknown="token").predict_proba, rows)
    model.set_params(unknown="borrow")
    np.testing.assert_array_equal(borrow, token)
    np.testing.assert_array_equal(quiet(model.predict_proba, X[:40]),
                                  quiet(model.set_params(unknown="token").predict_proba, X[:40]))
    model.set_params(unknown="borrow")


def test_borrow_is_a_reading_set_after_fit_and_warned_about(fitted):
    model, _ = fitted
    row = pd.DataFrame({"a": ["r"], "b": ["p"], "c": ["q"], "n": [0.3]})
    with pytest.warns(UserWarning, match="unknown='borrow'"):
        model.predict(row)
    model.set_params(unknown="borrowed")
    with pytest.raises(InvalidParameterError, match="unknown"):
        model.predict(row)
    model.set_params(unknown="borrow")


def test_shared_vocabulary_reads_as_with_the_unknown_token():
    """vocabulary="shared" maps a value another column kept to its one token already, and keeps
    a value rarer than min_frequency in its own column UNKNOWN: borrowing read that rare value
    as the shared token (paper_config() with min_frequency=20 moved its probabilities)."""
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pq"), 300), "b": rng.choice(list("pqr"), 300),
                      "c": rng.choice(list("pqr"), 300)})
    X.loc[:9, "a"] = "r"  # rare in a (10 rows < 20), kept by b and c
    y = np.where((X["b"] == "r") ^ (X["c"] == "p"), "yes", "no")
    model = TabularMoEClassifier(max_epochs=3, random_state=0, device="cpu", vocabulary="shared",
                                 min_frequency=20).fit(X, y)
    rows = X.iloc[:40].assign(a="r")
    assert (quiet(model.tokenizer_.transform, rows)[:, 0] == UNKNOWN).all()
    borrow = quiet(model.predict_proba, rows)
    token = quiet(model.set_params(unknown="token").predict_proba, rows)
    np.testing.assert_array_equal(borrow, token)


def test_borrowed_copies_are_run_in_groups_no_larger_than_a_chunk(fitted, monkeypatch):
    """A chunk's borrowed copies were concatenated at once: up to (categorical columns - 1)
    times the chunk's tokens (150 yes/no columns: 343 MB for 4,000 rows against 2 MB with
    "token"). They are run in groups of at most a chunk's rows now, with the same answers."""
    import tabmoe.nn._base as base

    model, X = fitted
    rows = X.iloc[:40].assign(a="r")  # each row: two copies (b's and c's "r")
    expected = quiet(model.predict_proba, rows)
    monkeypatch.setattr(base, "PREDICT_TOKENIZE_CELLS", 1)
    monkeypatch.setattr(type(model), "_predict_rows", lambda self: 4)  # chunks of 4 rows
    seen, run = [], type(model)._run_label

    def recording(self, module, device, tokens, positions, rows):
        seen.append(len(tokens))
        return run(self, module, device, tokens, positions, rows)

    monkeypatch.setattr(type(model), "_run_label", recording)
    np.testing.assert_allclose(quiet(model.predict_proba, rows), expected, rtol=0, atol=1e-6)
    assert len(seen) == 30 and max(seen) == 4  # 10 chunks: their 4 rows, then 2 groups of 2 rows' copies (8 at once before)
