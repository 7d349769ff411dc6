"""Result stores: one atomic record per finished run, failures kept apart, the same contract
for the results folder, SQLite and (when .ci/run started one) PostgreSQL."""

from __future__ import annotations

import json
import uuid

import pytest

from tabmoe.bench.storage import (
    DirectoryStore,
    ResultsLocked,
    SQLStore,
    StoreError,
    atomic_write,
    open_store,
    repair_journal,
    results_lock,
    study_storage,
)

from .bench_helpers import postgres_url


def record(suite: str, split: str = "a", seed: int = 0, accuracy: float = 0.5) -> dict:
    return {
        "run_id": f"{suite}/{split}/logistic_regression/untuned/seed{seed}",
        "suite": suite, "split": split, "model": "logistic_regression", "protocol": "untuned",
        "seed": seed, "config_hash": "abc", "finished_at": "now",
        "ood_test": {"accuracy": accuracy, "log_loss": float("nan")},
    }


@pytest.fixture(params=["directory", "sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "directory":
        return DirectoryStore(tmp_path)
    if request.param == "sqlite":
        return SQLStore(f"sqlite:///{tmp_path / 'results.db'}")
    url = postgres_url()
    if url is None:
        pytest.skip("no PostgreSQL server (TABMOE_TEST_POSTGRES_URL, set by .ci/run)")
    return SQLStore(url)


def test_store_contract(store):
    suite = f"s{uuid.uuid4().hex[:8]}"  # a fresh suite name: shared databases keep old rows
    assert store.finished(suite) == {} and store.records(suite) == [] and store.failures(suite) == {}
    first = record(suite, seed=0)
    store.write_failure(suite, first["run_id"], "Traceback ...\nValueError: boom")
    assert store.failures(suite) == {first["run_id"]: "Traceback ...\nValueError: boom"}
    store.write(first)
    store.write(record(suite, seed=1))
    assert store.failures(suite) == {}  # success clears the failure
    assert store.finished(suite) == {first["run_id"]: "abc", record(suite, seed=1)["run_id"]: "abc"}
    store.write(record(suite, seed=0, accuracy=0.75))  # a rerun replaces, never duplicates
    records = sorted(store.records(suite), key=lambda r: r["seed"])
    assert [r["ood_test"]["accuracy"] for r in records] == [0.75, 0.5]
    assert records[0]["ood_test"]["log_loss"] is None  # NaN stored as null: strict JSON
    assert store.records("another-suite-" + suite) == []
    store.probe()  # writable; leaves nothing behind
    assert store.recover(suite) == [] and store.scan(suite)[1] == [] and len(store.records(suite)) == 2


def test_directory_records_are_plain_files_written_atomically(tmp_path):
    store = DirectoryStore(tmp_path)
    store.write(record("smoke"))
    path = tmp_path / "runs/smoke/a/logistic_regression/untuned-seed0.json"
    assert json.loads(path.read_text())["run_id"] == "smoke/a/logistic_regression/untuned/seed0"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left behind
    (path.parent / ".untuned-seed1.json.1234.tmp").write_text('{"torn')  # a writer killed mid-write
    assert len(store.records("smoke")) == 1
    path.write_text('{"torn')  # not something this store writes: reported, the run not finished
    assert store.records("smoke") == [] and store.finished("smoke") == {}
    (corrupt,) = store.scan("smoke")[1]
    assert corrupt.run_id == "smoke/a/logistic_regression/untuned/seed0" and corrupt.path == path
    assert corrupt.reason.startswith("not JSON")


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "x.json"
    atomic_write(target, "old")

    with pytest.raises(TypeError):
        atomic_write(target, 123)  # write() fails before the rename
    assert target.read_text() == "old" and list(tmp_path.iterdir()) == [target]


def test_a_journal_damaged_before_its_last_line_is_named(tmp_path):
    """A line that is not JSON followed by others: Optuna failed every tuned run with
    "Expecting value: line 1 column 1 (char 0)", naming neither the file nor the line."""
    journal = tmp_path / "optuna.journal"
    journal.write_text('{"op_code": 0}\ngarbage{\n{"op_code": 1}\n{"op_co')
    with pytest.raises(StoreError, match=r"optuna.journal is damaged at line 2 \(b'garbage\{'\)"):
        repair_journal(journal)
    assert journal.read_text().endswith('{"op_co')  # nothing cut while it is refused
    journal.write_text('{"op_code": 0}\n[1]\n')
    with pytest.raises(StoreError, match="line 2"):
        repair_journal(journal)


def test_repair_journal_cuts_a_torn_last_line(tmp_path):
    journal = tmp_path / "optuna.journal"
    journal.write_text('{"op_code": 0}\n{"op_code": 1}\n{"op_co')
    assert repair_journal(journal) is True
    assert journal.read_text() == '{"op_code": 0}\n{"op_code": 1}\n'
    assert repair_journal(journal) is False and repair_journal(tmp_path / "missing") is False
    lock = tmp_path / "optuna.journal.lock"
    lock.symlink_to(journal)  # a writer killed while it held the lock
    assert repair_journal(journal) is True and not lock.is_symlink()
    assert journal.read_text() == '{"op_code": 0}\n{"op_code": 1}\n'


def test_results_lock_is_exclusive(tmp_path):
    with results_lock(tmp_path):
        with pytest.raises(ResultsLocked, match="in use by another tabmoe-bench run"):
            with results_lock(tmp_path):
                pass
    with results_lock(tmp_path):  # released
        pass


def test_open_store_and_study_storage(tmp_path):
    assert isinstance(open_store(tmp_path), DirectoryStore)
    assert isinstance(open_store(tmp_path, f"sqlite:///{tmp_path / 'r.db'}"), SQLStore)
    with pytest.raises(ValueError, match="must be a database URL"):
        open_store(tmp_path, "results.db")
    assert study_storage(tmp_path) == str(tmp_path.resolve() / "optuna.journal")
    assert study_storage(tmp_path, "postgresql://u@h/db") == "postgresql://u@h/db"


def test_concurrent_writers_of_one_run_never_collide(store):
    """Two runners finishing the same run at once: with a delete then an insert, both
    deleted nothing on PostgreSQL and the second insert hit the key, aborting its run."""
    import threading

    suite = f"s{uuid.uuid4().hex[:8]}"
    errors: list[BaseException] = []

    def writer(accuracy: float) -> None:
        try:
            for _ in range(25):
                store.write(record(suite, accuracy=accuracy))
                store.write_failure(suite, record(suite)["run_id"], "boom")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(a,)) for a in (0.25, 0.75)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [r["ood_test"]["accuracy"] in (0.25, 0.75) for r in store.records(suite)] == [True]


@pytest.mark.parametrize("blocker", ["runs", "failures", "runs/smoke", "failures/smoke"])
def test_probe_refuses_a_file_where_a_records_folder_should_be(tmp_path, blocker):
    """Only the root was probed: with a file at results/runs the probe passed, the first run
    was computed, and its result could not be saved (lost; "Not a directory")."""
    from tabmoe.bench.storage import StoreError

    (tmp_path / blocker).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / blocker).write_text("not a folder")
    store = DirectoryStore(tmp_path)
    with pytest.raises(StoreError, match=f"{tmp_path / blocker} is a file, not a folder"):
        store.probe("smoke")
    DirectoryStore(tmp_path / "fresh").probe("smoke")  # folders that do not exist yet: made


def test_a_failure_text_utf8_cannot_encode_is_kept_escaped(store):
    # an error naming a file whose bytes are not UTF-8 (os.fsdecode gives a lone surrogate)
    # raised UnicodeEncodeError, not a StoreError, ending the whole command
    store.write_failure("s", "s/a/m/p/seed0", "FileNotFoundError: /data/\udcff.csv")
    assert store.failures("s") == {"s/a/m/p/seed0": "FileNotFoundError: /data/\\udcff.csv"}
