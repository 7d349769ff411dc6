"""benchmarks/research.py's table-dependent rules resolve to the parameters a study claims."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tabmoe.nn._base import validation_split

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def import_benchmark(name: str):
    """A script of benchmarks/ as a module (its own imports of sibling scripts resolve at load)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


@pytest.mark.parametrize("n_rows", [15, 300, 999, 1000, 2099, 10_000])
def test_floor_rule_is_auto_up_to_ten_thousand_rows(research, n_rows):
    # Study 30's variant must hold out exactly what "auto" does on every table the earlier
    # studies measured, so that its pairs there would be ties.
    rows = research.resolve_rules({"validation_fraction": "floor:0.01"}, n_rows, 5)["validation_fraction"]
    y = np.arange(n_rows) % 2
    auto_val = validation_split(y, "auto", seed=0)[1]
    assert isinstance(rows, int) and rows == len(auto_val)


@pytest.mark.parametrize(("n_rows", "expected"), [(10_001, 101), (13_681, 137), (30_682, 307)])
def test_floor_rule_holds_out_the_share_above_ten_thousand_rows(research, n_rows, expected):
    rows = research.resolve_rules({"validation_fraction": "floor:0.01"}, n_rows, 5)["validation_fraction"]
    assert rows == expected


def test_a_larger_floor_stops_at_the_plain_share(research):
    rows = research.resolve_rules({"validation_fraction": "floor:0.5"}, 2000, 5)["validation_fraction"]
    assert rows == 200  # never more than AUTO_VALIDATION_FRACTION of the rows (not the 100 cap)


@pytest.mark.parametrize("n_rows", [15, 125, 559, 1000, 2099, 10_000])
def test_rice_rule_scales_the_auto_bins(research, n_rows):
    # Study 63's variants: "rice:1" must be exactly n_bins="auto" (the pairs' baseline).
    from tabmoe._numeric import auto_bins

    bins = [research.resolve_rules({"n_bins": f"rice:{f}"}, n_rows, 5)["n_bins"] for f in (1, 0.5, 2)]
    assert bins[0] == auto_bins(n_rows)
    assert bins[1] == max(2, round(n_rows ** (1 / 3)))
    assert bins[2] == max(2, round(4 * n_rows ** (1 / 3))) and bins[2] >= bins[0] >= bins[1] >= 2


@pytest.mark.parametrize("factor", ["0", "-1", "nan"])
def test_rice_rule_refuses_a_factor_not_above_zero(research, factor):
    with pytest.raises(ValueError, match="must be above 0"):
        research.resolve_rules({"n_bins": f"rice:{factor}"}, 1000, 5)


def test_plain_values_pass_through(research):
    params = {"validation_fraction": 0.1, "batch_size": 64, "feature_loss_weight": 0.1}
    assert research.resolve_rules(params, 5000, 10) == params


def test_fit_and_score_records_log_loss_only_for_classes_seen_in_training(research):
    import pandas as pd

    from tabmoe import TabularMoEClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 60), "b": rng.normal(size=60)})
    y = np.where(X["a"] == "x", "yes", "no").astype(object)
    estimator = TabularMoEClassifier(max_epochs=2, d_model=8, n_heads=2, ff_dim=8, random_state=0)
    seen = research.fit_and_score(estimator, X, y, {"validation": (X.iloc[:10], y[:10])})
    assert 0 < seen["validation_log_loss"] < 10 and seen["best_epoch"] is not None
    unseen = y[:10].copy()
    unseen[0] = "maybe"  # a class the training rows never had: its probability is 0
    out = research.fit_and_score(estimator, X, y, {"validation": (X.iloc[:10], unseen)})
    assert out["validation_log_loss"] is None and out["validation"] <= 0.9




