"""The trainer's learning-rate schedules, each torch's own scheduler or None: a decay on a
plateau of the validation loss (stepped each epoch), a linear warm-up and a cosine annealing
(both stepped after every step)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from .trainer import TrainerConfig


def plateau_scheduler(
    optimizer: torch.optim.Optimizer, cfg: TrainerConfig
) -> torch.optim.lr_scheduler.ReduceLROnPlateau | None:
    """torch's ReduceLROnPlateau on the validation loss (the training loss without
    validation data, as scikit-learn's ``learning_rate="adaptive"``), counting epochs
    without improvement as early stopping does: by at least ``tol``, absolute."""
    if cfg.lr_decay_patience is None:
        return None
    if cfg.lr_decay_patience < 1:
        raise ValueError(f"lr_decay_patience must be >= 1 or None, got {cfg.lr_decay_patience!r}.")
    return torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="min", factor=cfg.lr_decay_factor,
        patience=cfg.lr_decay_patience - 1,  # torch's: epochs ignored before the decay
        threshold=cfg.tol, threshold_mode="abs",
    )  # fmt: skip


def warmup_scheduler(
    optimizer: torch.optim.Optimizer, cfg: TrainerConfig, n_rows: int
) -> torch.optim.lr_scheduler.LinearLR | None:
    """torch's LinearLR over the S steps of the first ``lr_warmup_epochs`` epochs: step k
    of them trains at lr * k / S, every later step at lr. Stepped after each of the
    first S - 1 steps; None without a warm-up."""
    epochs = cfg.lr_warmup_epochs
    if epochs < 0:
        raise ValueError(f"lr_warmup_epochs must be >= 0, got {epochs!r}.")
    steps = epochs * math.ceil(n_rows / cfg.batch_size)
    if steps < 2:  # one step at lr * 1 / 1 is no warm-up
        return None
    return torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0 / steps, total_iters=steps - 1)


def cosine_scheduler(
    optimizer: torch.optim.Optimizer, cfg: TrainerConfig, n_rows: int
) -> torch.optim.lr_scheduler.CosineAnnealingLR | None:
    """torch's CosineAnnealingLR over the T steps of ``max_epochs`` epochs: step k (from 0)
    trains at lr * (1 + cos(pi k / T)) / 2, so the last at just above 0. Stepped after every
    step; None unless ``lr_cosine``. It does not combine with the other two schedules."""
    if not cfg.lr_cosine:
        return None
    if cfg.lr_decay_patience is not None or cfg.lr_warmup_epochs > 0:
        raise ValueError("lr_cosine does not combine with lr_decay_patience or lr_warmup_epochs.")
    steps = cfg.max_epochs * math.ceil(n_rows / cfg.batch_size)
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, steps))
