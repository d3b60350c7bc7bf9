"""One frame for the delta family: every rule here is a product of factors

    S ← (diag(e^{g}) + b aᵀ) S + k vᵀ,        S (d_k, d_v)

(flash-linear-attention's generalized delta rule, "diagonal plus low rank", in our K×V
orientation). `a` reads the old, undecayed state (aᵀS); `b` writes back what it read; the
diagonal e^{g} is the decay; k vᵀ is the write. `frame_parts` returns the parts of one token,
so a page can show which part each rule uses:

    rule            e^{g} (decay)   a (reads)   b (writes)          written k, v
    linear          1               0           0                   k, v (φ = identity)
    retnet          γ·1             0           0                   k, v
    mamba2          a_t·1           0           0                   k, v
    gla             α_t             0           0                   k, v
    deltanet        1               −k          β k                 β k, v
    gated_deltanet  a_t·1           −k          a_t β k             β k, v
    kda             α_t             −α_t ⊙ k    β k                 β k, v
    rwkv7           α_t (RWKV's w)  −κ̂          β_t ⊙ κ̂ (RWKV's a)  k (RWKV's k̃), v
    deltaproduct    n_h factors: the first a Gated DeltaNet factor (a_t, k_1, β_1), the others
                    DeltaNet factors (k_j, β_j), applied in order j = 1..n_h
    gdn2            α_t             −α_t ⊙ b_t ⊙ k  k                   k, w_t ⊙ v

(KDA: (I − β k kᵀ) diag(α) = diag(α) − β k (α ⊙ k)ᵀ. Gated DeltaNet: a(I − β k kᵀ). Gated
DeltaNet-2, erase gate b and write gate w: (I − k (b ⊙ k)ᵀ) diag(α) = diag(α) − k (α ⊙ b ⊙ k)ᵀ.) The
frame drops what is not a transition of S: RWKV-6 reads before it writes (its bonus is outside
S), Mamba-1's gate is elementwise (not diagonal on rows), log-linear keeps several states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import rule_inputs as inputs
from . import validation as check

Array = np.ndarray

FRAME_RULES: tuple[str, ...] = (
    "linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda", "rwkv7",
    "deltaproduct", "gdn2",
)
_GATES = {
    "linear": ((), ()), "retnet": (("gamma",), ("gamma",)), "mamba2": (("alpha",), ("alpha",)),
    "gla": (("alpha",), ("alpha",)), "deltanet": (("beta",), ("beta",)),
    "gated_deltanet": (("alpha", "beta"), ("alpha", "beta")),
    "kda": (("alpha", "beta"), ("alpha", "beta")),
    "rwkv7": (("alpha", "beta", "removal_key"), ("alpha", "beta")),
    "deltaproduct": (("alpha", "beta"), ("alpha", "beta")),
    "gdn2": (("alpha", "erase", "write"), ("alpha", "erase", "write")),
}


@dataclass(frozen=True, eq=False)
class FrameFactor:
    """One factor S ← (diag(decay) + b aᵀ) S + key valueᵀ.

    decay (d_k,) the diagonal e^{g}; log_decay (d_k,) g; a, b (d_k,) the low-rank read and
    write (zeros when the rule has none); key (d_k,) and value (d_v,) the write k vᵀ.
    """

    decay: Array
    a: Array
    b: Array
    key: Array
    value: Array

    @property
    def log_decay(self) -> Array:
        """g = log(decay) (d_k,)."""
        return np.log(self.decay)

    @property
    def transition(self) -> Array:
        """(d_k, d_k) diag(e^{g}) + b aᵀ."""
        return np.diag(self.decay) + np.outer(self.b, self.a)

    def apply(self, S: Array) -> Array:
        """(diag(e^{g}) + b aᵀ) S + key valueᵀ, for S (d_k, d_v)."""
        return self.decay[:, None] * S + np.outer(self.b, self.a @ S) + np.outer(self.key,
                                                                                  self.value)


def frame_parts(rule: str, k: Any, v: Any, **gates: Any) -> tuple[FrameFactor, ...]:
    """The frame's parts for one token of `rule`: a tuple of factors, applied in order (one for
    every rule but DeltaProduct, which has n_h). k (d_k,) and v (d_v,) are the token's key and
    value as `sim.step` takes them (DeltaProduct: k (n_h, d_k), v (n_h, d_v)); gates as
    `sim.step`: gamma, alpha (a float, or (d_k,) for gla, kda, rwkv7, gdn2), beta (a float, or
    (d_k,) for rwkv7, (n_h,) for deltaproduct), removal_key (rwkv7, default k / ‖k‖), erase
    (d_k,) and write (d_v,) for gdn2 (floats broadcast)."""
    check.check_choice("rule", rule, FRAME_RULES)
    accepted, required = _GATES[rule]
    check.check_params(rule, gates, accepted, required)
    if rule == "deltaproduct":
        return _deltaproduct_parts(k, v, gates)
    K = check.check_finite("k", check.as_float_array("k", k))
    if K.ndim != 1 or K.size == 0:
        raise ValueError(f"k: expected shape (d_k,), got shape {K.shape}")
    d_k = K.shape[0]
    V = check.check_finite("v", check.as_float_array("v", v))
    if V.ndim != 1 or V.size == 0:
        raise ValueError(f"v: expected shape (d_v,), got shape {V.shape}")
    ones, zeros = np.ones(d_k), np.zeros(d_k)
    if rule == "linear":
        return (FrameFactor(ones, zeros, zeros, K, V),)
    if rule == "retnet":
        return (FrameFactor(ones * check.step_scalar_gate("gamma", gates["gamma"], True, 1.0),
                        zeros, zeros, K, V),)
    if rule in ("mamba2", "gated_deltanet"):
        alpha = ones * check.step_scalar_gate("alpha", gates["alpha"], True, 1.0)
    elif rule in ("gla", "kda", "rwkv7", "gdn2"):
        alpha = inputs.decay("alpha", gates["alpha"], (d_k,), "(d_k,)")
    else:
        alpha = ones
    if rule in ("mamba2", "gla"):
        return (FrameFactor(alpha, zeros, zeros, K, V),)
    if rule == "rwkv7":
        beta_k = inputs.rate("beta", gates["beta"], (d_k,), "(d_k,)", 1.0)
        kappa = (inputs.normalized_rows(K) if gates.get("removal_key") is None else
                 inputs.unit_rows("removal_key", gates["removal_key"], (d_k,), "(d_k,)"))
        return (FrameFactor(alpha, -kappa, beta_k * kappa, K, V),)
    if rule == "gdn2":
        erase = inputs.rate("erase", gates["erase"], (d_k,), "(d_k,)", 1.0)
        write = inputs.rate("write", gates["write"], (V.shape[0],), "(d_v,)", 1.0)
        return (FrameFactor(alpha, -alpha * erase * K, K, K, write * V),)
    beta = check.step_scalar_gate("beta", gates["beta"], False, 2.0)
    if rule == "kda":
        return (FrameFactor(alpha, -alpha * K, beta * K, beta * K, V),)
    return (FrameFactor(alpha, -K, alpha * beta * K, beta * K, V),)  # deltanet (α = 1), gated


def _deltaproduct_parts(k: Any, v: Any, gates: dict[str, Any]) -> tuple[FrameFactor, ...]:
    K = check.check_finite("k", check.as_float_array("k", k))
    if K.ndim != 2 or K.shape[0] < 1 or K.shape[1] < 1:
        raise ValueError(f"k: expected shape (n_h, d_k), got shape {K.shape}")
    n_h, d_k = K.shape
    V = check.check_finite("v", check.as_float_array("v", v))
    if V.ndim != 2 or V.shape[0] != n_h or V.shape[1] < 1:
        raise ValueError(f"v: expected shape (n_h, d_v) = ({n_h}, any), got shape {V.shape}")
    alpha = check.step_scalar_gate("alpha", gates["alpha"], True, 1.0)
    beta = check.check_beta("beta", gates["beta"], (n_h,), "(n_h,)")
    factors = []
    for j in range(n_h):
        a_j = alpha if j == 0 else 1.0  # one decay per token, before the first sub-step
        factors.append(FrameFactor(np.full(d_k, a_j), -K[j], a_j * beta[j] * K[j], beta[j] * K[j],
                               V[j]))
    return tuple(factors)


def apply_frame(parts: tuple[FrameFactor, ...], S: Any) -> Array:
    """S after one token: every factor of `parts` applied in order. S (d_k, d_v)."""
    if (not isinstance(parts, (tuple, list)) or not parts
            or not all(isinstance(factor, FrameFactor) for factor in parts)):
        raise ValueError("parts: expected the FrameFactors of one token (from sim.frame_parts), "
                         f"got {check.describe(parts)}")
    S_new = check.check_array("S", S, (parts[0].decay.shape[0], None), "(d_k, d_v)")
    for factor in parts:
        S_new = factor.apply(S_new)
    return S_new
