"""TanhMax gates: c_j = sinh(s_j) / sum_k cosh(s_k) over the attended keys."""

import math
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tabmoe.nn.network import gate_weights

scores_strategy = st.lists(
    st.floats(-30, 30, allow_nan=False, allow_infinity=False), min_size=1, max_size=12
)


@settings(max_examples=200, deadline=None)
@given(scores_strategy)
def test_sign_bounds_and_total_magnitude(values):
    s = torch.tensor(values, dtype=torch.float64)
    c = gate_weights(s, "tanhmax")
    # sign(c_j) = sign(s_j); a score within rounding of 0 gives 0
    assert torch.all((torch.sign(c) == torch.sign(s)) | ((c == 0) & (s.abs() < 1e-12)))
    assert torch.all(c.abs() <= 1)
    if s.abs().max() < 15:  # |c_j| < 1 strictly; beyond that it rounds to 1 in float64
        assert torch.all(c.abs() < 1)
    assert float(c.abs().sum()) <= 1 + 1e-12


@settings(max_examples=100, deadline=None)
@given(scores_strategy)
def test_closed_form(values):
    s = torch.tensor(values, dtype=torch.float64)
    c = gate_weights(s, "tanhmax")
    m = s.abs().max()  # stable sinh(s_j) / sum_k cosh(s_k)
    expected = (torch.exp(s - m) - torch.exp(-s - m)) / (torch.exp(s - m) + torch.exp(-s - m)).sum()
    torch.testing.assert_close(c, expected, rtol=1e-9, atol=1e-12)
    # tanh(s) * softmax(log cosh s): a smooth sign times a distribution
    torch.testing.assert_close(c, torch.tanh(s) * torch.softmax(torch.log(torch.cosh(s)), -1))


def test_normalisation_is_the_two_slot_distribution():
    """sum |c| = 1 - 2 sum_j min(p(+j), p(-j)): 1 up to exp(-2|s|) for large scores."""
    s = torch.tensor([[8.0, -9.0, 10.0], [0.1, -0.2, 0.05], [0.0, 0.0, 0.0]], dtype=torch.float64)
    c = gate_weights(s, "tanhmax")
    slots = torch.softmax(torch.cat([s, -s], -1), -1)
    pos, neg = slots.chunk(2, -1)
    torch.testing.assert_close(c, pos - neg)
    torch.testing.assert_close(c.abs().sum(-1), 1 - 2 * torch.minimum(pos, neg).sum(-1))
    assert abs(float(c[0].abs().sum()) - 1) < 1e-6
    assert float(c[1].abs().sum()) < 0.2  # small scores: little total magnitude
    assert torch.all(c[2] == 0)  # odd map: c(0) = 0


def test_odd_and_monotone():
    s = torch.randn(5, 7, dtype=torch.float64)
    torch.testing.assert_close(gate_weights(-s, "tanhmax"), -gate_weights(s, "tanhmax"))
    jac = torch.autograd.functional.jacobian(lambda x: gate_weights(x, "tanhmax"), s[0])
    assert torch.all(torch.diagonal(jac) > 0)  # c_j increases with its own score


def test_gradient_flows_and_is_smooth():
    s = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: gate_weights(x, "tanhmax"), (s,))
    # smooth through zero scores as well (no kink as with |s|)
    z = torch.zeros(1, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: gate_weights(x, "tanhmax"), (z,))
    assert torch.autograd.gradgradcheck(lambda x: gate_weights(x, "tanhmax"), (s,))


def test_minus_inf_keys_get_zero_weight_and_no_nan_gradient():
    s = torch.tensor([[1.5, -math.inf, -0.5, 2.0]], requires_grad=True)
    c = gate_weights(s, "tanhmax")
    assert c[0, 1] == 0
    full = gate_weights(s.detach()[:, [0, 2, 3]], "tanhmax")
    torch.testing.assert_close(c[:, [0, 2, 3]], full)  # same as dropping the key
    (c * torch.tensor([[1.0, 2.0, 3.0, 4.0]])).sum().backward()
    assert torch.isfinite(s.grad).all() and s.grad[0, 1] == 0


def test_softmax_unchanged_and_bad_gate():
    s = torch.randn(4, 5)
    torch.testing.assert_close(gate_weights(s, "softmax"), torch.softmax(s, -1))
    with pytest.raises(ValueError, match="gate must be one of"):
        gate_weights(s, "sparsemax")


def test_one_pass_leave_one_out_stays_exact_with_tanhmax():
    from .test_moe import make_model, random_tokens

    for block in ("attention", "transformer"):
        model = make_model(block=block, gate="tanhmax")
        tokens = random_tokens()
        attend = torch.rand(tokens.shape, generator=torch.Generator().manual_seed(0)) > 0.25
        attend[:, -1] = True
        with torch.no_grad():
            loo, copies = model.hidden_loo(tokens, attend), model.hidden_copies(tokens, attend)
        # positions left out of the attention are never scored; compare the others
        torch.testing.assert_close(loo[attend], copies[attend])


def test_the_moe_pages_total_magnitude_example_is_the_computed_one():
    """docs/moe.md gave sum |c| for s = (8, -9, 10) as 1 - 1e-7; it is 1 - 3.0e-8
    (2 (e^-8 + e^-9 + e^-10) / (2 (cosh 8 + cosh 9 + cosh 10)))."""
    s = torch.tensor([[8.0, -9.0, 10.0]], dtype=torch.float64)
    deficit = 1 - float(gate_weights(s, "tanhmax").abs().sum())
    page = (Path(__file__).resolve().parents[1] / "docs" / "moe.md").read_text()
    (claim,) = [p for p in page.split("\n\n") if "s = (8, -9, 10)" in p]
    assert f"`s = (8, -9, 10)`: 1 - {deficit:.1e}".replace("e-08", "e-8") in " ".join(claim.split())
