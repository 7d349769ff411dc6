"""Split specs: integer values in float-read columns, and clear errors for mistyped keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tabmoe.data import Table
from tabmoe.data._spec import parse_seeds
from tabmoe.data.sources import SimulationSource
from tabmoe.data.splits import (
    ClusterSplit,
    SplitDefinition,
    ThresholdSplit,
    TimeSplit,
    ValueSplit,
    rule_from_dict,
)


@pytest.fixture
def region_csv(tmp_path: Path) -> Path:
    """Region codes 0, 1, 2 with one missing cell: pandas reads the column as float64."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "region": np.tile([0, 1, 2], 40).astype(object),
        "x": rng.normal(size=120),
        "y": rng.choice(["a", "b"], 120),
    })
    frame.loc[7, "region"] = None
    frame.to_csv(tmp_path / "r.csv", index=False)
    assert pd.read_csv(tmp_path / "r.csv")["region"].dtype == np.float64
    return tmp_path


def values_split(base_dir: Path, **rule) -> SplitDefinition:
    spec = {"name": "r", "data": {"file": "r.csv", "target": "y"}, "split": {"by": "values", "column": "region", **rule}}
    return SplitDefinition.from_dict(spec, base_dir=base_dir)


def test_integer_value_matches_an_integer_column_read_as_float(region_csv):
    split = values_split(region_csv, ood_values=[2]).make(0)
    table = pd.read_csv(region_csv / "r.csv")
    assert len(split.ood_test) == int((table["region"] == 2).sum()) == 40
    assert set(split.domain[~split.domain.index.isin(split.ood_test.index)]) == {0.0, 1.0}
    assert split.excluded == 1


def test_a_value_a_many_valued_column_lacks_lists_some_of_its_values_not_all():
    """A typo in a values split on a numeric column of bank-marketing (7,168 distinct values)
    raised a 71 KB message listing every one; 50 are listed now (`SHOWN_VALUES`)."""
    table = Table(pd.DataFrame({"x": np.arange(2000.0), "y": ["a", "b"] * 1000}), "y", "wide", "test")
    with pytest.raises(ValueError) as info:
        ValueSplit("x", ood_values=("typo",)).assign(table)
    message = str(info.value)
    assert len(message) < 1500, len(message)
    assert "ood_values ['typo'] do not occur in column 'x'; it holds 2000 distinct values, the first 50 in text order: ['0.0', '1.0', '10.0'," in message
    few = Table(pd.DataFrame({"x": np.arange(50), "y": ["a", "b"] * 25}), "y", "few", "test")
    with pytest.raises(ValueError, match=r"its values are \['0', '1', '10', .*'49', .*'9'\]$"):
        ValueSplit("x", ood_values=("typo",)).assign(few)


def test_integral_id_values_and_strings_match_too(region_csv):
    split = values_split(region_csv, ood_values=[2.0], id_values=["0", 1]).make(0)
    assert len(split.ood_test) == 40 and split.excluded == 1
    with pytest.raises(ValueError, match=r"ood_values \[3\] do not occur in column 'region'; "
                       r"its values are \['0.0', '1.0', '2.0'\]"):  # as the column holds them
        values_split(region_csv, ood_values=[3]).make(0)
    # a value quoted as the float column prints it matches too, as before
    split = values_split(region_csv, ood_values=["2.0"]).make(0)
    assert len(split.ood_test) == 40


