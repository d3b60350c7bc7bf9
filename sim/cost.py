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

from .validation import as_float_array

Array = np.ndarray


def _positive(name: str, x: Any, allow_zero: bool = False) -> Any:
    a = as_float_array(name, x)
    bad = ~np.isfinite(a) | ((a < 0) if allow_zero else (a <= 0))
    if np.any(bad):
        accepted = "≥ 0" if allow_zero else "> 0"
        raise ValueError(f"{name}: expected finite numbers {accepted}, got {x!r}")
    return x if np.ndim(x) == 0 else a


def attention_ops(t: Any, d: Any) -> Any:
    """Operations for one token of full attention at position t: 4·t·d."""
    return 4 * _positive("t", t, allow_zero=True) * _positive("d", d)


def state_ops(d_k: Any, d_v: Any = None) -> Any:
    """Operations for one token with a d_k × d_v state: 4·d_k·d_v (d_v defaults to d_k)."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return 4 * d_k * d_v


def cumulative_attention_ops(T: Any, d: Any) -> Any:
    """Total attention operations for tokens t = 1..T: Σ 4·t·d = 2·d·T·(T + 1)."""
    T = _positive("T", T, allow_zero=True)
    return 2 * _positive("d", d) * T * (T + 1)


def cumulative_state_ops(T: Any, d_k: Any, d_v: Any = None) -> Any:
    """Total state operations for T tokens: 4·d_k·d_v·T."""
    return state_ops(d_k, d_v) * _positive("T", T, allow_zero=True)


def work_crossover(d: Any) -> Any:
    """The position where attention's 4·t·d equals the state's 4·d²: t = d."""
    return _positive("d", d)


def work_ratio(t: Any, d: Any) -> Any:
    """Attention work over state work at position t: 4·t·d / 4·d² = t / d."""
    return attention_ops(t, d) / state_ops(d)


def kv_cache_numbers(t: Any, d: Any) -> Any:
    """Numbers held by one head's KV cache after t tokens: keys and values, 2·t·d."""
    return 2 * _positive("t", t, allow_zero=True) * _positive("d", d)


def state_numbers(d_k: Any, d_v: Any = None, with_z: bool = False) -> Any:
    """Numbers held by a d_k × d_v state, plus d_k for linear attention's z when `with_z`."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return d_k * d_v + (d_k if with_z else 0)


def memory_crossover(d_k: Any, d_v: Any = None) -> Any:
    """Where the KV cache t·(d_k + d_v) reaches the state d_k·d_v: t = d_k·d_v / (d_k + d_v)."""
    d_k = _positive("d_k", d_k)
    d_v = d_k if d_v is None else _positive("d_v", d_v)
    return d_k * d_v / (d_k + d_v)
