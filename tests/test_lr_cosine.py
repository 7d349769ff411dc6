"""``TrainerConfig.lr_cosine`` (research-only, study 65): the learning rate follows torch's
cosine annealing from ``lr`` to 0 over the steps of ``max_epochs`` epochs."""

import math

import numpy as np
import pytest

from .test_lr_warmup import _rates


def test_step_k_trains_at_the_cosine_of_k_over_the_steps():
    rates, history = _rates(epochs=3, lr_cosine=True)  # 64 rows in batches of 16: T = 12 steps
    expected = [0.01 * (1 + math.cos(math.pi * k / 12)) / 2 for k in range(12)]
    np.testing.assert_allclose(rates, expected, rtol=1e-6, atol=1e-12)
    assert [h["lr"] for h in history] == pytest.approx([expected[0], expected[4], expected[8]])
    assert rates[-1] < 0.01 * 0.02


def test_without_it_the_rate_is_constant():
    assert _rates(epochs=3)[0] == [0.01] * 12


@pytest.mark.parametrize("other", [{"warmup_epochs": 1}, {"lr_decay_patience": 2}])
def test_it_does_not_combine_with_the_other_schedules(other):
    with pytest.raises(ValueError, match="lr_cosine does not combine"):
        _rates(epochs=3, lr_cosine=True, **other)
