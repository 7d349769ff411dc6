"""DataFrames in: any 2-d input as a frame, checked against a fitted estimator, and the
column kinds (categorical, number, datetime, timedelta) the tokenizer reads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import validate_data

from ._numeric import numeric_kind


def to_frame(X: Any) -> pd.DataFrame:
    """Return ``X`` as a DataFrame without copying data or changing dtypes.

    Arrays get integer column labels ``0..n_features-1``. Raises ``ValueError`` for 1-d,
    3-d, complex or sparse input, naming what was received.
    """
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                "Sparse input is not supported: tabmoe tokenizes each column; pass a dense "
                "array or a pandas DataFrame."
            )
        arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
        if arr.ndim != 2:
            raise ValueError(
                f"Expected 2D array, got {arr.ndim}D array instead. Reshape your data either "
                "using array.reshape(-1, 1) if your data has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        # Object arrays (e.g. from a ColumnTransformer) get per-column dtypes back, so that
        # numeric columns are binned rather than treated as categories. pd.NA (a nullable
        # column's to_numpy()) would keep its column object: it is NaN for infer_objects.
        if arr.dtype == object:
            missing = pd.isna(arr)
            if missing.any():
                arr = np.where(missing, np.nan, arr)
        frame = pd.DataFrame(arr).infer_objects()
    for axis, what in ((0, "sample"), (1, "feature")):
        if frame.shape[axis] == 0:
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={frame.shape}) while a minimum of 1 is "
                "required."
            )
    if frame.columns.has_duplicates:
        duplicated = frame.columns[frame.columns.duplicated()].unique().tolist()
        raise ValueError(f"Column names must be unique; duplicated: {duplicated[:10]}.")
    for name, dtype in frame.dtypes.items():
        if pd.api.types.is_complex_dtype(dtype):
            raise ValueError(f"Complex data not supported (column {name!r}).")
    return frame


def validated_frame(estimator: Any, X: Any) -> pd.DataFrame:
    """``X`` as a frame checked against ``estimator``'s fitted features (scikit-learn's
    ``validate_data``, which warns if an array comes after a fit on a frame). An array gets
    the fitted column names, so that transformers fitted inside do not warn again."""
    frame = to_frame(X)
    validate_data(estimator, X, skip_check_array=True, reset=False)
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and not isinstance(X, pd.DataFrame):
        frame.columns = names  # positional, as checked
    return frame


def is_categorical_dtype(dtype: Any) -> bool:
    """Dtypes that ``categorical_features="auto"`` treats as categorical (pyarrow's
    dictionary type, what ``read_parquet(dtype_backend="pyarrow")`` gives a category, too)."""
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or (isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype).startswith("dictionary<"))
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
    )


def match_kinds(frame: pd.DataFrame, other: pd.DataFrame, what: str) -> pd.DataFrame:
    """``other`` (same columns as ``frame``) with its all-missing columns given ``frame``'s
    dtypes; a ValueError naming the other columns whose kind differs from ``frame``'s
    (categorical, number, datetime and its time zone or period freq, timedelta). Concatenated for one fit,
    such a column would silently change kind (numbers beside strings become categories)."""
    def kind(dtype: Any) -> str:
        # concatenating two time zones, or periods with another freq or datetimes, gives objects
        detail = dtype if isinstance(dtype, pd.PeriodDtype) else getattr(dtype, "tz", None)
        return "categorical" if is_categorical_dtype(dtype) else numeric_kind(dtype) + (f" ({detail})" if detail else "")

    # All missing (often object): numeric kinds take a dtype that keeps the column numeric once
    # concatenated (float64, not X's int or bool, which would refuse NaN or read None as False).
    empty = [name for name in frame.columns if other[name].isna().all() and kind(frame[name].dtype) != "categorical"]
    other = other.astype({name: "float64" if numeric_kind(frame[name].dtype) == "number" else frame[name].dtype
                          for name in empty})
    changed = [f"{name!r} ({kind(frame[name].dtype)} in X, {kind(other[name].dtype)} in {what})"
               for name in frame.columns if kind(frame[name].dtype) != kind(other[name].dtype)]
    if changed:
        raise ValueError(f"{what} has column(s) of another type than X: {', '.join(changed[:10])}.")
    return other
