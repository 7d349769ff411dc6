"""Numeric columns: their kind (number, datetime, timedelta), their values as floats, and
their quantile bins (:class:`~tabmoe.tokenizer.ColumnTokenizer`'s numeric side)."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pandas as pd

from ._unseen import shown_value  # (a long text cut, with its length)

#: Characters of pandas' message quoted in the error for a non-numeric value where the value
#: itself is not found (a longer one keeps its start and its end).
MAX_DETAIL_CHARS = 200


def numeric_kind(dtype: Any) -> str:
    """"datetime", "timedelta" or "number": what a numeric column's floats measure (pyarrow's
    dates and durations too, which pandas' own checks read as datetime and as number;
    periods are datetimes, read as the instants they start at)."""
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype) or (isinstance(dtype, pd.ArrowDtype) and dtype.kind == "m"):
        return "timedelta"
    return "number"


def values_dtype(dtype: Any) -> Any:
    """The dtype of a column's values: a ``category`` of datetimes, timedeltas or periods
    (``astype("category")``) holds those, and is read as them; any other dtype as it is."""
    if isinstance(dtype, pd.CategoricalDtype) and numeric_kind(dtype.categories.dtype) != "number":
        return dtype.categories.dtype
    return dtype


def time_zone(dtype: Any) -> Any:
    """A datetime dtype's time zone, None when naive (or not a datetime): pyarrow keeps it on
    its own type, where the dtype's ``tz`` does not look."""
    if isinstance(dtype, pd.ArrowDtype):
        return getattr(dtype.pyarrow_dtype, "tz", None)
    return getattr(dtype, "tz", None)


def numeric_values(column: pd.Series, name: Any, kind: str | None = None, aware: bool | None = None) -> np.ndarray:
    """Float view of a numeric/datetime column; NaN marks missing. Rejects inf, and (given
    the ``kind`` the column had at fit) a column of another kind: datetimes read as numbers,
    or numbers as datetimes, would be nanoseconds in the wrong bins. Likewise (given whether
    its datetimes had a time zone at fit, ``aware``) naive datetimes for aware ones or the
    reverse: read as UTC, they would move by the zone's offset. Periods are read as the
    instants they start at (their ordinals are counts of their ``freq``: months at fit and
    days at predict would be on two scales), so a period of another ``freq``, or a datetime,
    reads on the same scale."""
    dtype = given = column.dtype  # (given: as the errors name it)
    if values_dtype(dtype) is not dtype:
        # a category of datetimes (timedeltas, periods) read as its values, as a category of
        # numbers is (to_numeric): it was refused as "number values (category)"
        column = column.astype(values_dtype(dtype))
        dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype) and dtype.kind in "mM":
        # pyarrow dates / durations / timestamps -> datetime64 / timedelta64, keeping a time
        # zone (numpy_dtype drops it), so that they read as the numpy column would
        tz = time_zone(dtype)
        column = column.astype(dtype.numpy_dtype if tz is None else pd.DatetimeTZDtype(dtype.pyarrow_dtype.unit, tz))
        dtype = column.dtype
    elif isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype).startswith("decimal"):
        # pyarrow decimals (SQL / parquet DECIMAL) as floats: to_numeric drops the rows of
        # their nulls (pandas 3.1: "Length of values (40) does not match length of index")
        column = column.astype("float64[pyarrow]")
    elif isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype) == "halffloat":
        # pyarrow float16 (parquet's FLOAT16) as float32: to_numeric failed on it with "holds
        # non-numeric values (FloatingArray does not support np.float16 dtype.)"
        column = column.astype("float32[pyarrow]")
    elif isinstance(dtype, pd.ArrowDtype) and _is_arrow_time(dtype):
        # pyarrow times of day (time32 / time64): to_numeric failed on them with "holds
        # non-numeric values (Invalid object type at position 0)"
        raise TypeError(
            f"Column {name!r} has dtype {dtype} (times of day), which is not supported as a "
            "numeric column: list it in categorical_features, or convert it to numbers (e.g. "
            "seconds since midnight) before fit."
        )
    if kind in ("datetime", "timedelta") and pd.api.types.is_object_dtype(dtype):
        column = _objects_as_times(column, kind)  # as numbers in objects are read as numbers
        dtype = column.dtype
    now = numeric_kind(dtype)
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        now = "number" if kind == "number" else "object"  # numbers in objects: to_numeric decides
    if kind is not None and now != kind and not column.isna().all():
        legacy = ""
        if isinstance(dtype, pd.PeriodDtype) and kind == "number":
            # models fitted before periods were read as instants binned their ordinals
            legacy = (f" A model fitted when periods were numbers read their ordinals: pass "
                      f"X[{name!r}].array.asi8 to predict as it did, or refit.")
        raise TypeError(
            f"Column {name!r} held {kind} values at fit and holds {now} values ({given}) now; "
            f"convert it to the fit's type.{legacy}"
        )
    has_tz = time_zone(dtype) is not None
    if now == "datetime" and aware is not None and has_tz != aware and not column.isna().all():
        at_fit, held = ("time-zone-aware", "naive") if aware else ("naive", "time-zone-aware")
        raise TypeError(
            f"Column {name!r} held {at_fit} datetimes at fit and holds {held} ones now ({given}); "
            "convert it (Series.dt.tz_localize or tz_convert) to the fit's kind."
        )
    if isinstance(dtype, pd.PeriodDtype):
        column = column.dt.to_timestamp(how="start")  # NaT stays NaT (to_numeric made it -2**63)
        dtype = column.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        if has_tz:
            column = column.dt.tz_convert(None)  # tz-aware -> UTC wall time (datetime64)
        values = column.to_numpy()
        if values.dtype.kind == "M":
            values = values - np.datetime64(0, "s")
        # Nanoseconds as float, through float seconds: converting the unit to ns first
        # overflows silently outside 1677-2262 (pandas keeps e.g. year 1 as datetime64[us]).
        return _seconds(values) * 1e9
    if pd.api.types.is_object_dtype(dtype) and (missing := column.isna()).any():
        # NaT (a float column concatenated with an all-NaT one, or where(..., pd.NaT)) is
        # missing as NaN, None and pd.NA are: to_numeric refused it ("Invalid object type")
        column = column.mask(missing, np.nan)
    try:
        numbers = pd.to_numeric(column, errors="raise")
    except OverflowError as exc:  # a Python int beyond the float range (10**309)
        raise ValueError(
            f"Input X contains a number too large for a float in column {name!r} ({exc}); "
            "replace it by a finite value or NaN, or list the column in categorical_features."
        ) from exc
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"Column {name!r} is numeric (declared so, or numeric at fit) but holds non-numeric "
            f"values ({_refused(column, exc, kind is None)}). If it is categorical, list it in "
            "categorical_features and refit."
        ) from exc
    if pd.api.types.is_complex_dtype(numbers.dtype):
        # complex numbers in an object column: the float cast kept the real part, with numpy's
        # ComplexWarning naming no column (a complex dtype is refused by to_frame)
        raise ValueError(
            f"Complex data not supported (column {name!r} holds complex numbers): give it real "
            "numbers, or list it in categorical_features (and refit) to read each value as a category."
        )
    values = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isinf(values).any():
        raise ValueError(
            f"Input X contains infinity in column {name!r}; replace inf by a finite value or "
            "NaN (which becomes the MISSING token)."
        )
    return values


