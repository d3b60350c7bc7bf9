"""FAVOR+ positive random features: unbiased for exp(q·k), exact normalisation, error against m."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sim
from sim.random_features import (
    approximation_error,
    draw_projection,
    elu1_weights,
    favor_features,
    softmax_weights_exact,
    softmax_weights_favor,
)


def query_keys(d: int = 8, n: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d), rng.standard_normal((n, d))


@pytest.mark.parametrize("orthogonal", [True, False])
def test_estimator_is_unbiased(orthogonal: bool) -> None:
    rng = np.random.default_rng(1)
    d, m, N = 4, 8, 4000
    q, k = 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)
    estimates = np.array([favor_features(q, W) @ favor_features(k, W) for W in
                          (draw_projection(m, d, seed, orthogonal) for seed in range(N))])
    mean, stderr = estimates.mean(), estimates.std(ddof=1) / math.sqrt(N)
    target = math.exp(q @ k)
    assert abs(mean - target) < 4 * stderr  # a 4-sigma band: fails by chance once in ~16,000
    # the band is narrow enough to catch a 5% bias (a test that cannot fail is a defect)
    assert abs(mean - 1.05 * target) > 4 * stderr
    assert np.all(estimates > 0)  # positive features: never a negative kernel estimate


def test_features_follow_the_plain_definition() -> None:
    rng = np.random.default_rng(2)
    W = rng.standard_normal((5, 3))
    x = rng.standard_normal((4, 3))
    expected = np.array([[math.exp(w @ xi - xi @ xi / 2) / math.sqrt(5) for w in W] for xi in x])
    np.testing.assert_allclose(favor_features(x, W), expected, rtol=1e-14)
    assert favor_features(x[0], W).shape == (5,)
    assert favor_features(x.reshape(2, 2, 3), W).shape == (2, 2, 5)


def test_exact_weights_match_softmax_attention() -> None:
    q, K = query_keys(d=4, n=6)
    # sim.run's softmax weights for the last token, whose query is q, over all six keys
    Q = np.vstack([np.zeros((5, 4)), q])
    trace = sim.run("softmax", Q, K, np.zeros((6, 1)), scale=0.7)
    np.testing.assert_allclose(softmax_weights_exact(q, K, scale=0.7), trace.weights[-1],
                               rtol=1e-13)
    default = softmax_weights_exact(q, K)
    np.testing.assert_allclose(default, softmax_weights_exact(q, K, scale=0.5), rtol=1e-15)


def test_elu1_weights_are_linear_attentions_blend() -> None:
    q, K = query_keys(d=4, n=6)
    Q = np.vstack([np.zeros((5, 4)), q])
    # with one-hot values, the normalised output of the last token is its weight vector
    trace = sim.run("linear", Q, K, np.eye(6), feature_map="elu+1", normalize=True)
    np.testing.assert_allclose(elu1_weights(q, K), trace.outputs[-1], rtol=1e-13)


@pytest.mark.parametrize("m", [1, 7, 64, 256])
@pytest.mark.parametrize("orthogonal", [True, False])
def test_weights_are_the_normalised_kernel_estimates(m: int, orthogonal: bool) -> None:
    q, K = query_keys(d=8)
    w = softmax_weights_favor(q, K, m, seed=3, scale=0.4, orthogonal=orthogonal)
    assert w.shape == (12,) and np.all(w > 0)
    assert math.isclose(w.sum(), 1.0, rel_tol=1e-14)
    W = draw_projection(m, 8, 3, orthogonal)
    plain = favor_features(math.sqrt(0.4) * K, W) @ favor_features(math.sqrt(0.4) * q, W)
    np.testing.assert_allclose(w, plain / plain.sum(), rtol=1e-12)


def test_stabiliser_keeps_large_scores_finite() -> None:
    # |q|, |k| ≈ 40: exp(W x − |x|²/2) under/overflows, the log-space weights do not
    q, K = query_keys(d=16, n=12, seed=4)
    q, K = 10 * q, 10 * K
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        plain = favor_features(K, draw_projection(64, 16, 0))
    assert not np.all(np.isfinite(plain) & (plain > 0))
    w = softmax_weights_favor(q, K, 64, seed=0, scale=1.0)
    assert np.all(np.isfinite(w)) and math.isclose(w.sum(), 1.0, rel_tol=1e-14)
    exact = softmax_weights_exact(q, K, scale=1.0)
    assert np.all(np.isfinite(exact)) and math.isclose(exact.sum(), 1.0, rel_tol=1e-14)


def test_error_shrinks_as_m_grows() -> None:
    q, K = query_keys(d=16, n=12, seed=5)
    ms = [4, 16, 64, 256]
    for orthogonal in (True, False):
        err = approximation_error(q, K, ms, range(40), orthogonal=orthogonal)
        assert err.mean_abs.shape == err.max_abs.shape == (4,)
        assert err.per_seed_mean_abs.shape == (4, 40)
        assert err.mean_abs[-1] < 0.6 * err.mean_abs[0]
        assert err.max_abs[-1] < err.max_abs[0]
    # The kernel's relative variance is (exp(|q̃ + k̃|²) − 1) / m: for the inputs above
    # (|q̃ + k̃|² ≈ 8) even thousands of features leave a visible error. With small scores
    # (|q̃ + k̃|² ≈ 0.7) the error falls as 1/√m: 64 times the features, an eighth of the error.
    small = approximation_error(0.15 * q, 0.15 * K, [64, 4096], range(40), scale=1.0)
    assert small.mean_abs[1] < 0.2 * small.mean_abs[0]
    assert small.mean_abs[1] < 0.02 * small.exact.mean()


def test_error_report_matches_the_single_draws() -> None:
    q, K = query_keys(d=8, n=5, seed=6)
    err = approximation_error(q, K, [3, 20], [7, 11], scale=0.3)
    for i, m in enumerate((3, 20)):
        for j, seed in enumerate((7, 11)):
            gap = np.abs(softmax_weights_favor(q, K, m, seed, scale=0.3)
                         - softmax_weights_exact(q, K, scale=0.3))
            assert math.isclose(err.per_seed_mean_abs[i, j], gap.mean(), rel_tol=1e-12)
            assert math.isclose(err.per_seed_max_abs[i, j], gap.max(), rel_tol=1e-12)
    np.testing.assert_allclose(err.mean_abs, err.per_seed_mean_abs.mean(axis=1))
    np.testing.assert_allclose(err.elu1, elu1_weights(q, K))
    assert err.elu1_mean_abs == pytest.approx(np.abs(err.elu1 - err.exact).mean())


def test_orthogonal_rows_are_orthogonal_within_blocks() -> None:
    d, m = 6, 20  # three full blocks of 6 rows and a cut block of 2
    W = draw_projection(m, d, seed=9)
    assert W.shape == (m, d)
    for start in range(0, m, d):
        block = W[start:start + d]
        gram = block @ block.T
        np.testing.assert_allclose(gram - np.diag(np.diag(gram)), 0.0, atol=1e-12)
    across = W[:d] @ W[d:2 * d].T  # different blocks are independent, not orthogonal
    assert np.abs(across).max() > 0.1
    lengths = np.linalg.norm(W, axis=1)
    assert np.ptp(lengths) > 0.1  # rows keep Gaussian lengths, not all √d
    # every row is marginally N(0, I): squared lengths average d
    rows = np.vstack([draw_projection(60, d, seed) for seed in range(200)])
    assert abs(np.mean(np.sum(rows**2, axis=1)) - d) < 0.15 * d
    assert abs(np.mean(rows)) < 0.05


def test_draws_are_nested_and_reproducible() -> None:
    for orthogonal in (True, False):
        big = draw_projection(50, 7, seed=2, orthogonal=orthogonal)
        np.testing.assert_array_equal(draw_projection(13, 7, 2, orthogonal), big[:13])
        np.testing.assert_array_equal(draw_projection(50, 7, 2, orthogonal), big)
        assert not np.allclose(draw_projection(50, 7, 3, orthogonal), big)


def test_bad_input_names_the_argument() -> None:
    q, K = query_keys(d=4, n=3)
    cases = [
        (lambda: draw_projection(0, 4, 0), "^m:"),
        (lambda: draw_projection(-2, 4, 0), "^m:"),
        (lambda: draw_projection(4, 0, 0), "^d:"),
        (lambda: draw_projection(4, 4, -1), "^seed:"),
        (lambda: draw_projection(4, 4, 0, orthogonal="yes"), "^orthogonal:"),
        (lambda: softmax_weights_favor(q, K, 0, 0), "^m:"),
        (lambda: softmax_weights_favor(q, K, 2.5, 0), "^m:"),
        (lambda: favor_features(q, np.ones((3, 5))), "^W:"),
        (lambda: favor_features(q, np.ones(4)), "^W:"),
        (lambda: favor_features(np.float64(1.0), np.ones((3, 1))), "^x:"),
        (lambda: favor_features([1.0, np.nan], np.ones((3, 2))), "^x:"),
        (lambda: softmax_weights_exact(q, K[:, :3]), "^K:"),
        (lambda: softmax_weights_exact(q[None], K), "^q:"),
        (lambda: softmax_weights_exact(q, K, scale=-1.0), "^scale:"),
        (lambda: elu1_weights(q, K.T), "^K:"),
        (lambda: approximation_error(q, K, [0, 4], [0]), "^ms:"),
        (lambda: approximation_error(q, K, [], [0]), "^ms:"),
        (lambda: approximation_error(q, K, [4], [-1]), "^seeds:"),
        (lambda: approximation_error(q, K, [4], 3), "^seeds:"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_features_turn_linear_attention_into_approximate_softmax() -> None:
    # The features are a feature map for sim.run: linear attention over φ(√s q), φ(√s k),
    # normalised, blends the values with exactly the FAVOR+ weights.
    q, K = query_keys(d=4, n=6, seed=8)
    s, m = 0.5, 128
    W = draw_projection(m, 4, seed=1)
    Q = np.vstack([np.zeros((5, 4)), q])
    phi_Q, phi_K = favor_features(math.sqrt(s) * Q, W), favor_features(math.sqrt(s) * K, W)
    trace = sim.run("linear", phi_Q, phi_K, np.eye(6), normalize=True)  # d_k = m
    favor = softmax_weights_favor(q, K, m, seed=1, scale=s)
    np.testing.assert_allclose(trace.outputs[-1], favor, rtol=1e-12)
    np.testing.assert_allclose(favor, softmax_weights_exact(q, K, scale=s), atol=0.1)
