"""openml-ood `defaults` on seeds 0-2, fresh seeds 3-5 and all six: does the order hold?

Reads the committed run records (no fitting): seeds 0-2 from ``--results`` (the suite's
runs), seeds 3-5 from ``--fresh`` (the replication's runs), for the models present in
both. Prints, per block of seeds, each model's mean ID-validation, ID-test and OOD accuracy
(a mean over the 14 splits of each split's mean over the block's seeds) and mean rank (per
split, by mean OOD accuracy among these models); then tabmoe minus each reference, paired
per (split, seed) with W/T/L (ties within 0.005), its largest loss and the mean without
that pair, and per split with W/T/L and a Wilcoxon p; and the seeds 3-5 runs that predict
one class for every OOD row (OOD balanced accuracy exactly 1/k for k = 2..29 classes, or 0:
what predicting one class gives; a binary split's 0.5 could also come from other
predictions, so it flags, not proves)::

    python benchmarks/defaults_by_seeds.py [--results benchmarks/results/openml-ood] \\
        [--fresh benchmarks/results/openml-ood-seeds3-5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from research import wtl  # rounded: a difference of exactly the tie width is a tie
from scipy.stats import wilcoxon

from tabmoe.bench.report import DECIMALS

RESULTS = Path(__file__).parent / "results"
REFERENCES = ("ft_transformer", "logistic_regression", "tabm", "catboost", "xgboost", "hist_gradient_boosting",
              "tab_transformer")


def load(folder: Path, seeds: range) -> pd.DataFrame:
    rows = []
    for path in sorted((folder / "runs").rglob("defaults-seed*.json")):
        r = json.loads(path.read_text())
        if r["protocol"] == "defaults" and r["seed"] in seeds:
            rows.append({"model": r["model"], "split": r["split"], "seed": r["seed"],
                         "val": r["validation"]["accuracy"], "id": r["id_test"]["accuracy"],
                         "ood": r["ood_test"]["accuracy"], "ood_balanced": r["ood_test"]["balanced_accuracy"]})
    return pd.DataFrame(rows)


def missing_runs(runs: pd.DataFrame, seeds: range, splits=None) -> list[tuple[str, str, int]]:
    """The (model, split, seed) of ``seeds`` that ``runs`` lacks, over its models and
    ``splits`` (default: its own): a missing record made a mean over fewer seeds, or a nan,
    with nothing said; a split the block lacks whole, means over fewer splits."""
    have = set(zip(runs["model"], runs["split"], runs["seed"], strict=True))
    splits = sorted(set(runs["split"]) if splits is None else splits)
    return [(m, s, seed) for m in sorted(set(runs["model"])) for s in splits for seed in seeds
            if (m, s, seed) not in have]


def looks_one_class(balanced_accuracy: float) -> bool:
    """Whether an OOD balanced accuracy is what one class for every row gives: 1/k over the
    k classes present (the recall of the class predicted), 0 when that class is absent (the
    earlier test, == 0.5, saw binary splits only)."""
    return balanced_accuracy == 0 or any(abs(balanced_accuracy - 1 / k) < 1e-12 for k in range(2, 30))


def split_means(runs: pd.DataFrame, column: str = "ood") -> pd.DataFrame:
    """Each model's mean of ``column`` per split over the seeds (splits x models)."""
    return runs.groupby(["model", "split"])[column].mean().unstack(0)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    table = pd.DataFrame({c: split_means(runs, c).mean() for c in ("val", "id", "ood")})
    # ranked on rounded means, as the report ranks them: equal accuracies one ulp apart tie
    table["rank"] = split_means(runs).round(DECIMALS).rank(axis=1, ascending=False).mean()
    table["runs"] = runs.groupby("model").size()
    return table.sort_values("ood", ascending=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS / "openml-ood")
    parser.add_argument("--fresh", type=Path, default=RESULTS / "openml-ood-seeds3-5")
    args = parser.parse_args(argv)
    old, new = load(args.results, range(3)), load(args.fresh, range(3, 6))
    models = sorted(set(old.model) & set(new.model))
    old, new = old[old.model.isin(models)], new[new.model.isin(models)]
    splits = sorted(set(old.split) | set(new.split))  # both blocks over the same splits
    for folder, runs, seeds in ((args.results, old, range(3)), (args.fresh, new, range(3, 6))):
        if missing := missing_runs(runs, seeds, splits):
            shown = ", ".join(f"{m} {s} seed {seed}" for m, s, seed in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            parser.error(f"{folder} lacks {len(missing)} defaults record(s): {shown}{more}")
    blocks = {"0-2": old, "3-5": new, "0-5": pd.concat([old, new])}
    for name, runs in blocks.items():
        print(f"\nseeds {name}: {len(models)} models, {len(runs)} runs")
        print(summary(runs).round(4).to_string())
    for name, runs in blocks.items():
        pairs = runs.pivot_table(index=["split", "seed"], columns="model", values="ood")
        splits = split_means(runs)
        for ref in (m for m in REFERENCES if m in models):
            paired = pairs["tabmoe"] - pairs[ref]
            diff, worst = paired.to_numpy(), paired.idxmin()
            by_split = (splits["tabmoe"] - splits[ref]).to_numpy()
            print(f"seeds {name}: tabmoe - {ref}: OOD {diff.mean():+.4f} over {len(diff)} (split, seed) "
                  f"pairs, W/T/L {wtl(diff)}; over splits W/T/L {wtl(by_split)}, "
                  f"Wilcoxon p {wilcoxon(by_split).pvalue:.3f}; the largest loss {diff.min():+.3f} "
                  f"({worst[0]} seed {worst[1]}), without it {(diff.sum() - diff.min()) / (len(diff) - 1):+.4f}")
    one_class = new[new["ood_balanced"].map(looks_one_class)]
    print("\none class for every OOD row, seeds 3-5:",
          {m: sorted(zip(g["split"], g["seed"], strict=True)) for m, g in one_class.groupby("model")})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
