"""Building the frozen dataclasses of suites, splits and sources from parsed YAML, with errors
that name the offending entry and key."""

from __future__ import annotations

import dataclasses
from typing import Any


def check_keys(fields: dict[str, Any], allowed: set[str], where: str) -> None:
    """ValueError naming the keys of ``fields`` not in ``allowed``, and listing those."""
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; allowed are {sorted(allowed)}")


def build(cls: type, fields: dict[str, Any], where: str) -> Any:
    """``cls(**fields)``, rejecting keys that are not fields of ``cls`` (named in the error)."""
    check_keys(fields, {f.name for f in dataclasses.fields(cls)}, where)
    try:
        return cls(**fields)
    except TypeError as exc:  # a required field is missing
        raise ValueError(f"{where}: {exc}") from None


#: Seeds go to ``np.random.RandomState``, which takes 0 <= seed < 2**32.
MAX_SEED = 2**32 - 1


def parse_seeds(value: Any, where: str) -> tuple[int, ...]:
    """A YAML list of distinct integer seeds in [0, 2**32) as a tuple."""
    if not isinstance(value, list) or not value or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in value
    ):
        raise ValueError(f"{where}: expected a non-empty list of integers, got {value!r}")
    bad = [s for s in value if not 0 <= s <= MAX_SEED]
    if bad:
        raise ValueError(f"{where}: seeds must be in [0, 2**32), got {bad}")
    repeated = sorted({s for s in value if value.count(s) > 1})
    if repeated:  # each would plan, run and store the same runs twice
        raise ValueError(f"{where}: seeds {repeated} are listed more than once")
    return tuple(value)
