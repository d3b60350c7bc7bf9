"""Gated DeltaNet-2 (GDN-2) as an update rule, in the package's convention.

Glossary (code name → symbol; the reference's names in brackets):
    q      (d_k,)  query q_t  [q; the reference scales it by 1/√d_k, the Lab's rules take q as given]
    k      (d_k,)  key k_t  [k]
    v      (d_v,)  value v_t  [v]
    S      (d_k, d_v)  state S_t  [h, K × V as here]
    alpha  (d_k,)  per-key-channel decay α_t ∈ (0, 1]^d_k  [exp(g), g the log-decay]
    erase  (d_k,)  erase gate b_t ∈ [0, 1]^d_k, on the key axis  [b]
    write  (d_v,)  write gate w_t ∈ [0, 1]^d_v, on the value axis  [w]
    read_back (d_v,)  (b_t ⊙ k_t)ᵀ diag(α_t) S_{t−1}, what the gated key finds  [erase]

The rule (Hatamizadeh, Choi, Kautz, "Gated DeltaNet-2: Decoupling Erase and Write in Linear
Attention", arXiv:2605.22791, 2026), update then read:
    S_t = (I − k_t (b_t ⊙ k_t)ᵀ) diag(α_t) S_{t−1} + k_t (w_t ⊙ v_t)ᵀ,     o_t = S_tᵀ q_t
in the order of the reference, fla-org/flash-linear-attention fla/ops/gdn2/naive.py
`naive_recurrent_gdn2` (its loop over t; commit bc3b101d, 2026-08-22):
    S ← diag(α) S;   e = (b ⊙ k)ᵀ S;   S ← S + k (w ⊙ v − e)ᵀ;   o = Sᵀ q.
The same update is the docstring of fla/ops/gdn2/fused_recurrent.py (its Triton kernel).

Reductions: b = w = β·1 (one scalar for both gates) is KDA, diag(α) S + β k (v − (diag(α) S)ᵀ k)ᵀ;
with α = a·1 as well it is Gated DeltaNet. The erase reads the decayed state, as Gated DeltaNet
and KDA do (RWKV-7 reads the undecayed one).
Not here: the reference's scale on q, and the layer around the rule (projections, short
convolutions, L2-normalised q and k, the gates' own parametrisation, output norm and gate).

Shapes of a run: q, k, alpha, erase (T, d_k); v, write (T, d_v). A float broadcasts for the gates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import rule_inputs as inputs
from . import validation as check
from .linear_attention import rank_one
from .registry import REGISTRY
from .state import State, Step, Trace

Array = np.ndarray
GDN2_OPTIONS = REGISTRY["gdn2"].info.options


def gdn2_write(S: Array, alpha: Array, erase: Array, write: Array, k: Array, v: Array
               ) -> tuple[Array, Array]:
    """S ← diag(α) S; e = (b ⊙ k)ᵀ S; S ← S + k (w ⊙ v − e)ᵀ. S (d_k, d_v); α, b, k (d_k,);
    w, v (d_v,). Returns (new S, e (d_v,)). `run` and `step` both call this: they agree bit for bit."""
    S_new = alpha[:, None] * S  # (d_k, d_v), fresh
    read_back = (erase * k) @ S_new  # (d_v,) from the decayed state
    S_new += rank_one(k, write * v - read_back)
    return S_new, read_back


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


def step_gdn2(state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One GDN-2 token: q, k, alpha, erase (d_k,), v, write (d_v,) (the gates may be floats).
    Returns a `Step` (decay = α, read_back = (b ⊙ k)ᵀ diag(α) S_{t−1})."""
    inputs.params_for("gdn2", gates, ("alpha", "erase", "write"), ("alpha", "erase", "write"))
    S = inputs.state_matrix("gdn2", state)
    d_k, d_v = S.shape
    q, k, v = inputs.token(q, k, v, d_k, d_v, state.t)
    alpha = inputs.decay("alpha", gates["alpha"], (d_k,), "(d_k,)")
    erase = inputs.rate("erase", gates["erase"], (d_k,), "(d_k,)", 1.0)
    write = inputs.rate("write", gates["write"], (d_v,), "(d_v,)", 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        S_new, read_back = gdn2_write(S, alpha, erase, write, k, v)
        if not check.state_norm_ok(S_new):
            raise check.divergence(state.t, S_new)
        output = S_new.T @ q
    return Step(State(S=_frozen(S_new), t=state.t + 1), output, decay=alpha,
                read_back=read_back, _key=k, _write_values=write * v)


def run_gdn2(q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """GDN-2 over a stream: q, k (T, d_k), v (T, d_v); alpha (T, d_k) in (0, 1], erase (T, d_k)
    and write (T, d_v) in [0, 1] (floats broadcast); initial_state (d_k, d_v), keep_states.
    Returns a `Trace` (read_backs (T, d_v))."""
    inputs.params_for("gdn2", params, GDN2_OPTIONS, ("alpha", "erase", "write"))
    Q, K, V = inputs.stream(q, k, v)
    T, d_k = K.shape
    d_v = V.shape[1]
    keep = inputs.keep_states(params)
    check.check_run_size(T, d_k, d_v, keep)  # before the gates are broadcast
    alpha = inputs.decay("alpha", params["alpha"], (T, d_k), "(T, d_k)")
    erase = inputs.rate("erase", params["erase"], (T, d_k), "(T, d_k)", 1.0)
    write = inputs.rate("write", params["write"], (T, d_v), "(T, d_v)", 1.0)
    S = inputs.initial_state(params, d_k, d_v)
    states = np.empty((T, *S.shape)) if keep else None
    outputs, read_backs = np.empty((T, d_v)), np.empty((T, d_v))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            S, read_backs[t] = gdn2_write(S, alpha[t], erase[t], write[t], K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = S.T @ Q[t]
            if states is not None:
                states[t] = S
    return Trace("gdn2", outputs, states, S, read_backs=read_backs)
