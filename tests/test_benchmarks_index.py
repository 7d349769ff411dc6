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