def _objects_as_times(column: pd.Series, kind: str) -> pd.Series:
    """An object ``column`` of datetimes (Timestamps, ``datetime``, ``date``, ``datetime64``;
    missing values beside them) as datetime64, or of timedeltas as timedelta64, where the
    column held that ``kind`` at fit: ``pd.concat`` with a frame whose column was all None,
    or a one-row frame taken as ``row.to_frame().T``, makes them objects, and they were
    refused ("holds object values"). Anything else comes back as it is, to be refused: text,
    whose format (day first or not) is the user's to say, and time zones mixed together or
    with naive datetimes, whose instants ``to_datetime`` does not read without ``utc=True``."""
    wanted = ("datetime64", "datetime", "date") if kind == "datetime" else ("timedelta64", "timedelta")
    if pd.api.types.infer_dtype(column, skipna=True) not in wanted:
        return column
    try:
        return pd.to_datetime(column) if kind == "datetime" else pd.to_timedelta(column)
    except (TypeError, ValueError, OverflowError):
        return column


def _refused(column: pd.Series, exc: Exception, fitting: bool) -> str:
    """The first value of ``column`` that ``to_numeric`` refuses (``exc``), its type and its
    row's index label: pandas' message gives its position in the rows passed, which are a batch
    of X's at predict time (row 66,000 was "at position 464"), and for a date, a tuple or any
    other object no value ("Invalid object type at position 0"). At fit (``fitting``), a hint
    for dates and times held as Python objects."""
    row = _first_refused(column)
    if row is None:  # (not expected) pandas' words, a long text cut in the middle
        detail = str(exc)
        if len(detail) > MAX_DETAIL_CHARS:
            detail = f"{detail[: MAX_DETAIL_CHARS - 50]} ... {detail[-50:]}"
        return detail

    value = column.iloc[row]
    hint = ""
    if fitting and isinstance(value, datetime.date | datetime.timedelta | np.datetime64 | np.timedelta64):
        hint = ("; dates or times held as Python objects: convert the column with pd.to_datetime (utc=True "
                "where they mix time zones) or pd.to_timedelta to bin it by time")
    label = column.index[row : row + 1].tolist()[0]  # a Python scalar: int64's was "np.int64(66000)"
    return f"e.g. {shown_value(value)} of type {type(value).__name__} in the row with index {label!r}{hint}"


