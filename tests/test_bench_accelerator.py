"""A record names the device a torch model trained on when it is not the CPU: on a GPU host
the registry's ``device="auto"`` trains there, and ``cpu`` alone would name the wrong
processor. And it names the git revision of tabmoe's own checkout, not of a checkout that
merely contains it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch
from sklearn.linear_model import LogisticRegression

from tabmoe.bench._environment import accelerator, checkout_revision


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


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_folder_inside_another_projects_checkout_has_no_revision(tmp_path):
    """tabmoe installed in a virtual environment within a user's project (its site-packages
    inside that project's checkout) recorded the project's revision and dirty flag as its own."""
    project = tmp_path / "my project"  # a space in the name: the top folder is read as a line
    site = project / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (project / "app.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "app"], check=True)
    (project / "app.py").write_text("x = 2\n")  # the project is dirty, tabmoe is not in it
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert checkout_revision(site) == {"revision": None, "dirty": None}
    assert checkout_revision(project) == {"revision": head, "dirty": True}
