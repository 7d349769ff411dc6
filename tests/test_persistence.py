"""save / load: round trips, devices, versions, and files that must be refused.

Tampered files carry a pickle payload that creates a marker file when unpickled; every test
asserts the marker never appears under ``load`` and (so that the test can fail) that the same
file does run the payload under a plain, unsafe unpickler.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import tabmoe
from tabmoe import TabularMoEClassifier
from tabmoe.persistence import (
    FORMAT,
    FORMAT_VERSION,
    IncompatibleFileError,
    UnsafeFileError,
    checksum,
    json_params,
    load_params,
)

from .conftest import REPO

# torch warns when a file's pickle protocol is not 2 (the refused pickles, damaged files)
pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")

FAST = dict(max_epochs=3, d_model=8, n_heads=2, ff_dim=4, random_state=0, device="cpu")
REFUSED = (IncompatibleFileError, pickle.UnpicklingError)


def messy_frame(n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    """Category values of every saveable type (intervals and periods too), unicode, NaN, a
    datetime and a numeric column."""
    rng = np.random.default_rng(0)
    stamps = [pd.Timestamp("2020-01-01", tz="UTC"), pd.Timestamp("1066-10-14")]
    # 10**6 days: beyond the +-292 years of nanoseconds. Built from seconds, since
    # pd.Timedelta(days=10**6) raises OutOfBoundsTimedelta before pandas 3.1.
    far = pd.Timedelta(np.timedelta64(10**6 * 86_400, "s"))
    X = pd.DataFrame(
        {
            "text": rng.choice(["", "é", "日本", "🙂", "a"], n).astype(object),
            "mixed": pd.Series(rng.choice([1, "1", 2.5, True, None], n), dtype=object),
            "stamp": pd.Series([stamps[i % 2] for i in range(n)], dtype=object),
            "span": pd.Series([far if i % 3 else None for i in range(n)], dtype=object),
            "flag": rng.random(n) > 0.5,
            "when": pd.to_datetime(rng.integers(0, 10**9, n), unit="s"),
            "size": np.where(rng.random(n) > 0.9, np.nan, rng.normal(size=n)),
            "bucket": pd.cut(rng.normal(size=n), 3),  # interval categories
            "month": pd.Categorical(pd.period_range("2020-01", periods=3, freq="M")[rng.integers(0, 3, n)]),
            "day": pd.Categorical(pd.date_range("2020-01-01", periods=3, tz="UTC")[rng.integers(0, 3, n)]),
        }
    )  # fmt: skip
    y = np.where(X["flag"], "yes", "no")
    return X, y


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, TabularMoEClassifier, pd.DataFrame]:
    X, y = messy_frame()
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    path = tmp_path_factory.mktemp("saved") / "model.tabmoe"
    clf.save(path)
    return path, clf, X


def rewrite_pickle(src: Path, dst: Path, change) -> None:
    """Copy the torch zip archive ``src`` to ``dst`` with ``change(bytes)`` applied to data.pkl."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(
                info.filename, change(data) if info.filename.endswith("/data.pkl") else data
            )


