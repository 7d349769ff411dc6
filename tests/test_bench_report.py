"""The report: per-split mean +- SD over seeds, ranks, win/tie/loss with a Wilcoxon test,
the oracle apart, plots, and the paper's published numbers beside ours."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

pytest.importorskip("matplotlib")  # extra "bench": write_report draws its figures

from tabmoe.bench import paper_results
from tabmoe.bench._figures import num, significant
from tabmoe.bench.report import (
    paired_with_paper,
    paper_comparison,
    per_split,
    runs_frame,
    summary,
    write_report,
)

SPLITS = [f"s{i}" for i in range(7)]
#: OOD accuracy of each model per split and seed: b beats a on every split, c ties a.
OOD = {
    "tabmoe": lambda i, seed: 0.60 + 0.01 * i + 0.01 * seed,
    "logistic_regression": lambda i, seed: 0.70 + 0.01 * i + 0.02 * seed,
    "hist_gradient_boosting": lambda i, seed: 0.60 + 0.01 * i + 0.01 * seed + 0.001,
}


def make_record(split, model, seed, protocol="fixed-budget", oracle=None, id_accuracy=0.9):
    i = int(split[1:]) if split[1:].isdigit() else 0
    return {
        "run_id": f"t/{split}/{model}/{protocol}/seed{seed}", "suite": "t", "split": split,
        "model": model, "protocol": protocol, "tuned": protocol == "tuned", "seed": seed,
        "id_test": {"accuracy": id_accuracy, "balanced_accuracy": 0.8, "log_loss": 0.3, "roc_auc": 0.9},
        "ood_test": {"accuracy": OOD[model](i, seed % 3) if model in OOD else 0.5, "bin_mse": 1.5},
        "oracle": None if oracle is None else {"ood_test_accuracy": oracle},
        "params": {"C": 1.0}, "fit_seconds": 1.0, "predict_seconds": 0.1, "tune_seconds": None,
        "peak_rss_mb": 400.0, "git": {"revision": "abc"}, "versions": {"tabmoe": "0.1.0"},
    }


@pytest.fixture
def records():
    return [make_record(s, m, seed) for s in SPLITS for m in OOD for seed in (0, 1, 2)]


def test_per_split_means_sds_and_ranks(records):
    table = per_split(runs_frame(records))
    row = table[(table["split"] == "s3") & (table["model"] == "logistic_regression")].iloc[0]
    values = [0.73, 0.75, 0.77]
    assert row["seeds"] == 3
    assert row["ood_mean"] == pytest.approx(np.mean(values))
    assert row["ood_sd"] == pytest.approx(np.std(values, ddof=1))
    assert row["ood_pop_sd"] == pytest.approx(np.std(values))
    assert row["gap_mean"] == pytest.approx(0.9 - np.mean(values))
    ranks = table[table["split"] == "s3"].set_index("model")["rank"]
    assert ranks.to_dict() == {"tabmoe": 3.0, "logistic_regression": 1.0, "hist_gradient_boosting": 2.0}
    assert list(table["model"][:3]) == ["tabmoe", "logistic_regression", "hist_gradient_boosting"]


def test_summary_counts_wins_ties_losses_and_tests_them(records):
    table = per_split(runs_frame(records))
    overall = summary(table, reference="tabmoe", tie=0.005).set_index("model")
    lr, hgb = overall.loc["logistic_regression"], overall.loc["hist_gradient_boosting"]
    assert (lr["wins"], lr["ties"], lr["losses"]) == (7, 0, 0)
    assert (hgb["wins"], hgb["ties"], hgb["losses"]) == (0, 7, 0)
    diffs = (table[table.model == "logistic_regression"]["ood_mean"].to_numpy()
             - table[table.model == "tabmoe"]["ood_mean"].to_numpy())
    assert lr["wilcoxon_p"] == pytest.approx(wilcoxon(diffs).pvalue)
    assert lr["wilcoxon_p"] < 0.05  # 7 splits, all one way
    assert pd.isna(overall.loc["tabmoe", "wins"])
    assert overall.loc["logistic_regression", "mean_rank"] == 1.0


def test_write_report_files_and_content(tmp_path, records):
    tuned = [make_record(s, m, seed, "tuned", oracle=0.99) for s in SPLITS[:2] for m in OOD for seed in (0, 1)]
    paths = write_report(records + tuned, tmp_path, title="t", description="A test suite.",
                         failures={"t/s0/mlp/fixed-budget/seed0": "Traceback\nValueError: boom"})
    names = {p.name for p in paths}
    assert names >= {"report.md", "runs.csv", "per_split.csv", "summary.csv", "id_vs_ood-fixed-budget.png",
                     "gap_per_split-fixed-budget.png", "id_vs_ood-tuned.png", "gap_per_split-tuned.png"}
    for png in tmp_path.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert len(pd.read_csv(tmp_path / "runs.csv")) == len(records) + len(tuned)
    text = (tmp_path / "report.md").read_text()
    assert "## Protocol `fixed-budget`" in text and "## Protocol `tuned`" in text
    assert "| logistic_regression | 7 | 3 | 0.900 ± 0.000 | 0.750 ± 0.020 | 0.150 ± 0.020 | 1.00 | 7/0/0 | 0.016 |" in text
    # The oracle has its own, labelled section, only under the tuned protocol.
    head, oracle = text.split("### ORACLE (not a fair result)")
    assert "## Protocol `tuned`" in head and "0.990" in oracle and "0.990" not in head
    assert "`t/s0/mlp/fixed-budget/seed0`: ValueError: boom" in text
    assert "published" not in text  # not the paper suite


def test_paper_numbers_are_printed_beside_ours(tmp_path):
    records = [make_record("sim-5-0.9-0.0", m, seed, "paper") for m in ("tabmoe", "logistic_regression")
               for seed in range(3)]
    records += [make_record("auto-mpg-origin", "tabmoe", 42, "paper")]
    table = per_split(runs_frame(records))
    comparison = paper_comparison(table)
    row = comparison[(comparison.split == "sim-5-0.9-0.0") & (comparison.model == "tabmoe")].iloc[0]
    assert (row.paper_accuracy, row.paper_accuracy_sd, row.paper_mse) == (0.3917, 0.0522, 1.6333)
    assert row.our_accuracy == pytest.approx(0.61) and row.our_accuracy_sd == pytest.approx(np.std([0.6, 0.61, 0.62]))
    missing = comparison[(comparison.split == "sim-5-0.9-0.0") & (comparison.model == "mlp")].iloc[0]
    assert pd.isna(missing.protocol) and missing.paper_accuracy == 0.1688
    write_report(records, tmp_path, title="paper")
    text = (tmp_path / "report.md").read_text()
    assert "## The paper's published numbers beside ours" in text
    assert "| sim-5-0.9-0.0 | tabmoe | paper | 0.3917 (0.0522) | 0.6100 (0.0082) | 3 |" in text
    assert "| auto-mpg-origin | tabmoe | paper | 0.7929 | 0.6000 | 1 | -0.193 |" in text
    assert "| auto-mpg-origin | AutoInt | - | 0.3643 |" in text
    # paired by seed: tabmoe 0.60/0.61/0.62 vs LR 0.70/0.72/0.74; the paper's means differ by +0.230
    assert "| sim-5-0.9-0.0 | logistic_regression | 3 | -0.110 (-0.120, -0.100) | 0 of 3 | +0.230 |" in text
    assert "| auto-mpg-origin | logistic_regression | 1 |" not in text  # no LR run on auto-mpg: nothing to pair


def test_paired_differences_use_each_baselines_own_seeds():
    records = [make_record("sim-5-0.9-0.0", m, seed, "paper") for m in ("tabmoe", "logistic_regression")
               for seed in range(3)]
    records += [make_record("sim-5-0.9-0.0", "random_forest", seed, "paper") for seed in (0, 1)]  # 0.5 each
    records += [make_record("sim-5-0.9-0.0", "ft_transformer", 0, "paper")]  # not a paper baseline
    paired = paired_with_paper(runs_frame(records)).set_index("baseline")
    assert list(paired.index) == ["logistic_regression", "random_forest"]
    rf = paired.loc["random_forest"]
    assert rf.seeds == 2 and rf.seeds_model_ahead == 2
    assert (rf.our_difference, rf.our_min, rf.our_max) == pytest.approx((0.105, 0.10, 0.11))
    published = paper_results.published("sim-5-0.9-0.0")
    assert rf.paper_difference == pytest.approx(published["tabmoe"]["accuracy"] - published["random_forest"]["accuracy"])


def test_paired_table_names_the_protocol_of_each_row_where_there_are_several(tmp_path):
    """With two protocols the paired table printed one row per protocol for each split and
    baseline, without the protocol: two rows that read the same but for their (here opposite)
    numbers. One protocol keeps the table as it was (the committed paper report)."""
    records = []
    for protocol, sign in (("fixed-budget", -1), ("tuned", 1)):
        for model in ("tabmoe", "logistic_regression"):
            for seed in (0, 1):
                record = make_record("sim-1-0.1-0.0", model, seed, protocol)
                record["ood_test"]["accuracy"] = 0.5 + 0.1 * sign * (model == "tabmoe")
                records.append(record)
    text = (tmp_path / "two" / "report.md")
    write_report(records, text.parent, title="two")
    table = text.read_text().split("[start:paper-paired] -->")[1].split("<!--")[0]
    assert "| split | protocol | against | seeds |" in table
    assert "| sim-1-0.1-0.0 | fixed-budget | logistic_regression | 2 | -0.100 (-0.100, -0.100) | 0 of 2 |" in table
    assert "| sim-1-0.1-0.0 | tuned | logistic_regression | 2 | +0.100 (+0.100, +0.100) | 2 of 2 |" in table
    one = [r for r in records if r["protocol"] == "tuned"]
    write_report(one, tmp_path / "one", title="one")
    table = (tmp_path / "one" / "report.md").read_text().split("[start:paper-paired] -->")[1].split("<!--")[0]
    assert "| split | against | seeds |" in table and "| sim-1-0.1-0.0 | logistic_regression | 2 |" in table


def test_write_report_without_matplotlib_names_the_extra(tmp_path, records, monkeypatch):
    """Its figures failed with Python's bare "No module named 'matplotlib'" from inside
    tabmoe.bench._plots (``tabmoe-bench report``, the report at the end of ``run``), naming no
    extra."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")] or ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    with pytest.raises(ImportError, match=r"write_report needs the optional package 'matplotlib': install the extra 'bench'"):
        write_report(records, tmp_path, title="t")


