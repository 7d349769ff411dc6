"""The MoE reparameterisation reproduces the model (docs/paper.md section 1)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe.interpret.moe import MixtureOfExperts, label_gates
from tabmoe.nn.network import TabularMoE
from tabmoe.tokenizer import MISSING, N_SPECIAL

N_FEATURES, N_VALUES, N_CLASSES = 5, 4, 3


def make_model(block="attention", gate="softmax", n_heads=5, n_layers=1, seed=0, scale=0.7, dtype=torch.float64):
    """A model with every parameter (biases included) random, in eval mode.

    float64 by default, so that the identities are checked far below float32 rounding; the
    float32 bound of the issue (1e-5) is checked at a realistic scale and on fitted models.
    """
    torch.manual_seed(seed)
    output_ids = [N_SPECIAL + N_VALUES * j + np.arange(N_VALUES) for j in range(N_FEATURES)]
    output_ids.append(N_SPECIAL + N_VALUES * N_FEATURES + np.arange(N_CLASSES))
    n_tokens = N_SPECIAL + N_VALUES * N_FEATURES + N_CLASSES
    model = TabularMoE(n_tokens, output_ids, d_model=20, n_heads=n_heads, n_layers=n_layers, block=block, gate=gate)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * scale)
    return model.to(dtype).eval()


def random_tokens(n=64, seed=1):
    g = torch.Generator().manual_seed(seed)
    cols = [N_SPECIAL + N_VALUES * j + torch.randint(N_VALUES, (n,), generator=g) for j in range(N_FEATURES)]
    label = N_SPECIAL + N_VALUES * N_FEATURES + torch.randint(N_CLASSES, (n,), generator=g)
    tokens = torch.stack([*cols, label], 1)
    tokens[:5, 2] = MISSING  # the MISSING token is an expert like any value
    return tokens


@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
@pytest.mark.parametrize("n_heads", [1, 5])
def test_label_logits_exact_for_attention_block(gate, n_heads):
    model = make_model(gate=gate, n_heads=n_heads)
    tol = 1e-10
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens()
    with torch.no_grad():
        expected = model.label_logits(tokens)  # (B, C), classes by token id
        got = moe.logits(tokens, model.label_ids)
        by_head = moe.contributions(tokens, model.label_ids)  # (B, H, L, C)
    assert (got - expected).abs().max() <= tol
    assert by_head.shape == (len(tokens), n_heads, N_FEATURES + 1, N_CLASSES)
    summed = by_head.sum((1, 2)) + moe.output_bias[model.label_ids]  # stacked MoEs, summed
    assert (summed - expected).abs().max() <= tol


@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
def test_label_logits_within_1e5_in_float32(gate):
    model = make_model(gate=gate, scale=0.3, dtype=torch.float32)
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(256)
    with torch.no_grad():
        assert (moe.logits(tokens, model.label_ids) - model.label_logits(tokens)).abs().max() <= 1e-5


def test_every_target_column_matches_leave_one_out():
    model = make_model(gate="softmax")
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens()
    attend = torch.rand(tokens.shape, generator=torch.Generator().manual_seed(3)) > 0.3
    attend[:, -1] = True
    with torch.no_grad():
        hidden = model.hidden_loo(tokens, attend)  # (B, L, d)
        for i in range(N_FEATURES + 1):
            ids = model.label_ids if i == N_FEATURES else torch.as_tensor(N_SPECIAL + N_VALUES * i + np.arange(N_VALUES))
            expected = model.heads.column_logits(hidden[:, i], ids)
            got = moe.logits(tokens, ids, target=i, attend=attend)
            assert (got - expected).abs().max() <= 1e-10, i


@pytest.mark.parametrize("block", ["attention", "transformer"])
@pytest.mark.parametrize("gate", ["softmax", "tanhmax"])
def test_gates_are_the_models_attention_weights(block, gate):
    model = make_model(block=block, gate=gate)
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens()
    attend = torch.ones(len(tokens), N_FEATURES, dtype=torch.bool)
    attend[::3, 1] = False
    with torch.no_grad():
        masked, att = model.label_inputs(tokens, attend)
        x = model.embed(masked)
        label = model.label_position
        expected = model.blocks[0].attention.weights(x[:, label : label + 1], x, att)[:, :, 0]
        got = moe.gates(tokens, attend=attend)
    assert (got - expected).abs().max() <= 1e-12
    torch.testing.assert_close(label_gates(model, tokens, attend), expected)
    assert torch.all(got[::3, :, 1] == 0)  # not attended
    if gate == "softmax":
        torch.testing.assert_close(got.sum(-1), torch.ones(len(tokens), 5, dtype=got.dtype))


def test_transformer_mixture_is_the_attention_output_and_logits_refuse():
    model = make_model(block="transformer")
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens()
    att = model.blocks[0].attention
    with torch.no_grad():
        masked, _ = model.label_inputs(tokens)
        x = model.embed(masked)
        label = model.label_position
        expected = att(x[:, label : label + 1], x)[:, 0]  # (B, d)
        got = att.output(moe.mixture(tokens).flatten(1))  # W_O concat_h(sum_j g alpha) + b_O
    assert (got - expected).abs().max() <= 1e-10
    with pytest.raises(ValueError, match="block='attention'"):
        moe.logits(tokens, model.label_ids)


def test_experts_are_per_value_and_column():
    model = make_model()
    moe = MixtureOfExperts.from_model(model, [f"c{j}" for j in range(N_FEATURES)] + ["y"])
    att = model.blocks[0].attention
    w, j = N_SPECIAL + 2, 1
    with torch.no_grad():
        direct = att.value(model.token_embedding.weight[w] + model.column_embedding[j])
    torch.testing.assert_close(moe.alpha(w, j), direct.view(5, -1))
    tokens = random_tokens(4)
    tokens[:, j] = w
    torch.testing.assert_close(moe.experts(tokens)[:, :, j], direct.view(1, 5, -1).expand(4, 5, -1))
    assert moe.column_names[-1] == "y" and moe.n_heads == 5


def test_multi_layer_gates_reconstruct_the_last_layer():
    model = make_model(block="attention", n_layers=2)
    tokens = random_tokens()
    with pytest.raises(ValueError, match="one-layer(?s:.*)n_layers=1 keeps the expert form"):
        MixtureOfExperts.from_model(model)
    with torch.no_grad():
        g = label_gates(model, tokens)  # (B, H, L)
        masked, _ = model.label_inputs(tokens)
        x = model.blocks[0](model.embed(masked))  # layer-1 outputs: mixtures of layer-1 experts
        att = model.blocks[1].attention
        v = att.split(att.value(x))  # (B, H, L, K): layer-2 experts
        rebuilt = att.output(att.merge(g.unsqueeze(2) @ v))[:, 0]
        expected = model.hidden(masked, query=torch.tensor([model.label_position]))[:, 0]
    assert g.shape == (len(tokens), 5, N_FEATURES + 1)
    assert (rebuilt - expected).abs().max() <= 1e-10


def test_a_full_width_mask_still_attends_the_labels_own_mask_token():
    model = make_model()
    tokens = random_tokens(6)
    attend = torch.ones(len(tokens), N_FEATURES + 1, dtype=torch.bool)
    attend[:, 1:] = False  # the label slot too: as MixtureOfExperts.gates does, it stays attended
    with torch.no_grad():
        expected = MixtureOfExperts.from_model(model).gates(tokens, attend=attend[:, :-1])
        torch.testing.assert_close(label_gates(model, tokens, attend), expected)
        assert not torch.isnan(label_gates(model, tokens, torch.zeros_like(attend))).any()


def test_label_gates_of_an_ensemble_says_what_to_pass():
    from tabmoe.nn.ensemble import StackedModel

    stacked = StackedModel([make_model(seed=s) for s in range(2)])
    with pytest.raises(TypeError, match=r"StackedModel.member\(m\)"):
        label_gates(stacked, random_tokens(4))


def test_readings_do_not_track_gradients():
    """label_gates returned a tensor with a grad_fn (a reading of a trained network), so
    ``.numpy()`` on it raised "Can't call numpy() on Tensor that requires grad" outside a
    no_grad block; MixtureOfExperts' readings never did."""
    for n_layers in (1, 2):
        model = make_model(n_layers=n_layers)
        gates = label_gates(model, random_tokens(4))
        assert not gates.requires_grad and gates.grad_fn is None
        assert gates.numpy().shape == (4, 5, model.n_columns)  # make_model: 5 heads
    moe = MixtureOfExperts.from_model(make_model())
    assert not moe.gates(random_tokens(4)).requires_grad


