"""Markdown pipe tables, shared by the benchmark report and the shift diagnostics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def markdown(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A pipe table; a ``|`` within a cell (a split named ``a|b``) escaped, else it ends
    the cell and shifts the rest of the row one column to the right."""

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)
