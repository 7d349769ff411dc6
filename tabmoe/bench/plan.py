"""What a benchmark run is: one model on one split and seed under one protocol.

``plan_runs(suite, ...)`` expands a suite into the list of :class:`RunSpec` (models x splits
x seeds x protocols), checking every name against the model registry and the suite, so that
bad input fails before any work starts.

Protocols (the ``protocol`` of a run; ``tuned`` in results is True for ``tuned``):

* ``defaults``         — every model exactly as a user constructs it: the registry's factory
  with no arguments (``TabularMoEClassifier()``, ``reference.catboost()``, ...), only
  ``random_state`` set; the suite's ``models:`` parameters are NOT applied;
* ``fixed-budget``     — the model's paper defaults plus the suite's fixed parameters (on
  openml-ood: the deep models' shared training budget), no search. Called ``untuned``
  before; ``untuned`` is still accepted as an alias (:data:`PROTOCOL_ALIASES`);
* ``tuned``            — Optuna on the split's ID validation part (:func:`tabmoe.tuning.tune`),
  the same budget (:class:`Budget`) for every model, the registry's search spaces searched
  from each model's defaults (``ModelSpec.make_default``, as in ``defaults``), the suite's
  fixed parameters kept; needs ``validation_size > 0``;
* ``unlabeled-target`` — unsupervised domain adaptation: the split's OOD test rows are
  halved (seeded, stratified by label); ``fit`` gets the adaptation half WITHOUT labels and
  the other half is scored. Models built as in ``defaults``; what each does with the rows is
  :func:`tabmoe.bench.adaptation.fit_adapted` (unlabeled rows in fit, importance weights);
* ``paper``            — the paper's own protocol (``ModelSpec.make_paper``): paper
  defaults, and the authors' 5-fold grid search on the training rows for the models they
  tuned that way.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..data._spec import MAX_SEED
from ..data.splits import SplitDefinition
from ..metrics import METRICS
from ..registry import MODELS, get_model
from ..tuning import jsonable
from .adaptation import adaptation_config
from .suites import Suite

PROTOCOLS: dict[str, str] = {
    "defaults": "every model exactly as a user constructs it (`Model()`, only random_state set; "
    "no suite parameters)",
    "fixed-budget": "paper defaults + the suite's fixed parameters, no search",
    "tuned": "Optuna on the ID validation part, the same budget for every model",
    "unlabeled-target": "as `defaults`, plus half of each split's OOD test rows (seeded, stratified) "
    "given to fit without labels, the other half scored: unlabeled rows in fit where the model takes "
    "them, cross-fitted domain-classifier importance weights where it takes sample_weight",
    "paper": "the paper's protocol: paper defaults, and the authors' 5-fold grid search where they had one",
}
#: Old protocol names still accepted on input (command line, suite files, old records).
PROTOCOL_ALIASES: dict[str, str] = {"untuned": "fixed-budget"}
DEFAULT_PROTOCOLS = ("fixed-budget", "tuned")
#: Protocols whose models are built with no suite parameters (``Model()``).
BARE_PROTOCOLS = ("defaults", "unlabeled-target")
_BUDGET_KEYS = {"n_trials", "timeout", "metric"}


@dataclass(frozen=True)
class Budget:
    """The tuning budget of every tuned run: trials and/or seconds, and the selection metric."""

    n_trials: int | None = 20
    timeout: float | None = None
    metric: str = "accuracy"

    def __post_init__(self) -> None:
        _check_budget(self.n_trials, self.timeout, self.metric, "tuning")
        if isinstance(self.timeout, float) and self.timeout.is_integer():
            # one budget, one config hash: `--timeout 60` (click gives 60.0) hashed apart from the
            # suite's `timeout: 60`, so every tuned record of the same budget read as stale
            object.__setattr__(self, "timeout", int(self.timeout))

    @classmethod
    def from_dict(cls, spec: dict[str, Any], where: str = "tuning") -> Budget:
        """The budget of a suite's ``tuning:`` mapping; errors start with ``where`` (the
        suite file's ``tuning`` entry, :meth:`of_suite`)."""
        unknown = sorted(set(spec) - _BUDGET_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; allowed are {sorted(_BUDGET_KEYS)}")
        _check_budget(**{**{f.name: f.default for f in fields(cls)}, **spec}, where=where)
        return cls(**spec)

    @classmethod
    def of_suite(cls, suite: Suite, **given: Any) -> Budget:
        """``suite``'s budget with the values ``given`` that are not None (the command line's
        ``--trials``, ``--timeout``, ``--metric``) over its own; errors name the suite file."""
        spec = {**suite.tuning, **{key: value for key, value in given.items() if value is not None}}
        return cls.from_dict(spec, f"{suite_where(suite)}.tuning")


def _check_budget(n_trials: Any, timeout: Any, metric: Any, where: str) -> None:
    """ValueError naming the bad value of a budget, its key prefixed by ``where``."""
    if n_trials is not None and (isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1):
        raise ValueError(f"{where}.n_trials must be a positive integer, got {n_trials!r}")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not 0 < timeout < math.inf
    ):  # a quoted "60" in YAML: '>' not supported between 'str' and 'int'; inf hashed as
        # Infinity but was stored as null, and nan passed click's range
        raise ValueError(
            f"{where}.timeout (--timeout) must be positive, finite seconds, got {timeout!r}; "
            "for no time limit leave it out and give n_trials"
        )
    if n_trials is None and timeout is None:
        raise ValueError(f"{where}: give n_trials, timeout or both")
    if not isinstance(metric, str) or metric not in METRICS:  # [accuracy]: unhashable
        raise ValueError(f"{where}.metric {metric!r} is not one of {sorted(METRICS)}")


