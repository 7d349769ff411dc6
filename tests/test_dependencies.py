"""Every third-party package tabmoe imports at module level is a declared core dependency:
scipy, joblib and threadpoolctl were imported directly but came only through scikit-learn.
Every package it imports anywhere is a dependency or in an extra, the extras' floors admit
only versions tabmoe works with, and the tests of an extra skip without it."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]
#: Modules that need an extra by design (documented): the CLI (extra "bench"). Everything else
#: must import with the core dependencies alone (tabmoe.data.openml imports openml through
#: tabmoe._optional, an ImportError naming the extra "data").
EXTRA_ONLY = {"tabmoe/bench/cli.py"}


def module_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf8")).body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("tabmoe", "__future__")}


def test_module_level_third_party_imports_are_core_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]
    core = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in project["dependencies"]}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for path in sorted((ROOT / "tabmoe").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative in EXTRA_ONLY:
            continue
        for name in module_level_imports(path):
            dists = {d.lower().replace("_", "-") for d in distributions.get(name, [name])}
            if not dists & core:
                undeclared.setdefault(name, []).append(relative)
    assert undeclared == {}


def imports_anywhere(path: Path) -> set[str]:
    """Third-party top-level names imported anywhere in ``path`` (in functions too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("optional_module", "optional_import")
              and node.args and isinstance(node.args[0], ast.Constant)):
            names.add(node.args[0].value.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("tabmoe", "__future__")}


def test_every_package_tabmoe_imports_is_a_dependency_or_in_an_extra():
    """xmltodict (tabmoe.data.openml) and SQLAlchemy (tabmoe.tuning, the bench's SQL result
    store) were imported directly but came only through openml and optuna."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]
    requirements = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    declared = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}
    # the installed packages' names; pyyaml's import name differs (where it is not installed)
    distributions = {"yaml": ["pyyaml"], **importlib.metadata.packages_distributions()}
    undeclared = {}
    for path in sorted((ROOT / "tabmoe").rglob("*.py")):
        for name in imports_anywhere(path):
            dists = {d.lower().replace("_", "-") for d in distributions.get(name, [name])}
            if not dists & declared:
                undeclared.setdefault(name, []).append(path.relative_to(ROOT).as_posix())
    assert undeclared == {}


#: Package: (the oldest version tabmoe works with, why). The floors of pyproject.toml must not
#: admit older ones (each checked on the wheels of the versions around it).
NEEDED_FLOORS = {
    # pa.types.is_string_view / is_binary_view from 16 (an AttributeError on any Arrow table
    # or polars frame before), casts of view types to large ones from 18 (polars' text)
    "pyarrow": "18",
    # OPENML_SKIP_PARQUET from 0.15.1: 0.15.0 ignores it and fetches the Parquet file a
    # description names, offline too (load_openml reads the cached ARFF)
    "openml": "0.15.1",
}


@pytest.mark.parametrize("package", sorted(NEEDED_FLOORS))
def test_the_floors_of_the_extras_admit_only_versions_tabmoe_works_with(package):
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]
    requirements = [Requirement(r) for r in [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]]
    floors = [Version(s.version) for r in requirements if r.name == package for s in r.specifier if s.operator == ">="]
    assert floors and min(floors) >= Version(NEEDED_FLOORS[package])


#: The extras' packages, as imported (pyproject.toml's optional-dependencies but dev's and docs').
EXTRAS_MODULES = (
    "optuna", "sqlalchemy", "openml", "yaml", "pyarrow", "xmltodict", "rtdl_revisiting_models",
    "pytorch_tabnet", "tab_transformer_pytorch", "tabm", "xgboost", "catboost", "lightgbm", "click",
    "matplotlib", "distributed", "psycopg2",
)


@pytest.mark.slow  # collects the whole suite in a subprocess (about 15 s on 2 busy cores)
def test_the_tests_of_an_extra_skip_without_it(tmp_path):
    """With tabmoe's core dependencies alone (and pytest, hypothesis), 18 test files that import
    an extra's package at module level (optuna, openml, pyyaml, click, matplotlib) failed to
    collect, an error of the whole run, where the other tests of an extra skip."""
    (tmp_path / "without_extras.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in EXTRAS_MODULES)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "without_extras", "-p", "no:cacheprovider", "--collect-only", "-q",
         "--rootdir", str(ROOT), str(ROOT / "tests")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERROR")]
    assert result.returncode == 0 and errors == [], result.stdout[-3000:]
