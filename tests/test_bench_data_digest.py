"""A data file edited after its runs: the config hash names the file, the record digests
its content, so ``run`` warns and the report flags the unpaired comparisons."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

pytest.importorskip("yaml")  # extra "data"
pytest.importorskip("click")  # extra "bench"

import yaml
from click.testing import CliRunner

from tabmoe.bench.cli import main
from tabmoe.data.sources import FileSource, file_digest

from .bench_helpers import CAR, tiny_suite


def suite_on_a_copy(tmp_path, models: dict) -> tuple:
    data = tmp_path / "car.csv"
    shutil.copy(CAR, data)
    suite = tiny_suite(tmp_path, models=models)
    spec = yaml.safe_load(suite.read_text())
    spec["splits"][0]["data"]["file"] = str(data)
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    return suite, data


def edit_a_feature(data) -> None:
    """Reverse one feature column: the labels, hence the split's rows and sizes, stay."""
    frame = pd.read_csv(data)
    frame["doors"] = frame["doors"].iloc[::-1].to_numpy()
    frame.to_csv(data, index=False)


def test_file_digest_follows_the_content_and_is_none_for_an_unreadable_path(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,y\n1,0\n")
    before = file_digest(path)
    assert FileSource(str(path)).digest() == before and len(before) == 12
    path.write_text("a,y\n1,1\n")
    assert file_digest(path) != before
    assert file_digest(tmp_path / "absent.csv") is None and file_digest(tmp_path) is None


def test_run_warns_when_a_finished_runs_data_file_was_edited_and_the_report_flags_it(tmp_path):
    suite, data = suite_on_a_copy(tmp_path, {"logistic_regression": {}})
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    runner = CliRunner()
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    record = json.loads(next((results / "runs").rglob("*.json")).read_text())
    assert record["source_digest"] == file_digest(data)

    again = runner.invoke(main, args)  # unchanged file: no warning
    assert again.exit_code == 0 and "another version" not in again.output

    edit_a_feature(data)
    edited = runner.invoke(main, args)
    assert edited.exit_code == 0, edited.output
    assert "1 finished run(s) were made on another version of their data file" in edited.output
    assert "1 already finished, 0 run now" in edited.output  # kept, as an edited suite's are

    spec = yaml.safe_load(suite.read_text())  # a model added after the edit: runs on the new file
    spec["models"]["hist_gradient_boosting"] = {"max_iter": 5}
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    more = runner.invoke(main, args)
    assert more.exit_code == 0, more.output
    report = (results / "report.md").read_text()
    assert "ROWS DIFFER" in report and "data file digests differ" in report

    forced = runner.invoke(main, [*args, "--force"])
    assert forced.exit_code == 0 and "another version" not in forced.output
    assert "ROWS DIFFER" not in (results / "report.md").read_text()


def test_two_suites_with_a_split_of_one_name_on_two_files_are_not_confused(tmp_path):
    """run_plan takes the specs of several suites: the digest of one suite's split file was
    cached by the split's name and compared with another suite's records of that name."""
    from tabmoe.bench.plan import plan_runs
    from tabmoe.bench.runner import run_plan
    from tabmoe.bench.storage import open_store
    from tabmoe.bench.suites import load_suite

    results, specs = tmp_path / "results", []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        data = folder / "car.csv"
        shutil.copy(CAR, data)
        if name == "two":
            edit_a_feature(data)  # another file, the same split name
        suite = tiny_suite(folder, name=name)
        spec = yaml.safe_load(suite.read_text())
        spec["splits"][0]["data"]["file"] = str(data)
        suite.write_text(yaml.safe_dump(spec, sort_keys=False))
        args = ["run", str(suite), "--results", str(results), "--no-progress"]
        assert CliRunner().invoke(main, args).exit_code == 0
        specs += plan_runs(load_suite(suite))
    summary = run_plan(specs, open_store(results), progress=False)
    assert summary.skipped == len(specs) == 2 and summary.data_changed == []


def test_a_changed_target_or_categorical_setting_is_not_read_as_the_old_runs(tmp_path):
    """The config hash names the data file, not its ``target:``/``categorical:`` settings
    (committed hashes predate them): a suite whose target changed reused the old runs with no
    word. Records now carry the settings; a record without them is compared by hash only."""
    suite, _ = suite_on_a_copy(tmp_path, {"logistic_regression": {}})
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    runner = CliRunner()
    assert runner.invoke(main, args).exit_code == 0
    path = next((results / "runs").rglob("*.json"))
    assert json.loads(path.read_text())["table"] == "target='class'; categorical=None"

    spec = yaml.safe_load(suite.read_text())
    spec["splits"][0]["data"]["target"] = "doors"
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    changed = runner.invoke(main, args)
    assert changed.exit_code == 0, changed.output
    assert "1 finished run(s) were made with another configuration" in changed.output
    assert "OLD CONFIGURATION" in (results / "report.md").read_text()

    record = json.loads(path.read_text())  # a record written before records named the settings
    del record["table"]
    path.write_text(json.dumps(record))
    old = runner.invoke(main, args)
    assert old.exit_code == 0 and "another configuration" not in old.output
    assert "OLD CONFIGURATION" not in (results / "report.md").read_text()

    forced = runner.invoke(main, [*args, "--force"])
    assert forced.exit_code == 0 and "another configuration" not in runner.invoke(main, args).output


def test_seeds_of_one_cell_made_under_two_targets_are_flagged_stale(tmp_path):
    """A seed added after the suite's ``target:`` changed was averaged with the seeds made
    under the old target, with no note: their config hashes are equal (the hash names the file
    only), and the STALE note compared hashes alone (class seed 0 at 0.785 and doors seed 1 at
    0.242 OOD accuracy reported as one cell, 0.513, saying nothing)."""
    suite, _ = suite_on_a_copy(tmp_path, {"logistic_regression": {}})
    results = tmp_path / "results"
    args = ["run", str(suite), "--results", str(results), "--no-progress"]
    runner = CliRunner()
    assert runner.invoke(main, args).exit_code == 0
    assert "STALE" not in (results / "report.md").read_text()
    spec = yaml.safe_load(suite.read_text())
    spec["splits"][0]["data"]["target"] = "doors"
    spec["seeds"] = [0, 1]
    suite.write_text(yaml.safe_dump(spec, sort_keys=False))
    assert runner.invoke(main, args).exit_code == 0
    records = [json.loads(p.read_text()) for p in sorted((results / "runs").rglob("*.json"))]
    assert [r["table"] for r in records] == ["target='class'; categorical=None", "target='doors'; categorical=None"]
    assert len({r["config_hash"] for r in records}) == 1
    text = " ".join((results / "report.md").read_text().split())
    assert "STALE: the seeds of 1 (protocol, split, model) cell(s) were made under different configurations" in text
    assert "logistic_regression on price (fixed-budget)" in text

    record = records[0]  # a record without table (made before records said it): hash only
    del record["table"]
    next((results / "runs").rglob("*seed0.json")).write_text(json.dumps(record))
    assert runner.invoke(main, args).exit_code == 0
    assert "STALE" not in (results / "report.md").read_text()
