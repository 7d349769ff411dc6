"""``tabmoe-bench`` without the ``bench`` extra names it instead of a click traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tabmoe.bench import _entry


def test_without_click_the_command_names_the_extra(monkeypatch):
    """It said ``pip install 'tabmoe[bench]'``, which asks the package index for a tabmoe it
    does not have (docs/installation.md: install from the repository)."""
    monkeypatch.delitem(sys.modules, "tabmoe.bench.cli", raising=False)
    monkeypatch.setitem(sys.modules, "click", None)  # import click -> ModuleNotFoundError
    with pytest.raises(SystemExit, match=r"needs the 'bench' extra \(missing: click\): from the tabmoe "
                                         r"repository, pip install '\.\[bench\]'$"):
        _entry.main()


def test_with_click_it_is_the_cli():
    pytest.importorskip("click")  # extra "bench"
    out = subprocess.run([sys.executable, "-m", "tabmoe.bench", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("tabmoe-bench ")
