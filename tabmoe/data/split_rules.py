"""The rules of an out-of-distribution split: which rows are ID, which OOD, and why.

A rule gives every row of a table a domain value and puts it in-distribution (ID) or
out-of-distribution (OOD) (YAML ``split: {by: ..., ...}``, keys = the dataclass fields):

* ``values``    :class:`ValueSplit` — a column's values: ``ood_values`` vs ``id_values``
  (default: every other value). Rows with a missing value are excluded.
* ``threshold`` :class:`ThresholdSplit` — a numeric column above (or below) a ``threshold``
  or a ``quantile`` of the column is OOD.
* ``time``      :class:`TimeSplit` — the latest ``ood_fraction`` of rows in time order (a
  column, or row order when ``column`` is omitted) is OOD.
* ``cluster``   :class:`ClusterSplit` — KMeans (seeded by ``random_state``) on one-hot
  nominal + standardised numeric features; clusters are numbered by size (0 = largest) and
  ``ood_clusters`` are held out.

The domain is fixed by the rule (quantiles, cut points and clusters are computed once on
the whole table). ``tabmoe.data.splits`` carves the parts from each side and checks them.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from .._numeric import numeric_kind, numeric_values
from ..tokenizer import is_categorical_dtype
from ._cluster_reference import resolve_reference, table_fingerprint, use_reference
from ._spec import build
from .table import Table


@dataclass(frozen=True)
class Assignment:
    """What a rule says about a table's rows.

    ``domain`` and ``ood`` are indexed by the rows that got a domain (others are excluded);
    ``column`` is the table column the domain comes from (``None`` for cluster / row order);
    ``ordered`` means ID and OOD domain values must not interleave.
    """

    domain: pd.Series
    ood: pd.Series
    column: str | None
    ordered: bool
    label: str


def _column(table: Table, name: str, rule: str) -> pd.Series:
    if name not in table.data.columns:
        # YAML reads `column: 3` as the int 3, where a CSV header's names are text
        alike = next((c for c in table.data.columns if str(c) == str(name)), None)
        raise ValueError(
            f"{rule} split: column {name!r} not in table {table.name!r}; columns are "
            f"{list(table.data.columns)}"
            + (f" (the column {alike!r} is named by text: quote a number in YAML: '{name}')"
               if alike is not None and isinstance(alike, str) else
               f" (did you mean {alike!r}?)" if alike is not None else "")
        )
    if name == table.target:
        raise ValueError(
            f"{rule} split: column {name!r} is the label of {table.name!r}; splitting by the "
            "label is not a covariate shift"
        )
    return table.data[name]


def _numeric(column: pd.Series, rule: str) -> pd.Series:
    if is_categorical_dtype(column.dtype) or not pd.api.types.is_numeric_dtype(column.dtype):
        # "use a values split for nominal columns" misled on a datetime or timedelta column
        advice = (
            "use a values split for nominal columns" if is_categorical_dtype(column.dtype) else
            f"for the latest rows in time use a time split (by: time, column: {column.name!r})"
            if pd.api.types.is_datetime64_any_dtype(column.dtype) else "convert it to numbers first"
        )
        raise ValueError(f"{rule} split: column {column.name!r} has dtype {column.dtype}, not numeric; {advice}")
    return column.astype(float)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _plain_fields(rule: Any) -> None:
    """Set a rule's numpy scalars (``np.float64(38.0)`` from ``np.median``, ``np.int64(3)``,
    ``np.str_``), in lists and tuples too, as the Python scalars they equal: the rule's repr
    is hashed into its runs' config, and ``np.float64(38.0)`` would not find the runs of
    ``38.0`` (nor would ``n_clusters=np.int64(3)`` pass as an int). A list field becomes a
    tuple, as :func:`rule_from_dict` makes it: a rule built in Python with
    ``ood_values=["a"]`` was unhashable and, repr'd apart from the suite file's
    ``("a",)``, gave the same runs another config hash."""
    for f in dataclasses.fields(rule):
        value = getattr(rule, f.name)
        plain = _plain(value)
        if isinstance(plain, list):
            plain = tuple(plain)
        if plain is not value:
            object.__setattr__(rule, f.name, plain)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.generic | list | tuple) for v in value):
        return type(value)(_plain(v) for v in value)
    return value


def _require_list(value: Any, where: str, key: str) -> None:
    # A scalar is refused rather than wrapped: a string would otherwise be read as its characters.
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where}: {key} must be a list, got {value!r}")


def _require_number(value: Any, where: str, key: str) -> None:
    if not _is_number(value) or not math.isfinite(value):
        raise ValueError(f"{where}: {key} must be a finite number, got {value!r}")


def _value_key(value: Any) -> str:
    """The string a values split matches by; integral numbers as integers, so that ``1``
    matches ``1.0`` in an integer column that pandas read as float (it has a missing value)."""
    if _is_number(value) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _both_sides(ood: pd.Series, rule: str, what: str) -> None:
    if ood.all() or not ood.any():
        side = "OOD" if not ood.any() else "ID"
        raise ValueError(f"{rule} split on {what}: no {side} rows")


def _present_values(column: pd.Series, name: str) -> dict[str, Any]:
    """Each value of ``column`` under its integer key and its plain string form ("1" and
    "1.0"). Distinct values sharing a form (the int ``1`` and the string ``"1"`` of an object
    column) are refused, as are bools beside a number they equal: a rule matching by that
    form would keep one and silently drop the other's rows (or, for ``True`` and ``1``, take
    both)."""
    present: dict[str, Any] = {}
    clashes: dict[str, list] = {}
    for v in column.dropna().unique():
        for key in dict.fromkeys((_value_key(v), str(v))):
            if key in present:
                clashes.setdefault(key, [present[key]]).append(v)
            else:
                present[key] = v
    shown = [f"{values!r} all read as {key!r}" for key, values in clashes.items()] + _bools_equal_to_numbers(column)
    if shown:
        shown = "; ".join(shown)
        raise ValueError(
            f"values split on {name!r}: the column holds distinct values that a values rule "
            f"cannot tell apart ({shown}); convert the column to one type first"
        )
    return present


def _bools_equal_to_numbers(column: pd.Series) -> list[str]:
    """Bools of an object ``column`` beside a number they equal (``True == 1``, ``False ==
    0.0``), each shown with it: pandas' ``unique`` and ``isin`` take the two for one value,
    so a rule listing ``"True"`` also took the rows of ``1`` (a bool column concatenated with
    a 0/1 one), and ``1`` was "not in the column"."""
    if column.dtype != object:
        return []
    values = column.dropna()
    flag = np.fromiter((isinstance(v, bool | np.bool_) for v in values), dtype=bool, count=len(values))
    if not flag.any() or flag.all():
        return []
    others = values[~flag].unique()
    return [f"pandas matches {[b, *(v for v in others if v == b)]!r} as one value"
            for b in values[flag].unique() if any(v == b for v in others)]


#: How many of a column's values the error for a value it lacks lists.
SHOWN_VALUES = 50


@dataclass(frozen=True)
class ValueSplit:
    """Rows whose ``column`` is in ``ood_values`` are OOD, rows in ``id_values`` are ID.

    Omit one of the two to mean "every other (non-missing) value". Values match by their
    string form, so ``1`` in YAML matches an integer column and a ``"1"`` category alike;
    integral numbers compare as integers, so ``1`` also matches ``1.0`` in an integer column
    read as float because of a missing value. A listed value absent from the column is an
    error (it catches typos), and so is a column holding distinct values of one string form
    (the int ``1`` and the string ``"1"`` in an object column) or a bool beside a number it
    equals (``True`` and ``1``, which pandas matches as one value).
    """

    column: str
    ood_values: tuple | None = None
    id_values: tuple | None = None
    by: ClassVar[str] = "values"

    def __post_init__(self) -> None:
        _plain_fields(self)
        if self.ood_values is None and self.id_values is None:
            raise ValueError(f"values split on {self.column!r}: give ood_values, id_values or both")
        for key in ("ood_values", "id_values"):
            values = getattr(self, key)
            if values is not None:
                _require_list(values, f"values split on {self.column!r}", key)
            if values is not None and not values:
                raise ValueError(f"values split on {self.column!r}: {key} is empty")
            flags = [v for v in values or () if isinstance(v, bool)]
            if flags:
                raise ValueError(
                    f"values split on {self.column!r}: {key} has booleans {flags}; values match by "
                    f"their string form, so list a bool column's values as strings ({key}="
                    f"{[str(v) for v in flags]}); YAML reads yes/no/on/off as booleans, quote them ('no')"
                )

    def _resolve(self, key: str, present: dict[str, Any], other: list | None) -> list:
        values = getattr(self, key)
        if values is None:
            return [v for v in dict.fromkeys(present.values()) if v not in other]
        # A float 1.0 listed against a "1.0" category still matches by its plain string form.
        keys = [next((k for k in (_value_key(v), str(v)) if k in present), None) for v in values]
        unknown = [v for v, k in zip(values, keys, strict=True) if k is None]
        if unknown:
            held = sorted({str(v) for v in present.values()})
            # all of them: a typo in a numeric column of 45,211 rows printed 71 KB of values
            held = (f"its values are {held}" if len(held) <= SHOWN_VALUES else
                    f"it holds {len(held)} distinct values, the first {SHOWN_VALUES} in text order: "
                    f"{held[:SHOWN_VALUES]}")
            raise ValueError(f"values split: {key} {unknown} do not occur in column {self.column!r}; {held}")
        return [present[k] for k in keys]

    def assign(self, table: Table) -> Assignment:
        column = _column(table, self.column, "values")
        present = _present_values(column, self.column)
        if self.ood_values is not None:
            ood_values = self._resolve("ood_values", present, None)
            id_values = self._resolve("id_values", present, ood_values)
        else:
            id_values = self._resolve("id_values", present, None)
            ood_values = self._resolve("ood_values", present, id_values)
        both = sorted(str(v) for v in set(ood_values) & set(id_values))
        if both:
            raise ValueError(f"values split on {self.column!r}: {both} are in both id_values and ood_values")
        kept = column[column.isin(id_values + ood_values)]
        ood = kept.isin(ood_values)
        _both_sides(ood, "values", repr(self.column))
        return Assignment(kept, ood, self.column, ordered=False, label=self.column)


@dataclass(frozen=True)
class ThresholdSplit:
    """A numeric ``column`` above (``ood_side="above"``) or below a cut point is OOD.

    Give exactly one of ``threshold`` (in the column's units) or ``quantile`` in (0, 1) (of
    the whole column). Above: ID ``x <= t``, OOD ``x > t``; below: ID ``x >= t``, OOD ``x < t``.
    """

    column: str
    threshold: float | None = None
    quantile: float | None = None
    ood_side: Literal["above", "below"] = "above"
    by: ClassVar[str] = "threshold"

    def __post_init__(self) -> None:
        _plain_fields(self)
        where = f"threshold split on {self.column!r}"
        for key in ("threshold", "quantile"):
            if getattr(self, key) is not None:
                _require_number(getattr(self, key), where, key)
        if (self.threshold is None) == (self.quantile is None):
            raise ValueError(f"threshold split on {self.column!r}: give exactly one of threshold, quantile")
        if self.quantile is not None and not 0 < self.quantile < 1:
            raise ValueError(f"threshold split on {self.column!r}: quantile must be in (0, 1), got {self.quantile}")
        if self.ood_side not in ("above", "below"):
            raise ValueError(f"threshold split on {self.column!r}: ood_side must be 'above' or 'below', got {self.ood_side!r}")

    def assign(self, table: Table) -> Assignment:
        values = _numeric(_column(table, self.column, "threshold"), "threshold").dropna()
        if values.empty:  # else "at nan: no OOD rows"
            raise ValueError(
                f"threshold split: column {self.column!r} of table {table.name!r} has no values (all missing)"
            )
        cut = self.threshold if self.threshold is not None else _quantile(values, self.quantile, self.column)
        ood = values > cut if self.ood_side == "above" else values < cut
        _both_sides(ood, "threshold", f"{self.column!r} at {cut:g}")
        return Assignment(values, ood, self.column, ordered=True, label=f"{self.column} {self.ood_side} {cut:g}")


def _quantile(values: pd.Series, q: float, column: str) -> float:
    """The linearly interpolated ``q`` quantile of ``values``, or the infinite value it falls
    on or next to: pandas interpolates ``inf - inf`` (and ``-inf`` to a number) as NaN, and
    a cut at NaN made no OOD rows ("at nan: no OOD rows")."""
    with np.errstate(invalid="ignore"):  # numpy's warning of that inf - inf
        cut = float(values.quantile(q))
    if math.isnan(cut):
        low, high = (float(values.quantile(q, interpolation=side)) for side in ("lower", "higher"))
        if low == high or high < math.inf:  # between two equal infinities, or -inf and a number
            return low
        raise ValueError(
            f"threshold split: the {q:g} quantile of column {column!r} falls between -inf and "
            "inf; give a threshold instead"
        )
    return cut


@dataclass(frozen=True)
class TimeSplit:
    """The latest ``ood_fraction`` of rows in time order is OOD.

    ``column`` (numeric, datetime or ordered categorical) gives the time; ``None`` means row
    order (for tables stored chronologically). Rows tied at the cut all go to OOD, so the cut
    never splits a time value; the OOD share can therefore exceed ``ood_fraction``.
    """

    column: str | None = None
    ood_fraction: float = 0.2
    by: ClassVar[str] = "time"

    def __post_init__(self) -> None:
        _plain_fields(self)
        if not _is_number(self.ood_fraction) or not 0 < self.ood_fraction < 1:
            raise ValueError(f"time split: ood_fraction must be a number in (0, 1), got {self.ood_fraction!r}")

    def _key(self, table: Table) -> pd.Series:
        if self.column is None:
            return pd.Series(np.arange(len(table.data)), index=table.data.index, name="row order")
        column = _column(table, self.column, "time")
        if isinstance(column.dtype, pd.CategoricalDtype):
            if not column.cat.ordered:
                raise ValueError(f"time split: column {self.column!r} is an unordered category")
            return column.cat.codes.where(column.notna()).dropna().astype(int)
        if pd.api.types.is_datetime64_any_dtype(column.dtype):
            return column.dropna()
        if is_categorical_dtype(column.dtype) or not pd.api.types.is_numeric_dtype(column.dtype):
            # _numeric's advice, a values split, does not order rows in time
            raise ValueError(
                f"time split: column {self.column!r} has dtype {column.dtype}; a time column must "
                "be numeric, datetime64 or an ordered category (convert dates held as text "
                "with pd.to_datetime)"
            )
        return _numeric(column, "time").dropna()

    def assign(self, table: Table) -> Assignment:
        key = self._key(table)
        if key.empty:  # else an IndexError of the cut's iloc on the empty order
            raise ValueError(
                f"time split: column {self.column!r} of table {table.name!r} has no values (all missing)"
                if self.column is not None else f"time split: table {table.name!r} has no rows"
            )
        ordered_key = key.sort_values(kind="stable")
        # rounded first: 90 * (1 - 0.3) is 62.99999999999999 in floats, and its floor gave
        # OOD 28 rows of 90 (no ood_fraction of 0.2 is affected below 2,000,000 rows)
        cut = ordered_key.iloc[min(len(key) - 1, math.floor(round(len(key) * (1 - self.ood_fraction), 9)))]
        ood = key >= cut
        if ood.all():  # else "no ID rows", for an ood_fraction of 0.3 with 80% of rows tied first
            first = table.data.loc[ordered_key.index[0], self.column]
            tied = int((key == cut).sum())
            raise ValueError(
                f"time split on {self.column!r}: no ID rows: {tied} of {len(key)} rows share the "
                f"earliest time {first}, where the cut for ood_fraction {self.ood_fraction:g} "
                f"falls, and rows tied at the cut all go to OOD; only {len(key) - tied} rows "
                f"({(len(key) - tied) / len(key):.1%}) are later"
            )
        _both_sides(ood, "time", repr(self.column or "row order"))
        return Assignment(key, ood, self.column, ordered=True, label=self.column or "row order")


@dataclass(frozen=True)
class ClusterSplit:
    """Hold out KMeans clusters of the feature rows.

    Features: ``columns`` (default all but the label); nominal ones one-hot (missing is its
    own value), numeric ones median-imputed and standardised (datetimes, timedeltas and
    periods as numbers, infinite values refused). ``KMeans(n_clusters,
    n_init=10, random_state)``; clusters are renumbered by size, 0 = largest, and the rows
    of ``ood_clusters`` are OOD. ``reference`` (a file of one size rank per table row, a
    path relative to the suite file) pins the clusters KMeans gave where the suite's runs
    were made; a platform whose KMeans differs is warned and uses it
    (see ``docs/ood.md``).
    """

    n_clusters: int
    ood_clusters: tuple[int, ...]
    columns: tuple[str, ...] | None = None
    random_state: int = 0
    # Outside repr (so outside the runs' config hash): it pins what the rule computes.
    reference: str | None = field(default=None, repr=False, compare=False)
    by: ClassVar[str] = "cluster"

    def __post_init__(self) -> None:
        _plain_fields(self)
        if not isinstance(self.n_clusters, int) or self.n_clusters < 2:
            raise ValueError(f"cluster split: n_clusters must be an int >= 2, got {self.n_clusters!r}")
        seed = self.random_state  # KMeans' own message names neither the rule nor the key
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or not 0 <= seed < 2**32:
            raise ValueError(f"cluster split: random_state must be an int in [0, 2**32 - 1], got {seed!r}")
        _require_list(self.ood_clusters, "cluster split", "ood_clusters")
        if self.columns is not None:
            _require_list(self.columns, "cluster split", "columns")
            if not self.columns:  # KMeans: "Found array with 0 feature(s)", naming no key
                raise ValueError("cluster split: columns is empty; omit it to cluster on every feature")
            # else "unhashable type: 'list'" ([[a]]) or "'DataFrame' object has no attribute
            # 'dtype'" ([a, a]: the column read twice is a frame), naming neither the key nor the column
            names = [c for c in self.columns if not isinstance(c, Hashable)]
            if names:
                raise ValueError(f"cluster split: columns must be column names, got {names}")
            repeated = [c for c in dict.fromkeys(self.columns) if self.columns.count(c) > 1]
            if repeated:
                raise ValueError(f"cluster split: columns {repeated} are listed more than once")
        bad = [
            c
            for c in self.ood_clusters
            if not isinstance(c, numbers.Integral) or isinstance(c, bool) or not 0 <= c < self.n_clusters
        ]
        if bad or not self.ood_clusters or len(set(self.ood_clusters)) >= self.n_clusters:
            raise ValueError(
                f"cluster split: ood_clusters {list(self.ood_clusters)} must be distinct size ranks in "
                f"0..{self.n_clusters - 1}, leaving at least one ID cluster"
            )

    def assign(self, table: Table) -> Assignment:
        ranks = self.compute_ranks(table)
        if self.reference is not None:
            ranks = use_reference(ranks, self.reference, self.n_clusters, table_fingerprint(table.data))
        domain = pd.Series(ranks, index=table.data.index, name="cluster")
        ood = domain.isin(self.ood_clusters)
        _both_sides(ood, "cluster", f"clusters {list(self.ood_clusters)}")
        return Assignment(domain, ood, None, ordered=False, label=f"KMeans cluster (k={self.n_clusters})")

    def compute_ranks(self, table: Table) -> np.ndarray:
        """Every row's cluster, numbered by size (0 = largest), as KMeans gives it here."""
        columns = list(self.columns) if self.columns is not None else list(table.X.columns)
        for name in columns:
            _column(table, name, "cluster")
        X = table.data[columns]
        if len(X) < self.n_clusters:  # KMeans: "n_samples=6 should be >= n_clusters=10"
            raise ValueError(
                f"cluster split: n_clusters={self.n_clusters} is more than the {len(X)} rows of "
                f"table {table.name!r}"
            )
        nominal = [c for c in columns if is_categorical_dtype(X[c].dtype)]
        numeric = [c for c in columns if c not in nominal]
        empty = [c for c in numeric if X[c].isna().all()]
        # A default feature set may carry an empty column (the imputer would drop it); a
        # listed one, or nothing else to cluster on, is the user's mistake.
        if empty and (self.columns is not None or len(empty) == len(columns)):
            raise ValueError(
                f"cluster split: numeric column(s) {empty} of table {table.name!r} have no "
                "values (all missing); nothing to cluster on"
            )
        numeric = [c for c in numeric if c not in empty]
        times = [c for c in numeric if numeric_kind(X[c].dtype) != "number"]
        if times:  # else numpy's "DType ... could not be promoted", naming no column
            X = X.copy()
            for c in times:
                X[c] = numeric_values(X[c], c)
        infinite = [c for c in numeric if np.isinf(X[c].to_numpy(dtype=float, na_value=np.nan)).any()]
        if infinite:  # else the scaler's "Input X contains infinity", naming no column
            raise ValueError(
                f"cluster split: numeric column(s) {infinite} of table {table.name!r} hold "
                "infinite values, which cannot be standardised; drop them from columns or "
                "replace the values"
            )
        # by position: the ColumnTransformer reads integer names (pd.DataFrame(array)) as
        # positions, so a table whose label is column 0 failed ("all features must be in [0, 2]")
        at = {c: i for i, c in enumerate(columns)}
        encoder = ColumnTransformer([
            ("nominal", OneHotEncoder(handle_unknown="ignore"), [at[c] for c in nominal]),
            ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [at[c] for c in numeric]),
        ])
        # Arrays whatever the global transform_output ("pandas" refuses the sparse one-hot);
        # sparse or dense as the ColumnTransformer chooses, which the KMeans result depends on.
        with config_context(transform_output="default"):
            Z = encoder.fit_transform(_as_objects(X, nominal))
        with threadpool_limits(limits=1):  # threads fighting a busy CPU: 0.2 s -> 5 s (kr-vs-kp)
            labels = KMeans(self.n_clusters, n_init=10, random_state=self.random_state).fit_predict(Z)
        sizes = np.bincount(labels, minlength=self.n_clusters)
        rank = np.empty(self.n_clusters, dtype=int)
        rank[np.argsort(-sizes, kind="stable")] = np.arange(self.n_clusters)
        return rank[labels]


