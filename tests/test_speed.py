"""Speed options and batched prediction: ``compile``, ``mixed_precision``, and prediction
that tokenizes / encodes its input batch by batch (memory: tests/test_resources.py)."""

from __future__ import annotations

import functools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError

import tabmoe.baselines.torch_base
import tabmoe.estimator
import tabmoe.nn.trainer
import tabmoe.tokenizer
from tabmoe import TabularMoEClassifier
from tabmoe.baselines import FTTransformerClassifier
from tabmoe.nn._base import predict_batch_rows, resolve_mixed_precision
from tabmoe.nn.objective import scatter_scored
from tabmoe.nn.trainer import Trainer, TrainerConfig

FAST = dict(max_epochs=2, batch_size=32, device="cpu", random_state=0)
TINY_FT = dict(n_blocks=1, d_block=16, attention_n_heads=2, **FAST)
CUDA = torch.cuda.is_available()


def _with_unseen(X: pd.DataFrame) -> pd.DataFrame:
    """X with an unseen colour in rows 3 and 150 (in different prediction batches)."""
    X = X.copy()
    X.loc[[3, 150], "colour"] = ["violet", "teal"]
    return X


# ---------------------------------------------------------------- batched prediction
@pytest.mark.parametrize("missing", ["token", "exclude"])
def test_prediction_batches_give_the_same_outputs_and_one_warning(mixed_frame, monkeypatch, missing):
    X, y = mixed_frame
    X = X.astype({"size": float})
    X.loc[::7, "size"] = np.nan
    clf = TabularMoEClassifier(**FAST, missing=missing).fit(X, y)
    X_new = _with_unseen(X)
    with pytest.warns(UserWarning, match="'colour'"):
        expected = clf.predict_proba(X_new)  # 200 rows: one batch
    monkeypatch.setattr(clf, "_predict_rows", lambda: 7)
    with pytest.warns(UserWarning) as caught:
        batched = clf.predict_proba(X_new)
    # Equal up to float32 rounding: matrix kernels may sum in another order for another
    # number of rows (seen on an H200 machine's CPU and torch 2.11: 9e-8 apart).
    np.testing.assert_allclose(batched, expected, rtol=1e-5, atol=1e-7)
    assert [str(w.message) for w in caught] == [
        "Column 'colour': 2 value(s) (1.0% of rows) were not seen during fit and map to the "
        "UNKNOWN token (e.g. ['violet', 'teal']). The model attends to UNKNOWN; unknown='exclude' "
        "leaves such values out of the attention."
    ]


@pytest.mark.parametrize("missing", ["token", "exclude"])
def test_prediction_batches_warn_once_of_missing_values_where_fit_saw_none(mixed_frame, monkeypatch, missing):
    """Was: a missing value in a column that held none at fit took the MISSING token, never
    seen there, in silence. One warning per column for all the batches, with the model's
    note; none with missing='exclude' (left out of the attention). The same predictions."""
    X, y = mixed_frame
    clf = TabularMoEClassifier(**FAST, missing=missing).fit(X, y)
    X_new = X.copy()
    X_new.loc[[3, 150], "colour"] = None  # in different prediction batches
    monkeypatch.setattr(clf, "_predict_rows", lambda: 7)
    if missing == "exclude":
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            clf.predict_proba(X_new)
        return
    with pytest.warns(UserWarning) as caught:
        proba = clf.predict_proba(X_new)
    assert [str(w.message) for w in caught] == [
        "Column 'colour': 2 value(s) (1.0% of rows) are missing and map to the MISSING token, which "
        "fit never saw in this column. The model attends to MISSING; missing='exclude' leaves "
        "missing values out of the attention."
    ]
    assert all(w.filename == __file__ for w in caught)
    with pytest.warns(UserWarning, match="are missing"):
        tokens = clf.tokenizer_.transform(X_new)
    assert tokens[[3, 150], 0].tolist() == [tabmoe.tokenizer.MISSING] * 2
    with torch.no_grad():
        logits = clf.module_.label_logits(torch.from_numpy(tokens.astype(np.int64)))
    order = np.searchsorted(np.sort(clf.label_token_ids_), clf.label_token_ids_)
    np.testing.assert_allclose(proba, torch.softmax(logits.double(), 1).numpy()[:, order], atol=1e-6)


