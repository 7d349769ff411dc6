"""Local CSV / Parquet loading."""

from __future__ import annotations

import gzip
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from tabmoe.data import load_table_file

CSV = """colour,size,count,label
red,1.5,3,yes
blue,?,4,no
red,2.0,,yes
green,0.5,3,no
"""


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(CSV)
    return path


def test_csv_types_missing_and_default_target(csv_path):
    table = load_table_file(csv_path)
    assert table.target == "label" and table.name == "toy"
    assert isinstance(table.data["colour"].dtype, pd.CategoricalDtype)
    assert isinstance(table.data["label"].dtype, pd.CategoricalDtype)
    assert pd.api.types.is_float_dtype(table.data["size"].dtype)
    assert table.data["size"].isna().sum() == 1  # "?" is missing
    assert table.data["count"].isna().sum() == 1
    assert table.categorical_columns == ["colour"]
    assert table.numeric_columns == ["size", "count"]


def test_csv_forced_categorical_and_named_target(csv_path):
    table = load_table_file(csv_path, target="colour", categorical=["count"])
    assert table.target == "colour"
    assert isinstance(table.data["count"].dtype, pd.CategoricalDtype)
    everything = load_table_file(csv_path, categorical="all")
    assert all(isinstance(d, pd.CategoricalDtype) for d in everything.data.dtypes)


def test_parquet_keeps_categories(tmp_path):
    pytest.importorskip("pyarrow")  # Parquet files: extra "data"
    frame = pd.DataFrame({
        "grade": pd.Categorical(["b", "a", "c"], categories=["c", "b", "a"], ordered=True),
        "x": [1.0, 2.0, 3.0],
        "city": ["x", "y", "x"],
        "y": [0, 1, 0],
    })
    path = tmp_path / "toy.parquet"
    frame.to_parquet(path)
    table = load_table_file(path, target="y")
    assert list(table.data["grade"].cat.categories) == ["c", "b", "a"]
    assert table.data["grade"].cat.ordered
    assert isinstance(table.data["city"].dtype, pd.CategoricalDtype)
    assert pd.api.types.is_integer_dtype(table.data["y"].dtype)


def test_errors_name_the_problem(csv_path, tmp_path):
    with pytest.raises(ValueError, match="target column 'nope' not in"):
        load_table_file(csv_path, target="nope")
    with pytest.raises(ValueError, match=r"categorical columns \['shape'\] not in"):
        load_table_file(csv_path, categorical=["shape"])
    with pytest.raises(ValueError, match="list of column names or 'all'"):
        load_table_file(csv_path, categorical="colour")
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        load_table_file(tmp_path / "missing.csv")
    (tmp_path / "data.json").write_text("{}")
    with pytest.raises(ValueError, match="unknown suffix"):
        load_table_file(tmp_path / "data.json")


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_csv_that_is_not_utf8_is_named(tmp_path, encoding):
    path = tmp_path / "cafes.csv"
    path.write_text("name,label\ncafé,yes\nnaïve,no\n", encoding=encoding)
    with pytest.raises(ValueError, match=r"cannot read .*cafes\.csv: not UTF-8 text"):
        load_table_file(path)


@pytest.mark.parametrize(("name", "content", "message"), [
    ("empty.csv", b"", "the file is empty"),
    ("ragged.csv", b"a,b,label\n1,2,x\n1,2,3,4\n", r"not valid CSV \(.*Expected 3 fields in line 3"),
    ("quote.csv", b'a,b,label\n"1,2,x\n1,2,3\n', "not valid CSV"),
    ("plain.csv.gz", b"a,b,label\n1,2,x\n", r"not compressed as its suffix says \(BadGzipFile"),
    ("plain.csv.bz2", b"a,b,label\n1,2,x\n", "not compressed as its suffix says"),
    ("plain.csv.xz", b"a,b,label\n1,2,x\n", "not compressed as its suffix says"),
    ("plain.csv.zip", b"a,b,label\n1,2,x\n", "not compressed as its suffix says"),
    ("cut.csv.gz", gzip.compress(b"a,b,label\n" + b"1,2,x\n" * 2000)[:-9], r"not compressed .* \(EOFError"),
], ids=lambda value: value if isinstance(value, str) and not value.count(" ") else "")
def test_a_csv_that_cannot_be_parsed_or_decompressed_is_named(tmp_path, name, content, message):
    # before: pandas' or the codec's words naming no file; a bad .gz escaped tabmoe-bench as a traceback
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"cannot read .*{re.escape(name)}: (damaged, or )?{message}"):
        load_table_file(path)


