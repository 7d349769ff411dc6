"""Rename a protocol in committed run records, in place (no rerun): files, run ids, hashes.

    python scripts/rename_protocol.py benchmarks/results/openml-ood [--old untuned --new fixed-budget]

The logic is ``tabmoe.bench.rename.rename_protocol``; ``tabmoe-bench rename-protocol RESULTS``
(which a pip-installed tabmoe has too) renames every old protocol name to its current one.
This script also takes any ``--old`` / ``--new`` pair.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tabmoe.bench.rename import config_hash, rename_protocol

__all__ = ["config_hash", "main", "rename"]


def rename(results: Path, old: str, new: str) -> int:
    """The number of records renamed; those left as they were are printed."""
    written, kept = rename_protocol(results, old, new)
    for line in kept:
        print(f"warning: {line}")
    return len(written)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path)
    parser.add_argument("--old", default="untuned")
    parser.add_argument("--new", default="fixed-budget")
    args = parser.parse_args()
    print(f"{rename(args.results, args.old, args.new)} records renamed {args.old} -> {args.new}")


if __name__ == "__main__":
    main()
