"""Where a warning should point: the user's line, not tabmoe's or scikit-learn's internals."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

_TABMOE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal_prefixes() -> tuple[str, ...]:
    prefixes = [_TABMOE, os.path.abspath(contextlib.__file__)]
    # Their wrappers sit between the user and tabmoe: scikit-learn's _fit_context and
    # set_output, torch's no_grad decorator.
    for name in ("sklearn", "torch"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            prefixes.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(prefixes)


def user_stacklevel() -> int:
    """``stacklevel`` for a ``warnings.warn`` in the calling function that makes the warning
    point at the first frame outside tabmoe, scikit-learn and torch (the user's call), however deep
    the call chain (``fit`` -> ``_fit_context`` -> ``start_fit`` -> ...)."""
    prefixes = _internal_prefixes()
    frame = sys._getframe(1)  # the function that will call warnings.warn: stacklevel 1
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(prefixes):
        frame = frame.f_back
        level += 1
    return level


#: Held by :func:`catch_warnings`: the warning filters and the way warnings are shown are
#: process-wide (before Python 3.14), and ``warnings.catch_warnings`` restores, at its end,
#: what they were at its start. Two such blocks in threads that overlap without nesting (fits
#: with ``eval_set`` in two threads) left the second's recording in place: every later warning
#: of the process, the user's too, went into a list no one read. tabmoe's blocks take turns.
_WARNINGS_LOCK = threading.RLock()


def free_in_forked_children(lock: Any) -> None:
    """``lock`` (an RLock) free in a child process forked while another thread held it: that
    thread does not exist in the child, which waited for it forever (a ``multiprocessing``
    "fork" worker's fit, while a thread of the parent fitted, hung). Held by the forking
    thread itself, it stays held, to be released as usual. For tabmoe's process-wide locks
    (this module's ``_WARNINGS_LOCK``, the trainer's ``_TORCH_STATE_LOCK``)."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: None if lock._is_owned() else lock._at_fork_reinit())


free_in_forked_children(_WARNINGS_LOCK)


@contextlib.contextmanager
def catch_warnings(**kwargs) -> Iterator[list | None]:
    """``warnings.catch_warnings(**kwargs)``, one thread at a time (``_WARNINGS_LOCK``)."""
    with _WARNINGS_LOCK, warnings.catch_warnings(**kwargs) as caught:
        yield caught


def named_error(exc: BaseException, what: str) -> BaseException:
    """``exc``, raised reading ``what`` as ``X``, with a message that names ``what``: a plain
    ValueError or TypeError whose message does not name it already starts ``"{what}: "``, or
    with ``what`` in place of its leading "Input X" ("Input X contains infinity in column
    'b'" was about X_unlabeled, while X had none). Any other exception comes back as it is."""
    message = str(exc)
    if type(exc) not in (ValueError, TypeError) or what in message:
        return exc
    if message.startswith("Input X "):
        named = type(exc)(f"{what} {message[len('Input X '):]}")
    else:
        named = type(exc)(f"{what}: {message}")
    # only the message changes: the notes and where it was raised stay (and, raised by
    # errors_about, the cause: pandas' own error), as they are on X's error
    if hasattr(exc, "__notes__"):
        named.__notes__ = list(exc.__notes__)
    return named.with_traceback(exc.__traceback__)


@contextlib.contextmanager
def errors_about(what: str) -> Iterator[None]:
    """Raise a ValueError or TypeError of the block (which reads ``what`` as ``X``) naming
    ``what`` (:func:`named_error`)."""
    try:
        yield
    except (TypeError, ValueError) as exc:
        named = named_error(exc, what)
        if named is exc:
            raise
        raise named from exc.__cause__  # exc's own cause, not exc (the same error, renamed)


@contextlib.contextmanager
def warnings_about(what: str) -> Iterator[None]:
    """Re-issue the warnings raised inside the block, also when it raises, naming ``what`` at
    their end ("Column 'a': ... not seen during fit" about eval_set's rows read as ``X``'s),
    at the place they pointed to. At the end, so that a filter on the message's start still
    matches it. A ValueError or TypeError of the block names ``what`` too (:func:`named_error`)."""
    try:
        with catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with errors_about(what):
                yield
    finally:
        for w in caught:
            warnings.warn_explicit(f"{w.message} (In {what}.)", w.category, w.filename, w.lineno)
