"""Benchmark harness: the ``tabmoe-bench`` command line (:mod:`tabmoe.bench.cli`)."""

from ._environment import limited_threads

__all__ = ["limited_threads"]
