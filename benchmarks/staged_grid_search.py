"""The paper's GradientBoosting grid search: GridSearchCV vs StagedGridSearchCV, side by side.

    python benchmarks/staged_grid_search.py --splits sim-1-0.9-0.0 sim-5-0.9-0.5 --seeds 4951 \
        > benchmarks/results/speed/staged_grid_search.jsonl

For each paper-suite split and seed, fits the paper's 5-fold grid (27 candidates), with the
suite's parameters, on the training rows both ways, single-threaded, one after the other in this process, and prints
the wall time of each, their ratio, and whether the two chose the same parameters with the
same cross-validated score and the same OOD-test predictions, and the OOD accuracy (they must: see
``tabmoe/baselines/staged_search.py``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from threadpoolctl import threadpool_limits

from tabmoe.baselines import reference
from tabmoe.bench.suites import load_suite


def timed_fit(search, X, y) -> float:
    start = time.perf_counter()
    search.fit(X, y)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["sim-5-0.9-0.5"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[4951])
    args = parser.parse_args()
    suite = load_suite("paper")
    grid = {f"estimator__{k}": v for k, v in reference.PAPER_GRIDS["gradient_boosting"].items()}
    rows = []
    for name in args.splits:
        for seed in args.seeds:
            split = suite.split(name).make(seed)
            X, y = split.features("train"), split.train[split.target]
            X_ood = split.features("ood_test")
            # The suite's fixed parameters (categorical_features="all": one-hot bin codes).
            model = reference.gradient_boosting(**suite.models["gradient_boosting"], random_state=seed)
            plain = GridSearchCV(model, grid, cv=StratifiedKFold(5))
            staged = reference.paper_grid_search(model, reference.PAPER_GRIDS["gradient_boosting"])
            with threadpool_limits(1):
                plain_seconds = timed_fit(plain, X, y)
                staged_seconds = timed_fit(staged, X, y)
            row = {
                "split": name,
                "seed": seed,
                "train_rows": len(X),
                "grid_seconds": round(plain_seconds, 2),
                "staged_seconds": round(staged_seconds, 2),
                "speedup": round(plain_seconds / staged_seconds, 2),
                "same_choice": bool(plain.best_params_ == staged.best_params_),
                "same_cv_score": bool(plain.best_score_ == staged.best_score_),
                "ood_accuracy": float(plain.score(X_ood, split.ood_test[split.target])),
                "same_ood_proba": bool(
                    np.array_equal(plain.predict_proba(X_ood), staged.predict_proba(X_ood))
                ),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    total_plain = sum(r["grid_seconds"] for r in rows)
    total_staged = sum(r["staged_seconds"] for r in rows)
    print(json.dumps({"total_grid_seconds": round(total_plain, 1),
                      "total_staged_seconds": round(total_staged, 1),
                      "speedup": round(total_plain / total_staged, 2),
                      "all_identical": all(r["same_choice"] and r["same_cv_score"]
                                           and r["same_ood_proba"] for r in rows)}))


if __name__ == "__main__":
    main()
