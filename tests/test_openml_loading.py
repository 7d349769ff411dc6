"""Offline OpenML loading from a temporary copy of the shared cache, and cache safety.

Expected figures are the shared cache README's table (rows x columns, nominal / numeric
feature counts, target and class counts, missing cells).
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("openml")  # extra "data"

import openml
import requests

from tabmoe.data.openml import (
    OpenMLCacheError,
    cache_problems,
    dataset_cache_dir,
    load_openml,
)

# id: (name, rows, nominal, numeric, target, class counts, missing cells)
EXPECTED = {
    3: ("kr-vs-kp", 3196, 36, 0, "class", {"won": 1669, "nowin": 1527}, 0),
    24: ("mushroom", 8124, 22, 0, "class", {"e": 4208, "p": 3916}, 2480),
    40975: ("car", 1728, 6, 0, "class", {"unacc": 1210, "acc": 384, "good": 69, "vgood": 65}, 0),
    26: ("nursery", 12960, 8, 0, "class",
         {"not_recom": 4320, "priority": 4266, "spec_prior": 4044, "very_recom": 328, "recommend": 2}, 0),
    50: ("tic-tac-toe", 958, 9, 0, "Class", {"positive": 626, "negative": 332}, 0),
    46: ("splice", 3190, 60, 0, "Class", {"N": 1655, "IE": 768, "EI": 767}, 0),
    31: ("credit-g", 1000, 13, 7, "class", {"good": 700, "bad": 300}, 0),
    56: ("vote", 435, 16, 0, "Class", {"democrat": 267, "republican": 168}, 392),
    13: ("breast-cancer", 286, 9, 0, "Class", {"no-recurrence-events": 201, "recurrence-events": 85}, 9),
    1590: ("adult", 48842, 8, 6, "class", {"<=50K": 37155, ">50K": 11687}, 6465),
    1461: ("bank-marketing", 45211, 9, 7, "Class", {"1": 39922, "2": 5289}, 0),
    40668: ("connect-4", 67557, 42, 0, "class", {"2": 44473, "1": 16635, "0": 6449}, 0),
}


#: Cold loads of these take ~6 s together on the 2-core development machine.
BIG = (1590, 1461, 40668)


@pytest.mark.parametrize(
    "dataset_id",
    [pytest.param(i, marks=pytest.mark.slow) if i in BIG else i for i in EXPECTED],
)
def test_cached_dataset_loads_offline(openml_cache, dataset_id):
    name, rows, nominal, numeric, target, counts, missing = EXPECTED[dataset_id]
    table = load_openml(dataset_id, cache_dir=openml_cache)
    assert (table.name, table.target, table.source) == (name, target, f"openml:{dataset_id}")
    assert table.data.shape == (rows, nominal + numeric + 1)
    assert len(table.categorical_columns) == nominal
    assert len(table.numeric_columns) == numeric
    for column in table.categorical_columns + [target]:
        assert isinstance(table.data[column].dtype, pd.CategoricalDtype), column
    for column in table.numeric_columns:
        assert pd.api.types.is_numeric_dtype(table.data[column].dtype), column
    assert table.y.astype(str).value_counts().to_dict() == counts
    assert int(table.X.isna().sum().sum()) == missing
    assert "Offline-cache provenance" in table.description  # OpenML description text came through


def test_user_cache_gets_no_pickles(openml_cache):
    """openml works on a private copy: nothing is written into the user's cache."""
    load_openml(31, cache_dir=openml_cache)
    written = [p for p in openml_cache.rglob("*") if p.name.endswith((".pkl", ".pkl.py3", ".feather"))]
    assert written == []


def _one_entry(openml_cache: Path, tmp_path: Path, dataset_id: int) -> tuple[Path, Path]:
    """A cache root in tmp_path holding only ``dataset_id`` (copied from the session copy)."""
    root = tmp_path / "cache"
    entry = dataset_cache_dir(root, dataset_id)
    shutil.copytree(dataset_cache_dir(openml_cache, dataset_id), entry)
    return root, entry


def test_missing_file_is_named_and_cache_left_intact(openml_cache, tmp_path):
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    (entry / "features.xml").unlink()
    before = sorted(p.name for p in entry.iterdir())
    with pytest.raises(OpenMLCacheError, match=r"features\.xml \(missing\)") as info:
        load_openml(13, cache_dir=root)
    assert str(entry) in str(info.value)
    assert entry.is_dir() and sorted(p.name for p in entry.iterdir()) == before


