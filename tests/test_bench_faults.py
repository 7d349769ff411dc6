"""Faults of the benchmark harness, injected for real: a worker process SIGKILLed inside an
Optuna trial, a full disk while a record is written, damaged record files, a database that
cannot be reached or goes away mid-suite. Each ends with a one-line message naming the
run, file or URL, keeps every finished record, and a rerun of the same command resumes.
See docs/reliability.md, "Harness faults"."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("optuna")  # extra "tuning"
pytest.importorskip("click")  # extra "bench"

import optuna
from click.testing import CliRunner

from tabmoe.bench import engines
from tabmoe.bench.cli import main
from tabmoe.registry import MODELS
from tabmoe.tuning import open_storage

from .bench_helpers import CRASHING, safe_execute_with_test_models, tiny_suite

ROOT = Path(__file__).resolve().parents[1]
LR = "tiny/price/logistic_regression"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def crashing(monkeypatch):
    """The test model ``crashing`` known here and in every worker process."""
    monkeypatch.setitem(MODELS, CRASHING.name, CRASHING)
    monkeypatch.setattr(engines, "safe_execute", safe_execute_with_test_models)


def run(runner: CliRunner, suite: Path, results: Path, *extra: str):
    return runner.invoke(main, ["run", str(suite), "--results", str(results), "--no-progress", *extra])


def record_files(results: Path) -> dict[str, Path]:
    """run id -> record file, of every record file under ``results/runs``."""
    return {json.loads(p.read_text())["run_id"]: p for p in (results / "runs").rglob("*.json")}


def trial_states(results: Path, study: str) -> list[str]:
    storage = open_storage(results / "optuna.journal")
    return [t.state.name for t in optuna.load_study(study_name=study, storage=storage).get_trials()]


def leftovers(results: Path) -> list[Path]:
    """Temporary files of interrupted writes (names starting with a dot) under runs/."""
    return [p for p in (results / "runs").rglob(".*") if p.is_file()]


# ------------------------------------------------------------------ 1. a worker killed
@pytest.mark.slow  # three worker processes importing torch: ~20 s on 2 busy cores
def test_worker_killed_mid_trial_fails_only_its_run(runner, tmp_path, crashing):
    token = tmp_path / "crash-once"
    token.touch()
    suite = tiny_suite(
        tmp_path, seeds=(0, 1), protocols=("tuned",), n_trials=2,
        models={"crashing": {"crash_file": str(token), "crash_seed": 1}, "logistic_regression": {}},
    )
    results = tmp_path / "results"
    killed = "tiny/price/crashing/tuned/seed1"
    first = run(runner, suite, results, "--jobs", "2")
    assert first.exit_code == 1, first.output
    assert not token.exists()  # the fault happened
    assert "Traceback" not in first.output
    assert f"FAILED {killed}: WorkerDied" in first.output and "SIGKILL" in first.output
    assert "4 planned, 0 already finished, 3 run now, 1 failed" in first.output
    assert f"  {killed}: WorkerDied" in first.output  # the closing list of failed runs
    done = record_files(results)
    assert sorted(done) == sorted({f"{LR}/tuned/seed0", f"{LR}/tuned/seed1", "tiny/price/crashing/tuned/seed0"})
    assert trial_states(results, killed) == ["RUNNING"]  # killed inside its first trial
    mtimes = {run_id: path.stat().st_mtime_ns for run_id, path in done.items()}

    again = run(runner, suite, results)  # the rerun: in this process, --jobs 1
    assert again.exit_code == 0, again.output
    assert "4 planned, 3 already finished, 1 run now, 0 failed" in again.output
    after = record_files(results)
    assert sorted(after) == sorted([*done, killed])
    assert {run_id: after[run_id].stat().st_mtime_ns for run_id in done} == mtimes
    assert trial_states(results, killed) == ["COMPLETE", "COMPLETE"]  # the half study was dropped
    assert not list((results / "failures").rglob("*.txt"))


def test_cli_process_killed_mid_trial_resumes(runner, tmp_path, crashing):
    """--jobs 1 runs in the CLI's own process: the kill takes the CLI; a rerun resumes."""
    token = tmp_path / "crash-once"
    token.touch()
    suite = tiny_suite(tmp_path, seeds=(0, 1), protocols=("tuned",), n_trials=2,
                       models={"crashing": {"crash_file": str(token), "crash_seed": 1}})
    results = tmp_path / "results"
    code = ("import sys; from tests.bench_helpers import register_test_models; register_test_models(); "
            "from tabmoe.bench.cli import main; sys.argv[0] = 'tabmoe-bench'; main()")
    killed = subprocess.run(
        [sys.executable, "-c", code, "run", str(suite), "--results", str(results), "--no-progress"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert sorted(record_files(results)) == ["tiny/price/crashing/tuned/seed0"]
    assert trial_states(results, "tiny/price/crashing/tuned/seed1") == ["RUNNING"]

    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "2 planned, 1 already finished, 1 run now, 0 failed" in again.output
    assert trial_states(results, "tiny/price/crashing/tuned/seed1") == ["COMPLETE", "COMPLETE"]


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.slow  # two worker processes importing torch
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="alive() reads /proc/<pid>/status (Linux)")
def test_sigterm_to_the_cli_stops_its_workers(tmp_path):
    """`kill` (SIGTERM) of `tabmoe-bench run --jobs 2` ends the runs in flight with it: no
    worker fits on, orphaned, writing to the results (it did, before runner.sigterm_raises)."""
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results, pids = tmp_path / "results", tmp_path / "pids"
    pids.mkdir()
    code = ("import sys; from tabmoe.bench import engines; from tests.bench_helpers import sleep_in_worker; "
            "engines.safe_execute = sleep_in_worker; "
            "from tabmoe.bench.cli import main; sys.argv[0] = 'tabmoe-bench'; main()")
    cli = subprocess.Popen(
        [sys.executable, "-c", code, "run", str(suite), "--results", str(results), "--no-progress", "--jobs", "2"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "TABMOE_TEST_PIDS": str(pids)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while len(list(pids.iterdir())) < 2:
            if cli.poll() is not None or time.monotonic() > deadline:
                cli.kill()
                pytest.fail(f"the workers did not start: {cli.communicate(timeout=30)[1][-2000:]}")
            time.sleep(0.2)
        workers = [int(p.name) for p in pids.iterdir()]
        cli.send_signal(signal.SIGTERM)
        _, err = cli.communicate(timeout=60)
    finally:
        cli.kill()
    assert cli.returncode == 128 + signal.SIGTERM, err[-2000:]
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)]
    assert not list(results.rglob("*.json"))


@pytest.mark.slow  # two worker processes importing torch
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="alive() reads /proc/<pid>/status (Linux)")
def test_sigkill_of_the_cli_ends_its_workers(tmp_path):
    """`kill -9` of `tabmoe-bench run --jobs 2` releases the results lock at once; its loky
    workers must not fit on, orphaned, beside the rerun that takes the lock (they did for as
    long as their run lasted: loky notices a dead parent only when the run returns)."""
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results, pids, log = tmp_path / "results", tmp_path / "pids", tmp_path / "stderr"
    pids.mkdir()
    code = ("import sys; from tabmoe.bench import engines; from tests.bench_helpers import sleep_in_worker; "
            "engines.safe_execute = sleep_in_worker; "
            "from tabmoe.bench.cli import main; sys.argv[0] = 'tabmoe-bench'; main()")
    with log.open("w") as err:  # not a pipe: orphaned workers would hold it open
        cli = subprocess.Popen(
            [sys.executable, "-c", code, "run", str(suite), "--results", str(results), "--no-progress", "--jobs", "2"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "TABMOE_TEST_PIDS": str(pids)},
            stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while len(list(pids.iterdir())) < 2:
            if cli.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the workers did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        workers = [int(p.name) for p in pids.iterdir()]
    finally:
        cli.kill()
        cli.wait(timeout=60)
    deadline = time.monotonic() + 20  # the workers sleep 120 s in their run
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    orphans = [pid for pid in workers if alive(pid)]
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    assert not orphans, "workers fit on after their parent was killed"


# ------------------------------------------------------------------ 2. a full disk
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_while_writing_a_record(runner, tmp_path, monkeypatch):
    suite = tiny_suite(tmp_path, seeds=(0, 1, 2))
    results = tmp_path / "results"
    real_mkstemp = tempfile.mkstemp

    def full_disk_for_seed1(*args, **kwargs):
        """The temporary file of seed 1's record is real, but its writes go to /dev/full:
        the kernel answers them with ENOSPC, as a full disk would."""
        fd, path = real_mkstemp(*args, **kwargs)
        if Path(path).name.startswith(".fixed-budget-seed1.json."):
            os.close(fd)
            fd = os.open("/dev/full", os.O_WRONLY)
        return fd, path

    monkeypatch.setattr(tempfile, "mkstemp", full_disk_for_seed1)
    full = run(runner, suite, results)
    assert full.exit_code == 1, full.output
    assert "Traceback" not in full.output
    target = results / "runs/tiny/price/logistic_regression/fixed-budget-seed1.json"
    (line,) = [line for line in full.output.splitlines() if line.startswith("Error:")]
    assert "the disk is full" in line and str(target) in line and f"{LR}/fixed-budget/seed1" in line
    assert "3 planned, 0 already finished, 1 run now, 1 failed, 1 not run" in full.output
    assert sorted(record_files(results)) == [f"{LR}/fixed-budget/seed0"]  # seed 2 never started
    assert not target.exists() and not leftovers(results)  # no torn record, no temporary
    seed0 = results / "runs/tiny/price/logistic_regression/fixed-budget-seed0.json"
    assert json.loads(seed0.read_text())["seed"] == 0
    mtime = seed0.stat().st_mtime_ns

    monkeypatch.undo()  # space freed
    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "3 planned, 1 already finished, 2 run now, 0 failed" in again.output
    assert sorted(record_files(results)) == [f"{LR}/fixed-budget/seed{k}" for k in range(3)]
    assert seed0.stat().st_mtime_ns == mtime


# ------------------------------------------------------------------ 3. damaged records
def _truncated(text: bytes) -> bytes:
    return text[: len(text) // 2]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_truncated, id="truncated"),
        pytest.param(lambda text: b"", id="empty"),
        pytest.param(lambda text: b"\x00\xff\xfe garbage \x80", id="garbage-bytes"),
        pytest.param(lambda text: b'["valid JSON, not a record"]', id="not-a-record"),
        pytest.param(lambda text: b"[" * 100_000 + b"]" * 100_000, id="nested-too-deeply"),
        pytest.param(lambda text: text.replace(b"seed1", b"seed7"), id="another-run"),
    ],
)
def test_corrupted_record_is_reported_then_redone(runner, tmp_path, damage):
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results = tmp_path / "results"
    assert run(runner, suite, results, "--no-report").exit_code == 0
    seed0 = results / "runs/tiny/price/logistic_regression/fixed-budget-seed0.json"
    bad = seed0.with_name("fixed-budget-seed1.json")
    damaged = damage(bad.read_bytes())
    bad.write_bytes(damaged)
    mtime = seed0.stat().st_mtime_ns

    report = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert report.exit_code == 0, report.output
    assert "Traceback" not in report.output
    assert f"warning: skipping corrupted result file {bad}" in report.output
    assert bad.read_bytes() == damaged  # report never changes the results
    text = (results / "report.md").read_text()
    assert "1 finished runs" in text and f"- `{LR}/fixed-budget/seed1`: corrupted result file {bad}" in text

    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "Traceback" not in again.output
    aside = bad.with_name("fixed-budget-seed1.json.corrupt")
    assert f"warning: corrupted result file {bad}" in again.output and str(aside) in again.output
    assert "2 planned, 1 already finished, 1 run now, 0 failed" in again.output
    assert aside.read_bytes() == damaged  # kept for inspection, out of the way
    assert json.loads(bad.read_text())["run_id"] == f"{LR}/fixed-budget/seed1"  # redone
    assert seed0.stat().st_mtime_ns == mtime  # the other record untouched
    clean = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert clean.exit_code == 0 and "warning" not in clean.output


