"""sim.recall.recall_after_each_write against recall() on every prefix; relative_error;
scenarios.draw_gates."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scenarios
from sim.recall import make_keys, make_values, recall, recall_after_each_write, relative_error

CASES = [("linear", {}), ("linear", {"feature_map": "elu+1", "normalize": True}),
         ("deltanet", {"beta": 1.0}), ("deltanet", {"beta": 0.5}),
         ("softmax", {"scale": 6.0}), ("softmax", {})]


@pytest.mark.parametrize(("rule", "params"), CASES)
@pytest.mark.parametrize(("kind", "n", "d"), [("orthonormal", 12, 4), ("random", 9, 5),
                                              ("correlated", 16, 8)])
def test_each_row_equals_recall_of_that_prefix(rule, params, kind, n, d) -> None:
    keys, values = make_keys(kind, n, d, rho=0.4, seed=3), make_values(n, d, seed=3)
    errors, retrieved = recall_after_each_write(rule, keys, values, **params)
    assert errors.shape == (n, n) and retrieved.shape == (n, n, d)
    for t in range(1, n + 1):
        ref = recall(rule, keys[:t], values[:t], **params)
        np.testing.assert_allclose(errors[t - 1, :t], ref.errors, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(retrieved[t - 1, :t], ref.retrieved, rtol=1e-9, atol=1e-12)
        assert np.all(np.isnan(errors[t - 1, t:])) and np.all(np.isnan(retrieved[t - 1, t:]))


def test_orthonormal_linear_recall_is_exact_until_the_state_is_full() -> None:
    d = 6
    keys, values = make_keys("orthonormal", 3 * d, d, seed=1), make_values(3 * d, d, seed=1)
    errors, _ = recall_after_each_write("linear", keys, values)
    np.testing.assert_allclose(errors[d - 1, :d], 0.0, atol=1e-12)  # n = d: exact
    assert np.nanmean(errors[2 * d - 1]) > 0.3  # n = 2d: interference


def test_softmax_stays_finite_at_a_huge_scale() -> None:
    keys, values = make_keys("random", 10, 4, seed=2), make_values(10, 4, seed=2)
    errors, _ = recall_after_each_write("softmax", keys, values, scale=1e6)
    assert np.all(np.isfinite(errors[np.tril_indices(10)]))


def test_relative_error_rows() -> None:
    target = np.array([[3.0, 4.0], [1.0, 0.0]])
    got = relative_error(np.array([[3.0, 4.0], [0.0, 0.0]]), target)
    np.testing.assert_allclose(got, [0.0, 1.0])


def test_draw_gates_is_seeded_and_inside_the_ranges() -> None:
    g = scenarios.draw_gates(500, 4, alpha=0.95, beta=1.8, seed=4)
    assert g["alpha"].shape == (500,) and g["alpha_channel"].shape == (500, 4)
    assert g["beta"].shape == (500,)
    assert 0.01 <= g["alpha"].min() and g["alpha"].max() == 1.0  # clipped at 1
    assert g["beta"].max() == 2.0 and g["beta"].min() >= 0.0
    assert abs(np.median(g["alpha"]) - 0.95) < 0.02
    again = scenarios.draw_gates(500, 4, alpha=0.95, beta=1.8, seed=4)
    assert all(np.array_equal(g[k], again[k]) for k in g)
    assert not np.array_equal(scenarios.draw_gates(500, 4, 0.95, 1.8, seed=5)["beta"], g["beta"])
