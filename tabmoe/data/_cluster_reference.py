"""A cluster split's reference assignment: the cluster (size rank) of every row of the table,
as KMeans gave it on the machine that made a suite's committed runs.

KMeans on one-hot rows has many local optima whose inertias differ in the third decimal, so
rounding decides which of its ``n_init`` starts wins: on openml:56 (vote) the same code gave
a 70-row smallest cluster on one machine and a 79-row one on another (and on this one for
sparse input), and the committed runs of one split were drawn on both. A suite that states
a reference file gets those rows on every platform, for the table it was written from
(its SHA-1 in the header: a changed or reordered table is an error).
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def resolve_reference(value: Any, base_dir: Any, where: str) -> str:
    """A suite's ``reference`` as an absolute path (relative ones from ``base_dir``), which
    must exist."""
    path = Path(str(value)).expanduser()  # "~/r.txt": the user's home, not <suite dir>/~/r.txt
    path = path if path.is_absolute() or base_dir is None else Path(base_dir) / path
    if not path.is_file():
        raise ValueError(f"{where}: reference file not found: {path}")
    return str(path.resolve())


_TABLE = "table sha1: "


def table_fingerprint(data: pd.DataFrame) -> str:
    """SHA-1 of the table as CSV (values, column names, row order): a reference pins rows by
    position, so it holds for this table only."""
    return hashlib.sha1(data.to_csv(index=False).encode()).hexdigest()


def read_reference(path: str | Path, n_rows: int, n_clusters: int, fingerprint: str | None = None) -> np.ndarray:
    """The size ranks stored in ``path`` (one integer per line, ``#`` comments), checked
    against the table's fingerprint (when the file and the caller both give one), row count
    and the rule's number of clusters."""
    path = Path(path).expanduser()  # a ClusterSplit(reference="~/r.txt") built in Python
    try:
        ranks = np.loadtxt(path, dtype=np.int64, comments="#", ndmin=1)
        stated = [line.split(_TABLE, 1)[1].strip() for line in Path(path).read_text().splitlines()
                  if line.startswith("#") and _TABLE in line]
    except (OSError, ValueError) as exc:
        raise ValueError(f"cluster split: reference {path} could not be read ({exc})") from exc
    if fingerprint is not None and stated and stated[0] != fingerprint:
        raise ValueError(
            f"cluster split: reference {path} was written for another table (its rows or values "
            f"differ: table SHA-1 {fingerprint[:12]}, the reference's {stated[0][:12]}); the "
            "reference would put the wrong rows out of distribution"
        )
    if len(ranks) != n_rows:
        raise ValueError(
            f"cluster split: reference {path} holds {len(ranks)} rows, the table has {n_rows}"
        )
    if len(ranks) and (ranks.min() < 0 or ranks.max() >= n_clusters):
        raise ValueError(f"cluster split: reference {path} holds ranks outside 0..{n_clusters - 1}")
    return ranks


def write_reference(path: str | Path, ranks: np.ndarray, header: str, fingerprint: str | None = None) -> None:
    """Store ``ranks`` (one per line) under a ``#`` header saying where they came from and,
    given one, the fingerprint of the table they belong to."""
    if fingerprint is not None:
        header = f"{header}\n{_TABLE}{fingerprint}"
    np.savetxt(path, np.asarray(ranks, dtype=np.int64), fmt="%d", header=header, comments="# ")


def use_reference(computed: np.ndarray, path: str | Path, n_clusters: int, fingerprint: str) -> np.ndarray:
    """The reference ranks, with a warning when this platform's KMeans disagrees on any row."""
    reference = read_reference(path, len(computed), n_clusters, fingerprint)
    moved = int((reference != computed).sum())
    if moved:
        warnings.warn(
            f"cluster split: KMeans on this platform puts {moved} of {len(computed)} rows in "
            f"another cluster than the reference {Path(path).name}; the reference is used, so "
            "the split's rows are those of the committed runs",
            RuntimeWarning,
            stacklevel=3,
        )
    return reference
