"""Study 68's research-only numeric embedding: periodic embeddings (PLR) of each value.

The defaults read a numeric value as its quantile bin's token, entered as a thermometer sum
(``numeric_embedding="ordered"``, study 5); study 33's piecewise-linear form and study 61's
tree-drawn edges kept that token form. Gorishniy et al. (*On Embeddings for Numerical
Features in Tabular Deep Learning*, NeurIPS 2022) found periodic embeddings the strongest
for MLPs and transformers: ``ReLU(Linear([cos(2 pi c x), sin(2 pi c x)]))`` with trained
frequencies ``c`` per feature (their PLR; ``rtdl_num_embeddings.PeriodicEmbeddings``, used
here as the library gives it, ``lite=False``). Its input ``x`` is the value's normal
quantile, as their quantile preprocessing: the bin's position on the column's empirical CDF,
``(k + f) / n_bins`` for a value in bin ``k`` at position ``f`` in it (the positions the
piecewise network already reads), mapped by the standard normal's inverse CDF.

Only the input changes: a numeric cell enters as its periodic embedding (plus its column's
embedding, as every token); MASK, MISSING and UNKNOWN keep their tokens, and a numeric column
is still predicted as its bin token by its head (the masked objective unchanged). The bins'
own input rows are then unused. Research-only: one member, no persistence.
"""

from __future__ import annotations

import numpy as np
import torch
from rtdl_num_embeddings import PeriodicEmbeddings
from torch import Tensor

from tabmoe import TabularMoEClassifier
from tabmoe.nn.network import TabularMoE

#: Keeps the normal quantile finite: (k + f) / n_bins reaches 0 and 1 at the columns' ends.
EDGE = 1e-3


class PeriodicMoE(TabularMoE):
    """``TabularMoE`` whose numeric values enter as periodic embeddings (see module)."""

    periodic: PeriodicEmbeddings

    def embed(self, tokens: Tensor, fraction: Tensor | None = None) -> Tensor:
        """tokens (B, L), fraction (B, L) -> (B, L, d)."""
        tokens = tokens.long()
        x = self.token_embedding(tokens)  # (B, L, d); the numeric cells' rows replaced below
        cols = self.periodic_columns  # (n,)
        position = self.ordered_position[tokens[:, cols]]  # (B, n); -1: MASK, MISSING, UNKNOWN
        at = position.clamp(min=0)
        share = (self.bin_index[at] + fraction[:, cols].to(x.dtype)) / self.bin_count[at]  # (B, n)
        z = torch.special.ndtri(share.clamp(EDGE, 1 - EDGE))  # the value's normal quantile
        values = torch.where((position >= 0).unsqueeze(-1), self.periodic(z), x[:, cols])  # (B, n, d)
        return x.index_copy(1, cols, values) + self.column_embedding


def add_periodic(net: TabularMoE, numeric_columns: np.ndarray, frequency_init_scale: float) -> TabularMoE:
    """Make ``net`` (a piecewise network: it is given each value's position in its bin) a
    :class:`PeriodicMoE` in place; ``numeric_columns``: the positions of its ordered groups, in
    their order. The periodic parameters are drawn after the network's own."""
    if not net.piecewise or len(numeric_columns) == 0:
        raise ValueError("periodic embeddings need numeric columns, read with their bin positions")
    groups = net.ordered_grid  # (G, P): indices into ordered_ids, padded with N
    n = net.ordered_ids.numel()
    if len(numeric_columns) != groups.shape[0]:
        raise ValueError(f"{len(numeric_columns)} numeric columns for {groups.shape[0]} ordered groups")
    width = groups.shape[1]
    index = (net.ordered_slot % width).to(torch.float32)  # (N,) each token's bin in its column
    count = (groups < n).sum(1)[net.ordered_slot // width].to(torch.float32)  # (N,) its column's bins
    net.__class__ = PeriodicMoE
    net.register_buffer("bin_index", index, persistent=False)
    net.register_buffer("bin_count", count, persistent=False)
    net.register_buffer("periodic_columns", torch.as_tensor(numeric_columns, dtype=torch.long), persistent=False)
    d = net.token_embedding.embedding_dim
    net.periodic = PeriodicEmbeddings(len(numeric_columns), d, frequency_init_scale=frequency_init_scale, lite=False)
    return net


class PeriodicClassifier(TabularMoEClassifier):
    """Research-only (study 68): numeric values as periodic embeddings of their quantile."""

    # Set on the instance after construction (as tied_heads' tie_mode): research.py never clones.
    frequency_init_scale: float = 0.01

    def _initialize_module(self):
        if self.n_members != 1 or self.numeric_embedding != "piecewise":
            raise ValueError("periodic embeddings are research-only for one member, on the piecewise positions")
        numeric = np.flatnonzero(~self.tokenizer_.is_categorical_)
        return add_periodic(super()._initialize_module(), numeric, self.frequency_init_scale)
