"""DeltaProduct (Siems et al., arXiv:2502.10297; gated, as in flash-linear-attention): one decay,
then n_h delta steps per token, then one read.

Glossary (code name → symbol):
    q      (d_k,)        query q_t, per token
    k      (n_h, d_k)    keys k_{t,1..n_h} of token t (keys are expected L2-normalised)
    v      (n_h, d_v)    values v_{t,j}
    alpha  float         decay a_t = e^{g_t} ∈ (0, 1], one per token (FLA takes the log g)
    beta   (n_h,)        write strengths β_{t,j} ∈ [0, 2]
    S      (d_k, d_v)    state S_t
Per token:
    S ← a_t S_{t−1};   for j = 1..n_h:  S ← S + β_{t,j} k_{t,j} (v_{t,j} − Sᵀ k_{t,j})ᵀ;   S_t = S
    o_t = S_tᵀ q_t
The transition (I − β_{n_h} k_{n_h} k_{n_h}ᵀ) ··· (I − β_1 k_1 k_1ᵀ) a_t is the identity (times
a_t) plus a matrix of rank n_h. n_h = 1 is Gated DeltaNet (and with a = 1, DeltaNet).
Equivalently: Gated DeltaNet on the interleaved sequence of T·n_h sub-steps (index t·n_h + j),
decaying only on sub-step 0 and read only after the last, which is how `run_chunkwise` here
gets its chunkwise form from `sim.chunkwise`.
Shapes of a run: q (T, d_k); k (T, n_h, d_k); v (T, n_h, d_v); alpha (T,); beta (T, n_h).
Reference: fla-org/flash-linear-attention fla/ops/gated_delta_product/naive.py
(`naive_recurrent_gated_delta_product`), chunk_ref.py (the interleaved Gated DeltaNet).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import rule_inputs as inputs
from . import validation as check
from .chunkwise import ChunkTrace
from .chunkwise import run_chunkwise as _run_chunkwise
from .delta_rule import delta_write
from .registry import REGISTRY
from .state import State, Step, Trace

Array = np.ndarray

DELTAPRODUCT_OPTIONS = REGISTRY["deltaproduct"].info.options


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


def deltaproduct_write(S: Array, alpha: float, k: Array, v: Array, beta: list[float]
                       ) -> tuple[Array, Array]:
    """S ← a S, then n_h delta steps. S (d_k, d_v); k (n_h, d_k); v (n_h, d_v); β n_h floats.

    Returns (new S, read_backs (n_h, d_v)): Sᵀk_{t,j} read just before sub-step j."""
    read_backs = np.empty(v.shape)
    S, read_backs[0], _ = delta_write(S, alpha, k[0], v[0], beta[0])  # the one decay
    for j in range(1, k.shape[0]):
        S, read_backs[j], _ = delta_write(S, None, k[j], v[j], beta[j])
    return S, read_backs


def _token_keys(k: Any, v: Any, d_k: int, d_v: int) -> tuple[Array, Array]:
    K = check.as_float_array("k", k)
    if K.ndim != 2 or K.shape[0] < 1 or K.shape[1] != d_k:
        raise ValueError(f"k: expected shape (n_h, d_k) = (any, {d_k}), got shape {K.shape}")
    n_h = K.shape[0]
    V = check.as_float_array("v", v)
    if V.shape != (n_h, d_v):
        raise ValueError(f"v: expected shape (n_h, d_v) = ({n_h}, {d_v}), got shape {V.shape}")
    return check.check_finite("k", K), check.check_finite("v", V)


def step_deltaproduct(state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One DeltaProduct token: q (d_k,), k (n_h, d_k), v (n_h, d_v), alpha a float in (0, 1],
    beta (n_h,) in [0, 2] (or a float). Step.read_back is (n_h, d_v), one read per sub-step."""
    inputs.params_for("deltaproduct", gates, ("alpha", "beta"), ("alpha", "beta"))
    S = inputs.state_matrix("deltaproduct", state)
    d_k, d_v = S.shape
    K, V = _token_keys(k, v, d_k, d_v)
    n_h = K.shape[0]
    q = check.step_vector("q", q, d_k)
    with np.errstate(over="ignore", invalid="ignore"):  # sizes as in sim.step; k, v flattened
        check.step_finite(q, K.reshape(-1), V.reshape(-1), state.t)
    alpha = check.step_scalar_gate("alpha", gates["alpha"], True, 1.0)
    beta = check.check_beta("beta", gates["beta"], (n_h,), "(n_h,)").tolist()
    with np.errstate(over="ignore", invalid="ignore"):
        S_new, read_backs = deltaproduct_write(S, alpha, K, V, beta)
        if not check.state_norm_ok(S_new):
            raise check.divergence(state.t, S_new)
        output = S_new.T @ q
    return Step(State(S=_frozen(S_new), t=state.t + 1), output, decay=alpha,
                read_back=read_backs)


