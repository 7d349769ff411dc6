"""The benchmark report: Markdown + CSV tables and PNG plots from the stored run records.

Tables (per protocol; the protocols are never mixed):

* per split x model: mean +- SD over seeds (sample SD, n - 1) of ID-test and OOD-test
  accuracy and of the gap ID - OOD, and the model's rank on that split by mean OOD accuracy
  (1 = best, ties averaged);
* summary per model: the means over splits of those per-split means (and of the per-split
  SDs), the mean rank, win / tie / loss counts against a reference model over splits
  (a tie is a difference of mean OOD accuracy within ``tie``) and the two-sided Wilcoxon
  signed-rank test of the paired per-split mean OOD accuracies (scipy; with fewer than 6
  splits it cannot reach p < 0.05);
* oracle (tuned runs on splits with an ood_validation part): OOD accuracy when the trial is
  chosen on OOD validation instead of ID validation. It peeks at OOD data, so it is a
  reference only (not an upper bound: a small OOD validation part can pick a trial that does
  worse on OOD test), shown in its own section and never in the tables above;
* cost: fit, predict and tuning seconds and peak memory;
* paper suite: the paper's published numbers (:mod:`tabmoe.bench.paper_results`) beside ours.

Plots: ID vs OOD accuracy per model (one point per split) and the gap per split.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._markdown import markdown
from ..registry import MODELS
from ._figures import count, missing, num, pm, significant
from ._plots import plot_gap, plot_id_vs_ood
from ._report_notes import coverage_note, one_record_per_run, record_notes, unknown_split_notes
from .paper_results import SIMULATION_MODELS, published
from .plan import PROTOCOL_ALIASES, PROTOCOLS
from .runner import last_line

PARTS = {"validation": "val", "id_test": "id", "ood_test": "ood", "ood_validation": "ood_val"}
SCORES = ("accuracy", "balanced_accuracy", "log_loss", "roc_auc", "bin_mse")
COST = ("fit_seconds", "predict_seconds", "tune_seconds", "peak_rss_mb")
#: Accuracies are ratios of row counts: means and differences are compared at this many
#: decimals, below which they differ only by floating-point rounding (a tie stays a tie).
DECIMALS = 12


# ------------------------------------------------------------------------------- frames
def runs_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: keys, flattened scores (``id_accuracy``, ``ood_roc_auc``, ...), cost."""
    rows = []
    for r in records:
        row = {k: r.get(k) for k in ("suite", "split", "model", "protocol", "tuned", "seed")}
        row["protocol"] = PROTOCOL_ALIASES.get(row["protocol"], row["protocol"])  # old names
        for part, prefix in PARTS.items():
            scores = r.get(part) or {}
            for metric in SCORES:
                row[f"{prefix}_{metric}"] = scores.get(metric)
        row["oracle_ood_accuracy"] = (r.get("oracle") or {}).get("ood_test_accuracy")
        search = r.get("search") or {}
        row["n_trials"] = search.get("n_trials")
        row["best_validation_score"] = search.get("best_validation_score")
        row.update({k: r.get(k) for k in COST})
        row["params"] = json.dumps(r.get("params"), sort_keys=True)
        row["git_revision"] = (r.get("git") or {}).get("revision")
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    numeric = [c for c in frame.columns if c.split("_", 1)[-1] in SCORES or c in COST]
    frame[numeric] = frame[numeric].apply(pd.to_numeric, errors="coerce")
    return _ordered(frame).reset_index(drop=True)


def _ordered(frame: pd.DataFrame, split_order: Sequence[str] = ()) -> pd.DataFrame:
    """Rows in protocol, split (suite order, else first seen), registry model order, seed."""
    protocols = {p: i for i, p in enumerate(PROTOCOLS)}
    splits = {s: i for i, s in enumerate(dict.fromkeys([*split_order, *frame["split"]]))}
    models = {m: i for i, m in enumerate(dict.fromkeys([*MODELS, *frame["model"]]))}
    keys = pd.DataFrame({
        "p": frame["protocol"].map(protocols),
        "s": frame["split"].map(splits),
        "m": frame["model"].map(models),
    })
    if "seed" in frame:
        keys["seed"] = frame["seed"]
    return frame.loc[keys.sort_values(list(keys.columns), kind="stable").index]


