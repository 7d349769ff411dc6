"""Why the trainer slices index tensors instead of using a DataLoader: batch production cost.

    python benchmarks/speed_batching.py --rows 2000 --columns 7 --batch-size 18 256

For one epoch of a token table (int16, ``rows`` x ``columns``) with labels and weights, it
times producing every shuffled batch both ways, side by side: ``torch.utils.data.DataLoader``
over a ``TensorDataset`` (shuffle, default collate, no workers) and the trainer's way, a
seeded ``torch.randperm`` and ``index_select`` on each tensor. Batch 18 is the paper's 128
masked copies of 7-column rows; prints JSON with seconds per epoch and microseconds per
batch for both, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_dataloader(tensors: tuple[torch.Tensor, ...], batch_size: int, seed: int) -> int:
    loader = DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    n = 0
    for batch in loader:
        n += batch[0].shape[0]
    return n


def epoch_slicing(tensors: tuple[torch.Tensor, ...], batch_size: int, seed: int) -> int:
    order = torch.randperm(len(tensors[0]), generator=torch.Generator().manual_seed(seed))
    n = 0
    for start in range(0, len(order), batch_size):
        index = order[start : start + batch_size]
        batch = [t.index_select(0, index) for t in tensors]
        n += batch[0].shape[0]
    return n


def timed(fn, *args, repeats: int) -> float:
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        fn(*args, seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[18, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    tokens = torch.randint(3, 40, (args.rows, args.columns), dtype=torch.int16)
    tensors = (tokens, torch.randint(0, 10, (args.rows,)), torch.ones(args.rows))
    for batch_size in args.batch_size:
        loader = timed(epoch_dataloader, tensors, batch_size, repeats=args.repeats)
        slicing = timed(epoch_slicing, tensors, batch_size, repeats=args.repeats)
        batches = -(-args.rows // batch_size)
        print(json.dumps({
            "rows": args.rows, "columns": args.columns, "batch_size": batch_size, "batches": batches,
            "dataloader_seconds": round(loader, 4), "slicing_seconds": round(slicing, 4),
            "dataloader_us_per_batch": round(1e6 * loader / batches, 1),
            "slicing_us_per_batch": round(1e6 * slicing / batches, 1),
            "ratio": round(loader / slicing, 1),
        }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
