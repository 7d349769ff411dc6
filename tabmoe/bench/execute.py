"""Run one :class:`~tabmoe.bench.plan.RunSpec` in the current process and return its record.

A record is one JSON-able dict (the row of the results table)::

    run_id, suite, split, model, protocol, tuned, seed, config, config_hash
    params                      estimator parameters used (paper defaults + fixed; tuned: the
                                model's defaults + tuned + fixed)
    validation, id_test, ood_test[, ood_validation]
                                {n, accuracy, balanced_accuracy, log_loss, roc_auc, bin_mse}
    search                      tuned runs: budget, trials, best trial and validation score
    adaptation                  unlabeled-target runs: whether fit got the unlabeled rows and
                                importance weights (their summary); ``adapted`` False: run as
                                in ``defaults``
    oracle                      tuned runs on splits with an ood_validation part: the OOD test
                                accuracy of the trial best on OOD validation. NOT a fair
                                result (it peeks at OOD data); never used for selection.
    fit_seconds, predict_seconds, tune_seconds, peak_rss_mb, peak_rss_scope
    n_rows, rows, source_digest, warnings, versions, git, host, cpu, accelerator, pid,
    threads, started_at, finished_at

``rows`` is a digest of the split's row positions (every part, before an adaptation halves
the OOD rows): records with equal digests were scored on the same rows. ``source_digest``
is a digest of a data file's content (None for OpenML, simulated and auto-mpg data):
``run`` tells a record made on an edited file by it, where ``rows`` and the config hash
(the file by name) stay equal. ``cpu`` names the CPU model: a torch model's fit is
bit-identical only on the same CPU kind. ``accelerator`` names the GPU (or other device) a
torch model trained on, None on the CPU.

``fit_seconds`` is the fit of the final model (for tuned runs: the best trial's fit; for
``paper`` runs of a model the paper tuned: the whole 5-fold grid search and its refit,
``tune_seconds`` None);
``predict_seconds`` the ``predict_proba`` calls on id_test and ood_test.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import time
import warnings
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from ..metrics import classification_scores
from ..registry import get_model
from ..tuning import jsonable, open_storage, set_random_states, tune
from ._environment import (
    accelerator,
    cpu_model,
    git_revision,
    limited_threads,
    peak_rss_mb,
    reset_peak_rss,
    versions,
)
from .adaptation import fit_adapted, split_adaptation
from .plan import BARE_PROTOCOLS, RunSpec

SCORED_PARTS = ("validation", "id_test", "ood_test", "ood_validation")
_MAX_WARNINGS = 5


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@contextlib.contextmanager
def _opened_storage(storage: str | None) -> Iterator[Any]:
    """:func:`open_storage` for one run; a database's connections closed at the end. An
    RDB storage's engine kept two pooled connections open until the garbage collector found
    it: a suite's tuned runs left dozens open at a time (29 on sqlite over 60 runs in one
    process; on a shared PostgreSQL server, connection slots)."""
    opened = open_storage(storage)
    try:
        yield opened
    finally:
        engine = getattr(opened, "engine", None)
        if engine is not None:
            opened.remove_session()
            engine.dispose()


class _InterruptedTrialLog(logging.Filter):
    """Drops Optuna's log of a trial a KeyboardInterrupt ended (its traceback, and the
    "Trial N failed with value None." line after it), so Ctrl-C in a tuned run reads as in
    an untuned one: the CLI's "Interrupted: ..." line alone. Other failed trials are logged."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped = False

    def filter(self, record: logging.LogRecord) -> bool:
        if self.dropped:
            self.dropped = False
            if "failed with value" in record.getMessage():
                return False
        exc = record.exc_info
        if exc and isinstance(exc[1], KeyboardInterrupt):
            self.dropped = True
            return False
        return True


@contextlib.contextmanager
def _quiet_interrupt() -> Iterator[None]:
    """:class:`_InterruptedTrialLog` on the logger Optuna logs a failed trial with, for one
    tuning. A logger's filters see each record once, before any handler: on the handlers, a
    filter shared between two of them had its state (the interrupted trial's line dropped,
    "failed with value" next) reset by the second, which let that line through."""
    # The logger of optuna.study._optimize, by name: the same object the module logs with.
    logger, dropper = logging.getLogger("optuna.study._optimize"), _InterruptedTrialLog()
    logger.addFilter(dropper)
    try:
        yield
    finally:
        logger.removeFilter(dropper)


