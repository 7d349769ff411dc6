"""Argument checks of :func:`tabmoe.tuning.tune` (all run before its study starts) and its row helpers."""

from __future__ import annotations

import contextlib
import numbers
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ._frame import as_arrow_table, python_value
from ._stack import catch_warnings, user_stacklevel
from ._tuning_study import _optuna_quiet
from .metrics import _labels


def _is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or numpy), bools excluded."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _seed(random_state: Any) -> int | None:
    """``random_state`` (None, an int in [0, 2**32 - 1] or a RandomState) as an int seed or None."""
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if not _is_int(random_state):
        raise TypeError(
            f"random_state must be None, an integer or a numpy.random.RandomState, got {random_state!r}"
        )
    if not 0 <= random_state <= 2**32 - 1:
        raise ValueError(f"random_state must be in [0, 2**32 - 1], got {random_state!r}")
    return int(random_state)


def _n_rows(data: Any, name: str) -> int:
    """Number of rows of an array, DataFrame, Series or sequence; TypeError naming ``name`` else."""
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(data)
    except TypeError:
        raise TypeError(f"{name} must be array-like (rows first), got {type(data).__name__}") from None


def _check_rows_and_labels(model: Any, X: Any, y: Any) -> None:
    """ValueError unless ``X`` and ``y`` have as many rows and ``y`` holds labels every trial
    can fit and score (:func:`_check_labels`); a registry spec's models also refuse a
    regression target and a single class in ``fit``, so those are refused here too."""
    n_rows = _n_rows(X, "X")
    if (n_labels := _n_rows(y, "y")) != n_rows:
        raise ValueError(f"X and y must have the same number of rows, got {n_rows} and {n_labels}")
    labels = _check_labels(y, "y")
    if callable(getattr(model, "make_default", None)):  # a ModelSpec: its models' fit refuses these
        check_classification_targets(labels)
        if len(classes := np.unique(labels)) < 2:
            raise ValueError(f"Classifier can't train when only one class is present: y holds only {classes.tolist()}.")


def _check_labels(y: Any, name: str) -> np.ndarray:
    """``y`` as a 1-d array, as a classifier's ``fit`` reads it, or a ValueError before the
    study starts for labels that every trial would fail on alike (each failure logged, a
    stored study's budget spent on them): more than one column (the metrics refuse them) or
    missing labels (NaN, None, NA: every fit refuses them, a cv split sorting them raised a
    TypeError, the metrics of a ``y_val`` holding them a ValueError or, for None, a TypeError)."""
    try:
        _labels(y)
    except ValueError as exc:
        raise ValueError(f"{name} {str(exc).removeprefix('labels ')}") from None
    as_read = np.asarray(y, dtype=object) if isinstance(y, list) else y  # np.asarray(["a", nan]) holds "nan"
    missing = np.flatnonzero(np.asarray(pd.isna(column_or_1d(as_read)), dtype=bool))
    if len(missing):
        raise ValueError(
            f"{name} contains {len(missing)} missing label(s) (NaN, None or NA), e.g. at position(s) "
            f"{missing[:5].tolist()}: every trial would fail on them. Drop those rows or fill their labels."
        )
    return column_or_1d(y)