def _edit(key: str, value, part: str | None = None, **more):
    """Valid JSON, a wrong field: ``record[key] = value`` (in ``record[part]`` if given, with
    its other fields ``more``)."""

    def damage(text: bytes) -> bytes:
        record = json.loads(text)
        (record if part is None else record[part]).update({key: value, **more})
        return json.dumps(record).encode()

    return damage


def _drop(key: str):
    """Valid JSON, a field missing: ``del record[key]``."""

    def damage(text: bytes) -> bytes:
        record = json.loads(text)
        del record[key]
        return json.dumps(record).encode()

    return damage


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        pytest.param(_edit("ood_test", "garbage"), "ood_test", id="ood_test-garbage"),
        pytest.param(_edit("seed", "zero"), "seed", id="seed-zero"),
        pytest.param(_edit("accuracy", "high", "ood_test"), "ood_test.accuracy", id="accuracy-high"),
        pytest.param(_edit("accuracy", 1.5, "id_test"), "id_test.accuracy", id="accuracy-out-of-range"),
        # a part with rows and no accuracy: the report averaged the others, under 3 seeds
        pytest.param(_edit("accuracy", None, "ood_test"), "ood_test.accuracy", id="accuracy-null"),
        pytest.param(_edit("accuracy", None, "id_test"), "id_test.accuracy", id="id-accuracy-null"),
        # a part with rows scored null or not at all: the report averaged the other seeds'
        # OOD (or ID) accuracy while its seeds column still counted 3
        pytest.param(_edit("ood_test", None), "ood_test", id="ood-part-null"),
        pytest.param(_drop("ood_test"), "ood_test", id="ood-part-absent"),
        pytest.param(_edit("id_test", None), "id_test", id="id-part-null-with-rows"),
        pytest.param(_edit("accuracy", None, "ood_test", n=0), "ood_test.accuracy", id="ood-n-zero"),
        pytest.param(_edit("fit_seconds", -1.0), "fit_seconds", id="negative-seconds"),
        pytest.param(_edit("model", 7), "model", id="model-not-a-string"),
        # the run id and place say seed 1: the report, grouping by the field, counted it as a
        # second seed 0 and kept one of the two, with no word
        pytest.param(_edit("seed", 0), "run_id", id="seed-of-another-run"),
        pytest.param(_edit("split", "safety"), "run_id", id="split-of-another-run"),
    ],
)
def test_record_with_a_wrong_field_is_corrupt(runner, tmp_path, damage, field):
    """Valid JSON but a field of the wrong type or range: warned about by name, skipped by
    ``report`` (whose seed count drops), moved aside and redone by ``run``, which then
    writes its report."""
    suite = tiny_suite(tmp_path, seeds=(0, 1, 2))
    results = tmp_path / "results"
    assert run(runner, suite, results).exit_code == 0
    table = "| price | logistic_regression | {} |"
    assert table.format(3) in (results / "report.md").read_text()
    bad = results / "runs/tiny/price/logistic_regression/fixed-budget-seed1.json"
    damaged = damage(bad.read_bytes())
    bad.write_bytes(damaged)

    report = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert report.exit_code == 0, report.output
    assert "Traceback" not in report.output
    assert f"warning: skipping corrupted result file {bad} (field {field}" in report.output
    text = (results / "report.md").read_text()
    assert "2 finished runs" in text and f"- `{LR}/fixed-budget/seed1`: corrupted result file {bad}" in text
    assert table.format(2) in text  # the seed count tells the truth
    assert bad.read_bytes() == damaged

    (results / "report.md").unlink()
    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "Traceback" not in again.output
    aside = bad.with_name("fixed-budget-seed1.json.corrupt")
    assert f"warning: corrupted result file {bad} (field {field}" in again.output and str(aside) in again.output
    assert "3 planned, 2 already finished, 1 run now, 0 failed" in again.output
    assert aside.read_bytes() == damaged
    assert table.format(3) in (results / "report.md").read_text()