def test_string_categories_still_match_by_their_string_form():
    data = pd.DataFrame({"code": ["1.0", "2.0", "x"] * 20, "y": ["a", "b"] * 30})
    table = Table(data=data, target="y", name="codes", source="test")
    assignment = ValueSplit("code", ood_values=(1.0,)).assign(table)
    assert set(assignment.domain[assignment.ood]) == {"1.0"}
    assignment = ValueSplit("code", ood_values=("x",)).assign(table)
    assert set(assignment.domain[assignment.ood]) == {"x"}


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"by": "values", "column": "region", "ood_values": "north"}, "ood_values must be a list, got 'north'"),
        ({"by": "values", "column": "region", "id_values": "north"}, "id_values must be a list, got 'north'"),
        ({"by": "cluster", "n_clusters": 3, "ood_clusters": 1}, "ood_clusters must be a list, got 1"),
        ({"by": "cluster", "n_clusters": 3, "ood_clusters": ["1"]}, r"ood_clusters \['1'\] must be"),
        ({"by": "cluster", "n_clusters": 3, "ood_clusters": [1], "columns": "x"}, "columns must be a list, got 'x'"),
        ({"by": "time", "ood_fraction": "0.2"}, "ood_fraction must be a number in \\(0, 1\\), got '0.2'"),
        ({"by": "time", "ood_fraction": True}, "ood_fraction must be a number"),
        ({"by": "threshold", "column": "x", "threshold": "1"}, "threshold must be a finite number, got '1'"),
        ({"by": "threshold", "column": "x", "threshold": float("nan")}, "threshold must be a finite number"),
        ({"by": "threshold", "column": "x", "quantile": "0.5"}, "quantile must be a finite number, got '0.5'"),
    ],
)
def test_mistyped_rule_keys_are_refused_at_parsing_naming_the_key(rule, message):
    spec = {"name": "r", "data": {"file": "r.csv", "target": "y"}, "split": rule}
    with pytest.raises(ValueError, match=message):
        SplitDefinition.from_dict(spec, base_dir=".")


def test_rules_built_in_python_check_their_keys_too():
    with pytest.raises(ValueError, match="ood_values must be a list"):
        ValueSplit("region", ood_values="north")
    with pytest.raises(ValueError, match="ood_clusters must be a list"):
        ClusterSplit(3, 1)
    with pytest.raises(ValueError, match="ood_fraction must be a number"):
        TimeSplit(ood_fraction="0.2")
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        ThresholdSplit("x", threshold="1")
    assert ThresholdSplit("x", threshold=1).threshold == 1  # an int is a number


@pytest.mark.parametrize("seeds", [[-1], [0, 2**32], [True]])
def test_seeds_out_of_numpy_range_are_refused(seeds):
    with pytest.raises(ValueError, match="suite.seeds"):
        parse_seeds(seeds, "suite.seeds")


def test_seed_range_ends_are_accepted():
    assert parse_seeds([0, 2**32 - 1], "suite.seeds") == (0, 2**32 - 1)


def test_seeds_of_a_split_entry_are_checked(region_csv):
    spec = {
        "name": "r",
        "data": {"file": "r.csv", "target": "y"},
        "seeds": [-1],
        "split": {"by": "values", "column": "region", "ood_values": [2]},
    }
    with pytest.raises(ValueError, match=r"split 'r'.seeds: seeds must be in \[0, 2\*\*32\), got \[-1\]"):
        SplitDefinition.from_dict(spec, base_dir=region_csv)


@pytest.fixture
def empty_column_table() -> Table:
    rng = np.random.default_rng(0)
    data = pd.DataFrame({
        "empty": np.full(60, np.nan),
        "x": rng.normal(size=60),
        "colour": pd.Categorical(rng.choice(["red", "blue"], 60)),
        "y": rng.choice(["a", "b"], 60),
    })
    return Table(data=data, target="y", name="holes", source="test")


def test_cluster_split_on_an_all_missing_column_names_it(empty_column_table):
    with pytest.raises(ValueError, match=r"cluster split: numeric column\(s\) \['empty'\] .* no values"):
        ClusterSplit(2, (1,), columns=("empty",)).assign(empty_column_table)
    with pytest.raises(ValueError, match=r"\['empty'\]"):
        ClusterSplit(2, (1,), columns=("empty", "x")).assign(empty_column_table)


def test_cluster_split_by_default_skips_an_all_missing_column(empty_column_table):
    assignment = ClusterSplit(2, (1,)).assign(empty_column_table)
    assert assignment.ood.any() and not assignment.ood.all()
    only_empty = Table(
        data=empty_column_table.data[["empty", "y"]], target="y", name="holes", source="test"
    )
    with pytest.raises(ValueError, match=r"\['empty'\] of table 'holes' have no values"):
        ClusterSplit(2, (1,)).assign(only_empty)


