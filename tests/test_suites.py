"""Every split of every suite passes its leakage assertions (checked inside ``make``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("yaml")  # extra "data": the suite files

from tabmoe.bench.suites import available_suites, load_suite, suite_from_dict
from tabmoe.data import SIMULATION_GRID, paper_simulation_seeds
from tabmoe.data.sources import (
    AutoMpgSource,
    FileSource,
    LoadContext,
    OpenMLSource,
    SimulationSource,
)

SMOKE = load_suite("smoke")
PAPER = load_suite("paper")
OPENML = load_suite("openml-ood")
#: Datasets whose cold load takes seconds (see test_openml_loading.BIG).
BIG = {1590, 1461, 40668}


def test_suites_are_found():
    assert set(available_suites()) >= {"smoke", "paper", "openml-ood"}


def test_smoke_needs_nothing_outside_the_repo(monkeypatch, tmp_path):
    monkeypatch.setenv("TABMOE_OPENML_CACHE", str(tmp_path / "no-cache"))
    monkeypatch.setenv("TABMOE_AUTO_MPG", str(tmp_path / "no-auto-mpg.csv"))
    assert all(isinstance(split.data, FileSource) for split in SMOKE.splits)
    for definition in SMOKE.splits:
        for seed in SMOKE.seeds_for(definition):
            split = definition.make(seed)
            assert len(split.train) > 100 and len(split.ood_test) > 50


def test_load_suite_without_pyyaml_names_the_extra(monkeypatch):
    """It failed with Python's bare "No module named 'yaml'", naming neither pyyaml nor the extra."""
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if not installed
    with pytest.raises(ImportError, match=r"load_suite needs the optional package 'pyyaml': install the extra 'data'"):
        load_suite("smoke")


def test_openml_loading_without_openml_names_the_extra(monkeypatch):
    """It failed with Python's bare "No module named 'openml'" from inside tabmoe.data.openml,
    naming no extra: an OpenML split of a suite, and the import of the module itself."""
    monkeypatch.setitem(sys.modules, "openml", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "tabmoe.data.openml", raising=False)  # imported anew
    message = r"tabmoe.data.openml needs the optional package 'openml': install the extra 'data'"
    with pytest.raises(ImportError, match=message):
        OpenMLSource(31).load(LoadContext())
    with pytest.raises(ImportError, match=message):
        import tabmoe.data.openml  # noqa: F401


def test_paper_suite_covers_the_paper():
    sims = [s for s in PAPER.splits if isinstance(s.data, SimulationSource)]
    grid = [(s.data.num_corefea, s.data.corr, s.data.x_noise) for s in sims]
    assert grid == list(SIMULATION_GRID)
    assert PAPER.seeds == tuple(paper_simulation_seeds())
    (mpg,) = [s for s in PAPER.splits if isinstance(s.data, AutoMpgSource)]
    assert PAPER.seeds_for(mpg) == tuple(range(42, 62))


@pytest.mark.parametrize("definition", [s for s in PAPER.splits if isinstance(s.data, SimulationSource)], ids=lambda s: s.name)
def test_paper_simulation_splits(definition):
    seed = PAPER.seeds[0]
    split = definition.make(seed)
    assert (len(split.train), len(split.ood_test)) == (2000, 2000)
    assert "domain" not in split.train.columns


def test_paper_split_is_the_authors_data():
    from tabmoe.data import correlation_shift_simulation

    split = PAPER.split("sim-5-0.9-0.0").make(4951)
    authors = correlation_shift_simulation(5, 0.9, 0.0, 4951)
    assert split.train.reset_index(drop=True).equals(authors.train)
    assert split.ood_test.reset_index(drop=True).equals(authors.test)


def test_paper_auto_mpg_split(auto_mpg):
    from tabmoe.data import auto_mpg_origin_split

    split = PAPER.split("auto-mpg-origin").make(42)
    reference = auto_mpg_origin_split(auto_mpg)
    assert split.train.reset_index(drop=True).equals(reference.train)
    assert split.ood_test.reset_index(drop=True).equals(reference.test)