def test_prediction_batch_rows_keep_the_activation_size():
    """8,192 rows of 51 positions at the paper's width 20 (the measured memory bound); wider
    networks get proportionally fewer rows, never under 256 nor over 8,192."""
    assert predict_batch_rows(51, 20) == 8192
    assert predict_batch_rows(51, 64) == 2**23 // (51 * 64) == 2570
    assert predict_batch_rows(5, 20) == 8192
    assert predict_batch_rows(10_000, 512) == 256


def test_baseline_prediction_batches_give_the_same_outputs(mixed_frame, monkeypatch):
    pytest.importorskip("rtdl_revisiting_models")
    X, y = mixed_frame
    clf = FTTransformerClassifier(**TINY_FT).fit(X, y)
    expected = clf.predict_proba(X)
    monkeypatch.setattr(tabmoe.baselines.torch_base, "PREDICT_BATCH_ROWS", 9)
    monkeypatch.setattr(clf, "_predict_batch_rows", 4)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=1e-6, atol=1e-7)


def test_columns_are_checked_before_any_batch_runs(mixed_frame, monkeypatch):
    X, y = mixed_frame
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    monkeypatch.setattr(clf, "_predict_rows", lambda: 7)
    calls = []
    label_logits = type(clf.module_).label_logits
    monkeypatch.setattr(
        type(clf.module_), "label_logits", lambda m, *a: calls.append(1) or label_logits(m, *a)
    )
    with pytest.raises(ValueError, match="same order"):
        clf.predict(X[["size", "colour", "kind"]])
    assert calls == []
    X_bad = X.copy()
    X_bad.loc[150, "size"] = np.inf  # a bad value is found by its batch
    with pytest.raises(ValueError, match="infinity in column 'size'"):
        clf.predict(X_bad)


# ---------------------------------------------------------------- mixed precision
def test_mixed_precision_runs_bf16_on_cpu_and_auto_stays_float32(mixed_frame):
    """True: CPU bf16 autocast in training and prediction (close to float32, not equal);
    "auto": float32 on the CPU, bit for bit; neither warns."""
    X, y = mixed_frame
    full = TabularMoEClassifier(**FAST).fit(X, y)
    expected = full.predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixed = TabularMoEClassifier(**FAST, mixed_precision=True).fit(X, y)
        auto = TabularMoEClassifier(**FAST, mixed_precision="auto").fit(X, y)
        proba = mixed.predict_proba(X)
    assert mixed.history_[0]["train_loss"] != full.history_[0]["train_loss"]  # bf16 training
    assert 0 < np.abs(proba - expected).max() < 0.05
    float32_proba = mixed.set_params(mixed_precision=False).predict_proba(X)
    assert 0 < np.abs(proba - float32_proba).max() < 0.01  # bf16 prediction
    np.testing.assert_array_equal(auto.predict_proba(X), expected)
    np.testing.assert_array_equal(
        [h["train_loss"] for h in auto.history_], [h["train_loss"] for h in full.history_]
    )


@pytest.mark.parametrize("params", [dict(max_scored_features=1), dict(max_scored_features=1, n_members=2),
                                    dict(linear_term=True)])
def test_mixed_precision_trains_with_sampled_scored_columns_and_the_linear_term(mixed_frame, params):
    """bf16 scores and float32 scattered terms (the sampled columns' diagonal) once failed."""
    X, y = mixed_frame
    model = TabularMoEClassifier(**FAST, mixed_precision=True, **params).fit(X, y)
    assert np.isfinite(model.history_[-1]["train_loss"])
    assert model.predict_proba(X).shape == (len(X), 2)


