"""``explain`` on models whose logits are not a sum of columns: one pass against two.

For a deeper model or an ensemble, ``explain`` reads the logits and the last layer's label
gates. It ran the network once for each (``label_logits``, then ``label_gates``: the layers
below the last ran twice); it now takes both from one pass
(``TabularMoE.label_logits_and_gates``). Fits a two-layer model (and a three-member
ensemble of them) on 2,000 rows of a 60-column categorical table, one thread, then times on
``--rows`` rows, alternately in one process: ``explain``, ``explain`` with the former
two-pass reading swapped in (same batches), and ``predict_proba`` for scale; the two
explanations are checked equal::

    python benchmarks/speed_explain.py [--rows 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.interpret import explain


def two_passes(module, tokens, attend, fraction):
    """The former reading of a batch: the logits and the gates from a pass each."""
    return module.label_logits(tokens, attend, fraction), explain._label_gates(module, tokens, attend, fraction)


def explain_in_two_passes(model: TabularMoEClassifier, X: pd.DataFrame):
    one_pass = explain._logits_and_gates
    explain._logits_and_gates = two_passes
    try:
        return model.explain(X)
    finally:
        explain._logits_and_gates = one_pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"c{j}": rng.integers(0, 8, args.rows).astype(str) for j in range(60)})
    y = (X["c0"].astype(int) + X["c1"].astype(int) > 7).to_numpy()
    for members in (1, 3):
        model = TabularMoEClassifier(n_layers=2, n_members=members, max_epochs=1, random_state=0, n_jobs=1)
        model.fit(X.iloc[:2000], y[:2000])
        seconds: dict[str, list[float]] = {"explain": [], "two passes": [], "predict_proba": []}
        outputs: dict = {}
        for _ in range(args.repeats):
            for name, call in (("explain", lambda m=model: m.explain(X)), ("two passes", lambda m=model: explain_in_two_passes(m, X)),
                               ("predict_proba", lambda m=model: m.predict_proba(X))):
                start = time.perf_counter()
                out = call()
                seconds[name].append(time.perf_counter() - start)
                outputs[name] = out
        for part in ("logits", "head_gates", "gates"):
            pd.testing.assert_frame_equal(getattr(outputs["explain"], part), getattr(outputs["two passes"], part))
        median = {k: float(np.median(v)) for k, v in seconds.items()}
        print(f"2 layers, {members} member(s), {args.rows} rows: explain {median['explain']:.2f} s, "
              f"two passes {median['two passes']:.2f} s (ratio {median['two passes'] / median['explain']:.2f}), "
              f"predict_proba {median['predict_proba']:.2f} s; medians of {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
