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
    DIVERGENCE_NORM,
    MAX_INPUT,
    MAX_NUMBERS,
    MAX_WORK,
    DivergenceError,
    check_array,
    check_beta,
    check_budget,
    check_choice,
    check_float,
    check_input_sizes,
    check_params,
    check_positive_int,
    check_start,
    check_unit_interval_gate,
    describe,
)

Array = np.ndarray

_RULES = ("softmax", "linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda")


def causal_mask(T: int) -> Array:
    """M (T, T): True where s ≤ t. T² at most 2^27 (T ≤ 11,585)."""
    T = check_positive_int("T", T, MAX_NUMBERS)
    check_budget("T", T * T, MAX_NUMBERS, f"the causal mask's entries (T² = {T:,}²)")
    return np.tril(np.ones((T, T), dtype=bool))


def forward_substitution(L: Array, B: Array) -> Array:
    """X = (I + L)⁻¹ B for a strictly lower-triangular L (n, n), B (n, m), row by row:
    x_t = b_t − Σ_{s<t} L_ts x_s, the order in which the recurrence meets the tokens.

    Unlike a general solve (LU with pivoting, which swaps rows once |L_ts| > 1), every row uses
    only rows already final, as the recurrence does: the delta rules' written values stay as
    accurate as `sim.run`'s even where a transition I − β k kᵀ expands (β‖k‖² > 2).
    """
    X = np.array(B, dtype=np.float64)  # (n, m), a fresh copy filled in place
    for t in range(1, X.shape[0]):
        X[t] -= L[t, :t] @ X[:t]
    return X


def _check_log_decays(log_a: Any, T: int | None = None) -> Array:
    """log α (T, d_k): finite, every value ≤ 0 (the log of a decay in (0, 1]); T²·d_k numbers
    at most 2^27 (the segment sums are (T, T, d_k))."""
    a = check_array("log_a", log_a, (T, None), "(T, d_k)")
    bad = np.flatnonzero(a.reshape(-1) > 0.0)
    if bad.size:
        index = np.unravel_index(int(bad[0]), a.shape)
        raise ValueError(f"log_a: expected every value ≤ 0 (the log of a decay in (0, 1]), got "
                         f"{float(a[index])!r} at index {tuple(int(i) for i in index)}")
    check_budget("log_a", a.shape[0] ** 2 * a.shape[1], MAX_NUMBERS,
                 f"the segment sums' numbers (T² · d_k = {a.shape[0]:,}² · {a.shape[1]:,})")
    return a


def segment_log_decay(log_a: Array) -> Array:
    """C (T, T, d_k) with C_tsc = Σ_{s<r≤t} log α_rc for s ≤ t and −∞ above the diagonal.

    log_a (T, d_k), finite and ≤ 0. Summed segment by segment (a masked cumulative sum, as in
    Mamba-2's `segsum`) instead of as a difference of running totals, which would cancel badly
    for long, strongly decaying runs.
    """
    return _segment_log_decay(_check_log_decays(log_a))


def _segment_log_decay(log_a: Array) -> Array:
    T = log_a.shape[0]
    # X[r, s, c] = log α_rc where r > s (the tokens after s), else 0
    X = np.where(np.tril(np.ones((T, T), dtype=bool), k=-1)[:, :, None], log_a[:, None, :], 0.0)
    C = np.cumsum(X, axis=0)  # C[t, s, c] = Σ_{s<r≤t} log α_rc
    return np.where(np.tril(np.ones((T, T), dtype=bool))[:, :, None], C, -np.inf)


def decayed_scores(X: Array, K: Array, log_a: Array) -> Array:
    """A (T, T): A_ts = Σ_c X_tc K_sc Π_{s<r≤t} α_rc for s ≤ t, else 0.

    X, K, log_a (T, d_k); X and K finite with every entry at most 1e150 in size, log_a ≤ 0.
    """
    log_a = _check_log_decays(log_a)
    X = check_array("X", X, log_a.shape, "(T, d_k)")
    K = check_array("K", K, log_a.shape, "(T, d_k)")
    for name, a in (("X", X), ("K", K)):
        if np.abs(a).max() > MAX_INPUT:
            raise ValueError(f"{name}: expected every entry at most 1e150 in size (larger "
                             "products overflow float64)")
    return decayed_scores_unchecked(X, K, log_a)


def decayed_scores_unchecked(X: Array, K: Array, log_a: Array) -> Array:
    """`decayed_scores` without the checks: a kernel for callers that checked their inputs
    once (`run_parallel`, and `sim.chunkwise.run_chunkwise` once per chunk)."""
    D = np.exp(_segment_log_decay(log_a))  # (T, T, d_k), zeros above the diagonal
    return np.einsum("tc,sc,tsc->ts", X, K, D)