def test_time_and_threshold_splits_on_an_all_missing_column_name_it(empty_column_table):
    """A time split on a column without values was an IndexError ("single positional indexer
    is out-of-bounds"); a threshold split said "at nan: no OOD rows"."""
    with pytest.raises(ValueError, match=r"time split: column 'empty' of table 'holes' has no values"):
        TimeSplit(column="empty").assign(empty_column_table)
    with pytest.raises(ValueError, match=r"threshold split: column 'empty' of table 'holes' has no values"):
        ThresholdSplit(column="empty", quantile=0.5).assign(empty_column_table)
    assert TimeSplit(column="x").assign(empty_column_table).ood.sum() == 12


def test_a_seed_listed_twice_is_refused_naming_it():
    """[0, 0, 1] planned every run of seed 0 twice (the CLI's --seeds drops repeats)."""
    with pytest.raises(ValueError, match=r"suite.seeds: seeds \[0\] are listed more than once"):
        parse_seeds([0, 0, 1], "suite.seeds")


def test_an_empty_columns_list_of_a_cluster_split_is_named():
    with pytest.raises(ValueError, match="cluster split: columns is empty"):
        rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "columns": []})


@pytest.mark.parametrize("seed", ["a", True, -1, 2**32, None, 1.5])
def test_a_bad_random_state_of_a_cluster_split_is_named(seed):
    """KMeans' own message named neither the cluster split nor its key."""
    with pytest.raises(ValueError, match=r"cluster split: random_state must be an int"):
        rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "random_state": seed})


def test_simulation_options_out_of_range_or_of_the_wrong_type_are_named():
    """num_corefea "abc" failed each run with "can't multiply sequence by non-int of type
    'str'", 6 with a broadcast error; corr 2 sampled from a covariance that is not positive
    semi-definite (numpy warns and samples anyway)."""
    import inspect

    from tabmoe.data.paper import correlation_shift_simulation
    from tabmoe.data.sources import SIMULATION_FEATURES, source_from_dict

    assert inspect.signature(correlation_shift_simulation).parameters["d"].default == SIMULATION_FEATURES
    for options, message in (
        ({"num_corefea": "abc"}, r"num_corefea must be an integer in \[0, 5\], got 'abc'"),
        ({"num_corefea": 6}, r"num_corefea must be an integer in \[0, 5\], got 6"),
        ({"corr": 2}, r"corr must be a number in \[0, 1\], got 2"),
        ({"x_noise": float("nan")}, r"x_noise must be a finite number >= 0, got nan"),
        ({"x_noise": float("inf")}, r"x_noise must be a finite number >= 0, got inf"),
    ):
        spec = {"simulation": {"num_corefea": 1, "corr": 0.9, "x_noise": 0.5, **options}}
        with pytest.raises(ValueError, match=rf"^simulation: {message}"):
            source_from_dict(spec)
    assert source_from_dict({"simulation": {"num_corefea": 5, "corr": 0.1, "x_noise": 0.0}}).corr == 0.1


def test_more_clusters_than_rows_is_refused_naming_n_clusters(empty_column_table):
    definition = SplitDefinition(
        name="too-many", data=SimulationSource(1, 0.1, 0.0), rule=ClusterSplit(61, (1,), columns=("x",))
    )
    with pytest.raises(ValueError, match=r"split 'too-many': cluster split: n_clusters=61 is more than the 60 rows"):
        definition.make(0, table=empty_column_table)


