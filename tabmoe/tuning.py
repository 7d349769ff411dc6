"""Tune any tabmoe model (or scikit-learn classifier) with Optuna on a validation set.

:func:`tune` is the benchmark's fair protocol and a tool on its own::

    from tabmoe.registry import get_model
    from tabmoe.tuning import tune

    result = tune(get_model("tabmoe"), X_train, y_train, validation=(X_val, y_val),
                  n_trials=30, timeout=600, random_state=0)
    result.best_params, result.best_score, result.best_estimator.predict(X_test)

Every trial builds the estimator from ``params`` (fixed) over the trial's suggestions, fits
it on (X, y) and scores it on the validation part (or by stratified ``cv`` folds) with one
metric of :mod:`tabmoe.metrics`. Selection uses that score only; nothing about test
or out-of-distribution data enters the study (``trial_attrs`` may *record* more, see there).

The budget is ``n_trials`` (the study's total, counting trials that earlier calls or other
workers already ran) and/or ``timeout`` (seconds of this call; a running trial finishes).
``storage`` makes the study durable and shareable: a file path (Optuna journal file, safe
for several processes on one machine or a shared file system) or a database URL
(``postgresql://user@host/db``, ``sqlite:///file.db``) that several machines use together.
``random_state`` seeds the estimators and the default sampler; a call that continues a stored
study seeds its sampler with ``random_state`` plus the number of trials the study holds, so it
proposes new configurations instead of the first ones again. Workers starting together on one
study should pass different ``sampler`` seeds (they would otherwise propose the same first
configurations).
"""

from __future__ import annotations

import numbers
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from ._frame import python_value
from ._optional import MissingExtraError, installed, optional_module
from ._stack import catch_warnings
from ._tuning_checks import (
    _check_available,
    _check_comparable,
    _check_entries,
    _check_metric_defined,
    _check_parameter_names,
    _check_rows_and_labels,
    _check_study,
    _check_validation,
    _fit_params,
    _fold_params,
    _folds,
    _is_int,
    _n_rows,
    _queued,
    _rows,
    _seed,
)
from ._tuning_study import (
    _held_trials,
    _optuna_quiet,
    _queued_params,
    _rebuild_params,
    _study_on_interrupt,
)
from .metrics import METRICS, score_estimator

#: Exceptions that fail one trial (a diverging or invalid configuration) without stopping
#: the study; anything else is a bug and propagates.
TRIAL_ERRORS: tuple[type[BaseException], ...] = (ValueError, RuntimeError, ArithmeticError)

SearchSpace = Callable[[Any], dict] | Mapping[str, Any]


@dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    best_params : dict
        Estimator parameters of the best trial (its suggestions, not ``params``).
    best_score : float
        Its validation score, in the metric's own units (log loss: lower is better).
    best_estimator : estimator or None
        Fitted on (X, y) with ``params`` + ``best_params``: the best trial's own model when
        it ran in this process, else a refit (``None`` with ``refit=False``).
    best_trial : int
        Number of the best trial in the study.
    study : optuna.study.Study
    metric : str
    fit_seconds : float or None
        Fit time of ``best_estimator`` (seconds).
    """

    best_params: dict
    best_score: float
    best_estimator: BaseEstimator | None
    best_trial: int
    study: Any
    metric: str
    fit_seconds: float | None


def database_url(url: str) -> str:
    """``url`` with a PostgreSQL driver SQLAlchemy can load.

    SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3, 1.4 and 2.0 as psycopg2: with
    only psycopg2 installed (tabmoe's ``bench`` extra) the URL is pinned to
    ``postgresql+psycopg2://``, with only psycopg 3 to ``postgresql+psycopg://`` (SQLAlchemy
    2.0 and later); with neither, a ``MissingExtraError`` (an ``ImportError``) names them.
    """
    if not url.startswith("postgresql://"):
        return url
    rest, psycopg, psycopg2 = url[len("postgresql://"):], installed("psycopg"), installed("psycopg2")
    if psycopg2 and not psycopg:
        return "postgresql+psycopg2://" + rest
    if psycopg and not psycopg2:
        return "postgresql+psycopg://" + rest
    if not psycopg:  # SQLAlchemy's "No module named 'psycopg'" named neither the other driver nor the extra
        raise MissingExtraError(
            "A postgresql:// storage needs a PostgreSQL driver, psycopg2 or psycopg: install the "
            "extra 'bench' (from the tabmoe repository: pip install '.[bench]'), or pip install psycopg2-binary."
        )
    return url


def open_storage(storage: Any) -> Any:
    """An Optuna storage from ``None`` (in memory), a storage object, a URL or a file path.

    ``"postgresql://..."``, ``"sqlite:///..."`` (anything with ``://``): an RDB storage with
    a 60 s heartbeat, so trials of a killed worker are failed instead of left running. A
    path: an Optuna journal file (created with its folder).
    """
    optuna = optional_module("optuna", "open_storage", extra="tuning")

    if storage is None or isinstance(storage, optuna.storages.BaseStorage):
        return storage
    if not isinstance(storage, (str, os.PathLike)):
        raise ValueError(f"storage must be a database URL, a file path or an Optuna storage, got {storage!r}")
    if "://" in str(storage):
        return _rdb_storage(database_url(str(storage)))
    path = Path(storage)
    path.parent.mkdir(parents=True, exist_ok=True)
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    return JournalStorage(JournalFileBackend(str(path)))


def _rdb_storage(url: str, attempts: int = 3) -> Any:
    """Optuna's RDB storage with a 60 s heartbeat (trials of a killed worker become FAIL).

    Workers starting together on an empty database race to create Optuna's tables; the
    loser's CREATE fails on a unique constraint, and a retry finds the tables there.
    """
    import optuna
    import sqlalchemy.exc

    for attempt in range(attempts):
        try:
            with catch_warnings():  # the heartbeat is "experimental" since Optuna 2.9
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                return optuna.storages.RDBStorage(url, heartbeat_interval=60, grace_period=180)
        except (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.ProgrammingError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def set_random_states(estimator: BaseEstimator, seed: int | None) -> BaseEstimator:
    """Set every ``random_state`` parameter of ``estimator`` (nested ones too) to ``seed``."""
    if seed is None:
        return estimator
    keys = [k for k in estimator.get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
    return estimator.set_params(**dict.fromkeys(keys, int(seed)))


def _factory(model: Any) -> tuple[Callable[..., BaseEstimator], SearchSpace | None]:
    """(params -> unfitted estimator, default search space) of a spec, estimator or factory."""
    if hasattr(model, "make") and hasattr(model, "suggest"):  # tabmoe.registry.ModelSpec
        # the model as a user constructs it (a spec-like object without make_default: make)
        return getattr(model, "make_default", model.make), model.suggest
    if isinstance(model, BaseEstimator):
        return (lambda **params: clone(model).set_params(**params)), None
    if callable(model):
        return model, None
    raise ValueError(
        f"model must be a tabmoe.registry.ModelSpec, an estimator or a factory, got {model!r}"
    )


def _suggest_one(trial: Any, name: str, choice: Any) -> Any:
    """One parameter: a list of choices (categorical) or an Optuna distribution."""
    import optuna.distributions as d

    if isinstance(choice, d.FloatDistribution):
        return trial.suggest_float(name, choice.low, choice.high, log=choice.log, step=choice.step)
    if isinstance(choice, d.IntDistribution):
        return trial.suggest_int(name, choice.low, choice.high, log=choice.log, step=choice.step)
    if isinstance(choice, d.CategoricalDistribution):
        choice = list(choice.choices)
    if isinstance(choice, (list, tuple)) and len(choice) > 0:
        # Optuna stores categorical choices by value: tuples and other objects by their repr.
        plain = [python_value(c) for c in choice]
        stored = [c if c is None or isinstance(c, (bool, int, float, str)) else repr(c) for c in plain]
        # Optuna finds a choice by ==: of 1 and 1.0 (or 1 and True) it stores and returns the
        # first. A choice equal to an earlier one of another type is stored by its repr too.
        stored = [repr(c) if any(type(e) is not type(c) and e == c for e in stored[:i]) else c
                  for i, c in enumerate(stored)]
        return choice[stored.index(trial.suggest_categorical(name, stored))]
    raise ValueError(
        f"search space entry {name!r}: expected a non-empty list of choices or an Optuna "
        f"distribution, got {choice!r}"
    )


def _choices(search_space: Any) -> Any:
    """A mapping search space with choices as scikit-learn's grids give them too
    (np.logspace(...), range(...)) turned into lists; a function is returned as it is."""
    if not isinstance(search_space, Mapping):
        return search_space
    return {
        name: list(c) if isinstance(c, range) or (isinstance(c, np.ndarray) and c.ndim == 1) else c
        for name, c in search_space.items()
    }


def _space(search_space: SearchSpace | None) -> Callable[[Any], dict]:
    if search_space is None:
        raise ValueError("search_space is required unless model is a tabmoe.registry.ModelSpec")
    if callable(search_space):
        return search_space
    if isinstance(search_space, Mapping):
        _check_entries(search_space)
        return lambda trial: {name: _suggest_one(trial, name, c) for name, c in search_space.items()}
    raise ValueError(f"search_space must be a suggest(trial) function or a mapping, got {search_space!r}")


def jsonable(value: Any) -> Any:
    """``value`` with tuples, numpy scalars and arrays turned into JSON types (others: repr)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def tune(
    model: Any,
    X: Any,
    y: Any,
    search_space: SearchSpace | None = None,
    *,
    validation: Any = None,
    cv: int | Any | None = None,
    metric: str = "accuracy",
    n_trials: int | None = 20,
    timeout: float | None = None,
    params: Mapping[str, Any] | None = None,
    fit_params: Mapping[str, Any] | None = None,
    storage: Any = None,
    study_name: str | None = None,
    random_state: int | np.random.RandomState | None = None,
    sampler: Any = None,
    trial_attrs: Callable[[BaseEstimator], Mapping[str, Any]] | None = None,
    enqueue: Sequence[Mapping[str, Any]] = (),
    refit: bool = True,
    verbose: bool = False,
) -> TuneResult:
    """Search hyperparameters of ``model`` on a validation set; return the best and the study.

    Parameters
    ----------
    model : tabmoe.registry.ModelSpec, estimator or callable
        A registry spec (``get_model("tabmoe")``: its ``make_default`` builds, from the
        model's defaults as a user constructs it, and its ``suggest`` is the default space),
        an estimator (cloned, then ``set_params``) or a factory
        ``(**params) -> estimator``.
    X, y : training rows (n_rows, n_features) and labels (n_rows,). Missing labels (NaN, None,
        NA), in ``y`` or ``y_val``, are refused before the study starts.
    search_space : callable or mapping, optional
        ``suggest(trial) -> dict`` of estimator parameters (Optuna define-by-run), or a
        mapping ``name -> list of choices | optuna distribution`` (a 1-d array or a
        ``range`` is a list of choices; numpy scalars are stored as Python ones, and objects,
        or a choice equal to an earlier one of another type (1.0 after 1), by their repr). Default:
        the spec's.
    validation : (X_val, y_val) or tabmoe.data.splits.SplitData
        Rows the trials are scored on (a split: its ``validation`` part). Give this or ``cv``.
        ``X_val`` and ``y_val`` must have as many rows as each other, and ``X_val`` the
        columns of ``X`` (same order) when both are DataFrames, as many columns otherwise, and
        ``y_val`` labels comparable with ``y``'s (not text against numbers). With ``metric="log_loss"``
        every label of ``y_val`` must be one of ``y``, with ``"roc_auc"`` two of ``y``'s
        labels must be present (each ``cv`` fold alike: its test rows against its training
        rows); this is checked before the study starts.
    cv : int >= 2, a scikit-learn splitter or an iterable of (train, test), optional
        Score by this many stratified folds of (X, y) instead (shuffled with
        ``random_state``), by the folds of a splitter with ``split`` and ``get_n_splits``
        (e.g. ``KFold(5)``; no ``groups`` are passed, so not a group splitter), or by given
        (train, test) row positions, as scikit-learn's searches take them (for groups:
        ``GroupKFold(5).split(X, y, groups)``); then the best is refit. The folds are drawn once: every trial is scored
        on the same ones.
    metric : {"accuracy", "balanced_accuracy", "log_loss", "roc_auc"}
    n_trials : int or None
        Total trials the study may hold (earlier calls and other workers count). The default,
        20, holds with a ``timeout`` too: ``n_trials=None`` gives a budget in seconds alone.
    timeout : float or None
        Seconds for this call; trials start only before it runs out. At least one of
        ``n_trials`` and ``timeout`` must be set.
    params : mapping, optional
        Fixed estimator parameters, applied over every trial's suggestions (a name the search
        space suggests too is warned about: the search cannot vary it; a ``suggest(trial)``
        function's names are those of one probe trial, so a conditional name can go
        unwarned). Each estimator
        gets its own copy of them and of the suggested values (``clone(value, safe=False)``,
        as scikit-learn's searches do), so an estimator given as a parameter is never fitted
        in place.
    fit_params : mapping, optional
        Keyword arguments of every ``fit`` (trials, ``cv`` folds, the refit), e.g.
        ``{"sample_weight": w}``. An array-like with one entry per row of ``X`` is indexed
        by each fold's training rows, as scikit-learn's searches index it; anything else
        is passed whole. A per-row ``sample_weight`` weights the ``cv`` fold scores too (each
        fold's test rows), as ``GridSearchCV`` weights them; ``validation``'s rows are unweighted.
    storage : None, str, path or optuna storage
        See :func:`open_storage`. ``None`` keeps the study in memory (an interrupted call's
        trials: see Raises).
    study_name : str, optional
        Name of the study in ``storage``; an existing study of that name is continued. It
        must have been tuned with the same ``metric`` and model (recorded as its user
        attributes ``"metric"`` and ``"model"``: a registry spec's name, an estimator's class
        name or a factory's ``__qualname__``); another one is refused before any trial runs, as is
        a search space whose distributions the study's trials cannot share or that cannot
        rebuild its best trial (see docs/tuning.md).
    random_state : None, int in [0, 2**32 - 1] or numpy.random.RandomState
        Seeds every estimator (all ``random_state`` parameters), the ``cv`` folds and the
        default sampler. A ``RandomState`` gives one integer seed drawn from it.
    sampler : optuna.samplers.BaseSampler, optional
        Default: ``TPESampler(seed=random_state + k)`` where ``k`` is the number of trials the
        study already holds (0 for a new one), so that a call continuing a stored study does
        not propose its first configurations again while the same sequence of calls stays
        reproducible. Unseeded when ``random_state`` is None.
    trial_attrs : callable, optional
        ``estimator -> {name: JSON value}`` recorded on each trial as user attributes, never
        used for selection (the harness records oracle OOD scores this way). When it raises
        one of ``TRIAL_ERRORS`` (ValueError, RuntimeError, ArithmeticError), the trial
        keeps its score without them (the error in its user attribute
        ``"trial_attrs_error"``, and a ``RuntimeWarning``).
    enqueue : sequence of mappings, optional
        Parameter sets the study tries first, in order (Optuna's ``enqueue_trial``), e.g. a
        known good setting, so that the search is scored against it. Keys are the names the
        space suggests (as in ``trial.params``), values must lie in it: a key it does not
        suggest or a value outside a list of choices fails that trial, recorded like any
        failure. A set the study already holds is not queued again; at most the remaining
        ``n_trials`` are queued. With several workers on one study, pass it in one of them.
    refit : bool
        Refit the best parameters when the best trial's model is not in this process.
    verbose : bool
        Keep Optuna's per-trial log lines.

    Returns
    -------
    TuneResult

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C (or a ``KeyboardInterrupt`` raised in a trial) stops the study and propagates,
        as in Optuna's ``Study.optimize``: the running trial is recorded as failed, the
        completed ones stay in the study, which the exception carries as its ``study``
        attribute (``except KeyboardInterrupt as exc: exc.study.best_params``: Optuna's
        names, as the search space suggests them, not the estimator's parameters). With
        ``storage=None`` that is their only copy (a ``RuntimeWarning`` says so); with a
        storage they are stored, and calling ``tune`` again with the same ``storage`` and
        ``study_name`` continues the study (the failed trial counts in ``n_trials``);
        ``storage=optuna.storages.InMemoryStorage()`` does so within one process.
    """
    optuna = optional_module("optuna", "tune", extra="tuning")

    if metric not in METRICS:
        raise ValueError(f"metric={metric!r} is not one of {sorted(METRICS)}")
    if n_trials is None and timeout is None:
        raise ValueError("give n_trials, timeout or both: the study needs a budget")
    if n_trials is not None:
        if not _is_int(n_trials):
            raise TypeError(f"n_trials must be a positive integer or None, got {n_trials!r}")
        if n_trials < 1:
            raise ValueError(f"n_trials must be a positive integer or None, got {n_trials!r}")
        n_trials = int(n_trials)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise TypeError(f"timeout must be positive seconds or None, got {timeout!r}")
        if not timeout > 0:
            raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
        timeout = float(timeout)
    seed = _seed(random_state)
    if sampler is not None and not isinstance(sampler, optuna.samplers.BaseSampler):
        raise TypeError(f"sampler must be an optuna.samplers.BaseSampler or None, got {sampler!r}")
    enqueue = [_queued(i, entry) for i, entry in enumerate(enqueue)]
    if (validation is None) == (cv is None):
        raise ValueError("give exactly one of validation=(X_val, y_val) (or a split) and cv=<folds>")
    _check_rows_and_labels(model, X, y)
    n_rows = _n_rows(X, "X")
    fit_params = _fit_params(fit_params, n_rows)
    folds = _folds(cv, y, seed) if cv is not None else None
    if hasattr(validation, "parts") and hasattr(validation, "features"):  # SplitData
        validation = (validation.features("validation"), validation.validation[validation.target])
    if validation is not None:
        _check_validation(validation, X)
        _check_comparable(y, validation[1], "validation's y_val", "y")
        _check_metric_defined(metric, y, validation[1], "validation's y_val", "y")
    # given (train, test) positions are named as such: their repr printed every fold's rows
    named = f"cv={cv!r}" if _is_int(cv) or hasattr(cv, "split") else "the cv folds given"
    for i, (train, test) in enumerate(folds or ()):
        _check_metric_defined(metric, _rows(y, train), _rows(y, test), f"the test rows of fold {i} of {named}", "its training rows")
    build, default_space = _factory(model)
    _check_available(model)
    space = _choices(search_space if search_space is not None else default_space)
    suggest = _space(space)
    fixed = dict(params or {})
    _check_parameter_names(model, build, space, fixed)
    greater = METRICS[metric]

    def make(suggested: Mapping[str, Any]) -> BaseEstimator:
        # Each estimator gets its own copies (as GridSearchCV does): a shared parameter object,
        # e.g. params={"clf": LogisticRegression()}, would be refit by every later trial.
        values = {name: clone(value, safe=False) for name, value in {**suggested, **fixed}.items()}
        return set_random_states(build(**values), seed)

    def fit_and_score(estimator: BaseEstimator) -> tuple[float, float]:
        start = time.perf_counter()
        estimator.fit(X, y, **fit_params)
        seconds = time.perf_counter() - start
        value = score_estimator(estimator, *validation)[metric]
        return seconds, value

    def cv_score(suggested: Mapping[str, Any]) -> float:
        values = []
        for i, (train, test) in enumerate(folds):
            fold = make(suggested).fit(_rows(X, train), _rows(y, train), **_fold_params(fit_params, n_rows, train))
            weight = _fold_params(fit_params, n_rows, test).get("sample_weight")  # scored as GridSearchCV does
            value = score_estimator(fold, _rows(X, test), _rows(y, test), weight if np.ndim(weight) else None)[metric]
            if value is None:
                raise ValueError(f"metric {metric!r} is undefined on the test rows of fold {i}")
            values.append(value)
        return float(np.mean(values))

    kept: dict[str, Any] = {}  # the best model fitted in this process: number, score, estimator

    def objective(trial: Any) -> float:
        try:
            return run_trial(trial)
        except TRIAL_ERRORS as exc:  # recorded, then Optuna marks the trial FAIL and goes on
            trial.set_user_attr("error", f"{type(exc).__name__}: {exc}")
            raise

    def run_trial(trial: Any) -> float:
        suggested = suggest(trial)
        unused = sorted(set(_queued_params(trial)) - set(trial.params)) if enqueue else []
        if unused:
            raise ValueError(
                f"enqueued parameter(s) {unused} are not in the search space (it suggests {sorted(trial.params)})"
            )
        trial.set_user_attr("params", jsonable(suggested))
        trial.set_user_attr("worker", f"{os.uname().nodename}:{os.getpid()}")
        if cv is not None:
            value, estimator, seconds = cv_score(suggested), None, None
        else:
            estimator = make(suggested)
            seconds, value = fit_and_score(estimator)
            trial.set_user_attr("fit_seconds", seconds)
        if value is None or not np.isfinite(value):
            raise ValueError(f"metric {metric!r} is undefined on the validation rows")
        if trial_attrs is not None:
            try:  # recorded only: failing the trial on them would select on what they score
                fitted = estimator if estimator is not None else make(suggested).fit(X, y, **fit_params)
                attrs = {key: jsonable(attr) for key, attr in trial_attrs(fitted).items()}
            except TRIAL_ERRORS as exc:
                trial.set_user_attr("trial_attrs_error", f"{type(exc).__name__}: {exc}")
                warnings.warn(f"trial {trial.number}: trial_attrs raised {type(exc).__name__}: {exc}; "
                              f"the trial keeps its score, without those attributes", RuntimeWarning, stacklevel=2)
            else:
                for key, attr in attrs.items():
                    trial.set_user_attr(key, attr)
        if estimator is not None and (
            not kept or (value > kept["score"] if greater else value < kept["score"])
        ):
            kept.update(number=trial.number, score=value, estimator=estimator,
                        params=dict(suggested), seconds=seconds)
        return float(value)

    storage = open_storage(storage)
    if sampler is None:
        # A fresh sampler with the same seed would replay the first configurations of a
        # continued study; offsetting by its trial count keeps reruns reproducible.
        held = _held_trials(storage, study_name)
        sampler = optuna.samplers.TPESampler(seed=None if seed is None else (seed + held) % 2**32)
    with _optuna_quiet(verbose):
        study = optuna.create_study(
            study_name=study_name,
            storage=storage,
            direction="maximize" if greater else "minimize",
            sampler=sampler,
            load_if_exists=True,
        )
        directions = optuna.study.StudyDirection
        _check_study(study, metric, directions.MAXIMIZE if greater else directions.MINIMIZE, model, suggest)
        # Queued (WAITING) trials are not spent budget: counting them would stop the study
        # once the queue alone reached n_trials.
        waiting = optuna.trial.TrialState.WAITING
        counted = tuple(state for state in optuna.trial.TrialState if state != waiting)
        already = len(study.get_trials(deepcopy=False, states=counted))
        if n_trials is None or already < n_trials:
            room = None if n_trials is None else n_trials - already
            for entry in enqueue:
                if room is not None and len(study.get_trials(deepcopy=False, states=(waiting,))) >= room:
                    break
                study.enqueue_trial(entry, skip_if_exists=True)
            stop = optuna.study.MaxTrialsCallback(n_trials, states=counted) if n_trials else None
            with _study_on_interrupt(study, in_memory=storage is None):
                study.optimize(
                    objective,
                    n_trials=room,
                    timeout=timeout,
                    catch=TRIAL_ERRORS,
                    callbacks=[stop] if stop else None,
                )
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if not complete:
        failed = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.FAIL,))
        pruned = len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.PRUNED,)))
        if failed:
            reason = "last failure: " + failed[-1].user_attrs.get("error", "unknown error")
        else:  # a search space may raise optuna.TrialPruned to skip a configuration
            reason = f"{pruned} trial(s) pruned (optuna.TrialPruned), none failed" if pruned else "no trial ran"
        raise RuntimeError(f"no trial of study {study.study_name!r} completed; {reason}")
    best = study.best_trial
    estimator, seconds = None, None
    if kept and kept["number"] == best.number:
        estimator, seconds, best_params = kept["estimator"], kept["seconds"], kept["params"]
    else:
        best_params = _rebuild_params(suggest, best, study.study_name)
    if estimator is None and refit:
        with _study_on_interrupt(study, in_memory=storage is None):
            estimator = make(best_params)
            start = time.perf_counter()
            estimator.fit(X, y, **fit_params)
            seconds = time.perf_counter() - start
    return TuneResult(
        best_params=best_params,
        best_score=float(best.value),
        best_estimator=estimator,
        best_trial=best.number,
        study=study,
        metric=metric,
        fit_seconds=seconds,
    )


__all__ = ["TRIAL_ERRORS", "TuneResult", "database_url", "jsonable", "open_storage", "set_random_states", "tune"]
