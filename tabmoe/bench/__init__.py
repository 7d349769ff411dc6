"""Benchmark harness: the ``tabmoe-bench`` command line (:mod:`tabmoe.bench.cli`)."""