@pytest.mark.parametrize(
    ("values", "shown"),
    [([1, "1", 2], r"\[1, '1'\] all read as '1'"), ([1.0, "1", 2], r"\[1.0, '1'\] all read as '1'")],
)
@pytest.mark.parametrize("ood", [(1,), ("1",), (2,)])
def test_a_values_split_on_values_that_print_alike_is_refused(values, shown, ood):
    """An object column with the int 1 and the string "1": a rule matched one of them and the
    other's rows were silently excluded from every part."""
    data = pd.DataFrame({"code": np.array(values * 20, dtype=object), "y": ["a", "b"] * 30})
    table = Table(data=data, target="y", name="mixed", source="test")
    with pytest.raises(ValueError, match=rf"values split on 'code': .*{shown}"):
        ValueSplit("code", ood_values=ood).assign(table)


@pytest.mark.parametrize("repeated", ["g", "y"])
def test_a_table_with_a_repeated_column_name_is_refused_naming_it(repeated):
    """A repeated name made ``data[name]`` a frame: a values split on it failed with
    "'DataFrame' object has no attribute 'unique'", a repeated label made ``y`` a frame."""
    data = pd.DataFrame({"g": ["a", "b"] * 10, "x": np.arange(20.0), "y": ["p", "q"] * 10})
    data = pd.concat([data, data[[repeated]]], axis=1)
    with pytest.raises(ValueError, match=rf"table 'dup' has duplicate column names \['{repeated}'\]; rename them"):
        Table(data=data, target="y", name="dup", source="test")


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        (pd.Series(pd.date_range("2020-01-01", periods=20).strftime("%Y-%m-%d"), dtype=object), "(str|object)"),
        (pd.period_range("2020-01", periods=20, freq="M"), r"period\[M\]"),
        (pd.Series([True, False] * 10), "bool"),
    ],
)
def test_a_time_split_on_a_column_that_is_no_time_says_what_a_time_column_is(values, dtype):
    """Dates held as text were told "use a values split for nominal columns", which does not
    order rows in time."""
    data = pd.DataFrame({"when": np.asarray(values), "x": np.arange(20.0), "y": ["p", "q"] * 10})
    table = Table(data=data, target="y", name="dates", source="test")
    with pytest.raises(ValueError, match=(
        rf"time split: column 'when' has dtype {dtype}; a time column must be numeric, "
        r"datetime64 or an ordered category \(convert dates held as text with pd.to_datetime\)"
    )):
        TimeSplit(column="when").assign(table)


@pytest.mark.parametrize(
    "values, advice",
    [
        (pd.date_range("2020-01-01", periods=20), r"for the latest rows in time use a time split \(by: time, column: 'when'\)$"),
        (pd.to_timedelta(np.arange(20), unit="h"), r"convert it to numbers first$"),
    ],
)
def test_a_threshold_split_on_datetimes_or_durations_gives_advice_that_fits_them(values, advice):
    """A threshold split on a datetime64 (or timedelta64) column was told "use a values split
    for nominal columns": such a column is not nominal, and a values split does not cut it."""
    data = pd.DataFrame({"when": values, "x": np.arange(20.0), "y": ["p", "q"] * 10})
    table = Table(data=data, target="y", name="dates", source="test")
    with pytest.raises(ValueError, match=r"^threshold split: column 'when' has dtype \w+64\[\w+\], not numeric; " + advice):
        ThresholdSplit(column="when", quantile=0.8).assign(table)
    with pytest.raises(ValueError, match=r"has dtype category, not numeric; use a values split for nominal columns$"):
        ThresholdSplit(column="when", quantile=0.8).assign(Table(data.astype({"when": "category"}), "y", "dates", "test"))


@pytest.mark.parametrize("seed", [1.5, -1, 2**32, "0", True])
def test_a_bad_seed_given_to_make_is_named_with_the_split(seed, empty_column_table):
    """numpy's "Cannot cast scalar from dtype('float64') to dtype('int64')" (1.5) and "Seed
    must be between 0 and 2**32 - 1" named neither the split nor the argument; True split
    as seed 1."""
    definition = SplitDefinition(name="s", data=SimulationSource(1, 0.1, 0.0), rule=TimeSplit(column="x"))
    with pytest.raises(ValueError, match=r"split 's': seed must be an integer in \[0, 2\*\*32\), got "):
        definition.make(seed, table=empty_column_table)
    assert len(definition.make(np.int64(2**32 - 1), table=empty_column_table).ood_test) == 12


