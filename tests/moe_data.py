"""Small synthetic tables shared by the MoE-view tests (no /work/shared needed)."""

import numpy as np
import pandas as pd


def toy_table(n=240, seed=0, n_noise=2):
    """Categorical + numeric columns, a 3-class label that depends on two of them."""
    rs = np.random.RandomState(seed)
    y = rs.randint(3, size=n)
    frame = pd.DataFrame(
        {
            "color": np.where(rs.rand(n) < 0.8, np.array(["red", "green", "blue"])[y], "red"),
            "size": y + rs.normal(scale=0.6, size=n),
        }
    )
    for k in range(n_noise):
        frame[f"noise{k}"] = rs.choice(["a", "b", "c", "d"], size=n)
    return frame, np.array(["low", "mid", "high"])[y]
