"""``verbose``: the progress bar does not stay after a fit (tqdm's ``leave=False``), so a
line on stdout says what the fit did: epochs, steps, whether it stopped early, the epoch
kept and its validation loss. Nothing is printed without ``verbose``."""

import math
import re
import threading

import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn import trainer as trainer_module
from tabmoe.nn.trainer import Trainer, TrainerConfig

from .moe_data import toy_table

FAST = dict(random_state=0, device="cpu")


def test_a_verbose_fit_ends_with_a_line_on_what_it_did(capsys):
    X, y = toy_table(n=200, seed=0)
    clf = TabularMoEClassifier(**FAST, verbose=1, early_stopping=True, max_epochs=200).fit(X, y)
    out = capsys.readouterr().out
    line = re.search(r"TabularMoEClassifier: (\d+) epochs \((\d+) steps, [\d.]+ s training\)(.*)\.\n", out)
    assert line, out
    assert int(line[1]) == len(clf.history_)
    assert f"stopped early; kept epoch {clf.best_epoch_} (validation loss" in line[3]
    best = min(h["val_loss"] for h in clf.history_)
    assert f"{best:.4f}" in line[3]


def test_a_fit_without_verbose_or_early_stopping_prints_what_applies(capsys):
    X, y = toy_table(n=120, seed=0)
    TabularMoEClassifier(**FAST, max_epochs=2).fit(X, y)
    assert capsys.readouterr().out == ""
    TabularMoEClassifier(**FAST, verbose=1, max_epochs=2, early_stopping=False).fit(X, y)
    assert re.search(r"TabularMoEClassifier: 2 epochs \(\d+ steps, [\d.]+ s training\)\.\n$", capsys.readouterr().out)
    # early stopping that did not stop: the epoch kept is still named
    clf = TabularMoEClassifier(**FAST, verbose=1, max_epochs=3, early_stopping=True).fit(X, y)
    out = capsys.readouterr().out
    assert "stopped early" not in out and "3 epochs" in out and f"; kept epoch {clf.best_epoch_} (validation loss" in out


def test_a_verbose_refit_says_which_line_is_the_refit(capsys):
    """The refit's line began like the early-stopped fit's ('TabularMoEClassifier: 4 epochs'),
    so the output read as two fits, the first naming the epoch kept though its network was not."""
    X, y = toy_table(n=200, seed=0)
    clf = TabularMoEClassifier(**FAST, verbose=1, refit=True, max_epochs=3).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("TabularMoEClassifier: 3 epochs"), lines
    assert f"kept epoch {clf.best_epoch_} (validation loss" in lines[0]
    refit = f"TabularMoEClassifier refit on every training row: {len(clf.refit_history_)} epoch"
    assert lines[1].startswith(refit), lines



def test_a_fit_without_verbose_leaves_no_thread_running(monkeypatch):
    """tqdm starts its monitor thread, which wakes every 10 s until the process ends, with
    the first bar of a process, a disabled one too, and no bar's close stops it (tqdm issue
    1564): every process that called fit, with or without ``verbose``, kept one running."""
    monkeypatch.setattr(trainer_module.tqdm, "monitor", None)  # none started yet, as in a new process
    X, y = toy_table(n=60, seed=0)
    for verbose in (0, 1):
        before = set(threading.enumerate())
        TabularMoEClassifier(**FAST, max_epochs=2, verbose=verbose).fit(X, y)
        assert set(threading.enumerate()) - before == set(), verbose


@pytest.mark.parametrize(("error", "options"), [
    (ValueError, {"lr_decay_patience": 0}),  # the checks made after the bar was created
    (ValueError, {"ema_decay": 2.0}),
    (ValueError, {"lr_warmup_epochs": -1}),
    (KeyboardInterrupt, {}),  # from the loss, in the epoch loop
    (FloatingPointError, {}),  # the trainer's own divergence error
])
def test_the_bar_is_closed_when_an_error_ends_the_fit(monkeypatch, error, options):
    """An error after the bar was created and outside its iteration (``lr_decay_patience=0``,
    ``ema_decay=2.0``, ``lr_warmup_epochs=-1`` with ``verbose=1``) left it open: a
    "training: 0%" bar stayed on screen, one more line per such fit. Errors in the epoch
    loop closed it only as CPython collected tqdm's iterator."""
    bars = []

    class Recorded(trainer_module.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append(self)

    monkeypatch.setattr(trainer_module, "tqdm", Recorded)
    steps = {"n": 0}

    def loss(module, batch):
        steps["n"] += 1
        out = ((module(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum()
        if steps["n"] == 2 and error is FloatingPointError:
            out = out * math.inf
        elif steps["n"] == 2:
            raise error("boom")
        return out, torch.tensor(float(len(batch["y"])))

    data = {"x": torch.randn(16, 3), "y": torch.randn(16)}
    cfg = TrainerConfig(max_epochs=5, batch_size=16, verbose=1, early_stopping=False, device="cpu", **options)
    with pytest.raises(error) as info:
        Trainer(cfg).fit(torch.nn.Linear(3, 1), data, loss)
    assert info.traceback  # the traceback, which holds the fit's frame, is still alive here
    assert len(bars) == 1 and bars[0].disable  # tqdm's close() sets disable
