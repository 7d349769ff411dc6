"""The ``tabmoe-bench`` console script: the CLI, or one line naming the extra it needs.

The script is installed with tabmoe whatever the extras, but the CLI is built on click (the
``bench`` extra); without it the command died with a ``ModuleNotFoundError`` traceback. A
command that needs another extra (pyyaml for a suite file, optuna for the tuned protocol,
matplotlib for a report's figures) ends the same way: one line naming it, no traceback.
"""

from __future__ import annotations

import sys
from typing import Any


def main(*args: Any, **kwargs: Any) -> Any:
    try:
        from .cli import main as cli
    except ModuleNotFoundError as exc:
        if exc.name != "click":
            raise
        sys.exit(
            "tabmoe-bench needs the 'bench' extra (missing: click): "
            "from the tabmoe repository, pip install '.[bench]'"
        )
    from .._optional import MissingExtraError

    try:
        return cli(*args, **kwargs)
    except MissingExtraError as exc:  # raised before any run: exit 2, as a usage error (EXIT_CODES)
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(2)
