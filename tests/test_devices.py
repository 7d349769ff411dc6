"""Device handling of the training loop on machines this test does not run on: CUDA and
MPS are stood in for by monkeypatching torch's queries."""

from __future__ import annotations

import pytest
import torch

from tabmoe.nn.trainer import resolve_device


def _gpus(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: n)


def test_a_cuda_device_index_past_the_last_gpu_is_refused(monkeypatch):
    _gpus(monkeypatch, 2)
    assert resolve_device("cuda:1") == torch.device("cuda:1")
    assert resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ValueError, match=r"device='cuda:2' was requested but only 2 CUDA"):
        resolve_device("cuda:2")
    with pytest.raises(ValueError, match=r"device=device\(type='cuda', index=7\)"):
        resolve_device(torch.device("cuda", 7))


@pytest.mark.parametrize("available", [False, True])
def test_mps_is_refused_where_it_is_not_available(monkeypatch, available):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: available)
    if available:
        assert resolve_device("mps") == torch.device("mps")
    else:
        with pytest.raises(ValueError, match="device='mps' was requested but MPS is not available"):
            resolve_device("mps")
