"""Where a warning should point: the user's line, not tabmoe's or scikit-learn's internals."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator

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


@contextlib.contextmanager
def warnings_about(what: str) -> Iterator[None]:
    """Re-issue the warnings raised inside the block, also when it raises, naming ``what`` at
    their end ("Column 'a': ... not seen during fit" about eval_set's rows read as ``X``'s),
    at the place they pointed to. At the end, so that a filter on the message's start still
    matches it."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        for w in caught:
            warnings.warn_explicit(f"{w.message} (In {what}.)", w.category, w.filename, w.lineno)
