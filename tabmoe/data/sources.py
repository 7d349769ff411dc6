"""Declarative references to a table, as written in a suite file's ``data:`` entry.

=====================================================  ===========================================
YAML                                                   class
=====================================================  ===========================================
``{openml: 31}`` / ``{openml: 31, target: class}``     :class:`OpenMLSource`
``{file: ../data/car.csv, target: class}``             :class:`FileSource` (path relative to the
                                                       suite file)
``{simulation: {num_corefea: 5, corr: 0.9,             :class:`SimulationSource` (data seed = the
x_noise: 0.0}}``                                       split seed)
``{auto_mpg: {}}`` / ``{auto_mpg: {path: ...}}``       :class:`AutoMpgSource`
=====================================================  ===========================================
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._spec import build
from .files import load_table_file
from .paper import (
    SIMULATION_FEATURES as SIMULATION_FEATURES,  # the number of its features, here too
)
from .paper import auto_mpg_table, check_simulation_args, simulation_table
from .table import Table


@dataclass(frozen=True)
class LoadContext:
    """Run-time settings a source may need: the OpenML cache root, whether to download what
    it lacks (how the data is obtained, not which data), and the split seed."""

    openml_cache: str | os.PathLike | None = None
    seed: int = 0
    download: bool = False


@dataclass(frozen=True)
class OpenMLSource:
    """An OpenML dataset by integer id (loaded offline-safely by :func:`load_openml`)."""

    openml: int
    target: str | None = None

    def load(self, context: LoadContext) -> Table:
        from .openml import load_openml  # openml is an optional dependency (extra "data")

        return load_openml(
            self.openml, target=self.target, cache_dir=context.openml_cache, download=context.download
        )

    def describe(self) -> str:
        return f"openml:{self.openml}"

    def settings(self) -> str | None:
        """What shapes the table besides ``describe`` (not in a run's hash: recorded apart)."""
        return f"target={self.target!r}"

    def digest(self) -> str | None:
        """None: an OpenML id names one version of its data."""
        return None


@dataclass(frozen=True)
class FileSource:
    """A local CSV / Parquet file (see :func:`load_table_file`)."""

    file: str
    target: str | None = None
    categorical: tuple[str, ...] | str | None = None

    def __post_init__(self) -> None:
        # a list as source_from_dict makes it, a tuple: unhashable (a run's source digests are
        # kept by source) and, in settings(), recorded apart from the suite file's same table
        if isinstance(self.categorical, list):
            object.__setattr__(self, "categorical", tuple(self.categorical))

    def load(self, context: LoadContext) -> Table:
        return load_table_file(self.file, target=self.target, categorical=self.categorical)

    def describe(self) -> str:
        return f"file:{Path(self.file).name}"

    def settings(self) -> str | None:
        """What shapes the table besides ``describe`` (not in a run's hash: recorded apart)."""
        return f"target={self.target!r}; categorical={self.categorical!r}"

    def digest(self) -> str | None:
        """The file's content digest (:func:`file_digest`): ``describe`` names the file only,
        so a record made on an edited file is told apart by this."""
        return file_digest(self.file)


@dataclass(frozen=True)
class SimulationSource:
    """The paper's correlation-shift simulation; the split seed is the data seed."""

    num_corefea: int
    corr: float
    x_noise: float

    def __post_init__(self) -> None:
        # when the suite file is read, before any run (the generator checks them again)
        check_simulation_args(self.num_corefea, self.corr, self.x_noise)

    def load(self, context: LoadContext) -> Table:
        return simulation_table(self.num_corefea, self.corr, self.x_noise, context.seed)

    def describe(self) -> str:
        return f"simulation {self.num_corefea}/{self.corr}/{self.x_noise}"

    def settings(self) -> str | None:
        """None: ``describe`` names all of the table."""
        return None

    def digest(self) -> str | None:
        """None: the data is drawn from the seed."""
        return None


@dataclass(frozen=True)
class AutoMpgSource:
    """The paper's auto-mpg table (``path`` default: ``$TABMOE_AUTO_MPG`` or ../shared)."""

    path: str | None = None

    def load(self, context: LoadContext) -> Table:
        return auto_mpg_table(self.path)

    def describe(self) -> str:
        return "auto-mpg"

    def settings(self) -> str | None:
        """None: ``describe`` names all of the table."""
        return None

    def digest(self) -> str | None:
        """None: the paper's shipped table."""
        return None


def file_digest(path: Any) -> str | None:
    """12 hex digits of SHA-256 over a file's bytes; None when it cannot be read (its load
    then fails, naming the file)."""
    digest = hashlib.sha256()
    try:
        with open(os.path.expanduser(path), "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()[:12]


DataSource = OpenMLSource | FileSource | SimulationSource | AutoMpgSource


def source_from_dict(spec: dict[str, Any], *, base_dir: Path | None = None, where: str = "data") -> DataSource:
    """Parse a suite file's ``data:`` mapping; relative file paths resolve against ``base_dir``."""
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: expected a mapping such as {{openml: 31}}, got {spec!r}")
    kinds = [k for k in ("openml", "file", "simulation", "auto_mpg") if k in spec]
    if len(kinds) != 1:
        raise ValueError(
            f"{where}: give exactly one of openml / file / simulation / auto_mpg, got {sorted(spec)}"
        )
    kind = kinds[0]
    if kind == "openml":
        if isinstance(spec["openml"], bool) or not isinstance(spec["openml"], int) or spec["openml"] <= 0:
            raise ValueError(f"{where}: openml must be a positive integer dataset id, got {spec['openml']!r}")
        if spec.get("target") is not None and not isinstance(spec["target"], str):
            # else refused only when a run loads it, in words that name no suite or split
            raise ValueError(
                f"{where}: target must be a column name (text), got {spec['target']!r} "
                "(quote a number in YAML: '3')"
            )
        return build(OpenMLSource, spec, where)
    if kind == "file":
        fields = dict(spec)
        if isinstance(fields["file"], os.PathLike):  # a suite built in Python
            fields["file"] = os.fspath(fields["file"])
        if not isinstance(fields["file"], str) or not fields["file"].strip():  # Path(None): a TypeError
            raise ValueError(f"{where}: file must be a path (text), got {fields['file']!r}")
        if fields.get("target") is not None and not isinstance(fields["target"], str):
            raise ValueError(
                f"{where}: target must be a column name (text), got {fields['target']!r} "
                "(quote a number in YAML: '3')"
            )
        categorical = fields.get("categorical")
        if categorical is not None and categorical != "all" and not (
            isinstance(categorical, list) and all(isinstance(c, str) for c in categorical)
        ):  # else at load time: "'int' object is not iterable"
            raise ValueError(
                f"{where}: categorical must be a list of column names or 'all', got {categorical!r}"
            )
        path = Path(fields["file"]).expanduser()  # else "~/x.csv" was read under base_dir
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        fields["file"] = str(path.resolve())
        if isinstance(fields.get("categorical"), list):
            fields["categorical"] = tuple(fields["categorical"])
        return build(FileSource, fields, where)
    options = spec[kind] or {}
    if set(spec) != {kind} or not isinstance(options, dict):
        raise ValueError(f"{where}: write {kind} options as a nested mapping, {{{kind}: {{...}}}}")
    if kind == "simulation":
        return build(SimulationSource, options, f"{where}.simulation")
    fields = dict(options)
    if isinstance(fields.get("path"), os.PathLike):  # a suite built in Python
        fields["path"] = os.fspath(fields["path"])
    if fields.get("path") is not None and not isinstance(fields["path"], str):
        raise ValueError(f"{where}.auto_mpg: path must be a path (text) or null, got {fields['path']!r}")
    if fields.get("path") is not None:  # "~/x.csv": the user's home, not <suite dir>/~/x.csv
        path = Path(fields["path"]).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = (base_dir / path).resolve()
        fields["path"] = str(path)
    return build(AutoMpgSource, fields, f"{where}.auto_mpg")
