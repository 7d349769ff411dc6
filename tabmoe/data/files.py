"""Local CSV and Parquet files as a :class:`~tabmoe.data.table.Table`.

CSV cells are typed by pandas; text columns become (unordered) ``category``, numeric columns
stay numeric unless listed in ``categorical``. Parquet keeps its stored dtypes (a stored
``category`` stays one) and text columns become ``category`` too. Parquet needs pyarrow.
"""

from __future__ import annotations

import lzma
import os
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._stack import user_stacklevel
from ..tokenizer import is_categorical_dtype
from .table import Table

CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz")
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Cells read as missing in CSV files, on top of pandas' defaults ("?" is UCI's marker).
EXTRA_NA_VALUES = ("?",)


def _check_header(path: Path) -> None:
    """A ValueError for a CSV header that repeats a name: pandas renamed the second ``a`` to
    ``a.1`` without a word, where a Parquet file or a table with repeated names is refused."""
    header = pd.read_csv(path, header=None, nrows=1, dtype=str, skipinitialspace=True,
                         keep_default_na=False).iloc[0]  # "NA", "null": names, not missing
    header = header[header != ""]  # empty cells: pandas' "Unnamed: k", each its own
    repeated = header[header.duplicated()].unique().tolist()
    if repeated:
        raise ValueError(f"{path} has duplicate column names {repeated} in its header; rename them")


def _trailing_delimiter(path: Path, n_columns: int) -> bool:
    """Whether the data rows of a CSV with ``n_columns`` header names hold one field more,
    an empty one (a delimiter at the end of each line: the first row has it, others may
    not). pandas then takes the first column for row names and shifts the others one to
    the left; row names proper (R's ``write.table``: a non-empty extra field) are left to it."""
    def extra(nrows: int | None) -> pd.Series:  # the field after the header's last, per data row
        # the python engine fills a field a row lacks with NaN; the C engine with "" too
        return pd.read_csv(path, header=None, names=range(n_columns + 1), nrows=nrows, dtype=str,
                           keep_default_na=False, skipinitialspace=True, engine="python").iloc[1:, n_columns]
    try:
        if extra(2).isna().all():  # the first data row is no longer than the header
            return False
        fields = extra(None)
    except pd.errors.ParserError:
        return False
    return bool((fields.isna() | (fields.str.strip() == "")).all())  # empty or absent in each


def read_frame(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file by its suffix; "?" also counts as missing in CSV."""
    path = Path(path)
    if path.is_dir():  # else "not found", for a path that exists
        raise FileNotFoundError(f"data file {path} is a folder, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"data file not found: {path}")
    name = path.name.lower()
    if name.endswith(CSV_SUFFIXES):
        try:
            frame = pd.read_csv(path, na_values=list(EXTRA_NA_VALUES), skipinitialspace=True)
            _check_header(path)
            if _trailing_delimiter(path, frame.shape[1]):
                # every row one field longer than the header, the extra one empty: pandas took
                # the first column for row names and shifted the others one to the left
                frame = pd.read_csv(path, na_values=list(EXTRA_NA_VALUES), skipinitialspace=True,
                                    index_col=False)
            return frame
        except UnicodeDecodeError as exc:  # the codec's words named no file
            raise ValueError(f"cannot read {path}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
        except pd.errors.EmptyDataError as exc:  # "No columns to parse from file"
            raise ValueError(f"cannot read {path}: the file is empty, not even a header line") from exc
        except pd.errors.ParserError as exc:  # ragged rows, an unclosed quote: named no file
            raise ValueError(f"cannot read {path}: not valid CSV ({' '.join(str(exc).split())})") from exc
        except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile) as exc:
            if isinstance(exc, OSError) and exc.errno is not None:  # a system error names the file
                raise
            # a damaged or mislabelled .gz / .bz2 / .xz / .zip: a traceback out of tabmoe-bench
            raise ValueError(
                f"cannot read {path}: damaged, or not compressed as its suffix says "
                f"({type(exc).__name__}: {exc})"
            ) from exc
    if name.endswith(PARQUET_SUFFIXES):
        frame = pd.read_parquet(path)
        if named := [n for n in frame.index.names if n is not None]:  # df.set_index("date").to_parquet()
            warnings.warn(
                f"{path}: its index {named} is not a column and is left out of the table (a "
                "table's rows are numbered 0..n-1); to keep it, save the frame after reset_index()",
                UserWarning, stacklevel=user_stacklevel(),
            )
        return frame
    raise ValueError(
        f"cannot read {path}: unknown suffix; supported are {CSV_SUFFIXES + PARQUET_SUFFIXES}"
    )


def load_table_file(
    path: str | os.PathLike,
    *,
    target: str | None = None,
    categorical: Sequence[str] | str | None = None,
    name: str | None = None,
    description: str = "",
) -> Table:
    """Load a local CSV / Parquet file as a :class:`Table`.

    Parameters
    ----------
    path : path
        ``.csv`` (optionally compressed) or ``.parquet`` / ``.pq``.
    target : str, optional
        Label column; default the last column (the paper's convention).
    categorical : list of str or "all", optional
        Columns to treat as nominal although they are numeric (integer codes). Text columns
        are always nominal. ``"all"`` makes every column nominal.
    name : str, optional
        Table name; default the file name without suffixes.
    description : str, default=""
        Free text kept as the table's ``description`` (e.g. the file's provenance).
    """
    path = Path(path).expanduser()  # "~/x.csv": the user's home, as a shell would read it
    if target is not None and not isinstance(target, str):  # a list: "unhashable type: 'list'"
        raise ValueError(
            f"target must be a column name (text) of {path}, got {target!r} (quote a number in "
            "YAML: '3')"
        )
    frame = read_frame(path)
    if frame.shape[1] < 2:
        # a file separated by ';' or tabs reads as one column named by its whole header line
        one_name = str(frame.columns[0]) if frame.shape[1] == 1 and path.name.lower().endswith(CSV_SUFFIXES) else ""
        separator = next((c for c in ";\t|" if c in one_name), None)
        raise ValueError(
            f"{path} has {frame.shape[1]} column(s); need features and a label"
            + (f" (its header {str(frame.columns[0])!r} holds {separator!r}: CSV files are read "
               "comma-separated; save it with commas)" if separator else "")
        )
    if len(frame) == 0:  # else every column of a CSV is read as text: "has dtype category, not numeric"
        raise ValueError(f"{path} has no rows, only its header: no table to split")
    label = target if target is not None else str(frame.columns[-1])
    if label not in frame.columns:
        raise ValueError(f"target column {label!r} not in {path}; columns are {list(frame.columns)}")
    if categorical == "all":
        forced = list(frame.columns)
    elif isinstance(categorical, str):
        raise ValueError(f"categorical must be a list of column names or 'all', got {categorical!r}")
    else:
        forced = list(categorical or [])
    unknown = [c for c in forced if c not in frame.columns]
    if unknown:
        raise ValueError(f"categorical columns {unknown} not in {path}; columns are {list(frame.columns)}")
    for column in frame.columns:
        dtype = frame[column].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            continue
        if column in forced or is_categorical_dtype(dtype):
            frame[column] = frame[column].astype("category")
    return Table(
        data=frame,
        target=label,
        name=name or path.name.split(".")[0],
        source=f"file:{path}",
        description=description,
    )