def test_no_records_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no finished runs to report"):
        write_report([], tmp_path, title="empty")


def test_paper_results_match_docs_paper_md():
    """The published numbers in the code are those docs/paper.md (sections 3-4) quotes."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "paper.md").read_text()
    acc = text.split("OOD test accuracy, mean over 20 seeds")[1].split("OOD test MSE")[0]
    mse = text.split("OOD test MSE in bin units")[1].split("### 4.")[0]
    for block, check in ((acc, "acc"), (mse, "mse")):
        rows = [line for line in block.splitlines() if re.match(r"\| \d/", line)]
        assert len(rows) == 12
        for line in rows:
            config, *cells = [c.strip() for c in line.strip("|").split("|")]
            k, corr, noise = config.split("/")
            split = f"sim-{k}-{corr}-{float(noise):.1f}"
            for model, cell in zip(paper_results.SIMULATION_MODELS, cells, strict=True):
                if check == "acc":
                    mean, sd = map(float, re.match(r"(\.\d+) \((\.\d+)\)", cell).groups())
                    assert paper_results.SIMULATION_OOD_ACCURACY[split][model] == (mean, sd)
                else:
                    assert paper_results.SIMULATION_OOD_MSE[split][model] == float(cell)
    table5 = text.split("| model | OOD accuracy (non-US) | OOD MSE |")[1].split("This single-seed")[0]
    names = {**paper_results.PAPER_MODEL_NAMES, "ATTN (the paper's model)": "tabmoe"}
    for line in table5.splitlines()[2:]:
        if line.startswith("| "):
            name, accuracy, mse = (c.strip() for c in line.strip("|").split("|"))
            key = names.get(name) or name
            assert paper_results.AUTO_MPG_OOD[key] == (float(accuracy), float(mse))


def test_report_marks_sections_for_docs_and_sums_compute(tmp_path, records):
    for i, record in enumerate(records):
        record.update(started_at="2026-01-01T00:00:00+00:00", finished_at=f"2026-01-01T00:00:{i % 2 * 30:02d}+00:00")
    write_report(records, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    summary_part = text.split("<!-- --8<-- [start:summary-fixed-budget] -->")[1].split("<!-- --8<-- [end:summary-fixed-budget] -->")[0]
    assert summary_part.strip().startswith("| model |") and "| tabmoe |" in summary_part
    assert "<!-- --8<-- [start:per-split-fixed-budget] -->" in text
    expected_hours = sum(i % 2 * 30 for i in range(len(records))) / 3600
    assert f"Total compute: {expected_hours:.2f} hours" in text and f"over {len(records)} runs" in text


def test_report_warns_when_models_cover_different_splits_or_seeds(tmp_path, records):
    partial = [r for r in records if not (r["model"] == "logistic_regression" and r["split"] in ("s0", "s1"))]
    partial = [r for r in partial if not (r["model"] == "hist_gradient_boosting" and r["split"] == "s2" and r["seed"] == 2)]
    write_report(partial, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "Not every model has every split yet: logistic_regression (5 of 7 splits)." in text
    assert "Seeds per split differ for hist_gradient_boosting (2-3)" in text
    write_report(records, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "Not every model" not in text and "Seeds per split differ" not in text


def _counted(split, model, seed, correct, n):
    record = make_record(split, "tabmoe", seed)
    record.update(run_id=f"t/{split}/{model}/fixed-budget/seed{seed}", model=model)
    record["ood_test"] = {"accuracy": correct / n}
    return record


def test_equal_correct_rows_are_tied_not_split_by_float_rounding():
    # 302 of 3 x 143 rows each: the means of [103, 77, 122] and [122, 77, 103] / 143 differ
    # in the last bit, which ranked them 1 and 2 and counted a difference of exactly the
    # tie width (1 of 200 rows against 0.005) as a win
    records = [_counted("a", "logistic_regression", s, c, 143) for s, c in enumerate([103, 77, 122])]
    records += [_counted("a", "hist_gradient_boosting", s, c, 143) for s, c in enumerate([122, 77, 103])]
    records += [_counted("a", "tabmoe", s, c, 143) for s, c in enumerate([77, 122, 103])]
    records += [_counted("b", "tabmoe", 0, 140, 200), _counted("b", "logistic_regression", 0, 141, 200)]
    table = per_split(runs_frame(records))
    assert table[table["split"] == "a"]["rank"].tolist() == [2.0, 2.0, 2.0]
    lr = summary(table, reference="tabmoe", tie=0.005).set_index("model").loc["logistic_regression"]
    assert (lr["wins"], lr["ties"], lr["losses"]) == (0, 2, 0)
    assert lr["wilcoxon_p"] == 1.0  # split a: a difference of exactly 0, dropped (it was 1e-16: p 0.5)


def test_seeds_made_under_different_configurations_are_flagged_stale(tmp_path, records):
    for r in records:
        r["config_hash"] = "new"
    records[0]["config_hash"] = "old"  # s0 / tabmoe / seed 0: made before the suite changed
    write_report(records, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "STALE: the seeds of 1 (protocol, split, model) cell(s) were made under different" in text
    assert "tabmoe on s0 (fixed-budget)" in text


def test_records_of_one_split_and_seed_drawn_on_different_rows_are_flagged(tmp_path, records):
    for r in records:
        r["n_rows"] = {"train": 70, "validation": 15, "id_test": 15, "ood_test": 40}
    adapted = make_record("s0", "tabmoe", 0, protocol="unlabeled-target")
    adapted["n_rows"] = {"train": 70, "validation": 15, "id_test": 15, "ood_test": 20, "ood_adaptation": 20}
    write_report([*records, adapted], tmp_path, title="t")
    assert "ROWS DIFFER" not in (tmp_path / "report.md").read_text()  # the adaptation's half counts back
    records[0]["n_rows"] = {"train": 68, "validation": 15, "id_test": 15, "ood_test": 42}
    records[1]["rows"], records[4]["rows"] = "aaa", "bbb"  # s0 seed 1 and seed 1 of the next model
    write_report(records, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "ROWS DIFFER: on 2 (split, seed) pair(s)" in text
    assert ("s0 seed 0 (2: hist_gradient_boosting (fixed-budget), logistic_regression (fixed-budget) "
            "| 1: tabmoe (fixed-budget))") in text  # groups in run order, not in the records' order
    records[0]["n_rows"] = dict(records[3]["n_rows"])  # sizes agree again; a digest beside sizes only
    records[1].pop("rows")
    records[0]["rows"], records[2]["n_rows"] = "ccc", None  # a record without sizes is not compared
    write_report(records, tmp_path, title="t")
    assert "ROWS DIFFER" not in (tmp_path / "report.md").read_text()
    records[3]["n_rows"] = {"train": 68, "validation": 15, "id_test": 15, "ood_test": 42}
    write_report(records, tmp_path, title="t")  # an old record's sizes against a new one's, digest or not
    assert "ROWS DIFFER: on 1 (split, seed) pair(s)" in (tmp_path / "report.md").read_text()


def test_models_run_on_different_seeds_of_a_split_are_flagged(tmp_path, records):
    records = [r for r in records if not (r["model"] == "logistic_regression" and r["seed"] != 0)]
    write_report(records, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "The models were run on different seeds on 7 split(s) (s0, s1, s2, s3, s4, ...)" in text


def test_code_line_lists_every_runs_packages_whatever_the_record_order(tmp_path, records):
    records[0]["versions"] = {"tabmoe": "0.0.9", "xgboost": "3.2.0"}
    texts = []
    for order in (records, records[::-1]):
        write_report(order, tmp_path, title="t")
        texts.append((tmp_path / "report.md").read_text().splitlines()[3])
    assert texts[0] == texts[1] == "Code: git abc; tabmoe 0.0.9 / 0.1.0, xgboost 3.2.0."


def test_code_line_says_in_words_what_the_records_do_not_record(tmp_path, records):
    """A hand-made record without `git` and `versions` (or tabmoe from a wheel: revision
    null) made the line read "Code: git None; ."."""
    for r in records:
        del r["git"], r["versions"]
    write_report(records, tmp_path, title="t")
    line = (tmp_path / "report.md").read_text().splitlines()[3]
    assert line == "Code: git revision not recorded; package versions not recorded."
    records[0]["git"] = {"revision": "0123456789abcdef"}
    records[1]["git"] = {"revision": None, "dirty": False}
    records[1]["versions"] = {"tabmoe": "0.1.0"}
    write_report(records, tmp_path, title="t")
    line = (tmp_path / "report.md").read_text().splitlines()[3]
    assert line == f"Code: git 0123456789ab (not recorded for {len(records) - 1} of {len(records)} runs); tabmoe 0.1.0."


def test_report_is_the_same_whatever_the_record_order(tmp_path, records):
    """The stores list records in different orders (files by path, rows by run id); the
    runs.csv rows followed the first-seen split and the unlabeled-target table the first-seen
    model, so the same records gave different files."""
    records = records + [make_record(s, m, seed, protocol="unlabeled-target")
                         for s in SPLITS for m in OOD for seed in (0, 1)]
    records[5]["config_hash"] = "other"  # a STALE note, which lists cells
    outputs = []
    for k, order in enumerate((records, records[::-1], records[1::2] + records[::2])):
        write_report(order, tmp_path / str(k), title="t")
        outputs.append([(tmp_path / str(k) / name).read_bytes()
                        for name in ("report.md", "runs.csv", "per_split.csv", "summary.csv")])
    assert outputs[0] == outputs[1] == outputs[2]


def test_a_mean_halfway_between_two_printed_values_prints_the_same_in_any_summation_order():
    """Accuracies of 10 seeds (k / 40) whose mean is exactly 0.4825: summed forwards the
    float lies below the half, backwards above, and both printed 0.482 / 0.483 apart."""
    accuracies = np.array([18, 38, 18, 26, 36, 29, 0, 22, 4, 2]) / 40
    forwards, backwards = sum(accuracies) / 10, sum(accuracies[::-1]) / 10
    assert forwards < 0.4825 < backwards
    assert num(forwards) == num(backwards) == "0.483"
    assert num(-backwards, 3, "+") == "-0.483" and num(backwards, 3, "+") == "+0.483"
    assert num(float("nan")) == "-" and num(7) == "7" and num(float("inf")) == "inf"
    # the CSVs' six significant digits: 10.32585 summed to either side of the half
    assert f"{significant(10.325849999999999):.6g}" == f"{significant(10.32585):.6g}" == "10.3259"
    assert significant(5e-13) == 5e-13 and significant(0.0) == 0.0
    # taken at 12 significant digits, not decimals: large values too; missing values print "-"
    assert num(4096.499999999999, 0) == num(4096.500000000001, 0) == "4097"
    assert num(1e25, 0) == "1" + "0" * 25 and num(pd.NA) == "-" and significant(pd.NA) is pd.NA


def test_cells_made_entirely_under_an_old_configuration_are_flagged(tmp_path, records):
    """run warned about them, but the report compared hashes within a cell only: a cell whose
    seeds all share an old hash was reported as current."""
    for r in records:
        r["config_hash"] = "new"
    current = {r["run_id"]: "new" for r in records}
    write_report(records, tmp_path / "current", title="t", current_hashes=current)
    assert "OLD CONFIGURATION" not in (tmp_path / "current/report.md").read_text()
    for r in records:
        if (r["split"], r["model"]) == ("s1", "tabmoe"):
            r["config_hash"] = "old"  # every seed: no hash differs within the cell
    records[0]["config_hash"] = "old"  # s0 / tabmoe, one seed of three: STALE, not this note
    current[records[1]["run_id"]] = None  # a run the suite no longer plans: not compared
    write_report(records, tmp_path, title="t", current_hashes=current)
    text = (tmp_path / "report.md").read_text()
    assert (
        "- OLD CONFIGURATION: every seed of 1 (protocol, split, model) cell(s) was made under "
        "another configuration than the suite's current one (its split, fixed parameters or "
        "tuning budget changed since), and the tables report it: tabmoe on s1 (fixed-budget). "
        "`tabmoe-bench run --force` reruns them."
    ) in text
    assert "STALE: the seeds of 1 (protocol, split, model) cell(s)" in text


@pytest.mark.parametrize(("budget", "said"), [
    ({"n_trials": None, "timeout": 60, "metric": "accuracy"}, "no trial limit, timeout 60 s"),
    ({"n_trials": 20, "timeout": None, "metric": "accuracy"}, "20 trials, no timeout"),
])
def test_a_budget_without_a_trial_limit_or_a_timeout_says_so(tmp_path, budget, said):
    """The report printed `None trials` and `timeout None s`."""
    tuned = [{**make_record("s0", "tabmoe", seed, "tuned"), "config": {"budget": budget}} for seed in (0, 1)]
    write_report(tuned, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert f"(budget per run: {said}, selected on ID validation accuracy)" in text
    assert "None" not in text


def test_a_pipe_in_a_split_name_stays_in_its_table_cell(tmp_path):
    """A split named ``s1|x`` ended its Markdown cell at the ``|``: the row had one cell more
    than the header, every number one column to the right of its heading."""
    records = [make_record(s, m, seed) for s in ("s0", "s1|x") for m in OOD for seed in (0, 1)]
    write_report(records, tmp_path, title="t", split_order=["s0", "s1|x"])
    text = (tmp_path / "report.md").read_text()
    table = text.split("[start:per-split-fixed-budget] -->\n")[1].split("\n<!--")[0].splitlines()
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in table]
    assert cells == [cells[0]] * len(table)
    assert "| s1\\|x | tabmoe |" in text


def test_a_record_of_a_protocol_this_version_does_not_define_is_reported(tmp_path, records):
    """A record of an unknown protocol (made by another tabmoe version, or by hand) failed the
    whole report with ``KeyError: 'retuned'`` (``tabmoe-bench report``: "Error: retuned")."""
    other = [make_record(s, m, 0, protocol="retuned") for s in SPLITS[:2] for m in OOD]
    write_report(records + other, tmp_path, title="t")
    text = (tmp_path / "report.md").read_text()
    assert "- `retuned`: a protocol this version of tabmoe does not define" in text
    assert "## Protocol `retuned`" in text and "## Protocol `fixed-budget`" in text
