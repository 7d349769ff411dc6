"""Do two benchmark reports (report.md) hold the same accuracy tables?

    python scripts/compare_reports.py benchmarks/results/smoke/report.md results/smoke/report.md

Compares everything the report says about accuracy: the per-protocol summaries, per-split
tables and ORACLE tables, i.e. the report up to its "## Cost" section, without the
"Code: git ..." line (revision and package versions), the "Total compute" sentences and
the wording after the run count's "N failed" (whether the report knew the run's plan).
Timings are left out: they differ
from machine to machine. Exit status 0 if equal, 1 with a unified diff if not.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path


def accuracy_part(text: str) -> list[str]:
    """The lines of a report.md that hold accuracies (see the module docstring)."""
    head = text.split("\n## Cost", 1)[0]
    # Each protocol's heading sentence ends with its compute ("Total compute: ... hours"):
    # a timing, cut like the others. The run count's sentence ends as the report knew the
    # plan ("0 failed or unfinished." after a run; a standalone report cannot count runs
    # never started and says so): the counts are compared, not the wording.
    lines = [re.sub(r" ?Total compute: .*$", "", line) for line in head.splitlines()
             if not line.startswith("Code: git ")]
    return [re.sub(r"^(\d+ finished runs .*?; \d+ failed)\b.*$", r"\1", line) for line in lines]


def differences(expected: Path, actual: Path) -> list[str]:
    """Unified diff of the accuracy parts of two reports (empty if they agree)."""
    return list(difflib.unified_diff(
        accuracy_part(expected.read_text(encoding="utf8")),
        accuracy_part(actual.read_text(encoding="utf8")),
        str(expected), str(actual), lineterm="",
    ))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: compare_reports.py EXPECTED_REPORT ACTUAL_REPORT", file=sys.stderr)
        return 2
    diff = differences(Path(argv[0]), Path(argv[1]))
    if diff:
        print("\n".join(diff))
        print(f"accuracy tables differ: {argv[0]} vs {argv[1]}", file=sys.stderr)
        return 1
    print(f"accuracy tables equal: {argv[0]} and {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
