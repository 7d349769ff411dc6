"""The early-stopping hold-out on tables larger than the research suite's (a probe, not a choice).

    python benchmarks/holdout_large.py --openml-cache ../shared/openml-cache \
        [--datasets 1590,1461] [--seeds 0,1] [--variants 100,0.1] [--threads 1]

Study 29 (docs/research.md#study-29) chose ``validation_fraction="auto"`` (10% of the
training rows, at most 100) on tables of at most 2,099 training rows; this probe's committed
lines, labelled ``"auto"``, are that 100-row hold-out. Studies 30 and 32 then measured the
region on the ID side of the suite's splits and ``"auto"`` became 10% above 10,000 rows, so
the default variants are now ``100`` (the cap) and ``0.1`` (today's ``"auto"`` here). This fits
``TabularMoEClassifier(random_state=seed, validation_fraction=v)`` for each ``v`` on whole
OpenML tables (adult, 1590: 48,842 rows; bank-marketing, 1461: 45,211 rows), a stratified
random 80/20 split per seed (no shift), the same rows for every variant, and prints test
accuracy, log loss, epochs and fit seconds per line, then a Markdown table; appends the
lines to ``benchmarks/results/research/holdout-large.jsonl`` (``--out``). It reads the
region the study did not measure; it chooses nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from ood_variants import parse_variant
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from tabmoe import TabularMoEClassifier
from tabmoe.bench import limited_threads
from tabmoe.data.openml import load_openml

OUT = Path(__file__).parent / "results" / "research" / "holdout-large.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openml-cache", required=True)
    parser.add_argument("--datasets", default="1590,1461")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--variants", default="100,0.1", help="validation_fraction values")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    variants = [parse_variant(f"v={text}")["v"] for text in args.variants.split(",")]
    lines = []
    with limited_threads(args.threads):
        for dataset in map(int, args.datasets.split(",")):
            table = load_openml(dataset, cache_dir=args.openml_cache)
            X, y = table.data.drop(columns=table.target), table.data[table.target].astype(str)
            for seed in map(int, args.seeds.split(",")):
                X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
                for fraction in variants:
                    model = TabularMoEClassifier(random_state=seed, validation_fraction=fraction)
                    start = time.perf_counter()
                    model.fit(X_tr, y_tr)
                    seconds = time.perf_counter() - start
                    proba = model.predict_proba(X_te)
                    line = {
                        "dataset": table.name, "openml_id": dataset, "seed": seed,
                        "validation_fraction": fraction, "n_train": len(X_tr),
                        "accuracy": accuracy_score(y_te, model.classes_[proba.argmax(1)]),
                        "log_loss": log_loss(y_te, proba, labels=model.classes_),
                        "epochs": model.n_iter_, "best_epoch": model.best_epoch_,
                        "fit_seconds": round(seconds, 1),
                    }
                    print(json.dumps(line), flush=True)
                    lines.append(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    print("\n| dataset | seed | validation_fraction | accuracy | log loss | epochs (best) | fit s |")
    print("|---|---|---|---|---|---|---|")
    for r in lines:
        print(f"| {r['dataset']} | {r['seed']} | {r['validation_fraction']} | {r['accuracy']:.4f} | "
              f"{r['log_loss']:.4f} | {r['epochs']} ({r['best_epoch']}) | {r['fit_seconds']} |")
    for fraction in variants:
        acc = [r["accuracy"] for r in lines if r["validation_fraction"] == fraction]
        print(f"mean accuracy, validation_fraction={fraction!r}: {np.mean(acc):.4f} over {len(acc)} fits")


if __name__ == "__main__":
    main()
