"""OOD accuracy of tabmoe variants on a suite's splits, paired with the suite's own tabmoe runs.

    python benchmarks/ood_variants.py --variant feature_dropout=0.2,missing=exclude --seeds 0 \
        --openml-cache ../shared/openml-cache --out benchmarks/results/openml-ood/variants.jsonl

Every (split, seed) is made exactly as ``tabmoe-bench run`` makes it, and the variant is the
suite's tabmoe (paper defaults + the suite's fixed parameters, ``random_state = seed``) with
the ``--variant`` parameters changed. The baseline is the committed ``fixed-budget`` record of
the same run (``--results``), so the paired difference compares the same rows and seed; with
``--refit-baseline`` the baseline is refitted first and must reproduce its record (a
determinism check). Prints one JSON line per (split, seed) and a summary: mean OOD accuracy of
both, the mean paired difference, and splits won / lost.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import numpy as np

from tabmoe.bench.execute import execute
from tabmoe.bench.plan import RunSpec, parse_seed_list
from tabmoe.bench.suites import load_suite


def parse_variant(text: str) -> dict:
    """``"a=1,b=x"`` -> ``{"a": 1, "b": "x"}`` (values as Python literals where they parse)."""
    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def ood_accuracy(suite: str, split, seed: int, params: dict, args) -> tuple[float, float]:
    """(OOD test accuracy, fit seconds) of the fixed-budget tabmoe run with ``params`` fixed,
    run by the harness's own :func:`~tabmoe.bench.execute.execute` (same rows, same seeding)."""
    spec = RunSpec(suite, split, "tabmoe", "fixed-budget", seed, fixed=tuple(sorted(params.items())),
                   openml_cache=args.openml_cache, threads=args.threads)
    record = execute(spec)
    return record["ood_test"]["accuracy"], record["fit_seconds"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="openml-ood")
    parser.add_argument("--variant", required=True, help="comma-separated key=value estimator parameters")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--splits", default=None, help="comma-separated split names (default: all)")
    parser.add_argument("--results", default=None, help="results folder of the suite's runs")
    parser.add_argument("--openml-cache", default=None)
    parser.add_argument("--refit-baseline", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="append the JSON lines to this file")
    args = parser.parse_args(argv)

    suite = load_suite(args.suite)
    folder = Path(args.results or Path(__file__).parent / "results" / suite.name)
    results = folder / "runs" / suite.name
    fixed = suite.models.get("tabmoe", {})
    variant = parse_variant(args.variant)
    names = args.splits.split(",") if args.splits else [s.name for s in suite.splits]
    lines = []
    for name in names:
        split = suite.split(name)
        for seed in parse_seed_list(args.seeds):
            record_path = results / name / "tabmoe" / f"fixed-budget-seed{seed}.json"
            if not record_path.is_file():
                old = record_path.with_name(f"untuned-seed{seed}.json")  # the protocol's former name
                hint = (f" (it holds {old.name}, the protocol's former name: `tabmoe-bench rename-protocol "
                        f"{folder}` renames it)" if old.is_file() else "")
                print(f"skip {name} seed {seed}: no baseline record {record_path}{hint}", file=sys.stderr)
                continue
            record = json.loads(record_path.read_text())
            line = {"split": name, "seed": seed, "variant": variant,
                    "baseline_ood_accuracy": record["ood_test"]["accuracy"]}
            if args.refit_baseline:
                line["baseline_refit_ood_accuracy"], _ = ood_accuracy(suite.name, split, seed, fixed, args)
            line["variant_ood_accuracy"], line["variant_fit_seconds"] = ood_accuracy(
                suite.name, split, seed, {**fixed, **variant}, args
            )
            lines.append(line)
            print(json.dumps(line), flush=True)
    if not lines:
        return 1
    base = np.array([x["baseline_ood_accuracy"] for x in lines])
    var = np.array([x["variant_ood_accuracy"] for x in lines])
    diff = var - base
    summary = {
        "variant": variant, "runs": len(lines), "baseline_mean": base.mean(), "variant_mean": var.mean(),
        "paired_diff_mean": diff.mean(), "paired_diff_sd": diff.std(),
        "wins": int((diff > 0.005).sum()), "ties": int((abs(diff) <= 0.005).sum()), "losses": int((diff < -0.005).sum()),
        "command": "python benchmarks/ood_variants.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "a", encoding="utf8") as fh:
            for line in [*lines, summary]:
                fh.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
