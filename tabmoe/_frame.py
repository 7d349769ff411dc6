"""DataFrames in: any 2-d input as a frame, checked against a fitted estimator, and the
column kinds (categorical, number, datetime, timedelta) the tokenizer reads."""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import _get_feature_names, _num_features, validate_data

from ._numeric import numeric_kind, time_zone


def to_frame(X: Any) -> pd.DataFrame:
    """Return ``X`` as a DataFrame without copying data or changing dtypes.

    Arrays get integer column labels ``0..n_features-1``; another dataframe whose column
    names scikit-learn reads (a pyarrow Table, a polars DataFrame) becomes a frame of its
    columns (pyarrow dtypes, a copy). Raises ``ValueError`` for 1-d, 3-d, complex or sparse
    input, naming what was received.
    """
    if isinstance(X, pd.DataFrame):
        frame = X
    elif (table := as_arrow_table(X)) is not None:
        # scikit-learn reads the column names of a pyarrow Table or a polars DataFrame
        # (feature_names_in_), so their columns are read as a frame's, with their types (as
        # read_parquet(dtype_backend="pyarrow") gives them): as an array they were objects
        # (decimals categories), and the tokenizer, fitted on unnamed columns, warned at every
        # predict. Every column, as scikit-learn counts them (ignore_metadata: no pandas
        # index restored).
        frame = table.to_pandas(types_mapper=pd.ArrowDtype, ignore_metadata=True)
    else:
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                "Sparse input is not supported: tabmoe tokenizes each column; pass a dense "
                "array or a pandas DataFrame."
            )
        arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
        if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
            # A list of rows mixing numbers and text: numpy turned every value into text
            # (1.5 -> '1.5', True -> 'True'), so numeric columns became categories, unless a
            # None somewhere made the array object. Each value keeps its type as objects.
            arr = np.asarray(X, dtype=object)
        if arr.ndim == 0 and arr.dtype == object:  # not array-like: numpy made it one object
            # e.g. a polars LazyFrame, which was "got 0D array ... array.reshape(-1, 1)"
            advice = ": a lazy frame, collect() it first" if callable(getattr(X, "collect", None)) else ""
            if isinstance(X, Mapping):  # a row as a dict (a request's payload), or columns
                advice = (": a dict. For one row (a value per column), pass pd.DataFrame([X]); for "
                          "columns (a list of values per column), pd.DataFrame(X)")
            raise ValueError(
                f"Expected 2D array or DataFrame, got {type(X).__module__}.{type(X).__qualname__}, "
                f"which numpy reads as one value{advice}."
            )
        if arr.ndim != 2:
            raise ValueError(f"Expected 2D array, got {arr.ndim}D array instead{_one_d_advice(X, arr)}")
        # Object arrays (e.g. from a ColumnTransformer) get per-column dtypes back, so that
        # numeric columns are binned rather than treated as categories. pd.NA (a nullable
        # column's to_numpy()) would keep its column object: it is NaN for infer_objects.
        if arr.dtype == object:
            missing = pd.isna(arr)
            if missing.any():
                arr = np.where(missing, np.nan, arr)
        # copy=False: pandas 3 copies an ndarray by default, which doubled the memory of
        # predicting on a large array (the frame is only read). infer_objects for objects
        # only: pandas 2's copies whatever the dtypes (copy=True without copy-on-write).
        frame = pd.DataFrame(arr, copy=False)
        if arr.dtype == object:
            frame = frame.infer_objects()
    for axis, what in ((0, "sample"), (1, "feature")):
        if frame.shape[axis] == 0:
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={frame.shape}) while a minimum of 1 is "
                "required."
            )
    check_unique_columns(frame.columns)
    for name, dtype in frame.dtypes.items():
        if pd.api.types.is_complex_dtype(dtype):
            raise ValueError(f"Complex data not supported (column {name!r}).")
    return frame


