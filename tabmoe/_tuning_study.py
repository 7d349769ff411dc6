"""The Optuna study around :func:`tabmoe.tuning.tune`: its log level, an interrupted study,
the trials a stored one holds, and the best trial's parameters rebuilt from its search space."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ._stack import catch_warnings, free_in_forked_children, user_stacklevel

#: Quiet blocks of :func:`_optuna_quiet` running now (in any thread), and Optuna's verbosity
#: before the first of them: the verbosity is process-wide, so a tune started in a thread while
#: another ran read that one's WARNING as its "before" and, ending last, left it as the caller's
#: (two tunes in threads left a caller's INFO at WARNING). The last block to end restores it,
#: as ``tabmoe.nn._threads.torch_threads`` does for torch's threads.
_QUIET = {"running": 0, "callers": 0}
_QUIET_LOCK = threading.RLock()
free_in_forked_children(_QUIET_LOCK)


@contextlib.contextmanager
def _optuna_quiet(verbose: bool) -> Iterator[None]:
    """Optuna's verbosity at WARNING inside the block (no "A new study created" or per-trial
    lines), the caller's after it; with ``verbose``, left as it is."""
    import optuna

    if verbose:
        yield
        return
    with _QUIET_LOCK:
        if _QUIET["running"] == 0:
            _QUIET["callers"] = optuna.logging.get_verbosity()
        _QUIET["running"] += 1
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _QUIET["running"] -= 1
            if _QUIET["running"] == 0:
                optuna.logging.set_verbosity(_QUIET["callers"])


@contextlib.contextmanager
def _study_on_interrupt(study: Any, in_memory: bool) -> Iterator[None]:
    """A KeyboardInterrupt propagates carrying ``study`` (as its ``study`` attribute); for a
    study kept in memory only, a RuntimeWarning says where its trials are and how to keep them."""
    try:
        yield
    except KeyboardInterrupt as exc:
        exc.study = study  # type: ignore[attr-defined]
        if in_memory:
            import optuna

            done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
            warnings.warn(
                f"tune was interrupted with {len(done)} completed trial(s) in study "
                f"{study.study_name!r}, kept in memory (storage=None): the KeyboardInterrupt "
                "carries it (except KeyboardInterrupt as exc: exc.study). Give storage (a file "
                "path) and study_name to keep an interrupted study; the same call continues it.",
                RuntimeWarning,
                stacklevel=user_stacklevel(),  # the user's tune call, not tune's own line
            )
        raise



def _held_trials(storage: Any, study_name: str | None) -> int:
    """Number of trials (any state) of study ``study_name`` in ``storage``; 0 when there is none."""
    if storage is None or study_name is None:
        return 0
    try:
        study_id = storage.get_study_id_from_name(study_name)
    except KeyError:
        return 0
    return len(storage.get_all_trials(study_id, deepcopy=False))


def _rebuild_params(suggest: Callable[[Any], dict], best: Any, study_name: str) -> dict:
    """The estimator parameters of trial ``best`` as ``suggest`` builds them.

    Its stored parameters are Optuna's (objects among the choices are kept by their repr);
    replaying them through the search space gives back the original objects.
    """
    import optuna

    with catch_warnings():  # the trial already ran with these values (one thread at a time: tabmoe._stack)
        warnings.filterwarnings("ignore", message=".*out of the range of the distribution")
        replay = optuna.trial.FixedTrial(best.params, number=best.number)
        try:
            params = dict(suggest(replay))
            unused = sorted(set(best.params) - set(replay.params))
            if unused:
                raise ValueError(f"it suggests no {unused}")
        except (ValueError, KeyError) as exc:
            raise ValueError(
                f"search_space cannot rebuild the parameters {best.params} of the best trial "
                f"{best.number} of study {study_name!r} (was it run with another search space?): {exc}"
            ) from exc
    return params


def _queued_params(trial: Any) -> dict[str, Any]:
    """The parameters ``enqueue_trial`` fixed for ``trial`` (empty for a sampled one)."""
    frozen = next(t for t in trial.study.get_trials(deepcopy=False) if t.number == trial.number)
    return frozen.system_attrs.get("fixed_params", {})
