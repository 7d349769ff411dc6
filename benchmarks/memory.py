"""Peak memory (RSS) of fit and predict on large tables; prints one JSON object.

Scenarios (issue 9, item 4), each meant to run in its own process:

* ``fit-ids``: ``--rows`` rows with a user-id column of ``--rows`` distinct values (a
  10^6-category column at 10^6 rows), a 5-value column, a numeric column.
* ``fit-wide``: ``--rows`` x ``--columns`` (half 10-value categorical, half float).
* ``predict``: fit on 20,000 rows of the wide table (1 epoch), then ``predict_proba`` on
  ``--rows`` rows; the peak is measured over the predict call only.

``--max-batches K`` stops ``fit`` after K training batches (K optimizer steps):
memory is in steady state after the first step (weights, gradients, Adam state and one
batch's activations all allocated), so the peak of a few batches is the peak of the epoch
up to allocator noise (10^6 x 50, batch 4096, peak above the start, measured before
``release_free_memory`` was added: 1,662 MiB after 5 batches, 1,760 MiB for the full epoch of
19 minutes on a shared CPU); the end-of-epoch validation computes the label head only.

Memory: ``step_peak_mib`` is the peak RSS during the measured step (fit or predict), read
from /proc/self/status VmHWM after resetting it through /proc/self/clear_refs (Linux);
``before_mib`` the RSS when the step started (the input table included; garbage collected
and free heap pages returned to the OS first, so that the step cannot reuse them unseen);
``process_peak_mib`` is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end.

``--mmap-threshold BYTES`` (glibc's ``mallopt(M_MMAP_THRESHOLD)``, set when the script
starts): every allocation of at least BYTES is mmapped and unmapped on free, so the peak RSS
follows the live allocations. By default glibc puts blocks under its dynamic threshold (up to
32 MiB: predict's 2^23-float batch tensors are just under it) in its heap, which keeps them
resident after free: the predict figures then sit ~200 MiB above the live tensors and move
by ~50 MiB from run to run (10^5 rows: 290-341 MiB; 112-116 MiB with a 1 MiB threshold).
The predict scenario reports its batch, network and classes (``batch_rows``, ``network``,
``n_classes``), from which tests/test_resources.py computes its bound.

    python benchmarks/memory.py fit-ids --rows 1000000 --min-frequency 2
    python benchmarks/memory.py fit-wide --rows 1000000 --columns 50 --batch-size 4096
    python benchmarks/memory.py predict --rows 1000000 --columns 50 [--mmap-threshold 1048576]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import resource
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.nn.objective import MaskedFeatureObjective

STATUS = Path("/proc/self/status")


def _status_mib(field: str) -> float | None:
    if not STATUS.exists():
        return None
    for line in STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return None


def set_mmap_threshold(n_bytes: int) -> bool:
    """glibc ``mallopt(M_MMAP_THRESHOLD, n_bytes)``; False where there is no such call."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(-3, n_bytes))  # M_MMAP_THRESHOLD = -3
    except (OSError, AttributeError):
        return False


def reset_peak() -> bool:
    """Reset the peak-RSS counter (VmHWM); False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def process_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def release_free_memory() -> None:
    """Collect garbage and hand free heap pages back to the OS (glibc), so that the step's
    peak is not hidden by memory the process freed earlier but still holds."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def measure(step) -> tuple[object, dict]:
    """Run ``step()``; its time and peak RSS (MiB)."""
    release_free_memory()
    resettable = reset_peak()
    before = _status_mib("VmRSS")
    start = time.perf_counter()
    result = step()
    seconds = time.perf_counter() - start
    peak = _status_mib("VmHWM") if resettable else None
    return result, {
        "seconds": round(seconds, 1),
        "before_mib": None if before is None else round(before),
        "step_peak_mib": None if peak is None else round(peak),
        "step_peak_above_before_mib": None if peak is None else round(peak - before),
    }


class EnoughBatches(Exception):
    """Raised by the training loss after ``--max-batches`` batches, with the network's
    vocabulary size, depth and masking (a fit that raises leaves the estimator unfitted,
    tokenizer included)."""

    def __init__(self, n_tokens: int | None, n_layers: int | None = None, masking: str | None = None):
        super().__init__(n_tokens)
        self.n_tokens, self.n_layers, self.masking = n_tokens, n_layers, masking


