"""Where finished runs (and failures) are kept, so that a rerun skips what is done.

Two stores with one interface (``finished``, ``records``, ``scan``, ``recover``, ``probe``,
``write``, ``write_failure``, ``failures``, ``ignored``):

* :class:`DirectoryStore` (the embedded default): one JSON file per finished run,
  ``<results>/runs/<suite>/<split>/<model>/<protocol>-seed<k>.json``, written to a temporary
  file in the same folder, flushed, fsynced and renamed over the target (``os.replace``), so
  a reader — or a rerun after SIGKILL — sees either the whole record or none of it.
  Failures go to ``<results>/failures/...txt`` (traceback), removed once the run succeeds.
  Any other file there (a user's ``notes.json``) is no run's: ``ignored`` names it, and
  nothing counts, reads or moves it.
* :class:`SQLStore` (``--storage URL``): tables ``tabmoe_runs`` / ``tabmoe_failures`` in any
  SQLAlchemy database (PostgreSQL shared by several machines, SQLite); each write is one
  transaction, the run id is the primary key.

Faults (docs/reliability.md, "Harness faults"): a result that cannot be saved or read (full
disk, folder or database gone) raises :class:`StoreError`, whose one-line message names the
run and the file or the URL (password masked). A record that does not parse, or is not the
run its place says, or does not match the record schema (``tabmoe.bench.schema``:
the type and range of every field ``report`` uses), is *corrupt*: ``records`` / ``finished`` skip it (the run counts as not
finished, so ``run`` redoes it), ``scan`` lists it, and ``recover`` — which ``run`` calls
while holding the results lock — moves a corrupt file aside to ``<name>.corrupt`` (kept for
inspection; a database row stays until the rerun replaces it) and deletes the temporary
files of writers killed before their rename.

The Optuna studies live beside them: ``<results>/optuna.journal`` by default, the same
database with ``--storage`` (:func:`study_storage`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import platform
import re
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..tuning import database_url
from .schema import check_record

STUDY_JOURNAL = "optuna.journal"
LOCK_FILE = ".lock"


#: Keys every record has (a stored document without them is corrupt).
RECORD_KEYS = ("run_id", "suite", "split", "model", "protocol", "seed")
#: Where a record (or failure) file of a run lies below ``runs/<suite>/`` (``failures/<suite>/``),
#: without its suffix: any other file there is not a run's (a user's notes.json) and is ignored.
_RUN_PLACE = re.compile(r"[^/]+/[^/]+/[^/]+-seed[0-9]+", re.ASCII)


class ResultsLocked(RuntimeError):
    """Another ``tabmoe-bench run`` is writing to the same results folder."""


class StoreError(RuntimeError):
    """A result could not be saved or read: full disk, folder or database gone or read-only.

    The message is one line naming the run (when there is one) and the file or database URL.
    """


class Corrupt(NamedTuple):
    """A stored record that cannot be used (the run counts as not finished)."""

    run_id: str  #: the run its place says (file path or row key)
    location: str  #: "result file <path>" or "record of run <id> in <url>"
    reason: str  #: why it is unusable, one line
    path: Path | None = None  #: the file (results folder only)


def os_error_text(exc: OSError) -> str:
    """One line for an OSError, saying so plainly when the disk (or quota) is full."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk is full ({exc.strerror or exc})"
    return exc.strerror or str(exc)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def config_hashes(records: list[dict[str, Any]]) -> dict[str, str]:
    """run_id -> config hash ("" when the record has none) of ``records``."""
    return {r["run_id"]: r.get("config_hash") or "" for r in records}


class RunStore(Protocol):
    def finished(self, suite: str) -> dict[str, str]:
        """run_id -> config hash of every finished run of ``suite`` (corrupt records excluded)."""

    def records(self, suite: str) -> list[dict[str, Any]]:
        """Every finished record of ``suite`` (corrupt records skipped)."""

    def scan(self, suite: str) -> tuple[list[dict[str, Any]], list[Corrupt]]:
        """The usable records of ``suite`` and the corrupt ones."""

    def recover(self, suite: str) -> list[str]:
        """Set corrupt records aside so their runs are redone; one warning line for each.

        Call it only while no other process writes (under :func:`results_lock`).
        """

    def probe(self, suite: str | None = None) -> None:
        """:class:`StoreError` unless results (of ``suite``, where given) can be written
        (call before running anything)."""

    def write(self, record: dict[str, Any]) -> None:
        """Store a finished run atomically (replacing an earlier record of the same run)."""

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        """Remember that ``run_id`` failed (not finished: a rerun retries it)."""

    def failures(self, suite: str) -> dict[str, str]:
        """run_id -> error text of the runs whose last attempt failed."""

    def ignored(self, suite: str) -> list[str]:
        """One warning line for each stored item of ``suite`` that is not a run's (never
        counted, read, or moved aside): a stray file in the results folder."""

    def close(self) -> None:
        """Release the store's database connections, if any (it reopens them if used again)."""

    def place(self, suite: str) -> str:
        """Where the records of ``suite`` are read from, for a message that found none."""


