"""Shared helpers of the MoE-view benchmark scripts (issue 3): data splits, seeds, summaries.

Every script prints one JSON object. Data:

* ``auto-mpg``: the paper's origin split (train on US cars, OOD test = non-US); with
  ``id_fraction > 0`` a stratified part of the US rows is held out as the ID test set.
* ``sim:K/C/N``: the paper's correlation-shift simulation (num_corefea K, corr C, x_noise N)
  on the authors' seeds; the ID test set is a held-out part of the training rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split

from tabmoe.bench.plan import parse_seed_list
from tabmoe.data import (
    auto_mpg_origin_split,
    correlation_shift_simulation,
    paper_simulation_seeds,
)

AUTO_MPG_SEEDS = list(range(42, 52))


@dataclass
class Split:
    X_train: pd.DataFrame
    y_train: pd.Series
    X_ood: pd.DataFrame
    y_ood: pd.Series
    X_id: pd.DataFrame | None = None
    y_id: pd.Series | None = None


def parse_seeds(text: str) -> list[int]:
    if text.startswith("paper:"):
        return paper_simulation_seeds(int(text.split(":")[1]))
    return parse_seed_list(text)


def default_seeds(dataset: str) -> str:
    return "42-51" if dataset == "auto-mpg" else "paper:5"


def load(dataset: str, seed: int, id_fraction: float = 0.0) -> Split:
    """The dataset's train / OOD split; ``id_fraction`` of the training rows held out as ID."""
    if dataset == "auto-mpg":
        paper = auto_mpg_origin_split()
    elif dataset.startswith("sim:"):
        k, c, n = dataset[4:].split("/")
        paper = correlation_shift_simulation(int(k), float(c), float(n), seed)
    else:
        raise ValueError(f"dataset must be 'auto-mpg' or 'sim:K/C/N', got {dataset!r}.")
    split = Split(paper.X_train, paper.y_train, paper.X_test, paper.y_test)
    if id_fraction > 0:
        idx_train, idx_id = train_test_split(
            np.arange(len(paper.y_train)), test_size=id_fraction, stratify=paper.y_train, random_state=seed
        )
        split.X_train, split.X_id = paper.X_train.iloc[idx_train], paper.X_train.iloc[idx_id]
        split.y_train, split.y_id = paper.y_train.iloc[idx_train], paper.y_train.iloc[idx_id]
    return split


def summary(values: list[float]) -> dict:
    v = np.asarray(values, dtype=float)
    return {
        "mean": float(v.mean()),
        "sd_population": float(v.std()),
        "sd_sample": float(v.std(ddof=1)) if len(v) > 1 else None,
        "values": [round(float(x), 4) for x in v],
    }


def setup(threads: int) -> float:
    torch.set_num_threads(threads)
    return time.perf_counter()


def emit(result: dict, started: float) -> None:
    result["command"] = "python " + " ".join(sys.argv)
    result["commit"] = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))