def test_mixed_precision_keeps_the_losses_and_the_label_logits_float32(mixed_frame):
    """Under bf16 autocast the body runs in bf16, but the per-position NLL, the inflation of
    sampled columns and the label head (predictions, the early-stopping loss) stay float32:
    the label logits are the float32 head applied to the bf16 body's output."""
    X, y = mixed_frame
    clf = TabularMoEClassifier(**FAST, block="attention").fit(X, y)
    module, tokens = clf.module_, torch.from_numpy(clf.train_sample_tokens_).long()
    heads, ids = module.heads, module.label_ids
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = module.hidden(tokens)
        nll, _ = heads.nll(hidden, tokens)
        masked, _ = module.label_inputs(tokens)
        h = module.hidden(masked, None, torch.tensor([module.label_position]))[:, 0]
        logits = module.label_logits(tokens)
        inflate = scatter_scored(torch.zeros(2, 8, 4, dtype=torch.bfloat16), torch.arange(8), 30)[2]
    assert hidden.dtype == h.dtype == torch.bfloat16  # the body does run in bf16
    assert nll.dtype == logits.dtype == inflate.dtype == torch.float32
    assert inflate[0] == torch.tensor(29 / 7)  # bf16 would round it to 4.156
    expected = torch.nn.functional.linear(h.float(), heads.weight[ids], heads.bias[ids])
    torch.testing.assert_close(logits, expected, rtol=0, atol=0)


def test_mixed_precision_true_warns_where_it_has_no_effect():
    with pytest.warns(UserWarning, match="mixed_precision=True has no effect on device 'meta'"):
        assert resolve_mixed_precision(True, torch.device("meta")) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_mixed_precision("auto", torch.device("meta")) is False
        assert resolve_mixed_precision("auto", torch.device("cpu")) is False
        assert resolve_mixed_precision(np.True_, torch.device("cpu")) is True


def test_mixed_precision_needs_native_bf16_on_the_requested_gpu(monkeypatch):
    """bf16 only on a GPU of compute capability 8+, the one asked for (cuda:1 here, not the
    current cuda:0); torch's is_bf16_supported() is True on older GPUs too (emulation)."""
    capability = {0: (8, 0), 1: (7, 5)}  # an A100 and a T4 in one machine
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(
        torch.cuda, "get_device_capability", lambda d=None: capability[torch.device(d).index or 0]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_mixed_precision("auto", torch.device("cuda:0")) is True
        assert resolve_mixed_precision(True, torch.device("cuda:0")) is True
        assert resolve_mixed_precision("auto", torch.device("cuda:1")) is False
    with pytest.warns(UserWarning, match="no effect on a CUDA device without bf16"):
        assert resolve_mixed_precision(True, torch.device("cuda:1")) is False


def test_speed_parameters_are_validated_and_saved(mixed_frame, tmp_path):
    X, y = mixed_frame
    for bad in ({"mixed_precision": "bf16"}, {"compile": "yes"}):
        with pytest.raises(InvalidParameterError, match=next(iter(bad))):
            TabularMoEClassifier(**FAST, **bad).fit(X, y)
    clf = TabularMoEClassifier(**FAST, mixed_precision="auto").fit(X, y)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.get_params()["mixed_precision"] == "auto"


def test_baselines_share_the_speed_parameters(mixed_frame):
    pytest.importorskip("rtdl_revisiting_models")
    X, y = mixed_frame
    expected = FTTransformerClassifier(**TINY_FT).fit(X, y).predict_proba(X)
    mixed = FTTransformerClassifier(**TINY_FT, mixed_precision=True).fit(X, y)
    assert 0 < np.abs(mixed.predict_proba(X) - expected).max() < 0.05
    with pytest.raises(InvalidParameterError, match="compile"):
        FTTransformerClassifier(**TINY_FT, compile=1.5).fit(X, y)


@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_mixed_precision_on_cuda_trains_and_predicts_close_to_float32(mixed_frame):
    X, y = mixed_frame
    cuda = dict(FAST, device="cuda")
    full = TabularMoEClassifier(**cuda).fit(X, y)
    mixed = TabularMoEClassifier(**cuda, mixed_precision=True).fit(X, y)
    p_full, p_mixed = full.predict_proba(X), mixed.predict_proba(X)
    assert p_mixed.dtype == np.float64 and np.isfinite(p_mixed).all()
    assert np.abs(p_full - p_mixed).max() < 0.05  # 2 epochs from the same initialisation


# ---------------------------------------------------------------- compile
def _failing_backend(gm, example_inputs):
    raise RuntimeError("no C++ compiler here")


@pytest.mark.parametrize("where", ["torch.compile", "first call"])
def test_compile_failure_warns_and_trains_uncompiled(mixed_frame, monkeypatch, where):
    """torch.compile unavailable (raises when called) or failing when the compiled step
    first runs (a backend error): a warning naming compile=True, then the same model as
    compile=False (the failed attempt draws no random numbers)."""
    X, y = mixed_frame
    expected = TabularMoEClassifier(**FAST).fit(X, y).predict_proba(X)
    if where == "torch.compile":

        def unavailable(*args, **kwargs):
            raise RuntimeError("torch.compile is not supported on this Python")

        monkeypatch.setattr(tabmoe.nn.trainer.torch, "compile", unavailable)
    else:
        compile_ = functools.partial(torch.compile, backend=_failing_backend)
        monkeypatch.setattr(tabmoe.nn.trainer.torch, "compile", compile_)
    with pytest.warns(UserWarning, match=r"compile=True: torch.compile failed .*RuntimeError"):
        clf = TabularMoEClassifier(**FAST, compile=True).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-6)


