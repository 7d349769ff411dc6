"""Benchmark harness: the ``tabmoe-bench`` command line (:mod:`tabmoe.bench.cli`)."""

from __future__ import annotations

from typing import Any

__all__ = ["limited_threads"]


def __getattr__(name: str) -> Any:
    # Lazy: ``tabmoe-bench --help`` must not import torch (tests/test_bench_cli.py).
    if name == "limited_threads":
        from ._environment import limited_threads

        return limited_threads
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