class CreatesFile:
    """Unpickling this runs code: ``exec`` writes the marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').close()",)


# ------------------------------------------------------------ round trips
@pytest.mark.parametrize("vocabulary", ["per_column", "shared"])
def test_round_trip_keeps_predictions_params_and_fitted_state(tmp_path, vocabulary):
    X, y = messy_frame()
    clf = TabularMoEClassifier(**FAST, vocabulary=vocabulary, class_weight={"no": 1, "yes": 2})
    clf.fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.predict(X).dtype == clf.predict(X).dtype
    assert loaded.get_params() == clf.get_params()
    assert loaded.classes_.dtype == clf.classes_.dtype
    assert list(loaded.feature_names_in_) == list(X.columns)
    assert (loaded.history_, loaded.n_iter_, loaded.best_epoch_) == (
        clf.history_,
        clf.n_iter_,
        clf.best_epoch_,
    )
    a, b = clf.tokenizer_, loaded.tokenizer_
    for before, after in zip(
        a.categories_ + a._infrequent, b.categories_ + b._infrequent, strict=True
    ):
        assert (before is None and after is None) or (
            list(before) == list(after) and [type(v) for v in before] == [type(v) for v in after]
        )
    assert np.array_equal(a.transform(X), b.transform(X))
    assert b._numeric_kinds == a._numeric_kinds and ("datetime" in a._numeric_kinds) == (vocabulary != "shared")


def test_numpy_and_pandas_parameter_values_are_saved_as_plain_values(tmp_path):
    # GridSearchCV over a numpy grid sets numpy scalars; save refused them ("cannot be saved as JSON").
    X, y = messy_frame()
    params = dict(
        FAST,
        max_epochs=np.int64(2),
        random_state=np.int64(3),
        learning_rate=np.float32(1e-3),
        class_weight={"no": np.int64(1), "yes": np.float64(2.0)},
        categorical_features=pd.Index(["text", "mixed", "stamp", "span", "flag", "bucket", "month", "day"]),
    )
    clf = TabularMoEClassifier(**params).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    got = loaded.get_params()
    assert (got["max_epochs"], got["random_state"], got["class_weight"]) == (2, 3, {"no": 1, "yes": 2.0})
    assert got["learning_rate"] == pytest.approx(1e-3) and type(got["learning_rate"]) is float
    assert got["categorical_features"] == ["text", "mixed", "stamp", "span", "flag", "bucket", "month", "day"]


def test_tuple_parameter_values_are_loaded_as_tuples(tmp_path):
    # JSON has no tuple: categorical_features=("text", ...) came back a list from load
    X, y = messy_frame()
    categorical = ("text", "mixed", "stamp", "span", "flag", "bucket", "month", "day")
    clf = TabularMoEClassifier(**FAST, categorical_features=categorical).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.get_params() == clf.get_params() and loaded.get_params()["categorical_features"] == categorical
    assert type(loaded.tokenizer_.get_params()["categorical_features"]) is tuple
    # in any parameter, at any depth; dicts in dicts as written before tuples were kept
    params = {"a": (1, [2, (np.int64(3),)], ()), "b": {"k": ("x", {"j": (1.5,)})}, "c": [(None, True)]}
    back = load_params(json.loads(json.dumps(json_params(params))))
    assert back == {"a": (1, [2, (3,)], ()), "b": {"k": ("x", {"j": (1.5,)})}, "c": [(None, True)]}
    assert [type(v) for v in (back["a"], back["a"][1][1], back["b"]["k"], back["c"][0])] == [tuple] * 4
    assert load_params({"b": {"__dict__": [[["str", "k"], {"j": [1]}]]}}) == {"b": {"k": {"j": [1]}}}


@pytest.mark.parametrize(
    "categorical",
    [{"text", "mixed", "stamp", "span"}, range(4), dict.fromkeys(["text", "mixed", "stamp", "span"]).keys()],
    ids=["set", "range", "dict-keys"],
)
def test_range_set_and_dict_view_parameters_save_as_lists(tmp_path, categorical):
    """fit takes categorical_features as a set of names, a range of indices or dict keys;
    save then failed after the training with "Parameter categorical_features={...} cannot be
    saved as JSON". They are saved as lists (a set sorted, so its file is one)."""
    X, y = messy_frame()
    X = X[["text", "mixed", "stamp", "span", "flag", "size"]]
    clf = TabularMoEClassifier(**FAST, categorical_features=categorical).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    expected = list(range(4)) if isinstance(categorical, range) else sorted(categorical)
    assert loaded.get_params()["categorical_features"] == expected
    refit = clone(loaded).fit(X, y)  # the list selects the same columns as what it replaces
    assert np.array_equal(refit.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("labels", [[0, 1], [True, False], ["no", "yes"]], ids=str)
def test_round_trip_label_types_and_numeric_column_labels(tmp_path, labels):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({3: rng.choice(list("abc"), 40), 1: rng.normal(size=40)})
    y = np.asarray(labels * 20)
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.classes_.dtype == clf.classes_.dtype
    with pytest.raises(ValueError, match="same order"):  # survives the round trip
        loaded.predict(X[[1, 3]])


def test_round_trip_of_a_period_column_read_as_instants(tmp_path):
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"month": pd.period_range("2015-01", periods=60, freq="M"), "c": rng.choice(list("ab"), 60)})
    y = np.where(np.arange(60) < 30, "old", "new")
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.tokenizer_._numeric_kinds == ["datetime", None]
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(loaded.predict_proba(X), proba)
    days = X.assign(month=X["month"].dt.asfreq("D", how="start"))  # another freq: the same instants
    np.testing.assert_array_equal(loaded.predict_proba(days), proba)


def test_security_policy_names_every_type_of_category_that_saves(saved):
    """SECURITY.md said a model whose categories are not "str, int, float, bool, timestamps
    or timedeltas" cannot be saved: periods and intervals (pd.cut's) save, as the fixture's
    do, and the guide says; a reader converted such columns to text for nothing."""
    path, clf, _ = saved
    loaded = TabularMoEClassifier.load(path)
    kinds = {type(v).__name__ for values in loaded.tokenizer_.categories_ if values is not None for v in values}
    assert {"Period", "Interval", "Timestamp", "Timedelta"} <= kinds
    text = " ".join((REPO / "SECURITY.md").read_text(encoding="utf8").split())
    start = text.index("A model whose categories are not")
    sentence = text[start : text.index("cannot be saved", start)]
    for kind in ("str", "int", "float", "bool", "timestamps", "timedeltas", "periods", "intervals"):
        assert kind in sentence.split("(e.g.")[0], (kind, sentence)


def test_file_records_format_versions_and_checksum(saved):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    assert payload["format"] == FORMAT == "tabmoe.TabularMoEClassifier"
    assert payload["format_version"] == FORMAT_VERSION == 1
    assert json.loads(payload["versions"]) == {
        "tabmoe": tabmoe.__version__,
        "torch": torch.__version__,
        "sklearn": sklearn.__version__,
    }
    assert payload["checksum"] == checksum(payload)
    assert all(t.device.type == "cpu" for t in payload["state_dict"].values())


# ------------------------------------------------------------ compatibility
@pytest.mark.parametrize(
    "change, match",
    [
        ({"format_version": 99}, r"format version 99 \(written by .*tabmoe.*\); this tabmoe reads version 1"),
        # the str "1" was "format version 1 (...); this tabmoe reads version 1": named as a str now
        ({"format_version": "1"}, r"format version '1' \(written by .*\); this tabmoe reads version 1\."),
        ({"format_version": None}, "format version None"),
        ({"format": "tabmoe.Other"}, "is not a saved TabularMoEClassifier"),
    ],
    ids=["future", "string", "missing", "other-format"],
)  # fmt: skip
def test_incompatible_files_are_refused_with_their_version(saved, tmp_path, change, match):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    torch.save({**payload, **change}, tmp_path / "m.tabmoe")
    with pytest.raises(IncompatibleFileError, match=match):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


