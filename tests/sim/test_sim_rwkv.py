"""RWKV-7 and RWKV-6: worked examples, the reference recurrences, reductions, run == step."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import make_inputs

import sim
from sim.state import State


def _rwkv7_params(T: int, d_k: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"alpha": rng.uniform(0.545, 1.0, (T, d_k)),  # RWKV-7's own range of w
            "beta": rng.uniform(0.0, 1.0, (T, d_k)),
            "removal_key": sim.l2_normalize(rng.standard_normal((T, d_k)))}


def _steps(rule: str, q: np.ndarray, k: np.ndarray, v: np.ndarray,
           gates_of_token: list[dict]) -> list[sim.Step]:
    state = sim.init_state(rule, q.shape[1], v.shape[-1])
    steps = []
    for t in range(q.shape[0]):
        steps.append(sim.step(rule, state, q[t], k[t], v[t], **gates_of_token[t]))
        state = steps[-1].state
    return steps


# --- RWKV-7 ----------------------------------------------------------------------------------

def test_rwkv7_worked_example() -> None:
    q = np.array([[1.0, 0.0], [1.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 2.0]])  # the written keys k̃
    v = np.array([[2.0, 4.0], [1.0, 1.0]])
    alpha = np.array([[0.5, 1.0], [0.5, 1.0]])
    beta = np.array([[1.0, 1.0], [0.5, 1.0]])
    kappa = np.array([[1.0, 0.0], [0.6, 0.8]])
    trace = sim.run("rwkv7", q, k, v, alpha=alpha, beta=beta, removal_key=kappa)
    # token 0: S₀ = 0, nothing to erase: S₁ = k₁v₁ᵀ = [[2, 4], [0, 0]]; o = S₁ᵀ(1, 0) = (2, 4)
    np.testing.assert_array_equal(trace.states[0], [[2.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(trace.outputs[0], [2.0, 4.0])
    # token 1: κ̂ᵀS₁ = 0.6·(2, 4) = (1.2, 2.4), read from the undecayed S₁
    #   erase (β ⊙ κ̂)(κ̂ᵀS₁) = (0.3, 0.8)ᵀ(1.2, 2.4) = [[0.36, 0.72], [0.96, 1.92]]
    #   diag(α)S₁ = [[1, 2], [0, 0]]; write k vᵀ = [[0, 0], [2, 2]]
    #   S₂ = [[1 − 0.36, 2 − 0.72], [−0.96 + 2, −1.92 + 2]] = [[0.64, 1.28], [1.04, 0.08]]
    #   o = S₂ᵀ(1, 1) = (0.64 + 1.04, 1.28 + 0.08) = (1.68, 1.36)
    np.testing.assert_allclose(trace.read_backs[1], [1.2, 2.4], rtol=1e-15)
    np.testing.assert_allclose(trace.states[1], [[0.64, 1.28], [1.04, 0.08]], rtol=1e-14)
    np.testing.assert_allclose(trace.outputs[1], [1.68, 1.36], rtol=1e-14)


def test_rwkv7_default_removal_key_is_the_normalised_key() -> None:
    q, k, v = make_inputs(7, 3, 2, 1)
    k = 2.5 * k  # not unit: the default κ̂ is k / ‖k‖
    params = _rwkv7_params(7, 3, 1)
    del params["removal_key"]
    a = sim.run("rwkv7", q, k, v, **params)
    b = sim.run("rwkv7", q, k, v, **params, removal_key=k / 2.5)
    np.testing.assert_allclose(a.outputs, b.outputs, rtol=1e-13, atol=1e-14)


def _rwkv7_reference(r, w, k, v, kk, a):
    """BlinkDL/RWKV-LM RWKV-v7/rwkv_v7_numpy.py, one head, state V×K:
    S = S * w.mT - S @ kk * (kk*a).mT + v * k.mT;  y = S @ r."""
    S = np.zeros((v.shape[1], k.shape[1]))  # (V, K)
    ys, Ss = [], []
    for t in range(r.shape[0]):
        S = (S * w[t][None, :] - (S @ kk[t])[:, None] * (kk[t] * a[t])[None, :]
             + v[t][:, None] * k[t][None, :])
        ys.append(S @ r[t])
        Ss.append(S.T.copy())  # ours is K×V
    return np.array(ys), np.array(Ss)


@pytest.mark.parametrize("T, d_k, d_v, seed", [(1, 1, 1, 0), (9, 4, 3, 1), (30, 8, 5, 2)])
def test_rwkv7_matches_the_official_numpy_recurrence(T: int, d_k: int, d_v: int,
                                                     seed: int) -> None:
    q, k, v = make_inputs(T, d_k, d_v, seed)
    k = k * np.random.default_rng(seed).uniform(0.5, 2.0, (T, 1))  # k̃ is free
    p = _rwkv7_params(T, d_k, seed)
    trace = sim.run("rwkv7", q, k, v, **p)
    ys, Ss = _rwkv7_reference(q, p["alpha"], k, v, p["removal_key"], p["beta"])
    np.testing.assert_allclose(trace.outputs, ys, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trace.states, Ss, rtol=1e-12, atol=1e-12)


def test_rwkv7_reduces_to_deltanet_and_gated_deltanet() -> None:
    T, d_k = 12, 4
    q, k, v = make_inputs(T, d_k, 3, 5)  # unit keys
    rng = np.random.default_rng(5)
    b, a = rng.uniform(0, 1, T), rng.uniform(0.2, 1, T)
    ones = np.ones((T, d_k))
    # α = 1, β = b·1, κ̂ = k, written key b k: DeltaNet with β = b
    rwkv = sim.run("rwkv7", q, b[:, None] * k, v, alpha=1.0, beta=b[:, None] * ones,
                   removal_key=k)
    delta = sim.run("deltanet", q, k, v, beta=b)
    np.testing.assert_allclose(rwkv.states, delta.states, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(rwkv.outputs, delta.outputs, rtol=1e-12, atol=1e-13)
    # α = a·1, β = a b·1: Gated DeltaNet
    rwkv = sim.run("rwkv7", q, b[:, None] * k, v, alpha=a[:, None] * ones,
                   beta=(a * b)[:, None] * ones, removal_key=k)
    gated = sim.run("gated_deltanet", q, k, v, alpha=a, beta=b)
    np.testing.assert_allclose(rwkv.outputs, gated.outputs, rtol=1e-12, atol=1e-13)
    # a per-channel α is not KDA: RWKV-7 erases from the undecayed state
    alpha = rng.uniform(0.2, 1, (T, d_k))
    rwkv = sim.run("rwkv7", q, b[:, None] * k, v, alpha=alpha, beta=b[:, None] * alpha,
                   removal_key=k)
    kda = sim.run("kda", q, k, v, alpha=alpha, beta=b)
    assert not np.allclose(rwkv.outputs, kda.outputs)


def test_rwkv7_run_and_step_agree_exactly() -> None:
    q, k, v = make_inputs(10, 4, 3, 7)
    p = _rwkv7_params(10, 4, 7)
    trace = sim.run("rwkv7", q, k, v, **p)
    steps = _steps("rwkv7", q, k, v, [{n: x[t] for n, x in p.items()} for t in range(10)])
    assert np.array_equal([s.output for s in steps], trace.outputs)
    assert np.array_equal([s.state.S for s in steps], trace.states)
    assert np.array_equal([s.read_back for s in steps], trace.read_backs)
    assert np.array_equal(steps[-1].state.S, trace.final_state) and steps[-1].state.t == 10
    # floats broadcast the same way in both
    lean = sim.run("rwkv7", q, k, v, alpha=0.9, beta=0.5, keep_states=False)
    stepped = _steps("rwkv7", q, k, v, [{"alpha": 0.9, "beta": 0.5}] * 10)
    assert lean.states is None
    assert np.array_equal([s.output for s in stepped], lean.outputs)


def test_rwkv7_step_parts() -> None:
    q, k, v = make_inputs(3, 3, 2, 3)
    S0 = np.random.default_rng(3).standard_normal((3, 2))
    S0.flags.writeable = False
    a, b = np.array([0.5, 0.75, 1.0]), np.array([1.0, 0.25, 0.5])
    s = sim.step("rwkv7", State(S=S0), q[0], k[0], v[0], alpha=a, beta=b, removal_key=k[0])
    np.testing.assert_array_equal(s.decay, a)
    np.testing.assert_allclose(s.read_back, S0.T @ k[0], rtol=1e-14)
    np.testing.assert_allclose(s.state.S, a[:, None] * S0 - np.outer(b * k[0], k[0] @ S0)
                               + s.write, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(s.write, np.outer(k[0], v[0]))


# --- RWKV-6 ----------------------------------------------------------------------------------

def test_rwkv6_worked_example() -> None:
    q = np.array([[1.0, 1.0], [1.0, 2.0]])
    k = np.array([[1.0, 0.0], [1.0, 1.0]])
    v = np.array([[2.0, 4.0], [1.0, 0.0]])
    trace = sim.run("rwkv6", q, k, v, alpha=[[0.5, 1.0], [0.5, 1.0]], bonus=[1.0, 2.0])
    # token 0: o = S₀ᵀq + (q·(u⊙k)) v = 0 + (1·1·1 + 1·2·0)(2, 4) = (2, 4); S₁ = [[2, 4], [0, 0]]
    np.testing.assert_array_equal(trace.outputs[0], [2.0, 4.0])
    np.testing.assert_array_equal(trace.states[0], [[2.0, 4.0], [0.0, 0.0]])
    # token 1 reads S₁ before decaying it: S₁ᵀ(1, 2) = (2, 4); bonus (1·1·1 + 2·2·1) = 5,
    #   5·(1, 0); o = (7, 4). Then S₂ = diag(1/2, 1)S₁ + k vᵀ = [[1, 2], [0, 0]] + [[1, 0], [1, 0]]
    np.testing.assert_array_equal(trace.outputs[1], [7.0, 4.0])
    np.testing.assert_array_equal(trace.states[1], [[2.0, 2.0], [1.0, 0.0]])


def _rwkv6_reference(r, k, v, w, u):
    """BlinkDL/RWKV-LM RWKV-v5/rwkv_v6_demo.py, one head, state K×V:
    a = k @ v (outer); x = r @ (time_first * a + s); s = a + time_decay * s."""
    s = np.zeros((k.shape[1], v.shape[1]))
    xs, ss = [], []
    for t in range(r.shape[0]):
        a = k[t][:, None] @ v[t][None, :]
        xs.append(r[t] @ (u[:, None] * a + s))
        s = a + w[t][:, None] * s
        ss.append(s)
    return np.array(xs), np.array(ss)


@pytest.mark.parametrize("T, d_k, d_v, seed", [(1, 2, 1, 0), (11, 4, 3, 1), (25, 6, 6, 2)])
def test_rwkv6_matches_the_official_demo(T: int, d_k: int, d_v: int, seed: int) -> None:
    q, k, v = make_inputs(T, d_k, d_v, seed)
    rng = np.random.default_rng(seed)
    w, u = rng.uniform(0.1, 1.0, (T, d_k)), rng.standard_normal(d_k)  # u of any sign
    trace = sim.run("rwkv6", q, k, v, alpha=w, bonus=u)
    xs, ss = _rwkv6_reference(q, k, v, w, u)
    np.testing.assert_allclose(trace.outputs, xs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trace.states, ss, rtol=1e-12, atol=1e-12)


def test_rwkv6_with_no_decay_and_unit_bonus_is_linear_attention() -> None:
    q, k, v = make_inputs(15, 4, 3, 4)
    rwkv = sim.run("rwkv6", q, k, v, alpha=1.0, bonus=1.0)
    linear = sim.run("linear", q, k, v)
    np.testing.assert_allclose(rwkv.outputs, linear.outputs, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(rwkv.states, linear.states, rtol=1e-12, atol=1e-13)
    # with a decay it is not GLA with α = w: RWKV-6 reads before the decay
    gla = sim.run("gla", q, k, v, alpha=0.5)
    assert not np.allclose(sim.run("rwkv6", q, k, v, alpha=0.5, bonus=1.0).outputs, gla.outputs)


def test_rwkv6_run_and_step_agree_exactly() -> None:
    q, k, v = make_inputs(10, 4, 3, 8)
    rng = np.random.default_rng(8)
    alpha, bonus = rng.uniform(0.2, 1.0, (10, 4)), rng.standard_normal(4)
    trace = sim.run("rwkv6", q, k, v, alpha=alpha, bonus=bonus)
    steps = _steps("rwkv6", q, k, v, [{"alpha": alpha[t], "bonus": bonus} for t in range(10)])
    assert np.array_equal([s.output for s in steps], trace.outputs)
    assert np.array_equal([s.state.S for s in steps], trace.states)
    np.testing.assert_array_equal(steps[3].decay, alpha[3])


# --- bad input -------------------------------------------------------------------------------

Q, K, V = np.ones((3, 2)), np.full((3, 2), 0.5 ** 0.5), np.ones((3, 2))


@pytest.mark.parametrize("rule, params, message", [
    ("rwkv7", {"alpha": 1.5, "beta": 0.5}, r"^alpha: expected every value in \(0, 1\], got 1.5"),
    ("rwkv7", {"alpha": np.ones(3), "beta": 0.5}, r"^alpha: expected a float or an array of shape \(T, d_k\) = \(3, 2\)"),
    ("rwkv7", {"alpha": 0.5, "beta": 1.5}, r"^beta: expected every value in \[0, 1\], got 1.5"),
    ("rwkv7", {"alpha": 0.5}, r"^beta: rule 'rwkv7' needs beta"),
    ("rwkv7", {"alpha": 0.5, "beta": 0.5, "removal_key": np.ones((3, 2))}, r"^removal_key: expected unit vectors .* got length 1.41421 at index 0"),
    ("rwkv7", {"alpha": 0.5, "beta": 0.5, "removal_key": np.ones((3, 3))}, r"^removal_key: expected shape \(T, d_k\) = \(3, 2\)"),
    ("rwkv7", {"alpha": 0.5, "beta": 0.5, "bonus": 1.0}, r"^bonus: not a parameter of rule 'rwkv7'"),
    ("rwkv6", {"alpha": 0.5}, r"^bonus: rule 'rwkv6' needs bonus"),
    ("rwkv6", {"alpha": 0.0, "bonus": 1.0}, r"^alpha: expected every value in \(0, 1\], got 0.0"),
    ("rwkv6", {"alpha": 0.5, "bonus": np.ones(3)}, r"^bonus: expected a float or an array of shape \(d_k,\) = \(2,\)"),
    ("rwkv6", {"alpha": 0.5, "bonus": np.nan}, r"^bonus: expected every value in"),
])
def test_bad_input_is_refused_by_name(rule: str, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sim.run(rule, Q, K, V, **params)


def test_bad_step_input_is_refused_by_name() -> None:
    state = sim.init_state("rwkv7", 2, 2)
    with pytest.raises(ValueError, match=r"^alpha: expected every value in \(0, 1\], got 1.25"):
        sim.step("rwkv7", state, Q[0], K[0], V[0], alpha=[1.25, 1.0], beta=0.5)
    with pytest.raises(ValueError, match=r"^k: expected shape \(2,\), got shape \(3,\)"):
        sim.step("rwkv6", state, Q[0], np.ones(3), V[0], alpha=0.5, bonus=1.0)
    with pytest.raises(ValueError, match=r"^state: expected the State of a recurrent rule"):
        sim.step("rwkv6", sim.init_state("softmax", 2, 2), Q[0], K[0], V[0], alpha=0.5, bonus=1.0)
