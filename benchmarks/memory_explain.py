"""Peak memory of ``explain``: its outputs filled batch by batch (now) against the batches'
tensors concatenated, cast to float64 and copied into the frames (before), alternately in one
process, on the same model and rows; the explanations are checked equal, bit for bit.

Fits a one-layer ``block="attention"`` model (whose explanation has ``contributions``) and
the default model on 2,000 rows of an 8-string + 8-float table (1 epoch, one thread), then
explains ``--rows`` new rows with each reading. Each figure is the peak RSS of the call
above the RSS when it started (``memory.measure``; glibc mmaps every block of 1 MiB or more,
so the RSS follows the live allocations), beside the size of the explanation's frames::

    python benchmarks/memory_explain.py [--rows 200000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager

import numpy as np
import pandas as pd
import torch
from memory import measure, set_mmap_threshold

import tabmoe._estimator_explain
from tabmoe import TabularMoEClassifier
from tabmoe.interpret import explain
from tabmoe.interpret.moe import MixtureOfExperts

MIB = 2**20


@torch.no_grad()
def concatenated(module, tokens, attend, output_ids, columns, classes, index, batch_rows=8192, fraction=None):
    """``explain_tokens`` as it was: float32 batches kept in lists, concatenated, cast to
    float64, then copied into the frames."""
    module = module.eval()
    device = next(module.parameters()).device
    names = [*columns, explain.mask_column(columns)]
    moe = MixtureOfExperts.from_model(module, names) if explain.additive(module) else None
    if moe is not None:
        batch_rows = min(batch_rows, explain.predict_batch_rows(len(names), moe.n_heads * len(output_ids)))
    ids = torch.as_tensor(output_ids, device=device)
    order = np.searchsorted(np.sort(output_ids), output_ids)
    gates, contributions, logits = [], [], []
    for batch, att, frac in explain._batches(tokens, attend, fraction, batch_rows, device):
        if moe is not None:
            logits.append(module.label_logits(batch, att, frac)[:, order].cpu())
            per_head = moe.contributions(batch, ids, attend=att)
            contributions.append(per_head.sum(1).transpose(1, 2).flatten(1).cpu())
            gates.append(moe.gates(batch, attend=att).cpu())
        else:
            batch_logits, batch_gates = explain._logits_and_gates(module, batch, att, frac)
            logits.append(batch_logits[:, order].cpu())
            gates.append(batch_gates.cpu())
    g = torch.cat(gates).double().numpy()
    head_columns = explain._product(pd.RangeIndex(g.shape[1], name="head"), explain._labels(names, "column"))
    out = explain.Explanation(
        gates=pd.DataFrame(g.mean(1), index=index, columns=explain._labels(names, "column")),
        head_gates=pd.DataFrame(g.reshape(len(g), -1), index=index, columns=head_columns),
        logits=pd.DataFrame(torch.cat(logits).double().numpy(), index=index, columns=explain._labels(classes, "class")),
    )
    if moe is not None:
        c = torch.cat(contributions).double().numpy()
        out.contributions = pd.DataFrame(
            c, index=index, columns=explain._product(explain._labels(classes, "class"), explain._labels(names, "column"))
        )
        out.bias = pd.Series(moe.output_bias[ids].cpu().double().numpy(), index=explain._labels(classes, "class"))
    return out


@contextmanager
def former_reading():
    current = tabmoe._estimator_explain.explain_tokens
    tabmoe._estimator_explain.explain_tokens = concatenated
    try:
        yield
    finally:
        tabmoe._estimator_explain.explain_tokens = current


def table(n_rows: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {f"c{j}": rng.choice(["a", "b", "c", "d"], n_rows).astype(object) for j in range(8)}
        | {f"x{j}": rng.normal(size=n_rows) for j in range(8)}
    )
    return X, ((X["c0"] == "a") ^ (X["x0"] > 0)).to_numpy().astype(np.int64)


def output_mib(e: explain.Explanation) -> float:
    frames = [e.gates, e.head_gates, e.logits] + ([e.contributions] if e.contributions is not None else [])
    return sum(f.to_numpy().nbytes for f in frames) / MIB


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    set_mmap_threshold(MIB)
    torch.set_num_threads(1)
    X, y = table(2_000, seed=0)
    X_new, _ = table(args.rows, seed=1)
    report = {"rows": args.rows}
    for name, params in (("attention block, 1 layer", {"block": "attention", "n_layers": 1}), ("defaults", {})):
        model = TabularMoEClassifier(max_epochs=1, random_state=0, **params).fit(X, y)
        peaks: dict[str, list[float]] = {"before": [], "now": []}
        outputs = {}
        for _ in range(args.repeats):
            with former_reading():
                outputs["before"], figures = measure(lambda m=model: m.explain(X_new))
            peaks["before"].append(figures["step_peak_above_before_mib"])
            outputs["now"], figures = measure(lambda m=model: m.explain(X_new))
            peaks["now"].append(figures["step_peak_above_before_mib"])
        for part in ("gates", "head_gates", "logits", "contributions"):
            before, now = getattr(outputs["before"], part), getattr(outputs["now"], part)
            assert (before is None) == (now is None), part
            if now is not None:
                pd.testing.assert_frame_equal(now, before, check_exact=True)
        report[name] = {"output_mib": round(output_mib(outputs["now"])), "peak_mib": peaks}
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
