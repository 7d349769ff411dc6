"""Unlabeled target rows: adapt() and fit(X_unlabeled=) vs their controls, ID and OOD accuracy.

    python benchmarks/adapt.py --dataset auto-mpg        # seeds 42-51
    python benchmarks/adapt.py --dataset sim:1/0.9/0     # the authors' first 5 seeds

Per seed, ``--id-fraction`` (0.2) of the training rows (auto-mpg: US cars) is held out,
stratified, as the ID test set; the OOD test rows are the target domain. Variants:

* ``base``: ``TabularMoEClassifier(**paper_config())`` fitted on the training rows.
* ``adapted``: ``base`` + ``adapt(X_ood, max_epochs=E)`` — the stored labelled training
  rows and the unlabeled OOD rows shuffled together, masked-feature + label objective.
* ``control``: ``base`` + ``adapt(None, ...)`` on the training rows alone, with the epochs
  chosen so that it takes (as nearly as whole epochs allow) the same number of steps.
* ``semi``: a fresh fit with ``fit(X_train, y_train, X_unlabeled=X_ood)``; compare to ``base``.

Prints JSON: ID and OOD accuracy per variant (mean / SD over seeds, per-seed values),
paired differences adapted - control and semi - base, and the steps taken.
"""

from __future__ import annotations

import argparse
import copy
import math

import numpy as np
from moe_common import default_seeds, emit, load, parse_seeds, setup, summary

from tabmoe import TabularMoEClassifier, paper_config

VARIANTS = ("base", "control", "adapted", "semi")


def steps_per_epoch(clf: TabularMoEClassifier, n_rows: int) -> int:
    return math.ceil(n_rows / clf.rows_per_batch(n_rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="auto-mpg")
    parser.add_argument("--seeds", default=None)
    parser.add_argument("--id-fraction", type=float, default=0.2)
    parser.add_argument("--epochs", type=int, default=20, help="adapt epochs over train + target")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    started = setup(args.threads)
    seeds = parse_seeds(args.seeds or default_seeds(args.dataset))
    acc = {split: {v: [] for v in VARIANTS} for split in ("id", "ood")}
    steps = {"adapted": [], "control": []}
    for seed in seeds:
        s = load(args.dataset, seed, args.id_fraction)
        config = {**paper_config(), "random_state": seed, "device": "cpu"}
        base = TabularMoEClassifier(**config).fit(s.X_train, s.y_train)
        n_train = len(base.train_sample_tokens_)
        adapt_steps = args.epochs * steps_per_epoch(base, n_train + len(s.X_ood))
        control_epochs = max(1, round(adapt_steps / steps_per_epoch(base, n_train)))
        models = {
            "base": base,
            "adapted": copy.deepcopy(base).adapt(s.X_ood, max_epochs=args.epochs),
            "control": copy.deepcopy(base).adapt(None, max_epochs=control_epochs),
            "semi": TabularMoEClassifier(**config).fit(s.X_train, s.y_train, X_unlabeled=s.X_ood),
        }
        steps["adapted"].append(adapt_steps)
        steps["control"].append(control_epochs * steps_per_epoch(base, n_train))
        for name, model in models.items():
            acc["id"][name].append(float(model.score(s.X_id, s.y_id)))
            acc["ood"][name].append(float(model.score(s.X_ood, s.y_ood)))
    result = {
        "dataset": args.dataset,
        "seeds": seeds,
        "id_fraction": args.id_fraction,
        "adapt_epochs": args.epochs,
        "steps": {k: sorted(set(v)) for k, v in steps.items()},
    }
    for split in ("id", "ood"):
        result[f"{split}_accuracy"] = {v: summary(acc[split][v]) for v in VARIANTS}
        result[f"{split}_paired"] = {
            "adapted_minus_control": summary(np.subtract(acc[split]["adapted"], acc[split]["control"]).tolist()),
            "semi_minus_base": summary(np.subtract(acc[split]["semi"], acc[split]["base"]).tolist()),
        }
    emit(result, started)


if __name__ == "__main__":
    main()
