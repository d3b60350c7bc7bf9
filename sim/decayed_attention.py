"""Linear attention with a decay gate: RetNet, Mamba-2 (SSD, scalar gate) and GLA.

Glossary (code name → symbol):
    S      (d_k, d_v)  state S_t
    gamma  float       RetNet's fixed decay γ ∈ (0, 1] (one per head; multi-scale retention
                       uses γ_h = 1 − 2^(−5−h) for head h)
    alpha  (T,)        Mamba-2's data-dependent scalar decay a_t = exp(Δ_t A) ∈ (0, 1]
    alpha  (T, d_k)    GLA's data-dependent decay per key channel α_t ∈ (0, 1]^d_k
    decay              the gate of one token: a float or a (d_k,) array

Recurrence (decay, write, then read):
    RetNet   S_t = γ S_{t-1} + k_t v_tᵀ
    Mamba-2  S_t = a_t S_{t-1} + k_t v_tᵀ        (Mamba-2's k = Δ B, v = x, q = C; no D·x skip)
    GLA      S_t = diag(α_t) S_{t-1} + k_t v_tᵀ
    o_t = S_tᵀ q_t
Parallel form (sim.parallel): O = (D ∘ Q Kᵀ) V with D_ts = Π_{s<r≤t} a_r for s ≤ t, else 0;
GLA moves the per-channel products inside the score: Σ_c q_tc k_sc Π_{s<r≤t} α_rc.
"""

from __future__ import annotations

import numpy as np

from .linear_attention import rank_one

Array = np.ndarray


def decay_state(S: Array, decay: float | Array) -> Array:
    """decay ⊙ S as a new array: a float scales all of S, a (d_k,) array scales each row."""
    if isinstance(decay, float):
        return S * decay
    return decay[:, None] * S  # (d_k, 1) * (d_k, d_v)


def decayed_write(S: Array, decay: float | Array, k: Array, v: Array) -> Array:
    """S ← decay ⊙ S + k vᵀ. S (d_k, d_v), k (d_k,), v (d_v,). Returns a new array."""
    S_new = decay_state(S, decay)  # fresh array, so the write can be added in place
    S_new += rank_one(k, v)
    return S_new
