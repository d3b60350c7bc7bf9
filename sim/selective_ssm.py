"""Mamba-1's selective SSM (Gu & Dao, 2023, arXiv:2312.00752) as the "mamba1" rule, and
`selective_scan` with Mamba's own names and shapes.

Glossary (code name → symbol), the rule in the package's convention:
    q, k      (d_k,)       query and key                 (Mamba: C_t and B_t, N = d_k)
    v         (d_v,)       value                          (Mamba: Δ_t ⊙ u_t, d_inner = d_v)
    S         (d_k, d_v)   state S_t                      (Mamba's h_t is (d_inner, N) = S_tᵀ)
    alpha     (d_k, d_v)   elementwise decay α_t ∈ (0, 1], one per cell of S
                           (Mamba: α_t[n, d] = exp(Δ_t[d] · A[d, n]))
The "mamba1" rule, update then read:
    S_t = α_t ⊙ S_{t−1} + k_t v_tᵀ,     o_t = S_tᵀ q_t
With α_t the same in every column it is GLA (diag(α_t) on the rows); Mamba's gate differs per
cell because Δ and A depend on the channel d, so it is one GLA per channel, not one GLA.

`selective_scan`, Mamba's names (channel d = 1..d_inner, state index n = 1..N):
    u      (T, d_inner)   input         delta (T, d_inner)  step size Δ > 0 (after softplus)
    A      (d_inner, N)   A < 0 (−exp(A_log))                B, C (T, N)  input and output maps
    D      (d_inner,)     skip (optional)
    h_t[d, n] = exp(Δ_t[d] A[d, n]) h_{t−1}[d, n] + Δ_t[d] B_t[n] u_t[d]
    y_t[d]    = Σ_n C_t[n] h_t[d, n] + D[d] u_t[d]
Ā = exp(ΔA) is zero-order hold, B̄ = ΔB is Euler, on purpose (state-spaces/mamba#114). It is
the "mamba1" rule with q = C, k = B, v = Δ ⊙ u, α_t[n, d] = exp(Δ_t[d] A[d, n]), plus the skip:
y_t = o_t + D ⊙ u_t and h_t = S_tᵀ. Reference: state-spaces/mamba
mamba_ssm/ops/selective_scan_interface.py, `selective_scan_ref` (real A, per-token B and C,
no z gate, no delta_bias or softplus: pass Δ itself). Outside the rule: conv1d, the silu(z) gate.
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

MAMBA1_OPTIONS = REGISTRY["mamba1"].info.options


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


def elementwise_write(S: Array, alpha: Array, k: Array, v: Array) -> Array:
    """S ← α ⊙ S + k vᵀ. S, α (d_k, d_v); k (d_k,); v (d_v,). Returns a new array."""
    S_new = alpha * S
    S_new += rank_one(k, v)
    return S_new


def step_mamba1(state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One "mamba1" token: q, k (d_k,), v (d_v,), alpha (d_k, d_v) in (0, 1] or a float."""
    inputs.params_for("mamba1", gates, ("alpha",), ("alpha",))
    S = inputs.state_matrix("mamba1", state)
    d_k, d_v = S.shape
    q, k, v = inputs.token(q, k, v, d_k, d_v, state.t)
    alpha = inputs.decay("alpha", gates["alpha"], (d_k, d_v), "(d_k, d_v)")
    with np.errstate(over="ignore", invalid="ignore"):
        S_new = elementwise_write(S, alpha, k, v)
        if not check.state_norm_ok(S_new):
            raise check.divergence(state.t, S_new)
        output = S_new.T @ q
    return Step(State(S=_frozen(S_new), t=state.t + 1), output, decay=alpha,
                _key=k, _write_values=v)