def suite_where(suite: Suite) -> str:
    """How an error names ``suite``: ``suite <its file>``, or ``suite '<name>'`` without one."""
    return f"suite {suite.path}" if suite.path is not None else f"suite {suite.name!r}"


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to run one (model, split, seed, protocol); picklable."""

    suite: str
    split: SplitDefinition
    model: str
    protocol: str
    seed: int
    fixed: tuple[tuple[str, Any], ...] = ()
    budget: Budget = Budget()
    openml_cache: str | None = None
    threads: int = 1
    study_storage: str | None = None  # database URL or journal file path
    download: bool = False  # fetch OpenML data the cache lacks: how data is got, not hashed

    @property
    def run_id(self) -> str:
        """``suite/split/model/protocol/seed<k>``: the key of the run's result."""
        return f"{self.suite}/{self.split.name}/{self.model}/{self.protocol}/seed{self.seed}"

    @property
    def old_run_ids(self) -> list[str]:
        """The run ids the same run had under the protocol's old names (``untuned``)."""
        return [
            f"{self.suite}/{self.split.name}/{self.model}/{old}/seed{self.seed}"
            for old, new in PROTOCOL_ALIASES.items() if new == self.protocol
        ]

    @property
    def study_name(self) -> str:
        return self.run_id

    @property
    def tuned(self) -> bool:
        return self.protocol == "tuned"

    @property
    def adapted(self) -> bool:
        return self.protocol == "unlabeled-target"

    def config(self) -> dict[str, Any]:
        """What determines the result besides code and seed (stored with it, hashed)."""
        config = {
            "protocol": self.protocol,
            "fixed": jsonable(dict(self.fixed)),
            "budget": jsonable(vars(self.budget)) if self.tuned else None,
            "split": split_config(self.split),
        }
        if self.adapted:  # absent elsewhere: the hashes of the other protocols unchanged
            config["adaptation"] = adaptation_config()
        return config

    @property
    def config_hash(self) -> str:
        return config_hash(self.config())


def config_hash(config: Mapping[str, Any]) -> str:
    """A run's configuration hash (:attr:`RunSpec.config_hash`; ``rename-protocol`` recomputes
    it for a renamed record): the first 12 hex digits of the SHA-1 of its sorted JSON."""
    return hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]


def current_run_id(run_id: str) -> str:
    """``run_id`` with its protocol under the current name (``.../untuned/seed0`` ->
    ``.../fixed-budget/seed0``): the run a record under an old name counts as."""
    parts = run_id.split("/")
    if len(parts) == 5:
        parts[3] = PROTOCOL_ALIASES.get(parts[3], parts[3])
    return "/".join(parts)


def current_config_hash(
    suite: Suite, record: Mapping[str, Any], budget: Budget | None = None
) -> str | None:
    """The config hash ``run`` gives the run of ``record`` under ``suite`` as it is now (its
    split definition, fixed parameters and tuning budget: ``budget``, else the suite's), to
    tell a record made under an older configuration; None where the suite no longer defines the split (the report's NOT
    IN THE SUITE note) or the record's protocol is not a current name (an old name's hash was
    made with that name)."""
    protocol, model = record.get("protocol"), record.get("model")
    names = {s.name for s in suite.splits}
    if protocol not in PROTOCOLS or record.get("split") not in names or not isinstance(model, str):
        return None
    fixed = () if protocol in BARE_PROTOCOLS else tuple(sorted(suite.models.get(model, {}).items()))
    spec = RunSpec(
        suite=suite.name,
        split=suite.split(record["split"]),
        model=model,
        protocol=protocol,
        seed=record.get("seed", 0),
        fixed=fixed,
        budget=budget or Budget.of_suite(suite),
    )
    table = record.get("table")  # outside the hash (committed hashes predate it), recorded since
    if table is not None and table != spec.split.data.settings():
        return f"{spec.config_hash} ({spec.split.data.settings()}, not {table})"  # no record's hash
    return spec.config_hash


