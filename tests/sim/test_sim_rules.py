"""The rules: recurrent == parallel, run == step, reductions, the worked example, divergence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lanes import examples
from sim_helpers import make_inputs, make_params, step_through

import sim
from sim.parallel import run_parallel
from sim.scenarios import worked_example

RECURRENT = [r for r in sim.RULES if r != "softmax"]


def test_rule_names_and_info() -> None:
    assert sim.RULES == ("softmax", "linear", "retnet", "mamba2", "gla", "deltanet",
                         "gated_deltanet", "kda")
    assert set(sim.RULE_INFO) == set(sim.RULES)
    assert sim.RULE_INFO["kda"].label == "Kimi Delta Attention"
    assert sim.RULE_INFO["gated_deltanet"].gates == ("alpha", "beta")
    assert sim.RULE_INFO["gla"].alpha_shape == "channel"
    assert sim.RULE_INFO["mamba2"].alpha_shape == "scalar"
    assert sim.RULE_INFO["retnet"].gates == ("gamma",)
    assert all("S_t" in sim.RULE_INFO[r].equation for r in RECURRENT)


@settings(max_examples=examples(40), deadline=None)
@given(rule=st.sampled_from(sim.RULES), T=st.integers(1, 12), d_k=st.integers(1, 6),
       d_v=st.integers(1, 5), seed=st.integers(0, 10_000), low=st.sampled_from([0.05, 0.5, 1.0]),
       with_initial=st.booleans())
def test_recurrent_equals_parallel(rule: str, T: int, d_k: int, d_v: int, seed: int, low: float,
                                   with_initial: bool) -> None:
    q, k, v = make_inputs(T, d_k, d_v, seed)
    params = make_params(rule, T, d_k, seed, low=low)
    if with_initial and rule != "softmax":
        params["initial_state"] = np.random.default_rng(seed).standard_normal((d_k, d_v))
    recurrent = sim.run(rule, q, k, v, **params).outputs
    parallel = run_parallel(rule, q, k, v, **params)
    assert recurrent.shape == (T, d_v)
    np.testing.assert_allclose(recurrent, parallel, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("feature_map", ["identity", "elu+1"])
def test_linear_normalised_recurrent_equals_parallel(feature_map: str) -> None:
    rng = np.random.default_rng(3)
    q, k, v = rng.uniform(0.1, 1, (9, 4)), rng.uniform(0.1, 1, (9, 4)), rng.standard_normal((9, 3))
    params = {"feature_map": feature_map, "normalize": True}
    np.testing.assert_allclose(sim.run("linear", q, k, v, **params).outputs,
                               run_parallel("linear", q, k, v, **params), rtol=1e-12)


def test_parallel_is_not_trivially_equal_across_rules() -> None:
    # Guards the oracle itself: different gates must give different outputs.
    q, k, v = make_inputs(6, 3, 2, 0)
    assert not np.allclose(run_parallel("retnet", q, k, v, gamma=0.5),
                           run_parallel("linear", q, k, v))
    assert not np.allclose(run_parallel("deltanet", q, k, v, beta=1.0),
                           run_parallel("linear", q, k, v))


@pytest.mark.parametrize("rule", sim.RULES)
def test_run_and_step_agree_exactly(rule: str) -> None:
    q, k, v = make_inputs(10, 5, 3, 7)
    params = make_params(rule, 10, 5, 7)
    if rule == "linear":
        params = {"feature_map": "elu+1", "normalize": True}
    trace = sim.run(rule, q, k, v, **params)
    steps = step_through(rule, q, k, v, params)
    assert np.array_equal(np.array([s.output for s in steps]), trace.outputs)
    if rule == "softmax":
        assert trace.states is None and trace.final_state is None
        for t, s in enumerate(steps):
            assert np.array_equal(s.weights, trace.weights[t, : t + 1])
            assert s.weights.sum() == pytest.approx(1.0)
        assert np.array_equal(steps[-1].state.keys, k)
        assert np.all(np.triu(trace.weights, 1) == 0)
        return
    assert np.array_equal(np.array([s.state.S for s in steps]), trace.states)
    assert np.array_equal(steps[-1].state.S, trace.final_state)
    assert steps[-1].state.t == 10
    if rule == "linear":
        assert np.array_equal(np.array([s.state.z for s in steps]), trace.z)
    if rule in ("deltanet", "gated_deltanet", "kda"):
        assert np.array_equal(np.array([s.read_back for s in steps]), trace.read_backs)
        assert np.array_equal(np.array([s.error for s in steps]), trace.errors)
        np.testing.assert_allclose(trace.errors, v - trace.read_backs, rtol=0, atol=0)


@pytest.mark.parametrize("rule", RECURRENT)
def test_step_parts_rebuild_the_state(rule: str) -> None:
    """S_t = decay(S_{t-1}) − erased + write, and the old state is never touched."""
    q, k, v = make_inputs(6, 4, 3, 11)
    params = make_params(rule, 6, 4, 11)
    steps = step_through(rule, q, k, v, params)
    previous = steps[2].state
    before = previous.S.copy()
    s = sim.step(rule, previous, q[3], k[3], v[3],
                 **{n: (x if np.ndim(x) == 0 else x[3]) for n, x in params.items()})
    assert np.array_equal(previous.S, before)
    with pytest.raises(ValueError):
        previous.S[0, 0] = 1.0  # read-only: a state is a value
    decay = s.decay
    decayed = previous.S if decay is None else (
        decay * previous.S if np.ndim(decay) == 0 else decay[:, None] * previous.S)
    erased = s.erased if s.erased is not None else 0.0
    np.testing.assert_allclose(decayed - erased + s.write, s.state.S, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s.output, s.state.S.T @ q[3], rtol=1e-12)
    if rule in ("deltanet", "gated_deltanet", "kda"):
        np.testing.assert_allclose(s.read_back, decayed.T @ k[3], rtol=1e-12)
        np.testing.assert_allclose(s.error, v[3] - s.read_back, rtol=1e-12)
    else:
        assert s.read_back is None and s.error is None and s.erased is None


def test_decay_recorded_per_rule() -> None:
    s0 = sim.init_state("retnet", 2, 2)
    x = np.ones(2)
    assert sim.step("retnet", s0, x, x, x, gamma=0.9).decay == 0.9
    assert sim.step("linear", sim.init_state("linear", 2, 2), x, x, x).decay is None
    assert sim.step("deltanet", s0, x, x, x, beta=0.5).decay is None
    a = np.array([0.5, 0.25])
    assert np.array_equal(sim.step("kda", s0, x, x, x, alpha=a, beta=0.5).decay, a)


# --- reductions from references.md -----------------------------------------------------------

@pytest.mark.parametrize("gated, ungated", [("retnet", "linear"), ("mamba2", "linear"),
                                            ("gla", "linear"), ("gated_deltanet", "deltanet"),
                                            ("kda", "deltanet")])
def test_gates_of_one_give_the_ungated_rule(gated: str, ungated: str) -> None:
    q, k, v = make_inputs(12, 4, 3, 5)
    beta = np.random.default_rng(0).uniform(0, 1, 12)
    extra = {"beta": beta} if "delta" in ungated else {}
    gate = {"retnet": {"gamma": 1.0}}.get(gated, {"alpha": 1.0})
    a = sim.run(gated, q, k, v, **gate, **extra)
    b = sim.run(ungated, q, k, v, **extra)
    assert np.array_equal(a.outputs, b.outputs)
    # and a gate below one does change things
    assert not np.allclose(sim.run(gated, q, k, v, **{n: 0.9 for n in gate}, **extra).outputs,
                           b.outputs)


@pytest.mark.parametrize("rule", ["deltanet", "gated_deltanet", "kda"])
def test_beta_zero_never_writes(rule: str) -> None:
    q, k, v = make_inputs(8, 4, 3, 2)
    S0 = np.random.default_rng(1).standard_normal((4, 3))
    params = {"beta": 0.0}
    if rule != "deltanet":
        params["alpha"] = 1.0
    trace = sim.run(rule, q, k, v, initial_state=S0, **params)
    assert np.array_equal(trace.states, np.broadcast_to(S0, (8, 4, 3)))
    assert np.array_equal(sim.run(rule, q, k, v, **params).outputs, np.zeros((8, 3)))


def test_delta_equals_linear_while_nothing_is_read_back() -> None:
    stream = sim.scenarios.orthonormal(5, 5, 3, seed=4)  # distinct orthonormal keys
    delta = sim.run("deltanet", stream.q, stream.k, stream.v, beta=1.0)
    linear = sim.run("linear", stream.q, stream.k, stream.v)
    np.testing.assert_allclose(delta.read_backs, 0.0, atol=1e-15)
    np.testing.assert_allclose(delta.states, linear.states, atol=1e-15)
    # ... and they part ways as soon as a key repeats (token 5 reuses key 0)
    stream = sim.scenarios.orthonormal(6, 5, 3, seed=4)
    delta = sim.run("deltanet", stream.q, stream.k, stream.v, beta=1.0)
    linear = sim.run("linear", stream.q, stream.k, stream.v)
    assert not np.allclose(delta.outputs[5], linear.outputs[5])


# --- the lesson's worked example -------------------------------------------------------------

def test_worked_example_both_ways() -> None:
    ex = worked_example()
    trace = sim.run("linear", ex.q, ex.k, ex.v, normalize=True)
    assert np.array_equal(trace.outputs[-1], [0.5, 3.0])
    assert np.array_equal(trace.final_state, [[2.0, 4.0], [0.0, 4.0]])
    assert np.array_equal(trace.z[-1], [2.0, 1.0])
    assert np.array_equal(ex.q[-1] @ trace.final_state, [2.0, 12.0])
    # direct sum: (1·(2, 0) + 3·(0, 4)) / 4
    scores = ex.k @ ex.q[-1]
    assert np.array_equal(scores, [1.0, 3.0])
    assert np.array_equal(scores @ ex.v / scores.sum(), [0.5, 3.0])
    assert np.array_equal(run_parallel("linear", ex.q, ex.k, ex.v, normalize=True)[-1], [0.5, 3.0])
    np.testing.assert_array_equal(trace.outputs, ex.targets)


# --- divergence ------------------------------------------------------------------------------

def test_divergence_names_the_token() -> None:
    T, d = 400, 4
    rng = np.random.default_rng(0)
    k = 3.0 * sim.l2_normalize(rng.standard_normal((T, d)))  # ‖k‖² = 9, β‖k‖² = 18 > 2
    v = rng.standard_normal((T, d))
    with pytest.raises(sim.DivergenceError) as info:
        sim.run("deltanet", k, k, v, beta=2.0)
    err = info.value
    assert isinstance(err, ValueError)
    assert 10 < err.token < T
    assert f"run diverged at token t={err.token}" in str(err)
    assert "β=2" in str(err) and "normalise keys" in str(err)
    # step reports the same token
    state = sim.init_state("deltanet", d, d)
    with pytest.raises(sim.DivergenceError) as stepped:
        for t in range(T):
            state = sim.step("deltanet", state, k[t], k[t], v[t], beta=2.0).state
    assert stepped.value.token == err.token
    # the same keys normalised stay bounded
    trace = sim.run("deltanet", k / 3.0, k / 3.0, v, beta=2.0)
    assert np.isfinite(trace.final_state).all()


def test_keep_states_false_keeps_final_state_only() -> None:
    q, k, v = make_inputs(20, 3, 2, 9)
    full = sim.run("gla", q, k, v, alpha=0.9)
    lean = sim.run("gla", q, k, v, alpha=0.9, keep_states=False)
    assert lean.states is None
    assert np.array_equal(lean.final_state, full.states[-1])
    assert np.array_equal(lean.outputs, full.outputs)
    assert sim.run("softmax", q, k, v, keep_states=False).weights is None


def test_initial_state_is_decayed_and_read() -> None:
    S0 = np.eye(2)
    q = np.array([[1.0, 0.0]])
    z = np.zeros((1, 2))
    out = sim.run("retnet", q, z, np.zeros((1, 2)), gamma=0.5, initial_state=S0).outputs
    assert np.array_equal(out, [[0.5, 0.0]])


def test_init_state_shapes() -> None:
    s = sim.init_state("softmax", 3, 2)
    assert s.S is None and s.keys.shape == (0, 3) and s.values.shape == (0, 2)
    s = sim.init_state("linear", 3, 2)
    assert s.S.shape == (3, 2) and s.z.shape == (3,) and not s.S.any()
    s = sim.init_state("kda", 3, 2)
    assert s.z is None and s.numbers == 6


@pytest.mark.parametrize("d_k, d_v", [(1, 1), (3, 5), (64, 64), (128, 96)])
def test_rank_one_is_the_outer_product_exactly(d_k: int, d_v: int) -> None:
    from sim.linear_attention import rank_one

    rng = np.random.default_rng(d_k)
    k, v = rng.standard_normal(d_k), rng.standard_normal(d_v)
    assert np.array_equal(rank_one(k, v), np.outer(k, v))