def test_a_newer_tabmoes_file_with_a_parameter_unknown_here_names_both_versions(saved, tmp_path):
    """Parameters are added within format version 1 (ADDED_PARAMETERS): a newer tabmoe's file
    holding one was refused as "does not describe a valid model: TypeError(... unexpected
    keyword argument ...)", naming no version; the error now names the one that wrote it."""
    path, _, _ = saved
    _rewrite_document(path, tmp_path / "m.tabmoe", "params", lambda d: d.update(new_option=1))
    payload = torch.load(tmp_path / "m.tabmoe", weights_only=True)
    payload["versions"] = json.dumps({**json.loads(payload["versions"]), "tabmoe": "99.0"})
    payload["checksum"] = checksum(payload)
    torch.save(payload, tmp_path / "m.tabmoe")
    with pytest.raises(IncompatibleFileError, match=r"new_option.*written by tabmoe 99\.0, and this is tabmoe "):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    _rewrite_document(path, tmp_path / "m.tabmoe", "params", lambda d: d.update(new_option=1))
    with pytest.raises(IncompatibleFileError, match="new_option") as refused:  # this version's own file
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert "written by" not in str(refused.value)


def test_files_without_a_checksum_still_load(saved, tmp_path):
    """Files written before the checksum existed (format version 1 all the same)."""
    path, clf, X = saved
    payload = torch.load(path, weights_only=True)
    del payload["checksum"]
    torch.save(payload, tmp_path / "old.tabmoe")
    assert np.array_equal(
        TabularMoEClassifier.load(tmp_path / "old.tabmoe").predict_proba(X), clf.predict_proba(X)
    )


def test_a_file_written_before_adapt_existed_saves_again_and_adapt_says_why_it_cannot(saved, tmp_path):
    """Such a file (no "train_sample") loads, but save failed after it with AttributeError
    'train_sample_tokens_' (the model could not be re-saved), and so did adapt."""
    path, clf, X = saved
    payload = torch.load(path, weights_only=True)
    del payload["train_sample"]
    payload["checksum"] = checksum(payload)
    torch.save(payload, tmp_path / "old.tabmoe")
    old = TabularMoEClassifier.load(tmp_path / "old.tabmoe")
    old.save(tmp_path / "again.tabmoe")
    again = TabularMoEClassifier.load(tmp_path / "again.tabmoe")
    assert "train_sample" not in torch.load(tmp_path / "again.tabmoe", weights_only=True)
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    with pytest.raises(ValueError, match=r"^Cannot adapt: the model holds no stored training sample .* Refit it first"):
        again.adapt(X, max_epochs=1)
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert not hasattr(again, "adapt_history_")


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda p: p["state_dict"].__setitem__("heads.bias", p["state_dict"]["heads.bias"] + 1e-3), "damaged"),
        (lambda p: p.__setitem__("fitted", p["fitted"].replace('"n_iter": 3', '"n_iter": 4')), "damaged"),
        (lambda p: p.__delitem__("tokenizer"), "damaged"),
        (lambda p: p["train_sample"]["tokens"].add_(1), "damaged"),
    ],
    ids=["weights", "document", "missing-document", "adapt-sample"],
)  # fmt: skip
def test_changed_contents_fail_the_checksum(saved, tmp_path, change, match):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    change(payload)
    torch.save(payload, tmp_path / "m.tabmoe")
    with pytest.raises(IncompatibleFileError, match=match):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


def _rewrite_document(src: Path, dst: Path, key: str, change) -> None:
    """Copy ``src`` to ``dst`` with ``change(document)`` applied to the JSON document ``key``,
    its checksum recomputed: a consistent file with wrong contents."""
    payload = torch.load(src, weights_only=True)
    document = json.loads(payload[key])
    change(document)
    payload[key] = json.dumps(document)
    payload["checksum"] = checksum(payload)
    torch.save(payload, dst)


def _set(key: str, value):
    return lambda document: document.__setitem__(key, value)


@pytest.mark.parametrize(
    ("key", "change"),
    [
        ("tokenizer", _set("offsets", [10**6] * 7)),
        ("tokenizer", _set("offsets", [3, 10, 20, 30, 40, 50, 10**6])),
        ("tokenizer", _set("offsets", [3, 4])),
        ("tokenizer", _set("n_tokens", 5)),
        ("tokenizer", lambda d: d["params"].__setitem__("vocabulary", "bogus")),
        ("tokenizer", _set("n_tokens_per_column", [1] * 7)),
        ("tokenizer", _set("is_categorical", [True] * 7)),
        ("tokenizer", lambda d: d["bin_edges"].__setitem__(6, d["bin_edges"][6][::-1])),
        ("tokenizer", lambda d: d["categories"][0].pop()),
        ("fitted", _set("label_token_ids", [1, 2])),
        ("fitted", _set("label_token_ids", [10**6, 10**6 + 1])),
        ("fitted", _set("classes", [["str", "no"]])),
        ("fitted", _set("classes", [["str", "no"], ["str", "no"]])),
        ("fitted", _set("n_features_in", 3)),
        ("fitted", _set("feature_importances", [1.0])),
        ("params", _set("d_model", -8)),
        ("params", _set("n_heads", "two")),
    ],
)  # fmt: skip
def test_consistent_file_with_out_of_range_contents_is_refused(saved, tmp_path, key, change):
    """A file whose checksum matches but whose sizes and token ids do not fit each other is
    refused at load, not by an IndexError in predict_proba."""
    path, _, X = saved
    _rewrite_document(path, tmp_path / "m.tabmoe", key, change)
    with pytest.raises(IncompatibleFileError, match="does not describe a valid model"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"ff_dim": 2**20}, r"weights 'blocks.0.ffn.0.weight' have shape \(4, 8\) in the file, but the network .* has \(1048576, 8\)"),
        ({"d_model": 2**10, "n_heads": 2}, r"weights 'column_embedding' have shape \(11, 8\) in the file, .* \(11, 1024\)"),
        ({"n_members": 50}, r"n_layers 1 and n_members 50 do not fit the file's \d+ weights"),
    ],
    ids=["ff_dim", "d_model", "n_members"],
)  # fmt: skip
def test_parameters_describing_a_larger_network_are_refused_before_building_it(saved, tmp_path, params, match):
    """A consistent file whose parameters describe a network far larger than its weights:
    load built (allocated and initialised) that network before load_state_dict refused it
    (sizes kept small here, so that the test fails without exhausting memory)."""
    path, _, _ = saved
    _rewrite_document(path, tmp_path / "m.tabmoe", "params", lambda d: d.update(params))
    with pytest.raises(IncompatibleFileError, match=match):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


