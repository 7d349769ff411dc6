"""Device handling of the training loop on machines this test does not run on: CUDA and
MPS are stood in for by monkeypatching torch's queries."""

from __future__ import annotations

import contextlib
import re

import pytest
import torch

from tabmoe.nn.trainer import resolve_device, seeded


def _gpus(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: n)


def test_a_cuda_device_index_past_the_last_gpu_is_refused(monkeypatch):
    _gpus(monkeypatch, 2)
    assert resolve_device("cuda:1") == torch.device("cuda:1")
    assert resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ValueError, match=r"device='cuda:2' was requested but only 2 CUDA.*use 'cuda:0' to 'cuda:1'"):
        resolve_device("cuda:2")
    with pytest.raises(ValueError, match=r"device=device\(type='cuda', index=7\)"):
        resolve_device(torch.device("cuda", 7))


@pytest.mark.parametrize(("build", "why"), [(None, "a CPU-only build"), ("12.8", "sees no GPU")])
def test_cuda_on_a_machine_without_it_says_why_and_what_to_set(monkeypatch, build, why):
    """It said only "device='cuda' was requested but CUDA is not available.": not whether
    torch was built without CUDA or sees no GPU, nor what to set instead."""
    _gpus(monkeypatch, 0)
    monkeypatch.setattr(torch.version, "cuda", build)
    monkeypatch.setattr(torch.version, "hip", None)
    with pytest.raises(ValueError, match=rf"device='cuda:0' was requested but CUDA is not available: .*{why}.*"
                                         r"Set device='cpu', or 'auto'"):
        resolve_device("cuda:0")


@pytest.mark.parametrize("device", ["CPU", "gpu", "auto:0"])
def test_a_device_torch_cannot_read_is_refused_with_what_device_takes(device):
    """torch's list of device types left out tabmoe's own 'auto'."""
    with pytest.raises(ValueError, match=rf"device={device!r} is not a valid torch device: .*Use 'auto'"):
        resolve_device(device)


@pytest.mark.parametrize("available", [False, True])
def test_mps_is_refused_where_it_is_not_available(monkeypatch, available):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: available)
    if available:
        assert resolve_device("mps") == torch.device("mps")
    else:
        with pytest.raises(ValueError, match="device='mps' was requested but MPS is not available"):
            resolve_device("mps")


@pytest.fixture
def rng_calls(monkeypatch: pytest.MonkeyPatch) -> list:
    """Three initialised GPUs; records the RNG states forked and the CUDA seeds set."""
    calls: list = []
    _gpus(monkeypatch, 3)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    current, fork_cpu = [0], torch.random.fork_rng

    @contextlib.contextmanager
    def fork_rng(devices=None, device_type=None, **kwargs):
        calls.append(("fork", device_type, list(devices)))
        with fork_cpu(devices=[]):  # the CPU state, really forked
            yield

    @contextlib.contextmanager
    def on_device(device):
        before, current[0] = current[0], torch.device(device).index
        yield
        current[0] = before

    monkeypatch.setattr(torch.random, "fork_rng", fork_rng)
    monkeypatch.setattr(torch.cuda, "device", on_device)
    monkeypatch.setattr(torch.cuda, "manual_seed", lambda s: calls.append(("seed", current[0], s)))
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda s: calls.append(("seed all", s)))
    return calls


def test_seeded_restores_every_initialised_gpu_and_seeds_only_the_fits(rng_calls):
    """torch.manual_seed would seed all three GPUs; the state of only the fit's one (none
    for a CPU fit) was restored. Now no GPU but the fit's is seeded, and all are restored
    (code inside, e.g. pytorch-tabnet, may call torch.manual_seed)."""
    torch.default_generator.manual_seed(1)
    expected_after = torch.rand(2)
    torch.default_generator.manual_seed(1)
    with seeded(7, torch.device("cpu")):
        drawn = torch.rand(2)
    assert torch.equal(drawn, torch.rand(2, generator=torch.Generator().manual_seed(7)))
    assert torch.equal(torch.rand(2), expected_after)  # the CPU state came back
    assert rng_calls == [("fork", "cuda", [0, 1, 2])]
    rng_calls.clear()
    with seeded(7, torch.device("cuda:1")):
        pass
    assert rng_calls == [("fork", "cuda", [0, 1, 2]), ("seed", 1, 7)]


def test_seeded_keeps_the_cuda_seed_queued_before_cuda_starts():
    """Before CUDA starts, torch.manual_seed queues a seed for every GPU; one called inside
    the block (pytorch-tabnet's) replaced the caller's, so a CPU TabNet fit on a GPU
    machine made the GPUs start from TabNet's seed."""
    if torch.cuda.is_initialized():  # checked when the test runs: an earlier test may start CUDA
        pytest.skip("CUDA has started (a GPU machine): torch.manual_seed seeds at once, queues nothing")

    def queued() -> int | None:
        entry = torch.cuda._lazy_seed_tracker.manual_seed_all_cb
        if entry is None:
            return None
        fn = entry[0]
        return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=True))["seed"]

    torch.manual_seed(123)
    assert queued() == 123
    with seeded(7, torch.device("cpu")):
        torch.manual_seed(99)
        assert queued() == 99
    assert queued() == 123