def _softmax(Q: Array, K: Array, V: Array, scale: float) -> Array:
    scores = scale * (Q @ K.T)  # (T, T)
    scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    W = np.exp(scores)
    W /= W.sum(axis=1, keepdims=True)
    return W @ V


def _linear(Q: Array, K: Array, V: Array, feature_map: str, normalize: bool,
            S0: Array | None) -> Array:
    phi_Q, phi_K = apply_feature_map(feature_map, Q), apply_feature_map(feature_map, K)
    A = np.tril(phi_Q @ phi_K.T)  # (T, T) the causal mask M ∘ φ(Q) φ(K)ᵀ
    out = A @ V  # (T, d_v)
    if S0 is not None:
        out = out + phi_Q @ S0
    if normalize:
        total = A.sum(axis=1, keepdims=True)  # (T, 1) φ(q_t)·z_t
        zero = np.flatnonzero(total[:, 0] == 0.0)
        if zero.size:
            raise ValueError(
                f"normalize: φ(q)·z = 0 at token t={int(zero[0])}, so the normalised output is "
                "undefined; use feature_map='elu+1' (positive features) or normalize=False")
        out = out / total
    return out


def run_parallel(rule: str, q: Any, k: Any, v: Any, **params: Any) -> Array:
    """All outputs (T, d_v) of `rule` in masked-matrix form. Same parameters as `sim.run`
    (keep_states is accepted and ignored; linear's initial_z is not supported).

    The same input checks as `sim.run` (every entry of q, k, v at most 1e150 in size), and
    T² numbers (T²·d_k for the decay and delta rules' segment products) at most 2^27. An output
    that leaves float64 raises DivergenceError naming its token; a normalised output with
    φ(q)·z = 0 a ValueError, as in `sim.run`. Nothing non-finite is returned.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked, not warned
        out = _run_parallel(rule, q, k, v, params)
    bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        t = int(np.argmax(bad))
        raise DivergenceError(f"run_parallel: the output of token t={t} leaves float64 "
                              "(inputs too large for the masked-matrix form); rescale q, k, v", t)
    return out


def _run_parallel(rule: str, q: Any, k: Any, v: Any, params: dict[str, Any]) -> Array:
    check_choice("rule", rule, _RULES)
    Q = check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check_array("k", k, (T, d_k), "(T, d_k)")
    V = check_array("v", v, (T, None), "(T, d_v)")
    d_v = V.shape[1]
    check_input_sizes(Q, K, V)
    gates = {"retnet": ("gamma",), "mamba2": ("alpha",), "gla": ("alpha",),
             "deltanet": ("beta",), "gated_deltanet": ("alpha", "beta"),
             "kda": ("alpha", "beta")}.get(rule, ())
    options = {"softmax": ("scale",), "linear": ("feature_map", "normalize")}.get(rule, ())
    recurrent = () if rule == "softmax" else ("initial_state",)
    check_params(rule, params, (*gates, *options, *recurrent, "keep_states"), gates)
    square = T * T * (1 if rule in ("softmax", "linear") else d_k)
    check_budget("q", square, MAX_NUMBERS, f"the T × T matrices' numbers (T = {T:,}, d_k = {d_k:,})")
    check_budget("q, k, v", T * T * (d_k + d_v), MAX_WORK,
                 f"the multiply-adds of the masked-matrix form (T = {T:,})")
    if rule == "softmax":
        scale = params.get("scale")
        s = 1.0 / math.sqrt(d_k) if scale is None else check_float(
            "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12]")
        return _softmax(Q, K, V, s)

    S0 = params.get("initial_state")
    if S0 is not None:
        S0 = check_start("initial_state", check_array("initial_state", S0, (d_k, d_v),
                                                      "(d_k, d_v)"), DIVERGENCE_NORM)
    if rule == "linear":
        name = check_choice("feature_map", params.get("feature_map", "identity"), FEATURE_MAPS)
        normalize = params.get("normalize", False)
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"normalize: expected True or False, got {describe(normalize)}")
        return _linear(Q, K, V, name, bool(normalize), S0)

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

    A = decayed_scores_unchecked(Q, K, log_a)  # (T, T) decayed q·k scores, lower with diag.
    P = np.exp(np.cumsum(log_a, axis=0))  # (T, d_k) decay since the start
    carried = (P * Q) @ S0 if S0 is not None else 0.0  # (T, d_v) what S₀ contributes
    if rule in ("retnet", "mamba2", "gla"):
        return A @ V + carried

    beta = check_beta("beta", params["beta"], (T,), "(T,)")
    # (T, T) strictly lower
    L = beta[:, None] * np.tril(decayed_scores_unchecked(K, K, log_a), k=-1)
    target = V - (P * K) @ S0 if S0 is not None else V  # (T, d_v)
    U = forward_substitution(L, beta[:, None] * target)  # (T, d_v) written values
    return A @ U + carried
