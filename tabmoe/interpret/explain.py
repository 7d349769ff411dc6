"""Per-row explanations of the label prediction from the MoE view (see :mod:`tabmoe.interpret.moe`).

:func:`explain_tokens` turns feature tokens into an :class:`Explanation` of DataFrames:
the label query's gate on every input column (per head and averaged over heads) and, for a
one-layer ``block="attention"`` model, every column's additive contribution to every class
logit. :func:`gate_importances` aggregates gates into feature importances in batches, so
memory does not grow with the number of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from ..nn._base import predict_batch_rows
from ..nn.ensemble import StackedModel, mean_probability_logits
from .moe import MixtureOfExperts, label_gates

#: Name of the label position's own (masked) token in explanations: its expert is the
#: same for every row, its gate is the share of attention that no input column gets.
#: (``[MASK].1``, ``[MASK].2``, ... where a feature column has the name; see :func:`mask_column`.)
MASK_COLUMN = "[MASK]"


def mask_column(columns: Sequence) -> str:
    """The label position's column name beside feature ``columns``: ``[MASK]``, or, where a
    feature column is named so, the first of ``[MASK].1``, ``[MASK].2``, ... that none is
    (as ``read_csv`` renames a repeated name)."""
    taken = {c for c in columns if isinstance(c, str)}
    name, k = MASK_COLUMN, 0
    while name in taken:
        k += 1
        name = f"{MASK_COLUMN}.{k}"
    return name


@dataclass
class Explanation:
    """What :meth:`TabularMoEClassifier.explain` returns; all frames share the row index.

    gates : (n_rows, n_features + 1)
        Head-averaged gate of the label query on each input column; the last column,
        ``[MASK]`` (``[MASK].1`` where a feature column is named ``[MASK]``), is the label
        position's own token. Softmax gates sum to 1 per row;
        TanhMax gates are signed. Columns left out of the attention (absent, NaN with
        ``missing="exclude"``, a value unseen at fit with ``unknown="exclude"``) get 0. Ensembles: averaged over members too.
    head_gates : (n_rows, n_heads * (n_features + 1))
        The same per head; columns are a MultiIndex (head, column). A column labelled
        ``None`` reads NaN there and in ``contributions`` (pandas keeps no missing value in
        a MultiIndex level); ``gates`` keeps the label.
    contributions : (n_rows, n_classes * (n_features + 1)) or None
        One-layer ``block="attention"`` single models without ``linear_term`` and with one
        embedding per token (not ``numeric_embedding="piecewise"``) only: the additive contribution of each
        column to each class logit; columns are a MultiIndex (class, column). For every row
        and class, the contributions plus ``bias`` equal ``logits`` (up to float32 rounding).
    bias : (n_classes,) Series or None
        The row-independent part of each class logit (``u_c . b_O + b_c``).
    logits : (n_rows, n_classes)
        The model's class logits, computed by the model itself (``predict_proba`` is their
        softmax; for ensembles the log of the members' mean probabilities; not for a row that
        ``unknown="borrow"`` re-reads, which ``explain`` reads with UNKNOWN). They are float32:
        with ``mixed_precision``, ``predict_proba`` runs the network's body in bf16 and
        differs from their softmax by that rounding.
    """

    gates: pd.DataFrame
    head_gates: pd.DataFrame
    logits: pd.DataFrame
    contributions: pd.DataFrame | None = None
    bias: pd.Series | None = None


def _label_gates(
    module: nn.Module, tokens: Tensor, attend: Tensor | None, fraction: Tensor | None, absolute: bool = False
) -> Tensor:
    """(B, H, L) label gates (``absolute``: their absolute values, taken per member and
    head); ensembles averaged over members."""
    if isinstance(module, StackedModel):
        gates = module.map(label_gates, tokens, attend, fraction)  # (M, B, H, L)
        return (gates.abs() if absolute else gates).mean(0)
    gates = label_gates(module, tokens, attend, fraction)
    return gates.abs() if absolute else gates


def _logits_and_gates(module: nn.Module, tokens: Tensor, attend: Tensor | None, fraction: Tensor | None
                      ) -> tuple[Tensor, Tensor]:
    """The label logits (B, C), classes by token id, and :func:`_label_gates` (B, H, L), from
    one pass of the network."""
    if isinstance(module, StackedModel):
        logits, gates = module.map(lambda m, t, a, f: m.label_logits_and_gates(t, a, f), tokens, attend, fraction)
        return mean_probability_logits(logits), gates.mean(0)  # (M, B, C), (M, B, H, L)
    return module.label_logits_and_gates(tokens, attend, fraction)


def _batches(tokens: Tensor, attend: Tensor | None, fraction: Tensor | None, batch_rows: int, device: torch.device):
    for start in range(0, len(tokens), batch_rows):
        stop = start + batch_rows
        yield tuple(None if t is None else t[start:stop].to(device) for t in (tokens, attend, fraction))


def additive(module: nn.Module) -> bool:
    """Whether a module's label logits are a sum of per-column contributions."""
    return (
        not isinstance(module, StackedModel)
        and module.n_layers == 1
        and module.blocks[0].block == "attention"
        and getattr(module, "linear", None) is None
        and not getattr(module, "piecewise", False)
    )


