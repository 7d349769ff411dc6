"""Study 62's research-only swap noise (benchmarks/swap_noise.py) and the objective's hook."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn.objective import MaskedFeatureObjective

from .test_research_rules import import_benchmark


def test_swapped_cells_come_from_their_column_and_spare_the_label():
    mod = import_benchmark("swap_noise")
    torch.manual_seed(0)
    # column j of row i holds 1000 * j + i: a swapped cell's column and donor row can be read
    tokens = (torch.arange(6)[None, :] * 1000 + torch.arange(500)[:, None]).long()
    out = mod.swap_cells(tokens, 0.3)
    assert torch.equal(out[:, -1], tokens[:, -1])
    changed = out != tokens
    assert 0.25 < changed[:, :-1].float().mean() < 0.31  # 0.3 less the draws of the row itself
    assert torch.equal(out // 1000, tokens // 1000)  # every value stays in its column
    assert torch.equal(mod.swap_cells(tokens, 0.0), tokens)


def test_the_hook_is_the_unknown_replacement_alone_by_default():
    tokens = torch.randint(5, 50, (64, 4))
    assert MaskedFeatureObjective(unknown_rate=0.0).corrupt(tokens) is tokens
    torch.manual_seed(1)
    hooked = MaskedFeatureObjective(unknown_rate=0.2).corrupt(tokens)
    torch.manual_seed(1)
    from tabmoe.nn.objective import replace_with_unknown

    assert torch.equal(hooked, replace_with_unknown(tokens, 0.2))


def test_the_classifier_trains_with_it_and_keeps_the_other_settings(mixed_frame):
    mod = import_benchmark("swap_noise")
    X, y = mixed_frame
    params = {"max_epochs": 3, "device": "cpu", "n_jobs": 1, "feature_loss_weight": 0.3}
    model = mod.SwapNoiseClassifier(**params, random_state=0)
    model.swap_rate = 0.2
    objective = model._objective("leave_one_out")
    plain = TabularMoEClassifier(**params)._objective("leave_one_out")
    assert isinstance(objective, mod.SwapNoiseObjective) and objective.swap_rate == 0.2
    assert (objective.feature_loss_weight, objective.masking) == (plain.feature_loss_weight, plain.masking)
    model.fit(X, y)
    noisy = model.predict_proba(X)
    clean = TabularMoEClassifier(**params, random_state=0).fit(X, y).predict_proba(X)
    assert not np.allclose(noisy, clean)  # the noise reached training
    for bad in ({"missing": "exclude"}, {"numeric_embedding": "piecewise"}, {"n_members": 2}):
        with pytest.raises(ValueError, match="built for one member"):
            mod.SwapNoiseClassifier(**bad)._objective("leave_one_out")


def test_make_tabmoe_builds_it_and_refuses_bad_values():
    research = import_benchmark("research_models")
    model = research.make_tabmoe({"swap_rate": 0.15, "max_epochs": 2}, 3)
    assert type(model).__name__ == "SwapNoiseClassifier"
    assert (model.swap_rate, model.random_state, model.max_epochs) == (0.15, 3, 2)
    assert type(research.make_tabmoe({"swap_rate": 0}, 0)) is TabularMoEClassifier
    for bad in (-0.1, True, "0.1", float("nan")):
        with pytest.raises(SystemExit, match="swap_rate must be a number"):
            research.make_tabmoe({"swap_rate": bad}, 0)
    for bad_params in ({"swap_rate": 1.0}, {"swap_rate": 0.1, "tree_bins": 16}):
        with pytest.raises(SystemExit, match="below 1 and does not combine"):
            research.make_tabmoe(bad_params, 0)


def test_the_swap_follows_the_unknown_replacement():
    mod = import_benchmark("swap_noise")
    from tabmoe.nn.objective import replace_with_unknown

    tokens = torch.randint(5, 50, (64, 4))
    torch.manual_seed(2)
    hooked = mod.SwapNoiseObjective(unknown_rate=0.3, swap_rate=0.4).corrupt(tokens)
    torch.manual_seed(2)
    assert torch.equal(hooked, mod.swap_cells(replace_with_unknown(tokens, 0.3), 0.4))


def test_validation_reads_clean_rows(mixed_frame):
    # Early stopping's loss (the module in eval mode) is the plain objective's: neither the
    # swap nor the UNKNOWN replacement reaches it; in training both do.
    from tabmoe.nn._base import encode_targets

    mod = import_benchmark("swap_noise")
    X, y = mixed_frame
    model = TabularMoEClassifier(max_epochs=2, device="cpu", n_jobs=1, random_state=0).fit(X, y)
    batch = model._rows(model._tokens(X, encode_targets(model.classes_, y)), np.ones(len(X)))
    noisy, plain = mod.SwapNoiseObjective(unknown_rate=0.5, swap_rate=0.9), MaskedFeatureObjective()
    calls = []
    noisy.corrupt = lambda tokens: calls.append(tokens) or mod.SwapNoiseObjective.corrupt(noisy, tokens)
    with torch.no_grad():
        assert torch.equal(noisy(model.module_.eval(), batch)[0], plain(model.module_.eval(), batch)[0])
        assert calls == []
        noisy(model.module_.train(), batch)
    assert len(calls) == 1
