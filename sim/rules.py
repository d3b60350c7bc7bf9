"""Every update rule behind one interface: `init_state`, `step` (one token) and `run` (T tokens).

Glossary (code name → symbol), one head, one convention for every rule:
    q, k      (d_k,) per token, (T, d_k) per run   query q_t and key k_t, used as given
    v         (d_v,) per token, (T, d_v) per run   value v_t
    S         (d_k, d_v)                           state S_t; each token adds an outer product k vᵀ
    z         (d_k,)                               linear attention's running key total
    o         (d_v,)                               output o_t = S_tᵀ q_t (after the update)
    gamma     γ, RetNet's fixed decay              alpha  α (or a), data-dependent decay
    beta      β, the delta rules' write strength   scale  s, softmax's score scale (1/√d_k)

Each token first updates the state, then reads it, so o_t includes token t. There is no hidden
scale in the linear rules. `run` and `step` call the same kernels in the same order, so a run
and a sequence of steps agree bit for bit. The masked-matrix forms in `sim.parallel` are the
independent oracle the tests hold both against.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import validation as check
from .decayed_attention import decayed_write
from .delta_rule import delta_write
from .features import FEATURE_MAPS, apply_feature_map
from .linear_attention import linear_read, linear_write
from .registry import RULE_INFO, RULES, rules_of
from .rule_inputs import run_decays
from .softmax_attention import softmax_read
from .state import State, Step, Trace
from .validation import DIVERGENCE_NORM

Array = np.ndarray

_DELTA_RULES = rules_of("delta", RULES)


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


def init_state(rule: str, d_k: int, d_v: int) -> State:
    """The empty memory of `rule`: S = 0 (d_k, d_v), plus z = 0 (d_k,) for linear attention;
    softmax attention starts with an empty KV cache, keys (0, d_k) and values (0, d_v)."""
    check.check_choice("rule", rule, RULES)
    d_k, d_v = check.check_state_dims(d_k, d_v)
    if rule == "softmax":
        return State(keys=_frozen(np.zeros((0, d_k))), values=_frozen(np.zeros((0, d_v))))
    z = _frozen(np.zeros(d_k)) if rule == "linear" else None
    return State(S=_frozen(np.zeros((d_k, d_v))), z=z)


# ---------------------------------------------------------------------------------------------
# step: one token. Checks are the cheap per-token kind (see sim.validation).

def _recurrent_inputs(rule: str, state: State, q: Any, k: Any, v: Any
                      ) -> tuple[Array, Array, Array, Array]:
    S = state.S if isinstance(state, State) else None
    if S is None:
        raise ValueError(
            f"state: expected the State of a recurrent rule (from sim.init_state({rule!r}, d_k, "
            f"d_v)), got {check.describe(state)}"
        )
    d_k, d_v = S.shape
    q = check.step_vector("q", q, d_k)
    k = check.step_vector("k", k, d_k)
    v = check.step_vector("v", v, d_v)
    check.step_finite(q, k, v, state.t)
    return S, q, k, v


def _step_softmax(state: State, q: Any, k: Any, v: Any, scale: float | None = None) -> Step:
    if not isinstance(state, State) or state.keys is None or state.values is None:
        raise ValueError(
            "state: expected a softmax State with a KV cache (from sim.init_state('softmax', "
            f"d_k, d_v)), got {check.describe(state)}"
        )
    d_k, d_v = state.keys.shape[1], state.values.shape[1]
    q = check.step_vector("q", q, d_k)
    k = check.step_vector("k", k, d_k)
    v = check.step_vector("v", v, d_v)
    check.step_finite(q, k, v, state.t)
    s = _softmax_scale(scale, d_k)
    keys = _frozen(np.concatenate((state.keys, k[None, :])))  # (t, d_k)
    values = _frozen(np.concatenate((state.values, v[None, :])))  # (t, d_v)
    output, weights = softmax_read(keys, values, q, s, state.t)
    return Step(State(keys=keys, values=values, t=state.t + 1), output, weights=weights)


def _step_linear(state: State, q: Any, k: Any, v: Any, feature_map: str = "identity",
                 normalize: bool = False) -> Step:
    S, q, k, v = _recurrent_inputs("linear", state, q, k, v)
    if state.z is None:
        raise ValueError("state: linear attention needs z; start from sim.init_state('linear', d_k, d_v)")
    if feature_map != "identity":
        check.check_choice("feature_map", feature_map, FEATURE_MAPS)
    phi_q, phi_k = apply_feature_map(feature_map, q), apply_feature_map(feature_map, k)
    S_new, z_new = linear_write(S, state.z, phi_k, v)
    if not check.state_norm_ok(S_new):
        raise check.divergence(state.t, S_new)
    output = linear_read(S_new, z_new, phi_q, bool(normalize), state.t)
    new = State(S=_frozen(S_new), z=_frozen(z_new), t=state.t + 1)
    return Step(new, output, _key=phi_k, _write_values=v)


def _step_decayed(rule: str, state: State, q: Any, k: Any, v: Any, decay: float | Array) -> Step:
    S, q, k, v = _recurrent_inputs(rule, state, q, k, v)
    S_new = decayed_write(S, decay, k, v)
    if not check.state_norm_ok(S_new):
        raise check.divergence(state.t, S_new)
    return Step(State(S=_frozen(S_new), t=state.t + 1), S_new.T @ q, decay=decay,
                _key=k, _write_values=v)


def _step_delta(rule: str, state: State, q: Any, k: Any, v: Any, decay: float | Array | None,
                beta: float) -> Step:
    S, q, k, v = _recurrent_inputs(rule, state, q, k, v)
    S_new, read_back, error = delta_write(S, decay, k, v, beta)
    if not check.state_norm_ok(S_new):
        raise check.divergence(state.t, S_new, k, beta)
    return Step(State(S=_frozen(S_new), t=state.t + 1), S_new.T @ q, decay=decay,
                read_back=read_back, error=error,
                _key=k, _write_values=beta * v, _erase_values=beta * read_back)


def _step_gate(rule: str, gates: dict[str, Any], name: str) -> Any:
    if name not in gates:
        raise ValueError(f"{name}: rule {rule!r} needs {name} for this token")
    return gates[name]


def _d_k(state: State) -> int:
    return state.S.shape[0] if isinstance(state, State) and state.S is not None else 0


def step(rule: str, state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """Process one token: update `state` with (k, v), then read with q. Returns a `Step`.

    q, k (d_k,), v (d_v,). Gates for this one token:
        softmax: scale (default 1/√d_k)          linear: feature_map, normalize
        retnet: gamma ∈ (0, 1]                   mamba2, gated_deltanet: alpha ∈ (0, 1]
        gla, kda: alpha, a float or (d_k,) array in (0, 1]
        deltanet, gated_deltanet, kda: beta ∈ [0, 2]
    `state` is never modified; the returned state holds new, read-only arrays.
    Inputs and results are checked as in `run`: every entry of q, k, v at most 1e150 in size
    (ValueError naming the token), and a computation that overflows raises DivergenceError
    naming the token; nothing non-finite is returned.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # overflows are checked, not warned
        return _step(rule, state, q, k, v, gates)


