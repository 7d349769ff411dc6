"""Tiny benchmark suites on the shipped car-smoke table, and a model that kills its own
process, for the harness tests."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

pytest.importorskip("yaml")  # extra "data": the tests of the harness skip without it

import yaml

from tabmoe.baselines.reference import logistic_regression
from tabmoe.bench.engines import safe_execute
from tabmoe.bench.suites import load_suite
from tabmoe.registry import MODELS, ModelSpec

CAR = load_suite("smoke").splits[0].data.file


def tiny_suite(
    directory: Path,
    *,
    name: str = "tiny",
    models: dict | None = None,
    seeds: tuple[int, ...] = (0,),
    protocols: tuple[str, ...] = ("fixed-budget",),
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


class CrashingClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression whose ``fit`` SIGKILLs its own process, once.

    It dies when ``random_state == crash_seed`` and the token file ``crash_file`` exists,
    removing the token first: the run that dies is the one fitted on that seed (inside an
    Optuna trial for the tuned protocol), and a rerun fits normally.
    """

    def __init__(self, C: float = 1.0, crash_file: str | None = None, crash_seed: int = 0,
                 random_state: int | None = None):
        self.C = C
        self.crash_file = crash_file
        self.crash_seed = crash_seed
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> CrashingClassifier:
        token = Path(self.crash_file) if self.crash_file else None
        if token is not None and self.random_state == self.crash_seed and token.exists():
            token.unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        self.model_ = logistic_regression(C=self.C).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X: Any) -> Any:
        return self.model_.predict_proba(X)

    def predict(self, X: Any) -> Any:
        return self.model_.predict(X)


def _suggest_crashing(trial: Any) -> dict:
    return {"C": trial.suggest_float("C", 0.1, 10.0, log=True)}


CRASHING = ModelSpec("crashing", CrashingClassifier, {}, _suggest_crashing,
                     "test model: logistic regression that SIGKILLs its process once")


def register_test_models() -> None:
    """Add the test models to the registry of this process."""
    MODELS.setdefault(CRASHING.name, CRASHING)


def safe_execute_with_test_models(spec: Any) -> Any:
    """:func:`tabmoe.bench.engines.safe_execute` in a process that knows the test models.

    Patch it over ``tabmoe.bench.engines.safe_execute``: worker processes unpickle it by
    reference (importing this module), so they register the test models before the run.
    """
    register_test_models()
    return safe_execute(spec)


def sleep_in_worker(spec: Any) -> Any:
    """Stands in for :func:`tabmoe.bench.engines.safe_execute`: writes this process's pid to
    ``$TABMOE_TEST_PIDS/<pid>`` and sleeps for two minutes (a run that is still fitting)."""
    (Path(os.environ["TABMOE_TEST_PIDS"]) / str(os.getpid())).touch()
    time.sleep(120)
    return spec.run_id, None, "slept"
