"""The installed wheel, not the checkout, runs the harness from any folder (issue 18).

The wheel is built from a copy of the package's sources (``pip wheel --no-deps``, no build
isolation: no network), installed with ``pip install --target`` into a temporary folder, and
run from another temporary folder in a fresh interpreter whose ``sys.path`` holds neither
the checkout nor the development install (its editable-import hook is removed first). The
shipped suites and the smoke suite's table must come from the wheel's package data.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("click")  # extra "bench": every test runs tabmoe-bench
pytest.importorskip("yaml")  # extra "data": the suites

from .conftest import REPO

#: Run in the fresh interpreter: drop the editable install's finder, check that tabmoe comes
#: from the wheel's folder, then run ``python -m tabmoe.bench`` with the given arguments.
BOOT = """
import runpy, sys
site = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                    and "editable" not in getattr(f, "__name__", "").lower()]
import tabmoe, tabmoe.bench.suites
assert tabmoe.__file__.startswith(site), tabmoe.__file__
assert tabmoe.bench.suites.default_suites_dir().is_relative_to(site)
sys.argv[0] = "tabmoe-bench"
runpy.run_module("tabmoe.bench", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The folder the built wheel is installed in."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "tabmoe", source / "tabmoe", ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), str(source)],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    (wheel,) = (root / "dist").glob("tabmoe-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("smoke.yaml", "paper.yaml", "openml-ood.yaml", "data/car-smoke.csv",
                    "data/vote-swing-bloc.clusters.txt", "data/kr-vs-kp-cluster.clusters.txt",
                    "data/splice-flank-cluster.clusters.txt"):
        assert f"tabmoe/bench/suites/{shipped}" in names, shipped
    site = root / "site"
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    return site


def run_cli(site: Path, cwd: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "HOME": str(cwd)}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", BOOT, str(site), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.mark.slow  # builds and installs a wheel: the slow suite, and the fresh-clone check
def test_installed_wheel_lists_its_suites_from_any_folder(installed, tmp_path):
    result = run_cli(installed, tmp_path, "suites", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("smoke", "paper", "openml-ood"):
        assert name in result.stdout


@pytest.mark.slow  # builds and installs a wheel: the slow suite, and the fresh-clone check
def test_installed_wheel_runs_one_smoke_model_from_any_folder(installed, tmp_path):
    """One quick model of the smoke suite, end to end: data from the wheel, records, report."""
    results = tmp_path / "results"
    result = run_cli(installed, tmp_path, "run", "smoke", "--results", str(results),
                     "--models", "logistic_regression", "--seeds", "0", "--protocol", "untuned",
                     "--no-progress", timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(list((results / "runs").rglob("*.json"))) == 2  # two splits x one seed
    assert (results / "report.md").is_file()


@pytest.mark.slow
def test_installed_wheel_runs_the_smoke_suite_from_any_folder(installed, tmp_path):
    """``tabmoe-bench run smoke`` as the README gives it (every model, both protocols)."""
    results = tmp_path / "results"
    result = run_cli(installed, tmp_path, "run", "smoke", "--results", str(results),
                     "--no-progress", timeout=1800)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (results / "report.md").is_file()
