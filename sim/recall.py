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
from .registry import RULES
from .rules import run
from .scenarios import orthonormal_basis
from .validation import (
    MAX_BASIS,
    MAX_INPUT,
    MAX_NUMBERS,
    MAX_TOKENS,
    MAX_WORK,
    DivergenceError,
    as_float_array,
    check_array,
    check_budget,
    check_choice,
    check_float,
    check_positive_int,
    check_seed,
    describe,
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
    Sizes: n·d_k at most 2^27 numbers; d_k at most 2,048 for orthonormal and correlated keys.
    """
    check_choice("kind", kind, KEY_KINDS)
    n, d_k = check_positive_int("n", n, MAX_NUMBERS), check_positive_int("d_k", d_k, MAX_NUMBERS)
    check_budget("n, d_k", n * d_k, MAX_NUMBERS, f"the keys' numbers ({n:,} × {d_k:,})")
    if kind != "random":  # a d_k × d_k orthonormal basis: a QR decomposition, O(d_k³)
        check_positive_int("d_k", d_k, MAX_BASIS)
    rho = check_float("rho", rho, 0.0, 1.0, low_open=False, accepted="[0, 1]")
    rng = np.random.default_rng(check_seed("seed", seed))
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
    """n standard Gaussian values (n, d_v); a larger n extends a smaller one (same seed).
    n·d_v at most 2^27 numbers."""
    rng = np.random.default_rng([check_seed("seed", seed), 1])  # apart from the keys
    n, d_v = check_positive_int("n", n, MAX_NUMBERS), check_positive_int("d_v", d_v, MAX_NUMBERS)
    check_budget("n, d_v", n * d_v, MAX_NUMBERS, f"the values' numbers ({n:,} × {d_v:,})")
    return rng.standard_normal((n, d_v))


def relative_error(retrieved: Array, target: Array) -> Array:
    """‖ŷ_i − v_i‖ / ‖v_i‖ per row: retrieved (n, d_v), target (n, d_v) → (n,).

    0 is exact recall; 1 is as bad as retrieving nothing (ŷ = 0). Both finite, every entry at
    most 1e150 in size, broadcasting to one shape (..., d_v); every target row non-zero.
    """
    Y = _bounded("retrieved", retrieved)
    V = _bounded("target", target)
    for name, a in (("retrieved", Y), ("target", V)):
        if a.ndim == 0 or a.shape[-1] == 0:
            raise ValueError(f"{name}: expected rows (n, d_v) with d_v ≥ 1, got shape {a.shape}")
    try:
        shape = np.broadcast_shapes(Y.shape, V.shape)
    except ValueError:
        raise ValueError(f"target: expected the shape of retrieved {Y.shape}, got shape "
                         f"{V.shape}") from None
    if len(shape) == 0:
        raise ValueError("retrieved: expected rows (n, d_v), got a scalar")
    check_budget("retrieved, target", math.prod(shape), MAX_NUMBERS, "the entries compared")
    norms = np.linalg.norm(V, axis=-1)
    if np.any(norms == 0.0):
        raise ValueError("target: every row needs a non-zero norm (errors are relative to ‖v‖)")
    return _errors(Y, V)


def _bounded(name: str, x: Any) -> Array:
    a = as_float_array(name, x)
    bad = ~np.isfinite(a) | (np.abs(a) > MAX_INPUT)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}: expected finite numbers at most 1e150 in size, got "
                         f"{float(a[index])!r} at index {index}")
    return a


def _errors(retrieved: Array, target: Array) -> Array:
    """`relative_error` without the checks: inputs finite and bounded, target rows non-zero."""
    return np.linalg.norm(retrieved - target, axis=-1) / np.linalg.norm(target, axis=-1)


def _softmax_lookup(keys: Array, values: Array, scale: float) -> Array:
    check_budget("keys", keys.shape[0] ** 2, MAX_NUMBERS, "the n × n scores' numbers")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = scale * (keys @ keys.T)  # (n, n): every query against every stored key
    _finite_scores(scores, scale)
    scores -= scores.max(axis=1, keepdims=True)
    W = np.exp(scores)
    return (W / W.sum(axis=1, keepdims=True)) @ values


def _finite_scores(scores: Array, scale: float) -> None:
    """A score s·k_i·k_j beyond float64 would make softmax's weights NaN: refuse, naming it."""
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        raise DivergenceError(f"keys: the softmax score of query i={i} leaves float64 (scale "
                              f"s = {scale:g}); rescale the keys or lower the scale", i)


def _read(rule: str, S: Array, z: Array | None, keys: Array, params: dict[str, Any]) -> Array:
    """Read the final state with every key as the query: ŷ_i = Sᵀ φ(k_i) [/ φ(k_i)·z]."""
    if rule != "linear":
        return keys @ S
    phi = apply_feature_map(params.get("feature_map", "identity"), keys)
    out = phi @ S
    if params.get("normalize", False):
        total = phi @ z  # (n,) φ(k_i)·z
        zero = np.flatnonzero(total == 0.0)
        if zero.size:
            raise ValueError(f"normalize: φ(k)·z = 0 for key i={int(zero[0])}, so the normalised "
                             "read is undefined; use feature_map='elu+1' or normalize=False")
        with np.errstate(over="ignore", invalid="ignore"):
            out = out / total[:, None]
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise DivergenceError(f"normalize: the normalised read of key i={i} leaves float64; "
                                  "rescale keys and values", i)
    return out


def _pairs(rule: str, keys: Any, values: Any) -> tuple[Array, Array]:
    """keys (n, d_k), values (n, d_v): finite, every entry at most 1e150 in size (as `sim.run`
    takes them), every value non-zero."""
    check_choice("rule", rule, RULES)
    K = check_array("keys", keys, (None, None), "(n, d_k)")
    V = check_array("values", values, (K.shape[0], None), "(n, d_v)")
    _bounded("keys", K)
    _bounded("values", V)
    if np.any(np.linalg.norm(V, axis=1) == 0.0):
        raise ValueError("values: every value needs a non-zero norm (errors are relative to ‖v‖)")
    return K, V


def recall(rule: str, keys: Any, values: Any, **params: Any) -> RecallResult:
    """Write every pair (k_i, v_i) with `rule`, then query every key. keys (n, d_k), values
    (n, d_v); params as for `sim.run` (gates per pair, floats broadcast). Softmax attends over
    all n pairs with `scale` (default 1/√d_k)."""
    K, V = _pairs(rule, keys, values)
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
    check_choice("rule", rule, RULES)
    d = check_positive_int("d", d, MAX_BASIS)
    given = ns
    ns = np.arange(1, 4 * d + 1) if ns is None else np.asarray(
        ns if not isinstance(ns, (str, bytes)) else [ns])
    if ns.ndim != 1 or ns.size == 0 or not np.issubdtype(ns.dtype, np.integer) or ns.min() < 1:
        raise ValueError(f"ns: expected a non-empty 1-D array of positive integers, got "
                         f"{describe(given)}")
    check_budget("ns", ns.size, MAX_TOKENS, "the number of points")
    N = check_positive_int("ns", int(ns.max()), MAX_NUMBERS)
    check_budget("ns, d", N * d * d, MAX_NUMBERS, f"the kept states' numbers (max(ns) = {N:,} "
                 f"states of {d:,} × {d:,})")
    reads = int(np.sum(ns.astype(np.float64) ** 2 * d if rule == "softmax" else ns * d * d))
    check_budget("ns, d", reads, MAX_WORK, "the multiply-adds of every read")
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
    K, V = _pairs(rule, keys, values)
    n, d_v = V.shape
    check_budget("keys, values", n * n * d_v, MAX_NUMBERS,
                 f"the retrieved values after each write (n² · d_v = {n:,}² · {d_v:,})")
    written = np.arange(n)[None, :] < np.arange(1, n + 1)[:, None]  # (t, i): pair i in S_t
    if rule == "softmax":
        scale = params.get("scale")
        s = 1.0 / math.sqrt(K.shape[1]) if scale is None else check_float(
            "scale", scale, 0.0, 1e12, low_open=False, accepted="[0, 1e12]")
        with np.errstate(over="ignore", invalid="ignore"):
            scores = s * (K @ K.T)  # (n, n): query i against stored key j
        _finite_scores(scores, s)
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
                totals = trace.z @ phi.T  # (t, i) φ(k_i)·z_t
                if np.any(totals == 0.0):
                    t, i = (int(x) for x in np.argwhere(totals == 0.0)[0])
                    raise ValueError(f"normalize: φ(k)·z = 0 for key i={i} after {t + 1} writes, "
                                     "so the normalised read is undefined; use "
                                     "feature_map='elu+1' or normalize=False")
                with np.errstate(over="ignore", invalid="ignore"):
                    rows = rows / totals[:, :, None]
                if not np.isfinite(rows).all():
                    raise DivergenceError("normalize: a normalised read leaves float64; rescale "
                                          "keys and values", int(np.argwhere(
                                              ~np.isfinite(rows))[0][0]))
        else:
            rows = K[None] @ trace.states
    retrieved = np.where(written[:, :, None], rows, np.nan)
    errors = np.where(written, _errors(rows, V[None, :, :]), np.nan)
    return errors, retrieved
