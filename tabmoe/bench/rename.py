"""Rename a protocol in the records of a results folder, in place (no rerun): the
``tabmoe-bench rename-protocol RESULTS`` command (formerly ``scripts/rename_protocol.py``,
which a pip-installed tabmoe does not have).

For every ``runs/<suite>/<split>/<model>/<old>-seed<k>.json`` under the results folder:
``protocol``, ``run_id`` and ``config.protocol`` take the new name, ``config_hash`` is
recomputed the way :attr:`tabmoe.bench.plan.RunSpec.config_hash` computes it (SHA-1 of the
sorted-key JSON of ``config``), and the record moves to ``<new>-seed<k>.json`` (written
atomically, then the old file removed). Everything else in the record (scores, times,
versions, git revision) is kept. A record that does not read as one, whose hash does not
match its config, or whose run already has a record under the new name (made since: the
one ``run`` and ``report`` use) is left as it is and named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .plan import config_hash


def _renamed(path: Path, old: str, new: str) -> dict[str, Any]:
    """The record of ``path`` under the protocol ``new``; ValueError saying why not."""
    try:
        record = json.loads(path.read_text(encoding="utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    config = record.get("config") if isinstance(record, dict) else None
    run_id = record.get("run_id") if isinstance(record, dict) else None
    if not isinstance(config, dict) or not isinstance(run_id, str) or run_id.count("/") != 4:
        raise ValueError("not a run record (no config or run_id)")
    suite, split, model, protocol, seed = run_id.split("/")
    if not protocol == old == record.get("protocol") == config.get("protocol"):
        raise ValueError(f"its run_id, protocol or config.protocol is not {old!r}")
    if record.get("config_hash") != config_hash(config):
        raise ValueError("its config_hash does not match its config")
    record["protocol"] = config["protocol"] = new
    record["run_id"] = "/".join([suite, split, model, new, seed])
    record["config_hash"] = config_hash(config)
    return record


def rename_protocol(results: str | Path, old: str = "untuned", new: str = "fixed-budget") -> tuple[list[Path], list[str]]:
    """Rename protocol ``old`` to ``new`` in the records under ``results``: (the files
    written, one line per record left as it was, naming it and why)."""
    from .storage import atomic_write, dumps

    written, kept = [], []
    for path in sorted((Path(results) / "runs").glob(f"*/*/*/{old}-seed*.json")):
        target = path.with_name(f"{new}-{path.name.removeprefix(f'{old}-')}")
        if target.exists():
            kept.append(f"{path}: not renamed, {target.name} beside it is the run's record (made since)")
            continue
        try:
            record = _renamed(path, old, new)
        except ValueError as exc:
            kept.append(f"{path}: not renamed, {exc}")
            continue
        atomic_write(target, dumps(record) + "\n")
        path.unlink()
        written.append(target)
    return written, kept


def rename_command(results: Path) -> None:
    """``tabmoe-bench rename-protocol RESULTS``: every old protocol name to its current one."""
    import click

    from .plan import PROTOCOL_ALIASES
    from .storage import ResultsLocked, StoreError, os_error_text, results_lock

    if not (results / "runs").is_dir():  # before the lock, which would create a file there
        raise click.UsageError(f"{results} holds no runs/ folder: give the results folder of a "
                               "run (--results of tabmoe-bench run, default results/<suite>)")
    try:
        with results_lock(results):  # not under a run that is writing records
            for old, new in PROTOCOL_ALIASES.items():
                written, kept = rename_protocol(results, old, new)
                for line in kept:
                    click.echo(f"warning: {line}", err=True)
                click.echo(f"{len(written)} record(s) renamed {old} -> {new} in {results}")
    except ResultsLocked as exc:
        click.echo(f"Error: {exc}", err=True)
        click.get_current_context().exit(3)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot rename the records in {results}: {os_error_text(exc)}") from exc