def per_split(runs: pd.DataFrame, split_order: Sequence[str] = ()) -> pd.DataFrame:
    """Per (protocol, split, model): seeds, mean / SD of ID, OOD accuracy and gap, OOD rank."""
    runs = runs.assign(gap=runs["id_accuracy"] - runs["ood_accuracy"])
    grouped = runs.groupby(["protocol", "split", "model"], sort=False)
    table = grouped.agg(
        seeds=("seed", "nunique"),
        id_mean=("id_accuracy", "mean"), id_sd=("id_accuracy", "std"),
        ood_mean=("ood_accuracy", "mean"), ood_sd=("ood_accuracy", "std"),
        gap_mean=("gap", "mean"), gap_sd=("gap", "std"),
        ood_pop_sd=("ood_accuracy", lambda s: s.std(ddof=0) if s.count() > 1 else math.nan),
        ood_bin_mse=("ood_bin_mse", "mean"),
        oracle_ood_mean=("oracle_ood_accuracy", "mean"),
        fit_seconds=("fit_seconds", "mean"),
    ).reset_index()
    # Ranked on rounded means: two models with the same correct rows over the seeds can
    # average to floats one ulp apart, which would rank them 1 and 2 instead of 1.5 each.
    rounded = table["ood_mean"].round(DECIMALS)
    table["rank"] = rounded.groupby([table["protocol"], table["split"]]).rank(ascending=False, method="average")
    return _ordered(table, split_order).reset_index(drop=True)


