"""Rename a protocol in committed run records, in place (no rerun): files, run ids, hashes.

    python scripts/rename_protocol.py benchmarks/results/openml-ood [--old untuned --new fixed-budget]

For every ``runs/<suite>/<split>/<model>/<old>-seed<k>.json`` under the results folder:
``protocol``, ``run_id`` and ``config.protocol`` take the new name, ``config_hash`` is
recomputed the way :attr:`tabmoe.bench.plan.RunSpec.config_hash` computes it (SHA-1 of the
sorted-key JSON of ``config``), and the file moves to ``<new>-seed<k>.json``. Everything
else in the record (scores, times, versions, git revision) is kept byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from tabmoe.bench.storage import dumps


def config_hash(config: dict) -> str:
    return hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]


def rename(results: Path, old: str, new: str) -> int:
    count = 0
    for path in sorted((results / "runs").glob(f"*/*/*/{old}-seed*.json")):
        record = json.loads(path.read_text(encoding="utf8"))
        if record["config_hash"] != config_hash(record["config"]):
            raise SystemExit(f"{path}: its config_hash does not match its config; not touched")
        suite, split, model, protocol, seed = record["run_id"].split("/")
        assert protocol == old == record["protocol"] == record["config"]["protocol"], path
        record["protocol"] = record["config"]["protocol"] = new
        record["run_id"] = "/".join([suite, split, model, new, seed])
        record["config_hash"] = config_hash(record["config"])
        target = path.with_name(f"{new}-{seed}.json")
        target.write_text(dumps(record) + "\n", encoding="utf8")
        path.unlink()
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path)
    parser.add_argument("--old", default="untuned")
    parser.add_argument("--new", default="fixed-budget")
    args = parser.parse_args()
    print(f"{rename(args.results, args.old, args.new)} records renamed {args.old} -> {args.new}")


if __name__ == "__main__":
    main()
