"""tabmoe under the ``unlabeled-target`` protocol, one part at a time: the unlabeled rows,
the importance weights, both (what the harness gives it), neither, and the weights without
early stopping (how much of the harm is the weighted hold-out's choice of epoch).

    python benchmarks/adaptation_parts.py --split breast-cancer-over-50 --seed 0 \
        --openml-cache ../shared/openml-cache

The rows are the harness's (:func:`tabmoe.bench.adaptation.split_adaptation` halves the
split's OOD rows into adaptation and test rows; the weights are
:func:`~tabmoe.bench.adaptation.importance_weights`). ``TabularMoEClassifier(random_state=
seed)`` is fitted five times on the same training rows (the last with
``early_stopping=False``). Prints one JSON line per variant: ID-validation and OOD-test-half
accuracy, epochs, best epoch, and the predicted classes.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.bench.adaptation import importance_weights, split_adaptation
from tabmoe.bench.suites import load_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suite", default="openml-ood")
    parser.add_argument("--openml-cache", default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    split = load_suite(args.suite).split(args.split).make(args.seed, openml_cache=args.openml_cache)
    X, y = split.features("train"), split.train[split.target]
    X_val, y_val = split.features("validation"), np.asarray(split.parts["validation"][split.target])
    X_ood, y_ood = split.features("ood_test"), np.asarray(split.parts["ood_test"][split.target])
    adapt, test = split_adaptation(X_ood, y_ood, args.seed)
    weights = importance_weights(X, X_ood.iloc[adapt], random_state=args.seed)
    unlabeled, weighted = {"X_unlabeled": X_ood.iloc[adapt]}, {"sample_weight": weights.weights}
    variants = {  # name: (estimator parameters, fit parameters)
        "neither": ({}, {}),
        "unlabeled_rows": ({}, unlabeled),
        "importance_weights": ({}, weighted),
        "both": ({}, {**unlabeled, **weighted}),
        "importance_weights_no_early_stopping": ({"early_stopping": False}, weighted),
    }
    for name, (params, fit_params) in variants.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = TabularMoEClassifier(random_state=args.seed, **params).fit(X, y, **fit_params)
        pred = est.predict(X_ood.iloc[test])
        classes, counts = np.unique(pred, return_counts=True)
        print(json.dumps({
            "split": args.split, "seed": args.seed, "variant": name,
            "id_validation": round(float(np.mean(est.predict(X_val) == y_val)), 4),
            "ood_test_half": round(float(np.mean(pred == y_ood[test])), 4),
            "epochs": est.n_iter_, "best_epoch": est.best_epoch_,
            "predicted": {str(c): int(n) for c, n in zip(classes, counts, strict=True)},
            "weights": weights.summary() if "sample_weight" in fit_params else None,
        }), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
