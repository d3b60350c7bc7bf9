"""Work and memory per token."""

from __future__ import annotations

import numpy as np
import pytest

from sim import cost


def test_published_ratio() -> None:
    assert cost.work_ratio(100_000, 128) == 781.25
    assert cost.attention_ops(100_000, 128) == 51_200_000
    assert cost.state_ops(128) == 65_536
    assert cost.state_ops(64, 128) == 32_768


def test_crossovers() -> None:
    assert cost.work_crossover(128) == 128
    assert cost.attention_ops(128, 128) == cost.state_ops(128)
    assert cost.memory_crossover(128) == 64
    assert cost.memory_crossover(64, 192) == 48
    t = cost.memory_crossover(128)
    assert cost.kv_cache_numbers(t, 128) == cost.state_numbers(128)
    assert cost.state_numbers(128, with_z=True) == 128 * 128 + 128


def test_cumulative_is_the_sum_of_tokens() -> None:
    T, d = 1000, 64
    per_token = cost.attention_ops(np.arange(1, T + 1), d)
    assert cost.cumulative_attention_ops(T, d) == per_token.sum()
    assert cost.cumulative_state_ops(T, d) == T * cost.state_ops(d)


def test_vectorised_over_t() -> None:
    t = np.array([0, 64, 128, 256])
    np.testing.assert_array_equal(cost.work_ratio(t, 128), [0, 0.5, 1, 2])
    np.testing.assert_array_equal(cost.kv_cache_numbers(t, 2), 4 * t)


@pytest.mark.parametrize("call", [lambda: cost.attention_ops(-1, 8), lambda: cost.state_ops(0),
                                  lambda: cost.work_ratio(10, float("nan")),
                                  lambda: cost.kv_cache_numbers(np.array([1, -2]), 4)])
def test_bad_sizes(call) -> None:
    with pytest.raises(ValueError, match=r"^(t|d|d_k|T): expected"):
        call()