def test_database_record_with_a_wrong_field_is_redone(runner, tmp_path):
    """The same schema for records read from a database (--storage)."""
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    db = tmp_path / "results.db"
    args = ["--storage", f"sqlite:///{db}"]
    assert run(runner, suite, tmp_path / "r", *args, "--no-report").exit_code == 0
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT record FROM tabmoe_runs WHERE run_id LIKE '%seed1'").fetchone()
        record = json.loads(text)
        record["seed"] = "zero"
        conn.execute("UPDATE tabmoe_runs SET record = ? WHERE run_id LIKE '%seed1'", (json.dumps(record),))
    report = runner.invoke(main, ["report", str(suite), "--results", str(tmp_path / "r"), *args])
    assert report.exit_code == 0 and "Traceback" not in report.output, report.output
    assert f"warning: skipping corrupted record of run {LR}/fixed-budget/seed1" in report.output
    assert "(field seed: expected an integer, got str 'zero')" in report.output
    assert "1 finished runs" in (tmp_path / "r/report.md").read_text()
    again = run(runner, suite, tmp_path / "r", *args)
    assert again.exit_code == 0, again.output
    assert "2 planned, 1 already finished, 1 run now, 0 failed" in again.output


def test_committed_records_match_the_schema():
    """Every record under benchmarks/results passes the schema ``run`` and ``report`` check."""
    from tabmoe.bench.schema import check_record

    files = sorted((ROOT / "benchmarks/results").glob("*/runs/**/*.json"))
    assert len(files) > 100
    for path in files:
        try:
            check_record(json.loads(path.read_text()))
        except ValueError as exc:
            pytest.fail(f"{path}: {exc}")


