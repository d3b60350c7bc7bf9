"""Softmax attention: the baseline that keeps every pair in a KV cache.

Glossary (code name → symbol):
    keys    (t, d_k)  the cache K_{≤t} (includes the current token)
    values  (t, d_v)  the cache V_{≤t}
    scale   float     s, default 1/√d_k
    weights (t,)      softmax_i(s q_t·k_i)

    o_t = Σ_{i≤t} softmax_i(s q_t·k_i) v_i
Parallel form (sim.parallel): O = softmax_rows(M + s Q Kᵀ) V with M = 0 on and below the
diagonal and −∞ above it.
"""

from __future__ import annotations

import math

import numpy as np

from .validation import DivergenceError

Array = np.ndarray


def softmax_read(keys: Array, values: Array, q: Array, scale: float, token: int = 0
                 ) -> tuple[Array, Array]:
    """o = Vᵀ softmax(s K q). keys (t, d_k), values (t, d_v), q (d_k,). Returns (o, weights).

    A score beyond float64 (s·q·k = ±inf, e.g. |q|, |k| ≈ 1e148 with s = 1e12) would make
    every weight NaN (inf − inf): raises DivergenceError naming `token` instead. Call inside
    np.errstate(over="ignore", invalid="ignore")."""
    scores = (keys @ q) * scale  # (t,)
    top, bottom = float(scores.max()), float(scores.min())
    if not (math.isfinite(top) and math.isfinite(bottom)):
        worst = top if not math.isfinite(top) else bottom
        raise DivergenceError(
            f"softmax attention overflowed at token t={token}: a score s·q·k is {worst}, beyond "
            f"float64 (scale s = {scale:g}); rescale q and k or lower the scale", token)
    weights = np.exp(scores - top)  # shifted so the largest is e⁰ = 1: no overflow
    weights /= weights.sum()
    return values.T @ weights, weights  # (d_v,), (t,)