def test_numpy_and_list_inputs_give_what_tensors_give():
    """numpy arrays (what a tokenizer gives) raised AttributeError: 'numpy.ndarray' object
    has no attribute 'long' (attend: 'clone')."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    attend = torch.rand(tokens.shape, generator=torch.Generator().manual_seed(3)) > 0.3
    ids = model.label_ids
    with torch.no_grad():
        for method, args in [
            (moe.gates, ()), (moe.gate_scores, ()), (moe.experts, ()), (moe.mixture, ()),
            (moe.logits, (ids,)), (moe.contributions, (ids,)),
        ]:
            expected = method(tokens, *args)
            torch.testing.assert_close(method(tokens.numpy(), *(a.numpy() for a in args)), expected)
            torch.testing.assert_close(method(tokens.tolist(), *(a.tolist() for a in args)), expected)
        torch.testing.assert_close(moe.gates(tokens.numpy(), attend=attend.numpy()), moe.gates(tokens, attend=attend))
        torch.testing.assert_close(label_gates(model, tokens.numpy(), attend.numpy()), label_gates(model, tokens, attend))
    with pytest.raises(TypeError, match="tokens must be a tensor or an array-like"):
        moe.gates([["a", "b"]])
    with pytest.raises(TypeError, match="attend must be a tensor or an array-like"):
        moe.gates(tokens, attend="all")


def test_a_bad_target_or_token_shape_is_refused_naming_it():
    """A target out of range raised torch's 'index 7 is out of bounds for dimension 1 with
    size 6', a str target 'new(): invalid data type', True meant position 1; one row as a
    1-d tensor 'tuple index out of range', a wrong width a size mismatch of two tensors:
    none named the argument."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    with torch.no_grad():
        for target in (N_FEATURES + 1, -(N_FEATURES + 2), "y", True, 1.0):
            with pytest.raises(ValueError, match=r"target must be a position in \[-6, 6\)"):
                moe.gates(tokens, target=target)
        with pytest.raises(ValueError, match=r"target must be a position"):
            moe.experts(tokens, target=N_FEATURES + 1)
        torch.testing.assert_close(moe.gates(tokens, target=np.int64(-6)), moe.gates(tokens, target=0))
        for bad in (tokens[0], tokens[:, :3]):
            with pytest.raises(ValueError, match=r"tokens must be 2-d, \(rows, 5\) features"):
                moe.gates(bad)
            with pytest.raises(ValueError, match=r"tokens must be 2-d"):
                label_gates(model, bad)
        with pytest.raises(ValueError, match=r"attend must be 2-d"):
            moe.gates(tokens, attend=torch.ones(8, 2, dtype=torch.bool))
        with pytest.raises(ValueError, match=r"attend must be 2-d"):
            label_gates(model, tokens, torch.ones(8, 2, dtype=torch.bool))