def test_a_label_column_mixing_text_and_numbers_is_named(empty_column_table):
    """Stratifying failed with "'<' not supported between instances of 'int' and 'str'"."""
    data = empty_column_table.data.assign(y=np.array([1, "b"] * 30, dtype=object))
    table = Table(data=data, target="y", name="mixed", source="test")
    definition = SplitDefinition(name="s", data=SimulationSource(1, 0.1, 0.0), rule=TimeSplit(column="x"))
    with pytest.raises(ValueError, match=(
        r"split 's': label column 'y' of table 'mixed' mixes values of types \['int', 'str'\] that "
        "cannot be ordered; convert it to one type"
    )):
        definition.make(0, table=table)
    assert len(definition.make(0, table=Table(data=data.assign(y=data.y.astype(str)), target="y",
                                              name="mixed", source="test")).ood_test) == 12


@pytest.mark.parametrize("n_rows, fraction, n_ood", [(90, 0.3, 27), (170, 0.3, 51), (100, 0.2, 20), (10, 0.25, 3)])
def test_time_split_takes_the_stated_share_of_distinct_times(n_rows, fraction, n_ood):
    """90 x (1 - 0.3) is 62.99999999999999 in floats: its floor put 28 of 90 rows in OOD."""
    data = pd.DataFrame({"t": np.arange(n_rows), "y": np.arange(n_rows) % 2})
    table = Table(data, "y", "times", "times")
    assert int(TimeSplit(column="t", ood_fraction=fraction).assign(table).ood.sum()) == n_ood


def test_a_split_whose_id_rows_hold_one_class_is_refused_naming_it():
    """It was made, and every model then failed in its own fit, naming no split."""
    data = pd.DataFrame({"t": np.arange(60), "y": ["a"] * 48 + ["a", "b"] * 6})
    definition = SplitDefinition(name="late", data=SimulationSource(1, 0.1, 0.0), rule=TimeSplit(column="t"))
    with pytest.raises(ValueError, match=r"split 'late': its ID training rows hold one class of 'y' \('a'; seed 0\)"):
        definition.make(0, table=Table(data=data, target="y", name="one", source="test"))
    two = data.assign(y=["a", "b"] * 30)
    assert len(definition.make(0, table=Table(data=two, target="y", name="two", source="test")).train) > 0
    with pytest.raises(ValueError, match=r"leaves several classes in distribution$"):  # the rule's fault
        definition.make(0, table=Table(data=data, target="y", name="one", source="test"))


@pytest.mark.parametrize("labels, shown", [((0, 1), "0"), ((1.5, 2.5), "1.5"), ((True, False), "True")])
def test_the_one_class_of_a_numeric_label_is_named_as_python_writes_it(labels, shown):
    """The label of the class was numpy's element: NumPy 2 wrote it "(np.int64(0); seed 0)"."""
    one, other = labels
    data = pd.DataFrame({"t": np.arange(60), "y": [one] * 48 + [one, other] * 6})
    definition = SplitDefinition(name="late", data=SimulationSource(1, 0.1, 0.0), rule=TimeSplit(column="t"))
    with pytest.raises(ValueError, match=rf"hold one class of 'y' \({shown}; seed 0\), and a classifier needs two"):
        definition.make(0, table=Table(data=data, target="y", name="one", source="test"))