def test_corrupted_failure_file_and_stale_temporaries(runner, tmp_path):
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    results = tmp_path / "results"
    assert run(runner, suite, results, "--seeds", "0", "--no-report").exit_code == 0
    folder = results / "runs/tiny/price/logistic_regression"
    torn = folder / ".fixed-budget-seed1.json.abc123.tmp"  # a writer killed before its rename
    torn.write_text('{"run_id": "tiny/pri')
    failure = results / "failures/tiny/price/logistic_regression/fixed-budget-seed1.txt"
    failure.parent.mkdir(parents=True)
    failure.write_bytes(b"\xff\xfe not utf-8")
    report = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert report.exit_code == 0 and "Traceback" not in report.output, report.output
    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "2 planned, 1 already finished, 1 run now, 0 failed" in again.output
    assert not torn.exists() and not leftovers(results) and not failure.exists()


def test_stray_files_in_the_results_folder_are_not_runs(runner, tmp_path):
    """A user's notes.json (or any JSON file not at a record's place) under runs/<suite>/
    was a corrupt record of a made-up run (`tiny//notes`), listed as failed by `report`,
    and `run` renamed it to notes.json.corrupt saying "run tiny//notes is redone"; a text
    file under failures/ was a failed run named by its first line. They are ignored, with
    a warning naming each, and left as they are."""
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    assert run(runner, suite, results, "--no-report").exit_code == 0
    strays = {
        results / "runs/tiny/notes.json": b'{"note": "ran on the new box"}',
        results / "runs/tiny/price/summary.json": b'{"a": 1}',
        results / "runs/tiny/price/logistic_regression/mynotes.json": b"[1]",
        results / "failures/tiny/todo.txt": b"my notes\nrerun on Monday",
    }
    for path, data in strays.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    report = runner.invoke(main, ["report", str(suite), "--results", str(results)])
    assert report.exit_code == 0, report.output
    for path in strays:
        assert f"warning: ignoring {path}: not a run's" in report.output
    assert "corrupted" not in report.output
    assert "Failed or unfinished" not in (results / "report.md").read_text()
    again = run(runner, suite, results)
    assert again.exit_code == 0, again.output
    assert "1 planned, 1 already finished, 0 run now, 0 failed" in again.output
    assert again.output.count("warning: ignoring") == len(strays)  # once, not again by the report
    assert "corrupted" not in again.output and "Failed or unfinished" not in (results / "report.md").read_text()
    assert {path: path.read_bytes() for path in strays} == strays  # left where they were
    assert not list(results.rglob("*.corrupt"))