def test_openml_suite_shape():
    datasets = {s.data.openml for s in OPENML.splits}
    assert all(isinstance(s.data, OpenMLSource) for s in OPENML.splits)
    assert len(OPENML.splits) >= 12 and len(datasets) >= 8
    assert all(len(s.rationale) > 20 and "\n" not in s.rationale for s in OPENML.splits)


@pytest.mark.parametrize(
    "definition",
    [pytest.param(s, marks=pytest.mark.slow) if s.data.openml in BIG else s for s in OPENML.splits],
    ids=lambda s: s.name,
)
def test_openml_splits_pass_leakage_checks(definition, openml_cache):
    for seed in OPENML.seeds_for(definition)[:2]:
        split = definition.make(seed, openml_cache=openml_cache)
        assert len(split.train) >= 80 and len(split.ood_test) >= 50


def test_suite_file_errors(tmp_path):
    base = {"name": "x", "seeds": [0], "splits": [{"name": "a", "data": {"openml": 31}, "split": {"by": "time"}}]}
    with pytest.raises(ValueError, match="differs from the file name"):
        suite_from_dict(base, path=tmp_path / "y.yaml")
    with pytest.raises(ValueError, match=r"used more than once"):
        suite_from_dict({**base, "splits": base["splits"] * 2})
    with pytest.raises(ValueError, match=r"unknown keys \['seed'\]"):
        suite_from_dict({**base, "seed": 1})
    # a typo is told the keys a suite file takes (it was told `missing keys []` instead)
    with pytest.raises(ValueError, match=r"unknown keys \['descripton'\]; allowed are \[.*'description'") as caught:
        suite_from_dict({**base, "descripton": "typo"})
    assert "missing" not in str(caught.value)
    with pytest.raises(ValueError, match=r"suite: missing keys \['seeds'\]$"):
        suite_from_dict({k: v for k, v in base.items() if k != "seeds"})
    with pytest.raises(ValueError, match="non-empty list of integers"):
        suite_from_dict({**base, "seeds": "0"})
    with pytest.raises(KeyError, match="no split 'b'"):
        suite_from_dict(base).split("b")
    with pytest.raises(KeyError, match="available"):
        load_suite("nope")


def test_a_key_repeated_in_a_suite_file_is_refused_naming_it(tmp_path):
    """yaml.safe_load keeps the last of two keys: a second split: replaced the first silently."""
    path = tmp_path / "dup.yaml"
    path.write_text(
        "name: dup\nseeds: [0]\nsplits:\n  - name: a\n    data: {openml: 31}\n"
        "    split: {by: values, column: purpose, ood_values: [business]}\n"
        "    split: {by: time}\n"
    )
    with pytest.raises(ValueError, match=r"duplicate key 'split'.*line 7"):
        load_suite(path)
    path.write_text(path.read_text().replace("    split: {by: time}\n", ""))
    assert load_suite(path).splits[0].rule.column == "purpose"