def _squared_error(module: torch.nn.Module, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    out = module(batch["x"]).squeeze(1)
    return ((out - batch["y"]) ** 2).sum(), torch.tensor(float(len(out)))


def _raised_from(cause: Exception) -> Exception:
    error = RuntimeError("backend='inductor' raised an error")
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    "error",
    [
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        RuntimeError("CUDA error: device-side assert triggered"),
        _raised_from(torch.OutOfMemoryError("CUDA out of memory.")),
    ],
    ids=["out of memory", "device assert", "raised from one"],
)
def test_compile_fallback_leaves_device_failures_alone(monkeypatch, error):
    """Out of memory or a CUDA runtime error in the compiled step is the device's failure:
    raised as it is, not reported as torch.compile failing and retried uncompiled."""

    def compiled(module, batch):
        raise error

    monkeypatch.setattr(tabmoe.nn.trainer, "compile_loss", lambda loss_fn: compiled)
    data = {"x": torch.randn(16, 2), "y": torch.randn(16)}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="compile=True")
        with pytest.raises(type(error)) as raised:
            trainer = Trainer(TrainerConfig(max_epochs=1, batch_size=8, compile=True))
            trainer.fit(torch.nn.Linear(2, 1), data, _squared_error)
    assert raised.value is error


@pytest.mark.slow
def test_compile_trains_and_predicts_on_cpu(mixed_frame, tmp_path):
    """The real torch.compile (inductor; 37-70 s on 2 shared cores with a cold compile
    cache, ~10 s warm): the compiled step is used, no fallback, and the fitted model is the
    plain network: same shapes as uncompiled and close to it, picklable, saved and loaded."""
    X, y = mixed_frame
    plain = TabularMoEClassifier(**FAST).fit(X, y)
    torch._dynamo.utils.counters.clear()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="compile=True")
        clf = TabularMoEClassifier(**FAST, compile=True).fit(X, y)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 1  # it did compile
    assert type(clf.module_) is type(plain.module_)
    proba, plain_proba = clf.predict_proba(X), plain.predict_proba(X)
    assert proba.shape == plain_proba.shape and np.isfinite(proba).all()
    # Not bit-identical (generated kernels round differently), but the same training:
    assert np.abs(proba - plain_proba).max() < 0.05  # measured 0.0017
    assert clf.predict(X).shape == (len(X),) and len(clf.history_) == len(plain.history_)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    clf.save(tmp_path / "m.tabmoe")
    np.testing.assert_array_equal(TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X), proba)
    assert clf.explain(X.head(5)).gates.shape == (5, X.shape[1] + 1)
    clf.adapt(X, max_epochs=1)  # continued training reuses the compiled step
