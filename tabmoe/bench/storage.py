"""Where finished runs (and failures) are kept, so that a rerun skips what is done.

Two stores with one interface (``finished``, ``records``, ``write``, ``write_failure``,
``failures``):

* :class:`DirectoryStore` (the embedded default): one JSON file per finished run,
  ``<results>/runs/<suite>/<split>/<model>/<protocol>-seed<k>.json``, written to a temporary
  file in the same folder, flushed, fsynced and renamed over the target (``os.replace``), so
  a reader — or a rerun after SIGKILL — sees either the whole record or none of it.
  Failures go to ``<results>/failures/...txt`` (traceback), removed once the run succeeds.
* :class:`SQLStore` (``--storage URL``): tables ``tabmoe_runs`` / ``tabmoe_failures`` in any
  SQLAlchemy database (PostgreSQL shared by several machines, SQLite); each write is one
  transaction, the run id is the primary key.

The Optuna studies live beside them: ``<results>/optuna.journal`` by default, the same
database with ``--storage`` (:func:`study_storage`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from ..tuning import database_url

STUDY_JOURNAL = "optuna.journal"
LOCK_FILE = ".lock"


class ResultsLocked(RuntimeError):
    """Another ``tabmoe-bench run`` is writing to the same results folder."""


class RunStore(Protocol):
    def finished(self, suite: str) -> dict[str, str]:
        """run_id -> config hash of every finished run of ``suite``."""

    def records(self, suite: str) -> list[dict[str, Any]]:
        """Every finished record of ``suite``."""

    def write(self, record: dict[str, Any]) -> None:
        """Store a finished run atomically (replacing an earlier record of the same run)."""

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        """Remember that ``run_id`` failed (not finished: a rerun retries it)."""

    def failures(self, suite: str) -> dict[str, str]:
        """run_id -> error text of the runs whose last attempt failed."""


def _finite(value: Any) -> Any:
    """NaN / inf floats -> None, recursively (records are strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


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

    def _path(self, folder: str, run_id: str, suffix: str) -> Path:
        suite, split, model, protocol, seed = run_id.split("/")
        return self.root / folder / _safe(suite) / _safe(split) / _safe(model) / f"{_safe(protocol)}-{_safe(seed)}{suffix}"

    def _files(self, folder: str, suite: str, suffix: str) -> Iterator[Path]:
        base = self.root / folder / _safe(suite)
        return (p for p in sorted(base.rglob(f"*{suffix}")) if not p.name.startswith("."))

    def records(self, suite: str) -> list[dict[str, Any]]:
        out = []
        for path in self._files("runs", suite, ".json"):
            try:
                out.append(json.loads(path.read_text(encoding="utf8")))
            except (OSError, json.JSONDecodeError) as exc:  # not written by this store
                raise ValueError(f"unreadable result file {path}: {exc}") from exc
        return out

    def finished(self, suite: str) -> dict[str, str]:
        return {r["run_id"]: r.get("config_hash", "") for r in self.records(suite)}

    def write(self, record: dict[str, Any]) -> None:
        atomic_write(self._path("runs", record["run_id"], ".json"), dumps(record) + "\n")
        with contextlib.suppress(FileNotFoundError):
            self._path("failures", record["run_id"], ".txt").unlink()

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        atomic_write(self._path("failures", run_id, ".txt"), f"{run_id}\n{error}")

    def failures(self, suite: str) -> dict[str, str]:
        out = {}
        for path in self._files("failures", suite, ".txt"):
            run_id, _, error = path.read_text(encoding="utf8").partition("\n")
            out[run_id] = error
        return out


class SQLStore:
    """Finished runs and failures in two tables of a SQLAlchemy database URL."""

    def __init__(self, url: str):
        import sqlalchemy as sa

        self.engine = sa.create_engine(database_url(url), pool_pre_ping=True)
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
        try:
            try:
                meta.create_all(self.engine)
            except (sa.exc.IntegrityError, sa.exc.ProgrammingError):
                meta.create_all(self.engine)  # lost a creation race with another worker: they exist now
        except sa.exc.SQLAlchemyError as exc:
            shown = self.engine.url.render_as_string(hide_password=True)
            raise ValueError(f"cannot use the database {shown}: {str(exc).splitlines()[0]}") from exc

    def finished(self, suite: str) -> dict[str, str]:
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.runs.c.run_id, self.runs.c.config_hash).where(self.runs.c.suite == suite))
            return {run_id: config_hash or "" for run_id, config_hash in rows}

    def records(self, suite: str) -> list[dict[str, Any]]:
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(self.runs.c.record).where(self.runs.c.suite == suite).order_by(self.runs.c.run_id)
            )
            return [json.loads(text) for (text,) in rows]

    def write(self, record: dict[str, Any]) -> None:
        import sqlalchemy as sa

        run_id = record["run_id"]
        with self.engine.begin() as conn:  # one transaction: replace the run, clear its failure
            conn.execute(sa.delete(self.runs).where(self.runs.c.run_id == run_id))
            conn.execute(sa.insert(self.runs).values(
                run_id=run_id, suite=record["suite"], config_hash=record.get("config_hash"),
                finished_at=record.get("finished_at"), record=dumps(record),
            ))
            conn.execute(sa.delete(self.failed).where(self.failed.c.run_id == run_id))

    def write_failure(self, suite: str, run_id: str, error: str) -> None:
        import sqlalchemy as sa

        with self.engine.begin() as conn:
            conn.execute(sa.delete(self.failed).where(self.failed.c.run_id == run_id))
            conn.execute(sa.insert(self.failed).values(run_id=run_id, suite=suite, error=error))

    def failures(self, suite: str) -> dict[str, str]:
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.failed.c.run_id, self.failed.c.error).where(self.failed.c.suite == suite))
            return dict(rows.all())


def is_url(storage: str | None) -> bool:
    return storage is not None and "://" in storage


def open_store(results: str | os.PathLike, storage: str | None = None) -> RunStore:
    """The database store for a ``--storage`` URL, else the results folder's JSON files."""
    if storage is not None and not is_url(storage):
        raise ValueError(f"--storage must be a database URL such as postgresql://user@host/db, got {storage!r}")
    return SQLStore(storage) if is_url(storage) else DirectoryStore(results)


def study_storage(results: str | os.PathLike, storage: str | None = None) -> str:
    """Where the Optuna studies go: the database URL, else ``<results>/optuna.journal``."""
    return storage if is_url(storage) else str(Path(results).resolve() / STUDY_JOURNAL)


def repair_journal(path: str | os.PathLike) -> bool:
    """Cut a partial last line off an Optuna journal file (a writer killed mid-append).

    Optuna tolerates a torn last line only while nothing follows it; call this while no
    other process writes (under :func:`results_lock`). Returns whether it cut anything.
    """
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return False
    with open(path, "rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return False
        fh.truncate(data.rfind(b"\n") + 1)
    return True


@contextlib.contextmanager
def results_lock(results: str | os.PathLike) -> Iterator[None]:
    """Hold ``<results>/.lock`` (flock) for the block; :class:`ResultsLocked` if it is taken.

    The kernel drops the lock when the holder dies, SIGKILL included.
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): no protection against a concurrent run
        yield
        return
    root = Path(results)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_FILE, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsLocked(f"{root} is in use by another tabmoe-bench run") from None
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
