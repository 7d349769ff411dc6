"""OpenML datasets by integer id, through openml-python, safe for offline caches.

openml-python has two behaviours that hurt a shared or offline cache:

* if any fetch fails, ``openml.datasets.get_dataset`` **deletes the dataset's whole cache
  directory**;
* it writes pickles next to the ARFF, and a pickle written under pandas 3 cannot be read
  under pandas 2 (the error escapes openml's own recovery).

So :func:`load_openml` never hands the user's cache to openml. It first checks that the
dataset's entry is complete (:func:`cache_problems`), then copies the raw files
(``description.xml``, ``features.xml``, ``qualities.xml``, ``dataset.arff`` — never a pickle)
into a private working cache and points openml there. Pickles are written only in that
working copy, which is per process by default, or under ``work_dir/pandas-<major>/`` when a
persistent ``work_dir`` is given, so pandas majors never share a pickle. A failed fetch can
at worst delete the working copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

from .._optional import optional_module
from .table import Table

# The "data" extra's (xmltodict comes with openml): without them, importing this module is an
# ImportError naming the extra, not Python's bare "No module named 'openml'".
openml = optional_module("openml", "tabmoe.data.openml", extra="data")
xmltodict = optional_module("xmltodict", "tabmoe.data.openml", extra="data")

#: Files a dataset entry needs for ``get_dataset(..., download_features_meta_data=True)``.
REQUIRED_FILES = ("description.xml", "features.xml", "dataset.arff")
#: Raw files copied when present (qualities are not needed to load the data).
RAW_FILES = (*REQUIRED_FILES, "qualities.xml")
#: XML files and the root element each must have.
_XML_ROOTS = {"description.xml": "oml:data_set_description", "features.xml": "oml:data_features"}

#: openml-python's switch (``openml.config.OPENML_SKIP_PARQUET_ENV_VAR``) to use the ARFF only.
_SKIP_PARQUET = "OPENML_SKIP_PARQUET"

_process_work_dir: tempfile.TemporaryDirectory | None = None


class OpenMLCacheError(FileNotFoundError):
    """A dataset is not (completely) in the OpenML cache and was not downloaded."""


def default_cache_root() -> Path:
    """``$TABMOE_OPENML_CACHE`` (``~`` expanded) if set, else openml-python's configured cache root."""
    env = os.environ.get("TABMOE_OPENML_CACHE")
    if env:
        return Path(env).expanduser()
    return Path(openml.config.get_config_as_dict()["cachedir"])


def dataset_cache_dir(cache_root: str | os.PathLike, dataset_id: int) -> Path:
    """The entry of ``dataset_id`` under an openml cache root (``<root>/org/openml/www/datasets/<id>``).

    The ``org/openml/www`` part is derived from the configured server, as openml does.
    """
    host = urlparse(openml.config.server).netloc
    return Path(cache_root).joinpath(*reversed(host.split(".")), "datasets", str(dataset_id))


def cache_problems(entry: str | os.PathLike) -> list[str]:
    """What is wrong with a dataset cache entry; empty when it can be loaded offline.

    Each problem names the file: ``"features.xml (missing)"``, ``"dataset.arff (empty)"``,
    ``"description.xml (not valid XML: ...)"``.
    """
    entry = Path(entry)
    if not entry.is_dir():
        return [f"{name} (missing)" for name in REQUIRED_FILES]
    problems = []
    for name in REQUIRED_FILES:
        path = entry / name
        if not path.is_file():
            problems.append(f"{name} (missing)")
        elif path.stat().st_size == 0:
            problems.append(f"{name} (empty)")
        elif name in _XML_ROOTS:
            try:
                parsed = xmltodict.parse(path.read_bytes())
            except Exception as exc:  # noqa: BLE001 - expat raises several types
                problems.append(f"{name} (not valid XML: {exc})")
                continue
            if _XML_ROOTS[name] not in parsed:
                problems.append(f"{name} (no <{_XML_ROOTS[name]}> element)")
    return problems


def checksum_mismatch(entry: str | os.PathLike) -> str | None:
    """Why ``dataset.arff`` of a complete entry does not match the ``md5_checksum`` its
    ``description.xml`` states (a truncated copy cut at a line end still parses, with fewer
    rows); ``None`` when it matches or no checksum is stated."""
    entry = Path(entry)
    description = xmltodict.parse((entry / "description.xml").read_bytes())["oml:data_set_description"]
    expected = (description or {}).get("oml:md5_checksum")
    if not expected:
        return None
    digest = hashlib.md5(usedforsecurity=False)
    with (entry / "dataset.arff").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() == expected.strip().lower():
        return None
    return f"its md5 is {digest.hexdigest()}, description.xml states {expected.strip()}"