def _step(rule: str, state: State, q: Any, k: Any, v: Any, gates: dict[str, Any]) -> Step:
    if type(rule) is not str:  # an array's == would compare elementwise
        check.check_choice("rule", rule, RULES)
    if rule == "softmax":
        check.check_params(rule, gates, ("scale",))
        return _step_softmax(state, q, k, v, **gates)
    if rule == "linear":
        check.check_params(rule, gates, ("feature_map", "normalize"))
        return _step_linear(state, q, k, v, **gates)
    if not isinstance(rule, str) or rule not in RULE_INFO:
        check.check_choice("rule", rule, RULES)
    info = RULE_INFO[rule]
    check.check_params(rule, gates, info.gates, info.gates)
    decay: float | Array | None = None
    if rule == "retnet":
        decay = check.step_scalar_gate("gamma", gates["gamma"], True, 1.0)
    elif info.alpha_shape == "scalar":
        decay = check.step_scalar_gate("alpha", _step_gate(rule, gates, "alpha"), True, 1.0)
    elif info.alpha_shape == "channel":
        decay = check.step_channel_gate("alpha", gates["alpha"], _d_k(state))
    if rule not in _DELTA_RULES:
        return _step_decayed(rule, state, q, k, v, decay)
    beta = check.step_scalar_gate("beta", gates["beta"], False, 2.0)
    return _step_delta(rule, state, q, k, v, decay, beta)


# ---------------------------------------------------------------------------------------------
# run: T tokens. Inputs are checked once, vectorised; the loop calls the same kernels as step.