def split_config(split: SplitDefinition) -> dict[str, Any]:
    """The split's definition without machine-specific paths (files by name)."""
    config = {
        "data": split.data.describe(),
        "rule": repr(split.rule),
        "keep_domain": split.keep_domain,
        "sizes": [split.validation_size, split.id_test_size, split.ood_validation_size],
    }
    if split.max_id_rows is not None or split.max_ood_rows is not None:  # absent: hashes of uncapped runs unchanged
        config["max_rows"] = [split.max_id_rows, split.max_ood_rows]
    if split.keep_domain:  # runs made before the kept column reached the model are stale
        config["domain_is_feature"] = True
    return config


def canonical_protocols(names: list[str]) -> list[str]:
    """``names`` with aliases replaced (``untuned`` -> ``fixed-budget``), duplicates dropped;
    ValueError naming unknown ones, TypeError naming one that is not a string."""
    if not_names := [n for n in names if not isinstance(n, str)]:
        raise TypeError(
            f"protocol names must be strings, one of {list(PROTOCOLS)}; got {not_names!r}"
        )
    out = [PROTOCOL_ALIASES.get(name, name) for name in names]
    bad = [p for p in out if p not in PROTOCOLS]
    if bad:
        raise ValueError(f"unknown protocol(s) {bad}; protocols are {list(PROTOCOLS)}")
    return list(dict.fromkeys(out))


def check_models(names: list[str]) -> None:
    """ValueError naming unknown models (with the known ones) or missing optional packages;
    TypeError naming a name that is not a string."""
    if not_names := [n for n in names if not isinstance(n, str)]:
        raise TypeError(f"model names must be strings, one of {list(MODELS)}; got {not_names!r}")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; known models: {list(MODELS)}")
    missing = [n for n in names if not get_model(n).available()]
    if missing:
        needs = "; ".join(f"{n}: {get_model(n).install_hint()}" for n in missing)
        raise ValueError(f"model(s) {missing} need packages that are not installed ({needs})")


def _check_fixed_params(suite: Suite, models: list[str]) -> None:
    """ValueError naming the suite, model and parameter when a model's ``models:`` entry does
    not build (a misspelt or foreign parameter name) or holds a value its estimator refuses
    (``C: "abc"``, scikit-learn's parameter constraints, which ``fit`` checks): before any
    run, where it failed every run of that model, naming no suite file."""
    for model in models:
        fixed = suite.models.get(model)
        if not fixed:
            continue
        try:
            check_params(get_model(model).make(**fixed))
        except (TypeError, ValueError) as exc:  # InvalidParameterError is both
            hint = next((f" (YAML reads {value!r} as text: write a number unquoted, 1e-3 as 1.0e-3)"
                         for key, value in fixed.items() if f"'{key}' parameter" in str(exc)
                         and isinstance(value, str) and _is_number(value)), "")
            raise ValueError(f"{suite_where(suite)}.models.{model}: {exc}{hint}") from None


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def check_params(estimator: Any) -> None:
    """Check the parameters of ``estimator`` and of the estimators among them (a baseline's
    wrapped ``estimator``) against their scikit-learn ``_parameter_constraints`` without
    fitting (``InvalidParameterError``, naming the parameter, as ``fit`` raises it). An
    estimator without constraints (XGBoost, CatBoost, LightGBM) is not checked."""
    from sklearn import get_config

    if get_config().get("skip_parameter_validation"):  # fit would not check them either
        return
    if isinstance(getattr(estimator, "_parameter_constraints", None), dict):
        estimator._validate_params()
    for value in estimator.get_params(deep=False).values():
        if hasattr(value, "get_params") and not isinstance(value, type):
            check_params(value)


