"""TabularMoEClassifier.explain and feature_importances_."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

import tabmoe.estimator as estimator_module
import tabmoe.interpret.explain as explain_module
from tabmoe import TabularMoEClassifier
from tabmoe.interpret.explain import MASK_COLUMN
from tabmoe.interpret.moe import label_gates

from .moe_data import toy_table
from .test_resources import _LargestTensor


def fit(**kw):
    X, y = toy_table()
    params = dict(max_epochs=4, random_state=0, device="cpu", batch_size=32)
    params.update(kw)
    return TabularMoEClassifier(**params).fit(X, y), X, y


@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
def test_contributions_sum_to_the_logits(gate):
    clf, X, _ = fit(block="attention", gate=gate)
    e = clf.explain(X)
    assert list(e.gates.columns) == [*X.columns, MASK_COLUMN]
    assert e.gates.index.equals(X.index)
    assert list(e.contributions.columns.levels[0]) == sorted(clf.classes_)
    summed = e.contributions.T.groupby(level="class").sum().T[list(clf.classes_)] + e.bias
    assert np.abs(summed - e.logits).to_numpy().max() <= 1e-5
    # the logits are the model's: predict_proba is their softmax
    log_p = e.logits.to_numpy() - np.log(np.exp(e.logits.to_numpy()).sum(1, keepdims=True))
    np.testing.assert_allclose(np.exp(log_p), clf.predict_proba(X), atol=1e-6)
    # contribution of column j to class c = gate_j * (expert . rho_c), so a zero gate is zero
    assert e.head_gates.shape == (len(X), clf.n_heads * (X.shape[1] + 1))
    np.testing.assert_allclose(
        e.head_gates.T.groupby(level="column", sort=False).mean().T.to_numpy(), e.gates.to_numpy(), atol=1e-12
    )


def test_softmax_gates_sum_to_one_and_transformer_has_no_contributions():
    clf, X, _ = fit()
    e = clf.explain(X.head(7))
    np.testing.assert_allclose(e.gates.sum(axis=1), 1, atol=1e-6)
    assert e.contributions is None and e.bias is None
    assert e.logits.shape == (7, 3)


def test_array_input_gets_positional_names_and_multilayer_reports_last_layer():
    X, y = toy_table()
    Xa = X.assign(color=X.color.map({"red": 0, "green": 1, "blue": 2}), noise0=0, noise1=1).to_numpy(float)
    clf = TabularMoEClassifier(n_layers=2, max_epochs=2, random_state=0, device="cpu").fit(Xa, y)
    e = clf.explain(Xa[:5])
    assert list(e.gates.columns) == [0, 1, 2, 3, MASK_COLUMN]
    np.testing.assert_allclose(e.gates.sum(axis=1), 1, atol=1e-6)


def test_feature_importances_and_sample_cap(monkeypatch):
    monkeypatch.setattr(estimator_module, "TRAIN_SAMPLE_ROWS", 50)
    clf, X, _ = fit(block="attention")
    assert clf.train_sample_tokens_.shape == (50, X.shape[1] + 1)
    imp = clf.feature_importances_
    assert imp.shape == (X.shape[1],) and np.all(imp >= 0)
    np.testing.assert_allclose(imp.sum(), 1)
    # the definition: mean |head-averaged gate| over the stored sample, normalised
    tokens = clf.train_sample_tokens_[:, :-1]
    with torch.no_grad():
        g = label_gates(clf.module_, torch.from_numpy(tokens)).abs().mean(1)[:, :-1].double().mean(0)
    np.testing.assert_allclose(imp, (g / g.sum()).numpy(), rtol=1e-6)


def test_ensemble_gates_are_member_averages():
    clf, X, _ = fit(n_members=2, block="attention")
    e = clf.explain(X.head(10))
    assert e.contributions is None  # averaged probabilities are not additive in logits
    tokens, _, _ = clf._feature_tokens(X.head(10))
    with torch.no_grad():
        per_member = [label_gates(m, tokens).mean(1) for m in clf.module_.members()]
    np.testing.assert_allclose(e.gates.to_numpy(), torch.stack(per_member).mean(0).numpy(), atol=1e-6)


def test_tuple_column_names_stay_whole_labels_without_warnings(recwarn):
    # from_product sorted tuple and "[MASK]" labels together: a pandas deprecation warning.
    X, y = toy_table()
    X.columns = [("col", i) for i in range(X.shape[1])]
    clf = TabularMoEClassifier(block="attention", max_epochs=2, random_state=0, device="cpu").fit(X, y)
    e = clf.explain(X)
    assert list(e.gates.columns) == [*X.columns, MASK_COLUMN]
    assert list(e.head_gates[0].columns) == [*X.columns, MASK_COLUMN]
    assert list(e.contributions[clf.classes_[0]].columns) == [*X.columns, MASK_COLUMN]
    assert not [w for w in recwarn if "mismatched lengths" in str(w.message)]


def test_a_feature_column_named_mask_keeps_its_name_and_the_label_position_takes_another():
    # the label position's "[MASK]" beside a feature "[MASK]": pandas' "Level values must be unique"
    X, y = toy_table()
    X = X.rename(columns={X.columns[0]: MASK_COLUMN, X.columns[1]: f"{MASK_COLUMN}.1"})
    clf = TabularMoEClassifier(block="attention", max_epochs=2, random_state=0, device="cpu").fit(X, y)
    e = clf.explain(X.head(5))
    expected = [*X.columns, f"{MASK_COLUMN}.2"]
    assert list(e.gates.columns) == expected
    assert list(e.head_gates[0].columns) == expected
    assert list(e.contributions[clf.classes_[0]].columns) == expected
    np.testing.assert_allclose(e.gates.sum(axis=1), 1, atol=1e-6)


class _NoFloat64(torch.Tensor):
    """A stand-in for an MPS tensor: float64 is refused until it is moved to the CPU."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.cpu:
            with torch._C.DisableTorchFunctionSubclass():
                return args[0].as_subclass(torch.Tensor)
        if func is torch.Tensor.double or torch.float64 in (*args[1:], *kwargs.values()):
            raise TypeError("Cannot convert a MPS Tensor to float64 dtype")
        return super().__torch_function__(func, types, args, kwargs)


