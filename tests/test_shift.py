"""Shift report: label TV, covariate AUC, and the flags."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tabmoe.data import Table
from tabmoe.data.shift import (
    label_distribution,
    markdown_labels,
    markdown_table,
    shift_report,
    total_variation,
)
from tabmoe.data.sources import SimulationSource
from tabmoe.data.splits import SplitDefinition, ValueSplit

N = 2000


@pytest.fixture
def table() -> Table:
    rng = np.random.RandomState(0)
    region = rng.choice(["north", "south"], size=N)
    coin = rng.choice(["heads", "tails"], size=N)
    # features depend on region, not on coin
    x = np.where(region == "north", rng.normal(2, 1, N), rng.normal(-2, 1, N))
    colour = np.where(rng.rand(N) < np.where(region == "north", 0.9, 0.1), "red", "blue")
    label = np.where(rng.rand(N) < 0.5, "yes", "no")
    data = pd.DataFrame({
        "region": pd.Categorical(region), "coin": pd.Categorical(coin), "x": x,
        "colour": pd.Categorical(colour), "label": pd.Categorical(label),
    })
    return Table(data=data, target="label", name="toy", source="test")


def split_by(table, column, ood, **kwargs):
    definition = SplitDefinition(name=f"by-{column}", data=SimulationSource(1, 0.1, 0.0),
                                 rule=ValueSplit(column, ood_values=(ood,)), **kwargs)
    return definition.make(0, table=table)


def test_total_variation():
    p = label_distribution(pd.Series(["a", "a", "b", "b"]))
    q = label_distribution(pd.Series(["a", "c", "c", "c"]))
    assert total_variation(p, p) == 0
    assert total_variation(p, q) == pytest.approx(0.75)  # 0.5 * (|.5-.25| + |.5-0| + |0-.75|)


def test_random_split_is_flagged_negligible(table):
    report = shift_report(split_by(table, "coin", "heads"))
    assert report.auc < 0.6 and report.label_tv < 0.05
    assert report.negligible
    assert any("NEGLIGIBLE SHIFT" in flag for flag in report.flags)


def test_real_covariate_shift_is_measured_and_not_flagged(table):
    report = shift_report(split_by(table, "region", "north"))
    assert report.auc > 0.95
    assert not report.negligible and report.flags == ()
    assert report.sizes["ood_test"] == (table.data["region"] == "north").sum()


def test_kept_domain_column_is_excluded_from_the_auc(table):
    report = shift_report(split_by(table, "coin", "heads", keep_domain=True))
    assert report.auc < 0.6  # otherwise the kept column would separate ID from OOD perfectly


def test_unseen_labels_and_small_ood_are_flagged(table):
    data = table.data.copy()
    data["label"] = data["label"].cat.add_categories("rare")
    rare = data.index[:30]
    data.loc[rare, "label"] = "rare"
    data["site"] = np.where(data.index.isin(rare), "new", "old")
    report = shift_report(split_by(Table(data, "label", "toy", "test"), "site", "new"))
    assert any("OOD labels unseen in train: ['rare']" in f for f in report.flags)
    assert any("small OOD test (30 rows)" in f for f in report.flags)


def test_markdown(table):
    reports = [shift_report(split_by(table, "coin", "heads")), shift_report(split_by(table, "region", "north"))]
    text = markdown_table(reports)
    lines = text.splitlines()
    assert len(lines) == 4 and lines[2].startswith("| by-coin |") and "NEGLIGIBLE" in lines[2]
    assert lines[3].endswith("| ok |")
    assert "| yes |" in markdown_labels(reports[0])
