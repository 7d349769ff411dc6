"""Ensembles trained side by side as ONE batched model.

:class:`StackedModel` holds M independently initialised copies of a module with every
parameter stacked on a leading member dimension (M, ...), in a copy of the module's own tree
(so names, module types and the trainer's weight-decay rule are unchanged). Any function of
the module — the training objective, ``label_logits`` — runs for all members at once through
:func:`torch.func.vmap` over :func:`torch.func.functional_call`; random ops (dropout, feature
dropout) draw independently per member.

Training minimises the SUM of the members' mean losses, so each member gets exactly the
gradient it would get alone on the same batches (tests/test_ensemble.py checks this against
separately trained models). Prediction averages the members' probabilities.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from .trainer import Batch, LossFn


class StackedModel(nn.Module):
    """M copies of a module, parameters stacked as (M, ...); buffers shared (identical).

    ``members``: modules of identical structure (e.g. built under different seeds).
    """

    def __init__(self, members: Sequence[nn.Module]):
        super().__init__()
        if len(members) < 1:
            raise ValueError("StackedModel needs at least one member.")
        self.n_members = len(members)
        self.module = copy.deepcopy(members[0])
        for name, _ in list(self.module.named_parameters()):
            stacked = torch.stack([m.get_parameter(name).detach() for m in members])
            owner, _, leaf = name.rpartition(".")
            setattr(self.module.get_submodule(owner), leaf, nn.Parameter(stacked))

    # The template module's attributes the callers read (label ids, depth, ...).
    @property
    def label_ids(self) -> Tensor:
        return self.module.label_ids

    @property
    def n_layers(self) -> int:
        return self.module.n_layers

    @property
    def n_columns(self) -> int:
        return self.module.n_columns

    def forward(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(module, *args)`` with the module's current (swapped-in) parameters."""
        return fn(self.module, *args)

    def map(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(member, *args)`` for every member at once; outputs gain a leading (M,) dim."""
        params = {f"module.{k}": v for k, v in self.module.named_parameters()}

        def one(member_params: dict[str, Tensor]) -> Any:
            return functional_call(self, member_params, (fn, *args), strict=False)

        return vmap(one, randomness="different")(params)

    @torch.no_grad()
    def clip_grad_norm_(self, max_norm: float) -> Tensor:
        """torch's ``clip_grad_norm_`` for each member on its own: member m's gradients are
        scaled to an L2 norm of at most ``max_norm``, whatever the others' are. Returns the
        members' norms before clipping, (M,)."""
        grads = [p.grad for p in self.module.parameters() if p.grad is not None]
        if not grads:
            return torch.zeros(self.n_members)
        norms = torch.stack([g.reshape(len(g), -1).float().pow(2).sum(1) for g in grads]).sum(0).sqrt()
        scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)  # torch's clip coefficient
        for g in grads:
            g.mul_(scale.to(g.dtype).view(-1, *[1] * (g.dim() - 1)))
        return norms

    def member(self, m: int) -> nn.Module:
        """A plain, independent copy of member ``m`` (eval mode, same device)."""
        if not -self.n_members <= m < self.n_members:
            raise IndexError(f"member {m} out of range for {self.n_members} members.")
        single = copy.deepcopy(self.module)
        for name, p in list(single.named_parameters()):
            owner, _, leaf = name.rpartition(".")
            setattr(single.get_submodule(owner), leaf, nn.Parameter(p.detach()[m].clone()))
        return single.eval()

    def members(self) -> list[nn.Module]:
        return [self.member(m) for m in range(self.n_members)]

    def label_logits(self, tokens: Tensor, attend: Tensor | None = None, fraction: Tensor | None = None) -> Tensor:
        """Log of the members' mean class probabilities, (B, C): a valid logit vector."""
        logits = self.map(lambda module, t, a, f: module.label_logits(t, a, f), tokens, attend, fraction)  # (M, B, C)
        return mean_probability_logits(logits)


def mean_probability_logits(logits: Tensor) -> Tensor:
    """The members' logits (M, B, C) -> the log of their mean class probabilities (B, C)."""
    return torch.logsumexp(torch.log_softmax(logits, dim=-1), dim=0) - math.log(len(logits))


class MemberLoss:
    """Lift ``loss_fn(module, batch) -> (sum, weight)`` to a :class:`StackedModel`.

    Returns ``(w̄ * sum_m mean_m, w̄)`` so that ``sum / weight`` — what the trainer
    differentiates — is the sum of the members' mean losses (each member's gradient is its
    own), and the trainer's running loss is the sum over members (its ``train_loss`` the mean,
    with ``TrainerConfig.n_members``). ``set_epoch`` passes the trainer's epoch on to a
    scheduled ``loss_fn``.
    """

    def __init__(self, loss_fn: LossFn):
        self.loss_fn = loss_fn

    def __call__(self, model: StackedModel, batch: Batch) -> tuple[Tensor, Tensor]:
        total, weight = model.map(self.loss_fn, batch)  # (M,), (M,)
        mean_weight = weight.mean()
        return (total / weight.clamp_min(1e-12)).sum() * mean_weight, mean_weight

    def set_epoch(self, epoch: int) -> None:
        set_epoch = getattr(self.loss_fn, "set_epoch", None)
        if set_epoch is not None:
            set_epoch(epoch)