def test_a_suite_file_that_is_not_utf8_is_named(tmp_path):
    """Its UnicodeDecodeError said "'utf-8' codec can't decode byte 0xff ...", naming no file
    (`tabmoe-bench suites` printed only that, for any one bad file of the folder)."""
    path = tmp_path / "latin.yaml"
    path.write_bytes("name: latin\ndescription: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"suite {re.escape(str(path))}: not UTF-8 text"):
        load_suite(path)


def test_defaults_and_by_of_the_wrong_type_are_named():
    """Both were TypeErrors naming nothing: "'list' object is not a mapping", "unhashable type: 'list'"."""
    base = {"name": "x", "seeds": [0], "splits": [{"name": "a", "data": {"openml": 31}, "split": {"by": "time"}}]}
    with pytest.raises(ValueError, match=r"suite.defaults: expected a mapping"):
        suite_from_dict({**base, "defaults": ["validation_size"]})
    with pytest.raises(ValueError, match=r"split 'a'.split: needs by: one of"):
        suite_from_dict({**base, "splits": [{**base["splits"][0], "split": {"by": ["time"]}}]})


def test_an_empty_description_or_rationale_is_empty_and_other_types_are_named():
    """An empty `description:` (YAML null) became the text "None"; a rationale was not checked."""
    split = {"name": "a", "data": {"openml": 31}, "split": {"by": "time"}}
    base = {"name": "x", "seeds": [0], "splits": [split]}
    assert suite_from_dict({**base, "description": None}).description == ""
    assert suite_from_dict(base).description == ""
    assert suite_from_dict({**base, "splits": [{**split, "rationale": None}]}).splits[0].rationale == ""
    with pytest.raises(ValueError, match=r"suite.description: expected text, got \['a'\]"):
        suite_from_dict({**base, "description": ["a"]})
    with pytest.raises(ValueError, match=r"split 'a': rationale must be text, got 2020"):
        suite_from_dict({**base, "splits": [{**split, "rationale": 2020}]})


def test_file_and_path_entries_of_the_wrong_type_are_named():
    """`file: null` (or a number) and an auto_mpg `path: 5` were TypeErrors of pathlib naming
    nothing ("expected str, bytes or os.PathLike object, not NoneType"), a traceback from
    `tabmoe-bench run`; `categorical: 5` failed every run with "'int' object is not iterable"."""
    split = {"name": "a", "split": {"by": "time"}}
    base = {"name": "x", "seeds": [0]}
    for data, message in (
        ({"file": None}, r"split 'a'.data: file must be a path \(text\), got None"),
        ({"file": 2020}, r"split 'a'.data: file must be a path \(text\), got 2020"),
        ({"file": "t.csv", "categorical": 5}, r"split 'a'.data: categorical must be a list of column names or 'all', got 5"),
        ({"auto_mpg": {"path": 5}}, r"split 'a'.data.auto_mpg: path must be a path \(text\) or null, got 5"),
    ):
        with pytest.raises(ValueError, match=message):
            suite_from_dict({**base, "splits": [{**split, "data": data}]})
    ok = {"file": "t.csv", "categorical": ["c"]}
    assert suite_from_dict({**base, "splits": [{**split, "data": ok}]}).splits[0].data.categorical == ("c",)
    # a suite built in Python may name its files with pathlib: that check refused them
    as_path = {"file": Path("/data/t.csv")}
    assert suite_from_dict({**base, "splits": [{**split, "data": as_path}]}).splits[0].data.file == str(Path("/data/t.csv").resolve())
    auto = suite_from_dict({**base, "splits": [{**split, "data": {"auto_mpg": {"path": Path("/data/a.csv")}}}]})
    assert auto.splits[0].data.path == "/data/a.csv"


def test_a_rules_or_simulations_own_check_names_the_split_of_the_suite():
    """A rule's (or the simulation's) own checks named no split: of three cluster splits of a
    suite, "cluster split: ood_clusters [3] must be distinct size ranks in 0..2" said not which."""
    base = {"name": "x", "seeds": [0]}
    car = {"file": "t.csv", "target": "class"}
    for data, rule, message in (
        (car, {"by": "cluster", "n_clusters": 3, "ood_clusters": [3]},
         r"^split 'b': cluster split: ood_clusters \[3\] must be distinct size ranks in 0\.\.2"),
        (car, {"by": "values", "column": "buying", "ood_values": "vhigh"},
         r"^split 'b': values split on 'buying': ood_values must be a list, got 'vhigh'"),
        (car, {"by": "time", "ood_fraction": 1},
         r"^split 'b': time split: ood_fraction must be a number in \(0, 1\), got 1"),
        ({"simulation": {"num_corefea": 9, "corr": 0.5, "x_noise": 0.0}}, {"by": "time"},
         r"^split 'b': simulation: num_corefea must be an integer in \[0, 5\], got 9"),
    ):
        good = {"name": "a", "data": car, "split": {"by": "cluster", "n_clusters": 3, "ood_clusters": [2]}}
        with pytest.raises(ValueError, match=message):
            suite_from_dict({**base, "splits": [good, {"name": "b", "data": data, "split": rule}]})
    # errors that named the split already are not named twice
    with pytest.raises(ValueError, match=r"^split 'b'.split \(by: values\): unknown key\(s\) \['ood_valus'\]"):
        suite_from_dict({**base, "splits": [{"name": "b", "data": car, "split": {"by": "values", "column": "c", "ood_valus": ["v"]}}]})


def test_a_bad_split_of_a_suite_file_names_the_file(tmp_path):
    """A split's errors named the split alone ("split 'b'.split (by: values): unknown key(s)
    ..."): `tabmoe-bench suites` over a folder, or `run` of a suite by name, said not which file."""
    path = tmp_path / "x.yaml"
    path.write_text("name: x\nseeds: [0]\nsplits:\n  - {name: b, data: {openml: 31}, "
                    "split: {by: values, column: c, ood_valus: [v]}}\n")
    with pytest.raises(ValueError, match=rf"^suite {re.escape(str(path))}: split 'b'.split \(by: values\): "
                       r"unknown key\(s\) \['ood_valus'\]"):
        load_suite(path)


def test_merge_keys_still_load_and_may_be_overridden(tmp_path):
    """`<<: *anchor` is YAML's way to share settings; the duplicate-key loader failed on it
    ("could not determine a constructor for the tag 'tag:yaml.org,2002:merge'")."""
    path = tmp_path / "merged.yaml"
    path.write_text(
        "name: merged\nseeds: [0]\nsplits:\n"
        "  - &a {name: a, data: {openml: 31}, split: {by: time}, validation_size: 0.2}\n"
        "  - <<: *a\n    name: b\n    validation_size: 0.25\n"
    )
    a, b = load_suite(path).splits
    assert (a.name, b.name, b.rule.by, a.validation_size, b.validation_size) == ("a", "b", "time", 0.2, 0.25)


def test_openml_docs_give_each_deep_models_fixed_budget_patience():
    """The suite's comment, its results page and the research log state the patience the
    `fixed-budget` models are built with: the `models:` parameters set no patience, so
    TabM keeps its class default (16, the TabM paper's), the others 10."""
    from pathlib import Path

    from tabmoe.registry import get_model

    patience = {
        name: get_model(name).make(**params).get_params()["n_iter_no_change"]
        for name, params in OPENML.models.items()
        if params.get("early_stopping") is True
    }
    assert patience == {"tabmoe": 10, "ft_transformer": 10, "tab_transformer": 10, "tabm": 16}
    root = Path(__file__).resolve().parents[1]
    for path in (
        "tabmoe/bench/suites/openml-ood.yaml",
        "docs/results-openml-ood.md",
        "docs/research.md",
    ):
        text = " ".join((root / path).read_text().split())
        assert "patience 10, TabM 16" in text, path


@pytest.mark.parametrize("key, value", [("models", {}), ("models", None), ("protocols", []), ("protocols", None)])
def test_an_empty_models_or_protocols_entry_is_refused(key, value):
    """``models: {}`` (or ``models:`` with every entry commented out) ran every installed
    model, each tuned, where ``--models ""`` is refused as naming nothing."""
    base = {"name": "x", "seeds": [0], "splits": [{"name": "a", "data": {"openml": 31}, "split": {"by": "time"}}]}
    with pytest.raises(ValueError, match=rf"suite.{key}: empty, so it names no {key[:-1]}; name some, or leave the key out"):
        suite_from_dict({**base, key: value})
    assert suite_from_dict(base).models == {} and suite_from_dict(base).protocols == ()  # absent: the defaults
