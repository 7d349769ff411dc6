"""Time of one training epoch with one huge categorical column; prints one JSON object.

The table: ``--rows`` rows, a column ``id`` of ``--categories`` distinct values (each seen
rows / categories times, so ``min_frequency`` up to that keeps them all), a 5-value column
and a numeric column; binary label. ``fit`` runs one epoch (``max_epochs=1``, no early
stopping) on one torch thread. With ``--profile`` the epoch runs under ``torch.profiler``
and the report adds the share of CPU time of the top operators (self time).

Where the time goes (docs/reliability.md, "Memory"): the default objective predicts every
column of every row, so each step computes, for the ``id`` column, rows x categories logits
(an einsum with d_model, a log_softmax, and their backward passes): the epoch costs
O(rows x categories) whatever the batch size.

    python benchmarks/high_cardinality.py --rows 20000 --categories 10000 --profile
    python benchmarks/high_cardinality.py --rows 40000 --categories 20000 [--min-frequency 3]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
import torch

from tabmoe import TabularMoEClassifier


def table(rows: int, categories: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = np.arange(rows) % categories
    X = pd.DataFrame({
        "id": pd.Series([f"v{i}" for i in rng.permutation(ids)], dtype=object),
        "kind": rng.choice(list("abcde"), rows).astype(object),
        "x": rng.normal(size=rows),
    })
    y = np.where((X["x"] > 0) ^ (X["kind"] == "a"), "pos", "neg")
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--categories", type=int, default=10_000)
    parser.add_argument("--batch-size", default="auto")
    parser.add_argument("--min-frequency", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = table(args.rows, args.categories)
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    clf = TabularMoEClassifier(max_epochs=1, early_stopping=False, batch_size=batch_size,
                               min_frequency=args.min_frequency, random_state=0)
    report = {"rows": args.rows, "categories": args.categories, "batch_size": args.batch_size,
              "min_frequency": args.min_frequency,
              "threads": torch.get_num_threads(), "torch": torch.__version__}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.profile:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                start = time.perf_counter()
                clf.fit(X, y)
                seconds = time.perf_counter() - start
            events = prof.key_averages()
            total = sum(e.self_cpu_time_total for e in events)
            top = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:10]
            report["top_ops_share_of_cpu_time"] = {
                e.key: round(e.self_cpu_time_total / total, 3) for e in top
            }
        else:
            start = time.perf_counter()
            clf.fit(X, y)
            seconds = time.perf_counter() - start
    report["fit_seconds_one_epoch"] = round(seconds, 2)
    report["logits_per_epoch"] = args.rows * (int(clf.tokenizer_.n_tokens_per_column_.sum()) + 2)
    report["ns_per_logit"] = round(1e9 * seconds / report["logits_per_epoch"], 3)
    report["warnings"] = sorted({str(w.message)[:160] for w in caught})
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