@contextlib.contextmanager
def stop_after_batches(limit: int | None):
    """Make the training objective raise EnoughBatches on batch ``limit + 1``."""
    if limit is None:
        yield
        return
    original, seen = MaskedFeatureObjective.__call__, 0

    def counted(self, model, batch):
        nonlocal seen
        if seen == limit:
            # TabularMoE's vocabulary (the tokenizer's n_tokens_), depth and masking
            raise EnoughBatches(model.heads.n_tokens, model.n_layers, self.masking)
        seen += 1
        return original(self, model, batch)

    MaskedFeatureObjective.__call__ = counted
    try:
        yield
    finally:
        MaskedFeatureObjective.__call__ = original


def fit_or_stop(clf: TabularMoEClassifier, X, y, limit: int | None) -> dict:
    """``clf.fit(X, y)``, or stopped after ``limit`` batches; the vocabulary size, and the
    network's depth and masking (``n_layers="auto"`` gives two layers above 10,000 rows)."""
    with stop_after_batches(limit):
        try:
            clf.fit(X, y)
        except EnoughBatches as stop:
            return {"n_tokens": stop.n_tokens, "n_layers": stop.n_layers, "masking": stop.masking}
    return {"n_tokens": int(clf.tokenizer_.n_tokens_), "n_layers": clf.n_layers_, "masking": clf._masking()}


def ids_table(n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    plan = rng.integers(0, 5, n_rows)
    X = pd.DataFrame(
        {
            "user": pd.Series([f"u{i}" for i in rng.permutation(n_rows)], dtype=object),
            "plan": pd.Categorical.from_codes(plan, ["free", "basic", "pro", "team", "corp"]),
            "age": rng.normal(40, 10, n_rows),
        }
    )
    y = (plan >= 2) ^ (rng.random(n_rows) < 0.1)
    return X, y.astype(np.int64)


def wide_table(n_rows: int, n_columns: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    levels = [f"v{k}" for k in range(10)]
    columns = {}
    for j in range(n_columns):
        if j % 2 == 0:
            columns[f"c{j}"] = pd.Categorical.from_codes(rng.integers(0, 10, n_rows), levels)
        else:
            columns[f"x{j}"] = rng.normal(size=n_rows)
    X = pd.DataFrame(columns)
    logit = (X["c0"].cat.codes.to_numpy() >= 5) + X[X.columns[1]].to_numpy()
    y = (logit + rng.normal(scale=0.5, size=n_rows) > 0.5).astype(np.int64)
    return X, y


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=["fit-ids", "fit-wide", "predict"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--min-frequency", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-batches", type=int, default=None)
    parser.add_argument("--mmap-threshold", type=int, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    mmap_threshold = args.mmap_threshold
    if mmap_threshold is not None and not set_mmap_threshold(mmap_threshold):
        mmap_threshold = None  # not glibc: the report says so
    caught = warnings.catch_warnings(record=True)
    messages = caught.__enter__()
    warnings.simplefilter("always", UserWarning)
    params = dict(
        max_epochs=args.epochs,
        batch_size=args.batch_size,
        min_frequency=args.min_frequency,
        device="cpu",
        random_state=0,
    )
    report: dict = {"scenario": args.scenario, "rows": args.rows, **params}
    report["mmap_threshold"] = mmap_threshold
    if args.scenario == "predict":
        report["columns"] = args.columns
        X, y = wide_table(20_000, args.columns, seed=1)
        clf = TabularMoEClassifier(**params).fit(X, y)
        del X, y
        X, _ = wide_table(args.rows, args.columns)
        proba, figures = measure(lambda: clf.predict_proba(X))
        report["output_mib"] = round(proba.nbytes / 2**20, 1)
        report["n_classes"] = len(clf.classes_)
        report["batch_rows"] = clf._predict_rows()
        report["network"] = {
            "positions": clf.n_features_in_ + 1, "n_layers": clf.n_layers_, "d_model": clf.d_model,
            "n_heads": clf.n_heads, "ff_dim": clf.ff_dim, "gate": clf.gate, "n_members": clf.n_members,
        }  # fmt: skip
    else:
        if args.scenario == "fit-ids":
            X, y = ids_table(args.rows)
        else:
            report["columns"] = args.columns
            X, y = wide_table(args.rows, args.columns)
        clf = TabularMoEClassifier(**params)
        network, figures = measure(lambda: fit_or_stop(clf, X, y, args.max_batches))
        report.update(network)
        report["stopped_after_batches"] = args.max_batches
    report["input_mib"] = round(X.memory_usage(deep=True).sum() / 2**20, 1)
    report.update(figures, process_peak_mib=round(process_peak_mib()))
    report["warnings"] = sorted({str(w.message) for w in messages})
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
