"""OOD accuracy of the paper configuration on the auto-mpg origin split over seeds.

    python benchmarks/auto_mpg_paper.py --seeds 42-51 [--set key=value ...]

Prints one JSON object: per-seed OOD accuracy, mean, SD (population, as in the paper's
tables, and sample), fit seconds. ``--set`` overrides paper_config() entries
(e.g. ``--set vocabulary=per_column``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from research_args import seeds_arg

from tabmoe import TabularMoEClassifier, paper_config
from tabmoe.data import auto_mpg_origin_split


def parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def key_value(text: str) -> tuple[str, object]:
    """``--set KEY=VALUE``; argparse names one without ``=`` or a key."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (e.g. vocabulary=per_column)")
    return key, parse_value(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=seeds_arg, default="42-51")
    parser.add_argument("--set", type=key_value, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = paper_config()
    config.update(args.set)
    split = auto_mpg_origin_split()
    accs, seconds = [], []
    for seed in args.seeds:
        start = time.perf_counter()
        clf = TabularMoEClassifier(**config, random_state=seed, device="cpu")
        clf.fit(split.X_train, split.y_train)
        seconds.append(time.perf_counter() - start)
        accs.append(float(clf.score(split.X_test, split.y_test)))
    print(json.dumps({
        "config": config,
        "seeds": args.seeds,
        "ood_accuracy": accs,
        "mean": float(np.mean(accs)),
        "sd_population": float(np.std(accs)),
        "sd_sample": float(np.std(accs, ddof=1)) if len(accs) > 1 else None,
        "fit_seconds_mean": float(np.mean(seconds)),
    }))


if __name__ == "__main__":
    main()