def _as_objects(X: pd.DataFrame, nominal: list) -> pd.DataFrame:
    """The ``nominal`` columns of ``X`` as objects, a missing ``pd.NA`` (nullable
    ``boolean`` and ``string`` dtypes) as NaN: the one-hot encoder refused ``pd.NA`` beside
    values ("Encoders require their input argument must be uniformly strings or numbers.
    Got ['NAType', 'bool']"). Other missing values (NaN, None) are left as they were."""
    X = X.astype({c: object for c in nominal})
    for c in nominal:
        na = np.fromiter((v is pd.NA for v in X[c]), dtype=bool, count=len(X))
        if na.any():
            X[c] = X[c].mask(na, np.nan)
    return X


SplitRule = ValueSplit | ThresholdSplit | TimeSplit | ClusterSplit
RULES: dict[str, type] = {cls.by: cls for cls in (ValueSplit, ThresholdSplit, TimeSplit, ClusterSplit)}

def rule_from_dict(spec: dict[str, Any], *, where: str = "split", base_dir: Any = None) -> SplitRule:
    """Parse ``{by: values|threshold|time|cluster, ...}``; list values become tuples; a
    cluster rule's ``reference`` file resolves against ``base_dir`` and must exist."""
    if not isinstance(spec, dict) or not isinstance(spec.get("by"), str) or spec["by"] not in RULES:
        raise ValueError(f"{where}: needs by: one of {sorted(RULES)}, got {spec!r}")
    cls = RULES[spec["by"]]
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.items() if k != "by"}
    if cls is ClusterSplit and fields.get("reference") is not None:
        fields["reference"] = resolve_reference(fields["reference"], base_dir, where)
    return build(cls, fields, f"{where} (by: {spec['by']})")
