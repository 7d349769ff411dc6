"""One-pass leave-one-out vs L materialised copies: same loss, L times less work.

    python benchmarks/speed_masking.py --rows 4096 --columns 16 --json

Times a forward + backward pass of the masked-feature objective of the same paper-sized
model (d 20, 5 heads, ff 5) on the same batch, both ways, side by side, and prints
``max_abs_diff`` (label and feature logits, eval mode) and ``speedup`` = copies / one-pass
(median of ``--repeats``). The copies form is run in chunks of rows so that at most
``--max-copies`` copies are in memory at once; the work timed is the whole batch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch

from tabmoe.nn.network import TabularMoE
from tabmoe.nn.objective import MaskedFeatureObjective
from tabmoe.tokenizer import N_SPECIAL


def build(rows: int, columns: int, vocab: int, seed: int = 0):
    torch.manual_seed(seed)
    ids = [N_SPECIAL + vocab * j + np.arange(vocab) for j in range(columns)]
    model = TabularMoE(N_SPECIAL + vocab * columns, ids, d_model=20, n_heads=5, ff_dim=5)
    g = torch.Generator().manual_seed(seed)
    tokens = torch.stack([torch.as_tensor(i)[torch.randint(vocab, (rows,), generator=g)] for i in ids], 1)
    return model, tokens


def step(model, tokens, masking: str, chunk_rows: int) -> None:
    """Forward + backward of the whole batch (chunked), gradients accumulated."""
    objective = MaskedFeatureObjective(masking)
    model.zero_grad(set_to_none=True)
    for start in range(0, len(tokens), chunk_rows):
        part = tokens[start : start + chunk_rows]
        s, w = objective(model, {"tokens": part, "weight": torch.ones(len(part))})
        (s / len(tokens)).backward()


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@torch.no_grad()
def max_abs_diff(model, tokens, chunk_rows: int) -> float:
    model.eval()
    worst = 0.0
    for start in range(0, len(tokens), chunk_rows):
        part = tokens[start : start + chunk_rows]
        one, ref = model.hidden_loo(part), model.hidden_copies(part)
        for j in range(model.n_columns):
            ids = model.heads.groups().__next__()[1][j] if model.heads.n_groups == 1 else None
            ids = ids if ids is not None else torch.arange(N_SPECIAL, model.heads.n_tokens)
            diff = model.heads.column_logits(one[:, j], ids) - model.heads.column_logits(ref[:, j], ids)
            worst = max(worst, diff.abs().max().item())
    model.train()
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--columns", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=10, help="values per column")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-copies", type=int, default=65536)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokens = build(args.rows, args.columns, args.vocab)
    chunk = max(1, args.max_copies // args.columns)
    t_copies = timed(lambda: step(model, tokens, "copies", chunk), args.repeats)
    t_one = timed(lambda: step(model, tokens, "leave_one_out", len(tokens)), args.repeats)
    result = {
        "rows": args.rows,
        "columns": args.columns,
        "copies_seconds": t_copies,
        "one_pass_seconds": t_one,
        "speedup": t_copies / t_one,
        "speedup_per_column": t_copies / t_one / args.columns,
        "max_abs_diff": max_abs_diff(model, tokens, chunk),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }
    if not args.json:
        print(f"copies {t_copies:.3f}s  one-pass {t_one:.3f}s  speedup {result['speedup']:.1f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
