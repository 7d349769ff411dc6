"""Checks of a :class:`~tabmoe.nn.trainer.TrainerConfig`'s options before a fit, each error
naming the option (the trainer's own checks of its data stay in ``Trainer.fit``)."""

from __future__ import annotations

import numbers
from typing import Any


def _integer(value: Any, minimum: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Integral) and value >= minimum


def check_config(cfg: Any) -> None:
    """ValueError naming the first option of ``cfg`` out of its range."""
    if cfg.max_grad_norm is not None and not cfg.max_grad_norm > 0:
        # torch would clip with it anyway: 0 zeroes every step, a negative norm reverses it
        raise ValueError(f"max_grad_norm must be > 0 or None, got {cfg.max_grad_norm!r}.")
    if not _integer(cfg.start_from_epoch, 0):
        raise ValueError(f"start_from_epoch must be an integer >= 0, got {cfg.start_from_epoch!r}.")
    if isinstance(cfg.patience_rate, bool) or not (isinstance(cfg.patience_rate, numbers.Real) and cfg.patience_rate >= 0):
        raise ValueError(f"patience_rate must be a number >= 0, got {cfg.patience_rate!r}.")
    if cfg.watch_below is not None and (isinstance(cfg.watch_below, bool) or not isinstance(cfg.watch_below, numbers.Real)):
        raise ValueError(f"watch_below must be a number or None, got {cfg.watch_below!r}.")
    if not _integer(cfg.soup_top, 1):
        raise ValueError(f"soup_top must be an integer >= 1, got {cfg.soup_top!r}.")
    if cfg.soup_top > 1 and (not cfg.early_stopping or not cfg.restore_best_weights or cfg.ema_decay is not None):
        raise ValueError("soup_top > 1 averages the best epochs of early stopping: it needs early_stopping, "
                         "restore_best_weights and no ema_decay.")