def test_stale_study_journal_lock_is_cleared_before_any_run(runner, tmp_path):
    """A worker killed (or Ctrl-C'd) while it held Optuna's journal lock leaves
    optuna.journal.lock behind: every tuned run of the rerun then waited 30 s on it, warned,
    and forced it open, each waiter on its own. `run` holds the results lock, so nobody else
    writes: it deletes the stale lock, as it cuts a torn last line, before any run."""
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    lock = results / "optuna.journal.lock"
    lock.symlink_to(results / "optuna.journal")  # as optuna's JournalFileSymlinkLock makes it
    assert run(runner, suite, results, "--no-report").exit_code == 0
    assert not lock.is_symlink() and not lock.exists()

def test_corrupted_database_record_is_redone(runner, tmp_path):
    suite = tiny_suite(tmp_path, seeds=(0, 1))
    db = tmp_path / "results.db"
    args = ["--storage", f"sqlite:///{db}"]
    assert run(runner, suite, tmp_path / "r", *args, "--no-report").exit_code == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tabmoe_runs SET record = '{\"torn' WHERE run_id LIKE '%seed1'")
    report = runner.invoke(main, ["report", str(suite), "--results", str(tmp_path / "r"), *args])
    assert report.exit_code == 0, report.output
    assert f"warning: skipping corrupted record of run {LR}/fixed-budget/seed1 in sqlite:///{db}" in report.output
    again = run(runner, suite, tmp_path / "r", *args)
    assert again.exit_code == 0, again.output
    assert f"warning: corrupted record of run {LR}/fixed-budget/seed1" in again.output
    assert "2 planned, 1 already finished, 1 run now, 0 failed" in again.output
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT run_id, record FROM tabmoe_runs").fetchall())
    assert sorted(rows) == [f"{LR}/fixed-budget/seed0", f"{LR}/fixed-budget/seed1"]
    assert all(json.loads(text)["run_id"] == run_id for run_id, text in rows.items())


