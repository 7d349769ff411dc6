"""How much a split actually shifts: sizes, label shift, covariate shift, and a flag.

* Label shift: total-variation distance between the ID and OOD label distributions,
  ``TV = 0.5 * sum_c |p_ID(c) - p_OOD(c)|`` in [0, 1].
* Covariate shift: ROC AUC of a classifier telling ID rows from OOD rows from the features
  (label and domain column excluded), ``cv``-fold stratified cross-validated. The classifier
  is :class:`~sklearn.ensemble.HistGradientBoostingClassifier` with native categorical
  support (nominal columns as pandas ``category``, datetimes as numbers), its classes
  weighted to balance, so a side of a few dozen rows against thousands is still scored
  (unweighted, 10 separable OOD rows among 20,000 scored AUC 0.006); its 100 trees grown
  on every training row, without early stopping, whose 10% hold-out (above 10,000 rows)
  takes about one row of such a side out of training and is too little to stop on (folds
  of 16,000 rows, 8 of them OOD: AUC 0.5 and 0.621 after 100 trees under scikit-learn
  1.9.1; 1.8 stopped one at 56 trees with AUC 0.001). 0.5 = indistinguishable, 1 =
  separable. At most ``max_rows`` rows are used (seeded): the smaller side whole up to
  half of them, the larger side the rest. No score (NaN, flagged "too few rows") when a
  side has fewer than ``cv`` rows or a fold trains on fewer than 40 (two leaves of
  ``min_samples_leaf`` = 20: below that no tree splits and the AUC is 0.5 by construction).
* A split is flagged *negligible* when AUC < 0.6 and TV < 0.05: it would test nothing
  out-of-distribution. Also flagged, each on its own: an AUC below 0.45 (the classifier
  anti-learns: ID and OOD share feature vectors; read as no covariate shift), OOD labels
  never seen in training, and a small OOD test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score
from threadpoolctl import threadpool_limits

from .._markdown import markdown
from .._numeric import numeric_kind, numeric_values
from ..tokenizer import is_categorical_dtype
from .splits import SplitData

NEGLIGIBLE_AUC = 0.6
NEGLIGIBLE_TV = 0.05
SMALL_OOD_TEST = 50
#: Below this AUC the ID-vs-OOD classifier is systematically wrong, not merely uninformed.
ANTI_LEARNING_AUC = 0.45
#: Most categories HistGradientBoosting handles natively (its ``max_bins``).
MAX_NATIVE_CATEGORIES = 255


@dataclass(frozen=True)
class ShiftReport:
    """Shift figures of one split at one seed (see the module docstring)."""

    split: str
    data: str
    seed: int
    sizes: dict[str, int]
    excluded: int
    domain: str
    label_id: dict[str, float]
    label_ood: dict[str, float]
    label_tv: float
    auc: float
    auc_sd: float
    flags: tuple[str, ...]

    @property
    def negligible(self) -> bool:
        return self.auc < NEGLIGIBLE_AUC and self.label_tv < NEGLIGIBLE_TV


def label_distribution(y: pd.Series) -> pd.Series:
    """Class proportions of ``y`` (classes as strings, sorted), observed classes only."""
    counts = y.astype(str).value_counts()
    return (counts / counts.sum()).sort_index()


def total_variation(p: pd.Series, q: pd.Series) -> float:
    """``0.5 * sum |p - q|`` over the union of classes (missing class = probability 0)."""
    p, q = p.align(q, fill_value=0.0)
    return float(0.5 * np.abs(p - q).sum())


def _for_trees(X: pd.DataFrame) -> pd.DataFrame:
    """Times (datetime64, timedelta64 and period columns, and categoricals of them) as float
    nanoseconds; other nominal columns (strings, categoricals, mixed objects) as ``category``
    of strings (codes when too many categories); the rest numeric."""
    X = X.copy()
    for column in X.columns:
        values = X[column]
        if isinstance(values.dtype, pd.CategoricalDtype) and _is_time(values.cat.categories.dtype):
            values = values.astype(values.cat.categories.dtype)
        if _is_time(values.dtype):  # periods too: numeric_values reads them as instants
            X[column] = numeric_values(values, column)
        elif is_categorical_dtype(values.dtype):
            values = _as_strings(values).astype("category").cat.remove_unused_categories()
            if len(values.cat.categories) > MAX_NATIVE_CATEGORIES:
                values = values.cat.codes.where(values.notna()).astype(float)
            X[column] = values
    return X


def _is_time(dtype: Any) -> bool:
    return numeric_kind(dtype) != "number"


def _as_strings(values: pd.Series) -> pd.Series:
    """Every value as a string, type-qualified when the column mixes types (``1`` and
    ``"1"`` stay apart): the trees' category encoder takes strings or numbers, not both,
    nor periods, intervals or ``pd.NA``. Missing values stay missing (NaN)."""
    values = values.astype(object)
    present = values.notna().to_numpy()
    mixed = values[present].map(type).nunique() > 1
    strings = np.full(len(values), np.nan, dtype=object)
    strings[present] = [f"{type(v).__name__}:{v}" if mixed else str(v) for v in values[present]]
    return pd.Series(strings, index=values.index)


def covariate_auc(
    X_id: pd.DataFrame,
    X_ood: pd.DataFrame,
    *,
    cv: int = 5,
    max_rows: int = 20_000,
    random_state: int = 0,
    n_threads: int | None = 1,
) -> tuple[float, float]:
    """Mean and SD over folds of the cross-validated ROC AUC of ID-vs-OOD classification.

    NaN (and NaN) when a side has fewer than ``cv`` rows, or some fold trains on fewer
    than 40 rows: the trees split no leaf under 20 rows (``min_samples_leaf``), so every
    such fold scored 0.5 whatever the shift (20 ID rows and 20 OOD rows 10 SD apart:
    AUC 0.5, called negligible).

    ``n_threads`` caps the OpenMP threads of the gradient boosting (``None``: no cap). One
    thread is the default because OpenMP threads competing for a busy CPU slowed a 600-row
    report from 0.5 s to 3-4 s on the 2-core development machine.
    """
    _check_cv(cv)
    for name, X in (("X_id", X_id), ("X_ood", X_ood)):
        duplicated = X.columns[X.columns.duplicated()]
        if len(duplicated):
            raise ValueError(f"{name} has duplicate column names {_sorted(set(duplicated))}; rename them.")
    if set(X_id.columns) != set(X_ood.columns):
        raise ValueError(
            f"X_id and X_ood must have the same columns: only in X_id {_sorted(set(X_id.columns) - set(X_ood.columns))}, "
            f"only in X_ood {_sorted(set(X_ood.columns) - set(X_id.columns))} (a column on one side only "
            "would separate the sides by itself)."
        )
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)):
        raise TypeError(f"max_rows must be an integer >= 2 * cv = {2 * cv}, got {max_rows!r}.")
    if max_rows < 2 * cv:
        raise ValueError(f"max_rows must be at least 2 * cv = {2 * cv}, got {max_rows}.")
    if min(len(X_id), len(X_ood)) < cv or X_id.shape[1] == 0:
        return float("nan"), float("nan")
    id_rows, ood_rows = _subsample(len(X_id), len(X_ood), max_rows, random_state)
    X = _for_trees(pd.concat([X_id.iloc[id_rows], X_ood.iloc[ood_rows][X_id.columns]], ignore_index=True))
    d = np.r_[np.zeros(len(id_rows), dtype=int), np.ones(len(ood_rows), dtype=int)]
    model = HistGradientBoostingClassifier(
        categorical_features="from_dtype", class_weight="balanced", early_stopping=False,
        random_state=random_state,
    )
    folds = list(StratifiedKFold(cv, shuffle=True, random_state=random_state).split(X, d))
    if min(len(train) for train, _ in folds) < 2 * model.min_samples_leaf:
        return float("nan"), float("nan")  # no tree can split: a constant score of 0.5
    X = _fillable_in_every_fold(X, folds)
    with threadpool_limits(limits=n_threads):
        scores = cross_val_score(model, X, d, cv=folds, scoring="roc_auc", error_score="raise")
    return float(scores.mean()), float(scores.std())


def _check_cv(cv: Any) -> None:
    # a bool is an int to Python, but cv=True is a mistake, not one fold
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)):
        raise TypeError(f"cv must be an integer >= 2 (the number of folds), got {cv!r}.")
    if cv < 2:
        raise ValueError(f"cv must be an integer >= 2 (the number of folds), got {cv!r}.")


def _fillable_in_every_fold(X: pd.DataFrame, folds: list) -> pd.DataFrame:
    """Numeric columns without a value in some fold's training rows as their missingness
    indicator: the trees cannot bin a feature with no values (scikit-learn 1.9.1: "window
    shape cannot be larger than input array shape"), and missingness is all such a column
    tells. A nominal column whose values in some fold's training rows are one category and
    missing ones, with missing as a category of its own: the trees never split a nominal
    feature of one category, so missing on one side and one value on the other scored AUC
    0.5. Other columns are left as they are."""
    for column in X.columns:
        present = X[column].notna().to_numpy()
        if isinstance(X[column].dtype, pd.CategoricalDtype):
            codes = X[column].cat.codes.to_numpy()
            if any(
                not present[train].all() and len(np.unique(codes[train][present[train]])) == 1
                for train, _ in folds
            ):
                X[column] = _missing_as_category(X[column])
        elif any(not present[train].any() for train, _ in folds):
            X[column] = present.astype(float)
    return X


def _missing_as_category(values: pd.Series) -> pd.Series:
    """A categorical column's missing values as a category of their own, named apart from
    its categories."""
    name = "<missing>"
    while name in values.cat.categories:
        name = f"<{name}>"
    return values.cat.add_categories([name]).fillna(name)


def _subsample(n_id: int, n_ood: int, max_rows: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted row positions of each side: all of them when they fit in ``max_rows``, else the
    smaller side whole up to half of ``max_rows`` and the larger side the rest (seeded)."""
    if n_id + n_ood <= max_rows:
        return np.arange(n_id), np.arange(n_ood)
    small = min(n_id, n_ood, max_rows // 2)
    keep_id, keep_ood = (small, max_rows - small) if n_id <= n_ood else (max_rows - small, small)
    rng = np.random.default_rng(random_state)
    return (np.sort(rng.choice(n_id, keep_id, replace=False)), np.sort(rng.choice(n_ood, keep_ood, replace=False)))


def _sorted(labels: set) -> list:
    return sorted(labels, key=repr)


def shift_report(
    split: SplitData,
    *,
    cv: int = 5,
    max_rows: int = 20_000,
    random_state: int = 0,
    n_threads: int | None = 1,
) -> ShiftReport:
    """Sizes, label TV, covariate AUC and flags of ``split`` (see the module docstring)."""
    id_frame, ood_frame = split.frame("id"), split.frame("ood")
    drop = [split.target] + ([split.domain_column] if split.keep_domain and split.domain_column else [])
    label_id = label_distribution(id_frame[split.target])
    label_ood = label_distribution(ood_frame[split.target])
    tv = total_variation(label_id, label_ood)
    auc, auc_sd = covariate_auc(
        id_frame.drop(columns=drop), ood_frame.drop(columns=drop),
        cv=cv, max_rows=max_rows, random_state=random_state, n_threads=n_threads,
    )
    flags = []
    if id_frame.shape[1] == len(drop):
        flags.append("no feature columns besides the label and the domain column: no covariate score")
    elif np.isnan(auc):
        flags.append(
            f"too few rows for a {cv}-fold covariate score ({cv} per side and 40 training rows per fold)"
        )
    else:  # each flag on its own (docs/ood.md): an anti-learning AUC says why it is so low
        if auc < NEGLIGIBLE_AUC and tv < NEGLIGIBLE_TV:
            flags.append(f"NEGLIGIBLE SHIFT (AUC {auc:.3f} < {NEGLIGIBLE_AUC}, label TV {tv:.3f} < {NEGLIGIBLE_TV})")
        if auc < ANTI_LEARNING_AUC:
            flags.append(
                f"AUC {auc:.3f} < {ANTI_LEARNING_AUC}: ID and OOD share feature vectors (e.g. a factorial "
                "design) and cross-validation anti-learns; read as no covariate shift"
            )
    unseen = sorted(set(label_ood.index) - set(label_distribution(split.train[split.target]).index))
    if unseen:
        flags.append(f"OOD labels unseen in train: {unseen}")
    if len(split.ood_test) < SMALL_OOD_TEST:
        flags.append(f"small OOD test ({len(split.ood_test)} rows)")
    return ShiftReport(
        split=split.name,
        data=split.table,
        seed=split.seed,
        sizes={name: len(part) for name, part in split.parts.items()},
        excluded=split.excluded,
        domain=split.domain_label,
        label_id=label_id.round(4).to_dict(),
        label_ood=label_ood.round(4).to_dict(),
        label_tv=tv,
        auc=auc,
        auc_sd=auc_sd,
        flags=tuple(flags),
    )


def markdown_table(reports: list[ShiftReport]) -> str:
    """One Markdown row per report: sizes, label TV, covariate AUC (SD over folds), flags."""
    header = ["split", "data", "domain", "seed", "train", "val", "id_test", "ood_val", "ood_test",
              "excluded", "label TV", "cov. AUC (sd)", "flags"]
    rows = [
        [r.split, r.data, r.domain, r.seed]
        + [r.sizes.get(p, "-") for p in ("train", "validation", "id_test", "ood_validation", "ood_test")]
        + [r.excluded, f"{r.label_tv:.3f}", f"{r.auc:.3f} ({r.auc_sd:.3f})", "; ".join(r.flags) or "ok"]
        for r in reports
    ]
    return markdown(header, rows)


def markdown_labels(report: ShiftReport) -> str:
    """Per-class label proportions ID vs OOD of one report, as a Markdown table."""
    classes = sorted(set(report.label_id) | set(report.label_ood))
    rows = [[c, f"{report.label_id.get(c, 0.0):.3f}", f"{report.label_ood.get(c, 0.0):.3f}"] for c in classes]
    return f"{report.split}: label distribution\n\n" + markdown(["class", "ID", "OOD"], rows)