def _delete_study(storage: Any, name: str) -> None:
    """Drop the study of an unfinished earlier attempt (finished runs are never re-executed)."""
    import optuna

    with contextlib.suppress(KeyError):
        optuna.delete_study(study_name=name, storage=storage)


def _part_scores(model: str, part: str, y: Any, proba: Any, classes: Any) -> dict[str, Any]:
    """:func:`classification_scores` of ``model`` on ``part``; a ValueError (NaN probabilities,
    a wrong shape) names both, which the run's one-line failure message otherwise lacks."""
    try:
        return classification_scores(y, proba, classes)
    except ValueError as exc:
        raise ValueError(f"{model} on part {part!r}: {exc}") from exc


def _oracle_attrs(model: str, parts: dict[str, tuple]) -> Any:
    """Per-trial recorder of OOD validation / OOD test accuracy (reporting only)."""

    def attrs(estimator: Any) -> dict[str, float]:
        out = {}
        for part in ("ood_validation", "ood_test"):
            X, y = parts[part]
            out[f"oracle_{part}_accuracy"] = _part_scores(
                model, part, y, estimator.predict_proba(X), estimator.classes_
            )["accuracy"]
        return out

    return attrs


def _oracle(study: Any) -> dict[str, Any] | None:
    """The trial an OOD-validation selector would pick, and its OOD test accuracy."""
    import optuna

    trials = [
        t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        if "oracle_ood_validation_accuracy" in t.user_attrs
    ]
    if not trials:
        return None
    best = max(trials, key=lambda t: (t.user_attrs["oracle_ood_validation_accuracy"], -t.number))
    return {
        "selected_on": "ood_validation",
        "trial": best.number,
        "ood_validation_accuracy": best.user_attrs["oracle_ood_validation_accuracy"],
        "ood_test_accuracy": best.user_attrs["oracle_ood_test_accuracy"],
    }


def _grid_params(estimator: Any) -> dict[str, Any]:
    """The grid search's chosen parameters (paper protocol), inner ``estimator__`` prefixes cut."""
    best = getattr(estimator, "best_params_", None) or {}
    return {key.rsplit("__", 1)[-1]: value for key, value in best.items()}


def _set_params(estimator: Any) -> dict[str, Any]:
    """The estimator's parameters (nested ones of a wrapped estimator by their own name),
    plain values only: what ``Model()`` amounted to in a ``defaults`` run."""
    plain = (str, int, float, bool, type(None))
    return {
        key.rsplit("__", 1)[-1]: value
        for key, value in estimator.get_params(deep=True).items()
        if isinstance(value, plain)
    }


def _thread_params(estimator: Any, threads: int) -> dict[str, Any]:
    """CatBoost's own thread pool ignores the OpenMP / BLAS limits of ``limited_threads``:
    its ``thread_count`` (default -1, every core) follows the run's ``threads`` instead."""
    found = {"": estimator, **estimator.get_params(deep=True)}
    return {
        f"{key}__thread_count" if key else "thread_count": threads
        for key, value in found.items()
        if type(value).__module__.split(".")[0] == "catboost"
    }


def _row_digest(parts: dict[str, Any]) -> str:
    """12 hex digits of SHA-1 over every part's name and row positions in the source table."""
    digest = hashlib.sha1()
    for name in sorted(parts):
        digest.update(f"{name}:{','.join(map(str, parts[name].index))};".encode())
    return digest.hexdigest()[:12]


