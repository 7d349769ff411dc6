"""How large the default fit's gradient steps are: the L2 norm of every step's gradient.

    python benchmarks/grad_norms.py [--csv benchmarks/data/car-smoke.csv --target class]

Fits ``TabularMoEClassifier(random_state=0, max_grad_norm=1e9)`` (a norm no step reaches, so
the fit is the default one) with torch's ``clip_grad_norm_`` wrapped to record the norm it
returns, one thread, and prints the percentiles and the share of steps above 1.0 and 0.1
(the norms of study 39, docs/research.md#study-39).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from torch import nn

from tabmoe import TabularMoEClassifier
from tabmoe.bench import limited_threads

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=ROOT / "benchmarks" / "data" / "car-smoke.csv")
    parser.add_argument("--target", default="class")
    args = parser.parse_args(argv)
    data = pd.read_csv(args.csv, dtype="category")
    X, y = data.drop(columns=args.target), data[args.target]
    norms, clip = [], nn.utils.clip_grad_norm_

    def recording(parameters, max_norm, *rest, **kwargs):
        norm = clip(parameters, max_norm, *rest, **kwargs)
        norms.append(float(norm))
        return norm

    nn.utils.clip_grad_norm_ = recording
    try:
        with limited_threads(1):
            clf = TabularMoEClassifier(random_state=0, max_grad_norm=1e9).fit(X, y)
    finally:
        nn.utils.clip_grad_norm_ = clip
    a = np.array(norms)
    print(json.dumps({"data": args.csv.name, "steps": len(a), "epochs": clf.n_iter_,
                      "percentiles": dict(zip(["5", "25", "50", "75", "95", "99"],
                                              np.percentile(a, [5, 25, 50, 75, 95, 99]).round(3).tolist(), strict=True)),
                      "share_above_1.0": round(float((a > 1.0).mean()), 4),
                      "share_above_0.1": round(float((a > 0.1).mean()), 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
