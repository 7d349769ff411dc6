"""The trainer's progress bar: tqdm's, without tqdm's monitor thread.

tqdm starts its monitor thread (which wakes every 10 s to redraw bars that went quiet) with
the first bar of a process, a disabled one too, and nothing stops it (tqdm issue 1564): a
process that called ``fit``, with ``verbose`` or without, kept the thread running after it.
The trainer's bar is redrawn at the end of every epoch (``set_postfix``): it needs none.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm as _tqdm


class tqdm(_tqdm):
    """``tqdm.auto.tqdm`` that starts no monitor thread (``monitor_interval = 0``, tqdm's
    own switch, set on this class only)."""

    monitor_interval = 0


def fit_summary(description: str, result: Any, best_loss: float) -> str:
    """One line on a finished fit (a ``TrainResult``): epochs, why it stopped, the weights
    kept, seconds; written in place of the bar, which does not stay."""
    epochs = len(result.history)
    seconds = sum(record["seconds"] for record in result.history)
    line = f"{description}: {epochs} epoch{'s' if epochs != 1 else ''} ({result.n_steps} steps, {seconds:.1f} s training)"
    if result.stopped_early:
        line += ", stopped early"
    if result.best_epoch is not None:
        line += f"; kept epoch {result.best_epoch} (validation loss {best_loss:.4f})"
    elif result.history and "val_loss" in result.history[-1]:
        line += f", validation loss {result.history[-1]['val_loss']:.4f}"
    return line + "."