def test_token_and_output_ids_out_of_range_or_shape_are_refused_naming_them():
    """A negative token id read the expert of the last token (torch's negative indexing), so
    ``moe.logits`` silently differed from the network, which raised; a negative output id
    gave the last token's logit; an id too large raised 'index 34 is out of bounds', a single
    output id or a 2-d array failed in einsum: none named the argument."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    n_tokens = moe.token_experts.shape[1]
    ids = model.label_ids
    with torch.no_grad():
        for bad in (-1, n_tokens):
            wrong = tokens.clone()
            wrong[0, 1] = bad
            with pytest.raises(ValueError, match=rf"tokens must be token ids in \[0, {n_tokens}\)"):
                moe.logits(wrong, ids)
            with pytest.raises(ValueError, match=rf"tokens must be token ids in \[0, {n_tokens}\)"):
                label_gates(model, wrong)
            with pytest.raises(ValueError, match=rf"output_ids must be token ids in \[0, {n_tokens}\)"):
                moe.contributions(tokens, [int(ids[0]), bad])
        for bad in (int(ids[0]), [[int(ids[0])]], ids.double(), ids > 0):
            with pytest.raises(ValueError, match=r"output_ids must be 1-d \(C,\) integer token ids"):
                moe.logits(tokens, bad)
        # the target's own slot is masked, so what it held is not read (nor checked)
        placeholder = tokens.clone()
        placeholder[:, -1] = -1
        torch.testing.assert_close(moe.logits(placeholder, ids), moe.logits(tokens, ids))
        torch.testing.assert_close(label_gates(model, placeholder), label_gates(model, tokens))


def test_an_attend_mask_not_boolean_or_of_another_row_count_is_refused_naming_it():
    """A 0/1 integer attend failed inside torch with 'masked_fill_ only supports boolean
    masks', a float one with '~ (operator.invert) is only implemented on integer and
    Boolean-type tensors', one with another row count with 'The size of tensor a (8) must
    match the size of tensor b (3)': none named attend."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    mask = torch.rand(tokens.shape, generator=torch.Generator().manual_seed(3)) > 0.3
    with torch.no_grad():
        for bad in (mask.long(), mask.to(torch.uint8), mask.double(), mask.long().numpy(), mask.long().tolist()):
            with pytest.raises(TypeError, match=r"attend must be a boolean mask .*attend != 0"):
                moe.gates(tokens, attend=bad)
            with pytest.raises(TypeError, match=r"attend must be a boolean mask"):
                label_gates(model, tokens, bad)
        for method in (moe.gates, lambda t, attend: label_gates(model, t, attend)):
            with pytest.raises(ValueError, match=r"attend has 3 rows for 8 rows of tokens"):
                method(tokens, attend=mask[:3])
            torch.testing.assert_close(method(tokens, attend=mask.numpy()), method(tokens, attend=mask))


