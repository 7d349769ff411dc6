"""Shared test fixtures: the read-only ../shared folder (paper data, offline OpenML cache).

``$TABMOE_SHARED`` overrides the location; otherwise the first ancestor of the repository
that has a ``shared/`` folder is used (``/work/shared`` for ``/work/main`` and for git
worktrees below it). Tests that need it skip cleanly when it is absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import settings
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]

torch.set_num_threads(1)

# Property tests (tests/test_fuzz.py): "default" keeps them to about a minute on 2 cores;
# HYPOTHESIS_PROFILE=ci runs ten times as many examples (the slow CI pass).
settings.register_profile("default", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("ci", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def one_thread():
    """BLAS and OpenMP pools at one thread for the test (the baselines' libraries size
    theirs from the machine): ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    with threadpool_limits(1):
        yield


def find_shared() -> Path | None:
    env = os.environ.get("TABMOE_SHARED")
    if env:
        return Path(env) if Path(env).is_dir() else None
    for parent in REPO.parents:
        if (parent / "shared").is_dir():
            return parent / "shared"
    return None


SHARED = find_shared()
OPENML_CACHE = SHARED / "openml-cache" if SHARED else None
AUTO_MPG = REPO / "benchmarks" / "data" / "auto-mpg.csv"  # shipped (benchmarks/data/README.md)


@pytest.fixture(scope="session")
def openml_cache(tmp_path_factory) -> Path:
    """A writable copy of the shared OpenML cache (copied once per session; no pickles)."""
    if OPENML_CACHE is None or not (OPENML_CACHE / "org").is_dir():
        pytest.skip("shared OpenML cache not available (set TABMOE_SHARED)")
    root = tmp_path_factory.mktemp("openml-cache")
    shutil.copytree(OPENML_CACHE / "org", root / "org")
    return root


@pytest.fixture
def auto_mpg(monkeypatch) -> Path:
    """Path of the paper's auto-mpg CSV, also exported as $TABMOE_AUTO_MPG."""
    if AUTO_MPG is None or not AUTO_MPG.is_file():
        pytest.skip(f"{AUTO_MPG} not available")
    monkeypatch.setenv("TABMOE_AUTO_MPG", str(AUTO_MPG))
    return AUTO_MPG


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
