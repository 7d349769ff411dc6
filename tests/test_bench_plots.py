"""The report's gap figure: grouped bars while they can be read, else a table of cells (the
bars of openml-ood's 14 splits x 13 models were 8,008 pixels wide, the legend over them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")  # extra "bench"

import matplotlib.image

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


@pytest.mark.parametrize(("n_splits", "n_models"), [(2, 2), (14, 13)])
def test_dollar_signs_in_names_are_printed_not_parsed_as_mathtext(tmp_path, n_splits, n_models):
    """Two ``$`` in a split (or suite) name started matplotlib's mathtext: ``a_$1_$2`` failed
    to parse ("ParseSyntaxException: Expected ..."), and with it the whole report."""
    from tabmoe.bench._plots import plot_id_vs_ood

    rows = gap_rows(n_splits, n_models).assign(id_mean=0.8, ood_mean=0.7, id_sd=0.01, ood_sd=0.01)
    rows["split"] = rows["split"].str.replace("split-", "a_$1_$")
    plot_gap(rows, tmp_path / "gap.png", "suite $x_$ gap")
    plot_id_vs_ood(rows, tmp_path / "id_vs_ood.png", "suite $x_$ accuracy")
    assert (tmp_path / "gap.png").stat().st_size > 0 and (tmp_path / "id_vs_ood.png").stat().st_size > 0
