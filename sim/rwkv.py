"""RWKV-7 "Goose" and RWKV-6 "Finch" as update rules, in the package's convention.

Glossary (code name → symbol; RWKV's own letters in brackets):
    q            (d_k,)  query q_t  [RWKV's receptance r]
    k            (d_k,)  the written key k_t  [RWKV-7's k̃ = k ⊙ (1 + (a − 1) ⊙ k_a)]
    v            (d_v,)  value v_t
    S            (d_k, d_v)  state S_t (RWKV-7's official code holds the transpose, V×K)
    alpha        (d_k,)  per-channel decay α_t ∈ (0, 1]^d_k  [RWKV's w, the decay itself:
                         the official numpy reference's w, exp(−exp(w_raw)) of its CUDA kernel]
    beta         (d_k,)  RWKV-7's per-channel in-context learning rate β_t ∈ [0, 1]^d_k  [a]
    removal_key  (d_k,)  RWKV-7's removal key κ̂_t, a unit vector  [kk = normalize(k ⊙ k_k)];
                         default k_t / ‖k_t‖
    bonus        (d_k,)  RWKV-6's bonus u for the current token, any sign  [time_faaaa, u]
    read_back    (d_v,)  RWKV-7: κ̂_tᵀ S_{t−1}, what the removal key finds in the old state

RWKV-7, update then read (Peng et al., 2025, arXiv:2503.14456):
    S_t = diag(α_t) S_{t−1} − (β_t ⊙ κ̂_t)(κ̂_tᵀ S_{t−1}) + k_t v_tᵀ
        = (diag(α_t) − (β_t ⊙ κ̂_t) κ̂_tᵀ) S_{t−1} + k_t v_tᵀ,        o_t = S_tᵀ q_t
    The erase reads the old, undecayed state S_{t−1} (Gated DeltaNet and KDA read the decayed one).
    Reductions: α = 1, β = b·1, κ̂ = k̂, written key b k̂ is DeltaNet with β = b; α = a·1 and
    β = a b·1 (written key b k̂) is Gated DeltaNet. With a vector α it is not KDA.
    Outside the rule (not here): token shift, GroupNorm on o, the r_k bonus, output gate,
    value residual.
    Reference: BlinkDL/RWKV-LM RWKV-v7/rwkv_v7_numpy.py, V×K:
    `S = S * w.mT - S @ kk * (kk*a).mT + v * k.mT; y = S @ r`.

RWKV-6, read before write (the one rule here that does; Peng et al., 2024, arXiv:2404.05892):
    o_t = S_{t−1}ᵀ q_t + (q_t · (u ⊙ k_t)) v_t,   then   S_t = diag(α_t) S_{t−1} + k_t v_tᵀ
    So o_t never reads token t through the state, only through the bonus u; α = 1, u = 1 gives
    linear attention. Reference: BlinkDL/RWKV-LM RWKV-v5/rwkv_v6_demo.py
    (`a = k @ v; x = r @ (time_first * a + s); s = a + time_decay * s`), K×V as here.

Shapes of a run: q, k, alpha, beta, removal_key (T, d_k); v (T, d_v); bonus (d_k,). A float
broadcasts for alpha, beta and bonus. No hidden scale: q is used as given.
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

RWKV7_OPTIONS = REGISTRY["rwkv7"].info.options
RWKV6_OPTIONS = REGISTRY["rwkv6"].info.options


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


# ---------------------------------------------------------------------------------------------
# kernels: one token, no checks; `run` and `step` both call these, so they agree bit for bit.

def rwkv7_write(S: Array, alpha: Array, beta: Array, removal_key: Array, k: Array, v: Array
                ) -> tuple[Array, Array]:
    """S ← diag(α) S − (β ⊙ κ̂)(κ̂ᵀ S) + k vᵀ. S (d_k, d_v); α, β, κ̂, k (d_k,); v (d_v,).

    Returns (new S, read_back κ̂ᵀ S of the old state (d_v,))."""
    read_back = removal_key @ S  # (d_v,) from S_{t−1}, before the decay
    S_new = alpha[:, None] * S  # (d_k, d_v), fresh
    S_new -= rank_one(beta * removal_key, read_back)
    S_new += rank_one(k, v)
    return S_new, read_back


def rwkv6_token(S: Array, alpha: Array, bonus: Array, q: Array, k: Array, v: Array
                ) -> tuple[Array, Array]:
    """o = S_{t−1}ᵀ q + (q · (u ⊙ k)) v, then S ← diag(α) S + k vᵀ. Returns (new S, o)."""
    output = S.T @ q + float(q @ (bonus * k)) * v  # (d_v,) read before the write
    S_new = alpha[:, None] * S
    S_new += rank_one(k, v)
    return S_new, output


# ---------------------------------------------------------------------------------------------
# RWKV-7

def step_rwkv7(state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One RWKV-7 token: q, k, alpha, beta, removal_key (d_k,) (alpha, beta may be floats;
    removal_key defaults to k / ‖k‖), v (d_v,). Returns a `Step` (decay = α, read_back = κ̂ᵀS)."""
    inputs.params_for("rwkv7", gates, ("alpha", "beta", "removal_key"), ("alpha", "beta"))
    S = inputs.state_matrix("rwkv7", state)
    d_k, d_v = S.shape
    q, k, v = inputs.token(q, k, v, d_k, d_v, state.t)
    alpha = inputs.decay("alpha", gates["alpha"], (d_k,), "(d_k,)")
    beta = inputs.rate("beta", gates["beta"], (d_k,), "(d_k,)", 1.0)
    kappa = _removal_keys(gates.get("removal_key"), k, (d_k,), "(d_k,)")
    with np.errstate(over="ignore", invalid="ignore"):
        S_new, read_back = rwkv7_write(S, alpha, beta, kappa, k, v)
        if not check.state_norm_ok(S_new):
            raise check.divergence(state.t, S_new)
        output = S_new.T @ q
    return Step(State(S=_frozen(S_new), t=state.t + 1), output, decay=alpha,
                read_back=read_back, _key=k, _write_values=v)