def _wilcoxon(diffs: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (NaN when undefined)."""
    from scipy.stats import wilcoxon

    diffs = diffs[np.isfinite(diffs)]
    if len(diffs) == 0 or np.all(diffs == 0):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(wilcoxon(diffs).pvalue)
        except ValueError:
            return math.nan


def summary(table: pd.DataFrame, reference: str = "tabmoe", tie: float = 0.005) -> pd.DataFrame:
    """Per (protocol, model) over splits: mean accuracies, mean rank, W/T/L and Wilcoxon p vs ``reference``."""
    rows = []
    for (protocol, model), group in table.groupby(["protocol", "model"], sort=False):
        ref = table[(table["protocol"] == protocol) & (table["model"] == reference)].set_index("split")["ood_mean"]
        mine = group.set_index("split")["ood_mean"]
        paired = mine.index.intersection(ref.index)
        diffs = np.round((mine.loc[paired] - ref.loc[paired]).to_numpy(dtype=float), DECIMALS)  # no float noise
        compare = model != reference and len(paired) > 0
        rows.append({
            "protocol": protocol,
            "model": model,
            "splits": len(group),
            "seeds": int(group["seeds"].min()),
            **{f"{k}_{s}": group[f"{k}_{s}"].mean() for k in ("id", "ood", "gap") for s in ("mean", "sd")},
            "mean_rank": group["rank"].mean(),
            "wins": int((diffs > tie).sum()) if compare else None,
            "ties": int((np.abs(diffs) <= tie).sum()) if compare else None,
            "losses": int((diffs < -tie).sum()) if compare else None,
            "wilcoxon_p": _wilcoxon(diffs) if compare else None,
        })
    return pd.DataFrame(rows)


def paper_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """Published OOD accuracy (SD) and MSE beside ours (mean, population SD as the paper)."""
    rows = []
    for split in dict.fromkeys(table["split"]):
        paper = published(split)
        if not paper:
            continue
        ours = table[table["split"] == split]
        for model, numbers in paper.items():
            mine = ours[ours["model"] == model]
            if mine.empty:
                rows.append({"split": split, "model": model, "protocol": None, **_paper_cells(numbers)})
            for _, row in mine.iterrows():
                rows.append({
                    "split": split, "model": model, "protocol": row["protocol"], **_paper_cells(numbers),
                    "our_seeds": row["seeds"], "our_accuracy": row["ood_mean"],
                    "our_accuracy_sd": row["ood_pop_sd"], "our_mse": row["ood_bin_mse"],
                    "difference": row["ood_mean"] - numbers["accuracy"],
                })
    return pd.DataFrame(rows)


#: The paper's own baselines (its simulation tables' columns other than tabmoe's).
PAPER_BASELINES = tuple(name for name in SIMULATION_MODELS if name != "tabmoe")


def paired_with_paper(
    runs: pd.DataFrame, model: str = "tabmoe", baselines: tuple[str, ...] = PAPER_BASELINES
) -> pd.DataFrame:
    """Per published split and baseline: ``model`` - baseline OOD accuracy paired by seed
    (mean, range, seeds ahead) beside the same difference of the paper's means.

    Paired by seed, the data-seed-to-seed spread (large in the simulation: SD 0.03-0.2)
    cancels, so a few seeds already show whether the paper's ordering holds.
    """
    rows = []
    for (split, protocol), group in runs.groupby(["split", "protocol"], sort=False):
        paper = published(split)
        acc = group.pivot_table(index="seed", columns="model", values="ood_accuracy")
        if model not in paper or model not in acc:
            continue
        for baseline in baselines:
            if baseline not in paper or baseline not in acc:
                continue
            diff = (acc[model] - acc[baseline]).dropna()
            if diff.empty:
                continue
            rows.append({
                "split": split, "protocol": protocol, "baseline": baseline, "seeds": len(diff),
                "our_difference": diff.mean(), "our_min": diff.min(), "our_max": diff.max(),
                "seeds_model_ahead": int((diff > 0).sum()),
                "paper_difference": paper[model]["accuracy"] - paper[baseline]["accuracy"],
            })
    return pd.DataFrame(rows)


def _paired_md(rows: pd.DataFrame) -> str:
    """The paired table; a protocol column where it holds more than one protocol (one row
    per split, baseline and protocol: without it, the rows of two protocols read the same)."""
    protocols = rows["protocol"].nunique() > 1
    return markdown(
        ["split", *(["protocol"] if protocols else []), "against", "seeds",
         "ours: tabmoe - baseline, mean (min, max over seeds)", "seeds tabmoe ahead", "paper: difference of means"],
        [[r.split, *([r.protocol] if protocols else []), r.baseline, count(r.seeds),
          f"{num(r.our_difference, 3, '+')} ({num(r.our_min, 3, '+')}, {num(r.our_max, 3, '+')})",
          f"{int(r.seeds_model_ahead)} of {int(r.seeds)}", num(r.paper_difference, 3, "+")]
         for r in rows.itertuples()],
    )


def _paper_cells(numbers: dict[str, Any]) -> dict[str, Any]:
    return {
        "paper_seeds": numbers["n_seeds"],
        "paper_accuracy": numbers["accuracy"],
        "paper_accuracy_sd": numbers["accuracy_sd"],
        "paper_mse": numbers["mse"],
    }


# ----------------------------------------------------------------------------- markdown
def _summary_md(rows: pd.DataFrame, reference: str) -> str:
    return markdown(
        ["model", "splits", "seeds", "ID acc", "OOD acc", "gap ID-OOD", "mean rank",
         f"vs {reference} W/T/L", "Wilcoxon p"],
        [
            [r.model, count(r.splits), count(r.seeds), pm(r.id_mean, r.id_sd), pm(r.ood_mean, r.ood_sd),
             pm(r.gap_mean, r.gap_sd), num(r.mean_rank, 2),
             "-" if missing(r.wins) else f"{int(r.wins)}/{int(r.ties)}/{int(r.losses)}",
             num(r.wilcoxon_p)]
            for r in rows.itertuples()
        ],
    )


def _per_split_md(rows: pd.DataFrame) -> str:
    return markdown(
        ["split", "model", "seeds", "ID acc", "OOD acc", "gap ID-OOD", "rank"],
        [[r.split, r.model, count(r.seeds), pm(r.id_mean, r.id_sd), pm(r.ood_mean, r.ood_sd),
          pm(r.gap_mean, r.gap_sd), num(r.rank, 1)] for r in rows.itertuples()],
    )


def _oracle_md(rows: pd.DataFrame) -> str:
    return markdown(
        ["split", "model", "OOD acc, selected on ID validation", "ORACLE OOD acc, selected on OOD validation"],
        [[r.split, r.model, num(r.ood_mean), num(r.oracle_ood_mean)] for r in rows.itertuples()],
    )


def _cost_md(runs: pd.DataFrame) -> str:
    cost = runs.groupby(["protocol", "model"], sort=False)[list(COST)].mean().reset_index()
    return markdown(
        ["protocol", "model", "fit s", "predict s", "tuning s", "peak RSS MiB"],
        [[r.protocol, r.model, num(r.fit_seconds, 2), num(r.predict_seconds, 3),
          num(r.tune_seconds, 1), num(r.peak_rss_mb, 0)] for r in cost.itertuples()],
    )


def _paper_md(rows: pd.DataFrame) -> str:
    return markdown(
        ["split", "model", "protocol", "paper OOD acc (SD)", "our OOD acc (SD)", "our seeds",
         "ours - paper", "paper MSE", "our MSE"],
        [[r.split, r.model, "-" if missing(r.protocol) else r.protocol,
          _paper_pm(r.paper_accuracy, r.paper_accuracy_sd),
          _paper_pm(getattr(r, "our_accuracy", None), getattr(r, "our_accuracy_sd", None)),
          count(getattr(r, "our_seeds", None)), num(getattr(r, "difference", None)),
          num(r.paper_mse, 4), num(getattr(r, "our_mse", None), 4)] for r in rows.itertuples()],
    )


def _paper_pm(mean: Any, sd: Any) -> str:
    if missing(mean):
        return "-"
    if missing(sd):
        return num(mean, 4)
    return f"{num(mean, 4)} ({num(sd, 4)})"


# ------------------------------------------------------------------------------- report
def _code_line(records: Sequence[dict[str, Any]]) -> str:
    """"Code: git <revisions>; <package> <versions>, ...." over every run's record; what
    the records do not say (a hand-made record, tabmoe installed from a wheel: revision null)
    is said in words (it read "Code: git None; .")."""
    revisions = [(r.get("git") or {}).get("revision") for r in records]
    known = sorted({str(g)[:12] for g in revisions if g})
    unknown = sum(not g for g in revisions)
    git = "git revision not recorded" if not known else f"git {', '.join(known)}" + (
        f" (not recorded for {unknown} of {len(revisions)} runs)" if unknown else "")
    versions: dict[str, set] = {}  # every run's packages, whatever order the store lists them in
    for r in records:
        for package, version in (r.get("versions") or {}).items():
            versions.setdefault(package, set()).add(str(version))
    packages = ", ".join(f"{k} {' / '.join(sorted(v))}" for k, v in sorted(versions.items()))
    return f"Code: {git}; {packages or 'package versions not recorded'}."


def write_report(
    records: Sequence[dict[str, Any]],
    out_dir: str | Path,
    *,
    title: str,
    description: str = "",
    split_order: Sequence[str] = (),
    reference: str = "tabmoe",
    tie: float = 0.005,
    failures: dict[str, str] | None = None,
    notes: Sequence[str] = (),
    current_hashes: Mapping[str, str | None] | None = None,
    plan_known: bool = True,
) -> list[Path]:
    """Write ``report.md``, the CSV tables and the PNG plots to ``out_dir``; their paths.

    ``split_order``: the suite's splits, in its order (records of other splits are reported
    after them, under a NOT IN THE SUITE note). ``current_hashes``: run id -> the config hash
    the suite gives that run now; cells whose every record has another are named in an OLD
    CONFIGURATION note. ``plan_known``: whether ``failures`` names every planned run without
    a record ("not run"); False (a report without the plan of a ``run``) says that runs never
    started are not counted instead of claiming none is unfinished."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not records:
        raise ValueError(f"no finished runs to report for {title!r}")
    records, renamed = one_record_per_run(records)
    records = sorted(records, key=_run_key)  # the stores list them in different orders
    notes = [
        *notes,
        *record_notes(records, renamed, current_hashes),
        *unknown_split_notes(records, split_order),
    ]
    runs = runs_frame(records)
    table = per_split(runs, split_order)
    overall = summary(table, reference, tie)
    written = []

    def save_csv(frame: pd.DataFrame, name: str) -> None:
        frame = frame.copy()
        for column in frame.select_dtypes("float").columns:
            frame[column] = frame[column].map(significant)
        frame.to_csv(out / name, index=False, float_format="%.6g")
        written.append(out / name)

    save_csv(runs, "runs.csv")
    save_csv(table, "per_split.csv")
    save_csv(overall, "summary.csv")
    lines = [f"# Benchmark report: {title}", ""]
    if description:
        lines += [description, ""]
    lines += [
        f"{len(runs)} finished runs ({runs['model'].nunique()} models, {runs['split'].nunique()} splits, "
        f"seeds {sorted(set(runs['seed']))}); "
        + (f"{len(failures or {})} failed or unfinished." if plan_known else
           f"{len(failures or {})} failed; runs never started are not counted (this report does "
           "not know which runs were planned)."),
        _code_line(records),
        "",
        "Protocols:",
    ]
    lines += [f"- `{p}`: {_protocol_text(p)}" + _budget_text(records, p) for p in dict.fromkeys(runs["protocol"])]
    lines += [f"- {note}" for note in notes]
    lines += [
        "",
        "Accuracy cells are mean ± SD over seeds (sample SD). Summary: mean over splits of the "
        "per-split means (± the mean per-split SD). Gap = ID − OOD test accuracy. Rank: per-split "
        "rank by mean OOD accuracy (1 = best), averaged. "
        f"W/T/L: splits where the model's mean OOD accuracy is above / within ±{tie} of / below "
        f"{reference}'s; p: two-sided Wilcoxon signed-rank test over those paired splits "
        "(with fewer than 6 splits it cannot fall below 0.05).",
    ]
    for protocol in dict.fromkeys(table["protocol"]):
        rows = table[table["protocol"] == protocol]
        stem = protocol
        plot_id_vs_ood(rows, out / f"id_vs_ood-{stem}.png", f"{title}: ID vs OOD accuracy ({protocol})")
        plot_gap(rows, out / f"gap_per_split-{stem}.png", f"{title}: ID - OOD gap per split ({protocol})")
        written += [out / f"id_vs_ood-{stem}.png", out / f"gap_per_split-{stem}.png"]
        mine = [r for r in records if PROTOCOL_ALIASES.get(r.get("protocol"), r.get("protocol")) == protocol]
        lines += [
            "", f"## Protocol `{protocol}`", "",
            f"{_protocol_text(protocol)[:1].upper()}{_protocol_text(protocol)[1:]}{_budget_text(records, protocol)}. "
            + _compute_text(mine),
            "", "### Summary over splits", "",
            *_section(f"summary-{stem}", _summary_md(overall[overall["protocol"] == protocol], reference)
                      + coverage_note(rows, runs[runs["protocol"] == protocol])),
            "", "### Per split", "", *_section(f"per-split-{stem}", _per_split_md(rows)), "",
            f"![ID vs OOD accuracy](id_vs_ood-{stem}.png) ![gap per split](gap_per_split-{stem}.png)",
        ]
        if protocol == "unlabeled-target":
            lines += ["", "### What each model did with the unlabeled rows", "",
                      _adaptation_md(records, reference)]
        oracle = rows[rows["oracle_ood_mean"].notna()]
        if not oracle.empty:
            lines += [
                "", "### ORACLE (not a fair result)", "",
                "OOD test accuracy when the tuning trial is selected on the split's OOD validation "
                "part instead of ID validation. It uses OOD data for selection, so it is a reference "
                "for what ID-validation selection may lose, not a bound: on a small OOD validation part "
                "it can pick a trial that does worse on the OOD test rows. The tables above never use it.",
                "", _oracle_md(oracle),
            ]
    comparison = paper_comparison(table)
    if not comparison.empty:
        save_csv(comparison, "paper_comparison.csv")
        lines += [
            "", "## The paper's published numbers beside ours", "",
            "The paper's Tables 3-4 (simulation: 20 seeds, mean and population SD) and 5 "
            "(auto-mpg: seed 42 only), as in docs/paper.md sections 3-4. Ours: mean and population SD over our seeds; MSE in bin units "
            "(integer labels).", "", *_section("paper-comparison", _paper_md(comparison)),
        ]
        paired = paired_with_paper(runs)
        if not paired.empty:
            save_csv(paired, "paper_paired.csv")
            lines += [
                "", "### tabmoe against the paper's baselines, paired by seed", "",
                "OOD accuracy of tabmoe minus that of each of the paper's baselines on the same "
                "data seed (seeds both have), beside the difference of the paper's published "
                "means.", "",
                *_section("paper-paired", _paired_md(paired)),
            ]
    lines += ["", "## Cost (mean per run)", "", _compute_text(records), "", _cost_md(runs)]
    if failures:
        lines += ["", "## Failed or unfinished runs", ""]
        lines += [f"- `{run_id}`: {last_line(error)}" for run_id, error in sorted(failures.items())]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    return [out / "report.md", *written]


