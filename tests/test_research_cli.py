"""benchmarks/research.py's command line: bad arguments are named, not tracebacks, and
nothing is fitted or written before they are checked."""

from __future__ import annotations

import json

import pytest

from .test_research_rules import import_benchmark


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


@pytest.fixture
def study(research, tmp_path, monkeypatch):
    line = {"variant": "base", "split": "a", "seed": 0, "validation": 0.8, "id_test": 0.8,
            "ood_test": 0.7, "fit_seconds": 1.0, "ood_single_class": False}
    (tmp_path / "s.jsonl").write_text(json.dumps(line) + "\n")
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["summary", "--study", "nosuch", "--baseline", "base"],
    ["summary", "--study", "s,nosuch", "--baseline", "base"],
    ["held-out", "--study", "nosuch", "--baseline", "base"],
    ["unseen", "--study", "nosuch"],
])
def test_a_study_that_does_not_exist_is_named(research, study, argv):
    with pytest.raises(SystemExit, match=r"--study: no study 'nosuch' \(.*nosuch\.jsonl does not exist\)"):
        research.main(argv)