def _folds(cv: Any, y: Any, seed: int | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) row positions of ``cv``, drawn once so every trial uses the same folds."""
    if _is_int(cv):
        if cv < 2:
            raise ValueError(f"cv must be an integer >= 2 (number of folds) or a splitter, got {cv!r}")
        splitter = StratifiedKFold(int(cv), shuffle=True, random_state=seed)
    elif callable(getattr(cv, "split", None)) and callable(getattr(cv, "get_n_splits", None)):
        splitter = cv
    elif isinstance(cv, Iterable) and not isinstance(cv, (str, bytes, Mapping)):
        return _given_folds(cv, _n_rows(y, "y"))
    else:
        raise TypeError(
            f"cv must be an integer >= 2 (number of folds), a splitter with a split method or an "
            f"iterable of (train, test) row positions, got {cv!r}"
        )
    try:
        return list(splitter.split(np.zeros(_n_rows(y, "y")), np.asarray(y)))
    except ValueError as exc:  # e.g. more folds than the rows of a class
        raise ValueError(f"cv={cv!r} cannot split (X, y): {exc}") from exc


def _given_folds(cv: Iterable, n_rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``cv`` given as (train, test) row positions, as scikit-learn's searches take it (e.g.
    ``GroupKFold().split(X, y, groups)``, a generator, read once); each checked."""
    folds = []
    for k, fold in enumerate(cv):
        if not isinstance(fold, (tuple, list)) or len(fold) != 2:
            shape = f"{len(fold)} part(s)" if isinstance(fold, (tuple, list)) else type(fold).__name__
            raise ValueError(f"cv fold {k} must be a (train, test) pair of row positions, got {shape}")
        pair = []
        for part, rows in zip(("train", "test"), fold, strict=True):
            rows = np.asarray(rows)
            if rows.ndim != 1 or rows.dtype == bool or not np.issubdtype(rows.dtype, np.integer):
                raise ValueError(f"cv fold {k}'s {part} rows must be 1-d integer positions, got {rows.dtype} "
                                 f"of shape {rows.shape}")
            if not len(rows):
                raise ValueError(f"cv fold {k} has no {part} rows")
            if rows.min() < -n_rows or rows.max() >= n_rows:
                raise ValueError(f"cv fold {k}'s {part} rows must be positions in [0, {n_rows}) of y's rows, "
                                 f"got {rows.min()}..{rows.max()}")
            pair.append(rows % n_rows)
        folds.append((pair[0], pair[1]))
    if not folds:
        raise ValueError("cv gave no (train, test) fold")
    return folds


def _check_validation(validation: Any, X: Any) -> None:
    """ValueError/TypeError unless ``validation`` is (X_val, y_val) that a model fitted on X can score."""
    if not isinstance(validation, (tuple, list)) or len(validation) != 2:
        raise ValueError("validation must be (X_val, y_val) or a tabmoe.data.splits.SplitData")
    X_val, y_val = validation
    n_val = _n_rows(y_val, "validation's y_val")
    if n_val == 0:
        raise ValueError("validation has no rows: the split has no ID validation part")
    _check_labels(y_val, "validation's y_val")
    n_X_val = _n_rows(X_val, "validation's X_val")
    if n_X_val != n_val:
        raise ValueError(f"validation's X_val and y_val must have the same number of rows, got {n_X_val} and {n_val}")
    fitted, given = _column_names(X), _column_names(X_val)
    if fitted is not None and given is not None and given != fitted:
        missing = [c for c in fitted if c not in set(given)]
        extra = [c for c in given if c not in set(fitted)]
        detail = f"missing {missing}, unexpected {extra}" if missing or extra else "in another order"
        raise ValueError(f"validation's X_val must have the columns of X in the same order: {detail}")
    widths = [shape[1] if len(shape := getattr(data, "shape", ())) == 2 else None for data in (X_val, X)]
    if None not in widths and widths[0] != widths[1]:
        raise ValueError(f"validation's X_val must have as many columns as X, got {widths[0]} and {widths[1]}")


def _column_names(data: Any) -> list | None:
    """The column labels of a DataFrame or a pyarrow Table (whose ``columns`` are its
    data, unhashable: comparing them raised a TypeError); None for others."""
    if hasattr(data, "column_names") and hasattr(data, "num_columns"):  # a pyarrow Table
        return list(data.column_names)
    return list(data.columns) if hasattr(data, "columns") else None


def _check_metric_defined(metric: str, y_fit: Any, y_scored: Any, scored: str, fitted: str) -> None:
    """ValueError when a model fitted on labels ``y_fit`` cannot be scored by ``metric`` on ``y_scored``.

    Every trial would fail alike (log loss needs the model's classes to hold every label,
    ROC AUC two of them present), spending a stored study's budget on failures.
    """
    if metric not in ("log_loss", "roc_auc"):
        return
    classes = set(_labels(y_fit).tolist())
    labels = list(dict.fromkeys(_labels(y_scored).tolist()))
    if metric == "log_loss" and (unseen := [label for label in labels if label not in classes]):
        raise ValueError(f"metric='log_loss' is undefined on {scored}: label(s) {unseen} not in {fitted}")
    if metric == "roc_auc" and sum(label in classes for label in labels) < 2:
        raise ValueError(f"metric='roc_auc' is undefined on {scored}: fewer than two labels of {fitted}")


