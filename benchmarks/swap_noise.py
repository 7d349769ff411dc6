"""Research-only (study 62): swap noise on the training inputs.

A denoising autoencoder's corruption for tables (the "swap noise" of the Porto Seguro
competition's winning solution, and of many tabular self-supervised methods since): each
feature cell of a training row is, with probability ``swap_rate``, replaced by the same
column's value in a row of the batch drawn uniformly (itself included). The targets stay
the true values, so every column (the label included) learns to be predicted from a
context in which some cells hold plausible but wrong values: a regulariser whose
corruptions are values the column really takes, where ``unknown_rate`` puts the
never-seen UNKNOWN and ``feature_dropout`` removes the cell. The label column itself is never swapped.
Prediction, validation and early stopping read clean rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from tabmoe import TabularMoEClassifier
from tabmoe.nn.objective import MaskedFeatureObjective


def swap_cells(tokens: Tensor, rate: float) -> Tensor:
    """(B, L) tokens with each feature cell (not the last column, the label) replaced with
    probability ``rate`` by the same column's token in a row of the batch drawn uniformly
    (itself included, as a permutation-free draw)."""
    b, n = tokens.shape
    donor_rows = torch.randint(0, b, (b, n), device=tokens.device)
    donors = tokens.gather(0, donor_rows)  # donors[i, j] = tokens[donor_rows[i, j], j]
    swap = torch.rand((b, n), device=tokens.device) < rate
    swap[:, -1] = False
    return torch.where(swap, donors, tokens)


@dataclass
class SwapNoiseObjective(MaskedFeatureObjective):
    """The defaults' objective with :func:`swap_cells` applied to the training inputs (after
    the UNKNOWN replacement the objective already makes)."""

    swap_rate: float = 0.0

    def corrupt(self, tokens: Tensor) -> Tensor:
        inputs = super().corrupt(tokens)
        return swap_cells(inputs, self.swap_rate) if self.swap_rate > 0 else inputs


class SwapNoiseClassifier(TabularMoEClassifier):
    """``TabularMoEClassifier`` trained with :class:`SwapNoiseObjective` at ``swap_rate``."""

    swap_rate: float = 0.1  # set on the instance; clone/get_params drop it

    def _objective(self, masking: str, warmup_epochs: int = 0):
        if self.n_members != 1 or self.missing != "token" or self.numeric_embedding == "piecewise":
            # piecewise: a swapped token would keep its own row's position in the bin
            raise ValueError("swap noise is built for one member, missing='token' (no absent cells) and "
                             "numeric_embedding other than 'piecewise'")
        plain = super()._objective(masking, warmup_epochs)
        fields = {name: getattr(plain, name) for name in plain.__dataclass_fields__ if not name.startswith("_")}
        return SwapNoiseObjective(**fields, swap_rate=self.swap_rate)
