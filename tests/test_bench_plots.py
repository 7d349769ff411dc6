"""The report's gap figure: grouped bars while they can be read, else a table of cells (the
bars of openml-ood's 14 splits x 13 models were 8,008 pixels wide, the legend over them)."""

from __future__ import annotations

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from tabmoe.bench._plots import MAX_GAP_BARS, plot_gap


def gap_rows(n_splits: int, n_models: int, gap: float | None = 0.1) -> pd.DataFrame:
    return pd.DataFrame([
        {"split": f"split-{s}", "model": f"model-{m}", "gap_mean": np.nan if gap is None else gap * (s - m),
         "gap_sd": 0.01}
        for s in range(n_splits) for m in range(n_models)
    ])


@pytest.mark.parametrize(("n_splits", "n_models"), [(2, 4), (14, 13), (13, 8)])
def test_the_gap_figure_stays_readable_however_many_bars(tmp_path, n_splits, n_models):
    path = tmp_path / "gap.png"
    plot_gap(gap_rows(n_splits, n_models), path, "gap")
    height, width = matplotlib.image.imread(path).shape[:2]
    assert width <= 2000 and height <= 1200, (width, height)
    if n_splits * n_models > MAX_GAP_BARS:  # cells of about 80 px a model
        assert width >= 60 * n_models


def test_a_gap_figure_without_any_gap_is_still_written(tmp_path):
    """The paper protocol scores no ID test part: every gap is missing."""
    path = tmp_path / "gap.png"
    plot_gap(gap_rows(13, 8, gap=None), path, "gap")
    assert path.stat().st_size > 0