def test_error_stopping_scores_the_hold_out_by_its_wrong_rows(research):
    """Study 46's score: the weighted error rate of the label plus 0.01 x its log loss,
    over the rows whose label token is a class, computed here from ``predict`` and
    ``predict_proba`` instead of the network's logits."""
    import pandas as pd
    import torch

    from tabmoe import TabularMoEClassifier

    rng = np.random.default_rng(0)
    n = 120
    X = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("uv"), n)})
    y = np.where(rng.random(n) < 0.3, rng.choice(["p", "q", "r"], n),
                 X["a"].map({"x": "p", "y": "q", "z": "r"}).to_numpy())
    model = research.make_tabmoe({"stop_on": "error", "max_epochs": 3, "d_model": 8,
                                  "n_heads": 2, "ff_dim": 8}, 0)
    assert isinstance(model, research.ErrorStoppedClassifier)
    assert model._get_val_loss() is research.label_error_loss
    assert type(research.make_tabmoe({}, 0)) is TabularMoEClassifier
    with pytest.raises(SystemExit, match="stop_on"):
        research.make_tabmoe({"stop_on": "accuracy"}, 0)
    model.fit(X, y)
    codes = np.searchsorted(model.classes_, y)
    tokens = model._tokens(X, codes)
    tokens[:5, -1] = 0  # MASK: not a class, so these rows are not scored, whatever their weight
    weight = rng.uniform(0.1, 3.0, n)
    weight[:5] = 1e6
    with torch.no_grad():
        batch = {"tokens": torch.from_numpy(tokens), "weight": torch.from_numpy(weight).float()}
        s, w = research.label_error_loss(model.module_.eval(), batch)
    scored = np.arange(n) >= 5
    wrong = model.predict(X) != y
    nll = -np.log(model.predict_proba(X)[np.arange(n), codes])
    expected = (weight * (wrong + 0.01 * nll))[scored].sum() / weight[scored].sum()
    assert float(w) == pytest.approx(weight[scored].sum(), rel=1e-5)
    assert float(s / w) == pytest.approx(expected, rel=1e-4)
    assert 0 < wrong[scored].mean() < 1  # both parts of the score are exercised


