"""Should FT-Transformer, TabTransformer and TabM early-stop by default? Pairs two sets of
committed harness records on the same openml-ood (split, seed), so on the same rows:

* ``benchmarks/results/baseline-early-stopping/runs``: the ``defaults`` protocol as shipped
  before the change (``early_stopping="auto"``: off below 10,000 rows, so 200 epochs), run
  on a lent H200 (torch 2.11) where time allowed, five breast-cancer runs on this CPU;
* ``benchmarks/results/openml-ood/runs``: the same models' ``fixed-budget`` runs (early
  stopping on a 10% hold-out, patience 10, at most 100 epochs, batches of 128), CPU.

::

    python benchmarks/baseline_early_stopping.py

Prints, per model, the pairs, both means of ID-validation, ID-test and OOD-test accuracy,
the paired mean difference (early stopping minus "auto") with its SD, and W/T/L (ties
within 0.005). The default is chosen on ID validation, as tabmoe's are. A pair whose two
records were made from different definitions of the split (``config["split"]``, e.g.
car-buying-vhigh's fixed-budget runs redone on 2026-12-05 with the kept ``buying``
column, which the "auto" runs never saw) or on different rows (the row digests, where both
records carry one) is left out, and named.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from research import wtl  # rounded: a difference of exactly the tie width is a tie

ROOT = Path(__file__).resolve().parent / "results"
MODELS = ("ft_transformer", "tab_transformer", "tabm")
PARTS = ("validation", "id_test", "ood_test")


def load(folder: Path, protocol: str) -> dict[tuple[str, str, int], dict]:
    """Records of ``protocol`` for MODELS, keyed by (model, split, seed)."""
    records = {}
    for path in sorted(folder.glob(f"openml-ood/*/*/{protocol}-seed*.json")):
        record = json.loads(path.read_text())
        if record["model"] in MODELS:
            records[record["model"], record["split"], record["seed"]] = record
    return records


def same_rows(a: dict, b: dict) -> bool:
    """Whether two records of one (split, seed) were made from the same split definition
    and, where both carry a row digest, on the same rows: only then are they a pair."""
    if a.get("config", {}).get("split") != b.get("config", {}).get("split"):
        return False
    return a.get("rows") is None or b.get("rows") is None or a["rows"] == b["rows"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auto", type=Path, default=ROOT / "baseline-early-stopping" / "runs")
    parser.add_argument("--stopped", type=Path, default=ROOT / "openml-ood" / "runs")
    args = parser.parse_args(argv)
    auto, stopped = load(args.auto, "defaults"), load(args.stopped, "fixed-budget")
    for model in MODELS:
        common = sorted(k for k in auto if k[0] == model and k in stopped)
        keys = [k for k in common if same_rows(auto[k], stopped[k])]
        splits = sorted({k[1] for k in keys})
        print(f"{model}: {len(keys)} pairs on {len(splits)} splits ({', '.join(splits)})")
        if unpaired := [f"{k[1]} seed {k[2]}" for k in common if k not in keys]:
            print(f"  left out, the two records made from different split definitions or rows: "
                  f"{', '.join(unpaired)} (rerun those runs to pair them)")
        if not keys:
            continue
        for part in PARTS:
            a = np.array([auto[k][part]["accuracy"] for k in keys])
            s = np.array([stopped[k][part]["accuracy"] for k in keys])
            d = s - a
            print(f"  {part:<10} auto {a.mean():.4f}  early stopping {s.mean():.4f}  "
                  f"diff {d.mean():+.4f} (SD {d.std(ddof=1):.4f})  W/T/L {wtl(d)}")
        fit_a = np.mean([auto[k]["fit_seconds"] for k in keys])
        fit_s = np.mean([stopped[k]["fit_seconds"] for k in keys])
        print(f"  fit seconds: auto {fit_a:.1f} (mostly GPU), early stopping {fit_s:.1f} (CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
