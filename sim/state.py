"""The records the rules pass around: `State` (memory after t tokens), `Step` (one token's
update, for animation) and `Trace` (a whole run).

Shapes use one head: q, k (d_k,), v (d_v,), S (d_k, d_v). Arrays inside a `State` returned by
`sim.step` are read-only: a state is a value, the next step makes a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

Array = np.ndarray


@dataclass(frozen=True)
class State:
    """What a rule remembers after `t` tokens.

    S:      (d_k, d_v) the recurrent state (None for softmax attention).
    z:      (d_k,) running total of φ(k), linear attention only (None otherwise).
    keys:   (t, d_k) the KV cache's keys, softmax attention only (None otherwise).
    values: (t, d_v) the KV cache's values, softmax attention only (None otherwise).
    t:      tokens seen so far.
    """

    S: Array | None = None
    z: Array | None = None
    keys: Array | None = None
    values: Array | None = None
    t: int = 0

    @property
    def numbers(self) -> int:
        """How many numbers this state holds (the memory a page draws)."""
        return sum(a.size for a in (self.S, self.z, self.keys, self.values) if a is not None)


@dataclass(frozen=True, eq=False)
class Step:
    """One token's update: S_t = decay(S_{t-1}) − erased + write; output o_t = S_tᵀ q_t.

    state:     the new `State`.
    output:    (d_v,) o_t.
    decay:     the gate applied to the old state: a float (γ, α), a (d_k,) array (per-channel α)
               or None when the rule does not decay.
    read_back: (d_v,) Sᵀk read from the decayed state before writing (delta rules, else None).
    error:     (d_v,) v − Sᵀk, what the delta rule corrects (delta rules, else None).
    weights:   (t,) attention weights over the cache, softmax attention only (else None).
    write:     (d_k, d_v) the rank-1 matrix added: φ(k) vᵀ (linear), k vᵀ (decay rules),
               β k vᵀ (delta rules); None for softmax attention. Built on first access.
    erased:    (d_k, d_v) the part the delta rule removes, β k (Sᵀk)ᵀ; None otherwise.
    For the delta rules write − erased = β k (v − Sᵀk)ᵀ equals the net update up to rounding.
    """

    state: State
    output: Array
    decay: float | Array | None = None
    read_back: Array | None = None
    error: Array | None = None
    weights: Array | None = None
    # Ingredients of the rank-1 matrices, which are built only when a page asks for them.
    _key: Array | None = field(default=None, repr=False)
    _write_values: Array | None = field(default=None, repr=False)
    _erase_values: Array | None = field(default=None, repr=False)

    @property
    def write(self) -> Array | None:
        if self._key is None or self._write_values is None:
            return None
        return np.outer(self._key, self._write_values)  # (d_k, d_v)

    @property
    def erased(self) -> Array | None:
        if self._key is None or self._erase_values is None:
            return None
        return np.outer(self._key, self._erase_values)  # (d_k, d_v)


@dataclass(frozen=True, eq=False)
class Trace:
    """A whole run of T tokens.

    rule:        the rule's name.
    outputs:     (T, d_v) o_t for every token.
    states:      (T, d_k, d_v) S_t after every token; None for softmax or keep_states=False.
    final_state: (d_k, d_v) S_T; None for softmax attention.
    z:           (T, d_k) running totals z_t = Σ_{i≤t} φ(k_i), linear attention only.
    read_backs:  (T, d_v) Sᵀk_t read before each write (after the decay), delta rules only.
    errors:      (T, d_v) v_t − Sᵀk_t, delta rules only.
    weights:     (T, T) lower-triangular attention weights, softmax attention only.
    """

    rule: str
    outputs: Array
    states: Array | None = None
    final_state: Array | None = None
    z: Array | None = None
    read_backs: Array | None = None
    errors: Array | None = None
    weights: Array | None = None
