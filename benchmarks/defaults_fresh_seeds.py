"""tabmoe's defaults against a reference model's, out of distribution, on fresh seeds.

The committed openml-ood `defaults` runs cover seeds 0-2. The research records of
`TabularMoEClassifier()` on every openml-ood split, seeds 0-5, on the harness's rows, carry
tabmoe's side: study 37's `binfix` on the five splits with numeric columns (the defaults on
today's tokenizer) and study 35's `def35` on the nine others (the same fits there). The
reference model is fitted here by the harness's own ``execute`` under the `defaults`
protocol on the same rows and seeds::

    python benchmarks/defaults_fresh_seeds.py --openml-cache <copy of ../shared/openml-cache>

Prints, for seeds 0-2, 3-5 and 0-5: both mean OOD accuracies, the paired mean difference
(tabmoe minus the reference) with W/T/L (ties within 0.005), and both mean ID-validation
accuracies.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from research import wtl  # rounded: a difference of exactly the tie width is a tie

from tabmoe.bench.execute import execute
from tabmoe.bench.plan import RunSpec
from tabmoe.bench.suites import load_suite

RESEARCH = Path(__file__).parent / "results" / "research"
#: (file, variant), the later replacing the earlier on the same (split, seed)
RECORDS = (("r35-ensemble.jsonl", "def35"), ("r37-binfix.jsonl", "binfix"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openml-cache", default=None)
    parser.add_argument("--model", default="logistic_regression")
    args = parser.parse_args(argv)
    tabmoe = {}
    for name, variant in RECORDS:
        for line in (RESEARCH / name).read_text().splitlines():
            record = json.loads(line)
            if record["variant"] == variant:
                tabmoe[(record["split"], record["seed"])] = record
    suite = load_suite("openml-ood")
    rows = []  # (seed, reference OOD, tabmoe OOD, reference ID validation, tabmoe ID validation)
    for split in suite.splits:
        for seed in range(6):
            ref = execute(RunSpec(suite.name, split, args.model, "defaults", seed,
                                  openml_cache=args.openml_cache, threads=1))
            ours = tabmoe[(split.name, seed)]
            rows.append((seed, ref["ood_test"]["accuracy"], ours["ood_test"],
                         ref["validation"]["accuracy"], ours["validation"]))
    for low, high in ((0, 2), (3, 5), (0, 5)):
        part = np.array([r for r in rows if low <= r[0] <= high])
        d = part[:, 2] - part[:, 1]
        print(f"seeds {low}-{high}: OOD {args.model} {part[:, 1].mean():.4f}, tabmoe {part[:, 2].mean():.4f}, "
              f"diff {d.mean():+.4f} (W/T/L {wtl(d)}); "
              f"ID validation {part[:, 3].mean():.4f} vs {part[:, 4].mean():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