def test_explain_and_importances_convert_to_float64_on_the_cpu_only(monkeypatch):
    """MPS has no float64: gates, contributions and biases are moved to the CPU first."""
    clf, X, _ = fit(block="attention")
    expected = clf.explain(X.head(5)), clf.feature_importances_
    label_gates_ = explain_module._label_gates
    from_model = explain_module.MixtureOfExperts.from_model

    def moe_on_device(model, names):
        moe = from_model(model, names)
        return dataclasses.replace(moe, output_bias=moe.output_bias.as_subclass(_NoFloat64))

    def gates_on_device(*args, **kwargs):
        return label_gates_(*args, **kwargs).as_subclass(_NoFloat64)

    monkeypatch.setattr(explain_module, "_label_gates", gates_on_device)
    monkeypatch.setattr(explain_module.MixtureOfExperts, "from_model", moe_on_device)
    with pytest.raises(TypeError, match="float64"):  # the stand-in works
        torch.ones(2).as_subclass(_NoFloat64).double()
    e = clf.explain(X.head(5))
    np.testing.assert_array_equal(e.bias, expected[0].bias)
    np.testing.assert_array_equal(e.gates, expected[0].gates)
    clf._update_importances()
    np.testing.assert_array_equal(clf.feature_importances_, expected[1])


def test_importances_sum_on_the_cpu_under_a_callers_default_device():
    """gate_importances made its float64 sums on the caller's default device (a
    torch.set_default_device("cuda") or "mps": there the CPU gates did not add to them, and
    MPS holds no float64); the meta device stands in for it."""
    from tabmoe.interpret.explain import gate_importances

    clf, X, _ = fit()
    tokens, attend, _ = clf._feature_tokens(X)
    expected = gate_importances(clf.module_, tokens, attend)
    with torch.device("meta"):
        np.testing.assert_array_equal(gate_importances(clf.module_, tokens, attend), expected)


def test_ensemble_importances_take_each_members_absolute_gates():
    """Signed TanhMax gates were averaged over the members before the absolute value: two
    members with opposite gates cancelled and the rounding residue, normalised, was reported."""
    from tabmoe.interpret.explain import gate_importances
    from tabmoe.nn.ensemble import StackedModel

    from .test_moe import make_model, random_tokens

    member = make_model(gate="tanhmax", dtype=torch.float32)
    opposite = make_model(gate="tanhmax", dtype=torch.float32)
    with torch.no_grad():  # every score negated: every TanhMax gate negated (c(-s) = -c(s))
        opposite.blocks[0].attention.query.weight.neg_()
        opposite.blocks[0].attention.query.bias.neg_()
    tokens = random_tokens(32)[:, :-1]
    with torch.no_grad():
        torch.testing.assert_close(label_gates(opposite, tokens), -label_gates(member, tokens))
    alone = gate_importances(member, tokens, None)
    np.testing.assert_allclose(gate_importances(StackedModel([member, opposite]), tokens, None), alone, rtol=1e-5)


