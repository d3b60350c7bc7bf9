"""Associative recall: write n key → value pairs into a d_k × d_v memory, query every key.

Glossary (code name → symbol):
    keys       (n, d_k)  unit-norm keys k_i
    values     (n, d_v)  Gaussian values v_i
    retrieved  (n, d_v)  ŷ_i = S_nᵀ k_i: every query reads the final state (no further update)
    errors     (n,)      relative error ‖ŷ_i − v_i‖ / ‖v_i‖
    rho        ρ, the mean pairwise cosine of correlated keys
    load       n / d_k, how full the memory is

Linear attention (identity features, no normalisation) with orthonormal keys recalls exactly
while n ≤ d_k and interferes beyond; softmax attention keeps every pair but its lookup is soft:
with orthonormal keys and scale s the right key gets weight eˢ / (eˢ + n − 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .features import apply_feature_map
from .rules import RULES, run
from .scenarios import orthonormal_basis
from .validation import (
    check_array,
    check_choice,
    check_float,
    check_nonnegative_int,
    check_positive_int,
)

Array = np.ndarray

KEY_KINDS = ("orthonormal", "random", "correlated")


@dataclass(frozen=True, eq=False)
class RecallResult:
    """retrieved (n, d_v), errors (n,) relative, mean_error = errors.mean()."""

    retrieved: Array
    errors: Array
    mean_error: float


def _unit_rows(X: Array) -> Array:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def make_keys(kind: str, n: int, d_k: int, rho: float = 0.0, seed: int = 0) -> Array:
    """n unit-norm keys (n, d_k).

    orthonormal: the first min(n, d_k) keys are orthonormal, later ones random unit keys.
    random:      independent random unit keys.
    correlated:  k_i = √ρ u + √(1 − ρ) e_i with a shared unit u and unit e_i ⟂ u (orthonormal
                 among themselves for the first d_k − 1 keys), so ‖k_i‖ = 1 and the cosine of two
                 keys is exactly ρ while n < d_k, and ρ on average beyond.
    Keys for a larger n extend those for a smaller n (same seed): the prefix is the same.
    """
    check_choice("kind", kind, KEY_KINDS)
    n, d_k = check_positive_int("n", n), check_positive_int("d_k", d_k)
    rho = check_float("rho", rho, 0.0, 1.0, low_open=False, accepted="[0, 1]")
    rng = np.random.default_rng(check_nonnegative_int("seed", seed))
    if kind == "random":
        return _unit_rows(rng.standard_normal((n, d_k)))
    if kind == "orthonormal":
        basis = orthonormal_basis(d_k, rng)
        extra = _unit_rows(rng.standard_normal((max(n - d_k, 0), d_k)))
        return np.concatenate((basis, extra))[:n]
    if d_k < 2:
        raise ValueError(f"d_k: correlated keys need d_k ≥ 2, got {d_k}")
    basis = orthonormal_basis(d_k, rng)
    u, complement = basis[0], basis[1:]  # (d_k,), (d_k − 1, d_k)
    extra = rng.standard_normal((max(n - (d_k - 1), 0), d_k))
    extra -= np.outer(extra @ u, u)  # keep every e_i orthogonal to the shared direction
    own = np.concatenate((complement, _unit_rows(extra)))[:n]  # (n, d_k)
    return math.sqrt(rho) * u + math.sqrt(1.0 - rho) * own


def make_values(n: int, d_v: int, seed: int = 0) -> Array:
    """n standard Gaussian values (n, d_v); a larger n extends a smaller one (same seed)."""
    rng = np.random.default_rng([check_nonnegative_int("seed", seed), 1])  # apart from the keys
    return rng.standard_normal((check_positive_int("n", n), check_positive_int("d_v", d_v)))


def relative_error(retrieved: Array, target: Array) -> Array:
    """‖ŷ_i − v_i‖ / ‖v_i‖ per row: retrieved (n, d_v), target (n, d_v) → (n,).

    0 is exact recall; 1 is as bad as retrieving nothing (ŷ = 0).
    """
    return np.linalg.norm(retrieved - target, axis=-1) / np.linalg.norm(target, axis=-1)


_errors = relative_error


def _softmax_lookup(keys: Array, values: Array, scale: float) -> Array:
    scores = scale * (keys @ keys.T)  # (n, n): every query against every stored key
    scores -= scores.max(axis=1, keepdims=True)
    W = np.exp(scores)
    return (W / W.sum(axis=1, keepdims=True)) @ values


def _read(rule: str, S: Array, z: Array | None, keys: Array, params: dict[str, Any]) -> Array:
    """Read the final state with every key as the query: ŷ_i = Sᵀ φ(k_i) [/ φ(k_i)·z]."""
    if rule != "linear":
        return keys @ S
    phi = apply_feature_map(params.get("feature_map", "identity"), keys)
    out = phi @ S
    if params.get("normalize", False):
        out = out / (phi @ z)[:, None]
    return out


def recall(rule: str, keys: Any, values: Any, **params: Any) -> RecallResult:
    """Write every pair (k_i, v_i) with `rule`, then query every key. keys (n, d_k), values
    (n, d_v); params as for `sim.run` (gates per pair, floats broadcast). Softmax attends over
    all n pairs with `scale` (default 1/√d_k)."""
    check_choice("rule", rule, RULES)
    K = check_array("keys", keys, (None, None), "(n, d_k)")
    V = check_array("values", values, (K.shape[0], None), "(n, d_v)")
    if np.any(np.linalg.norm(V, axis=1) == 0.0):
        raise ValueError("values: every value needs a non-zero norm (errors are relative to ‖v‖)")
    if rule == "softmax":
        scale = params.get("scale")
        s = 1.0 / math.sqrt(K.shape[1]) if scale is None else check_float(
            "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12]")
        retrieved = _softmax_lookup(K, V, s)
    else:
        trace = run(rule, K, K, V, keep_states=False, **params)
        z = trace.z[-1] if trace.z is not None else None
        retrieved = _read(rule, trace.final_state, z, K, params)
    errors = _errors(retrieved, V)
    return RecallResult(retrieved, errors, float(errors.mean()))


def recall_curve(rule: str, kind: str, d: int, ns: Any = None, rho: float = 0.0, seed: int = 0,
                 **params: Any) -> dict[str, Array]:
    """Mean relative recall error against the number of pairs n, with d_k = d_v = d.

    ns: the n to evaluate (default 1..4d). Returns {"n": (m,), "load": n/d (m,),
    "mean_error": (m,)}. Because keys and values for a larger n extend those for a smaller n,
    one run of max(ns) tokens gives every S_n; the result equals calling `recall` for each n.
    """
    d = check_positive_int("d", d)
    ns = np.arange(1, 4 * d + 1) if ns is None else np.asarray(ns)
    if ns.ndim != 1 or ns.size == 0 or not np.issubdtype(ns.dtype, np.integer) or ns.min() < 1:
        raise ValueError(f"ns: expected a non-empty 1-D array of positive integers, got {ns!r}")
    N = int(ns.max())
    keys = make_keys(kind, N, d, rho, seed)
    values = make_values(N, d, seed)
    means = np.empty(ns.size)
    if rule == "softmax":
        for j, n in enumerate(ns):
            means[j] = recall(rule, keys[:n], values[:n], **params).mean_error
    else:
        check_choice("rule", rule, RULES)
        trace = run(rule, keys, keys, values, keep_states=True, **params)
        for j, n in enumerate(ns):
            z = trace.z[n - 1] if trace.z is not None else None
            retrieved = _read(rule, trace.states[n - 1], z, keys[:n], params)
            means[j] = _errors(retrieved, values[:n]).mean()
    return {"n": ns, "load": ns / d, "mean_error": means}


def recall_after_each_write(rule: str, keys: Any, values: Any, **params: Any) -> tuple[Array, Array]:
    """The recall of every pair written so far, after each write, in one pass over the writes.

    keys (n, d_k), values (n, d_v); params as for `recall`. Returns (errors, retrieved):
    errors (n, n), row t − 1 = the relative error of pair i after t writes (NaN for i ≥ t, not
    written yet); retrieved (n, n, d_v), row t − 1 = ŷ_i read from S_t (NaN for i ≥ t).
    Row t − 1 equals `recall(rule, keys[:t], values[:t], **params)`.
    """
    check_choice("rule", rule, RULES)
    K = check_array("keys", keys, (None, None), "(n, d_k)")
    V = check_array("values", values, (K.shape[0], None), "(n, d_v)")
    if np.any(np.linalg.norm(V, axis=1) == 0.0):
        raise ValueError("values: every value needs a non-zero norm (errors are relative to ‖v‖)")
    n, d_v = V.shape
    written = np.arange(n)[None, :] < np.arange(1, n + 1)[:, None]  # (t, i): pair i in S_t
    if rule == "softmax":
        scale = params.get("scale")
        s = 1.0 / math.sqrt(K.shape[1]) if scale is None else check_float(
            "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12]")
        scores = s * (K @ K.T)  # (n, n): query i against stored key j
        # Online softmax over the stored keys, one write at a time: a running maximum per query
        # keeps exp() in range, the weighted sum and the total are rescaled when it grows.
        top = np.full(n, -np.inf)
        total = np.zeros(n)
        blend = np.zeros((n, d_v))
        rows = np.empty((n, n, d_v))
        for t in range(n):
            new_top = np.maximum(top, scores[:, t])
            shrink = np.exp(top - new_top)  # (n,)
            w = np.exp(scores[:, t] - new_top)
            total = total * shrink + w
            blend = blend * shrink[:, None] + w[:, None] * V[t]
            top = new_top
            rows[t] = blend / total[:, None]
    else:
        trace = run(rule, K, K, V, keep_states=True, **params)
        if rule == "linear":
            phi = apply_feature_map(params.get("feature_map", "identity"), K)  # (n, d_k)
            rows = phi[None] @ trace.states  # (t, i, d_v): row t − 1 reads S_t with every key
            if params.get("normalize", False):
                rows = rows / (trace.z @ phi.T)[:, :, None]
        else:
            rows = K[None] @ trace.states
    retrieved = np.where(written[:, :, None], rows, np.nan)
    errors = np.where(written, relative_error(rows, V[None, :, :]), np.nan)
    return errors, retrieved