def test_parameters_describing_a_larger_network_take_no_memory_to_refuse(saved, tmp_path):
    """ff_dim raised to 2**23 in a file of kilobytes: the network it describes is 0.5 GB."""
    pytest.importorskip("resource")  # in the child
    path, _, _ = saved
    _rewrite_document(path, tmp_path / "m.tabmoe", "params", lambda d: d.update(ff_dim=2**23))
    code = textwrap.dedent(
        f"""
        import resource
        from tabmoe import TabularMoEClassifier
        from tabmoe.persistence import IncompatibleFileError
        TabularMoEClassifier.load({str(path)!r})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            TabularMoEClassifier.load({str(tmp_path / "m.tabmoe")!r})
        except IncompatibleFileError as exc:
            print("REFUSED", exc)
        print("GROWTH_MB", (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "REFUSED" in result.stdout and "blocks.0.ffn.0.weight" in result.stdout
    growth = float(result.stdout.split("GROWTH_MB")[1])  # ru_maxrss is in KB on Linux
    assert growth < 100, f"refusing the file took {growth:.0f} MB"


def test_a_str_classes_dtype_far_wider_than_its_classes_is_refused(saved, tmp_path):
    """The saved dtype of ``classes_`` was applied as written: a file of kilobytes whose
    ``classes_dtype`` read ``<U20000000`` loaded with 160 MB of classes (``<U2000000000``:
    16 GB, beyond a machine's memory). Padding past 1 MiB beyond the longest class is
    refused; a str dtype wider than the classes, as ``y``'s own can be, still round-trips."""
    path, clf, X = saved
    _rewrite_document(path, tmp_path / "m.tabmoe", "fitted", _set("classes_dtype", "<U20000000"))
    with pytest.raises(IncompatibleFileError, match=r"classes dtype '<U20000000' is wider than its longest class \(3 characters\)"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    _rewrite_document(path, tmp_path / "m.tabmoe", "fitted", _set("classes_dtype", "<U64"))
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.classes_.dtype == np.dtype("<U64") and list(loaded.classes_) == list(clf.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["train_sample"].__setitem__("tokens", p["train_sample"]["tokens"] + 10**6),
        lambda p: p["train_sample"].__setitem__("tokens", p["train_sample"]["tokens"][:, :2]),
        lambda p: p["train_sample"].__setitem__("weight", p["train_sample"]["weight"][:3]),
        lambda p: p["state_dict"]["heads.bias"].fill_(float("nan")),
        lambda p: p.__setitem__("params", "[" * 100_000 + "]" * 100_000),
    ],
    ids=["sample-token-ids", "sample-columns", "sample-weights", "nan-weights", "json-nested-too-deeply"],
)
def test_consistent_file_with_wrong_tensors_is_refused(saved, tmp_path, change):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    change(payload)
    payload["checksum"] = checksum(payload)
    torch.save(payload, tmp_path / "m.tabmoe")
    with pytest.raises(IncompatibleFileError, match="does not describe a valid model"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


@pytest.mark.parametrize(
    ("key", "name", "view"),
    [
        ("state_dict", "heads.bias", lambda t: t[:1].expand(2**26)),
        ("train_sample", "tokens", lambda t: t[:1].expand(2**22, t.shape[1])),
    ],
    ids=["weights", "adapt-sample"],
)
def test_tensor_declaring_more_than_its_data_is_refused_before_hashing(saved, tmp_path, key, name, view):
    """A stride-0 view of one element declared as 2**26: a few kilobytes of file that the
    checksum's ``contiguous()`` made 256 MB of memory before reporting the mismatch."""
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    payload[key][name] = view(payload[key][name])
    torch.save(payload, tmp_path / "m.tabmoe")
    assert (tmp_path / "m.tabmoe").stat().st_size < 2 * path.stat().st_size
    with pytest.raises(IncompatibleFileError, match=rf"m\.tabmoe' is damaged: tensor '{name}' of '{key}' has shape"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


def test_compressed_archive_members_are_refused_before_reading(saved, tmp_path):
    """torch.load inflates deflated members, which torch.save never writes: 16 MB of
    zeros is 16 KB deflated, so a small file could expand a thousandfold before the
    checksum. The same model, recompressed, loaded; it is refused, naming the member."""
    path, _, _ = saved
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp_path / "m.tabmoe", "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info))
        zout.writestr(info.filename.split("/")[0] + "/data/zeros", bytes(2**24))
    assert (tmp_path / "m.tabmoe").stat().st_size < 2 * path.stat().st_size
    with pytest.raises(IncompatibleFileError, match=r"m\.tabmoe' is not a tabmoe file: its archive member '.*/data\.pkl' is compressed"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


def test_consistent_but_wrong_contents_give_a_clear_error(saved, tmp_path):
    """A file whose checksum matches but whose documents do not fit the weights."""
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    fitted = json.loads(payload["fitted"])
    fitted["label_token_ids"] = [10**6, 10**6 + 1]
    payload["fitted"] = json.dumps(fitted)
    payload["checksum"] = checksum(payload)
    torch.save(payload, tmp_path / "m.tabmoe")
    with pytest.raises(IncompatibleFileError, match="does not describe a valid model"):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")


# ---------------------------------------------------------------- devices
def test_file_with_cuda_storages_loads_on_cpu(saved, tmp_path):
    """A file whose tensors are recorded on cuda:0 (as torch.save writes GPU tensors).

    ``save`` always writes CPU tensors; this rewrites the storage locations in the archive to
    simulate a GPU-written file on this CPU machine: ``load`` maps them to the CPU.
    """
    path, clf, X = saved
    cuda = tmp_path / "cuda.tabmoe"
    rewrite_pickle(
        path, cuda, lambda d: d.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    )
    with zipfile.ZipFile(cuda) as z:
        assert b"cuda:0" in z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):  # what a plain torch.load does here
            torch.load(cuda, weights_only=True)
    loaded = TabularMoEClassifier.load(cuda)
    assert loaded._module_device().type == "cpu"
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_model_saves_and_loads_on_cpu_and_on_a_machine_without_cuda(tmp_path):
    X, y = messy_frame()
    clf = TabularMoEClassifier(**{**FAST, "device": "cuda"}).fit(X, y)
    expected = clf.predict_proba(X)
    clf.save(tmp_path / "m.tabmoe")
    joblib.dump(clf, tmp_path / "m.joblib")
    on_cpu = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    np.testing.assert_allclose(on_cpu.predict_proba(X), expected, atol=1e-5)
    on_gpu = TabularMoEClassifier.load(tmp_path / "m.tabmoe", device="cuda")
    assert on_gpu._module_device().type == "cuda"
    np.testing.assert_allclose(on_gpu.predict_proba(X), expected, atol=1e-6)
    X.to_pickle(tmp_path / "X.pkl")
    np.save(tmp_path / "expected.npy", expected)
    code = textwrap.dedent(
        f"""
        import joblib, numpy as np, pandas as pd, torch
        from tabmoe import TabularMoEClassifier
        assert not torch.cuda.is_available()
        X = pd.read_pickle({str(tmp_path / "X.pkl")!r})
        expected = np.load({str(tmp_path / "expected.npy")!r})
        for clf in (TabularMoEClassifier.load({str(tmp_path / "m.tabmoe")!r}),
                    joblib.load({str(tmp_path / "m.joblib")!r})):
            np.testing.assert_allclose(clf.predict_proba(X), expected, atol=1e-5)
        """
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env)


# ---------------------------------------------------------------- tampering
def _assert_refused_then_live(path: Path, marker: Path, unsafe_load) -> None:
    """``load`` refuses ``path`` without running it; ``unsafe_load`` proves the payload live."""
    with pytest.raises(REFUSED) as info:
        TabularMoEClassifier.load(path)
    assert not marker.exists(), "load executed the payload"
    message = str(info.value)  # torch's advice to load unsafely or allowlist is not passed on
    assert "weights_only" not in message and "add_safe_globals" not in message
    unsafe_load(path)
    assert marker.exists(), "the payload is not live: this test could not fail"
    marker.unlink()


def test_extra_key_with_code_is_refused(saved, tmp_path):
    path, _, _ = saved
    marker = tmp_path / "pwned"
    payload = torch.load(path, weights_only=True)
    torch.save({**payload, "evil": CreatesFile(marker)}, tmp_path / "m.tabmoe")
    _assert_refused_then_live(
        tmp_path / "m.tabmoe", marker, lambda p: torch.load(p, weights_only=False)
    )


def test_code_hidden_in_the_state_dict_is_refused(saved, tmp_path):
    path, _, _ = saved
    marker = tmp_path / "pwned"
    payload = torch.load(path, weights_only=True)
    payload["state_dict"]["heads.bias"] = CreatesFile(marker)
    torch.save(payload, tmp_path / "m.tabmoe")
    _assert_refused_then_live(
        tmp_path / "m.tabmoe", marker, lambda p: torch.load(p, weights_only=False)
    )


def test_replaced_data_pkl_in_the_archive_is_refused(saved, tmp_path):
    path, _, _ = saved
    marker = tmp_path / "pwned"
    evil = pickle.dumps({"format": FORMAT, "x": CreatesFile(marker)}, protocol=2)
    rewrite_pickle(path, tmp_path / "m.tabmoe", lambda _: evil)
    _assert_refused_then_live(
        tmp_path / "m.tabmoe", marker, lambda p: torch.load(p, weights_only=False)
    )


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_plain_pickle_renamed_is_refused(tmp_path, protocol):
    marker = tmp_path / "pwned"
    (tmp_path / "m.tabmoe").write_bytes(pickle.dumps(CreatesFile(marker), protocol=protocol))
    _assert_refused_then_live(tmp_path / "m.tabmoe", marker, lambda p: pickle.loads(p.read_bytes()))


def test_joblib_file_of_the_estimator_renamed_is_refused(saved, tmp_path):
    """Even a genuine pickle of the model: load never unpickles classes."""
    _, clf, X = saved
    joblib.dump(clf, tmp_path / "m.tabmoe")
    with pytest.raises(REFUSED):
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(joblib.load(tmp_path / "m.tabmoe").predict_proba(X), clf.predict_proba(X))


def test_unreadable_and_missing_files(saved, tmp_path):
    path, _, _ = saved
    (tmp_path / "short.tabmoe").write_bytes(path.read_bytes()[:200])
    with pytest.raises(IncompatibleFileError, match="not a readable tabmoe file"):
        TabularMoEClassifier.load(tmp_path / "short.tabmoe")
    (tmp_path / "notes.tabmoe").write_text("hello world\n")  # torch.load says only "KeyError: 101"
    with pytest.raises(IncompatibleFileError, match="damaged, or another kind of file .KeyError from torch.load"):
        TabularMoEClassifier.load(tmp_path / "notes.tabmoe")
    (tmp_path / "empty.tabmoe").write_bytes(b"")
    with pytest.raises(REFUSED):
        TabularMoEClassifier.load(tmp_path / "empty.tabmoe")
    with pytest.raises(FileNotFoundError):
        TabularMoEClassifier.load(tmp_path / "absent.tabmoe")


@settings(max_examples=2 * settings.default.max_examples)
@given(
    data=st.data(),
    fault=st.sampled_from(["flip", "truncate", "overwrite", "zero"]),
)
def test_damaged_bytes_are_refused_or_harmless(saved, tmp_path_factory, data, fault):
    """Random damage to a saved file: refused with a clear error, or loads the same model."""
    path, clf, X = saved
    raw = bytearray(path.read_bytes())
    at = data.draw(st.integers(0, len(raw) - 1), label="at")
    if fault == "flip":
        raw[at] ^= data.draw(st.integers(1, 255), label="mask")
    elif fault == "truncate":
        del raw[at:]
    else:
        n = data.draw(st.integers(1, 64), label="n")
        fill = data.draw(st.binary(min_size=n, max_size=n)) if fault == "overwrite" else bytes(n)
        raw[at : at + n] = fill[: len(raw) - at]
    damaged = tmp_path_factory.mktemp("damaged") / "m.tabmoe"
    damaged.write_bytes(bytes(raw))
    try:
        loaded = TabularMoEClassifier.load(damaged)
    except IncompatibleFileError as exc:  # UnsafeFileError included; nothing else
        event(f"{fault}: {type(exc).__name__}")
        return
    event(f"{fault}: loaded (damage outside the contents)")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def _flip_offsets(path: Path, every: int) -> list[int]:
    """Offsets to damage in the archive ``path``: every byte of its first 64, of the zip
    structure (local headers, padding, central directory) and of data.pkl (the JSON
    documents, the checksum, the pickle opcodes); every ``every``-th byte elsewhere (tensor
    data, whose changes the checksum catches)."""
    size = path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        tensors = [
            range(info.header_offset + len(info.FileHeader()), info.header_offset + len(info.FileHeader()) + info.compress_size)
            for info in archive.infolist() if "/data/" in info.filename and not info.filename.endswith("serialization_id")
        ]  # fmt: skip
    inside = {offset for block in tensors for offset in block}
    return [k for k in range(size) if k < 64 or k not in inside or k % every == 0]


def test_every_flipped_byte_is_refused_or_harmless(saved, tmp_path):
    """A byte flipped anywhere, offsets 0 and 1 (the zip signature) included: load raises
    IncompatibleFileError or returns the same model; never another exception. Every one of
    the first 64 bytes; then every 32nd byte of the structure and documents (the ci profile:
    every 8th), every 16 times that in the tensor data (in the random damage test below,
    Hypothesis hits any byte)."""
    path, clf, X = saved
    expected = clf.predict_proba(X)
    raw = path.read_bytes()
    step = 8 if settings.default.max_examples >= 1000 else 32
    offsets = [k for k in _flip_offsets(path, every=16 * step) if k < 64 or k % step == 0]
    assert {0, 1} <= set(offsets)
    damaged = tmp_path / "m.tabmoe"
    outcomes: dict[str, int] = {}
    for k in offsets:
        data = bytearray(raw)
        data[k] ^= (0x01, 0x80, 0xFF)[k % 3]
        damaged.write_bytes(bytes(data))
        try:
            loaded = TabularMoEClassifier.load(damaged)
        except IncompatibleFileError as exc:
            outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
            continue
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"flipping byte {k} of {len(raw)}: {type(exc).__name__}: {exc}")
        assert np.array_equal(loaded.predict_proba(X), expected), f"byte {k} changed the model"
        outcomes["loaded"] = outcomes.get("loaded", 0) + 1
    assert outcomes.get("IncompatibleFileError", 0) > len(offsets) // 2, outcomes


@pytest.mark.parametrize("offset", [0, 1])
def test_damaged_zip_signature_is_an_incompatible_file(saved, tmp_path, offset):
    """The first two bytes ("PK") damaged: no longer a torch archive, which torch reads as a
    pickle and refuses; that is an IncompatibleFileError (and an UnpicklingError)."""
    path, _, _ = saved
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    (tmp_path / "m.tabmoe").write_bytes(bytes(data))
    with pytest.raises(IncompatibleFileError, match="is refused: it is not a tabmoe file") as info:
        TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert isinstance(info.value, UnsafeFileError) and isinstance(info.value, pickle.UnpicklingError)


# ---------------------------------------------------------------- saving
def test_save_replaces_a_file_atomically(saved, tmp_path):
    path, clf, X = saved
    target = tmp_path / "m.tabmoe"
    target.write_bytes(b"an older file")
    clf.save(target)
    assert np.array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tabmoe"]  # no temporary left


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_save_over_a_file_keeps_its_permissions(saved, tmp_path, mode):
    # the temporary file renamed over it had 0666 minus the umask: a private file became 0644
    path, clf, X = saved
    target = tmp_path / "m.tabmoe"
    target.write_bytes(b"an older file")
    target.chmod(mode)
    clf.save(target)
    assert target.stat().st_mode & 0o777 == mode
    assert np.array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_a_failed_chmod_closes_the_temporary_file(saved, tmp_path, monkeypatch):
    # saving over a file copies its mode onto the temporary file; a chmod that raised left the
    # temporary file's descriptor open for the process's life
    path, clf, X = saved
    target = tmp_path / "m.tabmoe"
    target.write_bytes(b"an older file")

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refuse)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError, match="m.tabmoe"):
        clf.save(target)
    assert len(os.listdir("/proc/self/fd")) == before
    assert target.read_bytes() == b"an older file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tabmoe"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_new_file_gets_the_umasks_permissions(saved, tmp_path):
    path, clf, X = saved
    old = os.umask(0o027)
    try:
        clf.save(tmp_path / "new.tabmoe")
    finally:
        os.umask(old)
    assert (tmp_path / "new.tabmoe").stat().st_mode & 0o777 == 0o640


def test_save_failing_mid_write_leaves_the_old_file(saved, tmp_path, monkeypatch):
    """torch.save raising half way (a full disk, as /dev/full answers writes): the old file
    is untouched, the temporary removed, the error in plain words."""
    path, clf, X = saved
    target = tmp_path / "m.tabmoe"
    target.write_bytes(path.read_bytes())
    real_open = os.open

    def full_disk(file, flags, *args, **kwargs):
        if str(file).endswith(".tmp"):
            real_open(file, flags, *args, **kwargs)  # the temporary exists...
            return real_open("/dev/full", os.O_WRONLY)  # ...but its writes fail with ENOSPC
        return real_open(file, flags, *args, **kwargs)

    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    monkeypatch.setattr(os, "open", full_disk)
    with pytest.raises(OSError, match=r"Cannot save the model to .*m\.tabmoe.*: the disk is full") as info:
        clf.save(target)
    monkeypatch.undo()
    assert "inline_container" not in str(info.value)
    assert target.read_bytes() == path.read_bytes()
    assert np.array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tabmoe"]


@pytest.mark.parametrize("name", ["m" * 248 + ".tabmoe", "\u65e5" * 82 + ".tabmoe"], ids=["255-ascii", "253-utf8"])
def test_save_to_a_name_as_long_as_a_file_name_may_be(saved, tmp_path, name):
    """The temporary file was named ".<whole name>.<pid>.<hex>.tmp": a name of 240 to 255
    bytes, which the target itself can have, failed with "writing it failed (File name too
    long)". The temporary now takes the name's first characters only."""
    path, clf, X = saved
    if len(os.fsencode(name)) > os.pathconf(tmp_path, "PC_NAME_MAX"):
        pytest.skip("the file system's names are shorter")
    target = tmp_path / name
    target.write_bytes(b"an older file")  # the target's name is one the file system takes
    clf.save(target)
    assert np.array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_save_over_the_file_size_limit_leaves_the_old_file(saved, tmp_path):
    """RLIMIT_FSIZE below the model's size (what a full disk does to the write), in a child
    process: save fails in plain words; the old file still loads and predicts the same."""
    resource = pytest.importorskip("resource")
    path, clf, X = saved
    target = tmp_path / "m.tabmoe"
    target.write_bytes(path.read_bytes())
    code = textwrap.dedent(
        f"""
        import resource, signal
        from tabmoe import TabularMoEClassifier
        clf = TabularMoEClassifier.load({str(path)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, no signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            clf.save({str(target)!r})
        except OSError as exc:
            print("ERROR", exc)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resource.RLIMIT_FSIZE and result.returncode == 0, result.stderr[-2000:]
    assert f"ERROR Cannot save the model to {str(target)!r}: the file is larger than" in result.stdout
    assert "inline_container" not in result.stdout
    assert target.read_bytes() == path.read_bytes()
    assert np.array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tabmoe"]


def test_save_errors_name_the_path_in_plain_words(saved, tmp_path):
    _, clf, _ = saved
    with pytest.raises(FileNotFoundError, match=r"Cannot save the model to .*: the folder .*absent.* does not exist"):
        clf.save(tmp_path / "absent" / "m.tabmoe")
    with pytest.raises(IsADirectoryError, match=r"Cannot save the model to .*: it is a folder"):
        clf.save(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(FileNotFoundError, match=r"the folder .*file.* is not a folder"):
        clf.save(tmp_path / "file" / "m.tabmoe")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_save_to_an_empty_path_says_so(saved, tmp_path, monkeypatch):
    """save("") wrote its temporary file in the parent of the working folder (abspath("") is
    the working folder, whose dirname was taken as the target's folder), then failed to
    rename it: "writing it failed (No such file or directory)", or, where that parent is not
    writable, "no permission to write in its folder", naming neither. Now refused up front."""
    _, clf, _ = saved
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda name, *args: opened.append(name) or real_open(name, *args))
    for path in ["", b""]:
        with pytest.raises(FileNotFoundError, match=r"Cannot save the model to '': the path is empty; give a file name"):
            clf.save(path)
    assert opened == []
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["work"]


def test_save_takes_a_bytes_path_as_load_does(saved, tmp_path):
    # open() and load take bytes paths; save failed with "Can't mix strings and bytes in path components"
    path, clf, X = saved
    target = os.fsencode(tmp_path / "m.tabmoe")
    clf.save(target)
    np.testing.assert_array_equal(TabularMoEClassifier.load(target).predict_proba(X), clf.predict_proba(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tabmoe"]


@pytest.mark.parametrize("unit", ["ns", "us", "D"])
def test_datetime64_class_labels_round_trip(tmp_path, unit):
    # numpy's .item() made datetime64[ns] labels ints (the loaded model predicted
    # 1577836800000000000), and refused [us] ones as datetime.date
    r = np.random.default_rng(0)
    X = pd.DataFrame({"a": r.choice(["x", "y"], 60)})
    y = np.where(X["a"] == "x", np.datetime64("2020-01-01"), np.datetime64("2021-01-01")).astype(f"datetime64[{unit}]")
    clf = TabularMoEClassifier(max_epochs=2, device="cpu", random_state=0).fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.classes_.dtype == clf.classes_.dtype
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.predict(X[:1])[0] in (np.datetime64("2020-01-01"), np.datetime64("2021-01-01"))


def test_load_leaves_the_callers_random_state_as_it_was(saved):
    """load builds the network before reading its weights; that initialisation drew from
    the caller's global torch generator, so code after a load drew other numbers."""
    path, _, _ = saved
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    TabularMoEClassifier.load(path)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_save_refuses_a_path_that_is_not_a_regular_file(saved, tmp_path):
    """The write-then-rename replaced a device or pipe at the path with the model file (as
    root, clf.save('/dev/full') turned the device into a 148 KB file); now it is refused and
    left as it was. A symbolic link is still replaced (documented), a regular file saved over."""
    _, model, _ = saved
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OSError, match="not a regular file"):
        model.save(pipe)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file left
    target = tmp_path / "model.tabmoe"
    model.save(target)
    model.save(target)  # a regular file is saved over
    link = tmp_path / "link.tabmoe"
    link.symlink_to(target)
    model.save(link)
    assert link.is_file() and not link.is_symlink()


@pytest.mark.parametrize("kind", [str, Path, os.fsencode], ids=["str", "Path", "bytes"])
def test_a_path_starting_with_a_tilde_is_in_the_users_home(saved, tmp_path, monkeypatch, kind):
    """save("~/m.tabmoe") said "the folder '<working dir>/~' does not exist" (and wrote there
    where such a folder existed), load("~/m.tabmoe") "No such file or directory"; tabmoe's
    data paths expand `~`, and the model's paths now do too."""
    path, clf, X = saved
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    (work / "~").mkdir(parents=True)  # a literal "~" folder under the working directory
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    clf.save(kind("~/m.tabmoe"))
    assert [p.name for p in home.iterdir()] == ["m.tabmoe"] and not any((work / "~").iterdir())
    loaded = TabularMoEClassifier.load(kind("~/m.tabmoe"))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    with pytest.raises(FileNotFoundError, match=r"Cannot save the model to .*home.*absent.*does not exist"):
        clf.save(kind("~/absent/m.tabmoe"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_load_reads_a_pipe_whose_writer_holds_the_warnings_lock(saved, tmp_path):
    """load read a pipe while holding tabmoe's warnings lock (tabmoe._stack): a writer thread
    inside a tabmoe warnings block (a fit reading eval_set) that fills the pipe waited for
    the reader, which waited for the lock: neither went on. The pipe is read first now."""
    import threading

    from tabmoe._stack import catch_warnings

    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_SETPIPE_SZ"):
        pytest.skip("needs a pipe buffer smaller than a model file (Linux's F_SETPIPE_SZ)")
    path, clf, X = saved
    data = path.read_bytes()
    assert len(data) > 4096  # more than the pipe's buffer below: the writer waits for the reader
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def write():
        with catch_warnings(), open(pipe, "wb") as fh:
            fcntl.fcntl(fh.fileno(), fcntl.F_SETPIPE_SZ, 4096)
            fh.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    loaded = []
    reader = threading.Thread(target=lambda: loaded.append(TabularMoEClassifier.load(pipe)), daemon=True)
    reader.start()
    reader.join(timeout=60)
    writer.join(timeout=5)
    assert not reader.is_alive() and not writer.is_alive(), "load and the pipe's writer waited for each other"
    np.testing.assert_array_equal(loaded[0].predict_proba(X), clf.predict_proba(X))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_load_reads_a_pipe(saved, tmp_path):
    """A file that cannot seek (a named pipe, /dev/stdin fed by `cat m.tabmoe |`, a shell's
    <(...)) failed with a bare "io.UnsupportedOperation: File or stream is not seekable",
    naming no file; it is read whole and loads."""
    path, clf, X = saved
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code = f"open({str(pipe)!r}, 'wb').write(open({str(path)!r}, 'rb').read())"
    writer = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    try:
        loaded = TabularMoEClassifier.load(pipe)
    finally:
        try:
            writer.wait(timeout=60)
        except subprocess.TimeoutExpired:  # load never opened the pipe
            writer.kill()
    assert writer.returncode == 0
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