def _one_d_advice(X: Any, arr: np.ndarray) -> str:
    """The end of the error for input that is not 2-d: what to pass instead. numpy's
    reshapes were the advice for every 1-d input, which turned a pandas Series (a row taken
    with ``X.iloc[i]``) into an object array read by position, and a list of dicts (records)
    into one column of dicts."""
    if isinstance(X, pd.Series):
        label = python_value(X.name)  # 7, not np.int64(7)
        return (
            f": a pandas Series (name {label!r}, {len(X)} values). For one row, pass a "
            "one-row DataFrame (X.iloc[[i]] rather than X.iloc[i], or "
            "series.to_frame().T.infer_objects(), which gives its values their types back); "
            "for one column, series.to_frame()."
        )
    if arr.ndim == 1 and len(arr) and all(isinstance(v, Mapping) for v in arr):
        return (
            f": a list of {len(arr)} dicts (records). Pass pd.DataFrame(X), whose columns are "
            "the dicts' keys."
        )
    return (
        ". Reshape your data either using array.reshape(-1, 1) if your data has a single "
        "feature or array.reshape(1, -1) if it contains a single sample."
    )


def as_arrow_table(X: Any) -> Any:
    """``X`` as a pyarrow Table when it is a dataframe other than pandas' whose column names
    scikit-learn reads and which exports the Arrow stream interface (``__arrow_c_stream__``:
    a pyarrow Table, a polars DataFrame); None for anything else, arrays included. pyarrow,
    an optional dependency, is imported only for such an ``X``."""
    # pandas' own frame exports the stream too (pandas >= 2.2): read as itself, not converted
    if isinstance(X, np.ndarray | pd.DataFrame) or not hasattr(type(X), "__arrow_c_stream__"):
        return None
    if _get_feature_names(X) is None:  # not read as named columns: as an array, as scikit-learn
        return None
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError(
            f"Reading a {type(X).__module__}.{type(X).__name__} needs pyarrow: pip install "
            "pyarrow (tabmoe's 'data' extra), or pass a pandas DataFrame."
        ) from None
    return _without_view_types(X if isinstance(X, pa.Table) else pa.table(X))


def _without_view_types(table: Any) -> Any:
    """``table`` with its columns of Arrow's view types (``string_view``, ``binary_view``,
    also as a dictionary's values: how polars exports text and categoricals) cast to the
    large types, which pandas' ArrowDtype can hold (it raises NotImplementedError on a
    view)."""
    import pyarrow as pa

    def plain(t: Any) -> Any:
        if pa.types.is_string_view(t):
            return pa.large_string()
        if pa.types.is_binary_view(t):
            return pa.large_binary()
        if pa.types.is_dictionary(t):
            return pa.dictionary(t.index_type, plain(t.value_type), t.ordered)
        return t

    schema = pa.schema([field.with_type(plain(field.type)) for field in table.schema])
    return table if schema.equals(table.schema) else table.cast(schema)


def check_unique_columns(columns: pd.Index) -> None:
    """ValueError naming the duplicated labels of ``columns``."""
    if columns.has_duplicates:
        duplicated = columns[columns.duplicated()].unique().tolist()
        raise ValueError(f"Column names must be unique; duplicated: {duplicated[:10]}.")


def validated_frame(estimator: Any, X: Any, labels: list[str] | None = None) -> pd.DataFrame:
    """``X`` as a frame checked against ``estimator``'s fitted features (scikit-learn's
    ``validate_data``, which warns if an array comes after a fit on a frame, or a frame
    with names after a fit without). An array gets the fitted column names, and, given the
    fit's other ``labels`` (reprs, as a tokenizer keeps them), a frame with names gets
    those, so that transformers fitted inside do not warn again. So does a frame without
    string names (``pd.DataFrame(array)``) after a fit on names: read by position, as
    scikit-learn reads it, with its warning once."""
    frame = to_frame(X)
    names = getattr(estimator, "feature_names_in_", None)
    try:
        validate_data(estimator, X, skip_check_array=True, reset=False)
    except ValueError as exc:  # scikit-learn's "feature names should match": say which are renamed
        if names is not None and (hint := renamed_hint(list(names), frame.columns.tolist())):
            exc.args = (f"{str(exc).rstrip()}\n{hint.strip()}", *exc.args[1:])
        raise
    if names is not None and not isinstance(X, pd.DataFrame):
        frame.columns = names  # positional, as checked
    elif names is not None and _get_feature_names(frame) is None:
        # (a frame of int labels: the encoder and its tokenizer warned again, naming themselves)
        frame = frame.set_axis(pd.Index(names, dtype=object), axis=1)  # positional, as checked
    elif names is None and labels is not None and (not isinstance(X, pd.DataFrame) or _get_feature_names(frame) is not None):
        # an array, or a frame with string names after a fit on other labels: by position
        columns = pd.Index([_label_from_repr(label) for label in labels], dtype=object, tupleize_cols=False)
        frame = frame.set_axis(columns, axis=1)  # positional, as checked (not in place: X's own frame)
    return frame


