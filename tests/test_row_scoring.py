"""Study 53's research-only reader (benchmarks/row_scoring.py): the class whose completed row
the fitted network finds most probable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe.tokenizer import MASK

from .test_research_rules import import_benchmark


@pytest.fixture(scope="module")
def row_scoring():
    return import_benchmark("row_scoring")


@pytest.fixture(scope="module")
def table():
    rng = np.random.RandomState(0)
    n = 300
    y = rng.randint(0, 3, n)
    X = pd.DataFrame({
        "a": pd.Categorical(np.where(rng.rand(n) < 0.8, y, rng.randint(0, 3, n)).astype(str)),
        "b": pd.Categorical(rng.choice(list("xyz"), n)),
        "c": rng.randn(n) + y,
    })
    X.loc[:9, "b"] = np.nan  # MISSING: not a value the heads predict
    return X, np.array(["lo", "mid", "hi"])[y]


@pytest.fixture(scope="module")
def fitted(row_scoring, table):
    X, y = table
    model = row_scoring.RowScoredClassifier(max_epochs=5, device="cpu", random_state=0)
    return model.fit(X, y)


def test_feature_log_likelihood_is_the_masked_columns_log_probability(row_scoring, table, fitted):
    # Reference: each feature column masked in its own copy of the completed row, one plain
    # forward pass per copy, the column's own head read at its position.
    X, _ = table
    rows = X.iloc[:12]
    got = row_scoring.feature_log_likelihood(fitted, rows)
    tokens = torch.from_numpy(fitted._transform(rows)).long()
    module = fitted.module_.eval()
    expected = np.zeros_like(got)
    with torch.no_grad():
        for k, label in enumerate(fitted.label_token_ids_):
            full = torch.nn.functional.pad(tokens, (0, 1), value=int(label))
            for j in range(tokens.shape[1]):
                masked = full.clone()
                masked[:, j] = MASK
                h = module.hidden(masked)[:, j]
                ids = torch.from_numpy(np.sort(fitted.tokenizer_.output_token_ids(j))).long()
                logp = torch.log_softmax(module.heads.column_logits(h, ids).double(), dim=1)
                hit = ids.unsqueeze(0) == full[:, j : j + 1]  # (B, P): the row's value among the column's
                expected[:, k] += torch.where(hit.any(1), (logp * hit).sum(1), torch.zeros(len(rows), dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert np.isfinite(got).all() and (got < 0).all()


def test_zero_weight_is_the_estimators_prediction(row_scoring, table, fitted):
    X, y = table
    plain = fitted.predict_proba(X)
    reader = row_scoring.RowScoredClassifier(max_epochs=5, device="cpu", random_state=0).fit(X, y)
    np.testing.assert_array_equal(reader.predict_proba(X), plain)
    reader.row_weight = 0.1
    scored = reader.predict_log_proba(X)
    head = np.log(plain)
    expected = head + 0.1 * row_scoring.feature_log_likelihood(reader, X)
    expected -= np.log(np.exp(expected).sum(1, keepdims=True))
    np.testing.assert_allclose(scored, expected, rtol=1e-4, atol=1e-4)


def test_research_variant_builds_the_reader(table):
    research = import_benchmark("research")
    model = research.make_tabmoe({"row_weight": 1, "max_epochs": 3}, seed=2)
    assert type(model).__name__ == "RowScoredClassifier" and model.row_weight == 1.0
    assert model.random_state == 2 and model.max_epochs == 3
    assert type(research.make_tabmoe({"row_weight": 0}, seed=2)).__name__ == "TabularMoEClassifier"
    with pytest.raises(SystemExit, match="row_weight"):
        research.make_tabmoe({"row_weight": -1}, seed=0)


def test_scores_are_in_classes_order_when_label_ids_are_not(row_scoring):
    # A shared vocabulary gives a class equal to a feature value that value's (lower) token
    # id: "z" comes before "a" and "b" among the label ids, after them in classes_. A
    # feature column copying the label then decides the row's likeliest completion.
    rng = np.random.RandomState(1)
    codes = rng.randint(0, 3, 400)
    y = np.array(["a", "b", "z"])[codes]
    X = pd.DataFrame({"copy": pd.Categorical(np.array(["A", "B", "Z"])[codes]),
                      "noise": pd.Categorical(rng.choice(list("pqz"), 400))})
    model = row_scoring.RowScoredClassifier(
        vocabulary="shared", max_epochs=30, device="cpu", random_state=0
    ).fit(X, y)
    assert not np.all(np.diff(model.label_token_ids_) > 0), model.label_token_ids_
    likeliest = model.classes_[row_scoring.feature_log_likelihood(model, X).argmax(1)]
    assert np.mean(likeliest == y) > 0.95