def _finite(value: Any) -> Any:
    """NaN / inf floats -> None, recursively (records are strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _encodable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (a lone surrogate: a file name's undecodable
    bytes in an error message) written as a backslash escape, not a UnicodeEncodeError."""
    return text.encode("utf8", "backslashreplace").decode("utf8")


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(_finite(record), indent=1, sort_keys=True, allow_nan=False)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that it appears whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _safe(component: str) -> str:
    return component.replace(os.sep, "_").replace("/", "_") or "_"


class DirectoryStore:
    """Finished runs as one JSON file each under ``root/runs`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def close(self) -> None:
        """Nothing to release: every file is closed after each read or write."""

    def place(self, suite: str) -> str:
        """The suite's records folder, and the suites the folder holds runs of instead."""
        runs = self.root / "runs"
        others = sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name != _safe(suite)) if runs.is_dir() else []
        note = f"this results folder holds runs of {others}" if others else "no such folder"
        return f"{runs / _safe(suite)}" + ("" if (runs / _safe(suite)).is_dir() else f" ({note})")

    def _path(self, folder: str, run_id: str, suffix: str) -> Path:
        suite, split, model, protocol, seed = run_id.split("/")
        return self.root / folder / _safe(suite) / _safe(split) / _safe(model) / f"{_safe(protocol)}-{_safe(seed)}{suffix}"

    def _scan(self, folder: str, suite: str, suffix: str, at_run_place: bool = True) -> Iterator[Path]:
        """The files of ``folder`` at the place of a run (``<split>/<model>/<protocol>-seed<k>``),
        or (``at_run_place=False``) the others, which are no run's."""
        base = self.root / folder / _safe(suite)
        return (p for p in sorted(base.rglob(f"*{suffix}")) if not p.name.startswith(".")
                and bool(_RUN_PLACE.fullmatch(p.relative_to(base).as_posix().removesuffix(suffix))) == at_run_place)

    def ignored(self, suite: str) -> list[str]:
        return [f"ignoring {p}: not a run's {kind} file (those are {self.root / folder / _safe(suite)}"
                f"/<split>/<model>/<protocol>-seed<k>{suffix}); not counted, read or moved"
                for folder, suffix, kind in (("runs", ".json", "record"), ("failures", ".txt", "failure"))
                for p in self._scan(folder, suite, suffix, at_run_place=False)]

    def _run_id(self, path: Path) -> str:
        """The run a record file's place names (the inverse of :meth:`_path`)."""
        *folders, name = path.relative_to(self.root / "runs").parts
        protocol, _, seed = name.removesuffix(".json").rpartition("-")
        return "/".join([*folders, protocol, seed])

    def _load(self, path: Path) -> dict[str, Any]:
        """The record in ``path``; ValueError (the reason) when it is corrupt."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read result file {path}: {os_error_text(exc)}") from exc
        if not data.strip():
            raise ValueError("empty file")
        try:
            record = json.loads(data.decode("utf8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not JSON ({exc})") from None
        except RecursionError:
            raise ValueError("not a run record (JSON nested too deeply)") from None
        missing = [k for k in RECORD_KEYS if not isinstance(record, dict) or k not in record]
        if missing:
            raise ValueError(f"not a run record (no {', '.join(missing)})")
        run_id = record["run_id"]
        if not isinstance(run_id, str) or run_id.count("/") != 4 or self._path("runs", run_id, ".json") != path:
            raise ValueError(f"holds run {run_id!r}, not {self._run_id(path)!r}")
        check_record(record)
        return record

    def scan(self, suite: str) -> tuple[list[dict[str, Any]], list[Corrupt]]:
        records, corrupt = [], []
        for path in self._scan("runs", suite, ".json"):
            try:
                records.append(self._load(path))
            except ValueError as exc:
                corrupt.append(Corrupt(self._run_id(path), f"result file {path}", str(exc), path))
        return records, corrupt

    def records(self, suite: str) -> list[dict[str, Any]]:
        return self.scan(suite)[0]

    def finished(self, suite: str) -> dict[str, str]:
        return config_hashes(self.records(suite))

    def recover(self, suite: str) -> list[str]:
        warnings = []
        for item in self.scan(suite)[1]:
            path = item.path
            aside = path.with_name(path.name + ".corrupt")
            for k in range(1, 1000):
                if not aside.exists():
                    break
                aside = path.with_name(f"{path.name}.corrupt{k}")
            try:
                os.replace(path, aside)
            except OSError as exc:
                raise StoreError(f"cannot move the corrupted result file {path} aside: {os_error_text(exc)}") from exc
            warnings.append(f"corrupted result file {path} ({item.reason}); moved to {aside}, "
                            f"run {item.run_id} is redone")
        for folder in ("runs", "failures"):  # temporaries of writers killed before their rename
            for tmp in (self.root / folder / _safe(suite)).rglob(".*.tmp"):
                with contextlib.suppress(OSError):
                    tmp.unlink()
        return warnings

    def probe(self, suite: str | None = None) -> None:
        # the folders records and failures go to, too: a file standing where one of them
        # should be passed a probe of the root alone, and the first run's result was lost
        folders = [self.root, *(self.root / f / _safe(suite) if suite else self.root / f
                                for f in ("runs", "failures"))]
        for folder in folders:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
                os.close(fd)
                os.unlink(tmp)
            except OSError as exc:
                blocker = next((p for p in [*reversed(folder.parents), folder]
                                if p.exists() and not p.is_dir()), None)
                reason = os_error_text(exc) if blocker is None else f"{blocker} is a file, not a folder"
                raise StoreError(f"cannot use the results folder {self.root}: {reason}") from exc

    def _write(self, path: Path, text: str, what: str) -> None:
        try:
            atomic_write(path, text)
        except OSError as exc:
            raise StoreError(f"cannot save {what} to {path}: {os_error_text(exc)}") from exc

    def write(self, record: dict[str, Any]) -> None:
        run_id = record["run_id"]
        self._write(self._path("runs", run_id, ".json"), dumps(record) + "\n", f"the result of {run_id}")
        with contextlib.suppress(OSError):
            self._path("failures", run_id, ".txt").unlink()

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        text = _encodable(f"{run_id}\n{error}")
        self._write(self._path("failures", run_id, ".txt"), text, f"the failure of {run_id}")

    def failures(self, suite: str) -> dict[str, str]:
        out = {}
        for path in self._scan("failures", suite, ".txt"):
            with contextlib.suppress(OSError):
                run_id, _, error = path.read_text(encoding="utf8", errors="replace").partition("\n")
                out[run_id] = error
        return out


class SQLStore:
    """Finished runs and failures in two tables of a SQLAlchemy database URL."""

    def __init__(self, url: str, create: bool = True):
        """``create=False`` (reading a report) creates neither a database file nor tables."""
        import sqlalchemy as sa

        try:
            self.engine = sa.create_engine(database_url(url), pool_pre_ping=True)
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
            raise ValueError(f"--storage {url!r} is not a usable database URL: {_first_line(exc)}") from exc
        self.shown = self.engine.url.render_as_string(hide_password=True)
        meta = sa.MetaData()
        self.runs = sa.Table(
            "tabmoe_runs", meta,
            sa.Column("run_id", sa.String(512), primary_key=True),
            sa.Column("suite", sa.String(256), index=True, nullable=False),
            sa.Column("config_hash", sa.String(64)),
            sa.Column("finished_at", sa.String(64)),
            sa.Column("record", sa.Text, nullable=False),
        )
        self.failed = sa.Table(
            "tabmoe_failures", meta,
            sa.Column("run_id", sa.String(512), primary_key=True),
            sa.Column("suite", sa.String(256), index=True, nullable=False),
            sa.Column("error", sa.Text, nullable=False),
        )
        if not create:
            self._check_exists(sa)
            return
        try:
            try:
                meta.create_all(self.engine)
            except (sa.exc.IntegrityError, sa.exc.ProgrammingError):
                meta.create_all(self.engine)  # lost a creation race with another worker: they exist now
        except sa.exc.SQLAlchemyError as exc:
            raise ValueError(f"cannot use the database {self.shown}: {_first_line(exc)}") from exc

    def place(self, suite: str) -> str:
        return f"the database {self.shown}"

    def close(self) -> None:
        """Close the pooled connections now (a command's last use), not when the garbage
        collector finds the engine: three in-process ``run`` commands held three."""
        self.engine.dispose()

    def _check_exists(self, sa: Any) -> None:
        """A ValueError unless the database exists and holds the runs table."""
        database = self.engine.url.database
        if self.engine.url.get_backend_name() == "sqlite" and database and database != ":memory:":
            if not Path(database).is_file():  # connecting would create it
                raise ValueError(f"no database file {database} ({self.shown})")
        try:
            found = sa.inspect(self.engine).has_table(self.runs.name)
        except sa.exc.SQLAlchemyError as exc:
            raise ValueError(f"cannot use the database {self.shown}: {_first_line(exc)}") from exc
        if not found:
            raise ValueError(f"the database {self.shown} holds no tabmoe runs (no table {self.runs.name})")

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Database errors -> :class:`StoreError` saying ``what`` failed, naming the URL."""
        import sqlalchemy as sa

        try:
            yield
        except sa.exc.SQLAlchemyError as exc:
            gone = ""
            database = self.engine.url.database
            if self.engine.url.get_backend_name() == "sqlite" and database and database != ":memory:":
                gone = "" if Path(database).exists() else f"; the file {database} no longer exists"
            raise StoreError(f"cannot {what} the database {self.shown}: {_first_line(exc)}{gone}") from exc

    @staticmethod
    def _parse(run_id: str, text: str) -> dict[str, Any]:
        """The record of row ``run_id``; ValueError (the reason) when it is corrupt."""
        try:
            record = json.loads(text)
        except (TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not JSON ({exc})") from None
        except RecursionError:
            raise ValueError("not a run record (JSON nested too deeply)") from None
        missing = [k for k in RECORD_KEYS if not isinstance(record, dict) or k not in record]
        if missing:
            raise ValueError(f"not a run record (no {', '.join(missing)})")
        if record["run_id"] != run_id:
            raise ValueError(f"holds run {record['run_id']!r}")
        check_record(record)
        return record

    def scan(self, suite: str) -> tuple[list[dict[str, Any]], list[Corrupt]]:
        import sqlalchemy as sa

        with self._errors(f"read the results of {suite} from"), self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(self.runs.c.run_id, self.runs.c.record)
                .where(self.runs.c.suite == suite).order_by(self.runs.c.run_id)
            ).all()
        records, corrupt = [], []
        for run_id, text in rows:
            try:
                records.append(self._parse(run_id, text))
            except ValueError as exc:
                corrupt.append(Corrupt(run_id, f"record of run {run_id} in {self.shown}", str(exc)))
        return records, corrupt

    def records(self, suite: str) -> list[dict[str, Any]]:
        return self.scan(suite)[0]

    def finished(self, suite: str) -> dict[str, str]:
        return config_hashes(self.records(suite))

    def ignored(self, suite: str) -> list[str]:
        return []  # every row is keyed by its run id

    def recover(self, suite: str) -> list[str]:
        return [f"corrupted {item.location} ({item.reason}); the run is redone and its new record "
                "replaces it" for item in self.scan(suite)[1]]

    def probe(self, suite: str | None = None) -> None:
        import sqlalchemy as sa

        probe = f".probe-{uuid.uuid4().hex}"
        with self._errors("write to"), self.engine.connect() as conn:  # a write, rolled back
            with conn.begin() as transaction:
                conn.execute(sa.insert(self.failed).values(run_id=probe, suite=probe, error="probe"))
                transaction.rollback()

    def write(self, record: dict[str, Any]) -> None:
        import sqlalchemy as sa

        run_id = record["run_id"]
        with self._errors(f"save the result of {run_id} in"), self.engine.begin() as conn:
            # one transaction: replace the run, clear its failure
            self._replace(conn, self.runs, run_id=run_id, suite=record["suite"],
                          config_hash=record.get("config_hash"), finished_at=record.get("finished_at"),
                          record=dumps(record))
            conn.execute(sa.delete(self.failed).where(self.failed.c.run_id == run_id))

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        with self._errors(f"save the failure of {run_id} in"), self.engine.begin() as conn:
            self._replace(conn, self.failed, run_id=run_id, suite=suite, error=_encodable(error))

    def _replace(self, conn: Any, table: Any, **values: Any) -> None:
        """Insert the row of ``values["run_id"]`` or replace it. PostgreSQL upserts in one
        statement: there, a delete then an insert let two writers of the same run both
        delete nothing and then collide on the key (a whole invocation aborted). SQLite
        queues its writers, so the transaction's delete and insert cannot interleave."""
        import sqlalchemy as sa

        if self.engine.dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as upsert

            insert = upsert(table).values(**values)
            conn.execute(insert.on_conflict_do_update(
                index_elements=[table.c.run_id],
                set_={name: insert.excluded[name] for name in values if name != "run_id"},
            ))
            return
        conn.execute(sa.delete(table).where(table.c.run_id == values["run_id"]))
        conn.execute(sa.insert(table).values(**values))

    def failures(self, suite: str) -> dict[str, str]:
        import sqlalchemy as sa

        with self._errors(f"read the failures of {suite} from"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.failed.c.run_id, self.failed.c.error).where(self.failed.c.suite == suite))
            return dict(rows.all())