# ------------------------------------------------------------------ 4. storage unreachable
def _readonly_dir(tmp_path: Path) -> Path:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "readonly"
    folder.mkdir(mode=0o500)
    return folder


@pytest.mark.parametrize(
    "storage, shown",
    [
        ("postgresql://nobody@127.0.0.1:1/db", "nobody@127.0.0.1:1/db"),
        ("postgresql://nobody:hunter2@127.0.0.1:1/db", "nobody:***@127.0.0.1:1/db"),
        ("sqlite:///{tmp}/no/such/folder/results.db", "sqlite:///{tmp}/no/such/folder/results.db"),
        ("sqlite:///{tmp}/a-file/results.db", "sqlite:///{tmp}/a-file/results.db"),
        ("sqlite:///{readonly}/results.db", "sqlite:///{readonly}/results.db"),
    ],
    ids=["postgres", "postgres-password", "sqlite-missing-folder", "sqlite-under-a-file", "sqlite-readonly"],
)
def test_unreachable_storage_exits_2_and_runs_nothing(runner, tmp_path, storage, shown):
    fill = {"tmp": tmp_path}
    if "{readonly}" in storage:
        fill["readonly"] = _readonly_dir(tmp_path)
    storage, shown = storage.format(**fill), shown.format(**fill)
    (tmp_path / "a-file").write_text("not a folder")
    suite = tiny_suite(tmp_path)
    results = tmp_path / "r"
    result = run(runner, suite, results, "--storage", storage)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert f"cannot use the database {shown}" in line or f"cannot use the database postgresql+psycopg2://{shown}" in line
    assert "hunter2" not in result.output
    assert not results.exists()  # nothing ran, nothing written


