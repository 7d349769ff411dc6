"""The reference assignments of a suite's cluster splits: compute them here, compare them with
the committed files, or write them.

KMeans' clusters on one-hot tables depend on the platform's rounding (see
``tabmoe.data._cluster_reference``), so a suite pins them in files under
``tabmoe/bench/suites/data/``. This script prints, per cluster split, the cluster sizes KMeans
gives on this machine and how many rows differ from the reference::

    python benchmarks/cluster_references.py --openml-cache ../shared/openml-cache
    python benchmarks/cluster_references.py --openml-cache ../shared/openml-cache --write

``--write`` (re)writes each reference named in the suite from this machine's KMeans; the
committed runs were drawn on the committed files, so write only for a new split.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from tabmoe.bench.suites import load_suite
from tabmoe.data._cluster_reference import read_reference, table_fingerprint, write_reference
from tabmoe.data.splits import ClusterSplit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="openml-ood")
    parser.add_argument("--openml-cache", required=True)
    parser.add_argument("--write", action="store_true", help="write the references from this machine")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    for split in suite.splits:
        rule = split.rule
        if not isinstance(rule, ClusterSplit):
            continue
        table = split.load(openml_cache=args.openml_cache)
        ranks = rule.compute_ranks(table)
        sizes = np.bincount(ranks, minlength=rule.n_clusters).tolist()
        if rule.reference is None:
            print(f"{split.name}: sizes {sizes}; no reference in the suite")
            continue
        if args.write:
            header = (f"{split.name}: KMeans cluster size rank (0 = largest) of every row of "
                      f"{table.source}, {len(ranks)} rows; sizes {sizes}; written by "
                      "benchmarks/cluster_references.py --write")
            write_reference(rule.reference, ranks, header, table_fingerprint(table.data))
            print(f"{split.name}: wrote {Path(rule.reference).name}, sizes {sizes}")
            continue
        reference = read_reference(rule.reference, len(ranks), rule.n_clusters, table_fingerprint(table.data))
        moved = int((reference != ranks).sum())
        print(f"{split.name}: sizes here {sizes}, reference "
              f"{np.bincount(reference, minlength=rule.n_clusters).tolist()}; {moved} row(s) differ")


if __name__ == "__main__":
    main()
