"""Study 72's research-only initialisation: output heads' biases at the training rows' log
frequencies.

``ColumnHeads`` starts every bias at 0, so the untrained network predicts each column's
values, the label's classes included, uniformly: its first epochs spend their steps moving
logits to the class prior before anything of the row counts. A common recipe (the focal
loss paper's prior initialisation, Lin et al. 2017; Karpathy's "init well") starts the
output bias at the log prior instead, so that step 0 already predicts the constant model.
``prior_bias="label"`` sets the label head's biases to the log of the training rows'
weighted class frequencies, ``"all"`` every column head's to its values' log frequencies
too (add-one smoothed: a value of the vocabulary no training row of this fit holds, such
as one only in the hold-out, gets a finite bias). The frequencies are the rows the network
trains on (the hold-out left out). No random draw is taken: the network is the defaults'
to the last weight but these biases, so a pair differs by the initialisation alone.
Research-only: one member, ``vocabulary="per_column"`` (a shared token has one bias for
several columns).
"""

from __future__ import annotations

import numpy as np
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn.network import ColumnHeads

#: ``prior_bias``'s values: the heads whose biases start at the log frequencies.
PRIOR_BIAS = ("label", "all")


def log_frequencies(tokens: np.ndarray, weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Add-one smoothed log frequencies of ``ids`` among ``tokens`` (n,), rows weighted by
    ``weight`` (n,) scaled to sum to n; tokens not in ``ids`` (MISSING) are not counted."""
    weight = weight * (len(weight) / weight.sum())
    counts = np.bincount(tokens, weights=weight, minlength=int(ids.max()) + 1)[ids]
    return np.log((counts + 1.0) / (counts.sum() + len(ids)))


def set_prior_biases(heads: ColumnHeads, tokens: np.ndarray, weight: np.ndarray,
                     output_ids: list[np.ndarray], columns: list[int]) -> None:
    """Set ``heads.bias`` of each column in ``columns`` (positions in ``tokens`` (n, L) and
    ``output_ids``) to its values' log frequencies, in place."""
    with torch.no_grad():
        for j in columns:
            ids = np.asarray(output_ids[j], dtype=np.int64)
            if len(ids):
                values = log_frequencies(tokens[:, j], weight, ids)
                heads.bias[torch.as_tensor(ids)] = torch.as_tensor(values, dtype=heads.bias.dtype)


class PriorBiasClassifier(TabularMoEClassifier):
    """Research-only (study 72): the estimator whose heads' biases start at the training
    rows' log frequencies (``prior_bias``: ``"label"`` or ``"all"``; see module)."""

    prior_bias: str = "label"  # set on the instance: not an __init__ parameter (no clone)

    def _batch_size(self, train):
        # asked once, with the rows the network trains on (after the hold-out split), just
        # before the network is built: the frequencies are those rows'
        self._prior_rows = (train["tokens"].numpy(), train["weight"].numpy())
        return super()._batch_size(train)

    def _initialize_module(self):
        if self.n_members != 1 or self.vocabulary != "per_column":
            raise ValueError("prior_bias is research-only for one member and vocabulary='per_column'")
        if self.prior_bias not in PRIOR_BIAS:
            raise ValueError(f"prior_bias must be one of {PRIOR_BIAS}, got {self.prior_bias!r}")
        net = super()._initialize_module()
        tokens, weight = self._prior_rows
        tok = self.tokenizer_
        output_ids = [tok.output_token_ids(j) for j in range(tok.n_features_in_)] + [self.label_token_ids_]
        label = len(output_ids) - 1
        columns = [label] if self.prior_bias == "label" else list(range(label + 1))
        set_prior_biases(net.heads, tokens, weight, output_ids, columns)
        return net
