"""Does a search beat the defaults when the defaults are one of its candidates?

The `tuned` protocol queues nothing, so its best trial is chosen among 10 sampled settings
only and can fall below the model's `defaults` run. This reads the committed openml-ood
records (no fitting) and, for every model with both `defaults` and `tuned` runs on the same
(split, seed), keeps the one with the higher ID-validation accuracy (the `defaults` run on
a tie, as a study that queued the defaults first would keep it): a search of the defaults
plus the `tuned` run's trials (10, or fewer where the 600 s budget ran out: TabM on the four
largest splits), decided on ID validation only. Prints, per model, the mean ID-test and OOD
accuracy of the defaults and of that choice, the paired difference with W/T/L (ties within
0.005) and how often the search's best was kept::

    python benchmarks/tuned_or_defaults.py [--results benchmarks/results/openml-ood]

The choice is not exactly a study that enqueued the defaults: its trials ran with the
suite's fixed parameters where the `defaults` runs did not (tabmoe: batches of 128 rows,
not rows // 16; FT-Transformer: at most 100 epochs, not 200; TabM: both), its sampler drew
10 settings, not 9, and a model's two runs may come from other code or CPUs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from research import wtl  # rounded: a difference of exactly the tie width is a tie

RESULTS = Path(__file__).parent / "results" / "openml-ood"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--tie", type=float, default=0.005)
    args = parser.parse_args(argv)
    pairs: dict[str, list[tuple[dict, dict]]] = {}
    for path in sorted((args.results / "runs").rglob("tuned-seed*.json")):
        defaults = path.with_name(path.name.replace("tuned", "defaults"))
        if defaults.exists():
            tuned = json.loads(path.read_text())
            pairs.setdefault(tuned["model"], []).append((json.loads(defaults.read_text()), tuned))
    for model, runs in sorted(pairs.items()):
        kept = [t if t["search"]["best_validation_score"] > d["validation"]["accuracy"] else d for d, t in runs]
        line = {"model": model, "pairs": len(runs), "search_kept": sum(k is t for k, (_, t) in zip(kept, runs, strict=True))}
        for part in ("id_test", "ood_test"):
            base = np.array([d[part]["accuracy"] for d, _ in runs])
            chosen = np.array([k[part]["accuracy"] for k in kept])
            diff = chosen - base
            line[part] = {
                "defaults": round(float(base.mean()), 4),
                "chosen": round(float(chosen.mean()), 4),
                "diff": round(float(diff.mean()), 4),
                "wtl": [int(n) for n in wtl(diff, args.tie).split("/")],
            }
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
