"""pyarrow-backed columns read as their pandas counterparts: a dictionary column (what
``read_parquet(dtype_backend="pyarrow")`` gives a category) is categorical, dates and
durations are binned like datetime64 and timedelta64."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from tabmoe import ColumnTokenizer, TabularMoEClassifier

pa = pytest.importorskip("pyarrow")  # an optional dependency (extra "data"); CI installs it


def _frame(n=120, seed=0):
    r = np.random.default_rng(seed)
    days = [dt.date(2020, 1, 1) + dt.timedelta(days=int(i)) for i in r.integers(0, 900, n)]
    return pd.DataFrame({
        "cat": pd.Categorical(r.choice(["x", "y", "z", None], n)),
        "day": pd.Series(days, dtype="datetime64[ms]"),
        "wait": pd.to_timedelta(r.integers(0, 9000, n), unit="s"),
    })


def _arrow(frame):
    return frame.assign(
        cat=frame["cat"].astype(pd.ArrowDtype(pa.dictionary(pa.int8(), pa.string()))),
        day=pd.Series(frame["day"].dt.date, dtype=pd.ArrowDtype(pa.date32())),
        wait=frame["wait"].astype(pd.ArrowDtype(pa.duration("s"))),
    )


def test_arrow_columns_tokenize_as_their_pandas_counterparts():
    frame = _frame()
    frame.loc[3, "day"] = pd.NaT
    arrow = _arrow(frame)
    tok = ColumnTokenizer().fit(frame)
    arrow_tok = ColumnTokenizer().fit(arrow)
    np.testing.assert_array_equal(arrow_tok.is_categorical_, [True, False, False])
    np.testing.assert_array_equal(arrow_tok.transform(arrow), tok.transform(frame))
    np.testing.assert_array_equal(tok.transform(arrow), tok.transform(frame))  # fitted on one, given the other


def test_the_classifier_fits_a_frame_read_back_from_parquet(tmp_path):
    frame = _frame()
    y = np.where(frame["cat"].astype(object) == "x", "yes", "no")
    frame.to_parquet(tmp_path / "t.parquet")
    read = pd.read_parquet(tmp_path / "t.parquet", dtype_backend="pyarrow")
    assert str(read["cat"].dtype).startswith("dictionary<")
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu").fit(read, y)
    np.testing.assert_array_equal(clf.tokenizer_.is_categorical_, [True, False, False])
    assert clf.predict_proba(read).shape == (len(read), 2)
