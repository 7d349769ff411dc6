"""The trainer's progress bar: tqdm's, without tqdm's monitor thread.

tqdm starts its monitor thread (which wakes every 10 s to redraw bars that went quiet) with
the first bar of a process, a disabled one too, and nothing stops it (tqdm issue 1564): a
process that called ``fit``, with ``verbose`` or without, kept the thread running after it.
The trainer's bar is redrawn at the end of every epoch (``set_postfix``): it needs none.
"""

from __future__ import annotations

from tqdm.auto import tqdm as _tqdm


class tqdm(_tqdm):
    """``tqdm.auto.tqdm`` that starts no monitor thread (``monitor_interval = 0``, tqdm's
    own switch, set on this class only)."""

    monitor_interval = 0