def test_one_attend_row_is_taken_for_every_row_of_tokens():
    """A (1, L) mask broadcast over the rows before the row-count check was added (it
    refused it as 'attend has 1 rows for 8 rows of tokens'); it still gives every row that
    mask."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    row = torch.rand(1, tokens.shape[1], generator=torch.Generator().manual_seed(4)) > 0.3
    with torch.no_grad():
        for method in (moe.gates, lambda t, attend: label_gates(model, t, attend)):
            for one in (row, row[:, :-1], row.numpy()):
                every = torch.as_tensor(one).expand(len(tokens), -1)
                torch.testing.assert_close(method(tokens, attend=one), method(tokens, attend=every))


def test_label_gates_takes_a_float64_fraction_to_a_device_without_float64(monkeypatch):
    """A numpy fraction (float64, numpy's default) was taken to the network's device before
    it was converted to the network's float32: on MPS, which holds no float64, that failed
    with "fraction must be a tensor or an array-like of numbers, got ndarray (Cannot convert
    a MPS Tensor to float64 dtype ...)". Here the meta device stands in for MPS."""
    with torch.device("meta"):
        model = make_model(dtype=torch.float32)  # float32, as a fitted network
    real = torch.as_tensor

    def no_float64_off_the_cpu(value, dtype=None, device=None):
        out = real(value, dtype=dtype)
        if device is not None and torch.device(device).type != "cpu" and out.dtype == torch.float64:
            raise TypeError("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64.")
        return out.to(device)

    monkeypatch.setattr(torch, "as_tensor", no_float64_off_the_cpu)
    fraction = np.random.RandomState(0).rand(4, N_FEATURES)
    gates = label_gates(model, random_tokens(4).numpy(), fraction=fraction)
    assert gates.device.type == "meta" and gates.dtype == torch.float32 and gates.shape == (4, 5, N_FEATURES + 1)


def test_alpha_refuses_ids_out_of_range_naming_them():
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    n_tokens, n_columns = moe.token_experts.shape[1], moe.n_columns
    w = N_SPECIAL + 2
    expected = moe.alpha(w, 1)
    torch.testing.assert_close(moe.alpha(np.int64(w), torch.tensor(1)), expected)  # numpy / 0-d tensor ids
    for token, column, name in [(-1, 0, "token"), (n_tokens, 0, "token"), (w, -1, "column"),
                                (w, n_columns, "column"), (1.0, 0, "token"), (w, True, "column")]:
        with pytest.raises(ValueError, match=f"{name} must be an integer in"):
            moe.alpha(token, column)


