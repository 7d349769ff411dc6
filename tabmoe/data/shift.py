"""How much a split actually shifts: sizes, label shift, covariate shift, and a flag.

* Label shift: total-variation distance between the ID and OOD label distributions,
  ``TV = 0.5 * sum_c |p_ID(c) - p_OOD(c)|`` in [0, 1].
* Covariate shift: ROC AUC of a classifier telling ID rows from OOD rows from the features
  (label and domain column excluded), ``cv``-fold stratified cross-validated. The classifier
  is :class:`~sklearn.ensemble.HistGradientBoostingClassifier` with native categorical
  support (nominal columns as pandas ``category``). 0.5 = indistinguishable, 1 = separable.
  At most ``max_rows`` rows (stratified by ID/OOD, seeded) are used.
* A split is flagged *negligible* when AUC < 0.6 and TV < 0.05: it would test nothing
  out-of-distribution. Also flagged: OOD labels never seen in training, and a small OOD test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
from threadpoolctl import threadpool_limits

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
    """Nominal columns as ``category`` (codes when too many categories), the rest numeric."""
    X = X.copy()
    for column in X.columns:
        if is_categorical_dtype(X[column].dtype):
            values = X[column].astype("category")
            values = values.cat.remove_unused_categories()
            if len(values.cat.categories) > MAX_NATIVE_CATEGORIES:
                values = values.cat.codes.where(values.notna()).astype(float)
            X[column] = values
    return X


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

    ``n_threads`` caps the OpenMP threads of the gradient boosting (``None``: no cap). One
    thread is the default because OpenMP threads competing for a busy CPU slowed a 600-row
    report from 0.5 s to 3-4 s on the 2-core development machine.
    """
    X = _for_trees(pd.concat([X_id, X_ood], ignore_index=True))
    d = np.r_[np.zeros(len(X_id), dtype=int), np.ones(len(X_ood), dtype=int)]
    if min(len(X_id), len(X_ood)) < cv:
        return float("nan"), float("nan")
    if len(X) > max_rows:
        keep, _ = train_test_split(np.arange(len(X)), train_size=max_rows, stratify=d, random_state=random_state)
        X, d = X.iloc[np.sort(keep)], d[np.sort(keep)]
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=random_state)
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    with threadpool_limits(limits=n_threads):
        scores = cross_val_score(model, X, d, cv=folds, scoring="roc_auc")
    return float(scores.mean()), float(scores.std())


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
    if np.isnan(auc):
        flags.append(f"too few rows for a {cv}-fold covariate score")
    elif auc < NEGLIGIBLE_AUC and tv < NEGLIGIBLE_TV:
        flags.append(f"NEGLIGIBLE SHIFT (AUC {auc:.3f} < {NEGLIGIBLE_AUC}, label TV {tv:.3f} < {NEGLIGIBLE_TV})")
    elif auc < ANTI_LEARNING_AUC:
        flags.append(
            f"AUC {auc:.3f} < 0.5: ID and OOD share feature vectors (e.g. a factorial design) and "
            "cross-validation anti-learns; read as no covariate shift"
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
    header = (
        "| split | data | domain | seed | train | val | id_test | ood_val | ood_test | excluded "
        "| label TV | cov. AUC (sd) | flags |"
    )
    lines = [header, "|" + "---|" * 13]
    for r in reports:
        sizes = [str(r.sizes.get(p, "-")) for p in ("train", "validation", "id_test", "ood_validation", "ood_test")]
        lines.append(
            f"| {r.split} | {r.data} | {r.domain} | {r.seed} | " + " | ".join(sizes)
            + f" | {r.excluded} | {r.label_tv:.3f} | {r.auc:.3f} ({r.auc_sd:.3f}) | "
            + ("; ".join(r.flags) or "ok") + " |"
        )
    return "\n".join(lines)


def markdown_labels(report: ShiftReport) -> str:
    """Per-class label proportions ID vs OOD of one report, as a Markdown table."""
    classes = sorted(set(report.label_id) | set(report.label_ood))
    lines = [f"{report.split}: label distribution", "", "| class | ID | OOD |", "|---|---|---|"]
    lines += [
        f"| {c} | {report.label_id.get(c, 0.0):.3f} | {report.label_ood.get(c, 0.0):.3f} |" for c in classes
    ]
    return "\n".join(lines)