def _way_out(entry: Path) -> str:
    """How to complete ``entry``; it names openml-python's Parquet copy when it holds one
    and no ARFF (openml-python 0.15 caches ``dataset_<id>.pq`` and writes no ARFF)."""
    download = "download=True (Python) or --download (tabmoe-bench)"
    parquet = sorted(p.name for p in entry.glob("*.pq")) if entry.is_dir() else []
    if parquet and not (entry / "dataset.arff").is_file():
        return (
            f"The entry holds openml-python's Parquet copy ({', '.join(parquet)}), which tabmoe "
            "does not read: it reads dataset.arff (its tables and committed results come from "
            f"the ARFF). Fetch the ARFF with {download} (needs network access), or add "
            "dataset.arff to the cache."
        )
    fix = f"Add those files to the cache, or pass {download} to fetch them (needs network access)."
    if not entry.is_dir():  # no entry at all: most often the wrong cache, not an incomplete one
        return (
            "The cache has no entry for this dataset: if your OpenML cache is elsewhere, pass its "
            "root (the folder holding org/openml/www) as cache_dir= (Python), --openml-cache or "
            f"$TABMOE_OPENML_CACHE (tabmoe-bench). Else: {fix[0].lower()}{fix[1:]}"
        )
    return fix


def _work_root(work_dir: str | os.PathLike | None) -> Path:
    """The working cache: a per-process temporary folder, or ``work_dir/pandas-<major>``."""
    global _process_work_dir
    if work_dir is not None:
        root = Path(work_dir) / f"pandas-{pd.__version__.split('.')[0]}"
    else:
        if _process_work_dir is None:
            _process_work_dir = tempfile.TemporaryDirectory(prefix="tabmoe-openml-")
        root = Path(_process_work_dir.name)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _signature(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _sync_entry(source: Path, target: Path) -> None:
    """Copy the raw files of ``source`` to ``target``; start afresh if any of them changed."""
    present = [name for name in RAW_FILES if (source / name).is_file()]
    stale = target.exists() and any(
        not (target / name).is_file() or _signature(target / name) != _signature(source / name)
        for name in present
    )
    if stale:
        shutil.rmtree(target)  # our own working copy, pickles included
    target.mkdir(parents=True, exist_ok=True)
    for name in present:
        if not (target / name).exists():
            shutil.copy2(source / name, target / name)


@contextlib.contextmanager
def _openml_settings(root: Path, offline: bool) -> Iterator[None]:
    """Point openml at ``root`` and make it read the ARFF, never the Parquet file a
    description's ``parquet_url`` names: offline the working copy never holds one (and the
    fetch bypasses the retry policy); a download fetches the ARFF, so the table is parsed
    from the same file as a cached one. Offline, also fail fast instead of retrying."""
    old = openml.config.get_config_as_dict()
    old_skip = os.environ.get(_SKIP_PARQUET)
    try:  # a setting that raises (a cache folder openml cannot create) undoes the ones before it
        openml.config.set_root_cache_directory(root)
        os.environ[_SKIP_PARQUET] = "true"
        if offline:
            openml.config.set_retry_policy("robot", n_retries=1)
        yield
    finally:
        openml.config.set_root_cache_directory(old["cachedir"])
        openml.config.set_retry_policy(old["retry_policy"], old["connection_n_retries"])
        if old_skip is None:
            os.environ.pop(_SKIP_PARQUET, None)
        else:
            os.environ[_SKIP_PARQUET] = old_skip


def load_openml(
    dataset_id: int,
    *,
    target: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    download: bool = False,
    work_dir: str | os.PathLike | None = None,
) -> Table:
    """Load OpenML dataset ``dataset_id`` as a :class:`Table`, never touching the user's cache.

    Parameters
    ----------
    dataset_id : int
        OpenML dataset id. Names are not accepted: resolving a name needs the server.
    target : str, optional
        Label column; default the dataset's ``default_target_attribute``.
    cache_dir : path, optional
        An openml-python cache root (the folder holding ``org/openml/www``). Default
        ``$TABMOE_OPENML_CACHE``, else openml's configured cache root. Only read.
    download : bool, default False
        When the cache entry is incomplete, fetch the dataset from the OpenML server into
        the working cache (the user's cache is still not written), as the ARFF the offline
        path reads, never openml's Parquet copy. When False, raise
        :class:`OpenMLCacheError` naming the missing files. ``tabmoe-bench``'s
        ``--download`` sets it.
    work_dir : path, optional
        Where openml's working copy and pickles live. Default: a temporary folder removed
        when the process exits. A persistent folder gets one subfolder per pandas major.

    Returns
    -------
    Table
        ``data`` with one column per feature plus the label; nominal columns (label
        included) are ordered pandas ``category`` in ARFF order, as openml returns them;
        numeric columns are numeric. Ignored and row-id attributes are dropped.

    Warns when the cached ``dataset.arff`` does not match the md5 checksum of its
    ``description.xml`` (a truncated or edited file), and loads it as it is.
    """
    if isinstance(dataset_id, bool) or not isinstance(dataset_id, int) or dataset_id <= 0:
        raise ValueError(f"dataset_id must be a positive int (an OpenML id), got {dataset_id!r}")
    if target is not None and not isinstance(target, str):  # else "argument of type 'int' is not iterable"
        raise ValueError(f"target must be a column name (text) of OpenML dataset {dataset_id}, got {target!r}")
    cache_root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_root()
    entry = dataset_cache_dir(cache_root, dataset_id)
    problems = cache_problems(entry)
    if problems and not download:
        raise OpenMLCacheError(
            f"OpenML dataset {dataset_id} is not available offline in {entry}: "
            f"{', '.join(problems)}. {_way_out(entry)}"
        )
    mismatch = None if problems else checksum_mismatch(entry)
    if mismatch:
        warnings.warn(
            f"OpenML dataset {dataset_id}: dataset.arff in {entry} is not the file its "
            f"description.xml describes ({mismatch}): truncated or edited? Loading it as it is.",
            stacklevel=2,
        )
    tag = hashlib.sha1(str(cache_root.resolve()).encode()).hexdigest()[:12]
    root = _work_root(work_dir) / tag
    if entry.is_dir():
        _sync_entry(entry, dataset_cache_dir(root, dataset_id))
    with _openml_settings(root, offline=not problems):
        try:
            dataset = openml.datasets.get_dataset(
                dataset_id,
                download_data=True,
                download_qualities=False,
                download_features_meta_data=True,
            )
        except Exception as exc:
            what = "download failed" if problems else "could not load the cached files"
            raise OpenMLCacheError(
                f"OpenML dataset {dataset_id}: {what} ({type(exc).__name__}: {exc}). "
                f"Cache entry {entry} was not modified"
                + (f"; it lacks: {', '.join(problems)}." if problems else ".")
            ) from exc
        label = target if target is not None else dataset.default_target_attribute
        if target is None and (not label or "," in label):  # a given one is checked below
            raise ValueError(
                f"OpenML dataset {dataset_id} ({dataset.name}) has default target {label!r}; "
                "pass target= with one column name."
            )
        # get_data drops ignored and row-id attributes; as a target they failed as an IndexError
        dropped = [*(dataset.ignore_attribute or []), dataset.row_id_attribute]
        names = [feature.name for feature in dataset.features.values() if feature.name not in dropped]
        if label not in names:
            why = "an ignored or row-id attribute" if label in dropped else "not a column"
            raise ValueError(
                f"target {label!r} is {why} of OpenML dataset {dataset_id} "
                f"({dataset.name}); columns are {names}"
            )
        try:
            X, y, _, _ = dataset.get_data(target=label, dataset_format="dataframe")
        except Exception as exc:
            # A pickle of our working copy cut short (a process killed while openml wrote it)
            # raised UnpicklingError, which openml does not recover from, on every later load:
            # drop the working copy's pickles and parse the ARFF again, once.
            derived = [p for p in dataset_cache_dir(root, dataset_id).glob("*") if ".pkl" in p.name]
            for path in derived:
                path.unlink()
            error: Exception | None = exc
            if derived:
                try:
                    dataset = openml.datasets.get_dataset(
                        dataset_id, download_data=True, download_qualities=False,
                        download_features_meta_data=True,
                    )
                    X, y, _, _ = dataset.get_data(target=label, dataset_format="dataframe")
                except Exception as again:
                    error = again
                else:
                    error = None
            if error is not None:
                raise OpenMLCacheError(
                    f"OpenML dataset {dataset_id}: could not parse dataset.arff of {entry} "
                    f"({type(error).__name__}: {error})"
                ) from error
    data = X.copy()
    data[label] = y
    for feature in dataset.features.values():  # openml gives an all-missing numeric one as object
        column = feature.name
        if feature.data_type == "numeric" and column in data and data[column].dtype == object and data[column].isna().all():
            data[column] = data[column].astype(float)
    return Table(
        data=data,
        target=label,
        name=dataset.name,
        source=f"openml:{dataset_id}",
        description=dataset.description or "",
        meta={"version": dataset.version, "licence": dataset.licence, "cache_entry": str(entry)},
    )
