"""Research-only (study 74): the weights a fit keeps as the average of its best epochs'.

Early stopping keeps the one epoch whose hold-out loss was lowest; on small tables that is a
pick among noisy losses of a 9-100-row hold-out. Averaging the weights of the best few epochs
(Vaswani et al. 2017 average the last checkpoints of a run) smooths the pick at no cost at
prediction; the greedy form (Wortsman et al. 2022's greedy soup) adds each next-best epoch
only if the average's hold-out loss does not rise, so it is never worse there than the best
epoch alone. ``TrainerConfig.soup_top`` / ``soup_greedy``; the trainer calls these.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import torch
from torch import nn

#: (validation loss, epoch, weights)
Entry = tuple[float, int, dict]


def kept_top(top: list[Entry], loss: float, epoch: int, module: nn.Module, k: int) -> list[Entry]:
    """``top`` with this epoch's entry in its place if among the ``k`` lowest losses (a NaN
    loss never is); sorted by loss, the earlier epoch first among equals."""
    if not math.isfinite(loss) or (len(top) >= k and loss >= top[-1][0]):
        return top
    entry = (loss, epoch, copy.deepcopy(module.state_dict()))
    return sorted([*top, entry], key=lambda e: (e[0], e[1]))[:k]


def mean_state(states: list[dict]) -> dict:
    """The mean of ``states``' floating-point tensors; the others (index buffers) the first's."""
    return {key: torch.stack([s[key] for s in states]).mean(0) if value.is_floating_point() else value
            for key, value in states[0].items()}


@torch.no_grad()
def soup(module: nn.Module, best_epoch: int, top: list[Entry], evaluate: Callable[[nn.Module], float],
         greedy: bool) -> list[int]:
    """Load into ``module`` (which holds the best epoch's weights) the average of the best
    epoch's and ``top``'s others: every one, or greedily in order of loss each that does not
    raise ``evaluate`` (the hold-out's loss). Returns the epochs averaged, the best first."""
    others = [e for e in top if e[1] != best_epoch]
    chosen = [(math.nan, best_epoch, copy.deepcopy(module.state_dict()))]
    if not greedy:
        chosen += others
    else:
        current = evaluate(module)
        for candidate in others:
            module.load_state_dict(mean_state([s for *_, s in [*chosen, candidate]]))
            loss = evaluate(module)
            if loss <= current:
                chosen, current = [*chosen, candidate], loss
    module.load_state_dict(mean_state([s for *_, s in chosen]))
    return [epoch for _, epoch, _ in chosen]
