"""Training and prediction throughput of tabmoe vs FT-Transformer as the table grows.

    python benchmarks/speed_scaling.py --rows 10000 100000 1000000 --columns 8 32 128 \
        --out benchmarks/results/speed/cpu.json

For every (rows, columns) and model, one subprocess fits ``--epochs`` epochs (default 1;
early stopping off, the same ``--batch-size`` rows per batch for both models) on a synthetic
table (half categorical columns with 20 levels, half numeric) and predicts, and reports:

* ``epoch_seconds``: the trainer's own epoch time (``history_[i]["seconds"]``), the median
  of the epochs after the first when there are several (``first_epoch_seconds``: the
  first's, which includes compilation for a compiled model). When
  ``rows`` exceeds the model's ``--max-timed-rows``, the epoch runs on that many rows and the
  time is scaled by ``rows / timed_rows`` (``extrapolated: true``): an epoch is a fixed
  number of identical steps, so the scaling is linear by construction there.
* ``predict_rows_per_second`` on ``min(rows, --predict-rows)`` rows;
* ``peak_rss_mib`` of the subprocess (``ru_maxrss``);
* ``ratio_*``: FT-Transformer / tabmoe, measured in the same run.

``--threads`` torch threads per subprocess (default 1, so the two models are compared on
equal footing on a busy machine).

Speed options (both models take them): ``--compile [off|on|both]`` (bare: ``on``) and
``--mixed-precision [off|on|auto|both]`` (bare: ``on``; bf16 autocast; "auto": CUDA only). Each
combination asked for is a variant, run side by side in the same loop and reported under
``tabmoe``, ``tabmoe+compile``, ``tabmoe+bf16``, ``tabmoe+compile+bf16`` (likewise for
``ft_transformer``), each non-plain variant with ``epoch_speedup`` = plain epoch time / its
own. With a compiled variant every variant trains ``max(--epochs, 2)`` epochs, so that
``epoch_seconds`` leaves the compiling first epoch out (for every variant alike).
Compilation is cached on disk (``TORCHINDUCTOR_CACHE_DIR``, default
``/tmp/torchinductor_$USER``): ``first_epoch_seconds`` is much shorter once a graph of the
same model and vocabulary sizes has been compiled before.

    python benchmarks/speed_scaling.py --rows 10000 --columns 8 32 --models tabmoe \
        --compile both
    python benchmarks/speed_scaling.py --device cuda --compile both --mixed-precision both
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np, pandas as pd, torch
cfg = json.loads(sys.argv[1])
torch.set_num_threads(cfg["threads"])

def table(n, n_columns, seed=0):
    rng = np.random.default_rng(seed)
    cols, signal = {}, np.zeros(n)
    for j in range(n_columns):
        if j % 2 == 0:
            codes = rng.integers(0, 20, n)
            cols[f"c{j}"] = pd.Categorical.from_codes(codes, [f"v{i}" for i in range(20)])
            signal += (codes % 3 == 0) * 0.5
        else:
            x = rng.normal(size=n)
            cols[f"n{j}"] = x
            signal += 0.3 * x
    y = (signal + rng.normal(size=n) > np.median(signal)).astype(int)
    return pd.DataFrame(cols), y

timed_rows = min(cfg["rows"], cfg["max_timed_rows"])
X, y = table(timed_rows, cfg["columns"])
common = dict(max_epochs=cfg["epochs"], batch_size=cfg["batch_size"], early_stopping=False,
              random_state=0, device=cfg["device"], compile=cfg["compile"],
              mixed_precision=cfg["mixed_precision"])
if cfg["model"] == "tabmoe":
    from tabmoe import TabularMoEClassifier
    clf = TabularMoEClassifier(**common)
else:
    from tabmoe.baselines.ft_transformer import FTTransformerClassifier
    clf = FTTransformerClassifier(**common)
start = time.perf_counter()
clf.fit(X, y)
fit_seconds = time.perf_counter() - start
scale = cfg["rows"] / timed_rows
later = [h["seconds"] for h in clf.history_[1:]] or [clf.history_[0]["seconds"]]
epoch = float(np.median(later)) * scale
first_epoch = clf.history_[0]["seconds"] * scale
n_pred = min(cfg["rows"], cfg["predict_rows"])
Xp, _ = table(n_pred, cfg["columns"], seed=1)
clf.predict_proba(Xp[:1000])  # warm-up
start = time.perf_counter()
clf.predict_proba(Xp)
pred = n_pred / (time.perf_counter() - start)
print(json.dumps({
    "epoch_seconds": epoch, "first_epoch_seconds": first_epoch, "epochs": len(clf.history_),
    "timed_rows": timed_rows, "extrapolated": timed_rows < cfg["rows"],
    "fit_seconds_timed": fit_seconds, "predict_rows_per_second": pred, "predict_rows": n_pred,
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run_child(cfg: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cfg)], capture_output=True, text=True
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def variants(compile_: str, mixed_precision: str) -> list[tuple[str, bool, bool | str]]:
    """(suffix, compile, mixed_precision) of every combination asked for; plain first."""
    compiles = {"off": [False], "on": [True], "both": [False, True]}[compile_]
    mixed = {"off": [False], "on": [True], "auto": ["auto"], "both": [False, True]}[mixed_precision]
    out = []
    for c in compiles:
        for m in mixed:
            suffix = ("+compile" if c else "") + ("+bf16" if m is True else "+bf16auto" if m else "")
            out.append((suffix, c, m))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--columns", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--models", nargs="+", default=["tabmoe", "ft_transformer"])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--max-timed-rows", type=int, nargs=2, default=[1_000_000, 20_000],
                        metavar=("TABMOE", "FT_T"), help="rows actually trained per model")
    parser.add_argument("--predict-rows", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=1,
                        help="epochs per fit (at least 2 when a variant is compiled)")
    parser.add_argument("--compile", nargs="?", const="on", default="off",
                        choices=["off", "on", "both"], help="torch.compile the training step")
    parser.add_argument("--mixed-precision", nargs="?", const="on", default="off",
                        choices=["off", "on", "auto", "both"], help="bf16 autocast (auto: CUDA only)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    caps = dict(zip(["tabmoe", "ft_transformer"], args.max_timed_rows, strict=True))
    runs = variants(args.compile, args.mixed_precision)
    epochs = max(args.epochs, 2) if any(c for _, c, _ in runs) else args.epochs
    results = []
    for columns in args.columns:
        for rows in args.rows:
            entry = {"rows": rows, "columns": columns}
            for model in args.models:
                for suffix, compile_, mixed in runs:
                    cfg = {"model": model, "rows": rows, "columns": columns,
                           "threads": args.threads, "batch_size": args.batch_size,
                           "max_timed_rows": caps[model], "predict_rows": args.predict_rows,
                           "device": args.device, "epochs": epochs, "compile": compile_,
                           "mixed_precision": mixed}
                    start = time.perf_counter()
                    name = model + suffix
                    entry[name] = run_child(cfg)
                    entry[name]["wall_seconds"] = time.perf_counter() - start
                    plain = entry.get(model, {})
                    if suffix and "epoch_seconds" in plain and "epoch_seconds" in entry[name]:
                        entry[name]["epoch_speedup"] = (
                            plain["epoch_seconds"] / entry[name]["epoch_seconds"]
                        )
                    print(json.dumps({"rows": rows, "columns": columns, name: entry[name]}),
                          file=sys.stderr, flush=True)
            a, b = entry.get("tabmoe", {}), entry.get("ft_transformer", {})
            if "epoch_seconds" in a and "epoch_seconds" in b:
                entry["ratio_epoch_ft_over_tabmoe"] = b["epoch_seconds"] / a["epoch_seconds"]
                entry["ratio_predict_tabmoe_over_ft"] = (
                    a["predict_rows_per_second"] / b["predict_rows_per_second"]
                )
            results.append(entry)
    import torch

    report = {
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "torch": torch.__version__, "threads": args.threads, "device": args.device,
                    "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None},
        "batch_size": args.batch_size,
        "epochs": epochs,
        "compile": args.compile,
        "mixed_precision": args.mixed_precision,
        "results": results,
    }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