def is_url(storage: str | None) -> bool:
    return storage is not None and "://" in storage


def open_store(results: str | os.PathLike, storage: str | None = None, create: bool = True) -> RunStore:
    """The database store for a ``--storage`` URL, else the results folder's JSON files
    (``create=False``: an existing database only, nothing created)."""
    if storage is not None and not is_url(storage):
        raise ValueError(f"--storage must be a database URL such as postgresql://user@host/db, got {storage!r}")
    return SQLStore(storage, create=create) if is_url(storage) else DirectoryStore(results)


def study_storage(results: str | os.PathLike, storage: str | None = None) -> str:
    """Where the Optuna studies go: the database URL, else ``<results>/optuna.journal``."""
    return storage if is_url(storage) else str(Path(results).resolve() / STUDY_JOURNAL)


def repair_journal(path: str | os.PathLike) -> bool:
    """Cut a partial last line off an Optuna journal file (a writer killed mid-append), and
    delete its lock file ``<path>.lock`` (a writer killed, or interrupted, while holding it).

    Optuna tolerates a torn last line only while nothing follows it, and makes every writer
    wait 30 s on a lock nobody will release before it forces the lock open (each waiter on
    its own, so two may then write at once). Call this while no other process writes
    (under :func:`results_lock`). Returns whether it repaired anything. A line that is not
    JSON before the last is not repairable: a :class:`StoreError` names the file and the
    line (Optuna's own "Expecting value: line 1 column 1" named neither, in every tuned run).
    """
    path = Path(path)
    lock = path.with_name(path.name + ".lock")  # optuna's LOCK_FILE_SUFFIX: a symlink or a file
    unlocked = lock.is_symlink() or lock.exists()
    if unlocked:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
    if not path.is_file() or path.stat().st_size == 0:
        return unlocked
    with open(path, "rb+") as fh:
        data = fh.read()
        torn = not data.endswith(b"\n")
        if torn:
            data = data[: data.rfind(b"\n") + 1]
        _check_journal_lines(path, data)
        if not torn:
            return unlocked
        fh.truncate(len(data))
    return True


