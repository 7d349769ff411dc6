"""TabularMoEClassifier's defaults on a GPU: speed options and run-to-run repeatability.

    python benchmarks/cuda_checks.py --out benchmarks/results/speed/cuda_h200_checks.json

On one table (``speed_defaults.mixed_table``: 2,000 training and 1,000 test rows, 20 mixed
columns, 5% missing), the defaults with only ``random_state=0`` set:

* ``variants``: fit seconds, epochs and test accuracy on CUDA in float32, with
  ``mixed_precision=True`` (bf16) and with ``compile=True``, and on the CPU (one thread), one
  after the other in this process after a one-epoch warm-up fit (CUDA's start-up is not in
  any figure);
* ``repeatability``: two CUDA fits with the same ``random_state``, the largest difference
  between their test probabilities and how many predicted labels differ, and one model
  predicting twice; as the defaults run, and under ``torch.use_deterministic_algorithms``
  with ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` (each in its own subprocess, as the setting must
  precede CUDA's start).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from speed_defaults import mixed_table

from tabmoe import TabularMoEClassifier
from tabmoe.bench import limited_threads
from tabmoe.bench._environment import cpu_model


def table():
    X, y = mixed_table(3000, 20, seed=1)
    return X.iloc[:2000], y[:2000], X.iloc[2000:], y[2000:]


def fit(params: dict, X, y) -> tuple[TabularMoEClassifier, float]:
    with limited_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        clf = TabularMoEClassifier(random_state=0, **params).fit(X, y)
        return clf, round(time.perf_counter() - start, 2)


def repeatability(deterministic: bool) -> dict:
    if deterministic:
        torch.use_deterministic_algorithms(True)
    X, y, X_test, _ = table()
    (a, _), (b, _) = fit({"device": "cuda"}, X, y), fit({"device": "cuda"}, X, y)
    p_a, p_b = a.predict_proba(X_test), b.predict_proba(X_test)
    return {"deterministic_algorithms": deterministic,
            "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
            "epochs": [a.n_iter_, b.n_iter_],
            "max_abs_dp_between_fits": float(np.abs(p_a - p_b).max()),
            "labels_differing_between_fits": int((p_a.argmax(1) != p_b.argmax(1)).sum()),
            "max_abs_dp_predicting_twice": float(np.abs(b.predict_proba(X_test) - p_b).max())}


def child_result(kind: str, child: subprocess.Popen) -> dict:
    """The JSON line a repeatability child printed last; a child that failed (its traceback went
    to this process's stderr) or printed nothing ends the run naming it, not with an IndexError."""
    lines = child.communicate()[0].strip().splitlines()
    if child.returncode != 0 or not lines:
        raise SystemExit(f"the {kind!r} repeatability child failed (exit status {child.returncode}); "
                         "its traceback is above")
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--repeatability", choices=["plain", "deterministic"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeatability:  # the subprocess
        print(json.dumps(repeatability(args.repeatability == "deterministic")))
        return 0
    if not torch.cuda.is_available():
        raise SystemExit("cuda_checks.py needs a CUDA GPU")
    env = {**os.environ, "CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
    children = {kind: subprocess.Popen([sys.executable, __file__, "--repeatability", kind], text=True,
                                       stdout=subprocess.PIPE, env=env if kind == "deterministic" else None)
                for kind in ("plain", "deterministic")}
    repeat = [child_result(kind, child) for kind, child in children.items()]
    X, y, X_test, y_test = table()
    _, warm_up = fit({"device": "cuda", "max_epochs": 1}, X, y)
    variants = []
    for name, params in [("cuda float32", {"device": "cuda"}),
                         ("cuda mixed_precision=True", {"device": "cuda", "mixed_precision": True}),
                         ("cuda compile=True", {"device": "cuda", "compile": True}),
                         ("cpu, one thread", {"device": "cpu"})]:
        clf, seconds = fit(params, X, y)
        proba = clf.predict_proba(X_test)
        variants.append({"variant": name, "fit_seconds": seconds, "epochs": clf.n_iter_,
                         "test_accuracy": float(np.mean(clf.predict(X_test) == y_test)),
                         "finite": bool(np.isfinite(proba).all())})
        print(json.dumps(variants[-1]), flush=True)
    result = {"machine": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                          "numpy": np.__version__, "python": platform.python_version(),
                          "cpu": cpu_model()},
              "command": "python benchmarks/cuda_checks.py",
              "warm_up_seconds": warm_up, "variants": variants, "repeatability": repeat,
              "peak_cuda_memory_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1)}
    for line in repeat:
        print(json.dumps(line))
    if args.out:  # other sections of an existing file (figures of other commands) are kept
        kept = json.loads(args.out.read_text()) if args.out.is_file() else {}
        args.out.write_text(json.dumps({**kept, **result}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
