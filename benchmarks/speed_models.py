"""Fit and predict speed and peak memory of every model on the same table.

    python benchmarks/speed_models.py [--rows 20000] [--epochs 5] [--models a,b] \
        [--dataset synthetic|adult] [--threads 1] [--device cpu]

Each model runs in its own subprocess (so memory is measured per model) with the
registry's paper defaults, ``categorical_features="auto"`` (tabmoe: per-column vocabularies,
binned numerics), early stopping off and ``max_epochs`` (MLP: ``max_iter``) = ``--epochs``.
Prints one JSON object; per model:

* ``fit_seconds``; ``epochs`` run and ``seconds_per_epoch`` = fit_seconds / epochs (the
  encoder's fit amortised in), for the epoch-trained models (torch models and the MLP);
  the tree and linear models report ``fit_seconds`` only;
* ``predict_rows_per_second``: ``predict_proba`` on all rows after a 1,000-row warm-up;
* ``peak_rss_mb``: ``getrusage(RUSAGE_SELF).ru_maxrss`` of the model's process at the end
  (the whole process: interpreter, libraries, the table, fit and predict), and
  ``rss_before_fit_mb``, its resident memory once the table was built, so the difference
  bounds what fit and predict added.

Data: ``synthetic`` is a seeded table of ``--rows`` rows and 20 columns (10 categorical with
3-48 string levels and 5% missing, 10 numeric with 5% missing) and a 3-class label from a
noisy rule. ``adult`` is OpenML 1590 from ``$TABMOE_SHARED/openml-cache`` (read from a
temporary copy), subsampled to ``--rows``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TABMOE_SHARED", REPO.parent / "shared"))
EPOCH_PARAM = {"mlp": "max_iter"}
TORCH_MODELS = {"tabmoe", "ft_transformer", "tab_transformer", "tabnet", "tabm"}
EPOCH_MODELS = TORCH_MODELS | {"mlp"}


def synthetic_table(n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """10 categorical + 10 numeric columns with 5% missing; 3 classes from a noisy rule."""
    rng = np.random.default_rng(seed)
    columns, score = {}, np.zeros(n_rows)
    for j in range(10):
        levels = np.array([f"c{j}_{k}" for k in range(3 + 5 * j)])
        codes = rng.integers(0, len(levels), n_rows)
        effect = rng.normal(size=len(levels))
        score += effect[codes] / np.sqrt(10)
        values = levels[codes].astype(object)
        values[rng.random(n_rows) < 0.05] = None
        columns[f"cat{j}"] = values
    for j in range(10):
        x = rng.normal(size=n_rows)
        score += rng.normal() * x / np.sqrt(10)
        x[rng.random(n_rows) < 0.05] = np.nan
        columns[f"num{j}"] = x
    score += rng.normal(scale=0.5, size=n_rows)
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return pd.DataFrame(columns), np.array(["low", "mid", "high"])[y]


def adult_table(n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """OpenML 1590 (adult) from a temporary copy of the shared offline cache."""
    cache = SHARED / "openml-cache"
    if not (cache / "org").exists():
        raise SystemExit(f"adult needs the offline OpenML cache at {cache} (set TABMOE_SHARED).")
    root = Path(tempfile.mkdtemp(prefix="openml-"))
    shutil.copytree(
        cache / "org" / "openml" / "www" / "datasets" / "1590",
        root / "org" / "openml" / "www" / "datasets" / "1590",
    )
    import openml

    openml.config.set_root_cache_directory(str(root))
    dataset = openml.datasets.get_dataset(
        1590, download_data=True, download_qualities=False, download_features_meta_data=True
    )
    X, y, _, _ = dataset.get_data(target=dataset.default_target_attribute)
    shutil.rmtree(root, ignore_errors=True)
    take = np.random.default_rng(seed).permutation(len(X))[:n_rows]
    return X.iloc[take].reset_index(drop=True), np.asarray(y)[take].astype(str)


def build(name: str, epochs: int, threads: int, device: str):
    from tabmoe.registry import get_model

    params: dict = {"categorical_features": "auto"}
    if name == "tabmoe":
        params["vocabulary"] = "per_column"
    if name in TORCH_MODELS:
        params.update(max_epochs=epochs, early_stopping=False, device=device)
    if name == "mlp":
        params["max_iter"] = epochs
    if name in ("xgboost", "lightgbm"):
        params["n_jobs"] = threads
    if name == "catboost":
        params["thread_count"] = threads
    if name != "logistic_regression":
        params["random_state"] = 0
    return get_model(name).make(**params)


def epochs_run(name: str, estimator) -> int | None:
    if name not in EPOCH_MODELS:
        return None
    if name == "mlp":
        return int(estimator.estimator_.n_iter_)
    return int(estimator.n_iter_)


def current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1024**2


def worker(args: argparse.Namespace) -> dict:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)
    X, y = (adult_table if args.dataset == "adult" else synthetic_table)(args.rows)
    rss_before = current_rss_mb()
    estimator = build(args.worker, args.epochs, args.threads, args.device)
    with threadpool_limits(args.threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings at few epochs
        start = time.perf_counter()
        estimator.fit(X, y)
        fit_seconds = time.perf_counter() - start
        estimator.predict_proba(X.iloc[:1000])
        start = time.perf_counter()
        estimator.predict_proba(X)
        predict_seconds = time.perf_counter() - start
    epochs = epochs_run(args.worker, estimator)
    return {
        "fit_seconds": round(fit_seconds, 3),
        "epochs": epochs,
        "seconds_per_epoch": round(fit_seconds / epochs, 3) if epochs else None,
        "predict_rows_per_second": round(len(X) / predict_seconds),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_before_fit_mb": round(rss_before, 1),
        "train_accuracy": round(float(estimator.score(X, y)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--models", default=None, help="comma-separated; default: all installed")
    parser.add_argument("--dataset", choices=["synthetic", "adult"], default="synthetic")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return

    from tabmoe.registry import available_models, get_model

    names = args.models.split(",") if args.models else available_models()
    for name in names:
        get_model(name)  # fail early on a typo
    results = {}
    for name in names:
        command = [
            sys.executable,
            __file__,
            "--worker",
            name,
            "--rows",
            str(args.rows),
            "--epochs",
            str(args.epochs),
            "--dataset",
            args.dataset,
            "--threads",
            str(args.threads),
            "--device",
            args.device,
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            results[name] = {"error": done.stderr.strip().splitlines()[-1:]}
            continue
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        json.dumps(
            {
                "data": {"dataset": args.dataset, "rows": args.rows, "epochs": args.epochs},
                "threads": args.threads,
                "device": args.device,
                "memory": "peak_rss_mb: ru_maxrss of the model's own process (whole process)",
                "models": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
