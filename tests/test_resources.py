"""Memory bounds on large tables (slow): each figure is measured in a fresh process by
benchmarks/memory.py (peak RSS of the fit or predict call, above the RSS when it started,
input table included in the latter). The bounds and their derivation: docs/reliability.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import tabmoe.estimator
from tabmoe import TabularMoEClassifier

from .conftest import REPO

MIB = 2**20


def measure(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "memory.py"), *args],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if report["step_peak_mib"] is None:
        pytest.skip("peak RSS of one step needs Linux /proc/self/clear_refs")
    return report


@pytest.mark.slow
def test_fit_million_rows_fifty_columns_under_2_5_gib():
    """Tokens (int32, plus the validation split's copy) + one batch of leave-one-out attention
    (B x H x L^2 floats, a few copies): 1.7 GiB measured."""
    report = measure(
        "fit-wide", "--rows", "1000000", "--columns", "50", "--batch-size", "4096",
        "--max-batches", "5",
    )  # fmt: skip
    assert report["step_peak_above_before_mib"] < 2560, report


@pytest.mark.slow
def test_fit_million_category_column_with_min_frequency_under_768_mib():
    """The recommended setting for an id-like column: values seen once fold into UNKNOWN
    (264 MiB measured, one full epoch)."""
    report = measure("fit-ids", "--rows", "1000000", "--batch-size", "4096", "--min-frequency", "2")
    assert report["n_tokens"] < 100, report  # the ids were folded
    assert report["step_peak_above_before_mib"] < 768, report


@pytest.mark.slow
def test_million_category_head_caps_the_batch_and_memory():
    """Without folding, a 10^6-value output layer: batch_size=4096 would need ~47 GiB of
    logits and their gradients (11.5 MiB per row of batch, measured at 32 and 256 rows);
    batches are capped at 33 rows, with a warning naming the column. 1.2 GiB measured."""
    report = measure(
        "fit-ids", "--rows", "1000000", "--batch-size", "4096", "--min-frequency", "1",
        "--max-batches", "3",
    )  # fmt: skip
    assert report["n_tokens"] > 10**6, report
    assert any(
        "'user' has 1,000,000 categories" in w and "capped at 33 rows" in w
        for w in report["warnings"]
    ), report
    assert report["step_peak_above_before_mib"] < 2048, report


@pytest.mark.slow
def test_predict_memory_is_flat_in_the_number_of_rows():
    """predict_proba works in batches of 8192 rows: beyond a constant, its memory grows only
    by the tokens (int16, 2 bytes x 50 columns), the outputs (float32 logits + float64 log
    probabilities and probabilities, 28 bytes x 2 classes) and per-column temporaries of the
    tokenizer (64 bytes): at most 220 bytes a row."""
    small = measure("predict", "--rows", "100000", "--columns", "50")
    large = measure("predict", "--rows", "1000000", "--columns", "50")
    per_row = 2 * 50 + 28 * 2 + 64
    growth = large["step_peak_above_before_mib"] - small["step_peak_above_before_mib"]
    assert growth < (900_000 * per_row) / MIB + 64, (small, large)
    assert large["step_peak_above_before_mib"] < (1_000_000 * per_row) / MIB + 128, large


def test_huge_output_layers_cap_rows_per_batch_with_a_warning(monkeypatch):
    """The cap of the slow test above, at a small scale: 2,000 ids + 3 + 2 classes = 2,005
    logits a row, 20,000 allowed -> 9 rows a batch instead of 512."""
    monkeypatch.setattr(tabmoe.estimator, "MAX_BATCH_LOGITS", 20_000)
    X = pd.DataFrame({"id": [f"u{i}" for i in range(2000)], "plan": np.arange(2000) % 3})
    y = np.arange(2000) % 2
    clf = TabularMoEClassifier(max_epochs=1, batch_size=512, device="cpu", random_state=0)
    with pytest.warns(
        UserWarning, match=r"'id' has 2,000 categories.*capped at 9 rows \(instead of 512\)"
    ):
        clf.fit(X, y)
    with pytest.warns(UserWarning, match=r"'id' has 2,000 categories.*capped at 9 rows") as caught:
        clf.adapt(X.iloc[:100], max_epochs=1)  # continued training is capped too
    assert caught[0].filename == __file__
    monkeypatch.setattr(tabmoe.estimator, "MAX_BATCH_LOGITS", 2**25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the real cap leaves ordinary tables alone
        TabularMoEClassifier(max_epochs=1, batch_size=512, device="cpu").fit(X, y)
