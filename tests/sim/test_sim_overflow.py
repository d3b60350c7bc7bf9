"""Overflow: one rule for run and step. Inputs above 1e150 in size are refused at the same token
by both; a computation that overflows raises DivergenceError naming the token; nothing
non-finite is ever returned, and no floating-point warning escapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sim_helpers import make_inputs, make_params, step_through

import sim

RECURRENT = [rule for rule in sim.RULES if rule != "softmax"]


def _error(call) -> ValueError:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow must be reported, not warned about
        with pytest.raises(ValueError) as info:
            call()
    return info.value


def test_softmax_1e148_raises_naming_the_token_in_run_and_step() -> None:
    # before: every weight NaN (inf − inf), returned silently by run and by step
    q = np.ones((4, 8))
    k = np.ones((4, 8))
    q[2] = k[2] = 1e148  # token 2's score s·q·k = 1e12 · 8e296 overflows
    v = np.ones((4, 3))
    ran = _error(lambda: sim.run("softmax", q, k, v, scale=1e12))
    stepped = _error(lambda: step_through("softmax", q, k, v, {"scale": 1e12}))
    for error in (ran, stepped):
        assert isinstance(error, sim.DivergenceError) and error.token == 2
        assert str(error).startswith("softmax attention overflowed at token t=2: a score s·q·k "
                                     "is inf, beyond float64 (scale s = 1e+12)")
    assert str(ran) == str(stepped)
    trace = sim.run("softmax", q[:2], k[:2], v[:2], scale=1e12)  # tokens before are fine
    assert np.isfinite(trace.outputs).all() and np.isfinite(trace.weights).all()


@pytest.mark.parametrize("rule", sim.RULES)
@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_run_and_step_refuse_the_same_too_large_input(rule: str, name: str) -> None:
    # before: linear attention's run returned inf where step refused the same inputs
    q, k, v = make_inputs(5, 3, 2, seed=1)
    params = make_params(rule, 5, 3, seed=1, beta_high=1.0)
    arrays = {"q": q.copy(), "k": k.copy(), "v": v.copy()}
    arrays[name][3, 1] = 3e200
    ran = _error(lambda: sim.run(rule, **arrays, **params))
    stepped = _error(lambda: step_through(rule, arrays["q"], arrays["k"], arrays["v"], params))
    assert str(ran) == str(stepped) == (
        f"{name}: expected every entry at most 1e150 in size, got 3e+200 at token t=3, index 1; "
        "rescale q, k, v (larger inputs overflow float64)")


def test_linear_run_no_longer_returns_inf() -> None:
    q = np.array([[1.0, 0.0], [1e200, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.full((2, 2), 1e120)
    error = _error(lambda: sim.run("linear", q, k, v))  # before: outputs [inf, …] at t=1
    assert "at token t=1" in str(error)


@pytest.mark.parametrize("rule", RECURRENT)
def test_largest_accepted_inputs_never_return_non_finite(rule: str) -> None:
    """Entries of exactly 1e150: either finite results or DivergenceError, run and step alike."""
    q = np.full((3, 4), 1e150)
    k, v = q.copy(), q.copy()
    params = make_params(rule, 3, 4, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            trace = sim.run(rule, q, k, v, **params)
        except sim.DivergenceError as error:
            ran = error
        else:
            raise AssertionError(f"{rule}: ‖S‖ = 1e301 should diverge, got {trace.outputs}")
        with pytest.raises(sim.DivergenceError) as stepped:
            step_through(rule, q, k, v, params)
    assert ran.token == stepped.value.token == 0 and str(ran) == str(stepped.value)


def test_moderate_inputs_with_outputs_past_1e300_stay_finite() -> None:
    q, k, v = np.full((2, 3), 1e150), np.full((2, 3), 1e-10), np.full((2, 2), 1e150)
    for rule in RECURRENT:
        trace = sim.run(rule, q, k, v, **make_params(rule, 2, 3, seed=3))
        assert np.isfinite(trace.outputs).all() and np.isfinite(trace.states).all()


def test_initial_state_and_z_are_bounded() -> None:
    q, k, v = make_inputs(2, 2, 2, seed=0)
    with pytest.raises(ValueError, match=r"^initial_state: expected a norm at most 1e150, got inf"):
        sim.run("retnet", q, k, v, gamma=0.5, initial_state=np.full((2, 2), 1e300))
    with pytest.raises(ValueError, match=r"^initial_z: expected a norm at most 1e150"):
        sim.run("linear", q, k, v, initial_z=np.full(2, 1e300), normalize=True)