@torch.no_grad()
def explain_tokens(
    module: nn.Module,
    tokens: Tensor,
    attend: Tensor | None,
    output_ids: np.ndarray,
    columns: Sequence,
    classes: Sequence,
    index: pd.Index,
    batch_rows: int = 8192,
    fraction: Tensor | None = None,
) -> Explanation:
    """Explain the label prediction of ``module`` on feature tokens (n, F).

    ``output_ids``: the label token id of each class, in ``classes`` order; ``columns``: the
    F feature names; ``fraction`` (n, F): the values' positions in their bins, for a
    piecewise-linear network (see :meth:`TabularMoE.embed`).
    """
    module = module.eval()
    device = next(module.parameters()).device
    names = [*columns, mask_column(columns)]
    moe = MixtureOfExperts.from_model(module, names) if additive(module) else None
    if moe is not None:  # contributions are (B, H, L, C) a batch: capped as predict's activations
        batch_rows = min(batch_rows, predict_batch_rows(len(names), moe.n_heads * len(output_ids)))
    ids = torch.as_tensor(output_ids, device=device)
    order = np.searchsorted(np.sort(output_ids), output_ids)  # label_logits: sorted ids -> classes
    # float64 outputs filled batch by batch and framed without a copy: the batches' float32
    # tensors concatenated, cast and copied into the frames held 3 times the output at once
    n, filled, start = len(tokens), {}, 0
    for batch, att, frac in _batches(tokens, attend, fraction, batch_rows, device):
        if moe is not None:
            parts = {"logits": module.label_logits(batch, att, frac)[:, order], "gates": moe.gates(batch, attend=att),
                     # (B, H, L, C) -> (B, C*L)
                     "contributions": moe.contributions(batch, ids, attend=att).sum(1).transpose(1, 2).flatten(1)}
        else:
            batch_logits, batch_gates = _logits_and_gates(module, batch, att, frac)
            parts = {"logits": batch_logits[:, order], "gates": batch_gates}
        for name, part in parts.items():
            if name not in filled:
                filled[name] = np.empty((n, *part.shape[1:]), dtype=np.float64)
            filled[name][start : start + len(part)] = part.cpu().double().numpy()  # (MPS has no float64)
        start += len(batch)
    g = filled["gates"]  # (n, H, L)
    n_heads = g.shape[1]
    head_columns = _product(pd.RangeIndex(n_heads, name="head"), _labels(names, "column"))
    out = Explanation(
        gates=pd.DataFrame(g.mean(1), index=index, columns=_labels(names, "column"), copy=False),
        head_gates=pd.DataFrame(g.reshape(len(g), -1), index=index, columns=head_columns, copy=False),
        logits=pd.DataFrame(filled["logits"], index=index, columns=_labels(classes, "class"), copy=False),
    )
    if moe is not None:
        bias = moe.output_bias[ids].cpu().double().numpy()  # MPS has no float64
        out.contributions = pd.DataFrame(
            filled["contributions"], index=index, copy=False,
            columns=_product(_labels(classes, "class"), _labels(names, "column")),
        )
        out.bias = pd.Series(bias, index=_labels(classes, "class"))
    return out


@torch.no_grad()
def gate_importances(
    module: nn.Module, tokens: Tensor, attend: Tensor | None, batch_rows: int = 8192,
    fraction: Tensor | None = None,
) -> np.ndarray:
    """Absolute label gate of each feature column, averaged over the heads and the rows of
    ``tokens`` (n, F) (``fraction`` (n, F) for a piecewise-linear network), normalised to
    sum to 1 over the features: (F,). The absolute value is taken per head (and, for an
    ensemble, per member), before the averages: signed TanhMax heads of opposite signs on a
    column do not cancel, within a member or across members."""
    module = module.eval()
    device = next(module.parameters()).device
    total = torch.zeros(tokens.shape[1], dtype=torch.float64, device="cpu")  # not a caller's default device
    for batch, att, frac in _batches(tokens, attend, fraction, batch_rows, device):
        g = _label_gates(module, batch, att, frac, absolute=True).mean(1)[:, :-1]  # (B, F)
        total += g.cpu().double().sum(0)  # float64 on the CPU: MPS has none
    return (total / total.sum().clamp_min(1e-300)).numpy()


def _labels(values: list, name: str) -> pd.Index:
    """Column or class labels as one flat level: tuple labels (a MultiIndex frame's) stay
    tuples beside the string ``"[MASK]"`` instead of becoming levels."""
    return pd.Index(values, tupleize_cols=False, name=name)


def _product(outer: pd.Index, inner: pd.Index) -> pd.MultiIndex:
    """``MultiIndex.from_product`` in the given order, without sorting the levels (which
    fails on mixed tuple and string labels)."""
    codes = [np.repeat(np.arange(len(outer)), len(inner)), np.tile(np.arange(len(inner)), len(outer))]
    return pd.MultiIndex(levels=[outer, inner], codes=codes, names=[outer.name, inner.name])
