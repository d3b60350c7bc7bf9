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

import numpy as np

Array = np.ndarray


def softmax_read(keys: Array, values: Array, q: Array, scale: float) -> tuple[Array, Array]:
    """o = Vᵀ softmax(s K q). keys (t, d_k), values (t, d_v), q (d_k,). Returns (o, weights)."""
    scores = (keys @ q) * scale  # (t,)
    weights = np.exp(scores - scores.max())  # shifted so the largest is e⁰ = 1: no overflow
    weights /= weights.sum()
    return values.T @ weights, weights  # (d_v,), (t,)