def _check_journal_lines(path: Path, data: bytes) -> None:
    """StoreError naming the first line of ``data`` (whole lines of the journal ``path``)
    that is not a JSON object."""
    for number, line in enumerate(data.splitlines(), 1):
        try:
            ok = isinstance(json.loads(line), dict)
        except ValueError:  # JSONDecodeError, UnicodeDecodeError
            ok = False
        if not ok:
            raise StoreError(
                f"the Optuna journal {path} is damaged at line {number} ({line[:60]!r}): Optuna "
                "cannot read it, so every tuned run would fail. Move the file aside (the tuned "
                "runs without a record then start new studies) and run again."
            )


@contextlib.contextmanager
def results_lock(results: str | os.PathLike) -> Iterator[None]:
    """Hold ``<results>/.lock`` (flock) for the block; :class:`ResultsLocked` (naming the lock
    file and the pid and host that hold it) if it is taken, :class:`StoreError` if the folder
    cannot be created or written.

    The kernel drops the lock when the holder dies, SIGKILL included; the holder's pid and
    host stay in the file, and are read only while the lock is held.
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): no protection against a concurrent run
        yield
        return
    root = Path(results)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fh = open(root / LOCK_FILE, "a+")  # closed by the with below
    except OSError as exc:
        raise StoreError(f"cannot use the results folder {root}: {os_error_text(exc)}") from exc
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            pid, _, host = fh.read().strip().partition(" ")
            holder = f"pid {pid}" + (f" on {host}" if host else "") if pid.isdigit() else "a process"
            raise ResultsLocked(f"{root} is in use by another tabmoe-bench run ({holder} holds "
                                f"its lock file {root / LOCK_FILE})") from None
        with contextlib.suppress(OSError):  # who holds it, for the message of a run refused
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()} {platform.node()}\n")
            fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