def test_a_rare_class_carved_out_of_training_is_not_blamed_on_the_rule():
    """20 ID rows, one of class 'b': stratification needs two of each class, so the carving
    is unstratified and at seed 0 'b' lands in id_test. The error said "choose a rule that
    leaves several classes in distribution", of ID rows that hold two."""
    data = pd.DataFrame({"g": ["i"] * 20 + ["o"] * 5, "y": ["a"] * 19 + ["b"] + list("ababa")})
    definition = SplitDefinition(name="rare", data=SimulationSource(1, 0.1, 0.0), rule=ValueSplit("g", ood_values=("o",)))
    table = Table(data=data, target="y", name="rare", source="test")
    with pytest.raises(ValueError, match=r"hold one class of 'y' \('a'; seed 0\), and a classifier needs two; its ID "
                       r"rows hold 2 \('a': 19, 'b': 1\), but validation and id_test took every row of all but one"):
        definition.make(0, table=table)
    assert set(definition.make(1, table=table).train["y"]) == {"a", "b"}


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["x", "x"], r"cluster split: columns \['x'\] are listed more than once"),
        ([["x"]], r"cluster split: columns must be column names, got \[\['x'\]\]"),
    ],
)
def test_a_cluster_columns_list_with_a_repeat_or_a_nested_list_is_refused_naming_it(columns, message):
    """A column listed twice failed in make with "'DataFrame' object has no attribute
    'dtype'", a nested list with "unhashable type: 'list'", naming neither key nor column."""
    with pytest.raises(ValueError, match=message):
        rule_from_dict({"by": "cluster", "n_clusters": 3, "ood_clusters": [2], "columns": columns})


@pytest.mark.parametrize(("kind", "other"), [("datetime", "x"), ("timedelta", "x"), ("datetime", "missing")])
def test_a_cluster_split_reads_time_columns_as_numbers(kind, other):
    """A datetime or timedelta feature beside a numeric one failed with numpy's "The DType
    <class 'numpy.dtypes.Float64DType'> could not be promoted by <class
    'numpy.dtypes.DateTime64DType'>", naming no column; alone, its NaT was not imputed but
    read as -9.2e18 ns, a cluster of its own (here the held-out one, of 1 row)."""
    rng = np.random.default_rng(0)
    days = pd.Series(np.r_[np.zeros(40), np.full(20, 1000)] + rng.integers(0, 5, 60))
    when = pd.Timestamp("2020-01-01") + pd.to_timedelta(days, unit="D")
    data = pd.DataFrame({"when": when if kind == "datetime" else when - when.min()})
    if other == "x":
        data["x"] = np.r_[np.zeros(40), np.ones(20)] + rng.normal(0, 0.01, 60)
    else:
        data.loc[0, "when"] = pd.NaT
    data["y"] = rng.choice(["a", "b"], 60)
    assignment = ClusterSplit(2, (1,)).assign(Table(data=data, target="y", name="dates", source="test"))
    assert assignment.ood.sum() == 20 and assignment.ood[40:].all()


def test_a_cluster_split_on_a_column_with_infinite_values_names_it(empty_column_table):
    """The scaler's "Input X contains infinity or a value too large" named no column."""
    data = empty_column_table.data.assign(x=np.r_[np.inf, np.zeros(59)])
    with pytest.raises(ValueError, match=r"cluster split: numeric column\(s\) \['x'\] of table 'holes' hold infinite"):
        ClusterSplit(2, (1,)).assign(Table(data=data, target="y", name="holes", source="test"))