def test_a_file_with_a_header_and_no_rows_is_named(tmp_path):
    # before: a CSV loaded with every column a category, and a threshold split on a numeric
    # column said "has dtype category, not numeric"
    csv = tmp_path / "header.csv"
    csv.write_text("a,b,label\n\n")
    pytest.importorskip("pyarrow")  # Parquet files: extra "data"
    parquet = tmp_path / "header.parquet"
    pd.DataFrame({"a": pd.Series([], dtype=float), "label": pd.Series([], dtype=int)}).to_parquet(parquet)
    for path in (csv, parquet):
        with pytest.raises(ValueError, match=rf"{re.escape(path.name)} has no rows, only its header"):
            load_table_file(path)


def test_a_folder_given_as_the_data_file_is_named_a_folder(tmp_path):
    (tmp_path / "tables.csv").mkdir()  # before: "data file not found", though it exists
    with pytest.raises(FileNotFoundError, match=r"tables\.csv is a folder, not a file"):
        load_table_file(tmp_path / "tables.csv")


def test_a_target_that_is_not_a_column_name_is_refused_naming_it(csv_path):
    """A list failed with "unhashable type: 'list'", from a suite's `target: [y]` too."""
    from tabmoe.data.sources import source_from_dict

    with pytest.raises(ValueError, match=r"target must be a column name \(text\) of .*, got \['y'\]"):
        load_table_file(csv_path, target=["y"])
    with pytest.raises(ValueError, match=r"^split 's'.data: target must be a column name \(text\), got \['y'\]"):
        source_from_dict({"file": str(csv_path), "target": ["y"]}, where="split 's'.data")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"openml": -31}, r"openml must be a positive integer dataset id, got -31"),
        ({"openml": 0}, r"openml must be a positive integer dataset id, got 0"),
        ({"openml": 31, "target": 3}, r"target must be a column name \(text\), got 3 \(quote"),
        ({"openml": 31, "target": ["a", "b"]}, r"target must be a column name \(text\), got \['a', 'b'\]"),
    ],
)
def test_an_openml_entry_is_checked_when_the_suite_is_read(spec, message):
    """Accepted when read: a run then failed with "dataset_id must be a positive int (an
    OpenML id), got -31", naming no suite or split (tabmoe-bench shift-report)."""
    from tabmoe.data.sources import source_from_dict

    with pytest.raises(ValueError, match=rf"^split 's'.data: {message}"):
        source_from_dict(spec, where="split 's'.data")


@pytest.mark.parametrize("header", ["a,a,y", "a, a,y", "a,b,a,y", "NA,NA,y"])
def test_a_csv_header_that_repeats_a_name_is_refused_naming_it(tmp_path, header):
    """pandas read `a,a,y` as columns a, a.1, y without a word (a Parquet file or a table with
    repeated names is refused); the repeated name is now named."""
    path = tmp_path / "dup.csv"
    width = header.count(",") + 1
    path.write_text(header + "\n" + ",".join(["1"] * width) + "\n" + ",".join(["2"] * width) + "\n")
    name = header.split(",")[0]
    with pytest.raises(ValueError, match=rf"dup\.csv has duplicate column names \['{name}'\] in its header"):
        load_table_file(path, target="y")


def test_a_csv_header_with_two_empty_names_still_loads(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text(",,y\n1,2,a\n3,4,b\n")
    assert list(load_table_file(path, target="y").data.columns) == ["Unnamed: 0", "Unnamed: 1", "y"]


def test_a_user_home_tilde_is_expanded_where_tabmoe_reads_a_path(tmp_path, monkeypatch):
    # TABMOE_OPENML_CACHE='~/x', a quoted --openml-cache ~/x and a suite's {file: ~/x.csv}
    # were read literally: "data file not found: <suite dir>/~/t.csv", "Directory '~/x' does
    # not exist"
    pytest.importorskip("openml")  # default_cache_root and the CLI option live in the "data" extra
    from tabmoe.bench.cli import _UserPath
    from tabmoe.data.openml import default_cache_root
    from tabmoe.data.sources import FileSource, LoadContext, file_digest, source_from_dict

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "cache").mkdir()
    (tmp_path / "t.csv").write_text("a,label\nu,0\nv,1\n")
    monkeypatch.setenv("TABMOE_OPENML_CACHE", "~/cache")
    assert default_cache_root() == tmp_path / "cache"
    assert _UserPath(exists=True, file_okay=False, path_type=Path).convert("~/cache", None, None) == tmp_path / "cache"
    digest = file_digest(tmp_path / "t.csv")
    from_suite = source_from_dict({"file": "~/t.csv", "target": "label"}, base_dir=tmp_path / "suites")
    assert from_suite.file == str(tmp_path / "t.csv") and from_suite.digest() == digest
    direct = FileSource("~/t.csv", target="label")
    assert direct.digest() == digest and direct.load(LoadContext()).data.shape == (2, 2)
    # a path without ~ is read (and hashed) as before
    plain = source_from_dict({"file": "t.csv", "target": "label"}, base_dir=tmp_path)
    assert plain.file == str((tmp_path / "t.csv").resolve()) and plain.digest() == digest


