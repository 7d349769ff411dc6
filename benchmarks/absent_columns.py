"""Accuracy as 0..k feature columns are removed at predict time (docs/paper.md section 5).

    python benchmarks/absent_columns.py --dataset auto-mpg       # seeds 42-51, OOD test rows
    python benchmarks/absent_columns.py --dataset sim:5/0.9/0    # the authors' first 5 seeds

Per seed, fitted once each:

* ``exclude``: ``TabularMoEClassifier(**paper_config(), missing="exclude")`` — removed
  columns are dropped from the DataFrame and left out of the attention. (On data without
  NaN its training is the default model's.)
* ``exclude+dropout``: the same with ``feature_dropout`` (default 0.2) during training.
* ``imputer``: ``SimpleImputer(most_frequent)`` fitted on the training rows fills the
  removed columns, then the SAME fitted model as ``exclude`` predicts.
* ``hgb``: ``HistGradientBoostingClassifier`` (native NaN handling), removed columns NaN.

For each k, accuracy is averaged over ALL subsets of k removed columns, then over seeds.
Prints JSON: per method, per k, mean and SD over seeds.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from moe_common import default_seeds, emit, load, parse_seeds, setup, summary
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.impute import SimpleImputer

from tabmoe import TabularMoEClassifier, paper_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="auto-mpg")
    parser.add_argument("--seeds", default=None)
    parser.add_argument("--feature-dropout", type=float, default=0.2)
    parser.add_argument("--max-removed", type=int, default=None, help="default: n_features - 1")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    started = setup(args.threads)
    seeds = parse_seeds(args.seeds or default_seeds(args.dataset))
    methods = ["exclude", "exclude+dropout", "imputer", "hgb"]
    per_seed: dict[str, list[list[float]]] = {m: [] for m in methods}
    for seed in seeds:
        split = load(args.dataset, seed)
        X, y, X_test, y_test = split.X_train, split.y_train, split.X_ood, split.y_ood
        columns = list(X.columns)
        k_max = len(columns) - 1 if args.max_removed is None else args.max_removed
        base = {**paper_config(), "missing": "exclude", "random_state": seed, "device": "cpu"}
        exclude = TabularMoEClassifier(**base).fit(X, y)
        dropout = TabularMoEClassifier(**base, feature_dropout=args.feature_dropout).fit(X, y)
        imputer = SimpleImputer(strategy="most_frequent").fit(X)
        hgb = HistGradientBoostingClassifier(random_state=seed).fit(X, y)
        curves = {m: [] for m in methods}
        for k in range(k_max + 1):
            scores = {m: [] for m in methods}
            for removed in itertools.combinations(columns, k):
                removed = list(removed)
                kept = X_test.drop(columns=removed)
                nan = X_test.astype(float).assign(**{c: np.nan for c in removed})
                imputed = X_test.copy()
                imputed[:] = imputer.transform(nan)
                scores["exclude"].append(exclude.score(kept, y_test))
                scores["exclude+dropout"].append(dropout.score(kept, y_test))
                scores["imputer"].append(exclude.score(imputed.astype(X_test.dtypes), y_test))
                scores["hgb"].append(hgb.score(nan, y_test))
            for m in methods:
                curves[m].append(float(np.mean(scores[m])))
        for m in methods:
            per_seed[m].append(curves[m])
    table = {
        m: {str(k): summary([c[k] for c in per_seed[m]]) for k in range(len(per_seed[m][0]))}
        for m in methods
    }
    emit(
        {
            "dataset": args.dataset,
            "seeds": seeds,
            "feature_dropout": args.feature_dropout,
            "metric": "OOD accuracy, mean over all subsets of k removed columns, then over seeds",
            "accuracy_by_removed_columns": table,
        },
        started,
    )


if __name__ == "__main__":
    main()