def run_rwkv7(q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """RWKV-7 over a stream: q, k (T, d_k), v (T, d_v); alpha (T, d_k) in (0, 1], beta (T, d_k)
    in [0, 1] (floats broadcast), removal_key (T, d_k) unit rows (default k / ‖k‖);
    initial_state (d_k, d_v), keep_states. Returns a `Trace` (read_backs (T, d_v) = κ̂ᵀS_{t−1})."""
    inputs.params_for("rwkv7", params, RWKV7_OPTIONS, ("alpha", "beta"))
    Q, K, V = inputs.stream(q, k, v)
    T, d_k = K.shape
    keep = inputs.keep_states(params)
    check.check_run_size(T, d_k, V.shape[1], keep)  # before the gates are broadcast to (T, d_k)
    alpha = inputs.decay("alpha", params["alpha"], (T, d_k), "(T, d_k)")
    beta = inputs.rate("beta", params["beta"], (T, d_k), "(T, d_k)", 1.0)
    kappa = _removal_keys(params.get("removal_key"), K, (T, d_k), "(T, d_k)")
    S = inputs.initial_state(params, d_k, V.shape[1])
    states = np.empty((T, *S.shape)) if keep else None
    outputs, read_backs = np.empty((T, V.shape[1])), np.empty((T, V.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            S, read_backs[t] = rwkv7_write(S, alpha[t], beta[t], kappa[t], K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = S.T @ Q[t]
            if states is not None:
                states[t] = S
    return Trace("rwkv7", outputs, states, S, read_backs=read_backs)


def _removal_keys(x: Any, k: Array, shape: tuple[int, ...], labels: str) -> Array:
    if x is None:
        return inputs.normalized_rows(k)
    return inputs.unit_rows("removal_key", x, shape, labels)


# ---------------------------------------------------------------------------------------------
# RWKV-6

def step_rwkv6(state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One RWKV-6 token: q, k, alpha (d_k,) (or a float), bonus (d_k,) (or a float), v (d_v,).
    The output reads S_{t−1} plus the bonus term; `state` after the step holds S_t."""
    inputs.params_for("rwkv6", gates, ("alpha", "bonus"), ("alpha", "bonus"))
    S = inputs.state_matrix("rwkv6", state)
    d_k, d_v = S.shape
    q, k, v = inputs.token(q, k, v, d_k, d_v, state.t)
    alpha = inputs.decay("alpha", gates["alpha"], (d_k,), "(d_k,)")
    bonus = inputs.bounded("bonus", gates["bonus"], (d_k,), "(d_k,)")
    with np.errstate(over="ignore", invalid="ignore"):
        S_new, output = rwkv6_token(S, alpha, bonus, q, k, v)
        if not (check.state_norm_ok(S_new) and np.isfinite(output).all()):
            raise check.divergence(state.t, S_new)
    return Step(State(S=_frozen(S_new), t=state.t + 1), output, decay=alpha,
                _key=k, _write_values=v)


def run_rwkv6(q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """RWKV-6 over a stream: q, k (T, d_k), v (T, d_v); alpha (T, d_k) in (0, 1] (a float
    broadcasts), bonus (d_k,) (or a float); initial_state (d_k, d_v), keep_states.
    states[t] is S_t, after token t's write; outputs[t] read S_{t−1}."""
    inputs.params_for("rwkv6", params, RWKV6_OPTIONS, ("alpha", "bonus"))
    Q, K, V = inputs.stream(q, k, v)
    T, d_k = K.shape
    keep = inputs.keep_states(params)
    check.check_run_size(T, d_k, V.shape[1], keep)
    alpha = inputs.decay("alpha", params["alpha"], (T, d_k), "(T, d_k)")
    bonus = inputs.bounded("bonus", params["bonus"], (d_k,), "(d_k,)")
    S = inputs.initial_state(params, d_k, V.shape[1])
    states = np.empty((T, *S.shape)) if keep else None
    outputs = np.empty((T, V.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            S, outputs[t] = rwkv6_token(S, alpha[t], bonus, Q[t], K[t], V[t])
            if not (check.state_norm_ok(S) and np.isfinite(outputs[t]).all()):
                raise check.divergence(t, S)
            if states is not None:
                states[t] = S
    return Trace("rwkv6", outputs, states, S)