def test_a_quantile_threshold_falling_on_infinite_values_cuts_there():
    """pandas interpolates between two infinite values (inf - inf) as NaN: a cut at the 0.9
    quantile of a column whose top 20 values are inf was refused as "at nan: no OOD rows"."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"ratio": np.r_[rng.normal(size=80), np.full(20, np.inf)], "y": rng.choice(["a", "b"], 100)})
    table = Table(data=data, target="y", name="ratios", source="test")
    assignment = ThresholdSplit("ratio", quantile=0.9, ood_side="below").assign(table)
    assert assignment.label == "ratio below inf" and assignment.ood.sum() == 80
    data.loc[:49, "ratio"], data.loc[50:, "ratio"] = -np.inf, np.inf
    with pytest.raises(ValueError, match=r"the 0.5 quantile of column 'ratio' falls between -inf and inf"):
        ThresholdSplit("ratio", quantile=0.5).assign(Table(data=data, target="y", name="ratios", source="test"))


def test_numpy_scalars_in_a_rule_are_the_python_values_they_equal():
    """A rule's repr is hashed into its runs' config: ThresholdSplit(threshold=np.median(...))
    gave "threshold=np.float64(38.0)", another hash than the same split written 38.0 (its
    stored runs not found), and ClusterSplit(n_clusters=np.int64(3)) was refused."""
    from tabmoe.data.split_rules import ClusterSplit, ThresholdSplit, TimeSplit, ValueSplit

    pairs = [
        (ThresholdSplit("age", threshold=np.float64(38.0)), ThresholdSplit("age", threshold=38.0)),
        (ThresholdSplit("age", quantile=np.float32(0.75)), ThresholdSplit("age", quantile=0.75)),
        (ClusterSplit(np.int64(3), [np.int64(0)], random_state=np.uint32(1)), ClusterSplit(3, [0], random_state=1)),
        (ClusterSplit(4, (np.int8(0), 1)), ClusterSplit(4, (0, 1))),
        (ValueSplit("c", ood_values=[np.str_("x"), np.int64(2)]), ValueSplit("c", ood_values=["x", 2])),
        (TimeSplit(ood_fraction=np.float64(0.25)), TimeSplit(ood_fraction=0.25)),
    ]
    for numpy_rule, plain_rule in pairs:
        assert repr(numpy_rule) == repr(plain_rule)
        assert numpy_rule == plain_rule


@pytest.mark.parametrize("rule", [
    {"by": "values", "column": 3, "ood_values": ["a"]},
    {"by": "time", "column": 3},
    {"by": "cluster", "n_clusters": 2, "ood_clusters": [1], "columns": [1, 3]},
])
def test_a_rule_column_given_as_a_number_for_a_text_name_says_to_quote_it(tmp_path, rule):
    """YAML reads `column: 3` as the int 3 and a CSV header's `3` is text: the error said
    "column 3 not in table 'nums'; columns are ['1', '2', '3', 'y']" without saying why."""
    path = tmp_path / "nums.csv"
    path.write_text("1,2,3,y\n1,2,5,p\n3,4,6,q\n5,6,7,p\n7,8,8,q\n")
    definition = SplitDefinition.from_dict({"name": "n", "data": {"file": str(path)}, "split": rule})
    missing = rule.get("column", 1)
    with pytest.raises(ValueError, match=rf"column {missing} not in table 'nums'; columns are \['1', '2', '3', 'y'\] "
                       rf"\(the column '{missing}' is named by text: quote a number in YAML: '{missing}'\)"):
        definition.make(0)


@pytest.mark.parametrize("ood", [("True",), (1,), ("x",)])
def test_a_values_split_on_a_bool_beside_the_number_it_equals_is_refused(ood):
    """An object column holding True and 1 (a bool column concatenated with a 0/1 one):
    pandas' unique and isin take them for one value, so ood_values=["True"] also put the rows
    of 1 in OOD, and ood_values=[1] said 1 does not occur in the column."""
    flags = pd.concat([pd.Series([True, False] * 10), pd.Series([1, 0] * 10), pd.Series(["x"] * 20)])
    data = pd.DataFrame({"flag": flags.to_numpy(), "y": ["a", "b"] * 30})
    assert data["flag"].dtype == object
    table = Table(data=data, target="y", name="mixed", source="test")
    with pytest.raises(ValueError, match=r"values split on 'flag': .*pandas matches \[True, 1\] as one value; pandas matches \[False, 0\]"):
        ValueSplit("flag", ood_values=ood).assign(table)


def test_a_values_split_on_bools_with_missing_values_still_matches():
    """A bool column with a missing value is objects of bools alone: nothing to refuse."""
    data = pd.DataFrame({"flag": np.array([True, False, None] * 20, dtype=object), "y": ["a", "b"] * 30})
    table = Table(data=data, target="y", name="flags", source="test")
    got = ValueSplit("flag", ood_values=("True",)).assign(table)
    assert got.ood.sum() == 20 and len(got.ood) == 40