def plan_runs(
    suite: Suite,
    *,
    models: Sequence[str] | None = None,
    splits: Sequence[str] | None = None,
    seeds: Iterable[int] | None = None,
    protocols: Sequence[str] | None = None,
    budget: Budget | None = None,
    openml_cache: str | os.PathLike | None = None,
    threads: int = 1,
    study_storage: str | None = None,
    download: bool = False,
) -> list[RunSpec]:
    """The runs of ``suite`` (subsets by name; ``None``: the suite's defaults), in a stable order.

    Defaults: the suite's ``models`` (else every installed model), every split, each split's
    seeds, the suite's ``protocols`` (else fixed-budget + tuned) and ``tuning`` budget.
    ``download`` lets each run fetch OpenML data the cache lacks; it is no part of a run's
    config, hash or record (how the data is obtained, not what is run).
    """
    for name, given in (("models", models), ("splits", splits), ("protocols", protocols)):
        if isinstance(given, str):  # list("tabmoe") would be six model names
            raise TypeError(f"plan_runs' {name} must be a list of names, got the string {given!r}")
    if isinstance(seeds, str) or (
        seeds is not None
        and not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in seeds)
    ):
        raise TypeError(f"plan_runs' seeds must be a list of integers, got {seeds!r}")
    # duplicates dropped (as for protocols): a name given twice planned its runs twice, each
    # executed and saved over the other
    seeds = None if seeds is None else list(dict.fromkeys(int(s) for s in seeds))
    fixed_by_model = suite.models
    models = list(models) if models else list(fixed_by_model) or [n for n, s in MODELS.items() if s.available()]
    check_models(models)
    models = list(dict.fromkeys(models))
    for model in models:  # else the record states the suite's value, not the seed it ran with
        seeded = [k for k in fixed_by_model.get(model, {}) if k == "random_state" or k.endswith("__random_state")]
        if seeded:
            raise ValueError(
                f"{suite_where(suite)}.models.{model}: {seeded} cannot be fixed; every random_state "
                "is the run's seed (the suite's seeds, or --seeds)"
            )
    protocols = canonical_protocols(
        list(protocols) if protocols else list(suite.protocols) or list(DEFAULT_PROTOCOLS)
    )
    if any(p not in BARE_PROTOCOLS for p in protocols):
        _check_fixed_params(suite, models)
    definitions = [suite.split(name) for name in splits] if splits else list(suite.splits)
    definitions = list({d.name: d for d in definitions}.values())
    sourceless = [d.name for d in definitions if d.data is None]
    if sourceless:  # else "'NoneType' object has no attribute 'describe'" at the first run's config
        raise ValueError(
            f"split(s) {sourceless} of {suite_where(suite)} have no data source (data=None), which "
            "a run loads its table from; give each a data source"
        )
    if budget is None:
        budget = Budget.of_suite(suite)
    if "tuned" in protocols:
        blind = [d.name for d in definitions if d.validation_size == 0]
        if blind:
            raise ValueError(
                f"split(s) {blind} have no ID validation part (validation_size 0), which the "
                "tuned protocol selects on; run them with --protocol fixed-budget, defaults or paper"
            )
    cache = str(openml_cache) if openml_cache is not None else None
    runs = []
    for definition in definitions:
        for seed in seeds if seeds else suite.seeds_for(definition):
            for model in models:
                suite_fixed = tuple(sorted(fixed_by_model.get(model, {}).items()))
                for protocol in protocols:
                    fixed = () if protocol in BARE_PROTOCOLS else suite_fixed
                    runs.append(RunSpec(
                        suite=suite.name, split=definition, model=model, protocol=protocol,
                        seed=int(seed), fixed=fixed, budget=budget, openml_cache=cache,
                        threads=threads, study_storage=study_storage, download=bool(download),
                    ))
    return runs


def parse_seed_list(text: str | None) -> list[int] | None:
    """``"0,1,5-7"`` -> [0, 1, 5, 6, 7] (ValueError naming the bad piece)."""
    if text is None:
        return None
    seeds: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        if piece.startswith("-"):  # else read as a range with an empty start
            raise ValueError(f"--seeds: {piece!r} is negative; seeds must be in [0, 2**32)")
        low, dash, high = piece.partition("-")
        try:
            first, last = (int(low), int(high)) if dash else (int(piece), int(piece))
        except ValueError:
            raise ValueError(f"--seeds: {piece!r} is not an integer or a range like 0-4") from None
        if last < first:
            raise ValueError(f"--seeds: {piece!r} is an empty range (its start is above its end)")
        if last > MAX_SEED:  # checked before the range is built: 0-99999999999 exhausted memory
            raise ValueError(
                f"--seeds: {piece!r} goes above {MAX_SEED}; seeds must be in [0, 2**32)"
            )
        seeds += range(first, last + 1)
    if not seeds:
        raise ValueError("--seeds: no seeds given")
    return list(dict.fromkeys(seeds))
