"""Study 67's research-only network: a null key, an expert for "none of the columns".

The label's gates are a softmax over the row's other columns: they sum to 1, so every row's
prediction is a convex mixture of its values' experts, however little the row's values say.
``NullKeyAttention`` adds one learned vector ``null`` (d,) to every row's context, a token
without a column: its key competes for the gates and its value is the expert of "no column",
so the columns' gates sum to ``1 - w_null``, a share the row's own keys decide. It is a
register token (Darcet et al., *Vision Transformers Need Registers*, ICLR 2024) and the
learnable form of an attention sink (Xiao et al., *Efficient Streaming Language Models with
Attention Sinks*, ICLR 2024; a softmax "plus one", Miller 2023, when its key and value are
0). ``null`` starts at 0: its key and value are then the projections' biases (0 at
initialisation), a null expert with a zero value whose gate starts at 1 / (L + 1) of a
uniform gate, and no draw from the random stream (the network starts from the defaults'
draws).

``forward_loo`` (the one-layer objective), ``forward`` (prediction; random masking) and
``weights`` (the gates ``explain`` and ``feature_importances_`` read: the columns' gates, which
then sum to less than 1) all read it. Research-only: no persistence, one member, the softmax
gate.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from tabmoe import TabularMoEClassifier
from tabmoe.nn.network import MultiHeadAttention, TabularMoE


class NullKeyAttention(MultiHeadAttention):
    """``MultiHeadAttention`` with a learned null token in every row's keys (see module)."""

    null: nn.Parameter  # (d,)

    def null_kv(self) -> tuple[Tensor, Tensor]:
        """The null token's key and value, each (H, 1, K)."""
        x0 = self.null[None]  # (1, d)
        return self.split(self.key(x0)), self.split(self.value(x0))

    def weights(self, query_in: Tensor, key_in: Tensor, attend: Tensor | None = None) -> Tensor:
        """The columns' gates (B, H, Lq, L), which sum to 1 minus the null's share."""
        q = self.split(self.query(query_in)) / math.sqrt(self.key_dim)  # (B, H, Lq, K)
        scores = q @ self.split(self.key(key_in)).transpose(-1, -2)  # (B, H, Lq, L)
        if attend is not None:
            scores = scores.masked_fill(~attend[:, None, None, :], -math.inf)
        return self.mix(scores, q @ self.null_kv()[0].transpose(-1, -2))[0]

    @staticmethod
    def mix(scores: Tensor, s0: Tensor) -> tuple[Tensor, Tensor]:
        """Softmax over the L columns and the null slot: scores (..., Q, L), s0 (..., Q, 1)
        -> the columns' gates (..., Q, L) and the null's (..., Q, 1), summing to 1."""
        lse = torch.logaddexp(torch.logsumexp(scores, -1, keepdim=True), s0)
        return torch.exp(scores - lse), torch.exp(s0 - lse)

    def forward(self, query_in: Tensor, key_in: Tensor, attend: Tensor | None = None) -> Tensor:
        """query_in (B, Lq, d), key_in (B, L, d), attend (B, L) bool -> (B, Lq, d)."""
        q = self.split(self.query(query_in)) / math.sqrt(self.key_dim)  # (B, H, Lq, K)
        k, v = self.split(self.key(key_in)), self.split(self.value(key_in))  # (B, H, L, K)
        k0, v0 = self.null_kv()  # (H, 1, K)
        scores = q @ k.transpose(-1, -2)  # (B, H, Lq, L)
        if attend is not None:
            scores = scores.masked_fill(~attend[:, None, None, :], -math.inf)
        weights, w0 = self.mix(scores, q @ k0.transpose(-1, -2))
        return self.output(self.merge(weights @ v + w0 * v0))

    def forward_loo(
        self, x: Tensor, x_mask: Tensor, attend: Tensor | None = None, query: Tensor | None = None
    ) -> Tensor:
        """As :meth:`MultiHeadAttention.forward_loo`, with the null slot: (B, Q, d)."""
        if query is None:
            query = torch.arange(x.shape[1], device=x.device)
        k, v = self.split(self.key(x)), self.split(self.value(x))  # (B, H, L, K)
        x_mask = x_mask[query]  # (Q, d)
        q_m = self.split(self.query(x_mask)) / math.sqrt(self.key_dim)  # (H, Q, K)
        k_m, v_m = self.split(self.key(x_mask)), self.split(self.value(x_mask))  # (H, Q, K)
        k0, v0 = self.null_kv()  # (H, 1, K)
        scores = q_m @ k.transpose(-1, -2)  # (B, H, Q, L)
        if attend is not None:
            scores = scores.masked_fill(~attend[:, None, None, :], -math.inf)
        at = query.view(1, 1, -1, 1).expand(*scores.shape[:-1], 1)  # (B, H, Q, 1)
        diag = (q_m * k_m).sum(-1)  # (H, Q): the masked position's own score
        scores = scores.scatter(-1, at, diag.to(scores.dtype).unsqueeze(-1).expand(at.shape))
        weights, w0 = self.mix(scores, q_m @ k0.transpose(-1, -2))  # (B, H, Q, L), (B, H, Q, 1)
        w_ii = weights.gather(-1, at)  # (B, H, Q, 1)
        mixed = weights @ v + w_ii * (v_m - v[:, :, query]) + w0 * v0
        return self.output(self.merge(mixed))


def add_null_key(net: TabularMoE) -> TabularMoE:
    """Give every block of ``net`` a null key, in place (``null`` at 0: no random draw)."""
    for block in net.blocks:
        attention = block.attention
        if attention.gate != "softmax":
            raise ValueError(f"null_key is research-only for the softmax gate, not {attention.gate!r}")
        attention.__class__ = NullKeyAttention
        attention.null = nn.Parameter(torch.zeros(attention.query.in_features))
    return net


class NullKeyClassifier(TabularMoEClassifier):
    """Research-only (study 67): the estimator with :func:`add_null_key` on its network."""

    def _initialize_module(self):
        if self.n_members != 1:
            raise ValueError("null_key is research-only for one member")
        return add_null_key(super()._initialize_module())