def python_value(value: Any) -> Any:
    """A numpy scalar as its Python value (others as they are): for messages, where NumPy 2
    writes ``np.int64(5)`` and ``np.str_('a')``, and for JSON."""
    return value.item() if isinstance(value, np.generic) else value


def label_reprs(columns: pd.Index) -> list[str]:
    """Column labels as comparable, JSON-safe strings (labels may be ints, tuples, NaN)."""
    return [repr(python_value(label)) for label in columns.tolist()]


class _AbsentLabel:
    """The label of a fitted column absent from X, known only by its repr (not a literal)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _label_from_repr(text: str) -> Any:
    """The label whose repr is ``text`` (ints, tuples, ...), or a stand-in that prints so."""
    try:
        label = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _AbsentLabel(text)
    return label if repr(label) == text else _AbsentLabel(text)


def _positions(n: int) -> list[str]:
    """The label reprs of an array's columns (and of a frame labelled 0..n-1)."""
    return [repr(j) for j in range(n)]


def fitted_columns(X: Any, names: np.ndarray | None, labels: list[str] | None, missing: str | None) -> Any:
    """A DataFrame ``X``'s columns matched by label to the fitted ones: string names
    (``names``, scikit-learn's ``feature_names_in_``) or, for a fit without them, the
    ``repr`` of other labels (ints, tuples; ``labels``) when ``X``'s labels are not strings
    either (a frame with string names is then read by position, with scikit-learn's warning;
    arrays always are). Fitted columns absent from ``X`` are a ValueError naming them and
    any ``X`` has instead, unless ``missing="exclude"``: ``X`` then comes back with the
    absent columns inserted, all NaN, if it has no others, not none of the fitted ones, and
    those in the fitted order (else a ValueError, as for a permuted full set). ``missing``:
    the estimator's, whose hint the error gives; None for a tokenizer. Other
    frames (equal, permuted) come back as they are, for scikit-learn's and the tokenizer's
    checks. A pyarrow Table or polars frame is matched by its names as the frame
    :func:`to_frame` reads (it comes back as that frame)."""
    if not isinstance(X, pd.DataFrame):
        table = as_arrow_table(X)
        if table is None:
            return X
        # read as a frame, whose names scikit-learn checks too: absent columns were its
        # "Feature names seen at fit time, yet now missing", even with missing="exclude"
        X = to_frame(table)
    check_unique_columns(X.columns)  # matched by label, a duplicate would be one of two columns
    if names is not None:  # compared as values, not reprs: a numpy str equals its str
        fitted, got = list(names), X.columns.tolist()
    elif labels is not None and _get_feature_names(X) is None:  # (mixed labels: its TypeError)
        fitted, got = labels, label_reprs(X.columns)
        if fitted == _positions(len(fitted)) and not set(got) <= set(fitted) and all(
            label == fitted[j] for j, label in enumerate(got) if label in fitted
        ):
            # labelled otherwise than a fit on an array, and no label of it elsewhere than at
            # its position: by position, as scikit-learn reads it (labels 0..n-1 out of
            # place are matched, and refused, by label)
            return X
    else:
        return X
    if got == fitted:
        return X
    known, given = set(fitted), set(got)
    absent = [label for label in fitted if label not in given]
    extra = [label for label in got if label not in known]
    if not absent and (names is not None or not extra):  # scikit-learn names extra string columns
        return X
    shown = repr if names is not None else str
    if extra or missing != "exclude" or len(absent) == len(fitted):  # none left: no input
        hint = ""
        if missing == "token" and absent and not extra:
            hint = (" Create the estimator with missing='exclude' to predict without absent "
                    "columns (they are then left out of the attention).")
        elif missing == "exclude" and not extra:
            hint = " missing='exclude' predicts without some of them, not without all."
        elif names is not None:
            hint = renamed_hint(absent, extra)
        raise columns_error([shown(v) for v in absent], [shown(v) for v in extra], hint)
    if got != [label for label in fitted if label in given]:
        # refused as a reordered full set is (scikit-learn's check, or the tokenizer's)
        raise ValueError(
            f"Columns must be in the same order as they were in fit: fitted {listed(fitted, shown)}, "
            f"got {listed(got, shown)}{first_difference([v for v in fitted if v in given], got, shown)}; "
            "missing='exclude' accepts absent columns, not reordered ones."
        )
    position = {label: j for j, label in enumerate(got)}
    # X's columns taken by position, an absent one a float64 NaN column (reindex's -1): one
    # take per block, where a Series per column and their concat took 1.6 s at 16,000 columns
    take = [position.get(label, -1) for label in fitted]
    frame = X.set_axis(pd.RangeIndex(len(got)), axis=1).reindex(columns=take)
    values = X.columns.tolist()  # Python values: X.columns[j] may be a numpy int, of another repr
    frame.columns = pd.Index(
        [values[position[label]] if label in position else names[j] if names is not None
         else _label_from_repr(label) for j, label in enumerate(fitted)],
        dtype=object, tupleize_cols=False,
    )
    return frame


