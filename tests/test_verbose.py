"""``verbose``: the progress bar does not stay after a fit (tqdm's ``leave=False``), so a
line on stdout says what the fit did: epochs, steps, whether it stopped early, the epoch
kept and its validation loss. Nothing is printed without ``verbose``."""

import re

from tabmoe import TabularMoEClassifier

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