def _protocol_text(protocol: str) -> str:
    """What ``protocol`` is; a name :data:`PROTOCOLS` lacks (a record of another tabmoe
    version or a hand-made one) is said to be unknown: indexing failed the whole report."""
    return PROTOCOLS.get(protocol, "a protocol this version of tabmoe does not define")


def _run_key(record: dict[str, Any]) -> tuple:
    """Records in one order whatever order they come in: by suite, split, model, protocol
    (as text), then seed (every first-seen order of the report follows from it)."""
    return (*(str(record.get(k)) for k in ("suite", "split", "model", "protocol")), record.get("seed"))


def _adaptation_md(records: Sequence[dict[str, Any]], reference: str) -> str:
    """Per model of the unlabeled-target runs: unlabeled rows in fit, importance weights (mean
    effective sample size and domain AUC), or none (run as in `defaults`)."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if PROTOCOL_ALIASES.get(r.get("protocol"), r.get("protocol")) == "unlabeled-target":
            by_model.setdefault(r["model"], []).append(r.get("adaptation") or {})
    rows = []
    for model, items in by_model.items():
        unlabeled = any(a.get("unlabeled_rows") for a in items)
        weights = [a["importance_weights"] for a in items if a.get("importance_weights")]
        used = any(a.get("adapted") for a in items)
        ess = np.mean([w["effective_sample_size"] / w["n"] for w in weights]) if weights else None
        auc = np.mean([w["domain_auc"] for w in weights]) if weights else None
        rows.append([
            model,
            "yes" if unlabeled else "no",
            "yes" if weights else "no",
            num(ess), num(auc),
            "" if used else "none: run as in `defaults`",
        ])
    return (
        "Half of each split's OOD test rows (seeded, stratified) went to fit without labels; the "
        "tables above score the other half. Importance weights: cross-fitted logistic-regression "
        "domain classifier, clipped to [0.1, 10], mean 1 (docs/harness.md). ESS: effective sample "
        "size of the weights over the ID training rows (mean over runs); domain AUC: how well the "
        "classifier told ID training rows from adaptation rows.\n\n"
        + markdown(["model", "unlabeled rows in fit", "importance weights", "ESS / n",
                    "domain AUC", "note"], rows)
    )


def _section(name: str, text: str) -> list[str]:
    """``text`` between pymdownx.snippets section markers (invisible HTML comments), so a docs
    page can embed it with ``--8<-- "benchmarks/results/<suite>/report.md:<name>"``."""
    return [f"<!-- --8<-- [start:{name}] -->", text, f"<!-- --8<-- [end:{name}] -->"]


def _compute_text(records: Sequence[dict[str, Any]]) -> str:
    """Total compute of the reported runs: wall time from start to finish of each run, summed."""
    seconds = 0.0
    for record in records:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            seconds += (
                datetime.fromisoformat(record["finished_at"]) - datetime.fromisoformat(record["started_at"])
            ).total_seconds()
    threads = sorted({int(r.get("threads") or 1) for r in records})
    return (
        f"Total compute: {seconds / 3600:.2f} hours of run wall time (each run from its start to its "
        f"finish, summed over {len(records)} runs; {'/'.join(map(str, threads))} thread(s) per run)."
    )


def _budget_text(records: Sequence[dict[str, Any]], protocol: str) -> str:
    if protocol != "tuned":
        return ""
    budgets = {
        json.dumps((r.get("config") or {}).get("budget"), sort_keys=True)
        for r in records if r.get("protocol") == "tuned"
    }
    if not budgets:
        return ""
    parts = []
    for text in sorted(budgets):
        budget = json.loads(text) or {}
        trials, timeout = budget.get("n_trials"), budget.get("timeout")  # None: no such limit
        parts.append(
            f"{'no trial limit' if trials is None else f'{trials} trials'}, "
            f"{'no timeout' if timeout is None else f'timeout {timeout} s'}, selected on ID "
            f"validation {budget.get('metric')}"
        )
    return " (budget per run: " + "; ".join(parts) + ")"
