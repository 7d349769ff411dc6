"""``download=True`` / ``--download``: OpenML data the cache lacks is fetched (as ARFF) into
the private working copy, from every command that loads suite data, without changing a
run's id or config hash; and the cache error names the way out, Parquet copies included.

No network: openml-python's lowest server calls are replaced by a fake openml.org that
serves dataset 13 from a temporary copy of the shared cache (skipped without it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

pytest.importorskip("openml")  # extra "data"
pytest.importorskip("yaml")  # extra "data"
pytest.importorskip("click")  # extra "bench"

import openml
import requests
import yaml
from click.testing import CliRunner

from tabmoe.bench.cli import main
from tabmoe.bench.plan import plan_runs
from tabmoe.bench.suites import load_suite
from tabmoe.data.openml import OpenMLCacheError, dataset_cache_dir, load_openml
from tabmoe.data.sources import LoadContext, OpenMLSource

from .test_openml_loading import _one_entry
from .test_research_rules import import_benchmark

PARQUET_URL = "http://openml1.win.tue.nl/dataset13/dataset_13.pq"


@pytest.fixture
def openml_org(openml_cache, monkeypatch):
    """A fake server holding dataset 13; records what is fetched and OPENML_SKIP_PARQUET then.
    Its description names a Parquet file, as OpenML's own descriptions do."""
    entry = dataset_cache_dir(openml_cache, 13)
    description = (entry / "description.xml").read_text().replace(
        "<oml:md5_checksum>", f"<oml:parquet_url>{PARQUET_URL}</oml:parquet_url><oml:md5_checksum>"
    )
    served = {"data/13": description, "data/features/13": (entry / "features.xml").read_text()}
    log = SimpleNamespace(calls=[], arff=[], parquet=[])

    def api_call(call, request_method, data=None, file_elements=None):
        log.calls.append(call)
        if call not in served:
            raise requests.exceptions.ConnectionError(f"fake openml.org has no {call}")
        return served[call]

    def text_file(source, output_path=None, md5_checksum=None, exists_ok=True, encoding="utf8"):
        log.arff.append((source, os.environ.get("OPENML_SKIP_PARQUET")))
        text = (entry / "dataset.arff").read_text()
        if output_path is None:
            return text
        Path(output_path).write_text(text, encoding=encoding)
        return None

    def minio(source, destination, **kwargs):
        log.parquet.append(source)
        raise FileNotFoundError(source)  # openml-python then falls back on the ARFF

    monkeypatch.setattr(openml._api_calls, "_perform_api_call", api_call)
    monkeypatch.setattr(openml._api_calls, "_download_text_file", text_file)
    monkeypatch.setattr(openml._api_calls, "_download_minio_file", minio)
    monkeypatch.delenv("OPENML_SKIP_PARQUET", raising=False)
    return log


@pytest.fixture
def empty_cache(tmp_path) -> Path:
    root = tmp_path / "empty-cache"
    root.mkdir()
    return root


def _suite(directory: Path) -> Path:
    spec = {
        "name": "dl", "description": "download test suite", "seeds": [0],
        "defaults": {"validation_size": 0.15, "id_test_size": 0.15, "ood_validation_size": 0.0},
        "splits": [{"name": "menopause", "rationale": "test", "data": {"openml": 13, "target": "Class"},
                    "split": {"by": "values", "column": "menopause", "ood_values": ["premeno"]}}],
        "models": {"logistic_regression": {}}, "protocols": ["defaults"], "tuning": {"n_trials": 1},
    }
    path = directory / "dl.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_a_download_reads_the_arff_as_the_offline_path_does(openml_cache, openml_org, empty_cache, tmp_path):
    """A download let openml-python fetch the Parquet file its description names (and parse
    the table from it, when the fetch worked): only offline was OPENML_SKIP_PARQUET set."""
    table = load_openml(13, cache_dir=empty_cache, download=True, work_dir=tmp_path / "work")
    assert openml_org.parquet == []
    assert openml_org.arff == [("https://api.openml.org/data/v1/download/13/breast-cancer.arff", "true")]
    assert "OPENML_SKIP_PARQUET" not in os.environ
    assert list(empty_cache.iterdir()) == []  # the cache given is never written
    assert any((tmp_path / "work").rglob("datasets/13/dataset.arff"))
    offline = load_openml(13, cache_dir=openml_cache)
    pd.testing.assert_frame_equal(table.data, offline.data)


def test_the_cache_error_names_download_for_python_and_the_cli(openml_cache, tmp_path):
    root, entry = _one_entry(openml_cache, tmp_path, 13)
    (entry / "features.xml").unlink()
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(13, cache_dir=root)
    message = str(info.value)
    assert "features.xml (missing)" in message
    assert "pass download=True (Python) or --download (tabmoe-bench)" in message
    assert "Parquet" not in message


