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


def test_integer_counts_are_exact_at_the_largest_sizes() -> None:
    # 2·d·T·(T + 1) at T = 2⁴⁰, d = 2²⁰: about 2¹⁰², exact as a Python int (float64 rounds it)
    T, d = 2**40, 2**20
    assert cost.cumulative_attention_ops(T, d) == 2 * d * T * (T + 1)
    assert cost.cumulative_state_ops(T, d) == 2**82
    ts = np.array([2**40, 3])
    assert cost.attention_ops(ts, d).tolist() == [2**62, 12 * d]  # int64 (below 2⁶³)
    assert cost.attention_ops(ts, d).dtype == np.int64
    totals = cost.cumulative_attention_ops(ts, d)  # past 2⁶³: Python ints, exact
    assert totals.tolist() == [2 * d * T * (T + 1), 2 * d * 3 * 4]
    assert cost.kv_cache_numbers(np.array([3, 4]), 5).dtype == np.int64  # small: int64
    assert cost.attention_ops(2.5, 2) == 20.0  # floats in, floats out


@pytest.mark.parametrize("call, message", [
    (lambda: cost.attention_ops(2**40 + 1, 8), r"^t: expected finite numbers ≥ 0 up to 1,099,511,627,776"),
    (lambda: cost.state_ops(2**21), r"^d_k: expected finite numbers > 0 up to 1,048,576"),
    (lambda: cost.state_ops(8, 1j), r"^d_v: expected an array of real numbers, got complex"),
    (lambda: cost.kv_cache_numbers("12", 8), r"^t: expected an array of real numbers, got '12'"),
    (lambda: cost.state_numbers(8, with_z="yes"), r"^with_z: expected True or False"),
])
def test_sizes_are_bounded_and_real(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()