def test_a_user_home_tilde_is_expanded_in_the_auto_mpg_paths(tmp_path, monkeypatch):
    """`{auto_mpg: {path: ~/x}}`, `auto_mpg_table("~/x")` and `TABMOE_AUTO_MPG=~/x` were read
    literally ("auto-mpg CSV not found at ~/x")."""
    import shutil

    from tabmoe.data.paper import auto_mpg_table, default_auto_mpg_path

    shipped = default_auto_mpg_path()
    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copy(shipped, tmp_path / "mpg.csv")
    assert auto_mpg_table("~/mpg.csv").data.shape == auto_mpg_table(shipped).data.shape
    monkeypatch.setenv("TABMOE_AUTO_MPG", "~/mpg.csv")
    assert default_auto_mpg_path() == tmp_path / "mpg.csv"


def test_a_user_home_tilde_in_a_suites_auto_mpg_path_is_not_read_under_the_suite_folder(tmp_path, monkeypatch):
    """A suite's `{auto_mpg: {path: ~/mpg.csv}}` was joined to the suite's folder before `~`
    was expanded: "auto-mpg CSV not found at <suite dir>/~/mpg.csv"."""
    import shutil

    from tabmoe.data.paper import default_auto_mpg_path
    from tabmoe.data.sources import LoadContext, source_from_dict

    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copy(default_auto_mpg_path(), tmp_path / "mpg.csv")
    suite_dir = tmp_path / "suites"
    suite_dir.mkdir()
    source = source_from_dict({"auto_mpg": {"path": "~/mpg.csv"}}, base_dir=suite_dir)
    assert source.path == str(tmp_path / "mpg.csv")
    assert len(source.load(LoadContext()).data) == 385
    # a relative path is still read from the suite's folder
    shutil.copy(default_auto_mpg_path(), suite_dir / "mpg.csv")
    assert source_from_dict({"auto_mpg": {"path": "mpg.csv"}}, base_dir=suite_dir).path == str(suite_dir / "mpg.csv")


@pytest.mark.parametrize("name", ["trail.csv", "trail.csv.gz"])
def test_a_csv_with_a_delimiter_at_the_end_of_each_row_keeps_its_columns(tmp_path, name):
    """pandas read rows one (empty) field longer than the header as row names plus data: the
    first column was lost and every other one shifted left (`a` held `b`'s values, the label
    `y` all missing). Row names proper (a non-empty extra field) are still the index."""
    text = "a,b,y\n1,2,yes,\n3,4,no,\n5,6,yes\n"  # the last line without one
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    data = load_table_file(path).data
    assert data.to_dict("list") == {"a": [1, 3, 5], "b": [2, 4, 6], "y": ["yes", "no", "yes"]}
    named = tmp_path / "rownames.csv"
    named.write_text("a,b,y\nr1,1,2,yes\nr2,3,4,no\n")
    assert load_table_file(named).data.to_dict("list") == {"a": [1, 3], "b": [2, 4], "y": ["yes", "no"]}


@pytest.mark.parametrize(("separator", "shown"), [(";", ";"), ("\t", "\\t")])
def test_a_csv_separated_by_another_character_is_named_so(tmp_path, separator, shown):
    """A file separated by ';' (Excel in many locales) or tabs said only "has 1 column(s);
    need features and a label", of a file the user sees with three columns."""
    path = tmp_path / "semi.csv"
    path.write_text(separator.join(["a", "b", "y"]) + "\n" + separator.join(["1,5", "2", "yes"]) + "\n")
    with pytest.raises(ValueError, match=rf"semi\.csv has 1 column\(s\); need features and a label \(its header "
                       rf"'a{re.escape(shown)}b{re.escape(shown)}y' holds '{re.escape(shown)}': CSV files are read comma-separated"):
        load_table_file(path)
    single = tmp_path / "single.csv"
    single.write_text("y\n1\n2\n")
    with pytest.raises(ValueError, match=r"single\.csv has 1 column\(s\); need features and a label$"):
        load_table_file(single)


def test_a_parquet_files_named_index_is_named_when_it_is_left_out(tmp_path):
    # df.set_index("date").to_parquet(...) loaded without "date" and without a word; a
    # later TimeSplit("date") then failed naming a missing column
    pytest.importorskip("pyarrow")  # Parquet files: extra "data"
    path = tmp_path / "dated.parquet"
    frame = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=6), "x": range(6), "y": list("abcabc")})
    frame.set_index("date").to_parquet(path)
    with pytest.warns(UserWarning, match=r"its index \['date'\] is not a column and is left out") as caught:
        table = load_table_file(path, target="y")
    assert list(table.data.columns) == ["x", "y"] and caught[0].filename == __file__
    frame.to_parquet(path)  # a default index: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(load_table_file(path, target="y").data.columns) == ["date", "x", "y"]