@pytest.mark.parametrize("device", ["meta", torch.device("meta"), "xpu", "hpu:0", "xla", "lazy"])
def test_a_device_without_data_or_backend_is_refused_before_the_fit_works(device, monkeypatch):
    """They passed resolve_device and failed at the network's .to(device), after the
    tokenizer was fitted, with torch's words: "fused=True requires ... meta" (AdamW), an
    AssertionError "Torch not compiled with XPU enabled", "No module named 'torch.hpu'"."""
    from tabmoe import TabularMoEClassifier

    from .moe_data import toy_table

    monkeypatch.setattr(torch.xpu, "is_available", lambda: False)  # on a machine with one, too
    with pytest.raises(ValueError, match=re.escape(f"device={device!r} ") + "(holds no data|was requested but this torch has no)"):
        resolve_device(device)
    X, y = toy_table(n=60)
    clf = TabularMoEClassifier(max_epochs=1, device=device)
    with pytest.raises(ValueError, match="device="):
        clf.fit(X, y)
    assert not hasattr(clf, "tokenizer_")


@pytest.fixture
def meta_default_device():
    """A caller's ``torch.set_default_device("cuda")`` stood in for by the meta device: a
    tensor tabmoe made there without a device holds no data, so the call fails where, on a
    GPU machine, it made that tensor on the GPU (the trainer's shuffle then raised torch's
    "Expected a 'cuda' device type for generator but found 'cpu'")."""
    torch.set_default_device("meta")
    yield
    torch.set_default_device(None)


@pytest.mark.parametrize("name", ["tabmoe", "ft_transformer", "tab_transformer", "tabnet", "tabm"])
def test_a_callers_default_device_changes_no_fit(name, meta_default_device, tmp_path):
    """The networks were built on the caller's default device (from its RNG, not the CPU's
    seeded one), and fit, adapt and load failed there; each call now makes its tensors where
    ``device`` says, and leaves the caller's default as it was."""
    import numpy as np
    import pandas as pd

    from .classifiers import CLASSIFIER_FACTORIES

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 120), "b": rng.normal(size=120)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    with torch.device("cpu"):
        fitted = CLASSIFIER_FACTORIES[name]().fit(X, y)
        expected = fitted.predict_proba(X)
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    assert torch.empty(0).device.type == "meta"  # the caller's, kept
    np.testing.assert_array_equal(clf.predict_proba(X), expected)
    if hasattr(clf, "adapt"):
        clf.save(tmp_path / "model.tabmoe")
        loaded = type(clf).load(tmp_path / "model.tabmoe")
        np.testing.assert_array_equal(loaded.predict_proba(X), expected)
        np.testing.assert_array_equal(loaded.explain(X).gates, fitted.explain(X).gates)
        with torch.device("cpu"):
            fitted.adapt(X, max_epochs=1)
        np.testing.assert_array_equal(loaded.adapt(X, max_epochs=1).predict_proba(X), fitted.predict_proba(X))


def test_the_trainers_shuffle_draws_on_its_generators_device(meta_default_device):
    """``iterate_batches`` (the trainer's, also for a direct ``Trainer``) drew its order on the
    caller's default device with a CPU generator: a mismatch (on a GPU, torch's "Expected a
    'cuda' device type for generator"), here a tensor without data."""
    from tabmoe.nn.trainer import iterate_batches

    data = {"x": torch.arange(6.0, device="cpu")}
    batches = [b["x"].tolist() for b in iterate_batches(data, 4, torch.Generator().manual_seed(0))]
    with torch.device("cpu"):
        expected = [b["x"].tolist() for b in iterate_batches(data, 4, torch.Generator().manual_seed(0))]
    assert batches == expected and sorted(sum(batches, [])) == list(range(6))


def test_a_copy_to_the_host_is_not_left_running():
    """``_to_device`` copied with ``non_blocking=True`` both ways; a copy to the CPU from a
    GPU may then still be running when the CPU reads it. Only copies from the host overlap."""
    from unittest import mock

    from tabmoe.nn import trainer

    calls = []
    real = torch.Tensor.to

    def spy(self, *args, **kwargs):
        calls.append(kwargs.get("non_blocking"))
        return real(self, *args, **kwargs)

    meta = torch.empty(3, device="meta")  # a tensor off the host, standing in for a GPU one
    with mock.patch.object(torch.Tensor, "to", spy):
        trainer._to_device({"a": torch.zeros(3), "b": meta}, torch.device("meta"))
    assert calls == [True, False]
