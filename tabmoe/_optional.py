"""Imports of optional dependencies, failing with the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class MissingExtraError(ImportError):
    """An optional package is not installed; the message names it and the extra to install."""


def optional_module(module: str, what: str, extra: str, package: str | None = None) -> ModuleType:
    """``import module`` for ``what`` (a function or class name), an ImportError naming the
    pip package (``package``, default the module's top name) and the extra otherwise."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = package or module.split(".")[0]
        raise MissingExtraError(
            f"{what} needs the optional package {package!r}: "
            f"install the extra {extra!r} (from the tabmoe repository: pip install '.[{extra}]')."
        ) from exc


def optional_import(module: str, name: str, extra: str = "baselines") -> Any:
    """``module.name`` from an optional dependency (ImportError naming the extra otherwise)."""
    return getattr(optional_module(module, name, extra), name)
