"""Softmax vs TanhMax gates: OOD accuracy of the paper configuration over seeds.

    python benchmarks/tanhmax.py --dataset auto-mpg            # seeds 42-51
    python benchmarks/tanhmax.py --dataset sim:1/0.9/0         # the authors' first 5 seeds

Prints JSON: per gate, OOD accuracy per seed with mean / SD, and the paired per-seed
difference tanhmax - softmax.
"""

from __future__ import annotations

import argparse

import numpy as np
from moe_common import default_seeds, emit, load, parse_seeds, setup, summary

from tabmoe import TabularMoEClassifier, paper_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="auto-mpg")
    parser.add_argument("--seeds", default=None)
    parser.add_argument("--gates", default="softmax,tanhmax")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    started = setup(args.threads)
    seeds = parse_seeds(args.seeds or default_seeds(args.dataset))
    gates = args.gates.split(",")
    acc: dict[str, list[float]] = {g: [] for g in gates}
    for seed in seeds:
        split = load(args.dataset, seed)
        for gate in gates:
            clf = TabularMoEClassifier(**{**paper_config(), "gate": gate}, random_state=seed, device="cpu")
            clf.fit(split.X_train, split.y_train)
            acc[gate].append(float(clf.score(split.X_ood, split.y_ood)))
    result = {"dataset": args.dataset, "seeds": seeds, "ood_accuracy": {g: summary(a) for g, a in acc.items()}}
    if len(gates) == 2:
        diff = np.array(acc[gates[1]]) - np.array(acc[gates[0]])
        result[f"paired_{gates[1]}_minus_{gates[0]}"] = summary(diff.tolist())
    emit(result, started)


if __name__ == "__main__":
    main()
