"""Benchmark suites: named lists of :class:`~tabmoe.data.splits.SplitDefinition` in YAML files.

A suite file ``<dir>/<name>.yaml``::

    name: smoke                 # must equal the file name
    description: ...
    seeds: [0, 1, 2]            # default seeds of every split
    defaults: {validation_size: 0.15, id_test_size: 0.15}   # optional, per-split keys
    splits:
      - name: car-buying-vhigh
        rationale: one line: which real shift this models
        data: {file: data/car-smoke.csv, target: class}
        split: {by: values, column: buying, ood_values: [vhigh]}
    # Optional settings of ``tabmoe-bench run`` (checked by tabmoe.bench.plan):
    models:                     # default models, each with parameters fixed in every run
      tabmoe: {max_epochs: 10}
      logistic_regression: {}
    protocols: [fixed-budget, tuned] # default protocols
    tuning: {n_trials: 2, timeout: 60, metric: accuracy}   # the budget of every tuned run

Suites are looked up in ``$TABMOE_SUITES_DIR``, else in this package's folder: the shipped
suites (``smoke``, ``paper``, ``openml-ood``, and the smoke suite's table under ``data/``) are
package data, so they load from an installed wheel in any working directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._optional import optional_module
from ...data._spec import parse_seeds
from ...data.splits import SplitDefinition, check_name

_SUITE_KEYS = {"name", "description", "seeds", "defaults", "splits", "models", "protocols", "tuning"}


@dataclass(frozen=True)
class Suite:
    """A named, ordered collection of split definitions with default seeds."""

    name: str
    description: str
    seeds: tuple[int, ...]
    splits: tuple[SplitDefinition, ...]
    path: Path | None = None
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    protocols: tuple[str, ...] = ()
    tuning: dict[str, Any] = field(default_factory=dict)

    def split(self, name: str) -> SplitDefinition:
        """The split called ``name`` (error lists the available ones)."""
        for split in self.splits:
            if split.name == name:
                return split
        raise KeyError(f"suite {self.name!r} has no split {name!r}; splits are {[s.name for s in self.splits]}")

    def seeds_for(self, split: SplitDefinition) -> tuple[int, ...]:
        """The split's own seeds, else the suite's."""
        return split.seeds if split.seeds is not None else self.seeds


def default_suites_dir() -> Path:
    """``$TABMOE_SUITES_DIR`` (``~`` expanded, as in ``$TABMOE_OPENML_CACHE``: a quoted
    ``"~/suites"`` was a folder named ``~`` in the current folder) if set, else the suites
    shipped in this package."""
    env = os.environ.get("TABMOE_SUITES_DIR")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent


def available_suites(directory: str | os.PathLike | None = None) -> dict[str, Path]:
    """Suite name -> file, for every ``*.yaml`` file in ``directory`` (sorted by name; a
    folder so named is not a suite)."""
    directory = Path(directory) if directory is not None else default_suites_dir()
    if not directory.is_dir():
        # "(set TABMOE_SUITES_DIR)" was told to a user who had set it, to the folder at fault
        problem = "is a file, not a folder" if directory.exists() else "does not exist"
        env = os.environ.get("TABMOE_SUITES_DIR")
        source = (" (from $TABMOE_SUITES_DIR: point it at a folder of suite .yaml files, or unset "
                  "it for the suites shipped with tabmoe)" if env and Path(env).expanduser() == directory else "")
        raise FileNotFoundError(f"suites directory {directory} {problem}{source}")
    return {path.stem: path for path in sorted(directory.glob("*.yaml")) if path.is_file()}


def load_suites(directory: str | os.PathLike | None = None) -> tuple[list[Suite], list[str]]:
    """Every suite of ``directory`` that loads, and one message per ``*.yaml`` file that does
    not, naming the file (a listing of the folder shows the good ones beside the bad)."""
    suites, problems = [], []
    for path in available_suites(directory).values():
        try:
            suites.append(load_suite(path))
        except (ValueError, OSError) as exc:
            message = " ".join(str(exc).split())
            problems.append(message if str(path) in message else f"suite {path}: {message}")
    return suites, problems


def suite_from_dict(spec: dict[str, Any], *, base_dir: Path | None = None, path: Path | None = None) -> Suite:
    """Build a :class:`Suite` from a parsed YAML mapping; file paths resolve against ``base_dir``."""
    where = f"suite {path}" if path else "suite"
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: expected a mapping at the top level")
    unknown = sorted(set(spec) - _SUITE_KEYS)
    if unknown:  # the allowed keys, as every other key error of a suite file gives them
        raise ValueError(f"{where}: unknown keys {unknown}; allowed are {sorted(_SUITE_KEYS)}")
    missing = sorted({"name", "seeds", "splits"} - set(spec))
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    check_name(spec["name"], f"{where}: name")
    if path is not None and spec["name"] != path.stem:
        raise ValueError(f"{where}: name {spec['name']!r} differs from the file name {path.stem!r}")
    defaults = spec.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ValueError(
            f"{where}.defaults: expected a mapping of split keys such as "
            f"{{validation_size: 0.15}}, got {defaults!r}"
        )
    if not isinstance(spec["splits"], list) or not spec["splits"]:
        raise ValueError(f"{where}: splits must be a non-empty list")
    try:
        splits = tuple(
            SplitDefinition.from_dict(item, defaults=defaults, base_dir=base_dir) for item in spec["splits"]
        )
    except ValueError as exc:  # it names the split ("split 'a'.data: ..."), not the file it is in
        if path is None:
            raise
        raise ValueError(f"{where}: {exc}") from None
    names = [s.name for s in splits]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{where}: split names {repeated} are used more than once")
    # present but empty (`models: {}`, or every entry commented out): refused, as `--models ""`
    # is; it ran the default (every installed model, each tuned), not a smaller plan
    for key, noun, default in (("models", "model", "every installed model"),
                               ("protocols", "protocol", "fixed-budget and tuned")):
        if key in spec and spec[key] in (None, {}, []):
            raise ValueError(f"{where}.{key}: empty, so it names no {noun}; name some, or leave the "
                             f"key out for the default ({default})")
    models = spec.get("models") or {}
    if not isinstance(models, dict) or not all(
        isinstance(k, str) and isinstance(v, (dict, type(None))) for k, v in models.items()
    ):
        raise ValueError(f"{where}.models: expected a mapping of model name -> parameters, got {models!r}")
    protocols = spec.get("protocols") or []
    if not isinstance(protocols, list) or not all(isinstance(p, str) for p in protocols):
        raise ValueError(f"{where}.protocols: expected a list of protocol names, got {protocols!r}")
    description = spec.get("description")  # an empty `description:` is YAML's null
    if description is not None and not isinstance(description, str):
        raise ValueError(f"{where}.description: expected text, got {description!r}")
    tuning = spec.get("tuning") or {}
    if not isinstance(tuning, dict):
        raise ValueError(f"{where}.tuning: expected a mapping such as {{n_trials: 20}}, got {tuning!r}")
    return Suite(
        name=spec["name"],
        description=(description or "").strip(),
        seeds=parse_seeds(spec["seeds"], f"{where}.seeds"),
        splits=splits,
        path=path,
        models={name: dict(params or {}) for name, params in models.items()},
        protocols=tuple(protocols),
        tuning=dict(tuning),
    )


def load_suite(name_or_path: str | os.PathLike, directory: str | os.PathLike | None = None) -> Suite:
    """Load a suite by name (from ``directory``) or from a ``.yaml`` path."""
    yaml = optional_module("yaml", "load_suite", extra="data", package="pyyaml")

    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        suites = available_suites(directory)
        if str(name_or_path) not in suites:
            raise KeyError(f"no suite {str(name_or_path)!r}; available: {sorted(suites)}")
        path = suites[str(name_or_path)]
    else:  # a path: "~/s.yaml" quoted (or from Python) is the user's home, as --results' is
        path = path.expanduser()
    if path.is_dir():
        raise FileNotFoundError(f"suite {path} is a folder, not a suite file")
    if not path.is_file():
        raise FileNotFoundError(f"suite file not found: {path}")
    with path.open(encoding="utf8") as fh:
        try:
            spec = yaml.load(fh, Loader=_unique_keys_loader(yaml))
        except yaml.YAMLError as exc:
            raise ValueError(f"suite {path}: not valid YAML ({' '.join(str(exc).split())})") from exc
        except UnicodeDecodeError as exc:  # its own words named no file
            raise ValueError(f"suite {path}: not UTF-8 text ({exc.reason})") from exc
    return suite_from_dict(spec, base_dir=path.resolve().parent, path=path)


def _unique_keys_loader(yaml: Any) -> type:
    """PyYAML's safe loader, refusing a key repeated in one mapping (``safe_load`` keeps the
    last one silently: a second ``split:`` in an entry replaced the first)."""

    class UniqueKeysLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict:
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: its keys may be overridden
                    continue
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # an unhashable key is the base class's error
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {key!r}", key_node.start_mark,
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeysLoader
