"""Peak memory of ``predict_proba`` with many classes: log probabilities filled a batch of
rows at a time and exponentiated in place (now) against the whole float64 cast, its
``log_softmax`` and ``np.exp``'s new array (before), alternately in one process, on the same
model and rows; the probabilities are checked equal, bit for bit.

Fits tabmoe (1 epoch, one thread) on 20,000 rows of an 8-string + 8-float table labelled
with ``--classes`` classes, then predicts ``--rows`` new rows with each reading. Each figure
is the peak RSS of the call above the RSS when it started (``memory.measure``; glibc mmaps
every block of 1 MiB or more, so the RSS follows the live allocations), beside the size of
the probabilities (8 bytes x classes a row)::

    python benchmarks/memory_proba.py [--rows 200000] [--classes 500] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import torch
from memory import measure, set_mmap_threshold

from tabmoe import TabularMoEClassifier
from tabmoe.nn._base import TorchClassifierMixin

MIB = 2**20


def former_log_proba(self, X):
    """``predict_log_proba`` as it was: all rows' logits cast to float64, then log_softmax."""
    logits = torch.from_numpy(self._label_logits(X))
    return torch.log_softmax(logits.double(), dim=1).numpy()


def former_proba(self, X):
    return np.exp(self.predict_log_proba(X))


@contextmanager
def former_reading():
    current = TorchClassifierMixin.predict_log_proba, TorchClassifierMixin.predict_proba
    TorchClassifierMixin.predict_log_proba, TorchClassifierMixin.predict_proba = former_log_proba, former_proba
    try:
        yield
    finally:
        TorchClassifierMixin.predict_log_proba, TorchClassifierMixin.predict_proba = current


def table(n_rows: int, n_classes: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {f"c{j}": rng.choice(["a", "b", "c", "d"], n_rows).astype(object) for j in range(8)}
        | {f"x{j}": rng.normal(size=n_rows) for j in range(8)}
    )
    return X, rng.integers(0, n_classes, n_rows)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--classes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    set_mmap_threshold(MIB)
    torch.set_num_threads(1)
    X, y = table(20_000, args.classes, seed=0)
    X_new, _ = table(args.rows, args.classes, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the random labels' fit says nothing about memory
        model = TabularMoEClassifier(max_epochs=1, random_state=0).fit(X, y)
    peaks: dict[str, list[float]] = {"before": [], "now": []}
    outputs = {}
    for _ in range(args.repeats):
        with former_reading():
            outputs["before"], figures = measure(lambda: model.predict_proba(X_new))
        peaks["before"].append(figures["step_peak_above_before_mib"])
        outputs["now"], figures = measure(lambda: model.predict_proba(X_new))
        peaks["now"].append(figures["step_peak_above_before_mib"])
    np.testing.assert_array_equal(outputs["now"], outputs["before"])
    report = {"rows": args.rows, "classes": args.classes, "output_mib": round(outputs["now"].nbytes / MIB),
              "peak_mib": peaks}
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