def test_a_cache_without_the_datasets_entry_points_to_the_cache_option(empty_cache):
    """`tabmoe-bench run openml-ood` without --openml-cache (openml's own, empty cache) was
    told only to add three files to that cache or to download them; the usual cause is a
    cache elsewhere, which --openml-cache or $TABMOE_OPENML_CACHE names."""
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(13, cache_dir=empty_cache)
    message = " ".join(str(info.value).split())
    assert "The cache has no entry for this dataset: if your OpenML cache is elsewhere, pass its root" in message
    assert "cache_dir= (Python), --openml-cache or $TABMOE_OPENML_CACHE (tabmoe-bench)" in message
    assert "Else: add those files to the cache, or pass download=True (Python) or --download" in message
    entry = dataset_cache_dir(empty_cache, 13)  # an entry that is there but incomplete: no such hint
    entry.mkdir(parents=True)
    (entry / "description.xml").write_text("<oml:data_set_description/>")
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(13, cache_dir=empty_cache)
    assert "--openml-cache" not in str(info.value) and "Add those files to the cache" in str(info.value)


def test_a_parquet_only_entry_of_openml_python_0_15_is_explained(openml_cache, tmp_path):
    """openml-python 0.15 caches dataset_<id>.pq and no ARFF; the error said only
    "dataset.arff (missing)", though the entry holds the data."""
    root = tmp_path / "cache"
    entry = dataset_cache_dir(root, 13)
    entry.mkdir(parents=True)
    shutil.copy2(dataset_cache_dir(openml_cache, 13) / "description.xml", entry)
    (entry / "dataset_13.pq").write_bytes(b"PAR1 not read")
    with pytest.raises(OpenMLCacheError) as info:
        load_openml(13, cache_dir=root)
    message = " ".join(str(info.value).split())
    assert "dataset.arff (missing)" in message
    assert "holds openml-python's Parquet copy (dataset_13.pq), which tabmoe does not read" in message
    assert "its tables and committed results come from the ARFF" in message
    assert "download=True (Python) or --download (tabmoe-bench)" in message
    assert "or add dataset.arff to the cache" in message


def test_openml_source_passes_the_context_download_on(monkeypatch):
    import tabmoe.data.openml as openml_module

    seen = []
    monkeypatch.setattr(openml_module, "load_openml", lambda *args, **kwargs: seen.append(kwargs))
    OpenMLSource(13, "Class").load(LoadContext(openml_cache="somewhere", download=True))
    OpenMLSource(13).load(LoadContext())
    assert [(k["cache_dir"], k["download"]) for k in seen] == [("somewhere", True), (None, False)]


def test_download_changes_no_run_id_or_config_hash(tmp_path):
    for suite in (load_suite("openml-ood"), load_suite(_suite(tmp_path))):
        plain = plan_runs(suite, protocols=["defaults", "fixed-budget", "tuned", "unlabeled-target"])
        fetching = plan_runs(suite, protocols=["defaults", "fixed-budget", "tuned", "unlabeled-target"],
                             download=True)
        assert all(spec.download for spec in fetching) and not any(spec.download for spec in plain)
        assert [(s.run_id, s.config(), s.config_hash) for s in fetching] == [
            (s.run_id, s.config(), s.config_hash) for s in plain
        ]


def test_run_download_reaches_the_run_and_a_rerun_from_a_full_cache_skips_it(
    openml_cache, openml_org, empty_cache, tmp_path
):
    suite, results = _suite(tmp_path), tmp_path / "results"
    common = ["run", str(suite), "--results", str(results), "--no-progress", "--no-report"]
    result = CliRunner().invoke(main, [*common, "--openml-cache", str(empty_cache), "--download"])
    assert result.exit_code == 0, result.output
    (path,) = results.glob("runs/**/*.json")
    record = json.loads(path.read_text())
    assert record["ood_test"] is not None and "download" not in json.dumps(record["config"])
    assert openml_org.arff and openml_org.parquet == []
    # the same run from a complete cache, without --download: the same id and hash, so skipped
    again = CliRunner().invoke(main, [*common, "--openml-cache", str(openml_cache)])
    assert again.exit_code == 0, again.output
    assert json.loads(path.read_text())["finished_at"] == record["finished_at"]
    without = CliRunner().invoke(main, [*common, "--openml-cache", str(empty_cache), "--force"])
    assert without.exit_code == 1, without.output  # offline, the run fails: the flag was needed
    assert "download=True (Python) or --download (tabmoe-bench)" in " ".join(without.output.split())


def test_shift_report_download(openml_org, empty_cache, tmp_path):
    result = CliRunner().invoke(main, ["shift-report", str(_suite(tmp_path)), "--cv", "2",
                                       "--openml-cache", str(empty_cache), "--download"])
    assert result.exit_code == 0, result.output
    assert "menopause" in result.output and openml_org.arff


def test_research_run_download(openml_org, empty_cache, tmp_path):
    research = import_benchmark("research")
    out = tmp_path / "t.jsonl"
    research.main(["run", "--study", "t", "--suite", str(_suite(tmp_path)), "--model", "logistic_regression",
                   "--variant", "lr:", "--out", str(out), "--openml-cache", str(empty_cache), "--download"])
    (line,) = [json.loads(text) for text in out.read_text().splitlines()]
    assert line["split"] == "menopause" and openml_org.arff
