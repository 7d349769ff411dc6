"""Columns -> per-column token ids: every column of a table becomes one "word position".

Token id layout (one id space shared by all columns, so the model needs one embedding table):

* ``0`` MASK, ``1`` MISSING, ``2`` UNKNOWN — reserved, shared by all columns (the column
  embedding tells columns apart, as the position embedding does in the paper).
* ``3 ...`` value tokens. With ``vocabulary="per_column"`` each column owns a contiguous
  range ``[offsets_[j], offsets_[j] + n_tokens_per_column_[j])``. With
  ``vocabulary="shared"`` all columns use one code space (the paper's setup): the same value
  in any column is the same token, also in a column that did not hold it at fit.

Categorical columns map each value seen at fit to a token; values seen fewer than
``min_frequency`` times and values unseen at fit map to UNKNOWN (unseen ones with a
``UserWarning`` naming the column and the rate). Numeric columns are cut into at most
``n_bins`` quantile bins fitted on the training data; a column with at most ``n_bins``
distinct values gets one bin per value, and a value on which two or more of the quantiles
fall (the zeros of a mostly-zero column) a bin of its own: one that holds two quantile steps
of the rows or more always does, the column's minimum or maximum from one step on; inside
the range, a value holding between one and two steps may share its bin with the values
above it. NaN / None / NaT map to MISSING (warned about in a column that held none at fit);
a number in a column that held none at fit, to UNKNOWN (warned about as an unseen value).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from ._bin_position import bin_position, value_range
from ._category_index import category_codes, concat_objects, sorted_values
from ._column_warnings import (
    ColumnChecks,
    ColumnWarning,
    LabelColumnWarning,
    NearUniqueColumnWarning,
    NumbersAsTextWarning,
)
from ._frame import (
    check_tokenizable,
    first_difference,
    fitted_columns,
    is_categorical_dtype,
    label_reprs,
    listed,
    to_frame,
    validated_frame,
)
from ._numeric import _bin_edges, auto_bins, numeric_kind, numeric_values, time_zone, values_dtype
from ._stack import catch_warnings
from ._tokenizer_state import check_state
from ._unseen import UnseenValues

if TYPE_CHECKING:
    import polars as pl  # transform's output under set_output(transform="polars")

# Re-exported: the frame helpers are documented here (docs/api/tokenizer.md).
__all__ = [
    "MASK", "MISSING", "N_SPECIAL", "SPECIAL_TOKENS", "UNKNOWN", "ColumnTokenizer", "ColumnWarning",
    "LabelColumnWarning", "NearUniqueColumnWarning", "NumbersAsTextWarning", "is_categorical_dtype", "to_frame",
]

MASK, MISSING, UNKNOWN = 0, 1, 2
N_SPECIAL = 3
SPECIAL_TOKENS = {"MASK": MASK, "MISSING": MISSING, "UNKNOWN": UNKNOWN}


def _smallest_int_dtype(n_tokens: int) -> np.dtype:
    return np.dtype(np.int16) if n_tokens <= np.iinfo(np.int16).max else np.dtype(np.int32)


class ColumnTokenizer(TransformerMixin, BaseEstimator):
    """Turn each column of a table into one token position.

    Parameters
    ----------
    categorical_features : "auto", "all", array-like of str or int, or bool mask, default="auto"
        Which columns are categorical. ``"auto"``: by dtype (:func:`is_categorical_dtype`:
        category, object, string, bool, interval). ``"all"``: every column (e.g. integer codes).
        Otherwise column names, column indices or a boolean mask of length ``n_features``.
    n_bins : int or "auto", default=10
        Maximum number of quantile bins for a numeric column. ``"auto"``: the Rice rule,
        ``round(2 * n_samples ** (1/3))`` bins (at least 2), from the rows given to ``fit``.
    min_frequency : int, default=1
        Categories seen fewer times than this at fit map to UNKNOWN.
    vocabulary : {"per_column", "shared"}, default="per_column"
        ``"shared"`` gives all columns one code space (the paper's setup for integer-coded
        tables); every column is then treated as categorical.

    Attributes
    ----------
    categories_ : list of pandas.Index or None
        Per column, the kept categories in token order (None for numeric columns).
    bin_edges_ : list of ndarray or None
        Per column, inner bin edges (None for categorical columns).
    value_range_ : list of tuple or None
        Per numeric column, the (min, max) of its finite fit values, the outer bounds of its
        first and last bins (None for categorical columns and columns without finite values).
    missing_seen_ : list of bool
        Per column, whether it held a missing value at fit (a missing value at transform in
        one that did not is warned about: its MISSING token was never trained there).
    is_categorical_ : ndarray of bool, shape (n_features,)
    offsets_ : ndarray of int, shape (n_features,)
        First value-token id of each column (all equal with a shared vocabulary).
    n_tokens_per_column_ : ndarray of int, shape (n_features,)
        Number of value tokens each column can take.
    n_tokens_ : int
        Size of the id space, reserved ids included.
    n_bins_ : int
        The maximum number of bins used (``n_bins`` with ``"auto"`` resolved).
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    """

    _parameter_constraints: dict = {
        "categorical_features": [StrOptions({"auto", "all"}), "array-like"],
        "n_bins": [Interval(numbers.Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "min_frequency": [Interval(numbers.Integral, 1, None, closed="left")],
        "vocabulary": [StrOptions({"per_column", "shared"})],
    }

    def __init__(
        self,
        categorical_features: Literal["auto", "all"] | ArrayLike = "auto",
        n_bins: int | Literal["auto"] = 10,
        min_frequency: int = 1,
        vocabulary: Literal["per_column", "shared"] = "per_column",
    ):
        self.categorical_features = categorical_features
        self.n_bins = n_bins
        self.min_frequency = min_frequency
        self.vocabulary = vocabulary

    # ------------------------------------------------------------------ fit
    def _categorical_mask(self, frame: pd.DataFrame) -> np.ndarray:
        n = frame.shape[1]
        spec = self.categorical_features
        if self.vocabulary == "shared" or (isinstance(spec, str) and spec == "all"):
            return np.ones(n, dtype=bool)
        if isinstance(spec, str) and spec == "auto":
            return np.array([is_categorical_dtype(dt) for dt in frame.dtypes], dtype=bool)
        # A list's entries as given: np.asarray made ["b", 2] all text (index 2 was refused as
        # a column named '2') and a tuple label (a MultiIndex frame's) a row of text.
        items = list(spec) if isinstance(spec, list | tuple) else np.asarray(spec).tolist()
        if items and all(isinstance(item, bool | np.bool_) for item in items):
            spec = np.asarray(items, dtype=bool)
            if spec.shape != (n,):
                raise ValueError(
                    f"categorical_features as a boolean mask must have length {n} "
                    f"(n_features), got shape {spec.shape}."
                )
            return spec
        mask = np.zeros(n, dtype=bool)
        columns = list(frame.columns)
        # by a dict, not columns.index: a list naming each of 16,000 columns took 2.2 s
        position = {label: j for j, label in enumerate(columns)}  # (labels are unique)
        for item in items:
            if isinstance(item, str | tuple):
                try:
                    j = position.get(item)
                except TypeError:  # a tuple holding a list: equal to no label, as below
                    j = None
                if j is None and item not in columns:
                    raise ValueError(
                        f"categorical_features names column {item!r}, which is not in X "
                        f"(columns: {columns[:10]}{'...' if n > 10 else ''})."
                    )
                mask[columns.index(item) if j is None else j] = True
            elif isinstance(item, numbers.Integral) and not isinstance(item, bool):  # mask[True]: all
                if not -n <= item < n:
                    raise ValueError(
                        f"categorical_features index {item} is out of range for {n} columns."
                    )
                mask[item] = True
            else:
                raise ValueError(
                    f"categorical_features entries must be column names or indices, got {item!r}."
                )
        return mask

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> ColumnTokenizer:
        """Learn per-column vocabularies and bin edges from ``X`` (n_samples, n_features)."""
        frame = to_frame(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        # scikit-learn keeps only string column names (feature_names_in_); remember other
        # labels (e.g. ints) as well, so that a DataFrame whose columns were permuted or
        # renamed is refused instead of being read by position.
        self._column_labels = None if hasattr(self, "feature_names_in_") else label_reprs(frame.columns)
        check_tokenizable(frame)
        self.is_categorical_ = self._categorical_mask(frame)
        self.n_bins_ = auto_bins(len(frame)) if self.n_bins == "auto" else self.n_bins
        self.categories_, self.bin_edges_, self._infrequent, self.value_range_, self.missing_seen_ = [], [], [], [], []
        dtypes = [values_dtype(dtype) for dtype in frame.dtypes]  # (a category of datetimes: datetimes)
        self._numeric_kinds = [None if categorical else numeric_kind(dtype)  # checked at transform
                               for categorical, dtype in zip(self.is_categorical_, dtypes, strict=True)]
        self._tz_aware = [kind == "datetime" and time_zone(dtype) is not None if kind else None
                          for kind, dtype in zip(self._numeric_kinds, dtypes, strict=True)]
        sizes = []
        checks = ColumnChecks(self.min_frequency)  # columns most likely not meant as categories
        spec = self.categorical_features  # "auto": categorical by dtype, not by the user's choice
        by_dtype = isinstance(spec, str) and spec == "auto" and self.vocabulary == "per_column"
        for j, (name, column) in enumerate(frame.items()):
            if self.is_categorical_[j]:
                kept, rare = self._fit_categories(column, name, checks, by_dtype)
                self.categories_.append(kept)
                self._infrequent.append(rare)
                self.bin_edges_.append(None)
                self.value_range_.append(None)
                self.missing_seen_.append(bool(column.isna().any()))
                sizes.append(len(kept))
            else:
                values = numeric_values(column, name)
                edges = self._numeric_edges(values, self.n_bins_)
                self.value_range_.append(value_range(values))
                self.missing_seen_.append(bool(np.isnan(values).any()))
                self.categories_.append(None)
                self._infrequent.append(None)
                self.bin_edges_.append(edges)
                sizes.append(len(edges) + 1)
        if self.vocabulary == "shared":
            self._fit_shared_space()
        else:
            self.n_tokens_per_column_ = np.asarray(sizes, dtype=np.int64)
            starts = np.concatenate([[0], np.cumsum(self.n_tokens_per_column_)[:-1]])
            self.offsets_ = N_SPECIAL + starts
            self.n_tokens_ = int(N_SPECIAL + self.n_tokens_per_column_.sum())
        self._lookup = [self._build_lookup(j) for j in range(frame.shape[1])]
        checks.warn()
        return self

    # (values, n_bins) -> inner edges; a hook: study 61's research subclass draws tree edges
    _numeric_edges = staticmethod(_bin_edges)

    def _fit_categories(
        self, column: pd.Series, name: Any, checks: ColumnChecks, by_dtype: bool
    ) -> tuple[pd.Index, pd.Index]:
        try:
            with catch_warnings():  # one thread at a time: see tabmoe._stack
                # pandas 2.2 warns that it infers datetimes in objects as the counts' index, as
                # pandas 3 does not: the values are read as objects below, in both
                warnings.filterwarnings("ignore", "The behavior of value_counts with object-dtype", FutureWarning)
                counts = column.value_counts(dropna=True, sort=False)
            # pandas 3 counts lists and dicts (and numpy arrays, by identity) without a word:
            # the fit then warned "the model fits and predicts" and failed at transform, or, for
            # arrays, with numpy's "truth value of an array is ambiguous", naming no column.
            distinct = counts.index.to_numpy(dtype=object) if column.dtype == object else None
            if distinct is not None and pd.api.types.infer_dtype(distinct, skipna=True) != "string":
                set(distinct.tolist())  # hashes each value (an id column of text skips it)
        except TypeError as exc:
            raise TypeError(
                f"Column {name!r} holds unhashable values (e.g. dicts or lists), which cannot "
                f"be categories: {exc}"
            ) from exc
        # A categorical's unused categories are counted 0: they were not seen at fit, and a
        # row holding one at predict is reported as unseen, not as rarer than min_frequency.
        counts = counts[counts.to_numpy() > 0]
        checks.add(name, column.dtype, counts, by_dtype)
        keep = counts.to_numpy() >= self.min_frequency
        values = counts.index
        if isinstance(column.dtype, pd.CategoricalDtype):
            order = column.cat.categories
            # object values: DatetimeIndex.isin(CategoricalIndex) is all False (pandas 3.1).
            kept = order[order.isin(values[keep].astype(object))]
        else:
            kept = sorted_values(pd.Index(values[keep], dtype=object))
        return pd.Index(kept, dtype=object), pd.Index(values[~keep], dtype=object)

    def _fit_shared_space(self) -> None:
        union = concat_objects([c for c in self.categories_ if c is not None])
        # Index.unique, not pd.unique: pandas 3.0's pd.unique merges "" and "\x00" in object arrays.
        self.shared_values_ = sorted_values(union.unique())
        n = len(self.shared_values_)
        self.n_tokens_per_column_ = np.full(len(self.categories_), n, dtype=np.int64)
        self.offsets_ = np.full(len(self.categories_), N_SPECIAL, dtype=np.int64)
        self.n_tokens_ = N_SPECIAL + n

    def _build_lookup(self, j: int) -> tuple[pd.Index, np.ndarray] | None:
        """(index of known values, token id of each) for a categorical column."""
        if not self.is_categorical_[j]:
            return None
        kept, rare = self.categories_[j], self._infrequent[j]
        if self.vocabulary == "shared":
            ids = N_SPECIAL + self.shared_values_.get_indexer(kept)
        else:
            ids = self.offsets_[j] + np.arange(len(kept))
        index = concat_objects([kept, rare])
        token = np.concatenate([ids, np.full(len(rare), UNKNOWN)]).astype(np.int64)
        if self.vocabulary == "shared":
            # One code space, as the paper's: a value this column never held at fit but another
            # column kept is that value's token here too (it was UNKNOWN, "not seen during fit")
            other = self.shared_values_[index.get_indexer(self.shared_values_) < 0]
            index = concat_objects([index, other])
            token = np.concatenate([token, N_SPECIAL + self.shared_values_.get_indexer(other)]).astype(np.int64)
        return index, token

    # ------------------------------------------------------------ transform
    def transform(self, X: Any) -> np.ndarray | pd.DataFrame | pl.DataFrame:
        """Token ids, shape (n_samples, n_features): int16, or int32 when ``n_tokens_`` exceeds int16's range.
        A pandas (polars) DataFrame of them under scikit-learn's ``set_output(transform="pandas")``
        (``"polars"``) or ``set_config(transform_output=...)``, as for any transformer."""
        frame = self._checked_frame(X)
        unseen = UnseenValues()
        out = self._tokens(frame, unseen)
        unseen.warn(len(frame))
        return out

    def transform_batches(
        self, X: Any, batch_rows: int, *, unseen_note: str = "", missing_note: str | None = "",
        numeric_missing: bool = True,
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """:meth:`transform` ``batch_rows`` rows at a time: yields ``(rows, tokens)``, a slice
        of the rows of ``X`` and their tokens (len(rows), n_features).

        ``X`` is checked (fitted columns, their order) here, once, before the first batch;
        values are read batch by batch, so an error in a value (e.g. inf) is raised at its
        batch. Memory beyond ``X`` is that of one batch. Unseen values are warned about
        once, for all the rows, after the last batch; ``unseen_note`` (e.g. how a model
        reads UNKNOWN) ends that warning. So are missing values in a column that held none
        at fit, ``missing_note`` ending that warning (None: not warned about);
        ``numeric_missing=False`` leaves out that warning for numeric columns only (a reader of
        their numbers, not of their MISSING token, as the baselines' encoders).
        """
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, numbers.Integral) or batch_rows < 1:
            raise ValueError(f"transform_batches: batch_rows must be an integer >= 1, got {batch_rows!r}")
        return UnseenValues(unseen_note, missing_note, numeric_missing).batches(self._checked_frame(X), batch_rows, self._tokens)

    def _checked_frame(self, X: Any) -> pd.DataFrame:
        """``X`` as a frame, checked against the fitted columns (names, number, order)."""
        check_is_fitted(self)
        fitted = getattr(self, "_column_labels", None)
        frame = validated_frame(self, fitted_columns(X, None, fitted, None), fitted)  # other labels: named
        check_tokenizable(frame)
        if fitted is not None and isinstance(X, pd.DataFrame):
            labels = label_reprs(frame.columns)
            if labels != fitted and sorted(labels) == sorted(fitted):
                raise ValueError(
                    # the labels' reprs, unquoted: int labels print as ints, not as strings
                    "Columns must be in the same order as they were in fit: fitted "
                    f"{listed(fitted)}, got {listed(labels)}{first_difference(fitted, labels)}."
                )
        return frame

    def _tokens(self, frame: pd.DataFrame, unseen: UnseenValues) -> np.ndarray:
        """Token ids of a checked frame (n, n_features); unseen values recorded in ``unseen``."""
        out = np.empty(frame.shape, dtype=_smallest_int_dtype(self.n_tokens_))
        seen = getattr(self, "missing_seen_", None)  # None: saved before it was kept, unknown
        for j, (name, column) in enumerate(frame.items()):
            out[:, j] = self._transform_column(j, column, name, unseen)
            if seen is not None and not seen[j]:
                unseen.add_missing(j, name, int(np.count_nonzero(out[:, j] == MISSING)), not self.is_categorical_[j])
        return out

    def _transform_column(
        self, j: int, column: pd.Series, name: Any, unseen_values: UnseenValues
    ) -> np.ndarray:
        if not self.is_categorical_[j]:
            values = self._numeric_values(j, column, name)
            tokens = self.offsets_[j] + np.searchsorted(self.bin_edges_[j], values, side="right")
            tokens[np.isnan(values)] = MISSING
            # A column missing in every training row has no value range (infinity is refused at
            # fit): no bin was trained on a number. Tokenizers saved before value_range_: as before.
            ranges = getattr(self, "value_range_", None)
            if ranges is not None and ranges[j] is None:
                unseen = np.isfinite(values)
                if unseen.any():
                    tokens[unseen] = UNKNOWN
                    unseen_values.add(j, name, column[unseen].to_numpy(dtype=object), numeric=True)
            return tokens
        index, token = self._lookup[j]
        try:
            if isinstance(column.dtype, pd.CategoricalDtype):
                codes = category_codes(index, column)
            else:
                # An object-dtype target: a plain array of Timedeltas/Timestamps would be
                # inferred as a datetime-like index and cast to ns, which overflows outside
                # 1677-2262.
                codes = index.get_indexer(pd.Index(column.to_numpy(dtype=object), dtype=object))
        except TypeError as exc:
            raise TypeError(f"Column {name!r} holds unhashable values: {exc}") from exc
        # Index only the known codes: ``token`` is empty for a column whose every fit value
        # was missing or rarer than min_frequency.
        known = codes >= 0
        tokens = np.full(len(codes), UNKNOWN, dtype=np.int64)
        tokens[known] = token[codes[known]]
        missing = column.isna().to_numpy()
        tokens[missing] = MISSING
        unseen = (codes < 0) & ~missing
        if unseen.any():
            unseen_values.add(j, name, column[unseen].to_numpy(dtype=object))
        return tokens

    def bin_positions(self, X: Any) -> np.ndarray:
        """(n_samples, n_features) float32: each numeric value's position in its bin, in
        [0, 1] (1 for categorical columns and missing values); see ``value_range_``."""
        return self._bin_positions(self._checked_frame(X))

    def _bin_positions(self, frame: pd.DataFrame) -> np.ndarray:
        ranges = getattr(self, "value_range_", None)
        if ranges is None:
            raise ValueError("This tokenizer was saved before value_range_ existed; refit it for bin positions.")
        out = np.ones(frame.shape, dtype=np.float32)
        for j, (name, column) in enumerate(frame.items()):
            if not self.is_categorical_[j]:
                out[:, j] = bin_position(self._numeric_values(j, column, name), self.bin_edges_[j], ranges[j])
        return out

    def _numeric_values(self, j: int, column: pd.Series, name: Any) -> np.ndarray:
        """Numeric column j's floats, checked against its kind and time zone at fit (each
        unchecked when absent, in files saved before it was kept)."""
        kinds, aware = getattr(self, "_numeric_kinds", None), getattr(self, "_tz_aware", None)
        return numeric_values(column, name, kinds and kinds[j], aware and aware[j])

    # ------------------------------------------------------------- helpers
    def column_value_floats(self, j: int, column: pd.Series) -> np.ndarray:
        """Numeric column ``j``'s values as float64, NaN for missing, read as :meth:`transform`
        reads them (checked against the column's kind at fit: datetimes held as objects are
        datetimes): for a model that takes the numbers themselves, not their bin tokens."""
        j = self._position("column_value_floats", j)
        if self.is_categorical_[j]:
            raise ValueError(f"column_value_floats: column {j} is categorical; it has tokens, not numbers")
        return self._numeric_values(j, column, column.name)

    def fitted_column_labels(self) -> list[str] | None:
        """The reprs of the column labels seen in ``fit`` when they were not all strings
        (``feature_names_in_`` holds string names; scikit-learn keeps no other kind), for
        naming a column in a message; None for string names or a frame without labels."""
        check_is_fitted(self)
        return getattr(self, "_column_labels", None)

    def output_token_ids(self, j: int) -> np.ndarray:
        """Token ids that column ``j`` can take as a prediction target (no reserved ids)."""
        j = self._position("output_token_ids", j)
        start = int(self.offsets_[j])
        return np.arange(start, start + int(self.n_tokens_per_column_[j]))

    def _position(self, method: str, j: Any) -> int:
        """Column position ``j`` checked: an integer in [0, n_features_in_), named if not."""
        check_is_fitted(self)
        n = int(self.n_features_in_)
        if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= j < n:
            names = list(getattr(self, "feature_names_in_", []))  # here only: a fit reads every j
            at = f" (column {j!r} is at position {names.index(j)})" if isinstance(j, str) and j in names else ""
            raise ValueError(f"{method}: j must be a column position, an integer in 0..{n - 1}, got {j!r}{at}")
        return int(j)

    def label_token_ids(self, classes: np.ndarray) -> np.ndarray:
        """Token id of each class of a label column appended after the feature columns.

        Per-column vocabularies: a fresh range after the features'. Shared vocabulary: a class
        equal to a feature code reuses that code's token (the paper's single code space);
        other classes get fresh ids."""
        check_is_fitted(self)
        start = self.n_tokens_
        if self.vocabulary != "shared":
            return start + np.arange(len(classes))
        ids = self.shared_values_.get_indexer(pd.Index(classes, dtype=object)) + N_SPECIAL
        fresh = ids < N_SPECIAL
        ids[fresh] = start + np.arange(fresh.sum())
        return ids.astype(np.int64)

    def token_id(self, j: int, value: Any) -> int | None:
        """Token id of categorical ``value`` in column ``j`` (ValueError for a numeric one) as
        :meth:`transform` reads it: MISSING for NaN/None/NaT, UNKNOWN below ``min_frequency``, None if unseen."""
        j = self._position("token_id", j)
        if self._lookup[j] is None:
            raise ValueError(f"token_id: column {j} is a numeric column of the {len(self._lookup)} fitted; it takes a categorical column's index")
        if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
            return MISSING
        index, token = self._lookup[j]
        code = index.get_indexer(pd.Index([value], dtype=object))[0]
        return None if code < 0 else int(token[code])

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """One token column per input column, named as it (scikit-learn's rule for
        ``input_features``: checked against ``feature_names_in_``, else x0, x1, ...)."""
        check_is_fitted(self)
        return np.asarray(_check_feature_names_in(self, input_features), dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []
        return tags

    # --------------------------------------------------------------- state
    def _get_state(self) -> dict:
        """The fitted tokenizer as JSON-able data (for :mod:`tabmoe.persistence`)."""
        from .persistence import encode_index, json_params

        return {
            "params": json_params(self.get_params()),
            "n_features_in": int(self.n_features_in_),
            "feature_names_in": self.feature_names_in_.tolist() if hasattr(self, "feature_names_in_") else None,
            "column_labels": getattr(self, "_column_labels", None),
            "is_categorical": self.is_categorical_.tolist(),
            "categories": [encode_index(c, self._in_column(j)) for j, c in enumerate(self.categories_)],
            "infrequent": [encode_index(c, self._in_column(j)) for j, c in enumerate(self._infrequent)],
            "bin_edges": [None if e is None else e.tolist() for e in self.bin_edges_],
            "value_range": None if getattr(self, "value_range_", None) is None
            else [None if r is None else list(r) for r in self.value_range_],
            "offsets": self.offsets_.tolist(),
            "n_tokens_per_column": self.n_tokens_per_column_.tolist(),
            "n_tokens": int(self.n_tokens_),
            "n_bins": int(getattr(self, "n_bins_", self.n_bins)),  # pickled before n_bins_: an int
            "shared_values": encode_index(getattr(self, "shared_values_", None)),
            "numeric_kinds": getattr(self, "_numeric_kinds", None),
            "tz_aware": getattr(self, "_tz_aware", None),
            "missing_seen": getattr(self, "missing_seen_", None),
        }

    def _in_column(self, j: int) -> str:
        names = getattr(self, "feature_names_in_", None)
        return f" in column {names[j] if names is not None else j!r}"

    @classmethod
    def _from_state(cls, state: dict) -> ColumnTokenizer:
        """The fitted tokenizer described by :meth:`_get_state`'s data."""
        from .persistence import decode_index, load_params

        tok = cls(**load_params(state["params"]))
        tok.n_features_in_ = state["n_features_in"]
        if state["feature_names_in"] is not None:
            tok.feature_names_in_ = np.asarray(state["feature_names_in"], dtype=object)
        tok._column_labels = state.get("column_labels")  # absent in files saved before it existed
        tok.is_categorical_ = np.asarray(state["is_categorical"], dtype=bool)
        tok.categories_ = [decode_index(c) for c in state["categories"]]
        tok._infrequent = [decode_index(c) for c in state["infrequent"]]
        tok.bin_edges_ = [None if e is None else np.asarray(e, dtype=float) for e in state["bin_edges"]]
        if state.get("value_range") is not None:  # absent in files saved before it existed
            tok.value_range_ = [None if r is None else tuple(float(v) for v in r) for r in state["value_range"]]
        tok.offsets_ = np.asarray(state["offsets"], dtype=np.int64)
        tok.n_tokens_per_column_ = np.asarray(state["n_tokens_per_column"], dtype=np.int64)
        tok.n_tokens_ = state["n_tokens"]
        tok.n_bins_ = state.get("n_bins", tok.n_bins)  # absent in files saved before it existed
        if state["shared_values"] is not None:
            tok.shared_values_ = decode_index(state["shared_values"])
        tok._numeric_kinds = state.get("numeric_kinds")  # absent in files saved before it existed
        tok._tz_aware = state.get("tz_aware")  # absent in files saved before it existed
        if state.get("missing_seen") is not None:  # absent in files saved before it existed
            tok.missing_seen_ = [bool(seen) for seen in state["missing_seen"]]
        check_state(tok, N_SPECIAL)
        tok._lookup = [tok._build_lookup(j) for j in range(tok.n_features_in_)]
        return tok