def test_contributions_of_many_classes_are_computed_in_capped_batches(monkeypatch):
    """Per-head contributions are (B, H, L, C) a batch: at 8,192 rows, 1,000 classes and 51
    columns one batch is 8,192 x 4 x 52 x 1,000 float32s (6.8 GB). Batches are capped as
    predict's activations are."""
    from tabmoe.interpret.explain import explain_tokens
    from tabmoe.interpret.moe import MixtureOfExperts
    from tabmoe.nn._base import predict_batch_rows
    from tabmoe.nn.network import TabularMoE

    n_classes, n_rows = 2000, 1000
    output_ids = [np.arange(4, 7), np.arange(7, 7 + n_classes)]
    torch.manual_seed(0)
    module = TabularMoE(7 + n_classes, output_ids, d_model=8, n_heads=4, block="attention").eval()
    tokens = torch.stack([torch.randint(4, 7, (n_rows,)), torch.randint(7, 7 + n_classes, (n_rows,))], 1)
    seen = []
    contributions = MixtureOfExperts.contributions

    def spy(self, batch, *args, **kwargs):
        seen.append(len(batch))
        return contributions(self, batch, *args, **kwargs)

    monkeypatch.setattr(MixtureOfExperts, "contributions", spy)
    args = (module, tokens[:, :1], None, output_ids[-1], ["x"], list(range(n_classes)), pd.RangeIndex(n_rows))
    capped = explain_tokens(*args, batch_rows=8192)
    assert max(seen) == predict_batch_rows(2, 4 * n_classes) < n_rows
    small = explain_tokens(*args, batch_rows=100)
    np.testing.assert_allclose(capped.contributions.to_numpy(), small.contributions.to_numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [
    dict(n_layers=2), dict(n_layers=2, n_members=2), dict(linear_term=True),
    dict(n_layers=2, numeric_embedding="piecewise"),
])
def test_one_pass_logits_and_gates_equal_the_separate_readings(kw):
    """explain takes the logits and the last layer's label gates from one pass of a deeper
    model or an ensemble (the layers below the last ran twice); both equal what
    label_logits and label_gates give apart, bit for bit."""
    X, y = toy_table()
    X = X.assign(size=np.linspace(0, 1, len(X)))
    clf = TabularMoEClassifier(max_epochs=2, random_state=0, device="cpu", **kw).fit(X, y)
    tokens, attend, position = clf._feature_tokens(X)
    with torch.no_grad():
        logits, gates = explain_module._logits_and_gates(clf.module_, tokens, attend, position)
        assert torch.equal(logits, clf.module_.label_logits(tokens, attend, position))
        assert torch.equal(gates, explain_module._label_gates(clf.module_, tokens, attend, position))
    e = clf.explain(X)
    np.testing.assert_allclose(torch.softmax(torch.tensor(e.logits.to_numpy()), 1).numpy(),
                               clf.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("block", ["attention", "transformer"])
def test_explain_fills_its_outputs_batch_by_batch_without_copies(monkeypatch, block):
    """The batches' float32 gates, contributions and logits were kept in lists, concatenated
    (a tensor of all rows), cast to float64 (another) and copied into the frames (a third):
    at 600,000 rows of 16 columns the peak above the start was 1,288 MiB for a 554 MiB
    explanation (benchmarks/memory_explain.py). Now no torch tensor holds all rows' gates,
    and what numpy allocates is the explanation itself, whose frames wrap the arrays filled
    batch by batch."""
    import tracemalloc

    clf, X, _ = fit(block=block, n_layers=1)
    X = pd.concat([X] * 10, ignore_index=True)  # 2,400 rows
    monkeypatch.setattr(type(clf), "_predict_rows", lambda self: 64)  # 38 batches
    expected = clf.explain(X.head(64))  # one batch
    with _LargestTensor() as mode:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            e = clf.explain(X)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    n_positions = X.shape[1] + 1
    assert mode.largest < len(X) * clf.n_heads * n_positions  # all rows' gates
    frames = [e.gates, e.head_gates, e.logits] + ([e.contributions] if block == "attention" else [])
    assert peak < sum(f.to_numpy().nbytes for f in frames) + 2**19, peak
    for part in ("gates", "head_gates", "logits", "contributions"):
        if getattr(e, part) is not None:
            pd.testing.assert_frame_equal(getattr(e, part).head(64), getattr(expected, part), check_exact=True)
    assert (e.contributions is None) == (block == "transformer")
