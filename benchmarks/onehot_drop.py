"""Does the one-hot references' ``drop="first"`` (the paper's) decide logistic regression's
OOD accuracy? With it a category unseen at fit reads as each column's first level (all
zeros); with ``drop=None`` it reads as no level. Both fixed-budget runs of every openml-ood
split and seed, through the harness's own ``execute`` (same rows, same seeding)::

    python benchmarks/onehot_drop.py --openml-cache <copy of ../shared/openml-cache> --seeds 0-2

Prints one JSON line per (split, seed) and, per scored part, both means, the paired mean
difference (none minus first) and W/T/L (ties within 0.005).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from research import wtl  # rounded: a difference of exactly the tie width is a tie

from tabmoe.bench.execute import execute
from tabmoe.bench.plan import RunSpec, parse_seed_list
from tabmoe.bench.suites import load_suite

PARTS = ("validation", "id_test", "ood_test")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openml-cache", default=None)
    parser.add_argument("--seeds", default="0-2")
    parser.add_argument("--model", default="logistic_regression")
    args = parser.parse_args(argv)
    suite = load_suite("openml-ood")
    rows = []
    for split in suite.splits:
        for seed in parse_seed_list(args.seeds):
            row = {"split": split.name, "seed": seed}
            for name, fixed in (("first", ()), ("none", (("drop", None),))):
                record = execute(RunSpec(suite.name, split, args.model, "untuned", seed, fixed=fixed,
                                         openml_cache=args.openml_cache, threads=1))
                row[name] = {part: record[part]["accuracy"] for part in PARTS}
            rows.append(row)
            print(json.dumps(row), flush=True)
    for part in PARTS:
        first = np.array([r["first"][part] for r in rows])
        none = np.array([r["none"][part] for r in rows])
        d = none - first
        print(f"{part}: first {first.mean():.4f}, none {none.mean():.4f}, diff {d.mean():+.4f}, "
              f"W/T/L {wtl(d)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
