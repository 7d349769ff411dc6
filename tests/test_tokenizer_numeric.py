"""Numeric columns of ColumnTokenizer: one value, one float, one bin, whatever its dtype."""

import numpy as np
import pandas as pd
import pytest

from tabmoe import ColumnTokenizer
from tabmoe._numeric import numeric_values


def _instants(seed: int = 0, n: int = 1001) -> np.ndarray:
    """Microsecond instants of 2017-2023, sorted: 1001 rows, so 10 bins' edges are rows."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.integers(int(1.5e15), int(1.7e15), n)).astype("datetime64[us]")


@pytest.mark.parametrize("kind", ["datetime", "timedelta"])
def test_one_instant_is_one_float_in_every_unit(kind):
    # 2020's datetimes as datetime64[ns] went through a rounded count of nanoseconds: 252 of
    # these 1001 read as another float than as datetime64[us].
    us = _instants()
    if kind == "timedelta":
        us = us - np.datetime64(0, "us")
    floats = {unit: numeric_values(pd.Series(us.astype(f"{us.dtype.str[1:3]}[{unit}]")), "t")
              for unit in ("us", "ns")}
    np.testing.assert_array_equal(floats["ns"], floats["us"])
    ms = us.astype(f"{us.dtype.str[1:3]}[ms]")  # (whole milliseconds: the same instants)
    np.testing.assert_array_equal(numeric_values(pd.Series(ms.astype(f"{ms.dtype.str[1:3]}[ns]")), "t"),
                                  numeric_values(pd.Series(ms), "t"))


@pytest.mark.parametrize(("fit_unit", "predict_unit"), [("ns", "us"), ("us", "ns")])
def test_datetimes_on_a_bin_edge_keep_their_bin_in_another_unit(fit_unit, predict_unit):
    # A model fitted on datetime64[ns] (pandas 2's unit) tokenized the same datetimes given as
    # datetime64[us] (pandas 3's) into another bin where one sat on an edge: 1-3 rows of these.
    for seed in range(5):
        us = _instants(seed)
        fit = pd.DataFrame({"t": us.astype(f"datetime64[{fit_unit}]")})
        tok = ColumnTokenizer(n_bins=10).fit(fit)
        given = pd.DataFrame({"t": us.astype(f"datetime64[{predict_unit}]")})
        np.testing.assert_array_equal(tok.transform(given), tok.transform(fit))
        np.testing.assert_array_equal(tok.bin_positions(given), tok.bin_positions(fit))


def test_microsecond_floats_are_kept_and_far_spans_are_the_nearest_float():
    # Microseconds (pandas 3's unit) read as they did; spans beyond 2^53 units are the float
    # nearest the exact seconds (Python's int division is correctly rounded).
    us = _instants()
    np.testing.assert_array_equal(numeric_values(pd.Series(us), "t"),
                                  (us - np.datetime64(0, "s")) / np.timedelta64(1, "s") * 1e9)
    ticks = np.array([2**53 + 1, 2**62 + 12345, -(2**62) - 987654321, 2**63 - 1], dtype=np.int64)
    for unit, per in (("ms", 10**3), ("us", 10**6), ("ns", 10**9)):
        got = numeric_values(pd.Series(ticks.view(f"m8[{unit}]")), "t")
        np.testing.assert_array_equal(got, np.array([int(t) / per for t in ticks]) * 1e9)
    nat = numeric_values(pd.Series(np.array(["NaT", 2**60], dtype="m8[ns]")), "t")
    assert np.isnan(nat[0]) and nat[1] == 2**60 / 10**9 * 1e9


def _shares_its_bin(x: np.ndarray, value: float) -> bool:
    tok = ColumnTokenizer(n_bins=10).fit(pd.DataFrame({"a": x}))
    tokens = tok.transform(pd.DataFrame({"a": x}))[:, 0]
    return bool(np.isin(tokens[x != value], tokens[x == value]).any())


def test_the_guide_says_which_values_get_a_bin_of_their_own():
    # The guide said that any value holding one quantile step of the rows or more gets a bin
    # of its own; inside the range one holding 1.5 steps (150 of 1000 rows, 10 bins) shared
    # its bin with 30 values above it, as the tokenizer's docstring says it may.
    rng = np.random.default_rng(0)
    inside = np.r_[rng.uniform(0, 49, 420), np.full(150, 50.0), rng.uniform(51, 100, 430)]
    assert _shares_its_bin(inside, 50.0)
    for start in range(300, 400, 7):  # two steps inside: always its own bin
        two = np.r_[rng.uniform(0, 49, start), np.full(200, 50.0), rng.uniform(51, 100, 800 - start)]
        assert not _shares_its_bin(two, 50.0)
    low = np.r_[np.zeros(100), rng.uniform(1, 100, 900)]  # one step on the minimum
    assert not _shares_its_bin(low, 0.0) and not _shares_its_bin(-low, 0.0)
    from pathlib import Path

    guide = " ".join((Path(__file__).parents[1] / "docs/guide/columns.md").read_text().split())
    assert "a value that holds two quantile steps of the rows or more" in guide
    assert "minimum or maximum from one step on" in guide
    assert "between one and two steps may share its bin" in guide


@pytest.mark.skipif(int(pd.__version__.split(".")[0]) < 3,
                    reason="pandas 2's DataFrame constructor itself raises OverflowError on such an int")
def test_an_int_beyond_the_float_range_names_its_column():
    """A Python int of an object column read as numeric that no float holds was a bare
    'OverflowError: int too large to convert to float', naming no column."""
    X = pd.DataFrame({"big": np.array([10**309, 1, 2], dtype=object)})
    with pytest.raises(ValueError, match="too large for a float in column 'big'"):
        ColumnTokenizer(categorical_features=[]).fit(X)
    fitted = ColumnTokenizer(categorical_features=[]).fit(pd.DataFrame({"big": [1.0, 2.0, 3.0]}))
    with pytest.raises(ValueError, match="too large for a float in column 'big'"):
        fitted.transform(X)


@pytest.mark.parametrize("nat", [pd.NaT, np.datetime64("NaT"), np.timedelta64("NaT")], ids=["pd", "datetime64", "timedelta64"])
def test_nat_in_a_numeric_object_column_is_missing_as_nan_is(nat):
    """NaT among numbers (a float column concatenated with an all-NaT one, or
    ``where(..., pd.NaT)``: dtype object) was refused with "holds non-numeric values (Invalid
    object type at position 1)"; NaN, None and pd.NA there are MISSING, and the guide says
    NaT is too, in numeric columns alike."""
    floats = pd.DataFrame({"x": [1.0, np.nan, 2.0, 3.5, np.nan, 0.5]})
    objects = pd.DataFrame({"x": pd.Series([1.0, nat, 2.0, 3.5, None, 0.5], dtype=object)})
    fitted = ColumnTokenizer().fit(floats)
    expected = fitted.transform(floats)
    np.testing.assert_array_equal(fitted.transform(objects), expected)  # numeric at fit
    declared = ColumnTokenizer(categorical_features=[]).fit(objects)  # numeric by the user
    np.testing.assert_array_equal(declared.transform(objects), expected)
    assert np.isnan(numeric_values(objects["x"], "x")[[1, 4]]).all()


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's overflow warnings leaked
def test_values_spanning_the_float_range_keep_finite_ordered_edges():
    """np.quantile interpolates through the difference of two neighbours, which overflows
    when they lie more than the float range apart: the 2-bin median of these values was
    NaN (every row one token, and a saved model failed to load: "bin edges are not sorted
    numbers"), and at 4 bins -inf (-1.6e308 shared its token with 1.6e308)."""
    v = np.r_[-np.linspace(1.6, 1.7, 5), np.linspace(1.6, 1.7, 4)] * 1e308
    X = pd.DataFrame({"x": v})
    for n_bins in (2, 3, 4):
        tok = ColumnTokenizer(n_bins=n_bins).fit(X)
        edges = tok.bin_edges_[0]
        assert np.isfinite(edges).all() and len(edges) == n_bins - 1
        tokens = tok.transform(X)[:, 0]
        assert (np.diff(tokens[np.argsort(v)]) >= 0).all()  # the bins keep the values' order
        assert len(np.unique(tokens)) == n_bins
        rebuilt = ColumnTokenizer._from_state(tok._get_state())
        np.testing.assert_array_equal(rebuilt.transform(X), tok.transform(X))
    assert ColumnTokenizer(n_bins=2).fit(X).bin_edges_[0][0] == pytest.approx(-1.6e308)  # a row


def test_column_value_floats_reads_a_numeric_column_as_transform_does():
    """The public reader the baselines' encoder uses (it called the private
    ``_numeric_values``): a column's floats, NaN for missing, datetimes held as objects read as
    datetimes; a categorical column or a bad position is refused by name."""
    import numpy as np
    import pandas as pd
    import pytest

    from tabmoe import ColumnTokenizer

    when = pd.to_datetime(["2020-01-01", "2020-06-01", None, "2021-01-01"])
    X = pd.DataFrame({"x": [1.5, np.nan, 3.0, 4.0], "c": list("abab"), "t": when})
    tok = ColumnTokenizer(n_bins=2).fit(X)
    np.testing.assert_array_equal(tok.column_value_floats(0, X["x"]), [1.5, np.nan, 3.0, 4.0])
    held = pd.Series(when.astype(object), name="t")
    np.testing.assert_array_equal(tok.column_value_floats(2, held), tok.column_value_floats(2, X["t"]))
    assert np.isnan(tok.column_value_floats(2, X["t"])[2])
    with pytest.raises(ValueError, match="column_value_floats: column 1 is categorical"):
        tok.column_value_floats(1, X["c"])
    with pytest.raises(ValueError, match="column_value_floats: j must be a column position"):
        tok.column_value_floats(3, X["x"])


def test_fitted_column_labels_names_non_string_labels_only():
    import pandas as pd
    import pytest
    from sklearn.exceptions import NotFittedError

    from tabmoe import ColumnTokenizer

    with pytest.raises(NotFittedError):
        ColumnTokenizer().fitted_column_labels()
    assert ColumnTokenizer().fit(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})).fitted_column_labels() is None
    assert ColumnTokenizer().fit(pd.DataFrame({0: [1, 2], 7: ["x", "y"]})).fitted_column_labels() == ["0", "7"]