def test_a_fraction_of_another_width_or_row_count_is_refused_naming_it():
    """label_gates checked tokens and attend but not ``fraction``: a (B, 1) fraction on a
    piecewise model of 5 numeric columns broadcast column 0's bin position to every column
    and returned gates without a word, another row count raised 'The size of tensor a (3)
    must match the size of tensor b (8)' and a 1-d one 'tuple index out of range'."""
    torch.manual_seed(0)
    output_ids = [N_SPECIAL + N_VALUES * j + np.arange(N_VALUES) for j in range(N_FEATURES)]
    output_ids.append(N_SPECIAL + N_VALUES * N_FEATURES + np.arange(N_CLASSES))
    model = TabularMoE(N_SPECIAL + N_VALUES * N_FEATURES + N_CLASSES, output_ids, d_model=20,
                       ordered_ids=output_ids[:-1], piecewise=True)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.7)
    model = model.double().eval()
    tokens = random_tokens(8)
    fraction = torch.rand(8, N_FEATURES, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    for bad in (fraction[:, :1], fraction[0], fraction[:, :3]):
        with pytest.raises(ValueError, match=r"fraction must be 2-d, \(rows, 5\) features"):
            label_gates(model, tokens, fraction=bad)
    with pytest.raises(ValueError, match=r"fraction has 3 rows for 8 rows of tokens"):
        label_gates(model, tokens, fraction=fraction[:3])
    expected = label_gates(model, tokens, fraction=fraction)
    torch.testing.assert_close(label_gates(model, tokens, fraction=fraction.numpy()), expected)
    one = fraction[:1]  # one row for every row, as attend
    torch.testing.assert_close(label_gates(model, tokens, fraction=one), label_gates(model, tokens, fraction=one.expand(8, -1)))


def test_from_model_of_anything_but_a_network_says_what_to_pass():
    """The estimator itself (fitted or not) was refused with "exists for one-layer TabularMoE
    modules only (got TabularMoEClassifier with n_layers=auto) ... The estimator's
    n_layers='auto' fits two layers above 10,000 training rows; n_layers=1 keeps the expert
    form": it blamed the depth, and refitting with n_layers=1 was refused alike."""
    from tabmoe import TabularMoEClassifier
    from tabmoe.nn.ensemble import StackedModel

    for bad in (TabularMoEClassifier(), TabularMoEClassifier(n_layers=1), None,
                StackedModel([make_model(seed=s) for s in range(2)])):
        with pytest.raises(TypeError, match=r"takes a TabularMoE module, got \w+: for a fitted "
                                            r"TabularMoEClassifier pass clf.module_.*member\(m\)"):
            MixtureOfExperts.from_model(bad)
    with pytest.raises(ValueError, match=r"\(got n_layers=2\)"):
        MixtureOfExperts.from_model(make_model(n_layers=2))


def test_boolean_or_fractional_tokens_are_refused_naming_them():
    """``.long()`` read a boolean mask passed as tokens as ids 0 and 1 (MASK and MISSING) and
    truncated float ids (3.7 -> 3), valid ids both: moe.gates(attend) or a fraction in the
    place of the tokens returned gates without a word. Whole floats are still ids, and the
    target's own slot (masked, never read) is still not checked."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    with torch.no_grad():
        expected_gates, expected_label = moe.gates(tokens), label_gates(model, tokens)
        fractional = tokens.double()
        fractional[2, 1] += 0.7
        for method in (moe.gates, lambda t: label_gates(model, t)):
            with pytest.raises(ValueError, match=r"tokens must be integer token ids, got torch.float64 values such as"):
                method(fractional)
            with pytest.raises(ValueError, match=r"tokens must be integer token ids, got a boolean tensor"):
                method(tokens > N_SPECIAL + 5)
        whole = tokens.double()
        torch.testing.assert_close(moe.gates(whole), expected_gates)
        torch.testing.assert_close(label_gates(model, whole.numpy()), expected_label)
        whole[:, -1] = float("nan")  # the label's slot: overwritten with MASK
        torch.testing.assert_close(moe.gates(whole), expected_gates)
        torch.testing.assert_close(label_gates(model, whole), expected_label)
        whole[:, -1] = tokens[:, -1].double()  # read when column 2 is the target ...
        whole[:, 2] = 0.5  # ... whose own slot is not
        torch.testing.assert_close(moe.gates(whole, target=2), moe.gates(tokens, target=2))


def test_empty_output_ids_are_refused_as_empty():
    """``moe.logits(tokens, [])`` said "output_ids must be 1-d (C,) integer token ids, got
    shape (0,) of torch.float32", blaming the type of an empty list."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    with torch.no_grad():
        for empty in ([], np.array([], dtype=np.int64), torch.empty(0, dtype=torch.long)):
            with pytest.raises(ValueError, match=r"^output_ids is empty: pass the \(C,\) token ids to score"):
                moe.logits(random_tokens(2), empty)


def test_pandas_frames_and_series_are_read_as_their_values():
    """A tokenizer's output under ``sklearn.set_config(transform_output="pandas")`` is a
    frame: torch read it as a sequence of its columns by label, so named columns were
    refused as not "an array-like of numbers" and a frame with the columns 0..L-1 (8 rows)
    failed with a bare ``KeyError: 6``."""
    model = make_model()
    moe = MixtureOfExperts.from_model(model)
    tokens = random_tokens(8)
    attend = torch.rand(tokens.shape, generator=torch.Generator().manual_seed(3)) > 0.3
    ids = model.label_ids
    named = pd.DataFrame(tokens.numpy(), columns=[f"x{j}" for j in range(tokens.shape[1])])
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")  # no "non-writable" warning from torch either
        for frame in (named, pd.DataFrame(tokens.numpy())):
            torch.testing.assert_close(moe.gates(frame, attend=pd.DataFrame(attend.numpy())),
                                       moe.gates(tokens, attend=attend))
            torch.testing.assert_close(moe.logits(frame, pd.Series(ids.numpy())), moe.logits(tokens, ids))
            torch.testing.assert_close(label_gates(model, frame, pd.DataFrame(attend.numpy())),
                                       label_gates(model, tokens, attend))