def listed(labels: list, shown: Any = str) -> str:
    """The first ten ``labels`` as a list, each printed by ``shown`` (``str``: reprs as they
    are), and how many there are beyond ten (a wide table's 1,500 absent columns)."""
    more = f", ... ({len(labels):,} in all)" if len(labels) > 10 else ""
    return f"[{', '.join(shown(v) for v in labels[:10])}{more}]"


def first_difference(fitted: list, got: list, shown: Any = str, sides: tuple[str, str] = ("fitted", "got")) -> str:
    """Where two column orders first part, beyond the ten that :func:`listed` prints (a wide
    table's columns swapped there printed two identical lists); "" within them."""
    j = next((j for j, (a, b) in enumerate(zip(fitted, got, strict=False)) if a != b), None)
    if j is None or j < 10:
        return ""
    return f", first differing at position {j}: {sides[0]} {shown(fitted[j])}, {sides[1]} {shown(got[j])}"


def _name_key(name: str) -> str:
    """``name`` as a careless copy may spell it: Unicode-normalized (NFKC), whitespace runs
    as one space and none around, case folded."""
    return " ".join(unicodedata.normalize("NFKC", name).split()).casefold()


def renamed_hint(fitted: list, got: list) -> str:
    """The end of a columns error for string names of ``got`` absent from ``fitted`` that
    are a fitted name absent from ``got`` but for letter case, whitespace or Unicode
    normalization ("Age" or "age " for "age", a CSV header's accident): which and how to
    rename them ("" where none is). Two names that print alike are shown in ASCII too."""
    known, given = set(fitted), set(got)
    keys: dict[str, list] = {}
    for name in fitted:
        if isinstance(name, str) and name not in given:
            keys.setdefault(_name_key(name), []).append(name)
    pairs = {}
    for name in got:
        if isinstance(name, str) and name not in known:
            match = keys.get(_name_key(name), [])
            if len(match) == 1:  # one fitted name only: no guess between two
                pairs[name] = match[0]
    if len(set(pairs.values())) < len(pairs):  # two of X's for one fitted name: no guess
        return ""
    if not pairs:
        return ""
    pairs = dict(list(pairs.items())[:10])
    alike = [f"{ascii(new)} for {ascii(old)}" for new, old in pairs.items()
             if unicodedata.normalize("NFKC", new) == unicodedata.normalize("NFKC", old)]
    ascii_forms = f" (in ASCII, {', '.join(alike)})" if alike else ""
    return (f" X's column(s) {listed(list(pairs), repr)} differ from the fitted "
            f"{listed(list(pairs.values()), repr)} only in letter case, whitespace or Unicode "
            f"normalization{ascii_forms}: rename them, X.rename(columns={pairs!r}).")


def columns_error(absent: list[str], extra: list[str], hint: str = "") -> ValueError:
    """The ValueError for fitted columns (reprs) absent from X, and X's others."""
    also = f", and X has column(s) {listed(extra)} not seen during fit." if extra else "."
    if not absent:
        return ValueError(f"X has column(s) {listed(extra)} not seen during fit.{hint}")
    return ValueError(f"Column(s) {listed(absent)} seen during fit are absent from X{also}{hint}")