def _check_comparable(y_fit: Any, y_scored: Any, scored: str, fitted: str) -> None:
    """ValueError when labels ``y_scored`` cannot be compared with a model's classes drawn
    from ``y_fit``: numbers against text (``[0, 1]`` and ``["0", "1"]``). Every trial's
    balanced accuracy, which every metric's scoring computes, raised on them alike, each
    failure spending a stored study's budget. Labels scikit-learn refuses on their own (an
    object array of numbers, continuous values) are left to the trials, as before."""
    from sklearn.utils.multiclass import unique_labels

    fit, scored_labels = _labels(y_fit), _labels(y_scored)
    try:
        unique_labels(fit), unique_labels(scored_labels)
    except ValueError:  # labels scikit-learn cannot read on their own: left to the trials
        return
    try:
        unique_labels(fit, scored_labels)
    except ValueError as exc:
        raise ValueError(f"{scored} cannot be scored against the labels of {fitted}: {exc}") from None


def _rows(data: Any, index: np.ndarray) -> Any:
    """Rows ``index`` of a DataFrame / Series (by position), of another dataframe whose
    names scikit-learn reads (a pyarrow Table, a polars DataFrame: as a Table, its names
    kept), of a scipy sparse matrix (as CSR or CSC; ``np.asarray`` made it a 0-d object
    array, which cannot be indexed) or of an array."""
    from scipy import sparse

    if hasattr(data, "iloc"):
        return data.iloc[index]
    if sparse.issparse(data):
        return (data if data.format in ("csr", "csc") else data.tocsr())[index]
    if (table := as_arrow_table(data)) is not None:
        return table.take(index)
    return np.asarray(data)[index]


def _fit_params(fit_params: Any, n_rows: int) -> dict[str, Any]:
    """``fit_params`` as a dict of keyword arguments, or an error naming what is wrong before
    the study starts (a ``sample_weight`` of another length would fail every trial alike)."""
    if fit_params is None:
        return {}
    if not isinstance(fit_params, Mapping):
        raise TypeError(f"fit_params must be a mapping of fit's keyword arguments, got {type(fit_params).__name__}")
    bad = [key for key in fit_params if not isinstance(key, str)]
    if bad:
        raise TypeError(f"fit_params' keys must be fit's argument names (str), got {bad!r}")
    weight = fit_params.get("sample_weight")
    if weight is not None and np.ndim(weight) > 0 and not _per_row(weight, n_rows):  # a scalar is every row's
        raise ValueError(f"fit_params' sample_weight must have one entry per row of X ({n_rows}), "
                         f"got shape {np.shape(weight)}")
    return dict(fit_params)


def _fold_params(fit_params: dict[str, Any], n_rows: int, index: np.ndarray) -> dict[str, Any]:
    """``fit_params`` for the training rows ``index`` of a fold: an array-like with one entry
    per row of X (``sample_weight``) is indexed by them, as scikit-learn's searches do
    (``_check_method_params``); anything else (a scalar, an ``eval_set`` pair) goes whole."""
    return {key: _rows(value, index) if _per_row(value, n_rows) else value for key, value in fit_params.items()}


def _per_row(value: Any, n_rows: int) -> bool:
    """Whether ``value`` is an array-like (not a str or mapping) of ``n_rows`` entries."""
    if isinstance(value, str | bytes | Mapping):
        return False
    shape = getattr(value, "shape", None)
    if shape is not None:
        return len(shape) > 0 and shape[0] == n_rows
    return hasattr(value, "__len__") and len(value) == n_rows


def _check_available(model: Any) -> None:
    """ImportError naming the optional packages a registry spec needs that are not installed,
    before any trial: its first trial failed on the import (some models import at ``fit``)
    and stopped the study, leaving that failed trial in a stored study's budget."""
    missing = model.missing() if callable(getattr(model, "missing", None)) else []  # a ModelSpec
    if not missing:
        return
    raise ImportError(
        f"model {getattr(model, 'name', model)!r} needs the optional package(s) {missing}, not installed "
        f"(tabmoe.registry.available_models() lists the models that can be tuned)"
    )


def _model_name(model: Any) -> str:
    """What ``model`` is, as a stored study records it (the same in every process and version
    of its package): a registry spec's name, an estimator's class name or a factory's
    qualified name (a ``functools.partial`` or other callable object: its type's)."""
    from sklearn.base import BaseEstimator

    if hasattr(model, "make") and hasattr(model, "suggest"):  # tabmoe.registry.ModelSpec
        return f"tabmoe.registry:{getattr(model, 'name', type(model).__qualname__)}"
    if isinstance(model, BaseEstimator) or not hasattr(model, "__qualname__"):
        return type(model).__qualname__
    return model.__qualname__