def test_corrupt_files_are_named(openml_cache, tmp_path):
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    text = (entry / "description.xml").read_text()
    (entry / "description.xml").write_text(text[: len(text) // 2])
    (entry / "dataset.arff").write_text("")
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(13, cache_dir=root)
    message = str(info.value)
    assert "description.xml (not valid XML" in message
    assert "dataset.arff (empty)" in message
    assert "features.xml" not in message
    assert (entry / "dataset.arff").exists() and (entry / "features.xml").exists()


def test_unparsable_arff_is_reported(openml_cache, tmp_path):
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    arff = entry / "dataset.arff"
    arff.write_text(arff.read_text().replace("@data", "@data\n'40-49',{broken", 1))
    with pytest.raises(OpenMLCacheError, match="could not parse dataset.arff"):
        load_openml(13, cache_dir=root)
    assert arff.exists()


def test_absent_dataset_names_every_required_file(tmp_path):
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(99999, cache_dir=tmp_path)
    for name in ("description.xml", "features.xml", "dataset.arff"):
        assert f"{name} (missing)" in str(info.value)
    assert cache_problems(tmp_path / "nowhere") == [
        "description.xml (missing)", "features.xml (missing)", "dataset.arff (missing)"
    ]


def test_failed_download_does_not_delete_user_entry(openml_cache, tmp_path, monkeypatch):
    """The real openml code path deletes the folder it fetched into; that is only our copy."""

    def offline(*args, **kwargs):
        raise requests.exceptions.ConnectionError("network disabled in this test")

    monkeypatch.setattr(openml._api_calls, "_send_request", offline)
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    (entry / "features.xml").unlink()
    with pytest.raises(OpenMLCacheError, match="download failed") as info:
        load_openml(13, cache_dir=root, download=True, work_dir=tmp_path / "work")
    assert "features.xml (missing)" in str(info.value)
    assert sorted(p.name for p in entry.iterdir()) == ["dataset.arff", "description.xml", "qualities.xml"]
    # openml did remove its working copy, proving it would have removed the user's entry
    assert not any((tmp_path / "work").rglob("datasets/13"))


def test_foreign_pickle_in_user_cache_is_ignored(openml_cache, tmp_path):
    """pandas-2/3 pitfall: a pickle from another pandas major in the user's cache is never read."""
    root, entry = _one_entry(openml_cache, tmp_path, 56)
    (entry / "dataset.pkl.py3").write_bytes(b"not a pickle written by this pandas")
    table = load_openml(56, cache_dir=root)
    assert table.data.shape == (435, 17)


def test_persistent_work_dir_is_per_pandas_major_and_resyncs(openml_cache, tmp_path):
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    work = tmp_path / "work"
    assert len(load_openml(13, cache_dir=root, work_dir=work).data) == 286
    major = pd.__version__.split(".")[0]
    assert list((work / f"pandas-{major}").rglob("dataset.pkl.py3"))
    arff = entry / "dataset.arff"
    lines = arff.read_text().split("\n")
    last_row = max(i for i, line in enumerate(lines) if line and not line.startswith("%"))
    del lines[last_row]  # the user edits their cache: one data row fewer
    arff.write_text("\n".join(lines))
    stat = arff.stat()
    os.utime(arff, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert len(load_openml(13, cache_dir=root, work_dir=work).data) == 285


def test_openml_config_is_restored(openml_cache):
    before = openml.config.get_config_as_dict()
    load_openml(50, cache_dir=openml_cache)
    after = openml.config.get_config_as_dict()
    assert after["cachedir"] == before["cachedir"]
    assert after["retry_policy"] == before["retry_policy"]
    assert after["connection_n_retries"] == before["connection_n_retries"]


def test_target_override_and_errors(openml_cache):
    table = load_openml(31, cache_dir=openml_cache, target="foreign_worker")
    assert table.target == "foreign_worker" and "class" in table.X.columns
    with pytest.raises(ValueError, match="'nope' is not a column"):
        load_openml(31, cache_dir=openml_cache, target="nope")
    for bad in (0, -3, "31", 3.0, True):
        with pytest.raises(ValueError, match="dataset_id"):
            load_openml(bad, cache_dir=openml_cache)


def test_a_given_target_that_is_not_a_column_name_is_named_as_given(openml_cache):
    """target=5 (an unquoted number in a suite's data entry) was a TypeError ("argument of
    type 'int' is not iterable"); an empty or comma target given was called the dataset's
    "default target"."""
    with pytest.raises(ValueError, match=r"target must be a column name \(text\) of OpenML dataset 31, got 5"):
        load_openml(31, cache_dir=openml_cache, target=5)
    for given in ("", "class,purpose"):
        with pytest.raises(ValueError, match=rf"^target '{given}' is not a column of OpenML dataset 31"):
            load_openml(31, cache_dir=openml_cache, target=given)


def test_an_ignored_attribute_as_target_is_named(openml_cache):
    """splice's Instance_name is an ignore_attribute: it read as 'could not parse dataset.arff'."""
    with pytest.raises(ValueError, match="'Instance_name' is an ignored or row-id attribute of OpenML dataset 46") as info:
        load_openml(46, cache_dir=openml_cache, target="Instance_name")
    assert "'Instance_name'" not in str(info.value).split("columns are")[1]


def test_an_arff_truncated_at_a_line_end_is_warned_not_loaded_silently(openml_cache, tmp_path):
    """A copy cut short at a line end parses: 113 of breast-cancer's 286 rows, without a word."""
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the intact file matches its description's md5
        assert len(load_openml(13, cache_dir=root).data) == 286
    arff = entry / "dataset.arff"
    data = arff.read_bytes()
    arff.write_bytes(data[: data.rfind(b"\n", 0, len(data) // 2) + 1])
    with pytest.warns(UserWarning, match=r"dataset\.arff in .*13 is not the file its description\.xml describes"):
        assert len(load_openml(13, cache_dir=root).data) == 113
    assert arff.read_bytes() == data[: data.rfind(b"\n", 0, len(data) // 2) + 1]


def test_an_all_missing_numeric_attribute_stays_numeric(openml_cache, tmp_path):
    """openml-python returns an all-missing numeric attribute as object: read as nominal."""
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    arff = entry / "dataset.arff"
    head, rows = arff.read_text().split("@data\n", 1)
    rows = "".join(f"{row},?\n" for row in rows.splitlines() if row.strip())
    arff.write_text(f"{head}@attribute empty numeric\n@data\n{rows}")
    features = entry / "features.xml"
    features.write_text(features.read_text().replace("</oml:data_features>", (
        "<oml:feature><oml:index>10</oml:index><oml:name>empty</oml:name>"
        "<oml:data_type>numeric</oml:data_type><oml:is_target>false</oml:is_target>"
        "<oml:is_ignore>false</oml:is_ignore><oml:is_row_identifier>false</oml:is_row_identifier>"
        "</oml:feature></oml:data_features>"
    )))
    description = entry / "description.xml"
    text = description.read_text()
    start, end = text.index("<oml:md5_checksum>"), text.index("</oml:md5_checksum>")
    description.write_text(text[:start] + text[end + len("</oml:md5_checksum>"):])
    table = load_openml(13, cache_dir=root)
    assert table.data["empty"].dtype == float and table.data["empty"].isna().all()
    assert "empty" in table.numeric_columns and "empty" not in table.categorical_columns


def test_a_data_pickle_cut_short_in_the_work_dir_is_rebuilt_from_the_arff(openml_cache, tmp_path):
    """A process killed while openml wrote its pickle left it truncated: UnpicklingError, which
    openml does not recover from, blamed the user's intact dataset.arff on every later load."""
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    work = tmp_path / "work"
    assert len(load_openml(13, cache_dir=root, work_dir=work).data) == 286
    (pickle,) = work.rglob("dataset.pkl.py3")
    pickle.write_bytes(pickle.read_bytes()[: pickle.stat().st_size // 2])
    for _ in range(2):
        assert len(load_openml(13, cache_dir=root, work_dir=work).data) == 286
    assert sorted(p.name for p in entry.iterdir()) == [
        "dataset.arff", "description.xml", "features.xml", "qualities.xml"
    ]


def test_an_offline_load_does_not_fetch_the_parquet_file_a_description_names(
    openml_cache, tmp_path, monkeypatch
):
    """OpenML's own descriptions carry a parquet_url; openml-python fetched it (from MinIO,
    outside the retry policy: 6 s per load on a machine without DNS) though the ARFF is cached."""
    fetched = []

    def minio(source, destination, **kwargs):
        fetched.append(source)
        raise FileNotFoundError(source)  # what openml-python falls back on the ARFF from

    monkeypatch.setattr(openml._api_calls, "_download_minio_file", minio)
    monkeypatch.delenv("OPENML_SKIP_PARQUET", raising=False)
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    description = entry / "description.xml"
    description.write_text(description.read_text().replace(
        "<oml:md5_checksum>",
        "<oml:parquet_url>http://openml1.win.tue.nl/dataset13/dataset_13.pq</oml:parquet_url>"
        "<oml:md5_checksum>",
    ))
    assert len(load_openml(13, cache_dir=root).data) == 286
    assert fetched == []
    assert "OPENML_SKIP_PARQUET" not in os.environ


def test_settings_that_fail_to_apply_are_undone(monkeypatch, tmp_path):
    """``_openml_settings`` set the cache folder and OPENML_SKIP_PARQUET before its ``try``:
    a retry policy openml refused left both set for the rest of the process."""
    from tabmoe.data.openml import _openml_settings

    monkeypatch.delenv("OPENML_SKIP_PARQUET", raising=False)
    cachedir = openml.config.get_config_as_dict()["cachedir"]
    real, calls = openml.config.set_retry_policy, []

    def refuse_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise ValueError("retry policy refused")
        return real(*args, **kwargs)

    monkeypatch.setattr(openml.config, "set_retry_policy", refuse_once)
    with pytest.raises(ValueError, match="refused"), _openml_settings(tmp_path / "cache", offline=True):
        pass
    assert "OPENML_SKIP_PARQUET" not in os.environ
    assert openml.config.get_config_as_dict()["cachedir"] == cachedir
