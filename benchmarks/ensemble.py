"""n_members: cost (seconds per epoch) and effect (OOD accuracy mean / SD over seeds).

    python benchmarks/ensemble.py --dataset auto-mpg --members 5     # seeds 42-51

Per seed, the single model and the ensemble are fitted one after the other in the same
process (same data, same seed), so their epoch times are measured side by side. Seconds
per epoch come from ``history_`` (median over epochs); the ratio is per seed, then summarised.
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
    parser.add_argument("--members", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    started = setup(args.threads)
    seeds = parse_seeds(args.seeds or default_seeds(args.dataset))
    sizes = (1, args.members)
    acc = {m: [] for m in sizes}
    epoch_seconds = {m: [] for m in sizes}
    for seed in seeds:
        s = load(args.dataset, seed)
        for m in sizes:
            clf = TabularMoEClassifier(**paper_config(), n_members=m, random_state=seed, device="cpu")
            clf.fit(s.X_train, s.y_train)
            acc[m].append(float(clf.score(s.X_ood, s.y_ood)))
            epoch_seconds[m].append(float(np.median([h["seconds"] for h in clf.history_])))
    ratio = np.divide(epoch_seconds[args.members], epoch_seconds[1])
    emit(
        {
            "dataset": args.dataset,
            "seeds": seeds,
            "ood_accuracy": {f"members_{m}": summary(acc[m]) for m in sizes},
            "seconds_per_epoch": {f"members_{m}": summary(epoch_seconds[m]) for m in sizes},
            "epoch_time_ratio": summary(ratio.tolist()),
            "torch_threads": args.threads,
        },
        started,
    )


if __name__ == "__main__":
    main()