def _first_refused(column: pd.Series) -> int | None:
    """Position in ``column`` of the first value that ``to_numeric`` refuses on its own, or
    None. Not merely the first it coerces to NaN: it reads an empty text ("", b"") as NaN
    without an error, and such a blank before the refused value was named instead of it."""
    try:
        coerced = pd.to_numeric(column, errors="coerce").isna().to_numpy() & column.notna().to_numpy()
    except (TypeError, ValueError, OverflowError):
        return None
    candidates = np.flatnonzero(coerced)
    read = set()  # values seen to be read as NaN (the blanks), not tried again
    for row, value in zip(candidates, column.to_numpy(dtype=object)[candidates], strict=True):
        try:
            key = (type(value), value)
            seen = key in read
        except TypeError:  # unhashable
            key, seen = None, False
        if seen:
            continue
        try:
            pd.to_numeric(pd.Series([value], dtype=object), errors="raise")
        except (TypeError, ValueError, OverflowError):
            return int(row)
        if key is not None:
            read.add(key)
    return None


def _seconds(span: np.ndarray) -> np.ndarray:
    """timedelta64 -> float seconds (NaT: NaN), the float nearest the exact span, so that one
    instant gives one float whatever its unit. ``span / 1 s`` is that while the span's count
    of units is exact as a float (below 2^53); beyond, the count is rounded before it is
    divided: 2020's datetimes as datetime64[ns] and as datetime64[us] differed in a quarter
    of their floats, and one on a bin edge took another bin. There, whole seconds and the
    fraction are added (the whole seconds' rounding error kept: ms beyond 2^53 s)."""
    unit, count = np.datetime_data(span.dtype)
    seconds = span / np.timedelta64(1, "s")
    per = np.timedelta64(1, "s") / np.timedelta64(count, unit)  # units per second
    if per > 1 and per == round(per):
        ticks = span.view(np.int64)
        big = ((ticks >= 2**53) | (ticks <= -(2**53))) & ~np.isnat(span)
        if big.any():
            per = round(per)
            whole, part = np.divmod(ticks[big], per)
            high = whole.astype(np.float64)
            seconds[big] = high + ((whole - high.astype(np.int64)) + part / per)
    return seconds


def _is_arrow_time(dtype: pd.ArrowDtype) -> bool:
    import pyarrow.types  # (an optional dependency, there when an ArrowDtype is)

    return pyarrow.types.is_time(dtype.pyarrow_dtype)


def auto_bins(n_rows: int) -> int:
    """Bins for ``n_bins="auto"``: the Rice rule, 2 n^(1/3) (10 at 125 rows, 20 at 1,000)."""
    return max(2, round(2 * n_rows ** (1 / 3)))


def _quantiles(finite: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """``np.quantile`` (linear), finite wherever the values are. It interpolates between
    two neighbours through their difference, which overflows when they are more than the
    float range apart (-1.6e308 and 1.6e308): the quantile came out -inf, or NaN on one of
    the values. Those quantiles are taken again on the halved values, and doubled."""
    with np.errstate(over="ignore", invalid="ignore"):
        quantiles = np.quantile(finite, probabilities)
        overflowed = ~np.isfinite(quantiles)
        if overflowed.any():
            quantiles[overflowed] = np.quantile(finite / 2, probabilities[overflowed]) * 2
    return quantiles


def _bin_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Inner bin edges (k-1 of them for k bins) from the finite training values."""
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return np.empty(0)
    distinct = np.unique(finite)
    if distinct.size <= n_bins:
        low, high = distinct[:-1], distinct[1:]
        mid = low / 2.0 + high / 2.0  # (low + high) / 2 overflows to inf near +-1.8e308
        # An edge must satisfy low < edge <= high to separate the two values (searchsorted
        # side="right"); adjacent floats have no midpoint, so use ``high`` there.
        return np.where((low < mid) & (mid <= high), mid, high)
    quantiles = _quantiles(finite, np.linspace(0, 1, n_bins + 1)[1:-1])
    edges, repeats = np.unique(quantiles, return_counts=True)
    # A value holding two quantile steps of the rows or more (0 in a column of mostly zeros)
    # makes several quantiles equal (one step may hold a single quantile): it gets a bin of
    # its own, an edge on it (values below go to the bin before) and one a float above it
    # (values above go to the bin after).
    # One edge alone would leave it in a bin with its neighbours on one side: with the
    # minimum, a column of 92% zeros was one token for every row. An edge on the minimum
    # is moved above it even when one quantile put it there: the bin below it is empty.
    mass = ((repeats > 1) & np.isin(edges, distinct)) | (edges == distinct[0])
    below = edges[mass & (edges > distinct[0])]
    above = np.nextafter(edges[mass & (edges < distinct[-1])], np.inf)
    return np.unique(np.concatenate([edges[~mass], below, above]))
