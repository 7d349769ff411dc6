"""A small mixed table shared by the numeric-embedding tests (no /work/shared needed)."""

import numpy as np
import pandas as pd


def mixed_table(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two numeric columns (x with NaNs, z) and a categorical one; y depends on x + z."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("abc"), n), "z": rng.uniform(size=n)})
    X.loc[::11, "x"] = np.nan
    return X, (X["x"].fillna(0) + X["z"] > 0.5).to_numpy().astype(int)