def _stream(q: Any, k: Any, v: Any) -> tuple[Array, Array, Array]:
    Q = check.check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check.check_array("k", k, (T, None, d_k), "(T, n_h, d_k)")
    V = check.check_array("v", v, (T, K.shape[1], None), "(T, n_h, d_v)")
    # the size rule of sim.run, applied to every sub-step's key and value
    check.check_input_sizes(Q, K.reshape(T, -1), V.reshape(T, -1))
    return Q, K, V


def _gates(params: dict[str, Any], T: int, n_h: int) -> tuple[Array, Array]:
    alpha = check.check_unit_interval_gate("alpha", params["alpha"], (T,), "(T,)")
    beta = check.check_beta("beta", params["beta"], (T, n_h), "(T, n_h)")
    return alpha, beta


def run_deltaproduct(q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """DeltaProduct over a stream: q (T, d_k), k (T, n_h, d_k), v (T, n_h, d_v), alpha (T,) in
    (0, 1], beta (T, n_h) in [0, 2] (floats broadcast); initial_state (d_k, d_v), keep_states.
    Returns a `Trace`; read_backs is (T, n_h, d_v)."""
    inputs.params_for("deltaproduct", params, DELTAPRODUCT_OPTIONS, ("alpha", "beta"))
    Q, K, V = _stream(q, k, v)
    T, n_h, d_k = K.shape
    d_v = V.shape[2]
    keep = inputs.keep_states(params)
    # n_h delta steps per token, each a (d_k, d_v) read and write
    check.check_run_size(T, d_k, d_v, keep, work=T * n_h * d_k * d_v)
    alpha, beta = _gates(params, T, n_h)
    alphas, betas = alpha.tolist(), beta.tolist()
    S = inputs.initial_state(params, d_k, d_v)
    states = np.empty((T, d_k, d_v)) if keep else None
    outputs, read_backs = np.empty((T, d_v)), np.empty((T, n_h, d_v))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            S, read_backs[t] = deltaproduct_write(S, alphas[t], K[t], V[t], betas[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = S.T @ Q[t]
            if states is not None:
                states[t] = S
    return Trace("deltaproduct", outputs, states, S, read_backs=read_backs)


def interleave(q: Any, k: Any, v: Any, alpha: Any, beta: Any
               ) -> tuple[Array, Array, Array, Array, Array]:
    """The Gated DeltaNet sequence of T·n_h sub-steps equal to DeltaProduct (index t·n_h + j):
    keys, values and β flattened; α_t on sub-step 0 and 1 on the others; q_t on the last
    sub-step and 0 on the others (their reads are not DeltaProduct outputs).
    Returns (q, k, v, alpha, beta) of shapes (T·n_h, d_k), (T·n_h, d_k), (T·n_h, d_v),
    (T·n_h,), (T·n_h,)."""
    Q, K, V = _stream(q, k, v)
    T, n_h, d_k = K.shape
    a, b = _gates({"alpha": alpha, "beta": beta}, T, n_h)
    Q_sub = np.zeros((T, n_h, d_k))
    Q_sub[:, -1] = Q
    a_sub = np.ones((T, n_h))
    a_sub[:, 0] = a
    return (Q_sub.reshape(T * n_h, d_k), K.reshape(T * n_h, d_k),
            V.reshape(T * n_h, V.shape[2]), a_sub.reshape(-1), b.reshape(-1))


def run_chunkwise(q: Any, k: Any, v: Any, *, alpha: Any, beta: Any, chunk_size: int,
                  initial_state: Any = None) -> tuple[Array, ChunkTrace]:
    """DeltaProduct chunk by chunk: `sim.chunkwise.run_chunkwise("gated_deltanet", ...)` on the
    interleaved sequence (`interleave`), in chunks of `chunk_size` tokens (chunk_size·n_h
    sub-steps, so no token is split between chunks).

    Returns (outputs (T, d_v), the interleaved `ChunkTrace`); outputs[t] is the trace's output
    at sub-step t·n_h + n_h − 1, and boundary_states[c] the state before token
    starts[c] / n_h. Same inputs as `run_deltaproduct`."""
    C = check.check_positive_int("chunk_size", chunk_size)
    Q, K, V, a, b = interleave(q, k, v, alpha, beta)
    n_h = K.shape[0] // np.shape(q)[0]
    trace = _run_chunkwise("gated_deltanet", Q, K, V, alpha=a, beta=b, chunk_size=C * n_h,
                           initial_state=initial_state)
    return trace.outputs[n_h - 1::n_h], trace
