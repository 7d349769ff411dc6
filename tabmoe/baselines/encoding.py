"""The one front end every baseline sees: categorical codes and a standardised numeric block.

Categorical columns go through the same :class:`~tabmoe.tokenizer.ColumnTokenizer` as
tabmoe's own model, so every model agrees on which columns are categorical, which values
are known, which are rare (``min_frequency``) and which are unseen (a ``UserWarning``
naming the column). A token id minus its column's offset is a per-column code, shifted
past two reserved codes of that column's own:

* ``0`` MISSING (NaN / None / NaT), ``1`` UNKNOWN (unseen at fit, or rarer than
  ``min_frequency``, or folded by ``max_categories``), ``2 ...`` the known values, in the
  tokenizer's order.

So column ``j`` takes codes ``0 .. cardinalities_[j] - 1`` and nothing else: an embedding
table per column (or one table with per-column offsets, as TabTransformer keeps it) is never
indexed out of range, whatever the input.

Numeric columns (the tokenizer's numeric ones, read with its own parser, which rejects inf
naming the column) are standardised with the training mean and standard deviation (a column
whose largest |x| is beyond 2^256 or below 2^-256 is first multiplied by a power of two,
exactly, so that the squares of the variance neither overflow nor underflow); a NaN
becomes 0 (the training mean) and every numeric column that had NaN at fit gets a 0/1
missing indicator appended (``SimpleImputer(add_indicator=True)``). Standard scaling keeps
values outside the training range where they are, which matters under distribution shift
(a quantile transform would clip them to the training extremes). A numeric column missing in
every row at fit has no mean: a number in it is read as missing (0 and the indicator set), and
the tokenizer warns of it as a value unseen at fit. A missing value in a categorical column
that held none at fit is warned about (code 0, never trained there); one in a numeric column
is not: it is the training mean, as scikit-learn's imputers read it, not a MISSING token.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn import config_context
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_is_fitted,
    validate_data,
)

from .._frame import validated_frame
from .._stack import catch_warnings
from ..nn._class_weight import checked_sample_weight
from ..tokenizer import MISSING, N_SPECIAL, ColumnTokenizer, to_frame

CODE_MISSING, CODE_UNKNOWN = 0, 1
N_RESERVED_CODES = 2

#: Constraints of the encoder's parameters that the classifiers around it pass on to it
#: (:class:`~tabmoe.baselines.reference.EncodedClassifier`; TabM's ``max_categories``),
#: declared once: ``categorical_features`` and ``min_frequency`` are its tokenizer's.
ENCODER_PARAMETER_CONSTRAINTS: dict = {
    **{name: ColumnTokenizer._parameter_constraints[name] for name in ("categorical_features", "min_frequency")},
    "max_categories": [Interval(numbers.Integral, N_RESERVED_CODES + 1, None, closed="left"), None],
}


class TableEncoder(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Columns -> (per-column categorical codes, standardised numeric block).

    Parameters
    ----------
    categorical_features : "auto", "all", array-like of str or int, or bool mask
        As in :class:`~tabmoe.tokenizer.ColumnTokenizer` (``"auto"``: category, object,
        string and bool dtypes).
    min_frequency : int, default=1
        Values seen fewer times at fit share the UNKNOWN code.
    max_categories : int or None, default=None
        At most this many codes per categorical column, the two reserved ones included: the
        ``max_categories - 2`` most frequent values keep their own code, the rest share
        UNKNOWN (HistGradientBoosting takes at most 255 categories).
    one_hot : bool, default=False
        Output of :meth:`transform`: ``False`` a dense float array ``[codes | numeric]``;
        ``True`` a sparse CSR matrix ``[one-hot codes | numeric]`` (codes never seen at fit
        encode as all zeros).
    drop : {None, "first"}, default=None
        With ``one_hot``: ``"first"`` drops each column's first code seen at fit (its
        reference level, all zeros), as ``pandas.get_dummies(drop_first=True)``.

    Attributes
    ----------
    tokenizer_ : ColumnTokenizer
        Fitted on all columns with per-column vocabularies.
    categorical_columns_, numeric_columns_ : ndarray of int
        Input positions of the categorical and numeric columns.
    cardinalities_ : ndarray of int, shape (n_categorical,)
        Number of codes of each categorical column, the reserved two included.
    n_numeric_ : int
        Width of the numeric block: one standardised value per numeric column, then one
        missing indicator per numeric column that had NaN at fit.
    numeric_ : Pipeline or None
        ``PowerOfTwoScaler -> StandardScaler -> SimpleImputer(0, add_indicator=True)`` on
        the numeric columns (``PowerOfTwoScaler``: a factor of 1 for every column but the extreme).
    one_hot_ : OneHotEncoder or None
        Fitted on the codes when ``one_hot=True``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    """

    _parameter_constraints: dict = {
        **ENCODER_PARAMETER_CONSTRAINTS,
        "one_hot": ["boolean"],
        "drop": [StrOptions({"first"}), None],
    }

    def __init__(
        self,
        categorical_features: Literal["auto", "all"] | Sequence = "auto",
        min_frequency: int = 1,
        max_categories: int | None = None,
        one_hot: bool = False,
        drop: Literal["first"] | None = None,
    ):
        self.categorical_features = categorical_features
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.one_hot = one_hot
        self.drop = drop

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> TableEncoder:
        """Learn categories, folds and numeric scaling from ``X`` (n_samples, n_features).

        ``sample_weight`` (n_samples,) weights the numeric means and standard deviations,
        so that a weight of 2 scales like a repeated row; only relative weights count (they
        are rescaled by a power of two to a mean in [1, 2) first).
        """
        frame = to_frame(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        if sample_weight is not None:
            sample_weight = checked_sample_weight(sample_weight, frame, dtype=None)
            sample_weight = _unit_weights(sample_weight)
        with _array_output():
            return self._fit(frame, sample_weight)

    def _fit(self, frame: pd.DataFrame, sample_weight: np.ndarray | None) -> TableEncoder:
        self.tokenizer_ = ColumnTokenizer(
            categorical_features=self.categorical_features,
            min_frequency=self.min_frequency,
            vocabulary="per_column",
        ).fit(frame)
        is_categorical = self.tokenizer_.is_categorical_
        self.categorical_columns_ = np.flatnonzero(is_categorical)
        self.numeric_columns_ = np.flatnonzero(~is_categorical)
        n_values = self.tokenizer_.n_tokens_per_column_[self.categorical_columns_]
        self.cardinalities_ = (n_values + N_RESERVED_CODES).astype(np.int64)
        self._folds: dict[int, np.ndarray] = {}
        codes = self._codes(self.tokenizer_.transform(frame))
        if self.max_categories is not None:
            self._fit_folds(codes)
            codes = self._fold(codes)
        numeric = self._numeric_values(frame)
        self.numeric_ = None
        self.n_numeric_ = 0
        if numeric.shape[1]:
            # step__param is refused by Pipeline.fit under scikit-learn's metadata routing.
            # A column missing in every row has no mean (0 / 0): numpy's "invalid value
            # encountered in divide", three times from scikit-learn's internals, naming no
            # column; its rows are 0 with the missing indicator set, as any NaN.
            with config_context(enable_metadata_routing=False), np.errstate(invalid="ignore", divide="ignore"):
                self.numeric_ = _numeric_pipeline().fit(
                    numeric, standardscaler__sample_weight=sample_weight
                )
            self.n_numeric_ = int(self.numeric_.transform(numeric[:1]).shape[1])
        self.one_hot_ = None
        if self.one_hot and codes.shape[1]:
            self.one_hot_ = OneHotEncoder(handle_unknown="ignore", drop=self.drop).fit(codes)
        return self

    def _fit_folds(self, codes: np.ndarray) -> None:
        """Keep the ``max_categories - 2`` most frequent values of each column, in order."""
        keep = self.max_categories - N_RESERVED_CODES
        for k, cardinality in enumerate(self.cardinalities_):
            if cardinality <= self.max_categories:
                continue
            counts = np.bincount(codes[:, k], minlength=cardinality)[N_RESERVED_CODES:]
            kept = np.sort(np.argsort(-counts, kind="stable")[:keep]) + N_RESERVED_CODES
            lookup = np.full(cardinality, CODE_UNKNOWN, dtype=np.int64)
            lookup[CODE_MISSING] = CODE_MISSING
            lookup[kept] = N_RESERVED_CODES + np.arange(keep)
            self._folds[k] = lookup
            self.cardinalities_[k] = self.max_categories

    # ------------------------------------------------------------ transform
    def _codes(self, tokens: np.ndarray) -> np.ndarray:
        """Tokenizer ids (n, n_features) -> per-column codes (n, n_categorical), int64."""
        ids = tokens[:, self.categorical_columns_].astype(np.int64)
        offsets = self.tokenizer_.offsets_[self.categorical_columns_]
        reserved = np.where(ids == MISSING, CODE_MISSING, CODE_UNKNOWN)
        return np.where(ids >= N_SPECIAL, ids - offsets + N_RESERVED_CODES, reserved)

    def _fold(self, codes: np.ndarray) -> np.ndarray:
        for k, lookup in self._folds.items():
            codes[:, k] = lookup[codes[:, k]]
        return codes

    def _numeric_values(self, frame: pd.DataFrame) -> np.ndarray:
        """(n, n_numeric) float64 raw values of the numeric columns, NaN for missing, read as
        the tokenizer reads them (against each column's kind at fit: datetimes held as
        objects are datetimes, as its tokens say)."""
        columns = [
            self.tokenizer_.column_value_floats(j, frame.iloc[:, j]) for j in self.numeric_columns_
        ]
        return np.column_stack(columns) if columns else np.empty((len(frame), 0))

    def _numeric_block(self, frame: pd.DataFrame) -> np.ndarray:
        """(n, n_numeric_) float64: the standardised numeric columns and missing indicators."""
        if self.numeric_ is None:
            return np.empty((len(frame), 0))
        with _array_output():
            return self.numeric_.transform(self._numeric_values(frame))

    def checked_frame(self, estimator: Any, X: Any) -> pd.DataFrame:
        """``X`` checked against the fit of ``estimator`` (this encoder, or the classifier
        around it: ``validated_frame``); a frame read by position takes
        the fit's labels, so that this encoder and its tokenizer do not repeat the warning."""
        return validated_frame(estimator, X, self.tokenizer_.fitted_column_labels())

    def encode(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """``codes`` (n, n_categorical) int64 and ``numeric`` (n, n_numeric_) float64."""
        check_is_fitted(self)
        frame = self.checked_frame(self, X)
        [(_, tokens)] = self._token_batches(frame, len(frame))  # (checked_frame refuses 0 rows)
        return self._fold(self._codes(tokens)), self._numeric_block(frame)

    def encode_batches(
        self, X: Any, batch_rows: int
    ) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        """:meth:`encode` ``batch_rows`` rows at a time: yields ``(rows, codes, numeric)``.

        ``X`` is checked once, here, before the first batch (see
        :meth:`~tabmoe.tokenizer.ColumnTokenizer.transform_batches`); memory beyond ``X`` is
        that of one batch.
        """
        check_is_fitted(self)
        frame = self.checked_frame(self, X)
        tokens = self._token_batches(frame, batch_rows)
        return (
            (rows, self._fold(self._codes(t)), self._numeric_block(frame.iloc[rows]))
            for rows, t in tokens
        )

    def _token_batches(self, frame: pd.DataFrame, batch_rows: int) -> Iterator[tuple[slice, np.ndarray]]:
        """The tokenizer's ``transform_batches``, without its warning about missing values in
        a numeric column that held none at fit: ``_numeric_block`` reads those, not their
        MISSING token."""
        return self.tokenizer_.transform_batches(frame, batch_rows, numeric_missing=False)

    def transform(self, X: Any) -> np.ndarray | sparse.csr_matrix:
        """``[codes | numeric]`` as float64 (n, n_categorical + n_numeric_), or sparse
        ``[one-hot codes | numeric]`` when ``one_hot=True``, whatever scikit-learn's
        ``transform_output`` (the models index it; no ``set_output``)."""
        codes, numeric = self.encode(X)
        if not self.one_hot:
            return np.hstack([codes.astype(np.float64), numeric])
        blocks = [sparse.csr_matrix(numeric)]
        if self.one_hot_ is not None:
            with catch_warnings(), _array_output():  # one thread at a time: see tabmoe._stack
                # The tokenizer already warned, naming the column; these are its UNKNOWNs.
                warnings.filterwarnings("ignore", message="Found unknown categories")
                blocks.insert(0, self.one_hot_.transform(codes))
        return sparse.hstack(blocks, format="csr")

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of :meth:`transform`'s columns: each categorical column's name (one-hot:
        ``<name>_<code>`` per kept code, as ``OneHotEncoder``'s), then each numeric
        column's, then ``missingindicator_<name>`` per indicator (``SimpleImputer``'s).
        ``input_features``: scikit-learn's rule (checked against ``feature_names_in_``,
        else x0, x1, ...)."""
        check_is_fitted(self)
        names = np.asarray(_check_feature_names_in(self, input_features), dtype=object)
        categorical = names[self.categorical_columns_]
        if self.one_hot_ is not None:
            categorical = self.one_hot_.get_feature_names_out(categorical)
        numeric = np.empty(0, dtype=object)
        if self.numeric_ is not None:
            numeric = self.numeric_.get_feature_names_out(names[self.numeric_columns_])
        return np.concatenate([categorical, numeric]).astype(object)

    @property
    def categorical_output_mask(self) -> np.ndarray:
        """Which columns of the dense ``transform`` output hold categorical codes."""
        check_is_fitted(self)
        mask = np.zeros(len(self.cardinalities_) + self.n_numeric_, dtype=bool)
        mask[: len(self.cardinalities_)] = True
        return mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []
        return tags


def _unit_weights(weight: np.ndarray) -> np.ndarray:
    """``weight`` times the power of two that brings its mean into [1, 2) (unchanged where
    it is there). The scaler's weighted means and variances are the same, bit for bit (a
    power of two rounds nothing), but ``StandardScaler`` counts the sum of the weights as the
    rows seen, and its test for a constant column allows a rounding error that grows with
    that count: weights summing past about 1e15 left a numeric column unscaled (``scale_``
    1), and past about 1e200 the variance overflowed and every value became missing (0,
    indicator set). All weights 0: left as they are (scikit-learn's to refuse)."""
    top = float(weight.max()) if len(weight) else 0.0
    if not top > 0:
        return weight
    shift = -np.frexp(top)[1]  # the largest into [0.5, 1): the mean cannot overflow
    mean = float(np.ldexp(weight, shift).mean())
    shift += 1 - np.frexp(mean)[1]
    return weight if shift == 0 else np.ldexp(weight, shift)


def _array_output():
    """Inner transformers return arrays (and one-hot stays sparse) whatever the global
    ``transform_output``: the encoder indexes their outputs positionally. A context rather
    than ``set_output`` on each, so that encoders fitted before this also obey it."""
    return config_context(transform_output="default")


#: A column whose largest |x| is beyond 2^SAFE_EXPONENT, or below 2^-SAFE_EXPONENT, is scaled
#: by a power of two before StandardScaler (:class:`PowerOfTwoScaler`).
SAFE_EXPONENT = 256


class PowerOfTwoScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Each column times ``2**shift_[j]``: 1 (the column as it is) unless the column's
    largest |x| at fit is beyond ``2**SAFE_EXPONENT`` or below ``2**-SAFE_EXPONENT``, where
    the power brings it into [0.5, 1).

    StandardScaler squares each value's distance from the mean: beyond about 1e154 the
    squares overflowed (at 1e160 the column was left unscaled, and the torch baselines
    diverged on it; at 1e300 its variance was NaN and every value became missing, 0 with the
    indicator set), and below about 1e-160 they underflowed (at 1e-170 the column was left
    unscaled, ~0 in every row). A power of two rounds no value (but a subnormal one), so the
    standardised values are those of the column at an ordinary scale; the other columns
    are untouched, their encodings bit for bit what StandardScaler alone gives.
    """

    def fit(self, X: Any, y: Any = None) -> PowerOfTwoScaler:
        X = np.asarray(X, dtype=np.float64)
        self.n_features_in_ = X.shape[1]
        top = np.fmax.reduce(np.abs(X), axis=0, initial=0.0)  # NaN ignored; 0 if none
        exponent = np.frexp(top)[1]
        self.shift_ = np.where(np.abs(exponent) > SAFE_EXPONENT, -exponent, 0)
        return self

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return np.ldexp(np.asarray(X, dtype=np.float64), self.shift_)


def _numeric_pipeline() -> Pipeline:
    """Bring extreme columns to an ordinary scale, standardise, then NaN -> 0 (the training
    mean) plus missing indicators."""
    return make_pipeline(
        PowerOfTwoScaler(),
        StandardScaler(),
        SimpleImputer(
            strategy="constant", fill_value=0.0, add_indicator=True, keep_empty_features=True
        ),
    )
