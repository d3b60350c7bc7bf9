"""The delta rule family: DeltaNet, Gated DeltaNet and Kimi Delta Attention (KDA).

Instead of adding k vᵀ on top of what key k already holds, the delta rule reads back what k
retrieves, Sᵀk, and writes only the error, so a repeated key is overwritten rather than summed.

Glossary (code name → symbol):
    S          (d_k, d_v)  state S_t
    beta       (T,)        write strength β_t ∈ [0, 1] (up to 2 when negative eigenvalues of
                           I − β k kᵀ are allowed); keys are expected L2-normalised
    alpha      (T,)        Gated DeltaNet's scalar decay a_t ∈ (0, 1]
    alpha      (T, d_k)    KDA's per-key-channel decay α_t ∈ (0, 1]^d_k
    read_back  (d_v,)      Sᵀk, read from the decayed state before writing
    error      (d_v,)      v − Sᵀk
    u          (d_v,)      β (v − Sᵀk), the value actually written under k

Recurrence (decay, read back, write, then read):
    DeltaNet        S_t = S_{t-1} + β_t k_t (v_t − S_{t-1}ᵀ k_t)ᵀ = (I − β_t k_t k_tᵀ) S_{t-1} + β_t k_t v_tᵀ
    Gated DeltaNet  the same step applied to a_t S_{t-1}
    KDA             the same step applied to diag(α_t) S_{t-1}
    o_t = S_tᵀ q_t
Parallel form (sim.parallel): the WY / UT transform. With D the decay products and
A = strictly-lower(diag(β) (D ∘ K Kᵀ)), the written values are U = (I + A)⁻¹ diag(β) V and
O = (D ∘ Q Kᵀ, lower with diagonal) U.
"""

from __future__ import annotations

import numpy as np

from .decayed_attention import decay_state
from .linear_attention import rank_one

Array = np.ndarray


def delta_write(S: Array, decay: float | Array | None, k: Array, v: Array, beta: float
                ) -> tuple[Array, Array, Array]:
    """S ← decay ⊙ S, then S ← S + β k (v − Sᵀk)ᵀ.

    S (d_k, d_v), k (d_k,), v (d_v,). Returns (new S, read_back Sᵀk, error v − Sᵀk).
    """
    S_decayed = S if decay is None else decay_state(S, decay)  # (d_k, d_v)
    read_back = S_decayed.T @ k  # (d_v,)
    error = v - read_back  # (d_v,)
    S_new = rank_one(k, beta * error)  # (d_k, d_v), fresh, so S is added in place
    S_new += S_decayed
    return S_new, read_back, error
