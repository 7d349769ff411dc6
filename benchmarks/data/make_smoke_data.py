"""Rebuild car-smoke.csv: a 600-row class-stratified subsample of OpenML 40975 (car).

Run from the repository root:

    python benchmarks/data/make_smoke_data.py --openml-cache ../shared/openml-cache

The subsample is seeded (``random_state=0``), so the output is byte-identical on rerun.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sklearn.model_selection import train_test_split

from tabmoe.data.openml import load_openml

N_ROWS = 600
# shipped with the smoke suite as package data (benchmarks/data/car-smoke.csv links to it)
OUT = Path(__file__).resolve().parents[2] / "tabmoe" / "bench" / "suites" / "data" / "car-smoke.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openml-cache", required=True, help="openml-python cache root")
    args = parser.parse_args()
    table = load_openml(40975, cache_dir=args.openml_cache)
    rows, _ = train_test_split(
        table.data.index, train_size=N_ROWS, stratify=table.y, random_state=0
    )
    table.data.loc[sorted(rows)].to_csv(OUT, index=False)
    print(f"wrote {OUT} ({N_ROWS} rows)")


if __name__ == "__main__":
    main()
