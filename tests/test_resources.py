"""Memory bounds on large tables (slow): each figure is measured in a fresh process by
benchmarks/memory.py (peak RSS of the fit or predict call, above the RSS when it started,
input table included in the latter). The bounds and their derivation: docs/reliability.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tabmoe.nn._base
import tabmoe.nn._batching
from tabmoe import TabularMoEClassifier

from .baseline_factories import BASELINE_FACTORIES
from .conftest import REPO

MIB = 2**20


def measure(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "memory.py"), *args],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if report["step_peak_mib"] is None:
        pytest.skip("peak RSS of one step needs Linux /proc/self/clear_refs")
    return report


@pytest.mark.slow
def test_fit_million_rows_fifty_columns_under_2_5_gib():
    """Tokens (int32, plus the validation split's copy) + one batch of two layers' attention
    (``n_layers="auto"`` above 10,000 rows, random masking: B x H x L^2 floats a layer, a
    few copies): 2,121 MiB measured (docs/reliability.md)."""
    report = measure(
        "fit-wide", "--rows", "1000000", "--columns", "50", "--batch-size", "4096",
        "--max-batches", "5",
    )  # fmt: skip
    assert (report["n_layers"], report["masking"]) == (2, "random"), report  # the network the bound is for
    assert report["step_peak_above_before_mib"] < 2560, report


@pytest.mark.slow
def test_fit_million_category_column_with_min_frequency_under_768_mib():
    """The recommended setting for an id-like column: values seen once fold into UNKNOWN
    (345 MiB measured, one full epoch; docs/reliability.md)."""
    report = measure("fit-ids", "--rows", "1000000", "--batch-size", "4096", "--min-frequency", "2")
    # The ids were folded: 10^6 tokens otherwise. What remains is the 5-value column, the
    # specials and the numeric column's bins (n_bins="auto": 200 at 10^6 rows).
    assert report["n_tokens"] < 1_000, report
    assert report["step_peak_above_before_mib"] < 768, report


@pytest.mark.slow
def test_million_category_head_caps_the_batch_and_memory():
    """Without folding, a 10^6-value output layer: batch_size=4096 would need ~47 GiB of
    logits and their gradients (11.5 MiB per row of batch, measured at 32 and 256 rows);
    batches are capped at 33 rows, with a warning naming the column. What remains is the
    parameters: embedding and head, 10^6 x d_model floats each, in four copies (weight,
    gradient, Adam's two moments): 1.95 GiB at the default d_model=64, plus ~0.5 GiB of
    capped logits. 2,689 MiB measured (1,239 MiB at the paper's d_model=20)."""
    report = measure(
        "fit-ids", "--rows", "1000000", "--batch-size", "4096", "--min-frequency", "1",
        "--max-batches", "3",
    )  # fmt: skip
    assert report["n_tokens"] > 10**6, report
    assert any(
        "'user' has 1,000,000 categories" in w and "capped at 33 rows" in w
        for w in report["warnings"]
    ), report
    assert report["step_peak_above_before_mib"] < 3072, report


def predict_batch_mib(report: dict) -> float:
    """The tensors live at once in one predict batch of the benchmark's network, in MiB: at
    the first layer's softmax, which computes every position's query (the second and last
    layer computes the label's alone), B rows x L positions hold the input x and q, k, v
    (d_model floats each) and the scores and their softmax (n_heads x L floats each):
    B x L x (4 d + 2 H L) float32. Counted by a torch dispatch mode over one batch of 51
    positions, d 64, 4 heads: 104.5 MiB at 806 rows (this formula: 104.1), 333.2 at 2,570
    (332.0; the rows before they counted the scores)."""
    net = report["network"]
    # the formula is the two-layer softmax network's (20,000 training rows: n_layers="auto" -> 2)
    assert (net["n_layers"], net["gate"], net["n_members"]) == (2, "softmax", 1), net
    positions, width = net["positions"], 4 * net["d_model"] + 2 * net["n_heads"] * net["positions"]
    return report["batch_rows"] * positions * width * 4 / MIB


def predict_peak_mib(report: dict) -> float:
    """What predict_proba holds at its peak, in MiB, by the model: one batch's tensors
    (predict_batch_mib) with the float32 logits of all rows (the output filled batch by
    batch), or after the last batch the outputs (float32 logits and the float64 log
    probabilities, exponentiated in place: 12 bytes x classes a row), whichever is larger:
    the former up to 6.8 million rows of the benchmark's table."""
    n, classes = report["rows"], report["n_classes"]
    return max(predict_batch_mib(report) + n * 4 * classes / MIB, n * 12 * classes / MIB)


@pytest.mark.slow
def test_predict_memory_is_flat_in_the_number_of_rows():
    """predict_proba tokenizes and runs the network batch by batch (predict_batch_rows): its
    peak above the start is predict_peak_mib (one batch's tensors, 104 MiB here, and the
    float32 logits, 8 bytes a row: 105 MiB at 10^5 rows, 112 at 10^6) plus 48 MiB for one
    tokenized chunk and its tokenizer temporaries, the allocator's heap of blocks under 1 MiB
    and the interpreter; from 10^5 to 10^6 rows it grows by the model's 7 MiB, plus 32.

    Measured with glibc mmapping every block of 1 MiB or more (--mmap-threshold), so that the
    RSS follows the live allocations, nine runs: 112-116 and 123-135 MiB above the start
    (10^5 and 10^6 rows, input table included): 7-23 MiB over the model; 350-354 and
    358-363 in the 2,570-row batches sized before the rows counted the attention scores
    (332 MiB a batch). With glibc's default threshold the same steps took 290-341 and 382 MiB
    (before: 543-647 and 586-675): blocks under its dynamic threshold (up to 32 MiB; a
    batch's 2^23-float tensors are just under it) stay resident in its heap after free, in a
    layout that changes from run to run (10^6 - 10^5 once grew 167 MiB), which no bound on
    what tabmoe allocates can follow.

    Tokenizing all of X at once (int16 tokens, 100 bytes a row) measured 122 and 219 MiB:
    it fails both bounds (growth 97 > 39 MiB, 219 > 160 MiB); all rows' activations would
    take gigabytes. The exact, allocation-level bound is
    test_predict_memory_beyond_the_output_does_not_grow_with_rows."""
    threshold = ("--mmap-threshold", str(MIB))
    small = measure("predict", "--rows", "100000", "--columns", "50", *threshold)
    if small["mmap_threshold"] is None:  # not glibc: freed blocks may stay resident, unbounded
        pytest.skip("the bound assumes glibc's mallopt(M_MMAP_THRESHOLD)")
    large = measure("predict", "--rows", "1000000", "--columns", "50", *threshold)
    growth = large["step_peak_above_before_mib"] - small["step_peak_above_before_mib"]
    assert growth < predict_peak_mib(large) - predict_peak_mib(small) + 32, (small, large)
    bound = predict_peak_mib(large) + 48
    assert large["step_peak_above_before_mib"] < bound, (bound, large)


class _LargestTensor(TorchDispatchMode):
    """The most elements of any tensor an op returns while the mode is on."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
@pytest.mark.parametrize("n_layers", [1, 2])
def test_no_predict_tensor_exceeds_the_batch_floats(monkeypatch, n_layers, gate):
    """Every tensor of a predict batch holds at most PREDICT_BATCH_FLOATS elements. A layer
    that computes every position's query (a two-layer network's first) holds rows x heads x
    positions^2 attention scores (twice that in tanhmax's slots): rows sized by d_model
    alone gave 3.2 times the budget at 51 positions and the default widths (332 MiB a
    batch; 19 times at 301 positions), here a batch of all 2,000 rows: 2.2 and 4.4 times it."""
    monkeypatch.setattr(tabmoe.nn._base, "PREDICT_BATCH_FLOATS", 2**19)
    X, y = _mixed_table(2_000, seed=0)  # 17 positions
    clf = TabularMoEClassifier(
        d_model=8, n_heads=2, ff_dim=16, n_layers=n_layers, gate=gate, max_epochs=1,
        device="cpu", random_state=0,
    ).fit(X, y)  # fmt: skip
    assert clf._predict_rows() > 256  # above the floor: the budget binds
    with _LargestTensor() as mode:
        clf.predict_proba(X)
    assert 0 < mode.largest <= 2**19, (clf._predict_rows(), mode.largest)


def test_huge_output_layers_cap_rows_per_batch_with_a_warning(monkeypatch):
    """The cap of the slow test above, at a small scale: 2,000 ids + 3 + 2 classes = 2,005
    logits a row, 20,000 allowed -> 9 rows a batch instead of 512."""
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_LOGITS", 20_000)
    X = pd.DataFrame({"id": [f"u{i}" for i in range(2000)], "plan": np.arange(2000) % 3})
    y = np.arange(2000) % 2
    clf = TabularMoEClassifier(max_epochs=1, batch_size=512, device="cpu", random_state=0)
    with pytest.warns(
        UserWarning, match=r"'id' has 2,000 categories.*capped at 9 rows \(instead of 512\)"
    ):
        clf.fit(X, y)
    with pytest.warns(UserWarning, match=r"'id' has 2,000 categories.*capped at 9 rows") as caught:
        clf.adapt(X.iloc[:100], max_epochs=1)  # continued training is capped too
    assert caught[0].filename == __file__
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_LOGITS", 2**25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the real cap leaves ordinary tables alone
        # 'id' is an id column on purpose: the fit-time column warning about it is not the cap's
        warnings.filterwarnings("ignore", category=tabmoe.ColumnWarning)
        TabularMoEClassifier(max_epochs=1, batch_size=512, device="cpu").fit(X, y)


@pytest.mark.filterwarnings("ignore:The number of unique classes")  # (scikit-learn, of 300 classes)
def test_the_output_layer_cap_names_the_label_or_the_columns_that_make_it(monkeypatch):
    """The cap's warning named the largest feature column whatever held the logits: a label
    of 300 classes beside a 3-value column warned "Column 'plan' has 3 categories: training
    batches are capped ...", as did 40 columns of 20 bins each. Here at a small scale."""
    fast = dict(max_epochs=1, device="cpu", random_state=0, early_stopping=False, batch_size=64)
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_LOGITS", 2**12)
    X = pd.DataFrame({"plan": np.arange(300) % 3})
    with pytest.warns(UserWarning, match=r"^The label has 300 classes: training batches are capped at 13 rows"):
        TabularMoEClassifier(**fast).fit(X, np.arange(300))  # 3 + 300 logits a row
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.normal(size=(300, 40)), columns=[f"x{j}" for j in range(40)])
    with pytest.warns(UserWarning, match=r"^The 40 columns and the label have 802 values to score a row "
                                          r"\(the most: column 'x0', 20\): training batches are capped at 5 rows"):
        TabularMoEClassifier(**fast, n_bins=20, max_scored_features=2).fit(wide, np.arange(300) % 2)


def test_wide_tables_warn_of_the_attention_scores_a_batch_holds(monkeypatch):
    """A training batch holds rows x heads x queries x positions attention scores, about four
    times over at a step's peak: they grow with the square of the number of columns (256 rows
    of 1,000 columns: 3.8 GiB a tensor; 320 rows of 1,000 columns, 20 rows a batch, peaked at
    1.6 GiB), and fit said nothing before memory ran out. Here at a small scale: 31 positions,
    100,000 scores allowed."""
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_SCORES", 100_000, raising=False)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(320, 30)), columns=[f"x{j}" for j in range(30)])
    y = (X["x0"] > 0).to_numpy().astype(np.int64)
    fast = dict(max_epochs=1, device="cpu", random_state=0)

    def scores_warnings(**params):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = TabularMoEClassifier(**fast, **params).fit(X, y)
        return clf, [w for w in caught if "attention scores" in str(w.message)]

    clf, caught = scores_warnings(batch_size=32)  # 32 x 4 x 31 x 31 = 123,008 (leave-one-out)
    assert len(caught) == 1 and "(32 rows x 4 heads x 31 x 31 positions, float32)" in str(caught[0].message)
    assert caught[0].filename == __file__
    assert "Lower batch_size" in str(caught[0].message)
    assert len(scores_warnings(batch_size=25)[1]) == 0  # 96,100
    assert len(scores_warnings(batch_size=32, max_scored_features=5)[1]) == 0  # 6 queries
    _, caught = scores_warnings(batch_size=16, gate="tanhmax")  # two slots a key
    assert "(16 rows x 4 heads x 31 x 31 positions x 2, float32)" in str(caught[0].message)
    _, caught = scores_warnings(batch_size=32, n_layers=2)  # random masking: every query
    assert "(32 rows x 4 heads x 31 x 31 positions, float32)" in str(caught[0].message)
    assert "validation" not in str(caught[0].message)  # its other passes hold at most the budget
    _, caught = scores_warnings(batch_size=2, masking="copies")  # 31 masked copies of a row
    assert "(2 rows x 4 heads x 31 x 31 positions x 31, float32)" in str(caught[0].message)
    with pytest.warns(UserWarning, match=r"attention scores a batch \(32 rows") as caught:
        clf.adapt(X, max_epochs=1)  # continued training too
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_SCORES", 2**27)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the real bound leaves this table (and 256 rows of it) alone
        TabularMoEClassifier(**fast, batch_size=256).fit(X, y)


@pytest.mark.filterwarnings("ignore::tabmoe.ColumnWarning")  # 'id' is near-unique on purpose
def test_a_batch_size_above_the_rows_is_warned_about_as_the_rows_it_holds(monkeypatch):
    """A batch holds at most the rows there are: batch_size=4096 on 60 rows of 300 columns
    warned 'Training holds 5.5 GiB of attention scores a batch (4096 rows ...)', where a
    batch held 54 rows (0.07 GiB), and the output-layer cap said 'capped at 1,538 rows
    (instead of 4096)' for 9 training rows. Both now count the rows trained on; the batches
    are those of before."""
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_SCORES", 100_000)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20, 30)), columns=[f"x{j}" for j in range(30)])
    y = np.arange(20) % 2
    fast = dict(max_epochs=1, device="cpu", random_state=0, early_stopping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 20 x 4 x 31 x 31 = 76,880 scores: within 100,000
        TabularMoEClassifier(**fast, batch_size=4096).fit(X, y)
    with pytest.warns(UserWarning, match=r"\(40 rows x 4 heads x 31 x 31 positions, float32\)"):
        TabularMoEClassifier(**fast, batch_size=4096).fit(pd.concat([X, X]), np.r_[y, y])  # 40 rows: above

    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_LOGITS", 20_000)
    ids = pd.DataFrame({"id": [f"u{i}" for i in range(2000)], "plan": np.arange(2000) % 3})
    labels = np.arange(2000) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 10 rows of 10 + 3 + 2 logits: far below the cap
        warnings.filterwarnings("ignore", category=tabmoe.ColumnWarning)  # (the near-unique 'id')
        TabularMoEClassifier(**fast, batch_size=4096).fit(ids[:10], labels[:10])
    with pytest.warns(UserWarning, match=r"capped at 9 rows \(instead of 2000\)"):  # the rows, not 4096
        TabularMoEClassifier(**fast, batch_size=4096).fit(ids, labels)


def test_deeper_networks_validate_and_predict_within_the_attention_scores_budget(monkeypatch):
    """A deeper network's first layer computes every position's query outside training too,
    and early stopping's validation took max(batch_size, 1,024) rows a batch and prediction
    (explain, feature_importances_) at least 256, whatever their scores held: 11,000 x 300 at
    batch_size=16 peaked 3,281 MiB above the start in fit (2,000 x 400 predicted with 1,364).
    Both are now capped at MAX_BATCH_SCORES scores a batch, as training's warning is; where
    the cap does not bind (every table of the suites) the batches are those of before. Here
    the wide table is simulated by a small budget: 31 positions, 4 heads, 100,000 scores."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(1_400, 30)), columns=[f"x{j}" for j in range(30)])
    y = (X["x0"] > 0).to_numpy().astype(np.int64)
    sizes: list[int] = []
    validation_loss = TabularMoEClassifier._get_val_loss

    def recorded(self):
        loss = validation_loss(self)
        return lambda module, batch: sizes.append(len(batch["tokens"])) or loss(module, batch)

    monkeypatch.setattr(TabularMoEClassifier, "_get_val_loss", recorded)

    def fit(n_layers=2):
        sizes.clear()
        clf = TabularMoEClassifier(max_epochs=1, batch_size=64, n_layers=n_layers, device="cpu", random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # training's own scores warning under the small budget
            return clf.fit(X[:300], y[:300], eval_set=(X[300:], y[300:])), list(sizes)  # 1,100 validation rows

    narrow, narrow_sizes = fit()  # the real budget: the batches of before
    assert narrow_sizes == [1_024, 76]
    assert narrow._predict_rows() == tabmoe.nn._base.predict_batch_rows(31, 128) == 2_114  # ff_dim: the widest
    monkeypatch.setattr(tabmoe.nn._batching, "MAX_BATCH_SCORES", 100_000)
    wide, wide_sizes = fit()  # 100,000 // (4 x 31 x 31) = 26 rows a batch
    assert wide_sizes == [26] * 42 + [8]
    assert wide._predict_rows() == 26  # was the 256-row floor
    np.testing.assert_allclose(wide.predict_proba(X), narrow.predict_proba(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wide.history_[-1]["val_loss"], narrow.history_[-1]["val_loss"], rtol=1e-5)
    np.testing.assert_allclose(wide.feature_importances_, narrow.feature_importances_, rtol=1e-5, atol=1e-7)
    one_layer, one_layer_sizes = fit(n_layers=1)  # the label's query alone: 4 x 31 scores a row
    assert one_layer_sizes == [806, 294] and one_layer._predict_rows() == 806


def _mixed_table(n_rows: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """8 string columns (object dtype) and 8 float columns."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {f"c{j}": rng.choice(["a", "b", "c", "d"], n_rows).astype(object) for j in range(8)}
        | {f"x{j}": rng.normal(size=n_rows) for j in range(8)}
    )
    return X, ((X["c0"] == "a") ^ (X["x0"] > 0)).to_numpy().astype(np.int64)


def _traced_peak(call) -> tuple[int, object]:
    """Peak of the memory traced by tracemalloc (numpy arrays, Python objects; not torch's
    own allocations) during ``call()``, above what was traced when it started."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        return tracemalloc.get_traced_memory()[1] - before, result
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("model", ["tabmoe", "ft_transformer"])
@pytest.mark.parametrize("method", ["predict", "predict_proba"])
def test_predict_memory_beyond_the_output_does_not_grow_with_rows(model, method):
    """X is checked once, then tokenized / encoded and run batch by batch: from 20,000 to
    200,000 rows (8 string + 8 float columns), the traced peak grows by the outputs alone
    (float32 logits, then float64 probabilities or argmax + labels: at most 24 bytes a row
    with 2 classes) plus 1 MiB. Measured growth: tabmoe 13-22 bytes a row, FT-Transformer 9;
    with X tokenized whole before the forward passes, 65 and 328 (this test failed)."""
    if model == "ft_transformer":
        pytest.importorskip("rtdl_revisiting_models")
    X, y = _mixed_table(2_000, seed=0)
    if model == "tabmoe":
        clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0)
    else:
        clf = BASELINE_FACTORIES[model]().set_params(max_epochs=1)
    clf.fit(X, y)
    peaks = {}
    for n_rows in (20_000, 200_000):
        X_new, _ = _mixed_table(n_rows, seed=1)
        peaks[n_rows], out = _traced_peak(lambda X_new=X_new: getattr(clf, method)(X_new))
        assert len(out) == n_rows
    per_row = 4 * 2 + 16  # float32 logits; 2 x float64 or argmax + labels
    growth = peaks[200_000] - peaks[20_000]
    assert growth < 180_000 * per_row + MIB, peaks


def test_probabilities_of_many_classes_are_computed_a_batch_of_rows_at_a_time(monkeypatch):
    """predict_log_proba cast all rows' float32 logits to float64 and took their log_softmax
    (two more arrays of all rows), and predict_proba exponentiated that into a new one: 28
    bytes a logit at the peak for an output of 8 (200,000 rows x 500 classes: 1,921 MiB above
    the start for 763 MiB of probabilities, benchmarks/memory_proba.py). Now the float64
    output is filled a batch of rows at a time and exponentiated in place (1,177 MiB), with
    the same values bit for bit."""
    rng = np.random.default_rng(0)
    X, _ = _mixed_table(2_000, seed=0)
    y = rng.integers(0, 200, len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes seen once: not what is tested
        clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0).fit(X, y)
    monkeypatch.setattr(tabmoe.nn._base, "PREDICT_BATCH_ROWS", 64)  # 32 batches of rows
    logits = torch.from_numpy(clf._label_logits(X))
    former = torch.log_softmax(logits.double(), dim=1).numpy()  # the former reading, whole
    for method, expected in (("predict_log_proba", former), ("predict_proba", np.exp(former))):
        with _LargestTensor() as mode:
            out = getattr(clf, method)(X)
        np.testing.assert_array_equal(out, expected)
        assert mode.largest < logits.numel(), (method, mode.largest)  # no tensor of all rows' logits


@pytest.mark.parametrize("params", [{}, {"missing": "exclude", "numeric_embedding": "piecewise"}])
def test_predict_tokenizes_chunks_of_batches_as_it_would_batch_by_batch(monkeypatch, params):
    # a chunk of many batches: each batch's tokens, attention mask and bin positions are its
    # own rows' (a slicing error would misalign them); per-batch tokenizing is the reference
    import tabmoe.nn._base as base

    X, y = _mixed_table(600, seed=0)
    X.iloc[::7, 3] = None
    X.iloc[::5, 9] = np.nan
    clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0, **params).fit(X, y)
    monkeypatch.setattr(type(clf), "_predict_rows", lambda self: 7)  # 86 batches, the last of 5 rows
    whole = clf.predict_proba(X)  # one chunk
    monkeypatch.setattr(base, "PREDICT_TOKENIZE_CELLS", 7 * 16 * 3)  # chunks of 3 batches
    np.testing.assert_array_equal(clf.predict_proba(X), whole)
    monkeypatch.setattr(base, "PREDICT_TOKENIZE_CELLS", 1)  # one batch a chunk, as before
    np.testing.assert_array_equal(clf.predict_proba(X), whole)
