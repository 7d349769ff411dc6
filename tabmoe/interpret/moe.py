"""The mixture-of-continuous-word-experts form of a fitted model (docs/paper.md section 1).

One layer, head h (of H, key dim K), target position i (the label, or a masked feature),
row x with x_i replaced by MASK, attended positions j (the target's own MASK included):

    logit_v(x) = sum_h sum_j g[h, i, j](x) * rho[h, v] . alpha[h, x_j, j]  +  bias_v

* experts   ``alpha[h, w, j] = W_V^h (e_w + p_j) + b_V^h`` — one K-vector per (value w,
  column j) and head. Stored in two additive parts: ``token_experts[h, w] = W_V^h e_w`` and
  ``column_experts[h, j] = W_V^h p_j + b_V^h``.
* gates     ``g[h, i, :](x) = gate(s[h, i, :])`` with scores
  ``s[h, i, j] = q[h, i] . (W_K^h (e_{x_j} + p_j) + b_K^h)``; ``q[h, i]`` is the query of a
  MASK at position i (divided by sqrt(K)) and does not depend on the row, so the gate of
  target i on column j depends on the row only through x_j (and the normalisation). Stored
  as ``queries``, ``token_keys``, ``column_keys``.
* output    ``rho[h, v] = (W_O^h)^T u_v`` (u_v: row v of the shared output matrix) and
  ``bias_v = u_v . b_O + b_v``.

Multi-head attention is H such mixtures summed ("stacked MoEs"). For ``block="attention"``
(attention + linear readout) the formula is the model's logit exactly
(tests/test_moe.py: max abs difference <= 1e-5). For ``block="transformer"`` the gates and
the mixture ``sum_j g alpha`` are exact, but the readout (residual, LayerNorm, FFN) is
nonlinear, so the logits are not a sum over columns.

Deeper models: the layer-2 input at position j is the layer-1 output there, itself a
mixture of the layer-1 experts of all columns gated by position j's layer-1 query; the
layer-2 experts are ``W_V^(2)`` applied to those mixtures ("mixture of MoEs"), no longer one
per (value, column). :func:`label_gates` then reports the LAST layer's gates of the label
query over the positions, which is what ``TabularMoEClassifier.explain`` shows.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd
import torch
from numpy.typing import ArrayLike
from torch import Tensor

from ..nn.network import TabularMoE, gate_weights
from ..tokenizer import MASK


def _as_tensor(value: object, name: str, device: torch.device, dtype: torch.dtype | None = None) -> Tensor:
    """``value`` (a tensor, numpy array or nested list) as a tensor on ``device`` (of
    ``dtype``, converted before it reaches the device: MPS holds no float64); a TypeError
    naming ``name`` for what torch cannot read (numpy's arrays had no ``.long``). A pandas
    frame or series (a tokenizer's output under ``transform_output="pandas"``) is read as
    its values: torch read a frame as a sequence of its columns, by label (a copy: pandas'
    copy-on-write arrays are read-only, which torch warns about)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        value = value.to_numpy(copy=True)
    try:
        return torch.as_tensor(value, dtype=dtype, device=device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            f"{name} must be a tensor or an array-like of numbers, got {type(value).__name__} ({exc})."
        ) from exc


def _as_token_ids(value: object, name: str, device: torch.device, masked: int) -> Tensor:
    """``value`` as a tensor of token ids on ``device``; a ValueError naming ``name`` for a
    boolean mask or floats that are not whole numbers (``.long()`` made True the MISSING
    token 1 and truncated 3.7 to token 3, both valid ids read without a word). Column
    ``masked`` (the target's, set to MASK) is never read, so not checked."""
    ids = _as_tensor(value, name, device)
    if ids.dtype == torch.bool:
        raise ValueError(f"{name} must be integer token ids, got a boolean tensor.")
    if ids.is_floating_point() and ids.numel() and ids.device.type != "meta":
        fractional = ids != ids.round()  # NaN included
        if ids.ndim == 2 and masked < ids.shape[1]:
            fractional[:, masked] = False
        if bool(fractional.any()):
            raise ValueError(
                f"{name} must be integer token ids, got {ids.dtype} values such as {ids[fractional][0].item()}."
            )
    return ids


def _check_width(values: Tensor, name: str, n_columns: int) -> None:
    """A ValueError naming ``name`` unless ``values`` is (B, L) or (B, L-1) (torch's own
    errors named no argument: 'tuple index out of range', a size mismatch of two tensors)."""
    if values.ndim != 2 or values.shape[1] not in (n_columns - 1, n_columns):
        raise ValueError(
            f"{name} must be 2-d, (rows, {n_columns - 1}) features or (rows, {n_columns}) with the "
            f"label position, got shape {tuple(values.shape)}."
        )


def _check_ids(ids: Tensor, name: str, n_tokens: int) -> None:
    """A ValueError naming ``name`` unless every id is in [0, n_tokens) (a negative id read
    the experts of the last tokens, where the network raised; one too large raised torch's
    'index ... is out of bounds', naming no argument). Meta tensors hold no values to check."""
    if ids.numel() and ids.device.type != "meta" and (int(ids.min()) < 0 or int(ids.max()) >= n_tokens):
        raise ValueError(
            f"{name} must be token ids in [0, {n_tokens}), got values from {int(ids.min())} to {int(ids.max())}."
        )


def _as_attend(value: object, n_rows: int, n_columns: int, device: torch.device) -> Tensor:
    """``attend`` as a (B, L) or (B, L-1) bool tensor with one row per row of the tokens (a
    single row is taken for every row, as torch's broadcasting did); a
    TypeError or ValueError naming it otherwise (0/1 integers and floats failed inside torch
    naming no argument: 'masked_fill_ only supports boolean masks', '~ is only implemented
    on integer and Boolean-type tensors'; another row count, 'The size of tensor a ...')."""
    attend = _as_tensor(value, "attend", device)
    if attend.dtype != torch.bool:
        raise TypeError(
            f"attend must be a boolean mask (True: the column is attended), got dtype {attend.dtype}; "
            "pass attend != 0 for a 0/1 mask."
        )
    return _per_row(attend, "attend", n_rows, n_columns)


def _per_row(values: Tensor, name: str, n_rows: int, n_columns: int) -> Tensor:
    """``values`` (B, L) or (B, L-1) with B = ``n_rows``, or one row taken for every row (as
    torch's broadcasting did); a ValueError naming ``name`` otherwise."""
    _check_width(values, name, n_columns)
    if values.shape[0] == 1 and n_rows != 1:  # one row for every row: torch broadcast it
        return values.expand(n_rows, -1).contiguous()
    if values.shape[0] != n_rows:
        raise ValueError(f"{name} has {values.shape[0]} rows for {n_rows} rows of tokens (or 1 for all).")
    return values


def _per_head(linear: torch.nn.Linear, x: Tensor, n_heads: int, bias: bool) -> Tensor:
    """(N, d) through a (H*K, d) projection -> (H, N, K)."""
    y = x @ linear.weight.T
    if bias:
        y = y + linear.bias
    return y.unflatten(-1, (n_heads, -1)).transpose(0, 1)


def _check_expert_form(model: object, caller: str) -> None:
    """A TypeError for anything but a TabularMoE, a ValueError for a network whose experts
    are not one per (value, column): deeper, or ``numeric_embedding="piecewise"``."""
    if not isinstance(model, TabularMoE):  # the estimator read "got ... n_layers=auto"
        raise TypeError(
            f"{caller} takes a TabularMoE module, got {type(model).__name__}: "
            "for a fitted TabularMoEClassifier pass clf.module_, for an ensemble "
            "(n_members > 1) clf.module_.member(m)."
        )
    if model.n_layers != 1:
        raise ValueError(
            "The (value, column) expert form exists for one-layer TabularMoE modules only "
            f"(got n_layers={model.n_layers}). "
            "For deeper models use tabmoe.interpret.moe.label_gates (last-layer gates). The "
            "estimator's n_layers='auto' fits two layers above 10,000 training rows; "
            "n_layers=1 keeps the expert form."
        )
    if getattr(model, "piecewise", False):
        raise ValueError(
            "The (value, column) expert form needs one embedding per token; a model fitted "
            "with numeric_embedding='piecewise' embeds each numeric value by its position in "
            "its bin. Use tabmoe.interpret.moe.label_gates for its gates."
        )


@torch.no_grad()
def value_experts(model: TabularMoE) -> tuple[Tensor, Tensor]:
    """The experts ``alpha[h, w, j]`` of a one-layer network in their two additive parts,
    ``(token_experts (H, V, K), column_experts (H, L, K))``, as :class:`MixtureOfExperts`
    stores them. A ``linear_term=True`` network has them too (its linear term is a term of
    the label's output, beside the attention), so unlike :meth:`MixtureOfExperts.from_model`
    this reads them off such a network; deeper and piecewise networks are refused as there."""
    _check_expert_form(model, "value_experts")
    att = model.blocks[0].attention
    emb, pos = model.token_table(), model.column_embedding  # (V, d), (L, d)
    return _per_head(att.value, emb, att.n_heads, bias=False), _per_head(att.value, pos, att.n_heads, bias=True)


@dataclass
class MixtureOfExperts:
    """The CBOW-MoE parameters of a one-layer :class:`~tabmoe.nn.network.TabularMoE`.

    Shapes: H heads, V token ids, L positions (label last), K key dim. ``tokens``,
    ``attend`` and ``output_ids`` may be tensors or array-likes (a tokenizer's numpy
    output, lists, pandas frames and series: their values), taken with :func:`torch.as_tensor` onto the parameters' device;
    ``attend`` is boolean (True: attended), one row per row of ``tokens`` or one for all;
    ``output_ids`` 1-d. Token ids outside [0, V), booleans and floats that are not whole
    numbers are a ValueError (the target's own slot, masked, is not read).
    """

    token_experts: Tensor  # (H, V, K)   W_V^h e_w
    column_experts: Tensor  # (H, L, K)  W_V^h p_j + b_V^h
    token_keys: Tensor  # (H, V, K)      W_K^h e_w
    column_keys: Tensor  # (H, L, K)     W_K^h p_j + b_K^h
    queries: Tensor  # (H, L, K)         (W_Q^h (e_MASK + p_i) + b_Q^h) / sqrt(K)
    output_embeddings: Tensor  # (H, V, K)  rho[h, v] = (W_O^h)^T u_v
    output_bias: Tensor  # (V,)          u_v . b_O + b_v
    gate: str
    block: str
    column_names: list = field(default_factory=list)  # (L,), the label last

    @classmethod
    @torch.no_grad()
    def from_model(cls, model: TabularMoE, column_names: Iterable | None = None) -> MixtureOfExperts:
        """The parameters of a one-layer network (``TabularMoEClassifier.module_``; for an
        ensemble, ``module_.member(m)``), read off on the network's device.

        ``column_names``: one name per position, the label LAST (``[*X.columns, "y"]``);
        default ``0 .. L-1``. A TypeError for anything but a TabularMoE (the estimator
        itself, an ensemble's StackedModel); a ValueError for a deeper network, one fitted
        with ``linear_term=True`` or ``numeric_embedding="piecewise"``, or another number of
        names.
        """
        _check_expert_form(model, "MixtureOfExperts.from_model")
        if getattr(model, "linear", None) is not None:
            raise ValueError(
                "The (value, column) expert form leaves out the linear term of a model fitted "
                "with linear_term=True: its label logits are not the MoE's alone."
            )
        token_experts, column_experts = value_experts(model)  # the checks of depth and piecewise
        block = model.blocks[0]
        att = block.attention
        h = att.n_heads
        emb = model.token_table()  # (V, d)
        pos = model.column_embedding  # (L, d)
        u = model.heads.weight  # (V, d)
        rho = (u @ att.output.weight).unflatten(-1, (h, -1)).transpose(0, 1)  # (H, V, K)
        names = list(column_names) if column_names is not None else list(range(model.n_columns))
        if len(names) != model.n_columns:
            raise ValueError(f"column_names has {len(names)} entries for {model.n_columns} columns.")
        return cls(
            token_experts=token_experts,
            column_experts=column_experts,
            token_keys=_per_head(att.key, emb, h, bias=False),
            column_keys=_per_head(att.key, pos, h, bias=True),
            queries=_per_head(att.query, emb[MASK] + pos, h, bias=True) / math.sqrt(att.key_dim),
            output_embeddings=rho,
            output_bias=u @ att.output.bias + model.heads.bias,
            gate=att.gate,
            block=block.block,
            column_names=names,
        )

    @property
    def n_heads(self) -> int:
        return self.token_experts.shape[0]

    @property
    def n_columns(self) -> int:
        return self.column_experts.shape[1]

    def alpha(self, token: int, column: int) -> Tensor:
        """The expert of value ``token`` in ``column``: (H, K). Either outside its range is a
        ValueError naming it (a negative one read the last token's or column's expert)."""
        ids = []
        for name, value, n in (("token", token, self.token_experts.shape[1]), ("column", column, self.n_columns)):
            try:  # an int, a numpy integer or a 0-d integer tensor
                index = None if isinstance(value, bool) else operator.index(value)
            except TypeError:
                index = None
            if index is None or not 0 <= index < n:
                raise ValueError(f"{name} must be an integer in [0, {n}), got {value!r}.")
            ids.append(index)
        return self.token_experts[:, ids[0]] + self.column_experts[:, ids[1]]

    def _target(self, target: int) -> int:
        """``target`` as a position in [0, L) (negative counts from the label's, -1); a
        ValueError naming it otherwise (torch's IndexError named no argument, a str failed
        with 'invalid data type', True meant position 1)."""
        n = self.n_columns
        if isinstance(target, bool) or not isinstance(target, numbers.Integral) or not -n <= target < n:
            raise ValueError(
                f"target must be a position in [{-n}, {n}) ({n} positions, -1 the label), got {target!r}."
            )
        return int(target) % n

    def _masked(self, tokens: Tensor | ArrayLike, target: int) -> Tensor:
        """(B, L) or (B, L-1) features -> (B, L) long with the target position set to MASK."""
        target = self._target(target)
        tokens = _as_token_ids(tokens, "tokens", self.token_experts.device, target)
        _check_width(tokens, "tokens", self.n_columns)
        tokens = tokens.long()
        if tokens.shape[1] == self.n_columns - 1:
            tokens = torch.nn.functional.pad(tokens, (0, 1), value=MASK)
        tokens = tokens.clone()
        tokens[:, target] = MASK  # what the target position held is never read
        _check_ids(tokens, "tokens", self.token_experts.shape[1])
        return tokens

    def experts(self, tokens: Tensor | ArrayLike, target: int = -1) -> Tensor:
        """The row's experts alpha[h, x_j, j]: tokens (B, L) -> (B, H, L, K)."""
        tokens = self._masked(tokens, target)
        return self.token_experts[:, tokens].transpose(0, 1) + self.column_experts  # (B, H, L, K)

    def gate_scores(
        self, tokens: Tensor | ArrayLike, target: int = -1, attend: Tensor | ArrayLike | None = None
    ) -> Tensor:
        """Scores s[h, target, j]: (B, L) -> (B, H, L); not-attended positions are -inf."""
        tokens, target = self._masked(tokens, target), self._target(target)
        keys = self.token_keys[:, tokens].transpose(0, 1) + self.column_keys  # (B, H, L, K)
        scores = (keys * self.queries[:, target, None, :]).sum(-1)  # (B, H, L)
        if attend is not None:
            attend = _as_attend(attend, len(tokens), self.n_columns, self.token_experts.device)
            attend = _pad_attend(attend, self.n_columns).clone()
            attend[:, target] = True  # the target's own MASK is always attended
            scores = scores.masked_fill(~attend[:, None, :], -math.inf)
        return scores

    def gates(
        self, tokens: Tensor | ArrayLike, target: int = -1, attend: Tensor | ArrayLike | None = None
    ) -> Tensor:
        """Gates ``g[h, target, j](x)``: (B, L) -> (B, H, L)."""
        return gate_weights(self.gate_scores(tokens, target, attend), self.gate)

    def mixture(
        self, tokens: Tensor | ArrayLike, target: int = -1, attend: Tensor | ArrayLike | None = None
    ) -> Tensor:
        """Per-head mixture of experts sum_j g alpha: (B, L) -> (B, H, K)."""
        g = self.gates(tokens, target, attend)
        return (g.unsqueeze(-1) * self.experts(tokens, target)).sum(-2)

    def contributions(
        self,
        tokens: Tensor | ArrayLike,
        output_ids: Tensor | ArrayLike,
        target: int = -1,
        attend: Tensor | ArrayLike | None = None,
    ) -> Tensor:
        """Additive contribution of head h, position j to the logit of each output id.

        tokens (B, L), output_ids (C,) -> (B, H, L, C); ``block="attention"`` only. Summed
        over h and j and plus ``output_bias[output_ids]`` this is the model's logit.
        """
        self._check_additive()
        g = self.gates(tokens, target, attend)  # (B, H, L)
        rho = self.output_embeddings[:, self._output_ids(output_ids)]  # (H, C, K)
        per_expert = torch.einsum("bhlk,hck->bhlc", self.experts(tokens, target), rho)
        return g.unsqueeze(-1) * per_expert

    def logits(
        self,
        tokens: Tensor | ArrayLike,
        output_ids: Tensor | ArrayLike,
        target: int = -1,
        attend: Tensor | ArrayLike | None = None,
    ) -> Tensor:
        """Logits of ``output_ids`` at ``target`` from the MoE form: (B, L) -> (B, C)."""
        self._check_additive()
        mix = self.mixture(tokens, target, attend)  # (B, H, K)
        output_ids = self._output_ids(output_ids)
        rho = self.output_embeddings[:, output_ids]  # (H, C, K)
        return torch.einsum("bhk,hck->bc", mix, rho) + self.output_bias[output_ids]

    def _output_ids(self, output_ids: object) -> Tensor:
        """``output_ids`` as a 1-d long tensor of token ids; a ValueError naming it otherwise
        (a single id or a 2-d array failed in einsum, a negative id read the last tokens)."""
        ids = _as_tensor(output_ids, "output_ids", self.token_experts.device)
        if ids.shape == (0,):  # [] reads as float32: was blamed on its dtype
            raise ValueError("output_ids is empty: pass the (C,) token ids to score, at least one.")
        if ids.ndim != 1 or ids.is_floating_point() or ids.dtype == torch.bool:
            raise ValueError(
                f"output_ids must be 1-d (C,) integer token ids, got shape {tuple(ids.shape)} of {ids.dtype}; "
                "pass [id] for one."
            )
        ids = ids.long()
        _check_ids(ids, "output_ids", self.output_embeddings.shape[1])
        return ids

    def _check_additive(self) -> None:
        if self.block != "attention":
            raise ValueError(
                f"Logits are a sum over experts only for block='attention' (got "
                f"block={self.block!r}: the transformer readout is nonlinear); gates and "
                "mixtures are still exact."
            )


def _pad_attend(attend: Tensor, n_columns: int) -> Tensor:
    if attend.shape[1] == n_columns - 1:
        return torch.nn.functional.pad(attend, (0, 1), value=True)
    return attend


@torch.no_grad()  # a reading, as MixtureOfExperts' (its tables are detached copies)
def label_gates(
    model: TabularMoE,
    tokens: Tensor | ArrayLike,
    attend: Tensor | ArrayLike | None = None,
    fraction: Tensor | ArrayLike | None = None,
) -> Tensor:
    """Last-layer gates of the (masked) label query over all positions, any depth.

    tokens (B, L) or (B, L-1) features, attend (B, L) / (B, L-1) bool -> (B, H, L); the last
    position is the label's own MASK token. ``fraction`` (a ``numeric_embedding="piecewise"``
    model's bin positions) is (B, L) or (B, L-1) too; attend and fraction may be one row for
    all rows. Tensors or array-likes, as for :class:`MixtureOfExperts`. For one layer this equals
    :meth:`MixtureOfExperts.gates`; for deeper models the positions hold mixtures of the
    earlier layers' experts (see the module docstring).
    """
    if not isinstance(model, TabularMoE):
        raise TypeError(
            f"label_gates takes a TabularMoE module, got {type(model).__name__}; for an ensemble "
            "take StackedModel.member(m), or StackedModel.map(label_gates, tokens, ...) for all members."
        )
    weight = model.heads.weight  # the device (and, for fraction, the dtype) to take them to
    tokens = _as_token_ids(tokens, "tokens", weight.device, model.n_columns - 1)
    _check_width(tokens, "tokens", model.n_columns)
    _check_ids(tokens[:, : model.n_columns - 1].long(), "tokens", model.token_embedding.num_embeddings)
    attend = None if attend is None else _as_attend(attend, len(tokens), model.n_columns, weight.device)
    if fraction is not None:  # a (B, 1) one gave column 0's bin position to every column
        fraction = _as_tensor(fraction, "fraction", weight.device, weight.dtype)
        fraction = _per_row(fraction, "fraction", len(tokens), model.n_columns)
    _, attend, x = model.label_pass(tokens, attend, fraction)
    label = model.label_position
    return model.blocks[-1].attention.weights(x[:, label : label + 1], x, attend)[:, :, 0]
