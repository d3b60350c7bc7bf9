"""Linear attention (Katharopoulos et al., 2020): a fixed-size state instead of a KV cache.

Glossary (code name → symbol):
    S      (d_k, d_v)  state S_t = Σ_{i≤t} φ(k_i) v_iᵀ
    z      (d_k,)      running key total z_t = Σ_{i≤t} φ(k_i)
    phi_q, phi_k       φ(q_t), φ(k_t), feature-mapped query and key (d_k,)
    o      (d_v,)      output o_t = S_tᵀ φ(q_t), or divided by φ(q_t)·z_t when normalised

Recurrence (update, then read):
    S_t = S_{t-1} + φ(k_t) v_tᵀ,   z_t = z_{t-1} + φ(k_t),   o_t = S_tᵀ φ(q_t) [/ φ(q_t)·z_t]
Parallel form (sim.parallel): O = (M ∘ φ(Q) φ(K)ᵀ) V with M the causal (lower-triangular) mask.
"""

from __future__ import annotations

import math

import numpy as np

from .validation import DivergenceError

Array = np.ndarray


def rank_one(k: Array, v: Array) -> Array:
    """The outer product k vᵀ (d_k, d_v) as a new array.

    Same numbers as np.outer(k, v) (one product per entry), computed as a (d_k, 1) @ (1, d_v)
    matrix product, which takes BLAS's fast path instead of a broadcast loop: several times
    quicker at d = 64, and this product is most of the cost of a step.
    """
    return np.dot(k[:, None], v[None, :])


def linear_write(S: Array, z: Array, phi_k: Array, v: Array) -> tuple[Array, Array]:
    """S ← S + φ(k) vᵀ, z ← z + φ(k). Returns new arrays; S (d_k, d_v), z (d_k,)."""
    S_new = rank_one(phi_k, v)  # (d_k, d_v), freshly allocated, so adding in place is safe
    S_new += S
    return S_new, z + phi_k


def linear_read(S: Array, z: Array, phi_q: Array, normalize: bool, token: int) -> Array:
    """o = Sᵀ φ(q), or Sᵀ φ(q) / (φ(q)·z) when `normalize`. (d_v,)

    A normalised read-out whose φ(q)·z or quotient leaves float64's range raises
    DivergenceError naming `token`. Call inside np.errstate(over="ignore", invalid="ignore")."""
    o = S.T @ phi_q  # (d_v,)
    if normalize:
        denominator = float(phi_q @ z)
        if denominator == 0.0:
            raise ValueError(
                f"normalize: φ(q)·z = 0 at token t={token}, so the normalised output is "
                "undefined; use feature_map='elu+1' (positive features) or normalize=False"
            )
        o = o / denominator
        if not (math.isfinite(denominator) and np.isfinite(o).all()):
            raise DivergenceError(
                f"linear attention overflowed at token t={token}: the normalised read-out "
                f"Sᵀφ(q) / φ(q)·z (φ(q)·z = {denominator:.3g}) is beyond float64; rescale q, k, v",
                token)
    return o
