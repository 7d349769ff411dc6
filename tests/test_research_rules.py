"""benchmarks/research.py's table-dependent rules resolve to the parameters a study claims."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from tabmoe.nn._base import validation_split

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def research():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("research")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("n_rows", [15, 300, 999, 1000, 2099, 10_000])
def test_floor_rule_is_auto_up_to_ten_thousand_rows(research, n_rows):
    # Study 30's variant must hold out exactly what "auto" does on every table the earlier
    # studies measured, so that its pairs there would be ties.
    rows = research.resolve_rules({"validation_fraction": "floor:0.01"}, n_rows, 5)["validation_fraction"]
    y = np.arange(n_rows) % 2
    auto_val = validation_split(y, "auto", seed=0)[1]
    assert isinstance(rows, int) and rows == len(auto_val)


@pytest.mark.parametrize(("n_rows", "expected"), [(10_001, 101), (13_681, 137), (30_682, 307)])
def test_floor_rule_holds_out_the_share_above_ten_thousand_rows(research, n_rows, expected):
    rows = research.resolve_rules({"validation_fraction": "floor:0.01"}, n_rows, 5)["validation_fraction"]
    assert rows == expected


def test_a_larger_floor_stops_at_the_plain_share(research):
    rows = research.resolve_rules({"validation_fraction": "floor:0.5"}, 2000, 5)["validation_fraction"]
    assert rows == 200  # never more than AUTO_VALIDATION_FRACTION of the rows (not the 100 cap)


def test_plain_values_pass_through(research):
    params = {"validation_fraction": 0.1, "batch_size": 64, "feature_loss_weight": 0.1}
    assert research.resolve_rules(params, 5000, 10) == params


def test_fit_and_score_records_log_loss_only_for_classes_seen_in_training(research):
    import pandas as pd

    from tabmoe import TabularMoEClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 60), "b": rng.normal(size=60)})
    y = np.where(X["a"] == "x", "yes", "no").astype(object)
    estimator = TabularMoEClassifier(max_epochs=2, d_model=8, n_heads=2, ff_dim=8, random_state=0)
    seen = research.fit_and_score(estimator, X, y, {"validation": (X.iloc[:10], y[:10])})
    assert 0 < seen["validation_log_loss"] < 10 and seen["best_epoch"] is not None
    unseen = y[:10].copy()
    unseen[0] = "maybe"  # a class the training rows never had: its probability is 0
    out = research.fit_and_score(estimator, X, y, {"validation": (X.iloc[:10], unseen)})
    assert out["validation_log_loss"] is None and out["validation"] <= 0.9



def test_error_stopping_scores_the_hold_out_by_its_wrong_rows(research):
    """Study 46's score: the label's error rate plus 0.01 x its log loss. With every label
    swapped for the other class, the wrong rows become the right ones, so the two error
    rates sum to 1 (a score that compared against another target, or counted the right
    rows, would not)."""
    import pandas as pd
    import torch

    from tabmoe import TabularMoEClassifier
    from tabmoe.nn.objective import label_loss

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 80), "b": rng.choice(list("uv"), 80)})
    y = np.where((X["a"] == "x") ^ (rng.random(80) < 0.2), "yes", "no")
    model = research.make_tabmoe({"stop_on": "error", "max_epochs": 3, "d_model": 8,
                                  "n_heads": 2, "ff_dim": 8}, 0)
    assert isinstance(model, research.ErrorStoppedClassifier)
    assert model._get_val_loss() is research.label_error_loss
    assert type(research.make_tabmoe({}, 0)) is TabularMoEClassifier
    with pytest.raises(SystemExit, match="stop_on"):
        research.make_tabmoe({"stop_on": "accuracy"}, 0)
    model.fit(X, y)
    network = model.module_.eval()
    tokens = torch.from_numpy(model.train_sample_tokens_)
    ids = network.label_ids
    swapped = tokens.clone()
    swapped[:, -1] = torch.where(tokens[:, -1] == ids[0], ids[1], ids[0])
    scores = []
    with torch.no_grad():
        for t in (tokens, swapped):
            batch = {"tokens": t, "weight": torch.ones(len(t))}
            s, w = research.label_error_loss(network, batch)
            nll, w_nll = label_loss(network, batch)
            scores.append(float(s / w) - 0.01 * float(nll / w_nll))
    assert 0 <= scores[0] < 0.5
    assert scores[0] + scores[1] == pytest.approx(1.0, abs=1e-6)
