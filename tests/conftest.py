from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

SHARED = Path(os.environ.get("TABMOE_SHARED", Path(__file__).resolve().parents[2] / "shared"))
AUTO_MPG = SHARED / "data" / "auto-mpg.csv"

torch.set_num_threads(1)


@pytest.fixture
def mixed_frame() -> tuple[pd.DataFrame, np.ndarray]:
    """200 rows: a string, a float and a category column; a learnable binary label."""
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(size=n),
            "kind": pd.Categorical(rng.choice(["a", "b"], n)),
        }
    )
    y = np.where((X["colour"] == "red") | (X["size"] > 1.0), "yes", "no")
    return X, y


@pytest.fixture
def auto_mpg_path() -> Path:
    if not AUTO_MPG.exists():
        pytest.skip(f"{AUTO_MPG} not available")
    return AUTO_MPG
