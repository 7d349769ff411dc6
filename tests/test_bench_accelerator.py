"""A record names the device a torch model trained on when it is not the CPU: on a GPU host
the registry's ``device="auto"`` trains there, and ``cpu`` alone would name the wrong
processor."""

from __future__ import annotations

import pytest
import torch
from sklearn.linear_model import LogisticRegression

from tabmoe.bench._environment import accelerator


class Fitted:
    def __init__(self, device: str):
        self.module_ = torch.nn.Linear(2, 2, device=device)


@pytest.mark.parametrize(("device", "named"), [("cpu", None), ("meta", "meta")])
def test_the_networks_device_is_named_unless_it_is_the_cpu(device, named):
    assert accelerator(Fitted(device)) == named


def test_a_model_without_a_network_names_none():
    assert accelerator(LogisticRegression()) is None
    empty = Fitted("cpu")
    empty.module_ = torch.nn.Sequential()  # no parameters
    assert accelerator(empty) is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_cuda_network_is_named_by_its_gpu():
    assert accelerator(Fitted("cuda")) == torch.cuda.get_device_name(0)
