"""The masked-feature objective: which positions are masked, and the loss.

Every column, the label (last position) included, is predicted from the others. A batch is
a dict with ``tokens`` (B, L) and ``weight`` (B,) (sample weight x class weight), and
optionally ``attend`` (B, L) bool (False = column absent, not attended to).

* ``leave_one_out`` (one layer): every column of every row is masked in turn — the paper's
  objective — computed in one pass by :meth:`TabularMoE.hidden_loo`.
* ``copies``: the same objective through L materialised copies; the reference form.
* ``random`` (any depth): the label always, and each feature column independently with
  probability ``mask_rate``, are replaced by MASK; the loss covers the masked positions.
  One pass of a deep network cannot leave each column out in turn, so this is the
  multi-layer objective.

``label_smoothing`` (training only, default 0) smooths the targets of every scored column.

``feature_dropout`` (training only, default 0): each feature token of each row is dropped
with that probability — left out of the attention and not scored, as an absent column — so
the model learns to predict from subsets of the columns (docs/paper.md section 5). Opt-in: it
cost OOD accuracy on the paper's simulation 5/0.9/0 (docs/paper.md section 8).

The loss of a row is ``sum_j w_j * nll_j`` over its scored positions with ``w_label = 1`` and
``w_feature = feature_loss_weight``; with ``feature_warmup_epochs = k > 0`` the feature weight
starts at 1 (every column weighted as the label, the paper's objective) and moves linearly to
``feature_loss_weight`` at epoch k + 1: the trainer calls ``set_epoch`` before each epoch, as
PyTorch's ``DistributedSampler.set_epoch`` is called. The batch loss is the row-weighted sum
divided by the row-weighted number of scored positions, which is the mean over masked copies in the paper's
setting (all weights 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

from ..tokenizer import MASK, MISSING, UNKNOWN
from .network import TabularMoE

MASKINGS = ("auto", "leave_one_out", "copies", "random")


@dataclass
class MaskedFeatureObjective:
    """Configured loss: ``objective(model, batch) -> (weighted_sum, weight)``."""

    masking: str = "leave_one_out"
    feature_loss_weight: float = 1.0
    mask_rate: float = 0.15
    feature_dropout: float = 0.0
    unknown_rate: float = 0.0
    max_scored_features: int | None = None
    label_smoothing: float = 0.0
    feature_warmup_epochs: int = 0
    # The warm-up's current feature weight, a 0-dim CPU tensor updated in place by set_epoch:
    # under torch.compile one graph serves every epoch (a Python float would be guarded on).
    _weight: Tensor | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.masking not in MASKINGS[1:]:
            raise ValueError(f"masking must be one of {MASKINGS[1:]}, got {self.masking!r}.")
        if not 0.0 <= self.feature_dropout < 1.0:
            raise ValueError(f"feature_dropout must be in [0, 1), got {self.feature_dropout!r}.")
        if not 0.0 <= self.unknown_rate < 1.0:
            raise ValueError(f"unknown_rate must be in [0, 1), got {self.unknown_rate!r}.")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing!r}.")
        if self.max_scored_features is not None and self.max_scored_features < 1:
            raise ValueError(f"max_scored_features must be None or >= 1, got {self.max_scored_features!r}.")
        if self.feature_warmup_epochs < 0:
            raise ValueError(f"feature_warmup_epochs must be >= 0, got {self.feature_warmup_epochs!r}.")
        if self.feature_warmup_epochs > 0:
            self._weight = torch.tensor(self.feature_weight(1))

    def set_epoch(self, epoch: int) -> None:
        """The 1-based epoch the next batches belong to (the warm-up schedule's step)."""
        if self._weight is not None:
            self._weight.fill_(self.feature_weight(epoch))

    def feature_weight(self, epoch: int) -> float:
        """The weight of each feature term in ``epoch`` (see the module docstring)."""
        k, target = self.feature_warmup_epochs, float(self.feature_loss_weight)
        if k == 0 or epoch > k:
            return target
        return 1.0 + (target - 1.0) * (epoch - 1) / k

    def position_weights(self, n_columns: int, device: torch.device) -> Tensor:
        w = torch.ones(n_columns, device=device)
        # float(): a numpy float32 (a numpy grid's) is no value torch assigns into a tensor
        w[:-1] = float(self.feature_loss_weight) if self._weight is None else self._weight
        return w

    def __call__(self, model: TabularMoE, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        tokens, attend, fraction = batch["tokens"].long(), batch.get("attend"), batch.get("fraction")
        if self.feature_dropout > 0 and model.training:
            attend = drop_features(tokens.shape, self.feature_dropout, tokens.device, attend)
        inputs = self.corrupt(tokens) if model.training else tokens
        inflate = None
        if self.masking == "leave_one_out":
            query = self.scored_positions(tokens.shape[1], tokens.device) if model.training else None
            hidden, scored = model.hidden_loo(inputs, attend, query, fraction), None
            if query is not None:
                hidden, scored, inflate = scatter_scored(hidden, query, tokens.shape[1])
        elif self.masking == "copies":
            hidden, scored = model.hidden_copies(inputs, attend, fraction), None
        else:
            scored = random_mask(tokens.shape, self.mask_rate, tokens.device)
            if attend is not None:
                scored = scored & attend  # an absent / dropped column is neither masked nor scored
            masked = inputs.masked_fill(scored, MASK)
            hidden = model.hidden(masked, attend, fraction=fraction)
        # Smoothed targets in training only: the validation loss early stopping reads is the NLL.
        nll, valid = model.heads.nll(hidden, tokens, self.label_smoothing if model.training else 0.0)
        if scored is not None:
            valid = valid & scored
        if attend is not None:
            valid = valid & attend
        position_weight = self.position_weights(tokens.shape[1], tokens.device)
        return weighted_sum(nll, valid, batch["weight"], position_weight, inflate)

    def corrupt(self, tokens: Tensor) -> Tensor:
        """(B, L) training inputs from the true tokens, which stay the targets: UNKNOWN in
        place of values at ``unknown_rate`` (a hook: study 62's research-only swap noise)."""
        return replace_with_unknown(tokens, self.unknown_rate) if self.unknown_rate > 0 else tokens

    def scored_positions(self, n_columns: int, device: torch.device) -> Tensor | None:
        """(Q,) positions one training batch scores: the label and ``max_scored_features``
        feature columns drawn without replacement (None: every column)."""
        k = self.max_scored_features
        if k is None or k >= n_columns - 1:
            return None
        features = torch.rand(n_columns - 1, device=device).argsort()[:k]
        label = torch.full((1,), n_columns - 1, dtype=features.dtype, device=device)
        return torch.cat([features.sort().values, label])


def random_mask(shape: torch.Size, rate: float, device: torch.device) -> Tensor:
    """(B, L) bool: the label (last column) always, each feature with probability ``rate``."""
    scored = torch.rand(shape, device=device) < rate
    scored[:, -1] = True
    return scored


def drop_features(shape: torch.Size, rate: float, device: torch.device, attend: Tensor | None) -> Tensor:
    """(B, L) bool attend mask with each feature (not the label) dropped with probability ``rate``."""
    keep = torch.rand(shape, device=device) >= rate
    keep[:, -1] = True
    return keep if attend is None else attend & keep


def replace_with_unknown(tokens: Tensor, rate: float) -> Tensor:
    """(B, L) tokens with each observed feature value (not MISSING, not the label) replaced by
    UNKNOWN with probability ``rate``: the inputs only; the targets stay the true values, so
    the UNKNOWN embedding learns what a value unseen at fit should contribute."""
    replace = (torch.rand(tokens.shape, device=tokens.device) < rate) & (tokens != MISSING)
    replace[:, -1] = False
    return tokens.masked_fill(replace, UNKNOWN)


def scatter_scored(hidden: Tensor, query: Tensor, n_columns: int) -> tuple[Tensor, Tensor, Tensor]:
    """Outputs of the scored positions (B, Q, d) placed at ``query`` in (B, L, d) zeros, the
    (1, L) scored mask, and the (L,) inflation (L - 1) / (Q - 1) of each scored feature, so the
    loss sum and its normaliser are unbiased estimates of the all-columns ones."""
    b, q, d = hidden.shape
    full = hidden.new_zeros(b, n_columns, d).index_copy(1, query, hidden)
    scored = torch.zeros(n_columns, dtype=torch.bool, device=hidden.device).index_fill(0, query, True)
    # At least float32, as the nll it scales: bf16 (the hidden's under autocast) rounds 29/7 by 0.3%
    dtype, ratio = torch.promote_types(hidden.dtype, torch.float32), (n_columns - 1) / (q - 1)
    inflate = torch.full((n_columns,), ratio, dtype=dtype, device=hidden.device)
    inflate[-1] = 1.0
    return full, scored.unsqueeze(0), inflate


def weighted_sum(
    nll: Tensor, valid: Tensor, row_weight: Tensor, position_weight: Tensor, inflate: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """nll, valid (B, L); row_weight (B,); position_weight, inflate (L,) -> (loss sum, normaliser).

    ``inflate`` scales a position's term in both the sum and the normaliser (sampled
    positions standing for the unsampled ones)."""
    v = valid.to(nll.dtype)
    if inflate is not None:
        v = v * inflate
    total = (nll * v * position_weight * row_weight[:, None]).sum()
    return total, (v * row_weight[:, None]).sum()


def label_loss(model: TabularMoE, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """Weighted label cross-entropy with only the label masked (validation / early stopping).

    Rows whose label token is not a class (unlabeled rows) are skipped.
    """
    tokens = batch["tokens"].long()
    logits = model.label_logits(tokens, batch.get("attend"), batch.get("fraction"))
    target = torch.searchsorted(model.label_ids, tokens[:, -1].contiguous()).clamp_max(len(model.label_ids) - 1)
    valid = model.label_ids[target] == tokens[:, -1]
    nll = F.cross_entropy(logits.float(), target, reduction="none")
    w = batch["weight"] * valid
    return (nll * w).sum(), w.sum()
