"""Split rules, part sizes, seeding, and the leakage assertions (which must be able to fail)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy import sparse

from tabmoe.data import Table, split_rules
from tabmoe.data._cluster_reference import table_fingerprint, write_reference
from tabmoe.data.sources import FileSource, OpenMLSource, SimulationSource
from tabmoe.data.splits import (
    ClusterSplit,
    LeakageError,
    SplitDefinition,
    ThresholdSplit,
    TimeSplit,
    ValueSplit,
    check_split,
    rule_from_dict,
)

N = 600


@pytest.fixture
def table() -> Table:
    rng = np.random.RandomState(0)
    region = rng.choice(["north", "south", "east", "west"], size=N)
    age = rng.randint(18, 80, size=N).astype(float)
    age[:5] = np.nan
    group = np.where(rng.rand(N) < 0.5, "a", "b")
    label = np.where((region == "north") ^ (rng.rand(N) < 0.2), "yes", "no")
    data = pd.DataFrame({
        "region": pd.Categorical(region),
        "group": pd.Categorical(group),
        "age": age,
        "month": pd.Categorical(rng.choice(["jan", "feb", "mar"], size=N), categories=["jan", "feb", "mar"], ordered=True),
        "label": pd.Categorical(label),
    })
    return Table(data=data, target="label", name="toy", source="test")


def define(rule, **kwargs) -> SplitDefinition:
    return SplitDefinition(name="t", data=SimulationSource(1, 0.1, 0.0), rule=rule, **kwargs)


def test_value_split_parts_domain_and_sizes(table):
    split = define(ValueSplit("region", ood_values=("north",))).make(3, table=table)
    n_ood = int((table.data["region"] == "north").sum())
    assert len(split.ood_test) == n_ood and split.ood_validation is None
    n_id = N - n_ood
    assert len(split.id_test) == int(np.ceil(0.15 * n_id))
    assert len(split.train) + len(split.validation) + len(split.id_test) == n_id
    assert abs(len(split.validation) - 0.15 * n_id) <= 2
    for part in split.parts.values():
        assert "region" not in part.columns and "label" in part.columns
    assert set(table.data.loc[split.train.index, "region"]) == {"south", "east", "west"}
    assert split.excluded == 0 and split.domain_label == "region"


def test_value_split_id_values_only_and_keep_domain(table):
    split = define(ValueSplit("region", id_values=("south", "east")), keep_domain=True).make(0, table=table)
    assert set(split.ood_test["region"]) == {"north", "west"}
    assert set(split.train["region"]) <= {"south", "east"}
    # the kept domain column is a feature: the model must extrapolate to its held-out values
    # (features() removed it too, so no model ever saw it)
    assert "region" in split.features("ood_test").columns and "label" not in split.features("train").columns
    assert set(split.features("ood_test")["region"]) == {"north", "west"}
    dropped = define(ValueSplit("region", id_values=("south", "east"))).make(0, table=table)
    assert "region" not in dropped.features("train").columns


def test_value_split_excludes_unlisted_and_missing(table):
    rule = ValueSplit("region", ood_values=("north",), id_values=("south",))
    split = define(rule).make(0, table=table)
    assert split.excluded == int(table.data["region"].isin(["east", "west"]).sum())
    ages = define(ThresholdSplit("age", threshold=60)).make(0, table=table)
    assert ages.excluded == 5  # NaN ages have no domain


def test_values_match_by_string_form(table):
    data = table.data.assign(code=np.arange(N) % 3)
    numbered = Table(data=data, target="label", name="toy", source="test")
    split = define(ValueSplit("code", ood_values=("2",))).make(0, table=numbered)
    assert set(numbered.data.loc[split.ood_test.index, "code"]) == {2}


def test_value_split_errors(table):
    with pytest.raises(ValueError, match=r"ood_values \['nort'\] do not occur in column 'region'"):
        define(ValueSplit("region", ood_values=("nort",))).make(0, table=table)
    with pytest.raises(ValueError, match="column 'town' not in table 'toy'"):
        define(ValueSplit("town", ood_values=("x",))).make(0, table=table)
    with pytest.raises(ValueError, match="is the label"):
        define(ValueSplit("label", ood_values=("yes",))).make(0, table=table)
    with pytest.raises(ValueError, match="in both id_values and ood_values"):
        define(ValueSplit("region", ood_values=("north",), id_values=("north", "south"))).make(0, table=table)
    with pytest.raises(ValueError, match="quote them"):
        ValueSplit("region", ood_values=(False,))
    with pytest.raises(ValueError, match="give ood_values, id_values or both"):
        ValueSplit("region")


def test_threshold_split(table):
    split = define(ThresholdSplit("age", quantile=0.75)).make(0, table=table)
    cut = table.data["age"].quantile(0.75)
    assert (table.data.loc[split.ood_test.index, "age"] > cut).all()
    assert (table.data.loc[split.train.index, "age"] <= cut).all()
    below = define(ThresholdSplit("age", threshold=30, ood_side="below")).make(0, table=table)
    assert table.data.loc[below.ood_test.index, "age"].max() < 30
    assert below.ordered
    with pytest.raises(ValueError, match="not numeric"):
        define(ThresholdSplit("region", threshold=1)).make(0, table=table)
    with pytest.raises(ValueError, match="exactly one of threshold, quantile"):
        ThresholdSplit("age", threshold=3, quantile=0.5)
    with pytest.raises(ValueError, match="no OOD rows"):
        define(ThresholdSplit("age", threshold=1000)).make(0, table=table)


def test_time_split_row_order_and_column(table):
    split = define(TimeSplit(ood_fraction=0.25)).make(0, table=table)
    assert split.ood_test.index.min() == int(N * 0.75) and len(split.ood_test) == N // 4
    assert split.train.index.max() < split.ood_test.index.min()
    by_month = define(TimeSplit("month", ood_fraction=0.3)).make(0, table=table)
    assert set(table.data.loc[by_month.ood_test.index, "month"]) == {"mar"}  # ties stay together
    assert "mar" not in set(table.data.loc[by_month.train.index, "month"])
    with pytest.raises(ValueError, match="unordered category"):
        define(TimeSplit("region")).make(0, table=table)


def test_a_time_split_whose_cut_falls_on_the_earliest_time_says_why_it_has_no_id_rows():
    """80 of 100 rows in 2019: ood_fraction 0.3 put the cut on 2019, every row tied at it went
    to OOD, and the error said only "time split on 'year': no ID rows"."""
    data = pd.DataFrame({"year": [2019] * 80 + [2020] * 20, "x": np.arange(100) % 7, "y": ["a", "b"] * 50})
    table = Table(data, "y", "years", "test")
    assert len(define(TimeSplit("year", ood_fraction=0.2)).make(0, table=table).ood_test) == 20
    with pytest.raises(ValueError, match=r"^split 't': time split on 'year': no ID rows: 80 of 100 rows share the "
                                         r"earliest time 2019, where the cut for ood_fraction 0\.3 falls, and rows "
                                         r"tied at the cut all go to OOD; only 20 rows \(20\.0%\) are later$"):
        define(TimeSplit("year", ood_fraction=0.3)).make(0, table=table)


def test_cluster_split_is_deterministic_and_ranked_by_size(table):
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,), columns=("region", "age"), random_state=1)
    a = define(rule).make(0, table=table)
    b = define(rule).make(5, table=table)
    assert a.ood_test.index.equals(b.ood_test.index)  # the seed moves ID parts only
    sizes = a.domain.value_counts()
    assert sizes.index[sizes.argmax()] == 0 and sizes.loc[2] == sizes.min()
    assert a.domain_column is None and "region" in a.train.columns  # no column to drop
    with pytest.raises(ValueError, match="leaving at least one ID cluster"):
        ClusterSplit(n_clusters=2, ood_clusters=(0, 1))
    with pytest.raises(ValueError, match="keep_domain needs a rule with a domain column"):
        define(rule, keep_domain=True)


def test_a_cluster_reference_pins_the_clusters_whatever_kmeans_gives(table, tmp_path):
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,), columns=("region", "age"), random_state=1)
    computed = rule.compute_ranks(table)
    path = tmp_path / "toy.clusters.txt"
    write_reference(path, computed, "toy")
    pinned = dataclasses.replace(rule, reference=str(path))
    assert repr(pinned) == repr(rule) and pinned == rule  # the runs' config hash is unchanged
    assert define(pinned).make(0, table=table).ood_test.index.equals(define(rule).make(0, table=table).ood_test.index)
    other = (computed + 1) % 3  # another platform's KMeans, as it were
    write_reference(path, other, "toy")
    with pytest.warns(RuntimeWarning, match=f"puts {N} of {N} rows in another cluster than the reference"):
        split = define(pinned).make(0, table=table)
    assert (split.domain == other[split.domain.index]).all()
    write_reference(path, computed, "toy", table_fingerprint(table.data.iloc[::-1]))  # rows reordered
    with pytest.raises(ValueError, match="was written for another table"):
        define(pinned).make(0, table=table)
    write_reference(path, computed, "toy", table_fingerprint(table.data))
    assert define(pinned).make(0, table=table).ood_test.index.equals(define(rule).make(0, table=table).ood_test.index)
    write_reference(path, computed[:-1], "toy")
    with pytest.raises(ValueError, match=f"holds {N - 1} rows, the table has {N}"):
        define(pinned).make(0, table=table)
    loaded = rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "reference": path.name},
                            base_dir=tmp_path)
    assert loaded.reference == str(path.resolve())
    with pytest.raises(ValueError, match="reference file not found: .*absent.txt"):
        rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "reference": "absent.txt"},
                       base_dir=tmp_path)


def test_a_cluster_reference_under_the_users_home_is_found(table, tmp_path, monkeypatch):
    """A suite's `reference: ~/toy.clusters.txt` was read as "<suite dir>/~/toy.clusters.txt"
    ("reference file not found"), and `ClusterSplit(reference="~/...")` as a folder named `~`."""
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,), columns=("region", "age"), random_state=1)
    monkeypatch.setenv("HOME", str(tmp_path))
    write_reference(tmp_path / "toy.clusters.txt", rule.compute_ranks(table), "toy")
    suite_dir = tmp_path / "suites"
    suite_dir.mkdir()
    loaded = rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "reference": "~/toy.clusters.txt"},
                            base_dir=suite_dir)
    assert loaded.reference == str((tmp_path / "toy.clusters.txt").resolve())
    in_python = dataclasses.replace(rule, reference="~/toy.clusters.txt")
    assert define(in_python).make(0, table=table).ood_test.index.equals(define(rule).make(0, table=table).ood_test.index)


def test_seeds_change_id_partition_not_ood_set(table):
    definition = define(ValueSplit("region", ood_values=("north",)))
    a, b, c = definition.make(0, table=table), definition.make(0, table=table), definition.make(1, table=table)
    assert a.train.index.equals(b.train.index)
    assert not a.train.index.equals(c.train.index)
    assert a.ood_test.index.equals(c.ood_test.index)


def test_parts_are_label_stratified(table):
    split = define(ValueSplit("region", ood_values=("north",)), validation_size=0.2, id_test_size=0.2).make(0, table=table)
    share = {name: (part["label"] == "yes").mean() for name, part in split.parts.items() if "ood" not in name}
    assert max(share.values()) - min(share.values()) < 0.03


def test_ood_validation_and_zero_sizes(table):
    definition = define(ValueSplit("region", ood_values=("north",)), ood_validation_size=0.5)
    split = definition.make(0, table=table)
    assert abs(len(split.ood_validation) - len(split.ood_test)) <= 1
    whole = define(ValueSplit("region", ood_values=("north",)), validation_size=0, id_test_size=0).make(0, table=table)
    assert whole.validation.empty and whole.id_test.empty
    assert whole.train.index.is_monotonic_increasing


@pytest.mark.parametrize("key,value", [("validation_size", 1.0), ("id_test_size", -0.1), ("ood_validation_size", "x")])
def test_definition_validates_sizes(key, value):
    with pytest.raises(ValueError, match=key):
        define(ValueSplit("region", ood_values=("north",)), **{key: value})
    with pytest.raises(ValueError, match="must be < 1"):
        define(ValueSplit("region", ood_values=("north",)), validation_size=0.5, id_test_size=0.5)


@pytest.mark.parametrize("value", ["false", "no", 0, None])
def test_keep_domain_must_be_a_boolean(value):
    """A quoted "false" is a true string: it kept the domain column, silently."""
    with pytest.raises(ValueError, match=r"split 't': keep_domain must be true or false"):
        define(ValueSplit("region", ood_values=("north",)), keep_domain=value)


def test_a_rule_error_at_make_names_the_split(table):
    """In a suite of many splits, 'values split: ood_values [...] do not occur' named no split."""
    with pytest.raises(ValueError, match=r"^split 't': values split: ood_values \['nowhere'\] do not occur"):
        define(ValueSplit("region", ood_values=("nowhere",))).make(0, table=table)


def test_a_load_error_at_make_names_the_split(tmp_path):
    """Two splits of one file with different targets: `tabmoe-bench shift-report` said only
    "target column 'klass' not in .../t.csv; columns are [...]", naming no split."""
    path = tmp_path / "t.csv"
    path.write_text("g,x,class\n" + "".join(f"{'ab'[i % 2]},{i},{'pq'[i % 3 % 2]}\n" for i in range(40)))
    bad = SplitDefinition("wrong-target", FileSource(str(path), target="klass"), ValueSplit("g", ood_values=("a",)))
    with pytest.raises(ValueError, match=r"^split 'wrong-target': target column 'klass' not in .*t\.csv; columns are"):
        bad.make(0)
    assert len(dataclasses.replace(bad, data=FileSource(str(path), target="class")).make(0).ood_test) == 20


def test_a_definition_without_a_data_source_says_to_pass_the_table(table):
    """``data=None`` (docs/examples/python_split.py: the table is passed to make) made
    ``make(0)`` and ``load()`` without a table raise "'NoneType' object has no attribute 'load'"."""
    definition = dataclasses.replace(define(ValueSplit("region", ood_values=("north",))), data=None)
    for call in (lambda: definition.make(0), definition.load):
        with pytest.raises(ValueError, match=r"^split 't': no data source \(data=None\).*make\(seed, table=\.\.\.\)"):
            call()
    assert len(definition.make(0, table=table).ood_test) == (table.data["region"] == "north").sum()


def _broken(split, **changes):
    return dataclasses.replace(split, **changes)


def test_leakage_assertions_catch_violations(table):
    split = define(ValueSplit("region", ood_values=("north",))).make(0, table=table)
    check_split(split)
    shared_row = dict(split.parts, ood_test=pd.concat([split.ood_test, split.train.iloc[:1]]))
    with pytest.raises(LeakageError, match="shared row index"):
        check_split(_broken(split, parts=shared_row))
    overlap = split.domain.copy()
    overlap.loc[split.ood_test.index[0]] = table.data.loc[split.train.index[0], "region"]
    with pytest.raises(LeakageError, match="occur in both ID and OOD"):
        check_split(_broken(split, domain=overlap))
    kept = dict(split.parts, train=table.data.loc[split.train.index])
    with pytest.raises(LeakageError, match="still has the domain column 'region'"):
        check_split(_broken(split, parts=kept))
    with pytest.raises(LeakageError, match="part ood_test is empty"):
        check_split(_broken(split, parts=dict(split.parts, ood_test=split.ood_test.iloc[:0])))


def test_leakage_assertion_catches_interleaved_ranges(table):
    split = define(ThresholdSplit("age", threshold=50)).make(0, table=table)
    swapped = split.domain.copy()
    swapped.loc[split.train.index[0]] = 200.0  # an ID age above every OOD age, as a value
    swapped.loc[split.ood_test.index[0]] = 10.0  # distinct from all ID values, but in their range
    with pytest.raises(LeakageError, match="interleave"):
        check_split(_broken(split, domain=swapped))


def test_rule_and_definition_from_dict(tmp_path):
    rule = rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [1]})
    assert rule == ClusterSplit(3, (1,))
    with pytest.raises(ValueError, match=r"\(by: values\): unknown key\(s\) \['ood'\]"):
        rule_from_dict({"by": "values", "column": "a", "ood": ["x"]})
    with pytest.raises(ValueError, match="needs by: one of"):
        rule_from_dict({"by": "random"})
    definition = SplitDefinition.from_dict(
        {"name": "s", "data": {"file": "x.csv", "target": "y"}, "split": {"by": "time"}, "seeds": [3, 4]},
        defaults={"validation_size": 0.1},
        base_dir=tmp_path,
    )
    assert definition.data == FileSource(str((tmp_path / "x.csv").resolve()), "y")
    assert definition.validation_size == 0.1 and definition.seeds == (3, 4)
    assert SplitDefinition.from_dict({"name": "o", "data": {"openml": 31}, "split": {"by": "time"}}).data == OpenMLSource(31)
    with pytest.raises(ValueError, match=r"split 's': unknown key\(s\) \['seed'\]"):
        SplitDefinition.from_dict({"name": "s", "data": {"openml": 31}, "split": {"by": "time"}, "seed": 1})
    with pytest.raises(ValueError, match="openml must be a positive integer"):
        SplitDefinition.from_dict({"name": "s", "data": {"openml": "adult"}, "split": {"by": "time"}})


@pytest.mark.parametrize("spec", [
    {"by": "values", "column": "region", "ood_values": ["north"], "id_values": ["south", "east"]},
    {"by": "cluster", "n_clusters": 3, "ood_clusters": [1], "columns": ["age", "group"]},
])
def test_a_rule_built_in_python_with_lists_is_the_suite_files_rule(spec):
    """Annotated tuples and made tuples by rule_from_dict, lists given in Python stayed lists:
    the rule was unhashable and its repr (a run's config hash) was not the suite file's."""
    fields = {k: v for k, v in spec.items() if k != "by"}
    built = split_rules.RULES[spec["by"]](**fields)
    assert built == rule_from_dict(spec) and repr(built) == repr(rule_from_dict(spec))
    assert hash(built) == hash(rule_from_dict(spec))


def test_a_file_source_built_in_python_with_a_list_is_the_suite_files_source(tmp_path):
    # unhashable (the runner keeps each source's digest by source), and settings() recorded
    # "categorical=['g']" where the suite file's same table says ('g',)
    built = FileSource(str(tmp_path / "t.csv"), "class", categorical=["g"])
    parsed = SplitDefinition.from_dict(
        {"name": "s", "data": {"file": "t.csv", "target": "class", "categorical": ["g"]}, "split": {"by": "time"}},
        base_dir=tmp_path,
    ).data
    assert built == parsed and built.settings() == parsed.settings() and hash(built) == hash(parsed)


def test_a_split_entrys_key_errors_name_the_yaml_keys():
    """The unknown-key error listed the dataclass field `rule` (refused in a suite file) and
    not `split`; an entry with `rule:` instead of `split:` was told `missing 'split'`."""
    entry = {"name": "s", "data": {"openml": 31}, "split": {"by": "time"}}
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['rationle'\]; allowed are \[.*'split'") as caught:
        SplitDefinition.from_dict({**entry, "rationle": "typo"})
    assert "'rule'" not in str(caught.value)
    with pytest.raises(ValueError, match=r"write the rule under 'split:', not 'rule:'"):
        SplitDefinition.from_dict({"name": "s", "data": {"openml": 31}, "rule": {"by": "time"}})


def test_too_few_rows_to_carve_names_the_part(table):
    data = table.data.copy()
    data["site"] = np.where(data.index == 0, "new", "old")
    lonely = Table(data=data, target="label", name="toy", source="test")
    with pytest.raises(ValueError, match="split 't' ood_validation: carving 1 of 1 rows"):
        define(ValueSplit("site", ood_values=("new",)), ood_validation_size=0.5).make(0, table=lonely)


def test_max_id_rows_caps_id_parts_keeps_ood_whole(table):
    rule = ValueSplit("region", ood_values=("north",))
    whole = define(rule).make(3, table=table)
    capped = define(rule, max_id_rows=200).make(3, table=table)
    id_parts = ("train", "validation", "id_test")
    assert sum(len(capped.parts[p]) for p in id_parts) == 200
    assert len(capped.ood_test) == len(whole.ood_test)
    assert len(capped.id_test) == 30 and abs(len(capped.validation) - 30) <= 1
    # stratified: the label mix of the kept ID rows follows that of all ID rows
    kept = pd.concat([capped.parts[p] for p in id_parts])["label"].value_counts(normalize=True)
    every = pd.concat([whole.parts[p] for p in id_parts])["label"].value_counts(normalize=True)
    assert np.allclose(kept.sort_index(), every.sort_index(), atol=0.01)
    # the sample follows the seed; a cap above the ID size changes nothing
    other = define(rule, max_id_rows=200).make(4, table=table)
    assert not capped.train.index.equals(other.train.index)
    roomy = define(rule, max_id_rows=10_000).make(3, table=table)
    assert roomy.train.index.equals(whole.train.index)
    few_ood = define(rule, max_ood_rows=50).make(3, table=table)
    assert len(few_ood.ood_test) == 50 and few_ood.train.index.equals(whole.train.index)


@pytest.mark.parametrize("cap", [0, 5, 2.5, True, "100"])
@pytest.mark.parametrize("key", ["max_id_rows", "max_ood_rows"])
def test_row_caps_are_validated(key, cap):
    with pytest.raises(ValueError, match=key):
        define(ValueSplit("region", ood_values=("north",)), **{key: cap})


@pytest.mark.parametrize(("n_levels", "kind"), [(2, np.ndarray), (20, sparse.csr_matrix)])
def test_cluster_split_ignores_sklearns_pandas_output(monkeypatch, n_levels, kind):
    # transform_output="pandas" made the one-hot encoder refuse its sparse output; the fix
    # must keep the features KMeans sees (sparse or dense) and so the clusters as they were
    rng = np.random.RandomState(0)
    data = pd.DataFrame({
        "region": pd.Categorical(rng.choice([f"r{i}" for i in range(n_levels)], size=N)),
        "age": np.where(rng.rand(N) < 0.05, np.nan, rng.randint(18, 80, size=N).astype(float)),
        "label": pd.Categorical(rng.choice(["yes", "no"], size=N)),
    })
    table = Table(data=data, target="label", name="toy", source="test")
    seen = []

    class Recording(split_rules.KMeans):
        def fit_predict(self, X, *args, **kwargs):
            seen.append(type(X))
            return super().fit_predict(X, *args, **kwargs)

    monkeypatch.setattr(split_rules, "KMeans", Recording)
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,))
    expected = rule.assign(table).domain
    with sklearn.config_context(transform_output="pandas"):
        domain = rule.assign(table).domain
    pd.testing.assert_series_equal(domain, expected)
    assert seen == [kind, kind]


@pytest.mark.parametrize(("ood", "side"), [("b", "OOD"), ("a", "ID")])
def test_a_side_with_no_labelled_rows_is_named_not_reported_as_a_leak(ood, side):
    """All-unlabelled OOD rows read as "LeakageError: part ood_test is empty" (ID ones as
    "carving 0 of 0 rows")."""
    rng = np.random.RandomState(0)
    group = np.array(["a", "b"] * 60)
    label = rng.choice(["p", "q"], 120).astype(object)
    label[group == "b"] = None
    table = Table(pd.DataFrame({"g": group, "x": rng.normal(size=120), "y": label}), "y", "holes", "test")
    definition = SplitDefinition(name="unl", data=SimulationSource(1, 0.1, 0.0), rule=ValueSplit("g", ood_values=(ood,)))
    with pytest.raises(ValueError, match=rf"split 'unl': no labelled {side} rows \(all 60 {side} rows of table 'holes'"):
        definition.make(0, table=table)


def test_a_python_bool_in_a_values_rule_is_told_what_matches_a_bool_column():
    # ValueSplit("flag", ood_values=[True]) in Python said only "YAML reads yes/no/on/off as
    # booleans, quote them ('no')"; a bool column's values match as "True"/"False"
    data = pd.DataFrame({"flag": [True, False, True, False], "label": ["a", "b", "a", "b"]})
    flags = Table(data, "label", "flags", "test")
    with pytest.raises(ValueError, match=r"ood_values has booleans \[True\]; values match by their string form, "
                                         r"so list a bool column's values as strings \(ood_values=\['True'\]\)"):
        ValueSplit("flag", ood_values=[True])
    assert ValueSplit("flag", ood_values=["True"]).assign(flags).ood.tolist() == [True, False, True, False]


@pytest.mark.parametrize("dtype", ["boolean", "string"])
def test_cluster_split_takes_nominal_columns_missing_as_pd_na(dtype):
    """A nullable boolean or string column with a missing value (``pd.NA``) failed in the
    one-hot encoder: "Encoders require their input argument must be uniformly strings or
    numbers. Got ['NAType', 'bool']". Missing is its own value, as NaN and None are."""
    rng = np.random.RandomState(0)
    flags = rng.rand(N) < 0.3
    values = flags if dtype == "boolean" else np.where(flags, "u", "v")
    data = pd.DataFrame({
        "flag": pd.array(values, dtype=dtype),
        "x": rng.normal(size=N),
        "label": rng.choice(["yes", "no"], size=N),
    })
    data.loc[:9, "flag"] = pd.NA
    table = Table(data=data, target="label", name="toy", source="test")
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,))
    as_object = Table(data=data.astype({"flag": object}).replace({pd.NA: None}), target="label", name="toy", source="test")
    assert as_object.data["flag"].map(type).isin([bool, str, type(None)]).all()
    np.testing.assert_array_equal(rule.compute_ranks(table), rule.compute_ranks(as_object))


@pytest.mark.parametrize("columns", [None, (3, 2)])
def test_cluster_split_of_a_table_with_integer_column_names(columns):
    """pd.DataFrame(array) names its columns 0, 1, ...; the ColumnTransformer read those
    names as positions, so with the label in column 0 (or a `columns` subset) the split
    failed: "all features must be in [0, 2] or [-3, 0]". It clusters as the same table
    with its names as text does."""
    rng = np.random.RandomState(0)
    data = pd.DataFrame({
        0: rng.choice(["yes", "no"], N), 1: rng.normal(size=N),
        2: rng.choice(["u", "v", "w"], N), 3: rng.normal(size=N),
    })
    named = data.rename(columns=str)
    rule = ClusterSplit(n_clusters=3, ood_clusters=(2,), columns=columns)
    text_rule = dataclasses.replace(rule, columns=None if columns is None else tuple(map(str, columns)))
    np.testing.assert_array_equal(
        rule.compute_ranks(Table(data=data, target=0, name="ints", source="test")),
        text_rule.compute_ranks(Table(data=named, target="0", name="text", source="test")),
    )
