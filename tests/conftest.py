"""Shared test fixtures: the read-only ../shared folder (paper data, offline OpenML cache).

``$TABMOE_SHARED`` overrides the location; otherwise the first ancestor of the repository
that has a ``shared/`` folder is used (``/work/shared`` for ``/work/main`` and for git
worktrees below it). Tests that need it skip cleanly when it is absent.
"""

from __future__ import annotations

import importlib.util
import os
import re
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


#: The extras' packages as imported (pyproject.toml), and rtdl_num_embeddings (tabm's, extra
#: "baselines"; the research scripts import it).
OPTIONAL_MODULES = {
    "optuna", "sqlalchemy", "openml", "yaml", "pyarrow", "xmltodict", "rtdl_revisiting_models",
    "pytorch_tabnet", "tab_transformer_pytorch", "tabm", "rtdl_num_embeddings", "xgboost", "catboost",
    "lightgbm", "click", "matplotlib", "distributed", "psycopg2", "polars",
}
#: Those not installed, looked up once: before any test hides an installed one (a
#: ``monkeypatch.setitem(sys.modules, name, None)`` still in place when its report is made).
MISSING_OPTIONAL = {name for name in OPTIONAL_MODULES if importlib.util.find_spec(name) is None}


def missing_optional(exc: BaseException | None) -> str | None:
    """The optional package whose absence raised ``exc`` (or an exception it comes from), if
    it is not installed: a package that is there but fails to import is not one."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            top = exc.name.split(".")[0]
            if top in MISSING_OPTIONAL:
                return top
        exc = exc.__cause__ or exc.__context__
    return None


def missing_optional_in(stderr: str) -> str | None:
    """The optional package a subprocess's traceback (``stderr``) names as missing, if it is
    not installed here either."""
    for name in re.findall(r"No module named '([\w.]+)'", stderr):
        top = name.split(".")[0]
        if top in MISSING_OPTIONAL:
            return top
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test whose setup or call failed on a missing optional package is reported skipped,
    naming it, as the tests that ``importorskip`` it are (with the core dependencies alone,
    hundreds of tests of the baselines and the research scripts failed)."""
    report = yield
    if report.failed and call.excinfo is not None:
        missing = missing_optional(call.excinfo.value)
        if missing is not None:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"Skipped: needs the optional package {missing!r}, not installed")
    return report


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