def test_tuned_or_defaults_keeps_the_search_only_where_it_wins_on_validation(tmp_path, capsys):
    import json

    script = import_benchmark("tuned_or_defaults")

    def record(folder, protocol, seed, val, id_test, ood, search=None):
        run = {"model": "m", "validation": {"accuracy": val}, "id_test": {"accuracy": id_test},
               "ood_test": {"accuracy": ood}, **({"search": {"best_validation_score": search}} if search else {})}
        (folder / f"{protocol}-seed{seed}.json").write_text(json.dumps(run))

    folder = tmp_path / "runs" / "suite" / "split" / "m"
    folder.mkdir(parents=True)
    record(folder, "defaults", 0, 0.80, 0.70, 0.60)
    record(folder, "tuned", 0, 0.90, 0.75, 0.50, search=0.90)  # wins on validation: kept
    record(folder, "defaults", 1, 0.80, 0.70, 0.60)
    record(folder, "tuned", 1, 0.80, 0.90, 0.90, search=0.80)  # a tie keeps the defaults
    assert script.main(["--results", str(tmp_path)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["search_kept"] == 1 and line["pairs"] == 2
    assert line["id_test"]["diff"] == 0.025 and line["ood_test"]["diff"] == -0.05
    assert line["id_test"]["wtl"] == [1, 1, 0] and line["ood_test"]["wtl"] == [0, 1, 1]


def test_embedding_decay_variant_decays_the_token_tables_only(research):
    """Study 49's variant: the token embedding gets AdamW's decay in a group of its own; the
    column embedding, norms and biases stay undecayed, and 0 leaves the two default groups."""
    import pandas as pd
    from torch import nn

    from tabmoe import TabularMoEClassifier
    from tabmoe.nn.trainer import TrainerConfig, make_adamw, param_groups

    X = pd.DataFrame({"a": list("xyzxyzxyzxyz") * 3, "b": list("uvuvuvuvuvuv") * 3})
    y = np.array(list("pq") * 18)
    small = {"max_epochs": 1, "d_model": 8, "n_heads": 2, "ff_dim": 8}
    model = research.make_tabmoe({**small, "embedding_weight_decay": 10.0}, 0)
    assert isinstance(model, research.TrainerOptionsClassifier)
    assert model._trainer_options()["embedding_weight_decay"] == 10.0
    assert type(research.make_tabmoe({**small, "embedding_weight_decay": 0}, 0)) is TabularMoEClassifier
    with pytest.raises(SystemExit, match="embedding_weight_decay"):
        research.make_tabmoe({"embedding_weight_decay": -1.0}, 0)
    module = model.fit(X, y).module_
    groups = param_groups(module, 0.1, 10.0)
    assert [g["weight_decay"] for g in groups] == [0.1, 0.0, 10.0]
    assert [id(p) for p in groups[2]["params"]] == [id(module.token_embedding.weight)]
    assert id(module.column_embedding) in {id(p) for p in groups[1]["params"]}
    linear = {id(m.weight) for m in module.modules() if isinstance(m, nn.Linear)} | {id(module.heads.weight)}
    assert {id(p) for p in groups[0]["params"]} == linear

    def ids(group: dict) -> set[int]:
        return {id(p) for p in group["params"]}

    default = param_groups(module, 0.1)  # the groups every default fit has: two, every table in the second
    assert len(default) == 2 and ids(default[0]) == ids(groups[0])
    assert ids(default[1]) == ids(groups[1]) | ids(groups[2])
    # The fit's optimizer gets the third group from the trainer's config.
    optimizer = make_adamw(module, TrainerConfig(weight_decay=0.1, embedding_weight_decay=10.0))
    assert [g["weight_decay"] for g in optimizer.param_groups] == [0.1, 0.0, 10.0]
    with pytest.raises(SystemExit, match="embedding_weight_decay"):
        research.make_tabmoe({"embedding_weight_decay": float("nan")}, 0)
    for bad in (True, False):  # True was read as 1.0 (a decay of 1), False as 0.0: bools are refused elsewhere
        with pytest.raises(SystemExit, match=f"embedding_weight_decay must be a number >= 0, got {bad!r}"):
            research.make_tabmoe({"embedding_weight_decay": bad}, 0)


def _early_stopped_toy(max_epochs: int) -> tuple:
    """A 60-row table and a small early-stopped network (patience 2) for the trainer settings."""
    import pandas as pd

    X = pd.DataFrame({"a": list("xyzxyzxyzxyz") * 5, "b": list("uvuvuvuvuvuv") * 5})
    y = np.array(list("pq") * 30)
    small = {"max_epochs": max_epochs, "d_model": 8, "n_heads": 2, "ff_dim": 8, "early_stopping": True,
             "validation_fraction": 0.25, "n_iter_no_change": 2}
    return X, y, small


def test_start_from_epoch_variant_reaches_the_trainer(research):
    """Study 50: ``start_from_epoch`` reaches the trainer through the research-only
    classifier, and no kept epoch comes before it; 0 is the plain estimator."""
    from tabmoe import TabularMoEClassifier

    X, y, small = _early_stopped_toy(max_epochs=8)
    model = research.make_tabmoe({**small, "start_from_epoch": 5}, 0)
    assert isinstance(model, research.TrainerOptionsClassifier)
    assert model._trainer_options()["start_from_epoch"] == 5
    model.fit(X, y)
    assert model.best_epoch_ >= 6  # epoch 6, the first watched, is always a best
    assert len(model.history_) == 8  # 5 unwatched, the first best, patience 2: all of max_epochs
    assert type(research.make_tabmoe({**small, "start_from_epoch": 0}, 0)) is TabularMoEClassifier
    for bad in (-1, 1.5, "x", True):
        with pytest.raises(SystemExit, match="start_from_epoch"):
            research.make_tabmoe({"start_from_epoch": bad}, 0)
    with pytest.raises(SystemExit, match="stop_on"):
        research.make_tabmoe({"start_from_epoch": 3, "stop_on": "error"}, 0)


def test_adam_beta2_variant_reaches_the_optimizer(research, monkeypatch):
    """Study 64: ``adam_beta2`` reaches AdamW as (0.9, beta2) and changes the fit; 0.999 is
    the plain estimator."""
    import torch

    from tabmoe import TabularMoEClassifier

    X, y, small = _early_stopped_toy(max_epochs=3)
    seen = []
    real = torch.optim.AdamW

    def spy(*args, **kwargs):
        seen.append(kwargs["betas"])
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.optim, "AdamW", spy)
    model = research.make_tabmoe({**small, "adam_beta2": 0.95}, 0).fit(X, y)
    plain = research.make_tabmoe({**small, "adam_beta2": 0.999}, 0)
    assert type(plain) is TabularMoEClassifier
    plain.fit(X, y)
    assert seen == [(0.9, 0.95), (0.9, 0.999)]
    assert not np.allclose(model.predict_proba(X), plain.predict_proba(X))
    for bad in (1.0, 1.5, -0.1, "x", True, float("nan")):
        with pytest.raises(SystemExit, match="adam_beta2"):
            research.make_tabmoe({"adam_beta2": bad}, 0)


def test_lr_cosine_variant_anneals_the_rate(research):
    """Study 65: ``lr_cosine`` anneals the rate from learning_rate towards 0 over max_epochs
    (the estimator's history_ records each epoch's first rate); False is the plain
    estimator; refit and a non-bool are refused."""
    from tabmoe import TabularMoEClassifier

    X, y, small = _early_stopped_toy(max_epochs=4)
    model = research.make_tabmoe({**small, "early_stopping": False, "lr_cosine": True}, 0).fit(X, y)
    rates = [h["lr"] for h in model.history_]
    assert rates[0] == pytest.approx(1e-3) and rates[0] > rates[1] > rates[2] > rates[3] > 0
    assert rates[2] < 0.6e-3  # half-way through the steps: (1 + cos(pi / 2)) / 2 of the rate
    assert type(research.make_tabmoe({**small, "lr_cosine": False}, 0)) is TabularMoEClassifier
    for bad in ("yes", 1):
        with pytest.raises(SystemExit, match="lr_cosine"):
            research.make_tabmoe({"lr_cosine": bad}, 0)
    with pytest.raises(SystemExit, match="refit"):
        research.make_tabmoe({"lr_cosine": True, "refit": True}, 0)


def test_objective_stopping_watches_the_whole_objective(research):
    """Study 58: early stopping reads the hold-out's training objective (the label's log loss
    and 0.1 x each feature's, a weighted mean over the columns), so each epoch's val_loss
    differs from the plain estimator's label loss while the training itself is the same;
    random masking (two layers) is refused."""
    from tabmoe.nn.objective import MaskedFeatureObjective

    X, y, small = _early_stopped_toy(max_epochs=3)
    small = {**small, "n_iter_no_change": 10}
    model = research.make_tabmoe({**small, "stop_on": "objective"}, 0)
    assert isinstance(model, research.ObjectiveStoppedClassifier)
    plain = research.make_tabmoe(small, 0).fit(X, y)
    model.fit(X, y)
    score = model._get_val_loss()
    assert isinstance(score, MaskedFeatureObjective) and score.masking == "leave_one_out"
    assert score.feature_loss_weight == 0.1
    assert [h["train_loss"] for h in model.history_] == [h["train_loss"] for h in plain.history_]
    for ours, theirs in zip(model.history_, plain.history_, strict=True):
        assert abs(ours["val_loss"] - theirs["val_loss"]) > 1e-3
    with pytest.raises(ValueError, match="leave-one-out"):
        research.make_tabmoe({**small, "stop_on": "objective", "n_layers": 2}, 0).fit(X, y)
    with pytest.raises(SystemExit, match="stop_on=objective"):
        research.make_tabmoe({"start_from_epoch": 3, "stop_on": "objective"}, 0)


def test_restore_best_weights_variant_keeps_the_last_epoch(research):
    """Study 51: ``restore_best_weights=False`` reaches the trainer; True is the plain estimator."""
    from tabmoe import TabularMoEClassifier

    X, y, small = _early_stopped_toy(max_epochs=30)
    model = research.make_tabmoe({**small, "restore_best_weights": False}, 0)
    assert model._trainer_options()["restore_best_weights"] is False
    model.fit(X, y)
    assert model.best_epoch_ == model.n_iter_
    assert type(research.make_tabmoe({**small, "restore_best_weights": True}, 0)) is TabularMoEClassifier
    with pytest.raises(SystemExit, match="restore_best_weights"):
        research.make_tabmoe({"restore_best_weights": "no"}, 0)


def test_held_out_pick_draws_only_eligible_values(research):
    # Study 52: a categorical value holding 5-50% of the training rows, at least 10
    # validation rows and another value beside it; numbers and missing values never.
    X = pd.DataFrame({
        "colour": ["red"] * 60 + ["blue"] * 30 + ["green"] * 2 + [None] * 8,  # 60% / 30% / 2%
        "size": np.arange(100.0),  # numeric: not a value to hold out
        "only": ["x"] * 100,  # one value: nothing would be left
    })
    X_val = pd.DataFrame({"colour": ["red"] * 20 + ["blue"] * 10 + ["green"] * 20,
                          "size": np.zeros(50), "only": ["x"] * 50})
    picks = {research.held_out_pick(X, X_val, seed) for seed in range(20)}
    assert picks == {("colour", "blue")}
    assert research.held_out_pick(X, X_val.assign(colour=["red"] * 41 + ["blue"] * 9), 0) is None


def test_held_out_scores_fit_without_the_value_and_score_its_rows(research):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("pqr"), 300), "b": rng.choice(list("xy"), 300)})
    y = np.where(X["b"] == "x", "yes", "no")
    X_val, y_val = X[:60], y[:60]
    out = research.held_out_scores({"max_epochs": 2}, 0, X, y, X_val, y_val, ("a", "q"))
    assert out["held_out_train_dropped"] == int((X["a"] == "q").sum())
    assert out["held_out_rows"] == int((X_val["a"] == "q").sum())
    assert {"held_out_token", "held_out_exclude", "held_out_rest"} <= set(out)
    assert all(0.0 <= out[k] <= 1.0 for k in ("held_out_token", "held_out_exclude", "held_out_rest"))


