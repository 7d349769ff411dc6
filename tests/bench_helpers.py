"""Tiny benchmark suites on the shipped car-smoke table, for the harness tests."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import yaml

from tabmoe.suites import load_suite

CAR = load_suite("smoke").splits[0].data.file


def tiny_suite(
    directory: Path,
    *,
    name: str = "tiny",
    models: dict | None = None,
    seeds: tuple[int, ...] = (0,),
    protocols: tuple[str, ...] = ("untuned",),
    n_trials: int = 1,
    splits: tuple[str, ...] = ("price",),
    validation_size: float = 0.15,
    ood_validation_size: float = 0.0,
) -> Path:
    """Write ``<directory>/<name>.yaml``: car-smoke splits, quick models; return its path."""
    rules = {
        "price": {"by": "values", "column": "buying", "ood_values": ["vhigh"]},
        "safety": {"by": "values", "column": "safety", "ood_values": ["low"]},
    }
    spec = {
        "name": name,
        "description": "harness test suite",
        "seeds": list(seeds),
        "defaults": {
            "validation_size": validation_size,
            "id_test_size": 0.15,
            "ood_validation_size": ood_validation_size,
        },
        "splits": [
            {"name": s, "rationale": "test", "data": {"file": CAR, "target": "class"}, "split": rules[s]}
            for s in splits
        ],
        "models": models if models is not None else {"logistic_regression": {}},
        "protocols": list(protocols),
        "tuning": {"n_trials": n_trials},
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def postgres_url() -> str | None:
    """``$TABMOE_TEST_POSTGRES_URL`` (set by .ci/run) if a server answers there, else None."""
    url = os.environ.get("TABMOE_TEST_POSTGRES_URL")
    if not url:
        return None
    try:
        import psycopg2

        psycopg2.connect(url, connect_timeout=3).close()
    except Exception:  # no driver, no server, bad credentials: the test skips
        return None
    return url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
