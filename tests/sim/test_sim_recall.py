"""Recall experiments and the token streams behind them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sim
from sim import scenarios
from sim.recall import make_keys, make_values, recall, recall_curve


@pytest.mark.parametrize("kind", ["orthonormal", "random", "correlated"])
def test_keys_are_unit_norm_and_extend_with_n(kind: str) -> None:
    keys = make_keys(kind, 40, 8, rho=0.3, seed=5)
    assert keys.shape == (40, 8)
    np.testing.assert_allclose(np.linalg.norm(keys, axis=1), 1.0, rtol=1e-12)
    assert np.array_equal(make_keys(kind, 13, 8, rho=0.3, seed=5), keys[:13])
    assert not np.allclose(make_keys(kind, 40, 8, rho=0.3, seed=6), keys)


def test_orthonormal_keys_start_orthonormal() -> None:
    keys = make_keys("orthonormal", 12, 8, seed=1)
    np.testing.assert_allclose(keys[:8] @ keys[:8].T, np.eye(8), atol=1e-12)
    assert abs(keys[8] @ keys[0]) > 1e-6  # later keys are random, not orthogonal


@pytest.mark.parametrize("rho", [0.0, 0.2, 0.5, 0.8])
def test_correlated_keys_reach_the_mean_cosine(rho: float) -> None:
    few = make_keys("correlated", 10, 32, rho=rho, seed=2)  # n < d_k: every cosine is exactly ρ
    cos = few @ few.T
    np.testing.assert_allclose(cos[np.triu_indices(10, 1)], rho, atol=1e-12)
    many = make_keys("correlated", 128, 32, rho=rho, seed=2)
    cos = many @ many.T
    assert abs(cos[np.triu_indices(128, 1)].mean() - rho) < 0.03


def test_linear_recalls_exactly_up_to_d_then_interferes() -> None:
    d = 16
    keys, values = make_keys("orthonormal", 3 * d, d, seed=0), make_values(3 * d, d, seed=0)
    for n in (1, d // 2, d):
        assert recall("linear", keys[:n], values[:n]).mean_error < 1e-12
    beyond = recall("linear", keys[: 2 * d], values[: 2 * d])
    assert beyond.mean_error > 0.3
    assert beyond.errors.shape == (2 * d,) and beyond.retrieved.shape == (2 * d, d)


def test_delta_returns_latest_value_linear_returns_the_sum() -> None:
    stream = scenarios.overwrite(T=13, d_k=4, d_v=3, seed=1, key_index=2, every=3)
    delta = sim.run("deltanet", stream.q, stream.k, stream.v, beta=1.0)
    np.testing.assert_allclose(delta.outputs, stream.targets, atol=1e-12)
    linear = sim.run("linear", stream.q, stream.k, stream.v)
    rewrites = np.arange(13) % 3 == 0
    sums = np.cumsum(np.where(rewrites[:, None], stream.v, 0.0), axis=0)
    np.testing.assert_allclose(linear.outputs, sums, atol=1e-12)
    assert not np.allclose(linear.outputs[-1], stream.targets[-1])


def test_delta_keeps_the_latest_value_in_recall() -> None:
    d = 8
    basis = make_keys("orthonormal", d, d, seed=3)
    keys = np.concatenate((basis, basis[:3]))  # keys 0..2 written twice
    values = make_values(d + 3, d, seed=3)
    result = recall("deltanet", keys, values, beta=1.0)
    np.testing.assert_allclose(result.retrieved[:3], values[d:], atol=1e-12)  # latest values
    np.testing.assert_allclose(result.retrieved[3:d], values[3:d], atol=1e-12)


@pytest.mark.parametrize("n", [2, 5, 8])
def test_softmax_weight_on_the_right_key(n: int) -> None:
    d, s = 8, 3.0
    keys, values = make_keys("orthonormal", n, d, seed=4), make_values(n, d, seed=4)
    w = math.exp(s) / (math.exp(s) + n - 1)
    expected = w * values + (1 - w) / (n - 1) * (values.sum(axis=0) - values)
    np.testing.assert_allclose(recall("softmax", keys, values, scale=s).retrieved, expected,
                               rtol=1e-12, atol=1e-12)


def test_softmax_error_falls_with_scale() -> None:
    keys, values = make_keys("orthonormal", 16, 16, seed=0), make_values(16, 16, seed=0)
    errors = [recall("softmax", keys, values, scale=s).mean_error for s in (0.25, 1, 4, 16, 64)]
    assert all(a > b for a, b in zip(errors, errors[1:]))
    assert errors[0] > 0.9 and errors[-1] < 1e-12


@pytest.mark.parametrize("rule, params", [("linear", {}), ("deltanet", {"beta": 1.0}),
                                          ("gated_deltanet", {"alpha": 0.95, "beta": 0.5}),
                                          ("softmax", {"scale": 4.0})])
def test_curve_matches_recall_pair_by_pair(rule: str, params: dict) -> None:
    d, ns = 8, np.array([1, 3, 8, 9, 20, 32])
    curve = recall_curve(rule, "random", d, ns, seed=7, **params)
    keys, values = make_keys("random", 32, d, seed=7), make_values(32, d, seed=7)
    for n, mean in zip(ns, curve["mean_error"]):
        assert mean == pytest.approx(recall(rule, keys[:n], values[:n], **params).mean_error,
                                     rel=1e-12, abs=1e-14)
    np.testing.assert_array_equal(curve["load"], ns / d)


def test_default_curve_runs_to_four_d() -> None:
    curve = recall_curve("linear", "orthonormal", 8)
    assert np.array_equal(curve["n"], np.arange(1, 33))
    assert np.all(curve["mean_error"][:8] < 1e-12) and np.all(curve["mean_error"][9:] > 0.05)


# --- scenarios --------------------------------------------------------------------------------

def test_streams_are_seeded_and_shaped() -> None:
    for make in (scenarios.gaussian, scenarios.orthonormal):
        a, b = make(10, 4, 3, seed=1), make(10, 4, 3, seed=1)
        assert a.q.shape == (10, 4) and a.v.shape == (10, 3)
        assert np.array_equal(a.k, b.k) and not np.array_equal(a.v, make(10, 4, 3, seed=2).v)
    o = scenarios.orthonormal(9, 4, 2)
    np.testing.assert_allclose(o.k[:4] @ o.k[:4].T, np.eye(4), atol=1e-12)
    assert np.array_equal(o.k[4], o.k[0]) and o.labels[4] == "k1"


def test_vocabulary_repeats_words_with_one_value_each() -> None:
    s = scenarios.vocabulary(50, 8, 3, vocab_size=4, seed=0)
    words = {tuple(k) for k in s.k}
    assert len(words) == 4
    for label in set(s.labels):
        rows = [t for t, x in enumerate(s.labels) if x == label]
        assert np.all(s.v[rows] == s.v[rows[0]])


def test_associative_recall_stream() -> None:
    s = scenarios.associative_recall(4, 6, 3, seed=0)
    assert s.T == 8 and s.labels[0] == "write k1" and s.labels[4] == "query k1"
    assert not s.k[4:].any() and not s.v[4:].any()
    out = sim.run("linear", s.q, s.k, s.v).outputs
    np.testing.assert_allclose(out[4:], s.targets[4:], atol=1e-12)  # orthonormal: exact
