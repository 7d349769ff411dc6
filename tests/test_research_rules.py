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
    rows = research.resolve_rules({"validation_fraction": "floor:0.5"}, 1000, 5)["validation_fraction"]
    assert rows == 100  # never more than AUTO_VALIDATION_FRACTION of the rows


def test_plain_values_pass_through(research):
    params = {"validation_fraction": 0.1, "batch_size": 64, "feature_loss_weight": 0.1}
    assert research.resolve_rules(params, 5000, 10) == params