def check_other_columns(X: pd.DataFrame, other: Any, by_label: bool, what: str) -> None:
    """ValueError naming the columns of a DataFrame ``other`` (``what``: eval_set's X_val,
    X_unlabeled) that are not ``X``'s, or not in its order, where predict matches columns by
    label: string names (every estimator), and other labels where ``by_label`` (a
    tokenizer's rule, :func:`fitted_columns`). A pyarrow Table or polars frame is checked by
    its names, as :func:`to_frame` reads it. Others are read by position, as at predict: a
    ValueError where their number of columns is not ``X``'s."""
    if not isinstance(other, pd.DataFrame):
        table = as_arrow_table(other)
        if table is None:  # eval_set's said "X has 3 features, but ColumnTokenizer is expecting 4"
            if (n := _num_features(other)) != X.shape[1]:
                raise ValueError(
                    f"{what} has {n} features, but X has {X.shape[1]}: an array is read by "
                    "position, as predict reads it."
                )
            return
        other = pd.DataFrame(columns=pd.Index(table.column_names, dtype=object))  # names only
    check_unique_columns(other.columns)
    named = _get_feature_names(X) is not None
    fitted, got = label_reprs(X.columns), label_reprs(other.columns)
    if got == fitted or (not by_label and (not named or _get_feature_names(other) is None)):
        return  # scikit-learn's rule: only string names on both sides are matched
    if not named:
        try:
            fitted_columns(other, None, fitted, None)
        except ValueError:
            pass  # absent or extra columns, named below
        else:
            if sorted(got) != sorted(fitted):
                return  # string names, or other labels than a fit on an array's: by position
    known, given = set(fitted), set(got)  # (a list scan per label: 4.3 s at 16,000 columns)
    absent, extra = [v for v in fitted if v not in given], [v for v in got if v not in known]
    detail = "; ".join([f"lacks {listed(absent)}"] * bool(absent) + [f"{listed(extra)} not in X"] * bool(extra))
    raise ValueError(
        f"{what} must have the same columns as X, in the same order: X has {listed(fitted)}, "
        f"{what} has {listed(got)} ({detail or 'in another order' + first_difference(fitted, got, sides=('X', what))})."
    )


def unlabeled_frame(X: pd.DataFrame, X_unlabeled: Any, by_label: bool) -> pd.DataFrame:
    """``X_unlabeled`` (``fit``'s rows without labels) as a frame of ``X``'s columns, checked
    against ``X`` as eval_set's X_val is (:func:`check_other_columns`, ``by_label`` its rule),
    with errors naming it. An array (or a frame of other labels) is read by position, as
    predict reads it, and takes ``X``'s labels. Every estimator's ``X_unlabeled`` is read here."""
    try:  # empty or 1-d: scikit-learn's words, which do not name X_unlabeled
        unlabeled = to_frame(X_unlabeled)
    except ValueError as exc:
        raise ValueError(f"X_unlabeled: {exc}") from None
    check_other_columns(X, X_unlabeled, by_label, "X_unlabeled")
    if unlabeled.shape[1] != X.shape[1]:
        raise ValueError(
            f"X_unlabeled has {unlabeled.shape[1]} features, but X has {X.shape[1]}: "
            "an array is read by position, as predict reads it."
        )
    if list(unlabeled.columns) != list(X.columns):
        unlabeled = unlabeled.set_axis(X.columns, axis=1)
    return unlabeled


def is_categorical_dtype(dtype: Any) -> bool:
    """Dtypes that ``categorical_features="auto"`` treats as categorical (pyarrow's
    dictionary type, what ``read_parquet(dtype_backend="pyarrow")`` gives a category, too;
    pyarrow's binary types, bytes as an object column holds them; intervals, ordered
    categories such as ``pd.cut``'s bins, which floats cannot hold)."""
    return (
        isinstance(dtype, pd.CategoricalDtype | pd.IntervalDtype)
        or (isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype).startswith("dictionary<"))
        or is_arrow_binary(dtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
    )


def is_arrow_binary(dtype: Any) -> bool:
    """pyarrow's bytes types (``binary``, ``large_binary``, ``fixed_size_binary``: a parquet
    BYTE_ARRAY column without a text annotation, a polars ``Binary``). pandas reads them as
    neither strings nor objects: under ``"auto"`` they were numeric, and fit failed
    ("holds non-numeric values") where the same bytes in an object column are categories."""
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    import pyarrow.types  # (an optional dependency, there when an ArrowDtype is)

    t = dtype.pyarrow_dtype
    return pyarrow.types.is_binary(t) or pyarrow.types.is_large_binary(t) or pyarrow.types.is_fixed_size_binary(t)


