"""The package's shape (issue 18): no import cycles in tabmoe/, no module over 600 lines.

The import graph is read from the source with ``ast``, so it sees every import a module
can run: module-level ones AND imports inside functions (lazy imports of optional or heavy
dependencies). A function-level import that closes a cycle is a cycle all the same: it only
hides it until the function runs. Imports under ``if TYPE_CHECKING:`` are left out (they
never run). An edge goes to the module imported: ``from . import x`` to ``tabmoe.x`` when
that is a module, else to the package; importing ``a.b.c`` is not counted as importing the
packages ``a`` and ``a.b`` (their ``__init__`` files are nodes with their own edges).
"""

from __future__ import annotations

import ast
from pathlib import Path

import tabmoe

PACKAGE = Path(tabmoe.__file__).resolve().parent
MAX_LINES = 600


def module_names() -> dict[str, Path]:
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["tabmoe", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def import_graph() -> dict[str, set[str]]:
    """Module -> the tabmoe modules it imports (module- and function-level)."""
    modules = module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_is_read_correctly():
    graph = import_graph()
    assert "tabmoe.nn.trainer" in graph["tabmoe.estimator"]  # from .nn.trainer import ...
    assert "tabmoe.persistence" in graph["tabmoe._estimator_state"]  # from . import persistence
    assert "tabmoe.tokenizer" in graph["tabmoe.data.files"]  # from ..tokenizer import ...
    assert "tabmoe.registry" in graph["tabmoe.bench.cli"]  # inside a function
    # and the cycle finder finds a cycle through a function-level import
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_in_tabmoe():
    found = cycles(import_graph())
    assert not found, f"import cycles (module- or function-level imports): {found}"


def test_imports_run_one_way_bench_tuning_metrics():
    graph = import_graph()
    assert "tabmoe.metrics" in graph["tabmoe.tuning"]
    assert not any(m.startswith("tabmoe.bench") for m in graph["tabmoe.tuning"])
    assert not any(m.startswith(("tabmoe.bench", "tabmoe.tuning")) for m in graph["tabmoe.metrics"])


def test_no_module_over_600_lines():
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them): {long}"