def _check_study_model(study: Any, model: Any) -> None:
    """ValueError unless ``study`` (new or loaded) was tuned for ``model``; a new one records it.

    Another model's trials were mixed with its own: its budget spent on them, its sampler fed
    their parameters, and the best trial (maybe the other model's) rebuilt with this model.
    """
    name = _model_name(model)
    stored = study.user_attrs.get("model")
    if stored is not None and stored != name:
        raise ValueError(
            f"study {study.study_name!r} was tuned for model {stored!r}, not {name!r}: their trials "
            f"would be mixed; continue it with its model or give another study_name"
        )
    if stored is None:
        study.set_user_attr("model", name)


def _built_model_parameters(estimator: Any) -> set[str]:
    """The bare parameter names of ``estimator`` and of the estimators it nests: their
    ``get_params()`` and their classes' ``__init__`` signatures (CatBoost's ``get_params``
    lists only the parameters given, not ``depth``)."""
    import inspect

    nested = [v for v in estimator.get_params(deep=True).values() if hasattr(v, "get_params")]
    names: set[str] = set()
    for obj in (estimator, *nested):
        names |= {n.rsplit("__", 1)[-1] for n in obj.get_params(deep=False)}
        with contextlib.suppress(TypeError, ValueError):
            names |= {n for n, p in inspect.signature(type(obj).__init__).parameters.items()
                      if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names


def _check_parameter_names(model: Any, build: Any, space: Any, fixed: dict) -> None:
    """ValueError naming the search-space or ``params`` keys the model does not take, before
    any trial (a misspelt name failed every trial, and stored those failures in the study).

    A mapping space's names are its keys; a ``suggest(trial)`` function's, those of the
    parameters it returns on a throwaway trial (:func:`_probe_space`: every trial of a
    misspelt name failed, as for a mapping). An estimator's names are checked against its
    ``get_params(deep=True)``; a registry
    spec's or a factory's against the signature of what builds the model, and where that
    takes ``**kwargs``, a registry spec's against the parameters of the model its ``make``
    builds (bare names: ``C`` for ``estimator__C``; an alias such as XGBoost's ``eta`` is
    refused); a user's factory that takes ``**kwargs`` is left to its trials.
    """
    import inspect

    from sklearn.base import BaseEstimator

    if callable(space):  # a suggest(trial) function: the names of one suggestion
        suggested = (_probe_space(space) or (None, None))[1]
        in_space = {k for k in suggested if isinstance(k, str)} if isinstance(suggested, Mapping) else set()
    else:
        in_space = set(space) if isinstance(space, dict) else set()
    both = sorted(str(k) for k in in_space & set(fixed))
    if both:
        warnings.warn(
            f"params {both} are in the search space too: params apply over every trial's "
            "suggestions, so the search does not vary them and best_params' values for them "
            "were never fitted; pass a search_space without them to fix them, or leave them out "
            "of params to search them.",
            UserWarning, stacklevel=user_stacklevel(),
        )
    names = in_space | set(fixed)
    if not names:
        return
    if isinstance(model, BaseEstimator):
        known, owner = set(model.get_params(deep=True)), type(model).__name__
    else:
        target = getattr(model, "factory", build)  # a tabmoe.registry.ModelSpec's factory
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):  # no signature to read (some builtins)
            return
        known = {n for n, p in signature.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
            if not callable(getattr(model, "make", None)):  # a user's factory: left to its trials
                return
            # a registry spec whose builder takes any keyword (XGBoost's, LightGBM's): a
            # misspelt name was ignored or failed a trial; its model's parameters, bare or nested
            known |= _built_model_parameters(model.make())
        owner = getattr(target, "__qualname__", repr(target))
    unknown = sorted(names - known)
    if unknown:
        where = sorted({"the search space" if name in in_space else "params" for name in unknown})
        raise ValueError(
            f"{owner} has no parameter(s) {unknown} (in {' and '.join(where)}); its parameters: {sorted(known)}"
        )


def _check_study_metric(study: Any, metric: str, direction: Any) -> None:
    """ValueError unless ``study`` (new or loaded) was tuned for ``metric``; a new one records it.

    Optuna loads an existing study with its own direction: values of another metric would be
    mixed with its own and ranked in its direction (log losses maximised as accuracies).
    """
    stored = study.user_attrs.get("metric")
    if (stored is not None and stored != metric) or list(study.directions) != [direction]:
        tuned = (
            f"metric={stored!r}"
            if stored is not None
            else f"direction {[d.name for d in study.directions]}"
        )
        raise ValueError(
            f"study {study.study_name!r} was tuned with {tuned}, not metric={metric!r}: its scores "
            f"would be mixed; continue it with its metric or give another study_name"
        )
    if stored is None:
        study.set_user_attr("metric", metric)


def _check_entries(search_space: Mapping[str, Any]) -> None:
    """ValueError naming the first key that is not a name or entry that is no choice list or distribution."""
    import optuna.distributions as d

    for name, choice in search_space.items():
        if not isinstance(name, str):
            raise ValueError(f"search space keys must be parameter names, got {name!r}")
        if not (
            isinstance(choice, d.BaseDistribution) or (isinstance(choice, (list, tuple)) and choice)
        ):
            raise ValueError(
                f"search space entry {name!r}: expected a non-empty list of choices or an Optuna "
                f"distribution, got {choice!r}"
            )


def _queued(i: int, entry: Any) -> dict[str, Any]:
    """``enqueue[i]`` as plain Python values (a study's storage holds JSON)."""
    if not isinstance(entry, Mapping):
        raise ValueError(
            f"enqueue[{i}] must be a mapping of parameter names to values, got {entry!r}"
        )
    return {
        name: python_value(value) for name, value in entry.items()
    }


def _check_study(study: Any, metric: str, direction: Any, model: Any, suggest: Any) -> None:
    """The checks of a study that ``tune`` creates or continues (see each), before any trial."""
    _check_study_metric(study, metric, direction)
    _check_study_model(study, model)
    _check_study_space(study, suggest)
    _check_study_best(study, suggest)


def _check_study_best(study: Any, suggest: Any) -> None:
    """ValueError when the best trial a continued study holds is one the search space cannot
    rebuild (it suggests a parameter that trial lacks, or lacks one it has).

    ``tune`` returns the best trial's parameters as the space builds them: such a study ran
    every trial of the call, then raised on that one at the end (its models lost), unless a
    new trial happened to beat it. A later best is either this trial or a new one.
    """
    import optuna

    from ._tuning_study import _rebuild_params

    if not study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        return
    best = study.best_trial
    try:
        _rebuild_params(suggest, best, study.study_name)
    except ValueError as exc:
        raise ValueError(
            f"{str(exc).rstrip('.')}. No trial ran: continue the study with a search space that "
            f"suggests its best trial's parameters {sorted(best.params)}, or give another study_name"
        ) from None


def _check_study_space(study: Any, suggest: Any) -> None:
    """ValueError naming a parameter the search space suggests with a distribution the study's
    trials cannot share (another kind, log scale, or list of choices).

    Optuna refuses such a parameter in each trial ("Cannot set different distribution kind to
    the same parameter name", "CategoricalDistribution does not support dynamic value space"),
    so continuing the study would fail every trial and spend its budget on the failures. The
    space is read from one suggestion on a throwaway trial.
    """
    import optuna

    held: dict[str, Any] = {}
    for trial in study.get_trials(deepcopy=False):
        for name, distribution in trial.distributions.items():
            held.setdefault(name, distribution)
    if not held or (probed := _probe_space(suggest)) is None:
        return
    for name, new in probed[0].distributions.items():
        if name not in held:
            continue
        try:
            optuna.distributions.check_distribution_compatibility(held[name], new)
        except ValueError as exc:
            raise ValueError(
                f"study {study.study_name!r} holds trials whose search space gives {name!r} as "
                f"{held[name]}, not {new}: Optuna would fail every trial ({exc}); continue it with "
                f"its search space (widening a float or int range is allowed) or give another study_name"
            ) from None


def _probe_space(suggest: Any) -> tuple[Any, Any] | None:
    """(a throwaway trial, what ``suggest`` returned on it): one suggestion of the search
    space, drawn by a seeded random sampler in a study of its own (the study being tuned
    is not touched); None when the space raises there (its trials fail, saying why)."""
    import warnings

    import optuna

    try:
        # no "A new study created" line; the warning filters one thread at a time (tabmoe._stack)
        with _optuna_quiet(verbose=False), catch_warnings():
            warnings.simplefilter("ignore")
            probe = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
            return probe, suggest(probe)
    except Exception:  # noqa: BLE001 - a space failing here fails its trials, which say why
        return None
