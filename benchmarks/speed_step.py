"""One training step (loss, forward, backward) of the default tabmoe network, timed; with
``--reference``, against another version of ``tabmoe/nn/network.py`` in the same process.

    python benchmarks/speed_step.py [--rows 5000] [--columns 40] [--steps 40]
    git show REF:tabmoe/nn/network.py > /tmp/network_ref.py
    python benchmarks/speed_step.py --reference /tmp/network_ref.py

The table is ``speed_defaults.py``'s (mixed columns); the network is the one
``TabularMoEClassifier()`` builds for it after one epoch, and one batch of ``--batch`` rows
is timed ``--steps`` times. With ``--reference`` the reference network gets the same
weights and both are timed in alternation, step by step, so machine load hits both alike:
the figure to read is the median of the paired ratios. One thread. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
import warnings

import numpy as np
import torch
from speed_defaults import mixed_table

import tabmoe._estimator_state as estimator_state
from tabmoe import TabularMoEClassifier


def load_reference(path: str):
    """``path`` as the module ``tabmoe.nn.network_reference`` (its relative imports work)."""
    spec = importlib.util.spec_from_file_location("tabmoe.nn.network_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--reference", default=None, help="another network.py to time beside this one")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    X, y = mixed_table(args.rows, args.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = TabularMoEClassifier(random_state=0, max_epochs=1).fit(X, y)
    networks = {"current": est.module_.train()}
    if args.reference:
        estimator_state.TabularMoE = load_reference(args.reference).TabularMoE
        reference = est._build_module()
        reference.load_state_dict(est.module_.state_dict())
        networks["reference"] = reference.train()
    codes = np.searchsorted(est.classes_, y[: args.batch])
    batch = {"tokens": torch.from_numpy(est._tokens(X.iloc[: args.batch], codes)), "weight": torch.ones(args.batch)}
    loss_fn = est._get_loss()
    seconds: dict[str, list[float]] = {name: [] for name in networks}
    for _ in range(args.steps + 3):  # the first 3 warm up
        for name, network in networks.items():
            start = time.perf_counter()
            total, weight = loss_fn(network, batch)
            (total / weight).backward()
            seconds[name].append(time.perf_counter() - start)
    out = {"rows": args.rows, "columns": args.columns, "batch": args.batch, "steps": args.steps}
    for name, values in seconds.items():
        out[f"{name}_ms"] = round(1e3 * float(np.median(values[3:])), 1)
    if args.reference:
        ratio = np.array(seconds["current"][3:]) / np.array(seconds["reference"][3:])
        out["current_over_reference"] = round(float(np.median(ratio)), 3)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
