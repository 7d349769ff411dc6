"""A cluster split's reference assignment: the cluster (size rank) of every row of the table,
as KMeans gave it on the machine that made a suite's committed runs.

KMeans on one-hot rows has many local optima whose inertias differ in the third decimal, so
rounding decides which of its ``n_init`` starts wins: on openml:56 (vote) the same code gave
a 70-row smallest cluster on one machine and a 79-row one on another (and on this one for
sparse input), and the committed runs of one split were drawn on both. A suite that states
a reference file gets those rows on every platform.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np


def resolve_reference(value: Any, base_dir: Any, where: str) -> str:
    """A suite's ``reference`` as an absolute path (relative ones from ``base_dir``), which
    must exist."""
    path = Path(str(value))
    path = path if path.is_absolute() or base_dir is None else Path(base_dir) / path
    if not path.is_file():
        raise ValueError(f"{where}: reference file not found: {path}")
    return str(path.resolve())


def read_reference(path: str | Path, n_rows: int, n_clusters: int) -> np.ndarray:
    """The size ranks stored in ``path`` (one integer per line, ``#`` comments), checked
    against the table's row count and the rule's number of clusters."""
    try:
        ranks = np.loadtxt(path, dtype=np.int64, comments="#", ndmin=1)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cluster split: reference {path} could not be read ({exc})") from exc
    if len(ranks) != n_rows:
        raise ValueError(
            f"cluster split: reference {path} holds {len(ranks)} rows, the table has {n_rows}"
        )
    if len(ranks) and (ranks.min() < 0 or ranks.max() >= n_clusters):
        raise ValueError(f"cluster split: reference {path} holds ranks outside 0..{n_clusters - 1}")
    return ranks


def write_reference(path: str | Path, ranks: np.ndarray, header: str) -> None:
    """Store ``ranks`` (one per line) under a ``#`` header saying where they came from."""
    np.savetxt(path, np.asarray(ranks, dtype=np.int64), fmt="%d", header=header, comments="# ")


def use_reference(computed: np.ndarray, path: str | Path, n_clusters: int) -> np.ndarray:
    """The reference ranks, with a warning when this platform's KMeans disagrees on any row."""
    reference = read_reference(path, len(computed), n_clusters)
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