def test_summary_does_not_count_lines_without_the_one_class_flag_as_no(research, tmp_path, monkeypatch, capsys):
    """Imported harness records carry no ``ood_single_class``: the one-class column said 0 for
    them (fixed-budget tabmoe, which predicts one class on connect-4 and tic-tac-toe)."""
    import json

    def line(variant, split, flag):
        return {"variant": variant, "split": split, "seed": 0, "validation": 0.8, "id_test": 0.8,
                "ood_test": 0.7, "fit_seconds": 1.0, "ood_single_class": flag}

    lines = [line("base", "a", True), line("base", "b", False),
             line("imported", "a", None), line("imported", "b", None),
             line("mixed", "a", True), line("mixed", "b", None)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["summary", "--study", "s", "--baseline", "base"]) == 0
    cells = {row.split("|")[1].strip(): row.strip("|").split("|")[-1].strip()
             for row in capsys.readouterr().out.splitlines()[2:]}
    assert cells == {"base": "1", "imported": "-", "mixed": "1 (1 unknown)"}


def test_wtl_of_a_part_no_pair_has_is_a_dash_not_zero_counts(research):
    assert research.wtl(np.array([np.nan, np.nan])) == "-"
    assert research.wtl(np.array([0.01, np.nan, -0.001])) == "1/1/0"


