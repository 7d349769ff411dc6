"""tabmoe: bidirectional attention as a mixture of continuous word experts, for tables."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._paper_config import PAPER_CONFIG, paper_config
from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .estimator import TabularMoEClassifier
    from .tokenizer import (
        ColumnTokenizer,
        ColumnWarning,
        LabelColumnWarning,
        NearUniqueColumnWarning,
        NumbersAsTextWarning,
    )

__all__ = [
    "ColumnTokenizer",
    "ColumnWarning",
    "LabelColumnWarning",
    "NearUniqueColumnWarning",
    "NumbersAsTextWarning",
    "PAPER_CONFIG",
    "TabularMoEClassifier",
    "paper_config",
]

# Imported on first use (PEP 562), so that `import tabmoe.bench.cli` (``tabmoe-bench --help``)
# does not load torch.
_LAZY = {
    "TabularMoEClassifier": ".estimator",
    "ColumnTokenizer": ".tokenizer",
    "ColumnWarning": ".tokenizer",
    "LabelColumnWarning": ".tokenizer",
    "NearUniqueColumnWarning": ".tokenizer",
    "NumbersAsTextWarning": ".tokenizer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
