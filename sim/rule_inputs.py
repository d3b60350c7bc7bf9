"""Input checks for the rules of `sim.more_rules` (RWKV-7, RWKV-6, Mamba-1, DeltaProduct,
log-linear attention), built from the shared checks in `sim.validation`, and `run_decays`, the
per-token decays of the eight rules of `sim.RULES` that `sim.rules.run` and `sim.chunkwise` share.

Same contract as there: a `ValueError` whose message names the argument, says what was given
and what is accepted. These rules take gates of more shapes than the first eight (a gate per
key channel and value column, several keys per token), so `run` and `step` both check with the
array checks here; a step of these rules is not tuned for animation speed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import validation as check
from .registry import RuleInfo

Array = np.ndarray

# ‖κ̂‖ may differ from 1 by this much: l2_normalize gives 1 ± a few ulp, a hand-typed (0.6, 0.8)
# is exact; anything further off is a key that was not normalised.
UNIT_TOLERANCE = 1e-9


def _checked_target(name: Any, shape: Any, labels: Any) -> tuple[int, ...]:
    """The caller's side of a check: `name` the argument's name (text, for the message), `shape`
    a tuple of sizes ≥ 1 holding at most MAX_NUMBERS numbers, `labels` its symbols (text).
    Checked first, so a message never prints a garbled name or shape."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected the argument's name (text), got {check.describe(name)}")
    if not isinstance(labels, str):
        raise ValueError(f"labels: expected the shape in symbols (text), got "
                         f"{check.describe(labels)}")
    if not isinstance(shape, tuple):
        raise ValueError(f"shape: expected a tuple of sizes, got {check.describe(shape)}")
    sizes = tuple(check.check_positive_int("shape", n, check.MAX_NUMBERS) for n in shape)
    check.check_budget("shape", int(np.prod(sizes, dtype=object)), check.MAX_NUMBERS,
                       f"the numbers of shape {sizes}")
    return sizes


def _options(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise ValueError(f"params: expected a dict of keyword arguments, got "
                         f"{check.describe(params)}")
    return params


def stream(q: Any, k: Any, v: Any) -> tuple[Array, Array, Array]:
    """q, k (T, d_k), v (T, d_v): finite, every entry at most 1e150 in size (as `sim.run`)."""
    Q = check.check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check.check_array("k", k, (T, d_k), "(T, d_k)")
    V = check.check_array("v", v, (T, None), "(T, d_v)")
    check.check_input_sizes(Q, K, V)
    return Q, K, V


def token(q: Any, k: Any, v: Any, d_k: int, d_v: int, t: int) -> tuple[Array, Array, Array]:
    """One token's q, k (d_k,), v (d_v,), with `stream`'s rules."""
    d_k = check.check_positive_int("d_k", d_k, check.MAX_NUMBERS)
    d_v = check.check_positive_int("d_v", d_v, check.MAX_NUMBERS)
    t = check.check_nonnegative_int("t", t)
    q = check.step_vector("q", q, d_k)
    k = check.step_vector("k", k, d_k)
    v = check.step_vector("v", v, d_v)
    with np.errstate(over="ignore", invalid="ignore"):
        check.step_finite(q, k, v, t)
    return q, k, v


def keep_states(params: dict[str, Any]) -> bool:
    value = _options(params).get("keep_states", True)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"keep_states: expected True or False, got {check.describe(value)}")
    return bool(value)


def initial_state(params: dict[str, Any], d_k: int, d_v: int) -> Array:
    """S₀ (d_k, d_v): zeros, or `initial_state` of norm at most 1e150."""
    d_k, d_v = check.check_state_dims(d_k, d_v)
    S0 = _options(params).get("initial_state")
    if S0 is None:
        return np.zeros((d_k, d_v))
    return check.check_start("initial_state", check.check_array(
        "initial_state", S0, (d_k, d_v), "(d_k, d_v)"), check.DIVERGENCE_NORM).copy()


def state_matrix(rule: str, state: Any) -> Array:
    """The S (d_k, d_v) of a recurrent `State`, or a ValueError naming `state`."""
    if not isinstance(rule, str):
        raise ValueError(f"rule: expected a rule name, got {check.describe(rule)}")
    S = getattr(state, "S", None)
    if not isinstance(S, np.ndarray) or S.ndim != 2:
        raise ValueError(
            f"state: expected the State of a recurrent rule (from sim.init_state({rule!r}, d_k, "
            f"d_v)), got {check.describe(state)}"
        )
    return S


