"""Parallel (masked-matrix) forms of every rule: the test oracle for the recurrences.

Each form computes all T outputs at once from T × T matrices, with no loop over tokens and no
call into `sim.rules`; it costs O(T² d) and is meant for checking, not for long runs.

Glossary (code name → symbol):
    Q, K    (T, d_k)  queries and keys, V (T, d_v) values, O (T, d_v) outputs
    mask    (T, T)    causal mask M, 1 where s ≤ t (a token sees itself: update, then read)
    log_a   (T, d_k)  log of the decay of every token and key channel (zeros: no decay)
    D       (T, T, d_k) decay products D_tsc = Π_{s<r≤t} α_rc for s ≤ t, 0 above the diagonal
    P       (T, d_k)  decay from the start, P_tc = Π_{r≤t} α_rc (carries the initial state S₀)

Forms:
    softmax   O = softmax_rows(s Q Kᵀ, masked) V
    linear    O = (M ∘ φ(Q) φ(K)ᵀ) V  [row-divided by (M ∘ φ(Q) φ(K)ᵀ) 1 when normalised]
    decay     O = A V + (P ∘ Q) S₀,  A_ts = Σ_c Q_tc K_sc D_tsc   (RetNet, Mamba-2, GLA)
    delta     WY / UT transform: every written value u_t = β_t (v_t − (decayed S_{t-1})ᵀ k_t)
              satisfies (I + L) U = diag(β) (V − (P ∘ K) S₀) with
              L_ts = β_t Σ_c K_tc K_sc D_tsc for s < t (strictly lower), so
              U = (I + L)⁻¹ diag(β) (V − (P ∘ K) S₀) and O = A U + (P ∘ Q) S₀.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .features import FEATURE_MAPS, apply_feature_map
from .validation import (
    check_array,
    check_beta,
    check_choice,
    check_float,
    check_params,
    check_unit_interval_gate,
)

Array = np.ndarray

_RULES = ("softmax", "linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda")


def causal_mask(T: int) -> Array:
    """M (T, T): True where s ≤ t."""
    return np.tril(np.ones((T, T), dtype=bool))


def segment_log_decay(log_a: Array) -> Array:
    """C (T, T, d_k) with C_tsc = Σ_{s<r≤t} log α_rc for s ≤ t and −∞ above the diagonal.

    Summed segment by segment (a masked cumulative sum, as in Mamba-2's `segsum`) instead of
    as a difference of running totals, which would cancel badly for long, strongly decaying runs.
    """
    T = log_a.shape[0]
    # X[r, s, c] = log α_rc where r > s (the tokens after s), else 0
    X = np.where(np.tril(np.ones((T, T), dtype=bool), k=-1)[:, :, None], log_a[:, None, :], 0.0)
    C = np.cumsum(X, axis=0)  # C[t, s, c] = Σ_{s<r≤t} log α_rc
    return np.where(causal_mask(T)[:, :, None], C, -np.inf)


def decayed_scores(X: Array, K: Array, log_a: Array) -> Array:
    """A (T, T): A_ts = Σ_c X_tc K_sc Π_{s<r≤t} α_rc for s ≤ t, else 0."""
    D = np.exp(segment_log_decay(log_a))  # (T, T, d_k), zeros above the diagonal
    return np.einsum("tc,sc,tsc->ts", X, K, D)


def _softmax(Q: Array, K: Array, V: Array, scale: float) -> Array:
    scores = scale * (Q @ K.T)  # (T, T)
    scores = np.where(causal_mask(Q.shape[0]), scores, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    W = np.exp(scores)
    W /= W.sum(axis=1, keepdims=True)
    return W @ V


def _linear(Q: Array, K: Array, V: Array, feature_map: str, normalize: bool,
            S0: Array | None) -> Array:
    phi_Q, phi_K = apply_feature_map(feature_map, Q), apply_feature_map(feature_map, K)
    A = np.where(causal_mask(Q.shape[0]), phi_Q @ phi_K.T, 0.0)  # (T, T)
    out = A @ V  # (T, d_v)
    if S0 is not None:
        out = out + phi_Q @ S0
    if normalize:
        out = out / A.sum(axis=1, keepdims=True)
    return out


def run_parallel(rule: str, q: Any, k: Any, v: Any, **params: Any) -> Array:
    """All outputs (T, d_v) of `rule` in masked-matrix form. Same parameters as `sim.run`
    (keep_states is accepted and ignored; linear's initial_z is not supported)."""
    check_choice("rule", rule, _RULES)
    Q = check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check_array("k", k, (T, d_k), "(T, d_k)")
    V = check_array("v", v, (T, None), "(T, d_v)")
    d_v = V.shape[1]
    gates = {"retnet": ("gamma",), "mamba2": ("alpha",), "gla": ("alpha",),
             "deltanet": ("beta",), "gated_deltanet": ("alpha", "beta"),
             "kda": ("alpha", "beta")}.get(rule, ())
    options = {"softmax": ("scale",), "linear": ("feature_map", "normalize")}.get(rule, ())
    recurrent = () if rule == "softmax" else ("initial_state",)
    check_params(rule, params, (*gates, *options, *recurrent, "keep_states"), gates)
    if rule == "softmax":
        scale = params.get("scale")
        s = 1.0 / math.sqrt(d_k) if scale is None else check_float(
            "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12]")
        return _softmax(Q, K, V, s)

    S0 = params.get("initial_state")
    if S0 is not None:
        S0 = check_array("initial_state", S0, (d_k, d_v), "(d_k, d_v)")
    if rule == "linear":
        name = check_choice("feature_map", params.get("feature_map", "identity"), FEATURE_MAPS)
        return _linear(Q, K, V, name, bool(params.get("normalize", False)), S0)

    if rule == "retnet":
        gamma = check_float("gamma", params["gamma"], 0.0, 1.0, low_open=True, accepted="(0, 1]")
        log_a = np.full((T, d_k), math.log(gamma))
    elif rule in ("mamba2", "gated_deltanet"):
        alpha = check_unit_interval_gate("alpha", params["alpha"], (T,), "(T,)")
        log_a = np.repeat(np.log(alpha)[:, None], d_k, axis=1)  # one decay for every channel
    elif rule in ("gla", "kda"):
        log_a = np.log(check_unit_interval_gate("alpha", params["alpha"], (T, d_k), "(T, d_k)"))
    else:  # deltanet
        log_a = np.zeros((T, d_k))

    A = decayed_scores(Q, K, log_a)  # (T, T) decayed q·k scores, lower with diagonal
    P = np.exp(np.cumsum(log_a, axis=0))  # (T, d_k) decay since the start
    carried = (P * Q) @ S0 if S0 is not None else 0.0  # (T, d_v) what S₀ contributes
    if rule in ("retnet", "mamba2", "gla"):
        return A @ V + carried

    beta = check_beta("beta", params["beta"], (T,), "(T,)")
    L = beta[:, None] * np.tril(decayed_scores(K, K, log_a), k=-1)  # (T, T) strictly lower
    target = V - (P * K) @ S0 if S0 is not None else V  # (T, d_v)
    U = np.linalg.solve(np.eye(T) + L, beta[:, None] * target)  # (T, d_v) written values
    return A @ U + carried
