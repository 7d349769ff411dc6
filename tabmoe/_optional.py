"""Imports of optional dependencies, failing with the extra to install."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found on the path; one set to None in
    ``sys.modules``, as a test simulates an uninstalled package, cannot)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules as None: find_spec refuses it, an import fails
        return False


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