def test_database_that_is_only_readable_exits_2(runner, tmp_path):
    db = tmp_path / "results.db"
    suite = tiny_suite(tmp_path)
    assert run(runner, suite, tmp_path / "r", "--storage", f"sqlite:///{db}", "--no-report").exit_code == 0
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only files")
    db.chmod(0o400)
    result = run(runner, suite, tmp_path / "r2", "--storage", f"sqlite:///{db}", "--seeds", "5")
    assert result.exit_code == 2, result.output
    assert f"cannot write to the database sqlite:///{db}" in result.output


def test_unwritable_results_folder_exits_2(runner, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    suite = tiny_suite(tmp_path)
    result = run(runner, suite, tmp_path / "a-file" / "results")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"cannot use the results folder {tmp_path / 'a-file' / 'results'}" in result.output


def test_file_where_the_records_folder_should_be_exits_2_before_any_run(runner, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "runs").write_text("not a folder")
    suite = tiny_suite(tmp_path)
    result = run(runner, suite, results)
    assert result.exit_code == 2, result.output  # was 1, after computing runs it could not save
    assert f"{results / 'runs'} is a file, not a folder" in result.output
    assert "run now" not in result.output and (results / "runs").read_text() == "not a folder"


def test_unwritable_report_folder_exits_1(runner, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    suite = tiny_suite(tmp_path)
    results = tmp_path / "results"
    assert run(runner, suite, results, "--no-report").exit_code == 0
    out = tmp_path / "a-file" / "report"
    result = runner.invoke(main, ["report", str(suite), "--results", str(results), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert f"Error: cannot write the report to {out}: Not a directory" in result.output


def _move_away(db: Path) -> None:
    db.rename(db.with_name("moved.db"))


def _garbage(db: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)


def _read_only(db: Path) -> None:
    db.parent.chmod(0o500)
    db.chmod(0o400)


@pytest.mark.parametrize("damage", [_move_away, _garbage, _read_only], ids=["moved-away", "replaced", "read-only"])
def test_database_going_away_mid_suite(runner, tmp_path, monkeypatch, damage):
    from tabmoe.bench.storage import SQLStore

    if damage is _read_only and os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "results.db"
    url = f"sqlite:///{db}"
    suite = tiny_suite(tmp_path, seeds=(0, 1, 2))
    real_write = SQLStore.write

    def write_then_damage(self, record):
        """Save the record, then take the database away after the first one."""
        real_write(self, record)
        if record["seed"] == 0:
            damage(db)

    monkeypatch.setattr(SQLStore, "write", write_then_damage)
    result = run(runner, suite, tmp_path / "r", "--storage", url)
    folder.chmod(0o700)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert f"cannot save the result of {LR}/fixed-budget/seed1 in the database {url}" in line
    assert (f"the file {db} no longer exists" in line) == (damage is _move_away)
    assert "3 planned, 0 already finished, 1 run now, 1 failed, 1 not run" in result.output
    if damage is not _garbage:  # the finished run is kept where the database went
        kept = db.with_name("moved.db") if damage is _move_away else db
        with sqlite3.connect(kept) as conn:
            (text,) = conn.execute("SELECT record FROM tabmoe_runs").fetchone()
        assert json.loads(text)["run_id"] == f"{LR}/fixed-budget/seed0"

    monkeypatch.undo()  # the database is back (or, replaced by garbage, a new one)
    if damage is _move_away:
        db.with_name("moved.db").replace(db)
    elif damage is _garbage:
        db.unlink()
    else:
        db.chmod(0o600)
    again = run(runner, suite, tmp_path / "r", "--storage", url)
    assert again.exit_code == 0, again.output
    resumed = 0 if damage is _garbage else 1
    assert f"3 planned, {resumed} already finished, {3 - resumed} run now, 0 failed" in again.output