def execute(spec: RunSpec) -> dict[str, Any]:
    """Fit (and tune) ``spec``'s model on its split and seed; score every part; the record."""
    started = _now()
    model = get_model(spec.model)
    fixed = dict(spec.fixed)
    with limited_threads(spec.threads), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scope = reset_peak_rss()
        source_digest = spec.split.data.digest()  # the file's content, read before it is loaded
        split = spec.split.make(spec.seed, openml_cache=spec.openml_cache, download=spec.download)
        parts = {
            name: (split.features(name), split.parts[name][split.target])
            for name in SCORED_PARTS
            if name in split.parts and len(split.parts[name])
        }
        X, y = split.features("train"), split.train[split.target]
        n_rows = {name: len(part) for name, part in split.parts.items()}
        rows = _row_digest(split.parts)
        X_adapt = None
        if spec.adapted:  # half the OOD test rows to fit without labels, the other half scored
            X_ood, y_ood = parts["ood_test"]
            adapt, test = split_adaptation(X_ood, y_ood, spec.seed)
            X_adapt = X_ood.iloc[adapt].reset_index(drop=True)
            parts["ood_test"] = (X_ood.iloc[test].reset_index(drop=True), y_ood.iloc[test])
            n_rows.update(ood_adaptation=len(adapt), ood_test=len(test))
        search = oracle = tune_seconds = adaptation = None
        params: dict[str, Any] = dict(model.paper_params if spec.protocol == "paper" else model.paper_defaults)
        threads = {
            key.rsplit("__", 1)[-1]: value
            for key, value in _thread_params(model.make(), spec.threads).items()
        }
        if spec.tuned:
            with _opened_storage(spec.study_storage) as storage, _quiet_interrupt():
                _delete_study(storage, spec.study_name)
                start = time.perf_counter()
                result = tune(
                    model, X, y,
                    validation=parts["validation"],
                    metric=spec.budget.metric, n_trials=spec.budget.n_trials, timeout=spec.budget.timeout,
                    params={**fixed, **threads}, storage=storage, study_name=spec.study_name, random_state=spec.seed,
                    trial_attrs=_oracle_attrs(spec.model, parts) if "ood_validation" in parts else None,
                )
                tune_seconds = time.perf_counter() - start
                trials = result.study.get_trials(deepcopy=False)
                oracle = _oracle(result.study)
            estimator, fit_seconds = result.best_estimator, result.fit_seconds
            params = _set_params(estimator)  # the defaults tune searched from, the best trial's
            # values and the fixed ones, as fitted (random_state included)
            search = {
                "metric": result.metric,
                "n_trials_budget": spec.budget.n_trials,
                "timeout_budget": spec.budget.timeout,
                "n_trials": len(trials),
                "n_complete": sum(t.state.name == "COMPLETE" for t in trials),
                "n_failed": sum(t.state.name == "FAIL" for t in trials),
                "best_trial": result.best_trial,
                "best_validation_score": result.best_score,
                "study_name": spec.study_name,
            }
        elif spec.protocol in BARE_PROTOCOLS:  # Model(), only random_state set
            estimator = set_random_states(model.factory(), spec.seed)
            estimator.set_params(**_thread_params(estimator, spec.threads))
            params = _set_params(estimator)
            start = time.perf_counter()
            if spec.adapted:
                adaptation = fit_adapted(estimator, X, y, X_adapt, spec.seed)
            else:
                estimator.fit(X, y)
            fit_seconds = time.perf_counter() - start
        else:
            build = model.make_paper if spec.protocol == "paper" else model.make
            estimator = set_random_states(build(**fixed, **threads), spec.seed)
            start = time.perf_counter()
            estimator.fit(X, y)
            fit_seconds = time.perf_counter() - start
            params.update(_grid_params(estimator))
        params.update(fixed)
        scores, predict_seconds = {}, 0.0
        for name, (X_part, y_part) in parts.items():
            start = time.perf_counter()
            proba = estimator.predict_proba(X_part)
            if name in ("id_test", "ood_test"):
                predict_seconds += time.perf_counter() - start
            scores[name] = _part_scores(spec.model, name, y_part, proba, estimator.classes_)
        peak = peak_rss_mb()
    messages = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    return jsonable({
        "run_id": spec.run_id,
        "suite": spec.suite,
        "split": spec.split.name,
        "model": spec.model,
        "protocol": spec.protocol,
        "tuned": spec.tuned,
        "seed": spec.seed,
        "config": spec.config(),
        "config_hash": spec.config_hash,
        "params": params,
        **{name: scores.get(name) for name in SCORED_PARTS},
        "search": search,
        "oracle": oracle,
        **({"adaptation": adaptation} if spec.adapted else {}),
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "tune_seconds": tune_seconds,
        "peak_rss_mb": peak,
        "peak_rss_scope": scope,
        "n_rows": n_rows,
        "rows": rows,
        "source_digest": source_digest,
        "table": spec.split.data.settings(),
        "warnings": messages[:_MAX_WARNINGS],
        "versions": versions(tuple(model.requires)),
        "git": git_revision(),
        "host": platform.node(),
        "cpu": cpu_model(),
        "accelerator": accelerator(estimator),
        "pid": os.getpid(),
        "threads": spec.threads,
        "started_at": started,
        "finished_at": _now(),
    })
