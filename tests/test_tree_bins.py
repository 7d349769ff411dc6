"""Study 61's research-only tree bins (benchmarks/tree_bins.py) and the tokenizer hook they use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from tabmoe import TabularMoEClassifier

from .test_research_rules import import_benchmark

PARAMS = {"max_epochs": 2, "device": "cpu", "n_jobs": 1}


def _table(n: int = 600) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.RandomState(0)
    X = pd.DataFrame({
        "signal": rng.normal(size=n),
        "few": rng.randint(0, 4, n).astype(float),  # 4 distinct values: a bin per value either way
        "colour": rng.choice(["red", "green", "blue"], n),
    })
    X.loc[::9, "signal"] = np.nan
    y = np.where(X["signal"].fillna(0) > 0.3, "yes", "no")
    return X, y


def test_edges_are_the_trees_thresholds_on_the_finite_values():
    pytest.importorskip("rtdl_num_embeddings", reason="the baselines extra (through tabm)")
    mod = import_benchmark("tree_bins")
    X, y = _table()
    model = mod.TreeBinsClassifier(**PARAMS, random_state=0)
    model.min_samples_leaf = 32
    model.fit(X, y)
    finite = X["signal"].notna().to_numpy()
    tree = DecisionTreeClassifier(
        max_leaf_nodes=model.tokenizer_.n_bins_, min_samples_leaf=32,
        min_impurity_decrease=mod.MIN_IMPURITY_DECREASE, random_state=0,
    ).fit(X[["signal"]][finite].to_numpy(), np.unique(y, return_inverse=True)[1][finite])
    split = tree.tree_.children_left != tree.tree_.children_right
    np.testing.assert_allclose(model.tokenizer_.bin_edges_[0], np.unique(tree.tree_.threshold[split]))
    assert np.any(np.abs(model.tokenizer_.bin_edges_[0] - 0.3) < 0.1)  # the label's boundary
    plain = TabularMoEClassifier(**PARAMS, random_state=0).fit(X, y)
    assert len(model.tokenizer_.bin_edges_[0]) < len(plain.tokenizer_.bin_edges_[0])
    # a column with few distinct values keeps a bin per value; a categorical column is untouched
    np.testing.assert_array_equal(model.tokenizer_.bin_edges_[1], plain.tokenizer_.bin_edges_[1])
    assert list(model.tokenizer_.categories_[2]) == list(plain.tokenizer_.categories_[2])
    assert model.predict_proba(X).shape == (len(X), 2)


def test_the_leaf_size_and_the_bin_count_reach_the_tree():
    pytest.importorskip("rtdl_num_embeddings", reason="the baselines extra (through tabm)")
    # A noisy label: the tree splits until a bound stops it (the table above splits once,
    # whatever the leaf size or the bin count, so a bound dropped on the way passed there).
    mod = import_benchmark("tree_bins")
    rng = np.random.RandomState(1)
    values = rng.normal(size=2000)
    target = (values + rng.normal(size=2000) > 0).astype(int)
    values[::50] = np.nan
    finite = ~np.isnan(values)
    counts = {}
    for n_bins, leaf in ((10, 16), (40, 64), (40, 400)):
        edges = mod.tree_edges(values, target, n_bins, leaf)
        tree = DecisionTreeClassifier(
            max_leaf_nodes=n_bins, min_samples_leaf=leaf, min_impurity_decrease=mod.MIN_IMPURITY_DECREASE,
            random_state=0,
        ).fit(values[finite, None], target[finite])
        split = tree.tree_.children_left != tree.tree_.children_right
        np.testing.assert_allclose(edges, np.unique(tree.tree_.threshold[split]))
        counts[n_bins, leaf] = len(edges) + 1
    assert counts[10, 16] == 10  # the bin count binds: at most n_bins bins
    assert counts[40, 400] < counts[40, 64] < 40  # the leaf size binds


def test_the_hook_leaves_the_plain_fit_as_it_was():
    # The plain tokenizer's hook is the quantile rule: a fit through it equals one before it.
    from tabmoe._numeric import _bin_edges
    from tabmoe.tokenizer import ColumnTokenizer

    X, _ = _table()
    tok = ColumnTokenizer(n_bins="auto").fit(X)
    values = X["signal"].to_numpy(dtype=float)
    np.testing.assert_array_equal(tok.bin_edges_[0], _bin_edges(values, tok.n_bins_))


def test_make_tabmoe_builds_it_and_refuses_bad_values():
    research = import_benchmark("research_models")
    model = research.make_tabmoe({"tree_bins": 16, "max_epochs": 2}, 7)
    assert type(model).__name__ == "TreeBinsClassifier"
    assert (model.min_samples_leaf, model.random_state, model.max_epochs) == (16, 7, 2)
    assert type(research.make_tabmoe({"tree_bins": 0}, 0)) is TabularMoEClassifier
    for bad in (-1, True, 1.5, "64"):
        with pytest.raises(SystemExit, match="tree_bins must be an integer"):
            research.make_tabmoe({"tree_bins": bad}, 0)
    with pytest.raises(SystemExit, match="does not combine"):
        research.make_tabmoe({"tree_bins": 64, "stop_on": "error"}, 0)
    X, y = _table()
    with pytest.raises(ValueError, match="X_unlabeled"):
        research.make_tabmoe({"tree_bins": 64, **PARAMS}, 0).fit(X, y, X_unlabeled=X)
