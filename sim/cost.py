"""Work and memory per token: full attention against a fixed-size state, one head.

Glossary: t position (tokens so far), T sequence length, d head dimension (d_k = d_v = d unless
given separately). Counts are multiply-adds counted as two operations, the usual convention.

    attention at position t:  score q·k_i for t keys (2·t·d) + blend Σ w_i v_i (2·t·d) = 4·t·d
    d_k × d_v state:          write k vᵀ (2·d_k·d_v) + read Sᵀq (2·d_k·d_v)         = 4·d_k·d_v
    work crosses at t = d; at t = 100,000, d = 128 attention does 781.25× the work.
    memory: KV cache 2·t·d numbers against the state's d_k·d_v (+ d_k for linear attention's z);
    they cross at t = d_k·d_v / (d_k + d_v) = d/2 for a square state.

Every function takes plain numbers or numpy arrays (of t or T) and broadcasts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .validation import as_float_array, describe

Array = np.ndarray

# Accepted sizes: positions and lengths up to 2^40 tokens (a trillion), head dimensions up to
# 2^20. Integers in give exact integers out at every accepted size (Python ints for plain ints;
# int64 arrays where every count fits, else arrays of Python ints); floats in, floats out.
MAX_TOKENS = 2**40
MAX_DIM = 2**20
_HIGH = {"t": MAX_TOKENS, "T": MAX_TOKENS, "d": MAX_DIM, "d_k": MAX_DIM, "d_v": MAX_DIM}


def _positive(name: str, x: Any, allow_zero: bool = False) -> Any:
    """A size: finite, > 0 (≥ 0 with `allow_zero`), at most its _HIGH. Returns a Python int for
    an integer, a float for a float, an object array of Python ints for an integer array (exact
    products, narrowed by `_counts`), a float64 array otherwise."""
    a = as_float_array(name, x)
    high = _HIGH[name]
    bad = ~np.isfinite(a) | ((a < 0) if allow_zero else (a <= 0)) | (a > high)
    if np.any(bad):
        accepted = "≥ 0" if allow_zero else "> 0"
        raise ValueError(f"{name}: expected finite numbers {accepted} up to {high:,}, got "
                         f"{describe(x)}")
    if np.ndim(x) == 0:
        return int(x) if isinstance(x, (int, np.integer)) else float(a)
    if np.asarray(x).dtype.kind in "iuO":  # integers (O: Python ints, already checked real)
        return np.asarray(x).astype(object)
    return a


def _counts(x: Any) -> Any:
    """An exact result: object arrays of ints become int64 where every entry fits (|x| < 2^63),
    of floats float64; scalars and float arrays pass unchanged."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        if x.size and all(isinstance(e, int) for e in x.flat):
            if max(abs(e) for e in x.flat) < 2**63:
                return x.astype(np.int64)
            return x
        return x.astype(np.float64)
    return x


def attention_ops(t: Any, d: Any) -> Any:
    """Operations for one token of full attention at position t: 4·t·d."""
    return _counts(4 * _positive("t", t, allow_zero=True) * _positive("d", d))


def state_ops(d_k: Any, d_v: Any = None) -> Any:
    """Operations for one token with a d_k × d_v state: 4·d_k·d_v (d_v defaults to d_k)."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return _counts(4 * d_k * d_v)


def cumulative_attention_ops(T: Any, d: Any) -> Any:
    """Total attention operations for tokens t = 1..T: Σ 4·t·d = 2·d·T·(T + 1)."""
    T = _positive("T", T, allow_zero=True)
    return _counts(2 * _positive("d", d) * T * (T + 1))


def cumulative_state_ops(T: Any, d_k: Any, d_v: Any = None) -> Any:
    """Total state operations for T tokens: 4·d_k·d_v·T."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return _counts(4 * d_k * d_v * _positive("T", T, allow_zero=True))


def work_crossover(d: Any) -> Any:
    """The position where attention's 4·t·d equals the state's 4·d²: t = d."""
    return _counts(_positive("d", d))


def work_ratio(t: Any, d: Any) -> Any:
    """Attention work over state work at position t: 4·t·d / 4·d² = t / d."""
    t, d = _positive("t", t, allow_zero=True), _positive("d", d)
    return _counts(t / d) if np.ndim(t) or np.ndim(d) else t / d


def kv_cache_numbers(t: Any, d: Any) -> Any:
    """Numbers held by one head's KV cache after t tokens: keys and values, 2·t·d."""
    return _counts(2 * _positive("t", t, allow_zero=True) * _positive("d", d))


def state_numbers(d_k: Any, d_v: Any = None, with_z: bool = False) -> Any:
    """Numbers held by a d_k × d_v state, plus d_k for linear attention's z when `with_z`."""
    if not isinstance(with_z, (bool, np.bool_)):
        raise ValueError(f"with_z: expected True or False, got {describe(with_z)}")
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return _counts(d_k * d_v + (d_k if with_z else 0))


def memory_crossover(d_k: Any, d_v: Any = None) -> Any:
    """Where the KV cache t·(d_k + d_v) reaches the state d_k·d_v: t = d_k·d_v / (d_k + d_v)."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return _counts(d_k * d_v / (d_k + d_v))
