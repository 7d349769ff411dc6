"""The attention-MoE network: token + column embeddings -> attention blocks -> column heads.

Shapes: B rows, L columns (the label is the last position), d = ``d_model``, H heads of
``key_dim`` K each, V = number of token ids. Defaults are the paper's (docs/paper.md section 2)
and live in :data:`tabmoe._paper_config.PAPER_ARCHITECTURE`.

Two ways to run the first (only) layer on a row with one column masked:

* :meth:`TabularMoE.hidden_copies` materialises the L masked copies of each row (the
  reference, as the authors trained it);
* :meth:`TabularMoE.hidden_loo` does it in ONE pass. The copies differ only at the masked
  position, whose query/key/value come from ``MASK + column embedding`` and do not depend on
  the row, so the diagonal of the score matrix and of the value matrix are swapped for those
  MASK terms. Everything after attention is position-wise, so the outputs are identical.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..tokenizer import MASK

BLOCKS = ("transformer", "attention")
GATES = ("softmax", "tanhmax")


#: Half-width of the paper's uniform draw of the token embeddings (Keras's ``Embedding``).
PAPER_EMBEDDING_INIT = 0.05


def _uniform_(t: Tensor, limit: float) -> Tensor:
    with torch.no_grad():
        return t.uniform_(-limit, limit)


def gate_weights(scores: Tensor, gate: str) -> Tensor:
    """Attention coefficients from scores (..., L_keys); -inf scores get weight 0.

    ``softmax``: probabilities over the keys, ``exp(s_j) / sum_k exp(s_k)``.

    ``tanhmax``: signed coefficients ``c_j = sinh(s_j) / sum_k cosh(s_k)`` (sums over the
    attended keys). Equivalently, a softmax over 2L signed slots — key j with score ``+s_j``
    and its negation with score ``-s_j`` — and ``c_j = p(+j) - p(-j)``: in the MoE view a
    proper mixture over the experts and their negations. Properties (tests/test_tanhmax.py):
    ``sign(c_j) = sign(s_j)``; ``|c_j| < 1``; ``sum_j |c_j| = 1 - 2 sum_j min(p(+j), p(-j))``,
    which is < 1 and tends to 1 as the scores grow in magnitude (exactly 1 is impossible for
    any continuous gate with ``c(-s) = -c(s)``, since that forces ``c(0) = 0``); smooth
    everywhere; ``c_j`` increases with ``s_j``; ``tanhmax(s) = tanh(s) * softmax(log cosh s)``.
    See docs/moe.md.
    """
    if gate == "softmax":
        return torch.softmax(scores, dim=-1)
    if gate == "tanhmax":
        # -inf (not attended) stays -inf in both slots, so both get probability 0.
        negated = (-scores).masked_fill(scores == -math.inf, -math.inf)
        slots = torch.softmax(torch.cat([scores, negated], dim=-1), dim=-1)  # (..., 2L)
        positive, negative = slots.chunk(2, dim=-1)
        return positive - negative
    raise ValueError(f"gate must be one of {GATES}, got {gate!r}.")


class MultiHeadAttention(nn.Module):
    """Multi-head attention with biases on Q, K, V and the output (Keras' layer)."""

    def __init__(self, d_model: int, n_heads: int, key_dim: int, gate: str = "softmax"):
        super().__init__()
        self.n_heads, self.key_dim, self.gate = n_heads, key_dim, gate
        inner = n_heads * key_dim
        self.query = nn.Linear(d_model, inner)
        self.key = nn.Linear(d_model, inner)
        self.value = nn.Linear(d_model, inner)
        self.output = nn.Linear(inner, d_model)
        # Keras EinsumDense glorot fans: kernels (d, H, K) and (H, K, d).
        for lin in (self.query, self.key, self.value):
            _uniform_(lin.weight, math.sqrt(6.0 / (d_model * (n_heads + key_dim))))
            nn.init.zeros_(lin.bias)
        _uniform_(self.output.weight, math.sqrt(6.0 / (n_heads * (key_dim + d_model))))
        nn.init.zeros_(self.output.bias)

    def split(self, x: Tensor) -> Tensor:
        """(..., L, H*K) -> (..., H, L, K)"""
        return x.unflatten(-1, (self.n_heads, self.key_dim)).transpose(-3, -2)

    def merge(self, x: Tensor) -> Tensor:
        """(..., H, L, K) -> (..., L, H*K)"""
        return x.transpose(-3, -2).flatten(-2)

    def weights(self, query_in: Tensor, key_in: Tensor, attend: Tensor | None = None) -> Tensor:
        """Gates: query_in (B, Lq, d), key_in (B, L, d), attend (B, L) bool -> (B, H, Lq, L)."""
        q = self.split(self.query(query_in))  # (B, H, Lq, K)
        k = self.split(self.key(key_in))  # (B, H, L, K)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.key_dim)  # (B, H, Lq, L)
        if attend is not None:
            scores = scores.masked_fill(~attend[:, None, None, :], -math.inf)
        return gate_weights(scores, self.gate)

    def forward(self, query_in: Tensor, key_in: Tensor, attend: Tensor | None = None) -> Tensor:
        """query_in (B, Lq, d), key_in (B, L, d), attend (B, L) bool -> (B, Lq, d)."""
        v = self.split(self.value(key_in))  # (B, H, L, K)
        return self.output(self.merge(self.weights(query_in, key_in, attend) @ v))

    def forward_loo(
        self, x: Tensor, x_mask: Tensor, attend: Tensor | None = None, query: Tensor | None = None
    ) -> Tensor:
        """Leave-one-out attention in one pass.

        x (B, L, d): the unmasked rows; x_mask (L, d): ``MASK + column embedding``; query:
        positions (Q,) to compute outputs for (default: all L, then Q = L).
        Returns (B, Q, d): output i equals position query[i]'s output when the row's column
        query[i] is replaced by MASK and every other column is kept.
        """
        k = self.split(self.key(x))  # (B, H, L, K)
        v = self.split(self.value(x))  # (B, H, L, K)
        if query is not None:
            x_mask = x_mask[query]  # (Q, d)
        # The scale goes on the (H, Q, K) queries, not on the (B, H, Q, L) scores.
        q_m = self.split(self.query(x_mask)) / math.sqrt(self.key_dim)  # (H, Q, K) masked queries
        k_m = self.split(self.key(x_mask))  # (H, Q, K)
        v_m = self.split(self.value(x_mask))  # (H, Q, K)
        scores = q_m @ k.transpose(-1, -2)  # (B, H, Q, L)
        if attend is not None:
            scores = scores.masked_fill(~attend[:, None, None, :], -math.inf)
        # After the attend mask: the masked position (a MASK token) is always attended to.
        diag = (q_m * k_m).sum(-1)  # (H, Q): q_i^M . k_i^M (scaled)
        if query is None:
            # In place: the matmul's backward does not need its output, and a copy of the
            # (B, H, L, L) scores cost 4% of a training step. (The scatter / gather branch
            # below with query = arange(L) gives the same values, 4% slower a step.)
            scores.diagonal(0, -2, -1).copy_(diag)
            weights = gate_weights(scores, self.gate)  # (B, H, L, L)
            w_ii = torch.diagonal(weights, 0, -2, -1).unsqueeze(-1)  # (B, H, L, 1)
            v_q = v
        else:
            at = query.view(1, 1, -1, 1).expand(*scores.shape[:-1], 1)  # (B, H, Q, 1)
            scores = scores.scatter(-1, at, diag.to(scores.dtype).unsqueeze(-1).expand(at.shape))
            weights = gate_weights(scores, self.gate)  # (B, H, Q, L)
            w_ii = weights.gather(-1, at)  # (B, H, Q, 1)
            v_q = v[:, :, query]  # (B, H, Q, K)
        mixed = weights @ v + w_ii * (v_m - v_q)  # swap v_i for v_i^M at the masked position
        return self.output(self.merge(mixed))


class Dropout(nn.Dropout):
    """``nn.Dropout`` with the mask drawn from ``torch.rand`` on the CPU, where it is about 40%
    cheaper than ``bernoulli_`` (two dropouts were 10% of a training step); the same
    distribution. CUDA keeps the fused kernel."""

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0 or x.is_cuda:
            return super().forward(x)
        keep = torch.rand_like(x).ge(self.p).to(x.dtype).mul_(1.0 / (1.0 - self.p))
        return x * keep


class Block(nn.Module):
    """``transformer``: the paper's post-LN block. ``attention``: attention + readout only."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        key_dim: int,
        ff_dim: int,
        dropout: float,
        block: str,
        gate: str,
        layer_norm_eps: float = 1e-6,
    ):
        super().__init__()
        if block not in BLOCKS:
            raise ValueError(f"block must be one of {BLOCKS}, got {block!r}.")
        self.block = block
        self.attention = MultiHeadAttention(d_model, n_heads, key_dim, gate)
        self.dropout = Dropout(dropout)
        if block == "transformer":
            self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
            self.ffn = nn.Sequential(nn.Linear(d_model, ff_dim), nn.ReLU(), nn.Linear(ff_dim, d_model))
            for lin in (self.ffn[0], self.ffn[2]):
                nn.init.xavier_uniform_(lin.weight)
                nn.init.zeros_(lin.bias)
            self.dropout2 = Dropout(dropout)
            self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)

    def finish(self, residual: Tensor, attended: Tensor) -> Tensor:
        """Everything after attention (position-wise). residual, attended: (..., d)."""
        attended = self.dropout(attended)
        if self.block == "attention":
            return attended
        h = self.norm1(residual + attended)
        return self.norm2(h + self.dropout2(self.ffn(h)))

    def forward(self, x: Tensor, attend: Tensor | None = None, query: Tensor | None = None) -> Tensor:
        """x (B, L, d); query: positions (Lq,) to compute outputs for -> (B, Lq, d)."""
        x_q = x if query is None else x[:, query]
        return self.finish(x_q, self.attention(x_q, x, attend))

    def forward_loo(
        self, x: Tensor, x_mask: Tensor, attend: Tensor | None = None, query: Tensor | None = None
    ) -> Tensor:
        """Leave-one-out outputs, (B, Q, d); see :meth:`MultiHeadAttention.forward_loo`."""
        residual = x_mask if query is None else x_mask[query]
        return self.finish(residual, self.attention.forward_loo(x, x_mask, attend, query))


class ColumnHeads(nn.Module):
    """Per-column output heads over one shared weight matrix (V, d).

    Column j predicts among its own token ids ``output_ids[j]`` (sorted). Columns with
    similar vocabulary sizes are grouped and padded so that a forward pass costs a few batched
    matmuls, not one per column, while a 10^5-value column does not pad every other column.
    """

    def __init__(self, n_tokens: int, d_model: int, output_ids: Sequence[np.ndarray]):
        super().__init__()
        self.n_tokens = n_tokens
        sizes = np.array([len(ids) for ids in output_ids])
        limit = math.sqrt(6.0 / (d_model + float(sizes.mean())))
        self.weight = nn.Parameter(_uniform_(torch.empty(n_tokens, d_model), limit))
        self.bias = nn.Parameter(torch.zeros(n_tokens))
        buckets: dict[int, list[int]] = {}
        for j, size in enumerate(sizes):
            buckets.setdefault(int(math.ceil(math.log2(max(size, 1)))), []).append(j)
        self.n_groups = len(buckets)
        # Column ids are usually contiguous ranges: then target -> slot is a subtraction.
        self.contiguous = all(
            len(ids) == 0 or np.array_equal(np.sort(ids), np.arange(ids.min(), ids.min() + len(ids)))
            for ids in map(np.asarray, output_ids)
        )
        self.all_in_one_group = self.n_groups == 1
        for g, columns in enumerate(buckets.values()):
            # At least one (padded, never valid) slot: a column with no value tokens (all
            # missing at fit) must not give a zero-width group that searchsorted cannot index.
            n_pad = max(1, int(sizes[columns].max()))
            ids = np.full((len(columns), n_pad), n_tokens, dtype=np.int64)  # pad = n_tokens
            for row, j in enumerate(columns):
                ids[row, : sizes[j]] = np.sort(output_ids[j])
            self.register_buffer(f"columns_{g}", torch.as_tensor(columns), persistent=False)
            self.register_buffer(f"ids_{g}", torch.as_tensor(ids), persistent=False)
            self.register_buffer(f"sizes_{g}", torch.as_tensor(sizes[columns]), persistent=False)

    def groups(self):
        for g in range(self.n_groups):
            yield getattr(self, f"columns_{g}"), getattr(self, f"ids_{g}")

    def slots(self, g: int, ids: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        """Slot of each target in its column's ids: targets (B, G) -> (slot, ok), both (B, G)."""
        if self.contiguous:
            local = targets - ids[:, 0]
            ok = (local >= 0) & (local < getattr(self, f"sizes_{g}"))
            return local.clamp(0, ids.shape[1] - 1), ok
        t = targets.T.contiguous()  # (G, B)
        local = torch.searchsorted(ids, t).clamp_max(ids.shape[1] - 1)  # (G, B)
        return local.T, (ids.gather(1, local) == t).T

    def logits_for(self, h: Tensor, ids: Tensor) -> Tensor:
        """h (B, G, d), ids (G, P) -> logits (B, G, P); padded slots are -inf."""
        valid = ids < self.n_tokens
        safe = ids.clamp_max(self.n_tokens - 1)
        logits = torch.einsum("bgd,gpd->bgp", h, self.weight[safe]) + self.bias[safe]
        return logits.masked_fill(~valid, -math.inf)

    def nll(self, h: Tensor, targets: Tensor, smoothing: float = 0.0) -> tuple[Tensor, Tensor]:
        """h (B, L, d), targets (B, L) token ids -> (nll (B, L), valid (B, L) bool); the nll
        is float32 for a bf16 ``h`` (autocast), whose rounding would reach the loss.

        A target outside its column's output ids (MISSING, UNKNOWN, MASK) is not valid and
        its nll is 0. ``smoothing`` > 0: the cross-entropy with a target that puts
        ``1 - smoothing`` on the true value and spreads ``smoothing`` evenly over the column's
        values (label smoothing, as ``torch.nn.CrossEntropyLoss(label_smoothing=...)``).
        """
        if self.all_in_one_group:  # then columns == arange(L): no gathers or scatters
            nll, valid = self.group_nll(0, h, targets, smoothing)
            return nll.to(_at_least_float32(h.dtype)), valid
        # One gather into group order and one back: a gather per group would cost a
        # (B, L, d) zero gradient per group in the backward pass (a tenth of a step).
        columns = [c for c, _ in self.groups()]
        order = torch.cat(columns)  # (L,)
        sizes = [len(c) for c in columns]
        h_groups, t_groups = h[:, order].split(sizes, 1), targets[:, order].split(sizes, 1)
        pairs = enumerate(zip(h_groups, t_groups, strict=True))
        parts = [self.group_nll(g, h_g, t_g, smoothing) for g, (h_g, t_g) in pairs]
        back = torch.argsort(order)
        nll = torch.cat([part for part, _ in parts], 1)[:, back]
        valid = torch.cat([ok for _, ok in parts], 1)[:, back]
        return nll.to(_at_least_float32(h.dtype)), valid

    def group_nll(self, g: int, h: Tensor, targets: Tensor, smoothing: float = 0.0) -> tuple[Tensor, Tensor]:
        """Group g's columns: h (B, G, d), targets (B, G) -> (nll (B, G) float32, valid (B, G))."""
        ids = getattr(self, f"ids_{g}")
        logits = self.logits_for(h, ids)  # (B, G, P)
        local, ok = self.slots(g, ids, targets)  # (B, G)
        logp = torch.log_softmax(logits.float(), dim=-1)
        nll = -logp.gather(-1, local.unsqueeze(-1)).squeeze(-1)  # (B, G)
        if smoothing > 0:  # mean -log p over the column's values; padded slots are -inf
            values = torch.isfinite(logp)
            uniform = -logp.masked_fill(~values, 0.0).sum(-1) / values.sum(-1)
            nll = (1.0 - smoothing) * nll + smoothing * uniform
        return torch.where(ok, nll, torch.zeros_like(nll)), ok

    def column_logits(self, h: Tensor, ids: Tensor) -> Tensor:
        """Logits of one column: h (B, d), ids (P,) -> (B, P), float32 also under autocast:
        for the label they are the predictions and the early-stopping loss, which should
        move with mixed precision by the body's rounding only (one small product)."""
        dtype = torch.promote_types(h.dtype, self.weight.dtype)  # bf16 h, float32 weights
        with _without_autocast(h.device.type):
            return F.linear(h.to(dtype), self.weight[ids].to(dtype), self.bias[ids].to(dtype))


def _at_least_float32(dtype: torch.dtype) -> torch.dtype:
    return torch.promote_types(dtype, torch.float32)


def _without_autocast(device_type: str) -> contextlib.AbstractContextManager:
    if torch.is_autocast_enabled(device_type):  # autocast refuses some device types (meta)
        return torch.autocast(device_type, enabled=False)
    return contextlib.nullcontext()


class TabularMoE(nn.Module):
    """Token + column embeddings -> ``n_layers`` blocks -> per-column heads.

    Parameters
    ----------
    n_tokens : size of the token id space (reserved ids included).
    output_ids : per column, the token ids it can predict; the LAST column is the label.
    d_model, n_heads, ff_dim, n_layers, dropout, block, gate :
        As :class:`~tabmoe.TabularMoEClassifier`'s; the defaults here are the paper's (20, 5,
        5, 1, 0.1, ``"transformer"``, ``"softmax"``).
    key_dim : width of each head's queries, keys and values; None: ``d_model // n_heads``
        (at least 1).
    linear_term : add to the label's output a sum over the feature columns of a learned
        vector per token id (``linear`` (V, d), zero at the start), so the label logits gain
        a term linear in the one-hot features, as a logistic regression beside the MoE. MASK
        and UNKNOWN rows get no gradient from it (MASK is excluded; UNKNOWN is not seen in
        training unless ``unknown_rate`` or a ``min_frequency`` above 1 puts it there), so a
        value unseen at fit adds nothing. Token ids must be per column (not a shared
        vocabulary), or the rows would be tied across columns.
    ordered_ids : per ordered column (e.g. a numeric column's bins), its token ids in value
        order: thermometer embeddings (see ``_init_ordered``).
    piecewise : interpolate along the thermometer by each value's position in its bin
        (``fraction``, required by :meth:`embed` and the methods that call it).
    embedding_init : half-width of the uniform draw of the token embeddings (default the
        paper's, Keras's ``Embedding`` default, 0.05).
    """

    def __init__(
        self,
        n_tokens: int,
        output_ids: Sequence[np.ndarray],
        d_model: int = 20,
        n_heads: int = 5,
        key_dim: int | None = None,
        ff_dim: int = 5,
        n_layers: int = 1,
        dropout: float = 0.1,
        block: str = "transformer",
        gate: str = "softmax",
        ordered_ids: Sequence[np.ndarray] = (),
        linear_term: bool = False,
        piecewise: bool = False,
        embedding_init: float = PAPER_EMBEDDING_INIT,
    ):
        super().__init__()
        if piecewise and not len(ordered_ids):
            raise ValueError("piecewise=True interpolates ordered tokens: give ordered_ids.")
        if gate not in GATES:
            raise ValueError(f"gate must be one of {GATES}, got {gate!r}.")
        n_columns = len(output_ids)
        key_dim = key_dim or max(1, d_model // n_heads)
        self.n_columns, self.n_layers = n_columns, n_layers
        self.token_embedding = nn.Embedding(n_tokens, d_model)
        _uniform_(self.token_embedding.weight, PAPER_EMBEDDING_INIT)
        if embedding_init != PAPER_EMBEDDING_INIT:
            # Drawn at the paper's scale, then scaled: a direct U(-a, a) draw differs from it
            # in the last bit, and these are the fits docs/research.md#study-56 measured.
            with torch.no_grad():
                self.token_embedding.weight.mul_(embedding_init / PAPER_EMBEDDING_INIT)
        self.column_embedding = nn.Parameter(
            _uniform_(torch.empty(n_columns, d_model), math.sqrt(6.0 / (n_columns + d_model)))
        )
        self.blocks = nn.ModuleList(
            Block(d_model, n_heads, key_dim, ff_dim, dropout, block, gate) for _ in range(n_layers)
        )
        self.heads = ColumnHeads(n_tokens, d_model, output_ids)
        label_ids = np.sort(np.asarray(output_ids[-1]))
        self.register_buffer("label_ids", torch.as_tensor(label_ids), persistent=False)
        self._init_ordered(n_tokens, ordered_ids)
        self.piecewise = piecewise
        self.linear = None
        if linear_term:
            # Built from zeros: no draw from the global RNG, so everything else a fit draws
            # (ensemble members, dropout) is as without the term.
            self.linear = nn.Embedding(n_tokens, d_model, _weight=torch.zeros(n_tokens, d_model))

    def _init_ordered(self, n_tokens: int, ordered_ids: Sequence[np.ndarray]) -> None:
        """Thermometer embeddings for ``ordered_ids`` (per column, token ids in value order,
        e.g. a numeric column's bins): the k-th token's embedding is the sum of the first k + 1
        rows of the column's block of ``token_embedding``, so neighbouring values share
        parameters (the embedding form of piecewise-linear encoding's thermometer code)."""
        groups = [np.asarray(ids, dtype=np.int64) for ids in ordered_ids if len(ids)]
        flat = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)  # (N,)
        width = max((len(ids) for ids in groups), default=0)
        grid = np.full((len(groups), width), len(flat), dtype=np.int64)  # (G, P), pad -> zero row
        slot = np.zeros(len(flat), dtype=np.int64)  # (N,) each token's cell in the grid
        start = 0
        for g, ids in enumerate(groups):
            grid[g, : len(ids)] = start + np.arange(len(ids))
            slot[start : start + len(ids)] = g * width + np.arange(len(ids))
            start += len(ids)
        position = np.full(n_tokens if groups else 0, -1, dtype=np.int64)  # (V,) or empty
        position[flat] = np.arange(len(flat))
        buffers = {"ordered_ids": flat, "ordered_grid": grid, "ordered_slot": slot, "ordered_position": position}
        for name, value in buffers.items():
            self.register_buffer(name, torch.as_tensor(value), persistent=False)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "ordered_grid" not in self._buffers:  # pickled before thermometer embeddings existed
            self._init_ordered(0, ())
        if "linear" not in self._modules:  # pickled before the linear term existed
            self.linear = None
        self.__dict__.setdefault("piecewise", False)  # pickled before piecewise embeddings

    def ordered_table(self) -> Tensor:
        """(N, d) embeddings of ``ordered_ids``: per group, cumulative sums of its rows (each
        group summed on its own, so no rounding carries over from the groups before it)."""
        rows = self.token_embedding.weight[self.ordered_ids]  # (N, d)
        rows = F.pad(rows, (0, 0, 0, 1))  # (N + 1, d): the last row is the grid's zero padding
        sums = rows[self.ordered_grid].cumsum(1)  # (G, P, d)
        return sums.flatten(0, 1)[self.ordered_slot]  # (N, d)

    def token_table(self) -> Tensor:
        """(V, d): the embedding every token id enters with (thermometer rows included)."""
        table = self.token_embedding.weight
        if not self.ordered_ids.numel():
            return table
        return table.index_copy(0, self.ordered_ids, self.ordered_table())

    @property
    def label_position(self) -> int:
        return self.n_columns - 1

    def embed(self, tokens: Tensor, fraction: Tensor | None = None) -> Tensor:
        """tokens (B, L), fraction (B, L) or None -> (B, L, d).

        With ``piecewise``, ``fraction`` is each value's position in its bin, in [0, 1]: an
        ordered token k enters as the sum of steps 0..k-1 plus ``fraction`` times step k
        (piecewise-linear encoding in embedding form, continuous in the value); other tokens,
        MASK included, ignore it, so a masked value's fraction never reaches the network."""
        tokens = tokens.long()
        if self.piecewise and fraction is None:
            raise ValueError("This network embeds numeric values piecewise-linearly: pass fraction.")
        if tokens.numel() >= self.token_embedding.num_embeddings:
            # One lookup in the (V, d) token table is cheaper than two lookups and a choice
            # while the table is smaller than the batch (a 10^6-value vocabulary is not).
            x = F.embedding(tokens, self.token_table())
        else:
            x = self.token_embedding(tokens)
            if self.ordered_ids.numel():
                position = self.ordered_position[tokens]  # (B, L), -1 for other tokens
                ordered = self.ordered_table()[position.clamp(min=0)]  # (B, L, d)
                x = torch.where((position >= 0).unsqueeze(-1), ordered, x)
        if self.piecewise:
            # thermometer(k) - (1 - fraction) * step k; fraction 1 is the thermometer.
            short = (1.0 - fraction.to(x.dtype)) * (self.ordered_position[tokens] >= 0)  # (B, L)
            x = x - short.unsqueeze(-1) * self.token_embedding(tokens)
        return x + self.column_embedding

    def mask_embedding(self) -> Tensor:
        """(L, d): what every position looks like when it is masked."""
        return self.token_embedding.weight[MASK] + self.column_embedding

    def add_linear(self, h: Tensor, tokens: Tensor, attend: Tensor | None, query: Tensor | None) -> Tensor:
        """h (B, Q, d) outputs of positions ``query`` (None: all L) -> h with the linear term
        (see the class docstring) added at the label's position; unchanged without one.

        The sum runs over the feature columns only (the label's own token never enters it),
        skipping MASK and columns that ``attend`` leaves out."""
        if self.linear is None:
            return h
        features = tokens[:, :-1].long()  # (B, L-1)
        keep = features != MASK
        if attend is not None:
            keep = keep & attend[:, :-1]
        term = (self.linear(features) * keep.unsqueeze(-1)).sum(1).to(h.dtype)  # (B, d)
        label = self.label_position
        at = torch.arange(h.shape[1], device=h.device) if query is None else query  # (Q,)
        return h + (at == label).to(h.dtype)[None, :, None] * term[:, None, :]

    def hidden(
        self, tokens: Tensor, attend: Tensor | None = None, query: Tensor | None = None,
        fraction: Tensor | None = None,
    ) -> Tensor:
        """Plain forward of (possibly masked) tokens (B, L) -> (B, Lq, d).

        ``query`` restricts the LAST layer to those positions (earlier layers need all);
        ``fraction`` (B, L): see :meth:`embed`.
        """
        x = self.embed(tokens, fraction)
        for i, block in enumerate(self.blocks):
            x = block(x, attend, query if i == self.n_layers - 1 else None)
        return self.add_linear(x, tokens, attend, query)

    def hidden_loo(
        self, tokens: Tensor, attend: Tensor | None = None, query: Tensor | None = None,
        fraction: Tensor | None = None,
    ) -> Tensor:
        """One-layer leave-one-column-out in one pass: (B, L) -> (B, Q, d), for the positions
        ``query`` (Q,) (default: all L)."""
        if self.n_layers != 1:
            raise ValueError("The one-pass leave-one-out form is exact only for n_layers=1.")
        h = self.blocks[0].forward_loo(self.embed(tokens, fraction), self.mask_embedding(), attend, query)
        return self.add_linear(h, tokens, attend, query)

    def hidden_copies(
        self, tokens: Tensor, attend: Tensor | None = None, fraction: Tensor | None = None
    ) -> Tensor:
        """Reference: materialise the L masked copies of each row. (B, L) -> (B, L, d)."""
        b, n = tokens.shape
        eye = torch.eye(n, dtype=torch.bool, device=tokens.device)
        copies = tokens.unsqueeze(1).expand(b, n, n).masked_fill(eye, MASK)  # (B, L copies, L)
        att = None if attend is None else attend.unsqueeze(1).expand(b, n, n).reshape(b * n, n)
        frac = None if fraction is None else fraction.unsqueeze(1).expand(b, n, n).reshape(b * n, n)
        out = self.hidden(copies.reshape(b * n, n), att, fraction=frac)  # (B*L, L, d)
        return out.reshape(b, n, n, -1).diagonal(0, 1, 2).transpose(1, 2)  # copy i, position i

    def label_inputs(self, tokens: Tensor, attend: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """Tokens (B, L) with the label position set to MASK (or (B, L-1) padded with it), and
        ``attend`` padded to (B, L) with the label attended."""
        if tokens.shape[1] == self.n_columns - 1:
            tokens = F.pad(tokens.long(), (0, 1), value=MASK)
        else:
            tokens = tokens.long().clone()
            tokens[:, -1] = MASK
        if attend is not None and attend.shape[1] == self.n_columns - 1:
            attend = F.pad(attend, (0, 1), value=True)
        elif attend is not None:  # a (B, L) mask: the label's MASK is attended whatever it says
            attend = attend.clone()
            attend[:, -1] = True
        return tokens, attend

    def label_fraction(self, fraction: Tensor | None) -> Tensor | None:
        """``fraction`` (B, L-1) padded to (B, L) for the label (a MASK: its value is unused)."""
        if fraction is not None and fraction.shape[1] == self.n_columns - 1:
            fraction = F.pad(fraction, (0, 1), value=1.0)
        return fraction

    def label_logits(
        self, tokens: Tensor, attend: Tensor | None = None, fraction: Tensor | None = None
    ) -> Tensor:
        """Logits of the label (masked) from the feature tokens.

        tokens (B, L) (the label position is overwritten with MASK) or (B, L-1) -> (B, C),
        classes ordered by token id. Only the label query is computed in the last layer.
        """
        tokens, attend = self.label_inputs(tokens, attend)
        fraction = self.label_fraction(fraction)
        query = torch.tensor([self.label_position], device=tokens.device)
        h = self.hidden(tokens, attend, query, fraction)[:, 0]  # (B, d)
        return self.heads.column_logits(h, self.label_ids)

    def label_pass(
        self, tokens: Tensor, attend: Tensor | None = None, fraction: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None, Tensor]:
        """The label-masked tokens (B, L), the attend mask and the last layer's input (B, L, d):
        the layers below the last, run once for the label's logits and gates."""
        tokens, attend = self.label_inputs(tokens, attend)
        x = self.embed(tokens, self.label_fraction(fraction))
        for block in self.blocks[:-1]:
            x = block(x, attend)
        return tokens, attend, x

    def label_logits_and_gates(
        self, tokens: Tensor, attend: Tensor | None = None, fraction: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """:meth:`label_logits` (B, C) and the last layer's gates of the label query over all
        positions (B, H, L), from one pass: the layers below the last run once (``explain``
        ran them twice, once a reading)."""
        tokens, attend, x = self.label_pass(tokens, attend, fraction)
        label, last = self.label_position, self.blocks[-1]
        gates = last.attention.weights(x[:, label : label + 1], x, attend)[:, :, 0]  # (B, H, L)
        query = torch.tensor([label], device=tokens.device)
        h = self.add_linear(last(x, attend, query), tokens, attend, query)[:, 0]  # (B, d), as hidden's
        return self.heads.column_logits(h, self.label_ids), gates