def run_mamba1(q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """"mamba1" over a stream: q, k (T, d_k), v (T, d_v), alpha (T, d_k, d_v) in (0, 1] (a
    float broadcasts); initial_state (d_k, d_v), keep_states. Returns a `Trace`."""
    inputs.params_for("mamba1", params, MAMBA1_OPTIONS, ("alpha",))
    Q, K, V = inputs.stream(q, k, v)
    (T, d_k), d_v = K.shape, V.shape[1]
    keep = inputs.keep_states(params)
    check.check_run_size(T, d_k, d_v, keep)
    # one decay per cell of S: the gate alone holds T·d_k·d_v numbers, kept or not
    check.check_budget("alpha", T * d_k * d_v, check.MAX_NUMBERS,
                       f"the per-cell decays (T, d_k, d_v) of T = {T:,} tokens")
    alpha = inputs.decay("alpha", params["alpha"], (T, d_k, d_v), "(T, d_k, d_v)")
    S = inputs.initial_state(params, d_k, d_v)
    states = np.empty((T, d_k, d_v)) if keep else None
    outputs = np.empty((T, d_v))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            S = elementwise_write(S, alpha[t], K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = S.T @ Q[t]
            if states is not None:
                states[t] = S
    return Trace("mamba1", outputs, states, S)


def selective_scan(u: Any, delta: Any, A: Any, B: Any, C: Any, D: Any = None
                   ) -> tuple[Array, Array]:
    """Mamba-1's selective scan: returns (y (T, d_inner), h (T, d_inner, N)), h[t] = h_t.

    u, delta (T, d_inner), delta > 0; A (d_inner, N), every entry < 0; B, C (T, N);
    D (d_inner,) or None. The "mamba1" recurrence with q = C, k = B, v = Δ ⊙ u and
    α_t = exp(Δ_t Aᵀ) (N, d_inner), then y = o + D ⊙ u; see the module docstring.
    """
    U = check.check_array("u", u, (None, None), "(T, d_inner)")
    T, d_inner = U.shape
    A_ = check.as_float_array("A", A)
    if A_.ndim != 2 or A_.shape[0] != d_inner or A_.shape[1] < 1:
        raise ValueError(f"A: expected shape (d_inner, N) = ({d_inner}, any), got shape {A_.shape}")
    N = A_.shape[1]
    # sim.run's budget with the state (N, d_inner); h and the decays exp(ΔA) are always kept,
    # (T, d_inner, N) numbers each
    check.check_run_size(T, N, d_inner, keep_states=False, names="u, delta, A")
    check.check_budget("u, A", T * d_inner * N, check.MAX_NUMBERS,
                       f"the states h (T, d_inner, N) of T = {T:,} tokens")
    dt = check.check_gate_array("delta", delta, (T, d_inner), "(T, d_inner)", low=0.0,
                                high=check.MAX_INPUT, low_open=True, accepted="(0, 1e150]")
    check.check_finite("A", A_)
    bad = ~(A_ < 0.0) | (A_ < -check.MAX_INPUT)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"A: expected every value in [-1e150, 0) (Mamba's A = −exp(A_log) < 0), "
                         f"got {float(A_[index])!r} at index {index}")
    B_ = check.check_array("B", B, (T, N), "(T, N)")
    C_ = check.check_array("C", C, (T, N), "(T, N)")
    D_ = None if D is None else check.check_array("D", D, (d_inner,), "(d_inner,)")
    for name, a in (("B", B_), ("C", C_)):  # named here: check_input_sizes says q, k, v
        if np.abs(a).max() > check.MAX_INPUT:
            t = int(np.argmax(np.abs(a).max(axis=1) > check.MAX_INPUT))
            raise ValueError(f"{name}: expected every entry at most 1e150 in size, got one at "
                             f"token t={t}; rescale {name}")
    with np.errstate(over="ignore"):
        V = dt * U  # (T, d_inner) the value each channel writes, Δ ⊙ u
    too_large = ~(np.abs(V).max(axis=1) <= check.MAX_INPUT)
    if too_large.any():
        raise ValueError(f"u, delta: the value Δ ⊙ u a channel writes is above 1e150 in size at "
                         f"token t={int(np.argmax(too_large))}; rescale u or delta")
    check.check_input_sizes(C_, B_, V)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        alpha = np.exp(dt[:, None, :] * A_.T[None, :, :])  # (T, N, d_inner); may round to 0
        S = np.zeros((N, d_inner))
        h = np.empty((T, d_inner, N))
        y = np.empty((T, d_inner))
        for t in range(T):
            S = elementwise_write(S, alpha[t], B_[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            y[t] = S.T @ C_[t]
            h[t] = S.T
    if D_ is not None:
        y = y + D_ * U
    return y, h
