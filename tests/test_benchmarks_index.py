"""benchmarks/README.md indexes every script a reader may run to check a published figure."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_every_script_is_a_row_of_the_index():
    index = (BENCHMARKS / "README.md").read_text(encoding="utf8")
    rows = set(re.findall(r"^\| `([\w/]+\.py)` \|", index, flags=re.MULTILINE))
    scripts = {path.name for path in BENCHMARKS.glob("*.py")}
    assert scripts - rows == set(), "scripts missing from the index of benchmarks/README.md"


def test_the_index_names_every_script_that_imports_an_internal():
    """The index said scripts use only the public API (no ``_private`` names) while ten of
    them import internals (``tabmoe.bench._environment``, ``tabmoe.nn._base``, ...): a reader
    relying on it would expect them to survive any refactor. Each one is named there."""
    import ast

    index = (BENCHMARKS / "README.md").read_text(encoding="utf8")
    paragraph = index[index.index("Scripts use tabmoe's public API"):].split("\n\n")[0]
    internal = set()
    for path in BENCHMARKS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                parts = module.split(".")
                if parts[0] == "tabmoe" and any(p.startswith("_") for p in parts[1:] + names):
                    internal.add(path.name)
    assert internal, "no script imports an internal: the paragraph can go"
    assert {name for name in internal if f"`{name}`" not in paragraph} == set(), paragraph