def _softmax_scale(scale: Any, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    return check.check_float("scale", scale, 0.0, 1e12, low_open=False,
                             accepted="[0, 1e12] (default 1/√d_k)")


def _run_softmax(Q: Array, K: Array, V: Array, scale: Any, keep_states: bool) -> Trace:
    T = Q.shape[0]
    s = _softmax_scale(scale, Q.shape[1])
    outputs = np.empty((T, V.shape[1]))
    weights = np.zeros((T, T)) if keep_states else None
    for t in range(T):
        outputs[t], w = softmax_read(K[: t + 1], V[: t + 1], Q[t], s, t)
        if weights is not None:
            weights[t, : t + 1] = w
    return Trace("softmax", outputs, weights=weights)


def run(rule: str, q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """Run `rule` over a stream: q, k (T, d_k), v (T, d_v). Returns a `Trace`.

    Parameters by rule (gates given per token; a plain float broadcasts to every token):
        softmax:        scale (default 1/√d_k)
        linear:         feature_map ("identity" | "elu+1"), normalize (False), initial_z (d_k,)
        retnet:         gamma, a float in (0, 1]
        mamba2:         alpha (T,) in (0, 1]
        gla:            alpha (T, d_k) in (0, 1]
        deltanet:       beta (T,) in [0, 2]
        gated_deltanet: alpha (T,), beta (T,)
        kda:            alpha (T, d_k), beta (T,)
        every rule but softmax: initial_state (d_k, d_v), default zeros.
        every rule: keep_states (True); False keeps only the final state (and for softmax drops
        the (T, T) weights), for long runs.
    Raises ValueError on bad input (every entry of q, k, v at most 1e150 in size, as in `step`;
    initial_state and initial_z of norm at most 1e150) and DivergenceError (token index in
    `.token`) when a computation overflows: the state becomes non-finite or its norm ‖S‖_F
    exceeds 1e150, a softmax score or a normalised read-out leaves float64. The token named is
    the one a sequence of `step` calls stops at; nothing non-finite is returned.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # overflows are checked, not warned
        return _run(rule, q, k, v, params)


def _run(rule: str, q: Any, k: Any, v: Any, params: dict[str, Any]) -> Trace:
    check.check_choice("rule", rule, RULES)
    info = RULE_INFO[rule]
    check.check_params(rule, params, info.options, info.gates)
    Q = check.check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check.check_array("k", k, (T, d_k), "(T, d_k)")
    V = check.check_array("v", v, (T, None), "(T, d_v)")
    d_v = V.shape[1]
    check.check_input_sizes(Q, K, V)
    keep_states = params.get("keep_states", True)
    if not isinstance(keep_states, (bool, np.bool_)):
        raise ValueError(f"keep_states: expected True or False, got {check.describe(keep_states)}")
    check.check_run_size(T, d_k, d_v, bool(keep_states), softmax=rule == "softmax")
    if rule == "softmax":
        return _run_softmax(Q, K, V, params.get("scale"), bool(keep_states))

    S = np.zeros((d_k, d_v))
    if params.get("initial_state") is not None:
        S = check.check_start("initial_state", check.check_array(
            "initial_state", params["initial_state"], (d_k, d_v), "(d_k, d_v)"), DIVERGENCE_NORM)
    states = np.empty((T, d_k, d_v)) if keep_states else None
    outputs = np.empty((T, d_v))

    if rule == "linear":
        name = check.check_choice("feature_map", params.get("feature_map", "identity"),
                                  FEATURE_MAPS)
        normalize = params.get("normalize", False)
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"normalize: expected True or False, got {check.describe(normalize)}")
        z = np.zeros(d_k)
        if params.get("initial_z") is not None:
            z = check.check_start("initial_z", check.check_array(
                "initial_z", params["initial_z"], (d_k,), "(d_k,)"), DIVERGENCE_NORM)
        zs = np.empty((T, d_k))
        for t in range(T):
            phi_q, phi_k = apply_feature_map(name, Q[t]), apply_feature_map(name, K[t])
            S, z = linear_write(S, z, phi_k, V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = linear_read(S, z, phi_q, bool(normalize), t)
            zs[t] = z
            if states is not None:
                states[t] = S
        return Trace(rule, outputs, states, S, z=zs)

    decays = run_decays(rule, info, params, T, d_k)
    if rule not in _DELTA_RULES:
        for t in range(T):
            S = decayed_write(S, decays[t], K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            outputs[t] = S.T @ Q[t]
            if states is not None:
                states[t] = S
        return Trace(rule, outputs, states, S)

    betas = check.check_beta("beta", params["beta"], (T,), "(T,)").tolist()
    read_backs = np.empty((T, d_v))
    errors = np.empty((T, d_v))
    for t in range(T):
        S, read_backs[t], errors[t] = delta_write(S, decays[t], K[t], V[t], betas[t])
        if not check.state_norm_ok(S):
            raise check.divergence(t, S, K[t], betas[t])
        outputs[t] = S.T @ Q[t]
        if states is not None:
            states[t] = S
    return Trace(rule, outputs, states, S, read_backs=read_backs, errors=errors)
