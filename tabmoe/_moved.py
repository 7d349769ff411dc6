"""Old import paths kept for one release after the layout change of issue 18.

Each old module (``tabmoe/model.py``, ``tabmoe/datasets/``, ...) is a two-line shim calling
:func:`reexport`: importing it warns (``DeprecationWarning`` naming the new path) and gives
the new module's names, so old imports and pickles that name old paths keep working.
"""

from __future__ import annotations

import importlib
import warnings

#: old module -> the module it moved to (tests/test_layout.py imports every one).
MOVED: dict[str, str] = {
    "tabmoe.analogy": "tabmoe.interpret.analogy",
    "tabmoe.bench.environment": "tabmoe.bench._environment",
    "tabmoe.bench.metrics": "tabmoe.metrics",
    "tabmoe.datasets": "tabmoe.data",
    "tabmoe.datasets.files": "tabmoe.data.files",
    "tabmoe.datasets.openml": "tabmoe.data.openml",
    "tabmoe.datasets.paper": "tabmoe.data.paper",
    "tabmoe.datasets.sources": "tabmoe.data.sources",
    "tabmoe.datasets.table": "tabmoe.data.table",
    "tabmoe.defaults": "tabmoe._paper_config",
    "tabmoe.ensemble": "tabmoe.nn.ensemble",
    "tabmoe.explain": "tabmoe.interpret.explain",
    "tabmoe.fitting": "tabmoe.nn._base",
    "tabmoe.model": "tabmoe.nn.network",
    "tabmoe.models": "tabmoe.registry",
    "tabmoe.moe": "tabmoe.interpret.moe",
    "tabmoe.objective": "tabmoe.nn.objective",
    "tabmoe.shift": "tabmoe.data.shift",
    "tabmoe.spec": "tabmoe.data._spec",
    "tabmoe.splits": "tabmoe.data.splits",
    "tabmoe.suites": "tabmoe.bench.suites",
    "tabmoe.trainer": "tabmoe.nn.trainer",
}

#: old module -> {name it had: the new module's name for it}, for names renamed after the move
#: (tabmoe.ensemble.member_loss(loss_fn) is now the class tabmoe.nn.ensemble.MemberLoss(loss_fn)).
RENAMED: dict[str, dict[str, str]] = {
    "tabmoe.ensemble": {"member_loss": "MemberLoss"},
}


def reexport(old: str, namespace: dict) -> None:
    """Fill the shim module ``old``'s ``namespace`` with its new module's names (and the old
    names of those renamed since, :data:`RENAMED`), and warn."""
    new = MOVED[old]
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; import from {new}.",
        DeprecationWarning,
        stacklevel=3,
    )
    module = importlib.import_module(new)
    namespace.update(
        {k: v for k, v in vars(module).items() if not (k.startswith("__") and k.endswith("__"))}
    )
    renamed = RENAMED.get(old, {})
    namespace.update({old_name: getattr(module, name) for old_name, name in renamed.items()})
    if hasattr(module, "__all__"):
        namespace["__all__"] = list(module.__all__)
