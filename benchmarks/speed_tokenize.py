"""Tokenising a large mixed DataFrame: ``ColumnTokenizer`` fit and transform time, output dtype.

    python benchmarks/speed_tokenize.py --rows 1000000 --columns 16

The table has four kinds of columns in turn: pandas ``category`` (50 levels), ``object``
strings (50 values), integers (1,000 values, binned) and floats with 5% NaN (binned); all
vectorised pandas / numpy, no Python loop over rows. Prints JSON: seconds to fit, seconds
to transform, rows per second of the transform, the token dtype and its bytes per row.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from tabmoe import ColumnTokenizer


def make_frame(rows: int, columns: int, seed: int = 0) -> pd.DataFrame:
    """(rows, columns) DataFrame cycling category / object / int / float-with-NaN columns."""
    rng = np.random.default_rng(seed)
    levels = np.array([f"v{i}" for i in range(50)], dtype=object)
    data = {}
    for j in range(columns):
        kind = j % 4
        if kind == 0:
            data[f"c{j}"] = pd.Categorical.from_codes(rng.integers(0, 50, rows), categories=levels)
        elif kind == 1:
            data[f"c{j}"] = levels[rng.integers(0, 50, rows)]
        elif kind == 2:
            data[f"c{j}"] = rng.integers(0, 1000, rows)
        else:
            values = rng.normal(size=rows)
            values[rng.random(rows) < 0.05] = np.nan
            data[f"c{j}"] = values
    return pd.DataFrame(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=16)
    args = parser.parse_args(argv)
    frame = make_frame(args.rows, args.columns)
    tokenizer = ColumnTokenizer()
    start = time.perf_counter()
    tokenizer.fit(frame)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    tokens = tokenizer.transform(frame)
    transform_seconds = time.perf_counter() - start
    print(json.dumps({
        "rows": args.rows, "columns": args.columns,
        "fit_seconds": round(fit_seconds, 3), "transform_seconds": round(transform_seconds, 3),
        "transform_rows_per_second": round(args.rows / transform_seconds),
        "dtype": str(tokens.dtype), "bytes_per_row": tokens.itemsize * tokens.shape[1],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