def test_held_out_scores_record_a_research_estimators_other_readings(research):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("pqr"), 300), "b": rng.choice(list("xy"), 300)})
    y = np.where(X["b"] == "x", "yes", "no")
    out = research.held_out_scores({"max_epochs": 2, "impute_unknown": True}, 0, X, y, X[:60], y[:60], ("a", "q"))
    assert {"held_out_impute_conditional", "held_out_impute_frequency"} <= set(out)


def test_borrowed_reading_reads_a_value_another_column_kept_as_its_token(research):
    """Study 70: the reader's own predictions are the "token" reading and its ``borrow``
    reading is the estimator's ``unknown="borrow"`` on the same network: a row whose one
    unseen cell holds a value another column kept moves; a value no column kept does not."""
    from borrow_unknown import BorrowedUnknownClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("pq"), 200), "b": rng.choice(list("pqr"), 200),
                      "n": rng.normal(size=200)})
    y = np.where(X["b"] == "r", "yes", "no")
    out = research.held_out_scores({"max_epochs": 2, "borrow_unknown": True}, 0, X, y, X[:60], y[:60], ("b", "q"))
    assert "held_out_borrow" in out
    model = research.make_tabmoe({"max_epochs": 2, "borrow_unknown": True}, 0).fit(X, y)
    assert isinstance(model, BorrowedUnknownClassifier) and model.unknown == "token"
    rows = pd.DataFrame({"a": ["r", "z", "p"], "b": ["p", "p", "q"], "n": [0.0, 0.0, 0.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        token = model.predict_proba(rows)
        borrowed = model.readings(rows)["borrow"]
        option = model.set_params(unknown="borrow").predict_proba(rows)
    np.testing.assert_array_equal(borrowed, model.classes_[option.argmax(1)])
    np.testing.assert_array_equal(option[1:], token[1:])  # nothing to borrow: the token reading
    assert not np.allclose(option[0], token[0], atol=1e-6)  # row 0 borrows "r" from column b


def test_held_out_summary_pairs_each_reading_of_a_line_with_the_token(research, tmp_path, monkeypatch, capsys):
    """Study 55: a reading's held-out, ID-validation and OOD fields are paired with the
    baseline's token reading, plain validation and plain OOD of the same (split, seed)."""
    import json

    lines = [{"variant": "imp", "split": s, "seed": 0, "validation": 0.8, "validation_impute_x": 0.8 + dv,
              "ood_test": 0.7, "ood_test_impute_x": 0.7 + do, "held_out_rows": 20, "held_out_token": 0.6,
              "held_out_exclude": 0.6, "held_out_impute_x": 0.6 + dh, "held_out_rest": 0.9}
             for s, dv, do, dh in [("a", 0.0, 0.1, 0.05), ("b", -0.01, 0.0, 0.15)]]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["held-out", "--study", "s", "--baseline", "imp"]) == 0
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")]
            for r in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {"imp, exclude", "imp, impute_x"}
    cells = rows["imp, impute_x"]
    assert cells[4:6] == ["+0.1000 (0.050)", "2/0/0"]  # held out
    assert cells[7:9] == ["-0.0050 (0.005)", "0/1/1"]  # ID validation
    assert cells[9:] == ["+0.0500", "1/1/0"]  # OOD, reported
    assert rows["imp, exclude"][9:] == ["-", "-"]  # exclude is not read out of distribution


def test_held_out_summary_leaves_out_a_pair_drawn_on_other_rows(research, tmp_path, monkeypatch, capsys):
    """``summary`` leaves out a pair whose lines hold other training rows (vote-swing-bloc's
    248- and 255-row draws, docs/research.md#vote-rows); ``held-out`` paired them, and the
    held-out value drawn from other rows is another value: its difference is no pair's."""
    import json

    def line(variant, split, n_train, value, token):
        return {"variant": variant, "split": split, "seed": 0, "validation": 0.8, "ood_test": 0.7,
                "n_train": n_train, "held_out_column": "c", "held_out_value": value, "held_out_rows": 20,
                "held_out_token": token, "held_out_exclude": token, "held_out_rest": 0.9}

    lines = [line("base", "a", 100, "x", 0.5), line("base", "vote", 255, "y", 0.5), line("base", "other", 90, "u", 0.5),
             line("unk", "a", 100, "x", 0.6), line("unk", "vote", 248, "y", 0.9), line("unk", "other", 90, "v", 0.9)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["held-out", "--study", "s", "--baseline", "base"]) == 0
    out = capsys.readouterr()
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")] for r in out.out.splitlines()[2:]}
    assert rows["unk, token"][1] == "1" and rows["unk, token"][4] == "+0.1000 (0.000)"
    assert "unk: 2 pair(s) left out" in out.err and "['other', 'vote']" in out.err


def test_prior_margin_variant_waits_below_the_class_prior(research):
    """Study 71: ``prior_margin=m`` reaches the trainer as ``watch_below`` = (1 - m) x the
    hold-out's log loss of the training rows' class frequencies; 0 is the plain estimator."""
    from tabmoe import TabularMoEClassifier

    X, y, small = _early_stopped_toy(max_epochs=6)
    model = research.make_tabmoe({**small, "prior_margin": 0.05}, 0)
    assert isinstance(model, research.TrainerOptionsClassifier)
    model.fit(X, y)
    # 60 rows, 30 of each class; the stratified hold-out of 15 takes 8 of one and 7 of the other
    prior = -(8 * np.log(22 / 45) + 7 * np.log(23 / 45)) / 15
    assert model._watch_below == pytest.approx(0.95 * prior)
    assert model._trainer_options()["watch_below"] == model._watch_below
    assert "prior_margin" not in model._trainer_options()
    assert type(research.make_tabmoe({**small, "prior_margin": 0}, 0)) is TabularMoEClassifier
    for bad in (-0.1, 1, "x", True):
        with pytest.raises(SystemExit, match="prior_margin"):
            research.make_tabmoe({"prior_margin": bad}, 0)


def test_prior_log_loss_is_the_constant_models_weighted_log_loss(research):
    y_train, y_held = np.array([0, 0, 0, 1]), np.array([0, 1])
    loss = research.prior_log_loss(y_train, np.ones(4), y_held, np.array([1.0, 3.0]))
    assert loss == pytest.approx(-(np.log(0.75) + 3 * np.log(0.25)) / 4)


@pytest.fixture(scope="module")
def fitted_small():
    from tabmoe import TabularMoEClassifier

    X = pd.DataFrame({"a": np.arange(60) % 3, "b": list("xy") * 30})
    return TabularMoEClassifier(max_epochs=1, random_state=0).fit(X, np.arange(60) % 2)


@pytest.mark.parametrize("n_rows", [20, 88, 120, 255, 284, 285, 300, 2099, 10_000, 10_001, 30_682])
def test_steps_rule_counts_the_defaults_steps_an_epoch(research, fitted_small, n_rows):
    # Study 73's rules must count the steps the estimator takes: its hold-out, its batch rule.
    y = np.arange(n_rows) % 2
    n_train = len(validation_split(y, "auto", seed=0)[0])
    batch = fitted_small.rows_per_batch(n_train)
    steps = -(-n_train // batch)
    assert import_benchmark("research_models").auto_steps_per_epoch(n_rows, {}) == steps
    resolved = research.resolve_rules({"n_iter_no_change": "steps:160", "max_epochs": "steps:1600"}, n_rows, 5)
    assert resolved == {"n_iter_no_change": max(10, -(-160 // steps)), "max_epochs": max(100, -(-1600 // steps))}
    if n_train >= 256:  # 16 steps an epoch or more: the defaults themselves (ties by construction)
        assert resolved == {"n_iter_no_change": 10, "max_epochs": 100}


def test_steps_rule_on_breast_cancer_over_50(research):
    # 88 rows: 9 held out, 79 trained on in batches of 16, 5 steps an epoch.
    assert research.resolve_rules({"n_iter_no_change": "steps:160"}, 88, 9) == {"n_iter_no_change": 32}


@pytest.mark.parametrize(("params", "message"), [
    ({"n_iter_no_change": "steps:0"}, "at least 1"),
    ({"n_iter_no_change": "steps:160", "batch_size": 64}, "batch_size must be 'auto'"),
    ({"max_epochs": "steps:160", "validation_fraction": 0.2}, "validation_fraction must be 'auto'"),
])
def test_steps_rule_refuses_what_it_cannot_count(research, params, message):
    with pytest.raises(ValueError, match=message):
        research.resolve_rules(params, 100, 5)


def test_soup_variant_reaches_the_trainer(research, monkeypatch):
    """Study 74: ``soup_top=k`` (and ``soup_greedy``) reach the TrainerConfig; 1 is the plain estimator."""
    from tabmoe import TabularMoEClassifier
    from tabmoe.nn import trainer as trainer_module

    X, y, small = _early_stopped_toy(max_epochs=6)
    model = research.make_tabmoe({**small, "soup_top": 3, "soup_greedy": False}, 0)
    assert isinstance(model, research.TrainerOptionsClassifier)
    assert model._trainer_options()["soup_top"] == 3 and model._trainer_options()["soup_greedy"] is False
    results = []
    fit = trainer_module.Trainer.fit
    monkeypatch.setattr(trainer_module.Trainer, "fit", lambda self, *a, **k: results.append(fit(self, *a, **k)) or results[-1])
    model.fit(X, y)
    assert results[0].soup_epochs[0] == model.best_epoch_ and len(results[0].soup_epochs) == min(3, model.n_iter_)
    assert type(research.make_tabmoe({**small, "soup_top": 1}, 0)) is TabularMoEClassifier
    for key, bad in (("soup_top", 0), ("soup_top", True), ("soup_greedy", "yes")):
        with pytest.raises(SystemExit, match=key):
            research.make_tabmoe({key: bad}, 0)
