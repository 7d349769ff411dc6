"""Imports of the baselines' optional dependencies, failing with the extra to install."""

from __future__ import annotations

import importlib
from typing import Any


def optional_import(module: str, name: str, extra: str = "baselines") -> Any:
    """``module.name`` from an optional dependency (ImportError naming the extra otherwise)."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(
            f"{name} needs the optional package {module.split('.')[0]!r}: "
            f"install the extra {extra!r} (from the tabmoe repository: pip install '.[{extra}]')."
        ) from exc
