"""Same random_state, same probabilities: across separate processes on CPU.

Each process has its own hash seed (PYTHONHASHSEED), so anything that depended on set or
dict iteration order of category values, or on state left over in the interpreter, would
show up. See docs/reliability.md for what holds on CUDA.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone

from tabmoe.nn.trainer import float32_default

from .classifiers import CLASSIFIER_FACTORIES
from .conftest import REPO

FIT_AND_HASH = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np, pandas as pd, torch
    torch.set_num_threads(1)
    from tabmoe import TabularMoEClassifier

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue", "日本"], n).astype(object),
        "mixed": pd.Series(rng.choice([1, "1", 2.5, None], n), dtype=object),
        "size": rng.normal(size=n),
        "kind": pd.Categorical(rng.choice(["a", "b"], n)),
    })
    y = np.where((X["colour"] == "red") | (X["size"] > 1.0), "yes", "no")
    seed = int(sys.argv[1])
    configs = {
        "paper-like": dict(max_epochs=3),
        "deep-random-masking": dict(max_epochs=3, n_layers=2),
        "early-stopping-split": dict(max_epochs=3, early_stopping=True, n_iter_no_change=1),
    }
    out = {}
    for name, config in configs.items():
        clf = TabularMoEClassifier(**config, device="cpu", random_state=seed).fit(X, y)
        out[name] = hashlib.sha256(clf.predict_proba(X).tobytes()).hexdigest()
    print(json.dumps(out))
    """
)


def run_in_fresh_process(seed: int, hash_seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-c", FIT_AND_HASH, str(seed)],
        capture_output=True, text=True, check=True, cwd=REPO, env=env,
    )  # fmt: skip
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # worker processes: ~20 s; the default suite stays under 10 minutes
def test_identical_probabilities_across_processes_on_cpu():
    first = run_in_fresh_process(seed=0, hash_seed="1")
    second = run_in_fresh_process(seed=0, hash_seed="2")
    assert first == second and len(first) == 3
    # (that another random_state gives other probabilities is checked in-process in
    # test_estimator.py::test_same_random_state_same_probabilities_twice)


@pytest.fixture
def float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize("name", ["tabmoe", "ft_transformer", "tab_transformer", "tabnet", "tabm"])
def test_a_callers_float64_default_dtype_changes_no_fit(name, float64_default, tmp_path):
    # The networks were built in the caller's default dtype: float64 ones, with other
    # initial weights, so the same random_state gave other probabilities.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    with float32_default():
        fitted = CLASSIFIER_FACTORIES[name]().fit(X, y)
        expected = fitted.predict_proba(X)
    np.testing.assert_array_equal(fitted.predict_proba(X), expected)  # TabNet's raised
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    assert torch.get_default_dtype() == torch.float64  # the caller's, restored
    np.testing.assert_array_equal(clf.predict_proba(X), expected)
    if hasattr(clf, "save"):
        clf.save(tmp_path / "model.tabmoe")
        loaded = type(clf).load(tmp_path / "model.tabmoe")
        assert {p.dtype for p in loaded.module_.parameters()} == {torch.float32}
        np.testing.assert_array_equal(loaded.predict_proba(X), expected)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("name", ["tabmoe", "ft_transformer", "tab_transformer", "tabnet", "tabm"])
def test_a_fit_under_a_callers_no_grad_trains_as_without(name, mode):
    # Fitted inside torch.no_grad() (or inference_mode(), or after
    # torch.set_grad_enabled(False)), every torch model failed with torch's "element 0 of
    # tensors does not require grad and does not have a grad_fn".
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    expected = CLASSIFIER_FACTORIES[name]().fit(X, y).predict_proba(X)
    with getattr(torch, mode)():
        clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
        assert not torch.is_grad_enabled()  # the caller's mode, restored
        np.testing.assert_array_equal(clf.predict_proba(X), expected)
    np.testing.assert_array_equal(clf.predict_proba(X), expected)


@pytest.mark.parametrize("name", ["tabmoe", "ft_transformer", "tab_transformer", "tabnet", "tabm"])
def test_a_callers_autocast_changes_no_fit_or_prediction(name):
    # Inside a caller's torch.autocast("cpu") block a fit with mixed_precision=False trained in
    # bf16 (tabmoe's probabilities differed by up to 0.83) and prediction ran in bf16.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    fitted = CLASSIFIER_FACTORIES[name]().fit(X, y)
    expected = fitted.predict_proba(X)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
        assert torch.is_autocast_enabled("cpu")  # the caller's, restored
        np.testing.assert_array_equal(fitted.predict_proba(X), expected)
        np.testing.assert_array_equal(clf.predict_proba(X), expected)
    if name == "tabmoe":  # explain stays float32; mixed_precision=True is bf16 as outside the block
        gates = fitted.explain(X).gates
        mixed = CLASSIFIER_FACTORIES[name]().set_params(mixed_precision=True).fit(X, y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pd.testing.assert_frame_equal(fitted.explain(X).gates, gates)
            again = CLASSIFIER_FACTORIES[name]().set_params(mixed_precision=True).fit(X, y)
        # not bit for bit (bf16 casts are not cached across a step's uses there): nested in the
        # caller's block, the cast weights were cached across steps, 0.26 away
        np.testing.assert_allclose(again.predict_proba(X), mixed.predict_proba(X), atol=0.01)


def _random_state_key(clf) -> str:
    return "estimator__random_state" if "estimator__random_state" in clf.get_params() else "random_state"


# LogisticRegression's lbfgs solver draws nothing from its random_state
@pytest.mark.parametrize("name", [n for n in CLASSIFIER_FACTORIES if n != "logistic_regression"])
def test_a_numpy_random_state_is_drawn_from_as_scikit_learn_does(name):
    # scikit-learn's convention for a RandomState instance: each fit draws from the caller's
    # generator (the same seeded generator, the same model; a refit, another draw). The
    # references cloned their estimator at fit, which deep-copied the generator: every refit
    # drew from the same copy and the caller's generator never moved.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    key = _random_state_key(CLASSIFIER_FACTORIES[name]())
    first = CLASSIFIER_FACTORIES[name]().set_params(**{key: np.random.RandomState(3)}).fit(X, y)
    state = np.random.RandomState(3)
    clf = CLASSIFIER_FACTORIES[name]().set_params(**{key: state}).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), first.predict_proba(X))
    assert state.randint(2**31) != np.random.RandomState(3).randint(2**31)  # the fit drew from it


@pytest.mark.parametrize("name", list(CLASSIFIER_FACTORIES))
def test_same_random_state_same_fit_after_caller_draws_on_a_clone_with_another_index(name):
    # docs/reliability.md: a fit depends on neither the caller's global generators, nor a
    # clone, nor the pandas index of X, y and sample_weight (rows matched by position)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    weight = rng.uniform(0.5, 2.0, len(X))
    expected = CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=weight).predict_proba(X)
    np.random.seed(1)  # the caller's own draws before the fit
    torch.manual_seed(1)
    random.seed(1)
    np.random.rand(3), torch.rand(3), random.random()
    index = pd.Index([f"r{i}" for i in range(len(X))][::-1])
    clf = clone(CLASSIFIER_FACTORIES[name]()).fit(
        X.set_axis(index), pd.Series(y, index=index[::-1]), sample_weight=pd.Series(weight, index=index[::-1])
    )
    np.testing.assert_array_equal(clf.predict_proba(X), expected)