def decay(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """A decay: every value in (0, 1]; a float broadcasts to `shape`."""
    shape = _checked_target(name, shape, labels)
    return check.check_unit_interval_gate(name, x, shape, labels)


def rate(name: str, x: Any, shape: tuple[int, ...], labels: str, high: float) -> Array:
    """A write or erase strength: every value in [0, high]; a float broadcasts to `shape`."""
    shape = _checked_target(name, shape, labels)
    high = check.check_float("high", high, 0.0, check.MAX_INPUT, low_open=True,
                             accepted="(0, 1e150]")
    return check.check_gate_array(name, x, shape, labels, low=0.0, high=high, low_open=False,
                                  accepted=f"[0, {high:g}]")


def weights(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """Non-negative weights (log-linear's λ): every value in [0, 1e150]."""
    shape = _checked_target(name, shape, labels)
    return check.check_gate_array(name, x, shape, labels, low=0.0, high=check.MAX_INPUT,
                                  low_open=False, accepted="[0, 1e150]")


def bounded(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """Any real numbers of size at most 1e150 (a float broadcasts), e.g. RWKV-6's bonus u."""
    shape = _checked_target(name, shape, labels)
    return check.check_gate_array(name, x, shape, labels, low=-check.MAX_INPUT,
                                  high=check.MAX_INPUT, low_open=False,
                                  accepted="[-1e150, 1e150]")


def unit_rows(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """Vectors along the last axis of length 1 (within 1e-9) or 0 (a zero key erases nothing)."""
    shape = _checked_target(name, shape, labels)
    a = check.as_float_array(name, x)
    if a.shape != shape:
        raise ValueError(f"{name}: expected shape {labels} = {shape}, got shape {a.shape}")
    check.check_finite(name, a)
    with np.errstate(over="ignore"):  # a length past float64 is reported as such below
        norms = np.sqrt(np.sum(a * a, axis=-1))
    bad = (np.abs(norms - 1.0) > UNIT_TOLERANCE) & (norms != 0.0)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        length = float(norms[index])
        shown = f"{length:.6g}" if np.isfinite(length) else "above 1e150"
        raise ValueError(f"{name}: expected unit vectors (length 1, or 0), got length {shown} "
                         f"at index {where}; use sim.l2_normalize")
    return a


def normalized_rows(K: Array) -> Array:
    """k / ‖k‖ along the last axis, zero rows staying zero (the default removal key κ̂)."""
    K = check.check_finite("K", check.as_float_array("K", K))
    if K.ndim == 0:
        raise ValueError(f"K: expected keys along the last axis, got shape {K.shape}")
    if np.abs(K).max(initial=0.0) > check.MAX_INPUT:  # as q, k, v everywhere: K·K stays finite
        raise ValueError("K: expected every entry at most 1e150 in size (larger keys overflow "
                         "float64)")
    norms = np.sqrt(np.sum(K * K, axis=-1, keepdims=True))
    return np.where(norms == 0.0, 0.0, K / np.where(norms == 0.0, 1.0, norms))


def params_for(rule: str, params: dict[str, Any], accepted: tuple[str, ...],
               required: tuple[str, ...]) -> None:
    """Unknown keywords are refused by name; missing required gates too."""
    if not isinstance(rule, str):
        raise ValueError(f"rule: expected a rule name, got {check.describe(rule)}")
    _options(params)
    for what, names in (("accepted", accepted), ("required", required)):
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{what}: expected a tuple of parameter names, got "
                             f"{check.describe(names)}")
    check.check_params(rule, params, accepted, required)


def run_decays(rule: str, info: RuleInfo, params: dict[str, Any], T: int, d_k: int
               ) -> list[Any]:
    """One decay per token for a rule of `sim.RULES`, in the form `sim.step` receives it: float
    (RetNet's γ, a scalar α), (d_k,) row (a channel α) or None (no decay)."""
    if rule == "retnet":
        gamma = check.check_float("gamma", params["gamma"], 0.0, 1.0, low_open=True,
                                  accepted="(0, 1]")
        return [gamma] * T
    if info.alpha_shape == "scalar":
        return check.check_unit_interval_gate("alpha", params["alpha"], (T,), "(T,)").tolist()
    if info.alpha_shape == "channel":
        alpha = check.check_unit_interval_gate("alpha", params["alpha"], (T, d_k), "(T, d_k)")
        return list(alpha)  # rows (d_k,)
    return [None] * T
