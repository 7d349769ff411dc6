"""Out-of-distribution split definitions: declarative, seeded, checked for leakage every time.

A :class:`SplitDefinition` names a table (:mod:`tabmoe.data.sources`), a *rule* that
gives every row a domain value and puts it in-distribution (ID) or out-of-distribution
(OOD), and the sizes of the parts carved from each side::

    ID rows  -> train / validation / id_test        (seeded, stratified by label when possible)
    OOD rows -> ood_test [/ ood_validation]          (ood_validation only when asked for)

Rules (YAML ``split: {by: ..., ...}``, keys = the dataclass fields; defined in
``tabmoe.data.split_rules``, importable from here too):

* ``values``    :class:`ValueSplit` — a column's values: ``ood_values`` vs ``id_values``
  (default: every other value). Rows with a missing value are excluded.
* ``threshold`` :class:`ThresholdSplit` — a numeric column above (or below) a ``threshold``
  or a ``quantile`` of the column is OOD.
* ``time``      :class:`TimeSplit` — the latest ``ood_fraction`` of rows in time order (a
  column, or row order when ``column`` is omitted) is OOD.
* ``cluster``   :class:`ClusterSplit` — KMeans (seeded by ``random_state``) on one-hot
  nominal + standardised numeric features; clusters are numbered by size (0 = largest) and
  ``ood_clusters`` are held out.

The domain is fixed by the definition (quantiles, cut points and clusters are computed once
on the whole table); the split seed only changes how ID and OOD rows are partitioned. The
domain column is dropped from every part unless ``keep_domain`` is set. :func:`check_split`
runs on every split made: parts share no row, ID and OOD share no domain value, ordered
domains do not interleave, and a dropped domain column is really gone.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from .._frame import python_value
from ._spec import MAX_SEED, build, check_keys, parse_seeds
from .sources import DataSource, LoadContext, source_from_dict
from .split_rules import (
    RULES,
    Assignment,
    ClusterSplit,
    SplitRule,
    ThresholdSplit,
    TimeSplit,
    ValueSplit,
    rule_from_dict,
)
from .table import Table

ID_PARTS = ("train", "validation", "id_test")
OOD_PARTS = ("ood_validation", "ood_test")
PARTS = ID_PARTS + OOD_PARTS


class LeakageError(AssertionError):
    """A split violates its ID / OOD separation."""


@dataclass
class SplitData:
    """The parts of one split, made by :meth:`SplitDefinition.make`.

    ``parts`` maps part name -> DataFrame (features + label, domain column dropped unless
    kept); index = row positions in the source table. ``ood_validation`` is present only when
    requested. ``domain`` holds the domain value of every assigned row (same index).
    """

    name: str
    table: str
    source: str
    target: str
    seed: int
    parts: dict[str, pd.DataFrame]
    domain: pd.Series
    domain_column: str | None
    domain_label: str
    keep_domain: bool
    ordered: bool
    excluded: int

    @property
    def train(self) -> pd.DataFrame:
        return self.parts["train"]

    @property
    def validation(self) -> pd.DataFrame:
        return self.parts["validation"]

    @property
    def id_test(self) -> pd.DataFrame:
        return self.parts["id_test"]

    @property
    def ood_test(self) -> pd.DataFrame:
        return self.parts["ood_test"]

    @property
    def ood_validation(self) -> pd.DataFrame | None:
        return self.parts.get("ood_validation")

    def frame(self, side: Literal["id", "ood"]) -> pd.DataFrame:
        """All ID (train + validation + id_test) or all OOD rows."""
        names = ID_PARTS if side == "id" else OOD_PARTS
        return pd.concat([self.parts[p] for p in names if p in self.parts])

    def features(self, part: str) -> pd.DataFrame:
        """Features of a part: every column but the label. A domain column kept with
        ``keep_domain`` is one of them, so the model sees the held-out values it must
        extrapolate to (before 2026-12-05 it was removed here too: no model saw it)."""
        return self.parts[part].drop(columns=[self.target])


def check_split(split: SplitData) -> None:
    """Raise :class:`LeakageError` unless ``split`` separates ID from OOD cleanly."""
    where = f"split {split.name!r} (seed {split.seed})"
    for name, part in split.parts.items():
        if split.target not in part.columns:
            raise LeakageError(f"{where}: part {name} lost the label column {split.target!r}")
        if split.domain_column is not None and not split.keep_domain and split.domain_column in part.columns:
            raise LeakageError(f"{where}: part {name} still has the domain column {split.domain_column!r}")
    for required in ("train", "ood_test"):
        if len(split.parts.get(required, ())) == 0:
            raise LeakageError(f"{where}: part {required} is empty")
    rows = pd.Series(
        np.concatenate([np.full(len(part), name, dtype=object) for name, part in split.parts.items()]),
        index=pd.Index(np.concatenate([part.index.to_numpy() for part in split.parts.values()])),
    )
    repeated = rows.index[rows.index.duplicated(keep=False)]
    if len(repeated):
        row = repeated[0]
        raise LeakageError(f"{where}: row {row} is in {sorted(set(rows.loc[[row]]))} (shared row index)")
    missing = rows.index.difference(split.domain.index)
    if len(missing):
        raise LeakageError(f"{where}: rows {list(missing[:5])} have no domain value")
    is_ood = rows.isin(OOD_PARTS).to_numpy()
    id_values = split.domain.loc[rows.index[~is_ood]]
    ood_values = split.domain.loc[rows.index[is_ood]]
    shared = set(id_values.unique()) & set(ood_values.unique())
    if shared:
        raise LeakageError(
            f"{where}: domain values {sorted(map(str, shared))[:10]} of {split.domain_label!r} "
            "occur in both ID and OOD parts"
        )
    if split.ordered and not (id_values.max() < ood_values.min() or ood_values.max() < id_values.min()):
        raise LeakageError(f"{where}: ID and OOD ranges of {split.domain_label!r} interleave")


def _carve(
    index: pd.Index, y: pd.Series, size: float, rng: np.random.RandomState, where: str
) -> tuple[pd.Index, pd.Index]:
    """Split ``index`` into (rest, carved) with ``carved`` = ceil(size * n), stratified when possible."""
    if size == 0:
        return index, index[:0]
    return _carve_rows(index, y, math.ceil(size * len(index)), rng, where)


def _carve_rows(
    index: pd.Index, y: pd.Series, n_carved: int, rng: np.random.RandomState, where: str
) -> tuple[pd.Index, pd.Index]:
    """Split ``index`` into (rest, carved) with ``n_carved`` rows carved, stratified when possible."""
    if n_carved >= len(index):
        raise ValueError(f"{where}: carving {n_carved} of {len(index)} rows would leave none")
    labels = y.loc[index]
    counts = labels.value_counts()
    counts = counts[counts > 0]
    stratify = (
        labels
        if counts.min() >= 2 and min(n_carved, len(index) - n_carved) >= len(counts)
        else None
    )
    rest, carved = train_test_split(index, test_size=n_carved, stratify=stratify, random_state=rng)
    return rest.sort_values(), carved.sort_values()


def _check_sortable(labels: pd.Series, table: Table, split: str) -> None:
    """Labels that stratification can sort: a column mixing text and numbers (``1`` and
    ``"b"``) failed with "'<' not supported between instances of 'int' and 'str'"."""
    try:
        np.unique(labels.to_numpy())
    except TypeError:
        kinds = sorted({type(v).__name__ for v in labels})
        raise ValueError(
            f"split {split!r}: label column {table.target!r} of table {table.name!r} mixes values "
            f"of types {kinds} that cannot be ordered; convert it to one type"
        ) from None


def _cap(index: pd.Index, y: pd.Series, cap: int | None, rng: np.random.RandomState, where: str) -> pd.Index:
    """``index`` itself, or a stratified sample of ``cap`` of its rows when it has more."""
    if cap is None or len(index) <= cap:
        return index
    return _carve_rows(index, y, cap, rng, where)[1]


def check_name(name: Any, what: str) -> None:
    """A split or suite name is a path part of every stored result (``suite/split/...``):
    a non-empty string without ``/`` or control characters (a NUL byte failed the record's
    write after the run, a newline split the failure file's run id), without leading or
    trailing spaces (the command line strips the names it is given: ``--splits " price"``
    could not select a split ``" price"``), and not ``.`` or ``..``.
    (An unquoted ``2020`` in YAML is an int, which the stored record could not hold.)"""
    if (
        not isinstance(name, str) or not name.strip() or "/" in name or name in (".", "..")
        or any(unicodedata.category(c) == "Cc" for c in name) or name != name.strip()
    ):
        raise ValueError(
            f"{what} {name!r} must be a non-empty string without '/' or control characters, "
            "nor spaces at either end (quote a number in YAML: '2020')."
        )


#: Why a definition without a data source (``data=None``) cannot load its table.
_NO_SOURCE = "no data source (data=None) to load the table from; pass it to make(seed, table=...)"


@dataclass(frozen=True)
class SplitDefinition:
    """One OOD split: a table, a rule, part sizes, and why it models a real shift.

    ``validation_size`` and ``id_test_size`` are fractions of the ID rows;
    ``ood_validation_size`` a fraction of the OOD rows (0 = no ood_validation part).
    ``seeds`` overrides the suite's seeds for this split. ``max_id_rows`` caps the ID rows:
    when there are more, a stratified sample of that many (drawn with the split seed) is
    kept before the ID parts are carved, so every ID part shrinks in proportion.
    ``max_ood_rows`` likewise caps the OOD rows (a stratified sample, before
    ``ood_validation`` is carved) to bound prediction cost on very large OOD sides.
    ``data=None``: no source, the table is passed to :meth:`make` (``table=``).
    """

    name: str
    data: DataSource | None
    rule: SplitRule
    rationale: str = ""
    keep_domain: bool = False
    validation_size: float = 0.15
    id_test_size: float = 0.15
    ood_validation_size: float = 0.0
    seeds: tuple[int, ...] | None = None
    max_id_rows: int | None = None
    max_ood_rows: int | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "split name")
        if not isinstance(self.rationale, str):
            raise ValueError(f"split {self.name!r}: rationale must be text, got {self.rationale!r}")
        for key in ("max_id_rows", "max_ood_rows"):
            cap = getattr(self, key)
            if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 10):
                raise ValueError(f"split {self.name!r}: {key} must be an integer >= 10 or null, got {cap!r}")
        for key in ("validation_size", "id_test_size", "ood_validation_size"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise ValueError(f"split {self.name!r}: {key} must be in [0, 1), got {value!r}")
        if self.validation_size + self.id_test_size >= 1:
            raise ValueError(f"split {self.name!r}: validation_size + id_test_size must be < 1")
        if not isinstance(self.keep_domain, (bool, np.bool_)):  # a string "false" would keep it
            raise ValueError(f"split {self.name!r}: keep_domain must be true or false, got {self.keep_domain!r}")
        if self.keep_domain and getattr(self.rule, "column", None) is None:
            raise ValueError(f"split {self.name!r}: keep_domain needs a rule with a domain column")

    def load(self, *, seed: int = 0, openml_cache: Any = None, download: bool = False) -> Table:
        """The source table (for the simulation, the one of data seed ``seed``); ``download``:
        fetch an OpenML dataset the cache lacks (:func:`~tabmoe.data.openml.load_openml`)."""
        if self.data is None:  # else "'NoneType' object has no attribute 'load'"
            raise ValueError(f"split {self.name!r}: {_NO_SOURCE}")
        return self.data.load(LoadContext(openml_cache=openml_cache, seed=seed, download=download))

    def make(
        self, seed: int = 0, *, openml_cache: Any = None, table: Table | None = None, download: bool = False
    ) -> SplitData:
        """Load the table (unless given), split it with ``seed``, check for leakage, return it."""
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
            # numpy's words named neither ("Cannot cast scalar from dtype('float64')...")
            raise ValueError(f"split {self.name!r}: seed must be an integer in [0, 2**32), got {seed!r}")
        if table is None and self.data is None:
            raise ValueError(f"split {self.name!r}: {_NO_SOURCE}")
        if table is None:
            try:
                table = self.load(seed=seed, openml_cache=openml_cache, download=download)
            except ValueError as exc:  # "target column 'klass' not in car.csv": of which split?
                raise ValueError(f"split {self.name!r}: {exc}") from exc
        try:
            assignment = self.rule.assign(table)
        except ValueError as exc:  # the rule's message names its column, not the split
            raise ValueError(f"split {self.name!r}: {exc}") from exc
        labelled = table.y.loc[assignment.domain.index].notna()
        domain, ood = assignment.domain[labelled], assignment.ood[labelled]
        for side, rows in (("ID", ~assignment.ood), ("OOD", assignment.ood)):
            # else check_split's "part ood_test is empty", which reads as a leak
            if not (labelled & rows).any():
                raise ValueError(
                    f"split {self.name!r}: no labelled {side} rows (all {int(rows.sum())} {side} rows "
                    f"of table {table.name!r} have a missing {table.target!r})"
                )
        _check_sortable(table.y.loc[domain.index], table, self.name)
        rng = np.random.RandomState(seed)
        y = table.y
        where = f"split {self.name!r}"
        id_rows = _cap(domain.index[~ood.to_numpy()], y, self.max_id_rows, rng, f"{where} max_id_rows")
        rest, id_test = _carve(id_rows, y, self.id_test_size, rng, f"{where} id_test")
        # The quotient can land a float above an integer (0.15 / 0.85 * 85): one row more than
        # validation_size of the ID rows. Kept, and documented in docs/ood.md: every committed
        # split, and the research studies' pairs, were drawn this way.
        train, validation = _carve(
            rest, y, self.validation_size / (1 - self.id_test_size), rng, f"{where} validation"
        )
        ood_rows = _cap(domain.index[ood.to_numpy()], y, self.max_ood_rows, rng, f"{where} max_ood_rows")
        ood_test, ood_validation = _carve(ood_rows, y, self.ood_validation_size, rng, f"{where} ood_validation")
        frame = table.data
        if assignment.column is not None and not self.keep_domain:
            frame = frame.drop(columns=assignment.column)
        classes = y.loc[train].unique()
        if len(classes) < 2:  # else every model failed in its own fit, naming no split
            one = python_value(classes[0])  # 0, not np.int64(0)
            held = y.loc[id_rows].value_counts()
            held = held[held > 0]
            raise ValueError(
                f"{where}: its ID training rows hold one class of {table.target!r} "
                f"({one!r}; seed {seed}), and a classifier needs two; "
                + ("choose a rule that leaves several classes in distribution" if len(held) < 2 else
                   # a rare class all carved into validation / id_test (unstratified below 2 rows)
                   f"its ID rows hold {len(held)} ({', '.join(f'{k!r}: {v}' for k, v in held.items())}), "
                   "but validation and id_test took every row of all but one: try another seed, "
                   "smaller validation_size / id_test_size, or a rule that leaves more ID rows")
            )
        index = {"train": train, "validation": validation, "id_test": id_test, "ood_test": ood_test}
        if self.ood_validation_size > 0:
            index["ood_validation"] = ood_validation
        split = SplitData(
            name=self.name,
            table=table.name,
            source=table.source,
            target=table.target,
            seed=seed,
            parts={name: frame.loc[rows] for name, rows in index.items()},
            domain=domain,
            domain_column=assignment.column,
            domain_label=assignment.label,
            keep_domain=self.keep_domain,
            ordered=assignment.ordered,
            excluded=len(table.data) - len(domain),
        )
        check_split(split)
        return split

    @classmethod
    def from_dict(cls, spec: dict[str, Any], *, defaults: dict[str, Any] | None = None, base_dir: Any = None) -> SplitDefinition:
        """Parse one entry of a suite file's ``splits:`` list (see the module docstring)."""
        if not isinstance(spec, dict) or "name" not in spec:
            raise ValueError(f"a split needs a mapping with a name, got {spec!r}")
        where = f"split {spec['name']!r}"
        fields = {**(defaults or {}), **spec}
        if "rule" in fields:  # before "missing 'split'", which a `rule:` entry also is
            raise ValueError(f"{where}: write the rule under 'split:', not 'rule:'")
        # the keys of a suite file's entry: the fields, with the rule under `split:` (the
        # unknown-key error of build() listed `rule`, which is refused above, and not `split`)
        check_keys(fields, {f.name for f in dataclasses.fields(cls)} - {"rule"} | {"split"}, where)
        for key in ("data", "split"):
            if key not in fields:
                raise ValueError(f"{where}: missing {key!r}")
        try:
            fields["data"] = source_from_dict(fields["data"], base_dir=base_dir, where=f"{where}.data")
            fields["rule"] = rule_from_dict(fields.pop("split"), where=f"{where}.split", base_dir=base_dir)
        except ValueError as exc:  # a rule's own check ("cluster split: ood_clusters [3] ...") named no split
            if str(exc).startswith(where):
                raise
            raise ValueError(f"{where}: {exc}") from None
        if "rationale" in fields and fields["rationale"] is None:  # an empty `rationale:`
            fields["rationale"] = ""
        if fields.get("seeds") is not None:
            fields["seeds"] = parse_seeds(fields["seeds"], f"{where}.seeds")
        return build(cls, fields, where)


__all__ = [
    "ID_PARTS", "OOD_PARTS", "PARTS", "RULES", "Assignment", "ClusterSplit", "LeakageError",
    "SplitData", "SplitDefinition", "SplitRule", "ThresholdSplit", "TimeSplit", "ValueSplit",
    "check_name", "check_split", "rule_from_dict",
]