def check_tokenizable(frame: pd.DataFrame) -> None:
    """TypeError naming a column of pyarrow's nested types (list, struct, map): a value of
    several values is neither one category nor one number."""
    for name, dtype in frame.dtypes.items():
        if not isinstance(dtype, pd.ArrowDtype):
            continue
        import pyarrow.types  # (an optional dependency, there when an ArrowDtype is)

        if pyarrow.types.is_nested(dtype.pyarrow_dtype):
            raise TypeError(
                f"Column {name!r} has dtype {dtype}, whose values hold several values each, "
                "which cannot be one token: drop it, or turn it into columns of single values "
                "(e.g. its length, or one column per element) before fit."
            )


def match_kinds(frame: pd.DataFrame, other: pd.DataFrame, what: str) -> pd.DataFrame:
    """``other`` (same columns as ``frame``) with its all-missing columns given dtypes of
    ``frame``'s kinds; a ValueError naming the other columns whose kind differs from ``frame``'s
    (categorical, number, datetime and its time zone or period freq, timedelta). Concatenated for one fit,
    such a column would silently change kind (numbers beside strings become categories)."""
    def kind(dtype: Any) -> str:
        # concatenating two time zones, or periods with another freq or datetimes, gives objects
        detail = dtype if isinstance(dtype, pd.PeriodDtype) else time_zone(dtype)
        return "categorical" if is_categorical_dtype(dtype) else numeric_kind(dtype) + (f" ({detail})" if detail else "")

    def blank(dtype: Any) -> Any:
        # All missing (often object): numeric kinds take a dtype that keeps the column numeric
        # once concatenated (float64, not X's int or bool, which would refuse NaN or read None
        # as False), categorical ones object (all NaN, float64, would make the column numbers).
        if kind(dtype) == "categorical":
            return object
        return "float64" if numeric_kind(dtype) == "number" else dtype

    blanks = {name: blank(frame[name].dtype) for name in frame.columns if other[name].isna().all()}
    blanks = {name: dtype for name, dtype in blanks.items() if other[name].dtype != dtype}
    if blanks:
        # built, not cast: astype of NaT (naive datetimes, pd.Series([pd.NaT])'s dtype) to
        # timedeltas or an aware zone, or of a category of text to numbers, was pandas'
        # TypeError naming no column ("Cannot cast DatetimeArray to dtype timedelta64[us]")
        other = other.copy(deep=False)  # (X_unlabeled itself is left as it is)
        for name, dtype in blanks.items():
            other[name] = pd.Series(index=other.index, dtype=dtype).array  # (no alignment on the index)
    changed = [f"{name!r} ({kind(frame[name].dtype)} in X, {kind(other[name].dtype)} in {what})"
               for name in frame.columns if kind(frame[name].dtype) != kind(other[name].dtype)]
    if changed:
        raise ValueError(f"{what} has column(s) of another type than X: {', '.join(changed[:10])}.")
    return other


def concat_rows(frame: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame``, then those of ``other`` (same columns, kinds matched), with each
    of ``frame``'s ``category`` columns kept so: where ``other``'s dtype differs (other
    categories, or objects), both take ``frame``'s categories in their order, then those only
    ``other`` holds. ``pd.concat`` made such a column objects (its order lost) or, for integer
    categories, int64, which ``categorical_features="auto"`` then binned as numbers."""
    dtypes = {}
    for name in frame.columns:
        dtype = frame[name].dtype
        if isinstance(dtype, pd.CategoricalDtype) and other[name].dtype != dtype:
            values = pd.Index(other[name].dropna().unique(), dtype=object)
            new = values[~values.isin(dtype.categories.astype(object))]
            categories = pd.Index(dtype.categories.astype(object).append(new), dtype=object)
            dtypes[name] = pd.CategoricalDtype(categories.infer_objects(), ordered=dtype.ordered)
    if dtypes:
        frame, other = frame.astype(dtypes), other.astype(dtypes)
    joined = pd.concat([frame, other], ignore_index=True)
    # pandas 2 joins aware datetimes of numpy and of pyarrow (one zone) as objects, which
    # "auto" then read as categories; pandas 3 keeps them datetimes. Read as frame's dtype.
    for name in frame.columns:
        kinds = {numeric_kind(frame[name].dtype), numeric_kind(other[name].dtype)}
        if joined[name].dtype == object and kinds == {"datetime"}:
            joined[name] = pd.concat([frame[name], other[name].astype(frame[name].dtype)], ignore_index=True)
    return joined
