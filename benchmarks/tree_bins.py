"""Research-only (study 61): numeric bins whose edges a decision tree on the label draws.

The tokenizer cuts a numeric column at quantiles of its training values (``n_bins="auto"``:
the Rice rule's count), whatever the label does across them. Gorishniy et al. 2022 (On
Embeddings for Numerical Features, section 3.2.2) draw the edges instead from a decision
tree fitted to the label on that column alone: bins where the label changes, as few as the
tree finds. Here the edges are ``rtdl_num_embeddings.compute_bins``' tree bins (its
reference implementation), at most the same count (``max_leaf_nodes`` = the quantile bins'
``n_bins_``), fitted on the column's finite training values; a column with at most
``n_bins_`` distinct values keeps its bin per value, as the quantile rule gives it. Only the
edges change: the tokens, the thermometer embedding and the network are the defaults'.

The tree sees every row given to ``fit``, the early-stopping hold-out (at most 100 rows)
included, as the quantile edges do; the ID-validation rows a study scores are not given to
``fit``.

Needs ``rtdl_num_embeddings`` (installed with the ``baselines`` extra, through ``tabm``).
Its edges are float32 (sklearn's trees fit in float32): a column whose distinct values
collapse in float32 (1e10 + 0.01 k) is refused by it; none of the suite's columns does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from tabmoe import TabularMoEClassifier
from tabmoe._numeric import _bin_edges
from tabmoe.tokenizer import ColumnTokenizer

#: ``min_impurity_decrease`` of every tree: rtdl_num_embeddings' documented example.
MIN_IMPURITY_DECREASE = 1e-4


def tree_edges(values: np.ndarray, target: np.ndarray, n_bins: int, min_samples_leaf: int) -> np.ndarray:
    """Inner edges of a numeric column: a tree's split thresholds on its finite ``values``
    (labels ``target``, class codes), at most ``n_bins`` bins; the quantile rule's edges
    where the column has at most ``n_bins`` distinct values (one bin per value)."""
    # Imported here: research.py imports this module for every command (summary too), and
    # rtdl_num_embeddings comes only with the baselines' extra (through tabm).
    from rtdl_num_embeddings import compute_bins

    finite = ~np.isnan(values)
    if np.unique(values[finite]).size <= n_bins:
        return _bin_edges(values, n_bins)
    bins = compute_bins(
        torch.as_tensor(values[finite], dtype=torch.float64)[:, None],
        n_bins,
        tree_kwargs={"min_samples_leaf": min_samples_leaf, "min_impurity_decrease": MIN_IMPURITY_DECREASE,
                     "random_state": 0},
        y=torch.as_tensor(target[finite]),
        regression=False,
    )[0]
    return bins.numpy()[1:-1]  # without the minimum and the maximum (the outer bounds)


class TreeBinTokenizer(ColumnTokenizer):
    """``ColumnTokenizer`` whose numeric edges are :func:`tree_edges` on ``target``."""

    # Set on the instance before fit, not __init__ parameters (never cloned).
    target: np.ndarray | None = None
    min_samples_leaf: int = 64

    def _numeric_edges(self, values: np.ndarray, n_bins: int) -> np.ndarray:
        if self.target is None or len(self.target) != len(values):
            raise RuntimeError("TreeBinTokenizer needs the labels of the rows it fits on (target)")
        return tree_edges(values, self.target, n_bins, self.min_samples_leaf)


class TreeBinsClassifier(TabularMoEClassifier):
    """The defaults with :class:`TreeBinTokenizer`'s edges (``min_samples_leaf`` rows a leaf)."""

    min_samples_leaf: int = 64  # set on the instance; clone/get_params drop it

    def _initialize_front_end(self, inputs: Any, X_unlabeled: Any = None) -> Any:
        if X_unlabeled is not None:  # rows without a label have no place in the trees
            raise ValueError("tree bins take no X_unlabeled")
        self._bin_target = inputs.y_codes
        return super()._initialize_front_end(inputs)

    def _new_tokenizer(self) -> ColumnTokenizer:
        plain = super()._new_tokenizer()
        tok = TreeBinTokenizer(**plain.get_params())
        tok.target, tok.min_samples_leaf = self._bin_target, self.min_samples_leaf
        return tok
