"""Prediction on a wide table: tokenized a batch at a time vs in chunks of whole batches.

A default tabmoe model fitted on 500 rows of a 300-column mixed table (150 float, 150
string columns) predicts 30,000 rows, one thread, both ways alternately in one process
(``tabmoe.nn._base.PREDICT_TOKENIZE_CELLS`` = 1 gives the former per-batch tokenizing);
the probabilities are checked equal. Prints the seconds and the median ratio::

    python benchmarks/speed_predict_wide.py [--rows 30000] [--columns 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import torch

import tabmoe.nn._base as base
from tabmoe import TabularMoEClassifier


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        f"c{j}": rng.normal(size=args.rows) if j % 2 else rng.choice([f"v{k}" for k in range(8)], args.rows)
        for j in range(args.columns)
    })
    y = (X["c1"] > 0).to_numpy()
    model = TabularMoEClassifier(max_epochs=1, early_stopping=False, random_state=0, n_jobs=1)
    model.fit(X.iloc[:500], y[:500])
    chunked_cells = base.PREDICT_TOKENIZE_CELLS
    seconds: dict[str, list[float]] = {"per batch": [], "chunked": []}
    outputs = {}
    for _ in range(args.repeats):
        for name, cells in (("per batch", 1), ("chunked", chunked_cells)):
            base.PREDICT_TOKENIZE_CELLS = cells
            start = time.perf_counter()
            outputs[name] = model.predict_proba(X)
            seconds[name].append(time.perf_counter() - start)
    base.PREDICT_TOKENIZE_CELLS = chunked_cells
    assert np.array_equal(outputs["per batch"], outputs["chunked"]), "the two ways must predict alike"
    for name, values in seconds.items():
        print(f"{name:9s} predict_proba s: {', '.join(f'{v:.2f}' for v in values)}")
    ratio = np.median(seconds["per batch"]) / np.median(seconds["chunked"])
    print(f"per batch / chunked (median): {ratio:.2f}x; probabilities equal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
