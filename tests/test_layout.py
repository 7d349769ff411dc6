"""The package layout of issue 18: old import paths still work for one release, with a
DeprecationWarning naming the new path, and give the same objects as the new modules."""

from __future__ import annotations

import importlib
import sys

import pytest

from tabmoe._moved import MOVED, RENAMED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_and_reexports_the_new_module(old, monkeypatch):
    new = MOVED[old]
    if old.endswith(".openml"):
        pytest.importorskip("openml")
    module = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)  # import the shim afresh
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated.*import from {new}\."):
        shim = importlib.import_module(old)
    assert shim is not module
    names = [name for name in vars(module) if not name.startswith("__")]
    assert names, new
    for name in names:
        assert getattr(shim, name) is getattr(module, name), f"{old}.{name}"
    assert getattr(shim, "__all__", None) == getattr(module, "__all__", None)


def test_every_old_module_file_is_a_shim():
    """Each old path in MOVED is a file that only calls the shared helper."""
    import tabmoe

    root = tabmoe.__path__[0]
    for old in MOVED:
        parts = old.split(".")[1:]
        path = f"{root}/{'/'.join(parts)}" + ("/__init__.py" if old == "tabmoe.datasets" else ".py")
        text = open(path, encoding="utf8").read()
        assert "reexport(__name__, globals())" in text, path
        assert len(text.splitlines()) <= 5, path


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_old_path_keeps_the_names_renamed_after_the_move(old, monkeypatch):
    """tabmoe.ensemble had member_loss (renamed MemberLoss after the move): still importable."""
    module = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning):
        shim = importlib.import_module(old)
    for old_name, name in RENAMED[old].items():
        assert getattr(shim, old_name) is getattr(module, name), f"{old}.{old_name}"


def test_old_member_loss_still_lifts_a_loss(monkeypatch):
    monkeypatch.delitem(sys.modules, "tabmoe.ensemble", raising=False)
    with pytest.warns(DeprecationWarning):
        from tabmoe.ensemble import member_loss
    from tabmoe.nn.ensemble import MemberLoss

    assert isinstance(member_loss(lambda module, batch: None), MemberLoss)
