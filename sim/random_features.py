"""Positive random features (FAVOR+, Performer; Choromanski et al., 2021): softmax attention's
kernel exp(q·k) estimated by a dot product of m positive features, so that attention becomes
linear attention with φ = the random feature map.

Glossary (code name → symbol):
    x        (..., d)   a query or key; q (d,) one query, K (n, d) the keys it attends over
    W        (m, d)     the projection ω_1 … ω_m, every row ω_i ~ N(0, I_d)
    m                   the number of random features
    phi      (..., m)   φ(x) = exp(W x − |x|²/2) / √m, every feature positive
    scale    s          softmax's score scale (1/√d by default), applied as (√s q)·(√s k)

Why it works: for ω ~ N(0, I), E[exp(ω·(q + k))] = exp(|q + k|² / 2), so

    E[φ(q)·φ(k)] = (1/m) Σ_i E[exp(ω_i·q − |q|²/2) exp(ω_i·k − |k|²/2)] = exp(q·k):

the estimator is unbiased for every m, and its variance falls as 1/m. Softmax attention's weights
w_j = exp(s q·k_j) / Σ_l exp(s q·k_l) are estimated by φ(q)·φ(k_j) / Σ_l φ(q)·φ(k_l). Orthogonal
rows (Performer's ORF: blocks of d orthonormal directions, each row rescaled to the length of an
independent Gaussian vector, so every row is still N(0, I_d)) keep it unbiased and lower the
variance.

Numerics: the weights are computed in logs. log(φ(q)·φ(k_j)) is a log-sum-exp over the m features
(the maximum over the features subtracted inside exp, as Performer's stabiliser does), and the
weights are a softmax over keys of those (the maximum over keys subtracted). Every constant
subtracted cancels in the normalisation, so the weights equal the plain definition exactly, and
stay finite for scores where exp(q·k) alone would overflow.

Draws are reproducible and nested: `draw_projection(m, d, seed)` is the first m rows of the draw
of any larger m with the same seed, so raising m only adds features (a page can show the estimate
settle as m grows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .features import apply_feature_map
from .validation import (
    MAX_BASIS,
    MAX_INPUT,
    MAX_NUMBERS,
    MAX_WORK,
    as_float_array,
    check_array,
    check_budget,
    check_finite,
    check_float,
    check_positive_int,
    check_seed,
    describe,
)

# Seeds and feature counts one call of approximation_error takes: each seed is one draw (a
# Python call and its QR), each m one pass over the seeds.
MAX_SEEDS = 1024
MAX_MS = 1024

Array = np.ndarray


def draw_projection(m: int, d: int, seed: int, orthogonal: bool = True) -> Array:
    """W (m, d): m random directions with every row ω_i ~ N(0, I_d), from `seed`.

    orthogonal=True: blocks of d rows that are mutually orthogonal (Q of the QR decomposition of
    a Gaussian d × d matrix, signs fixed so Q is uniformly distributed), each row rescaled to the
    length of an independent Gaussian vector; the last block is cut to m mod d rows.
    orthogonal=False: independent rows. Either way the first m rows of a draw with more rows
    (same seed, same d) are the draw for m. d at most 2,048 (a d × d QR per block) and
    2·⌈m/d⌉·d² numbers at most 2^27.
    """
    m = check_positive_int("m", m, MAX_NUMBERS)
    d = check_positive_int("d", d, MAX_BASIS)
    check_budget("m, d", 2 * (-(-m // d)) * d * d, MAX_NUMBERS,
                 f"the Gaussian draw's numbers (2 · ⌈m/d⌉ · d², m = {m:,}, d = {d:,})")
    seed = check_seed("seed", seed)
    if not isinstance(orthogonal, (bool, np.bool_)):
        raise ValueError(f"orthogonal: expected True or False, got {describe(orthogonal)}")
    rng = np.random.default_rng(seed)
    if not orthogonal:
        return rng.standard_normal((m, d))
    blocks = -(-m // d)
    # One (2d, d) draw per block, block after block, so a smaller m reads a prefix of the stream:
    # the first d rows give the directions, the norms of the next d rows their lengths.
    G = rng.standard_normal((blocks, 2 * d, d))
    Q, R = np.linalg.qr(G[:, :d, :])  # (blocks, d, d) each
    signs = np.where(np.diagonal(R, axis1=1, axis2=2) < 0.0, -1.0, 1.0)  # (blocks, d)
    directions = np.swapaxes(Q * signs[:, None, :], 1, 2)  # rows orthonormal, (blocks, d, d)
    lengths = np.linalg.norm(G[:, d:, :], axis=2)  # (blocks, d) chi-distributed, d degrees
    return (directions * lengths[:, :, None]).reshape(blocks * d, d)[:m]


def _check_projection(W: Any, d: int | None = None) -> Array:
    W = check_finite("W", as_float_array("W", W))
    if W.ndim != 2 or W.shape[0] == 0 or (d is not None and W.shape[1] != d):
        wanted = f"(m, d) = (any, {d})" if d is not None else "(m, d)"
        raise ValueError(f"W: expected shape {wanted}, got shape {W.shape}")
    return W


def favor_features(x: Any, W: Any) -> Array:
    """φ(x) = exp(W x − |x|²/2) / √m, positive random features; x (..., d), W (m, d) → (..., m).

    With the rows of W drawn from N(0, I) (`draw_projection`), E[φ(q)·φ(k)] = exp(q·k). No
    stabiliser here: this is the plain definition, which overflows for |x| beyond about 25
    (a ValueError naming x, never inf); the weight functions below work in logs instead.
    """
    x = check_finite("x", as_float_array("x", x))
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x: expected shape (..., d) with d ≥ 1, got shape {x.shape}")
    W = _check_projection(W, x.shape[-1])
    check_budget("x, W", x.size // x.shape[-1] * W.shape[0], MAX_NUMBERS,
                 "the features' numbers")
    check_budget("x, W", x.size * W.shape[0], MAX_WORK, "the multiply-adds of W x")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        phi = np.exp(x @ W.T - 0.5 * np.sum(x * x, axis=-1, keepdims=True)) / math.sqrt(W.shape[0])
    if not np.isfinite(phi).all():
        raise ValueError(f"x: φ(x) = exp(W x − |x|²/2) / √m leaves float64's range (largest "
                         f"|x| entry {np.abs(x).max():.3g}); the plain definition overflows "
                         "beyond |x| ≈ 25: use softmax_weights_favor, which works in logs")
    return phi


def _query_keys(q: Any, K: Any, scale: Any) -> tuple[Array, Array, float]:
    q = check_array("q", q, (None,), "(d,)")
    K = check_array("K", K, (None, q.shape[0]), "(n, d)")
    for name, a in (("q", q), ("K", K)):
        if np.abs(a).max() > MAX_INPUT:
            raise ValueError(f"{name}: expected every entry at most 1e150 in size, got "
                             f"{float(a.flat[int(np.argmax(np.abs(a)))]):.3g}")
    s = 1.0 / math.sqrt(q.shape[0]) if scale is None else check_float(
        "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12] (default 1/√d)")
    return q, K, s


def _finite_weights(w: Array) -> Array:
    """Weights that left float64 (scores past 1.8e308: large q, K times the scale) are refused
    by name instead of returned as NaN."""
    if not np.isfinite(w).all():
        raise ValueError("q, K, scale: a score s·q·k (or |√s k|²) leaves float64's range; "
                         "rescale q and K or lower the scale")
    return w


def _softmax(logits: Array) -> Array:
    """Normalise exp(logits) along the last axis, the maximum subtracted first."""
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _log_sum_exp(x: Array) -> Array:
    top = x.max(axis=-1)
    return top + np.log(np.exp(x - top[..., None]).sum(axis=-1))


def _favor_weights(q: Array, K: Array, W: Array) -> Array:
    """FAVOR+ weights (..., n) for q (d,), K (n, d) already scaled by √s, W (..., m, d).

    log(φ(q)·φ(k_j)) + log m = logsumexp_i (ω_i·q − |q|²/2 + ω_i·k_j − |k_j|²/2); the terms
    −|q|²/2 and log m are the same for every key and cancel in the normalisation.
    """
    a = W @ q  # (..., m)
    B = W @ K.T - 0.5 * np.sum(K * K, axis=1)  # (..., m, n): ω_i·k_j − |k_j|²/2
    log_kernel = _log_sum_exp(np.swapaxes(a[..., :, None] + B, -1, -2))  # (..., n)
    return _softmax(log_kernel)


def softmax_weights_exact(q: Any, K: Any, scale: float | None = None) -> Array:
    """w_j = exp(s q·k_j) / Σ_l exp(s q·k_l); q (d,), K (n, d) → (n,). s defaults to 1/√d."""
    q, K, s = _query_keys(q, K, scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite_weights(_softmax(s * (K @ q)))


def softmax_weights_favor(q: Any, K: Any, m: int, seed: int, scale: float | None = None,
                          orthogonal: bool = True) -> Array:
    """FAVOR+ estimate of the softmax weights: ŵ_j = φ(q̃)·φ(k̃_j) / Σ_l φ(q̃)·φ(k̃_l), with
    q̃ = √s q, k̃ = √s k and φ from `draw_projection(m, d, seed, orthogonal)`.

    q (d,), K (n, d) → (n,), positive, summing to 1. Computed in logs (see the module docstring),
    equal to the plain definition wherever that is representable.
    """
    q, K, s = _query_keys(q, K, scale)
    m = check_positive_int("m", m, MAX_NUMBERS)
    check_budget("m, K", m * K.shape[0], MAX_NUMBERS, "the (m, n) feature products' numbers")
    W = draw_projection(m, q.shape[0], seed, orthogonal)
    root = math.sqrt(s)
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite_weights(_favor_weights(root * q, root * K, W))


def elu1_weights(q: Any, K: Any) -> Array:
    """Linear attention's weights with φ = elu + 1: w_j = φ(q)·φ(k_j) / Σ_l φ(q)·φ(k_l).

    q (d,), K (n, d) → (n,). No scale: elu + 1 is not a kernel of q·k, so there is none to
    apply; these are the weights `sim.run("linear", ..., feature_map="elu+1", normalize=True)`
    blends the values with.
    """
    q, K, _ = _query_keys(q, K, None)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = apply_feature_map("elu+1", K) @ apply_feature_map("elu+1", q)  # (n,), all > 0
        return _finite_weights(scores / scores.sum())


@dataclass(frozen=True, eq=False)
class ApproximationError:
    """How far FAVOR+ weights are from softmax's, for each number of features m.

    ms:            (n_m,) the numbers of features.
    seeds:         (n_seeds,) the seeds averaged over.
    exact:         (n,) softmax weights.
    elu1:          (n,) elu + 1 weights.
    mean_abs:      (n_m,) mean over seeds of mean_j |ŵ_j − w_j|.
    max_abs:       (n_m,) mean over seeds of max_j |ŵ_j − w_j|.
    per_seed_mean_abs, per_seed_max_abs: (n_m, n_seeds) the same before averaging over seeds.
    elu1_mean_abs, elu1_max_abs: the same errors for the elu + 1 weights (no randomness).
    """

    ms: Array
    seeds: Array
    exact: Array
    elu1: Array
    mean_abs: Array
    max_abs: Array
    per_seed_mean_abs: Array
    per_seed_max_abs: Array
    elu1_mean_abs: float
    elu1_max_abs: float


def _check_int_list(name: str, x: Any, low: int, high: int, most: int) -> Array:
    """A non-empty 1-D list of at most `most` integers in [low, high]."""
    a = np.asarray(x) if not isinstance(x, (str, bytes)) else np.asarray([x])
    ok = (a.ndim == 1 and 0 < a.size <= most and a.dtype.kind in "iu"
          and bool(np.all(a >= low)) and bool(np.all(a <= high)))
    if not ok:
        raise ValueError(f"{name}: expected a non-empty list of at most {most:,} integers from "
                         f"{low} to {high:,}, got {describe(x)}")
    return a.astype(np.int64)


def approximation_error(q: Any, K: Any, ms: Sequence[int] | Array, seeds: Sequence[int] | Array,
                        scale: float | None = None, orthogonal: bool = True
                        ) -> ApproximationError:
    """Error of the FAVOR+ softmax weights against the exact ones, for every m in `ms`, averaged
    over `seeds`. q (d,), K (n, d); ms, seeds lists of ints (ms ≥ 1, seeds ≥ 0), at most
    1,024 of each, the work bounded before any draw (seeds · Σ ms · (n + d) ≤ 2^32).

    One projection of max(ms) rows per seed; each m uses its first m rows (the same draw
    `softmax_weights_favor(q, K, m, seed)` makes). Vectorised over seeds.
    """
    q, K, s = _query_keys(q, K, scale)
    ms_ = _check_int_list("ms", ms, 1, MAX_NUMBERS, MAX_MS)
    seeds_ = _check_int_list("seeds", seeds, 0, 2**63 - 1, MAX_SEEDS)
    d, n, m_max = q.shape[0], K.shape[0], int(ms_.max())
    check_positive_int("d", d, MAX_BASIS)
    check_budget("ms, seeds", len(seeds_) * m_max * d * 2, MAX_NUMBERS,
                 f"the projections' numbers ({len(seeds_):,} seeds × max(ms) = {m_max:,} × d)")
    check_budget("ms, seeds, K", len(seeds_) * int(ms_.sum()) * (n + d), MAX_WORK,
                 "the multiply-adds of every estimate")
    check_budget("ms, seeds, K", len(seeds_) * m_max * n, MAX_NUMBERS,
                 "the numbers of one (seeds, m, n) feature product")
    W = np.stack([draw_projection(int(ms_.max()), d, int(seed), orthogonal)
                  for seed in seeds_])  # (n_seeds, m_max, d)
    exact = softmax_weights_exact(q, K, s)  # (n,), refused if beyond float64
    root = math.sqrt(s)
    per_mean = np.empty((len(ms_), len(seeds_)))
    per_max = np.empty((len(ms_), len(seeds_)))
    with np.errstate(over="ignore", invalid="ignore"):
        for i, m in enumerate(ms_):
            favor = _finite_weights(_favor_weights(root * q, root * K, W[:, :m]))  # (n_seeds, n)
            gap = np.abs(favor - exact)
            per_mean[i], per_max[i] = gap.mean(axis=1), gap.max(axis=1)
    elu1 = elu1_weights(q, K)
    return ApproximationError(
        ms=ms_, seeds=seeds_, exact=exact, elu1=elu1,
        mean_abs=per_mean.mean(axis=1), max_abs=per_max.mean(axis=1),
        per_seed_mean_abs=per_mean, per_seed_max_abs=per_max,
        elu1_mean_abs=float(np.abs(elu1 - exact).mean()),
        elu1_max_abs=float(np.abs(elu1 - exact).max()),
    )
