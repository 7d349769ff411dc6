"""Study 55's research-only readers (benchmarks/impute_unknown.py): a value unseen at fit
read as a mixture over the column's seen values."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from .test_research_rules import import_benchmark


@pytest.fixture(scope="module")
def impute():
    return import_benchmark("impute_unknown")


@pytest.fixture(scope="module")
def table():
    rng = np.random.RandomState(1)
    n = 400
    y = rng.randint(0, 3, n)
    X = pd.DataFrame({
        "a": pd.Categorical(np.where(rng.rand(n) < 0.7, y, rng.randint(0, 3, n)).astype(str)),
        "b": pd.Categorical(rng.choice(list("xyzw"), n, p=[0.5, 0.3, 0.15, 0.05])),
        "c": rng.randn(n) + y,
    })
    X.loc[:9, "a"] = np.nan  # MISSING is not UNKNOWN: never re-read
    return X, np.array(["lo", "mid", "hi"])[y]


@pytest.fixture(scope="module")
def fitted(impute, table):
    X, y = table
    return impute.ImputedUnknownClassifier(max_epochs=5, device="cpu", random_state=0, unknown="token").fit(X, y)


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def read_unseen_b(impute, X, fitted, source):
    """Rows 10-29 with b unseen at fit, the reader's probabilities of them, and b's position."""
    rows = X.iloc[10:30].copy()
    rows["b"] = rows["b"].astype(object)
    rows["b"] = "unseen"
    head = quiet(fitted._label_logits, rows)
    return rows, np.exp(quiet(impute.imputed_logits, fitted, rows, head, source)), list(X.columns).index("b")


def test_rows_without_one_unseen_value_keep_the_label_heads_reading(impute, table, fitted):
    X, _ = table
    rows = X.iloc[:40].astype({"a": object, "b": object})
    rows.loc[rows.index[20:], ["a", "b"]] = "never"  # two unseen values: not re-read either
    for source in impute.SOURCES:
        head = quiet(fitted._label_logits, rows)
        got = quiet(impute.imputed_logits, fitted, rows, head, source)
        np.testing.assert_allclose(got, torch.log_softmax(torch.from_numpy(head), 1).numpy(), atol=1e-6)
    readings = quiet(fitted.readings, rows)
    for pred in readings.values():
        np.testing.assert_array_equal(pred, quiet(fitted.predict, rows))


def test_frequency_reading_is_the_mixture_of_the_completed_rows(impute, table, fitted):
    # Reference through the public predict_proba: the row completed with each seen value of b,
    # weighted by that value's share of the training rows the estimator kept.
    X, _ = table
    rows, got, j = read_unseen_b(impute, X, fitted, "frequency")
    kept = fitted.train_sample_tokens_[:, j]
    expected = np.zeros_like(got, dtype=np.float64)
    for value in ["x", "y", "z", "w"]:
        token = fitted.tokenizer_.transform(pd.DataFrame({"a": ["0"], "b": [value], "c": [0.0]}))[0, j]
        share = np.mean(kept == token)
        completed = rows.copy()
        completed["b"] = value
        expected += share * fitted.predict_proba(completed)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    assert not np.allclose(got, quiet(fitted.predict_proba, rows), atol=1e-3)  # the UNKNOWN reading


def test_conditional_q_is_the_label_weighted_leave_one_out_head(impute, table, fitted):
    # The masked plain pass the reader uses equals the one-pass leave-one-out form the
    # feature heads are trained with (one layer), and q is a distribution.
    X, _ = table
    rows = X.iloc[10:30]
    tokens = torch.from_numpy(fitted._transform(rows)).long()
    module, j = fitted.module_.eval(), 1
    ids = torch.from_numpy(np.asarray(fitted.tokenizer_.output_token_ids(j))).long()
    order = np.searchsorted(np.sort(fitted.label_token_ids_), fitted.label_token_ids_)
    with torch.no_grad():
        q = impute._conditional(fitted, module, tokens, None, j, ids, order)
        left_out = torch.ones_like(tokens, dtype=torch.bool)
        left_out[:, j] = False
        weight = torch.softmax(module.label_logits(tokens, left_out)[:, order], 1)
        expected = torch.zeros_like(q)
        for k, label in enumerate(fitted.label_token_ids_):
            full = torch.nn.functional.pad(tokens, (0, 1), value=int(label))
            h = module.hidden_loo(full)[:, j]
            expected += weight[:, k : k + 1] * torch.softmax(module.heads.column_logits(h, ids), 1)
    torch.testing.assert_close(q, expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(q.sum(1), torch.ones(len(q)), rtol=1e-5, atol=1e-6)


def test_conditional_reading_mixes_the_completed_rows_by_q(impute, table, fitted):
    X, _ = table
    rows, got, j = read_unseen_b(impute, X, fitted, "conditional")
    tokens = torch.from_numpy(quiet(fitted._transform, rows)).long()
    ids = np.asarray(fitted.tokenizer_.output_token_ids(j))
    order = np.searchsorted(np.sort(fitted.label_token_ids_), fitted.label_token_ids_)
    with torch.no_grad():
        q = impute._conditional(fitted, fitted.module_.eval(), tokens, None, j, torch.from_numpy(ids), order)
    expected = np.zeros_like(got, dtype=np.float64)
    value_of = {}
    for value in ["x", "y", "z", "w"]:
        one = pd.DataFrame({"a": ["0"], "b": [value], "c": [0.0]})
        value_of[int(fitted.tokenizer_.transform(one)[0, j])] = value
    assert sorted(value_of) == sorted(ids.tolist())
    for v, token in enumerate(ids):
        value = value_of[int(token)]
        completed = rows.copy()
        completed["b"] = value
        expected += q[:, v : v + 1].numpy() * fitted.predict_proba(completed)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


def test_readers_refuse_what_they_cannot_read(impute, table, fitted):
    X, _ = table
    head = quiet(fitted._label_logits, X.iloc[:5])
    with pytest.raises(ValueError, match="source must be one of"):
        impute.imputed_logits(fitted, X.iloc[:5], head, "mode")
    excluded = fitted.set_params(unknown="exclude")
    try:
        with pytest.raises(ValueError, match="unknown='token'"):
            impute.imputed_logits(excluded, X.iloc[:5], head, "frequency")
    finally:
        fitted.set_params(unknown="token")


def test_research_make_tabmoe_builds_the_reader_alone():
    research = import_benchmark("research")
    model = research.make_tabmoe({"impute_unknown": True, "max_epochs": 3}, 4)
    assert type(model).__name__ == "ImputedUnknownClassifier" and model.random_state == 4
    with pytest.raises(SystemExit, match="impute_unknown does not combine"):
        research.make_tabmoe({"impute_unknown": True, "row_weight": 0.1}, 0)


@pytest.mark.parametrize("value", ["true", 1, "yes"])
def test_research_impute_unknown_takes_only_a_bool(value):
    """``--variant x:impute_unknown=true`` (or ``=1``) fitted the plain estimator under the
    name, without a word: only the literal ``True`` chose the reader."""
    research = import_benchmark("research")
    with pytest.raises(SystemExit, match=rf"impute_unknown must be True or False, got {value!r}"):
        research.make_tabmoe({"impute_unknown": value}, 0)
    assert type(research.make_tabmoe({"impute_unknown": False}, 0)).__name__ == "TabularMoEClassifier"
