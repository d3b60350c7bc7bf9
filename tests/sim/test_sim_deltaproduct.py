"""DeltaProduct: worked example, FLA's naive recurrence, n_h = 1 is Gated DeltaNet, chunkwise."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import make_inputs

import sim
from sim import deltaproduct


def _inputs(T: int, n_h: int, d_k: int, d_v: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((T, d_k))
    k = sim.l2_normalize(rng.standard_normal((T, n_h, d_k)).reshape(-1, d_k)).reshape(
        T, n_h, d_k)
    v = rng.standard_normal((T, n_h, d_v))
    alpha = rng.uniform(0.3, 1.0, T)
    beta = rng.uniform(0.0, 2.0, (T, n_h))  # FLA's layer: β = 2σ(·) ∈ (0, 2)
    return q, k, v, alpha, beta


def test_worked_example() -> None:
    q = np.array([[1.0, 1.0], [1.0, 1.0]])
    k = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.6, 0.8]]])  # (T, n_h, d_k)
    v = np.array([[[2.0, 0.0], [0.0, 4.0]], [[3.0, 0.0], [0.0, 0.0]]])
    trace = sim.run("deltaproduct", q, k, v, alpha=[1.0, 0.5], beta=[[1.0, 1.0], [0.5, 1.0]])
    # token 0: S = (1,0)(2,0)ᵀ, then (0,1) reads back 0 and writes (0,4): S = [[2, 0], [0, 4]]
    np.testing.assert_array_equal(trace.states[0], [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_array_equal(trace.outputs[0], [2.0, 4.0])
    # token 1: decay ½ once: [[1, 0], [0, 2]]
    #   j = 1, k = (1, 0), β = ½: reads (1, 0), writes ½(1,0)((3,0) − (1,0))ᵀ → [[2, 0], [0, 2]]
    #   j = 2, k = (0.6, 0.8), β = 1: reads 2k = (1.2, 1.6), writes k(0 − (1.2, 1.6))ᵀ
    #     → 2(I − k kᵀ) = [[2 − 0.72, −0.96], [−0.96, 2 − 1.28]] = [[1.28, −0.96], [−0.96, 0.72]]
    #   o = Sᵀ(1, 1) = (0.32, −0.24)
    np.testing.assert_allclose(trace.read_backs[1], [[1.0, 0.0], [1.2, 1.6]], rtol=1e-15)
    np.testing.assert_allclose(trace.states[1], [[1.28, -0.96], [-0.96, 0.72]], rtol=1e-14)
    np.testing.assert_allclose(trace.outputs[1], [0.32, -0.24], rtol=1e-13)


def _naive_gated_delta_product(q, k, v, g, beta):
    """fla-org/flash-linear-attention fla/ops/gated_delta_product/naive.py
    (`naive_recurrent_gated_delta_product`), one head, state K×V, scale 1:
        h = h * exp(g_t);  for each Householder j: v_new = (v_j − (h * k_j[:, None]).sum(0)) β_j;
        h = h + k_j[:, None] * v_new[None, :];  then o_t = (h * q_t[:, None]).sum(0)."""
    T, n_h, d_k = k.shape
    h = np.zeros((d_k, v.shape[2]))
    o = []
    for t in range(T):
        h = h * np.exp(g[t])
        for j in range(n_h):
            v_new = (v[t, j] - (h * k[t, j][:, None]).sum(0)) * beta[t, j]
            h = h + k[t, j][:, None] * v_new[None, :]
        o.append((h * q[t][:, None]).sum(0))
    return np.array(o), h


@pytest.mark.parametrize("T, n_h, d_k, d_v, seed", [(1, 1, 1, 1, 0), (8, 2, 4, 3, 1),
                                                   (20, 3, 5, 4, 2)])
def test_matches_flas_naive_recurrence(T: int, n_h: int, d_k: int, d_v: int, seed: int) -> None:
    q, k, v, alpha, beta = _inputs(T, n_h, d_k, d_v, seed)
    trace = sim.run("deltaproduct", q, k, v, alpha=alpha, beta=beta)
    o, h = _naive_gated_delta_product(q, k, v, np.log(alpha), beta)
    np.testing.assert_allclose(trace.outputs, o, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trace.final_state, h, rtol=1e-12, atol=1e-12)


def test_one_householder_step_is_gated_deltanet() -> None:
    q, k, v = make_inputs(12, 4, 3, 3)
    rng = np.random.default_rng(3)
    alpha, beta = rng.uniform(0.2, 1.0, 12), rng.uniform(0.0, 2.0, 12)
    product = sim.run("deltaproduct", q, k[:, None], v[:, None], alpha=alpha, beta=beta[:, None])
    gated = sim.run("gated_deltanet", q, k, v, alpha=alpha, beta=beta)
    assert np.array_equal(product.outputs, gated.outputs)  # the same kernel, the same order
    assert np.array_equal(product.states, gated.states)
    ungated = sim.run("deltaproduct", q, k[:, None], v[:, None], alpha=1.0, beta=beta[:, None])
    assert np.array_equal(ungated.outputs, sim.run("deltanet", q, k, v, beta=beta).outputs)


def test_two_householder_steps_are_not_one() -> None:
    q, k, v, alpha, beta = _inputs(10, 2, 4, 3, 4)
    two = sim.run("deltaproduct", q, k, v, alpha=alpha, beta=beta).outputs
    one = sim.run("deltaproduct", q, k[:, :1], v[:, :1], alpha=alpha, beta=beta[:, :1]).outputs
    assert not np.allclose(two, one)


def test_run_and_step_agree_exactly() -> None:
    q, k, v, alpha, beta = _inputs(9, 3, 4, 2, 5)
    S0 = np.random.default_rng(5).standard_normal((4, 2))
    trace = sim.run("deltaproduct", q, k, v, alpha=alpha, beta=beta, initial_state=S0)
    state = sim.State(S=S0)
    for t in range(9):
        s = sim.step("deltaproduct", state, q[t], k[t], v[t], alpha=alpha[t], beta=beta[t])
        assert np.array_equal(s.output, trace.outputs[t])
        assert np.array_equal(s.state.S, trace.states[t])
        assert np.array_equal(s.read_back, trace.read_backs[t])
        assert s.decay == alpha[t]
        state = s.state
    assert state.t == 9


@pytest.mark.parametrize("C", [1, 2, 3, 7, 50])
def test_chunkwise_through_interleaved_gated_deltanet(C: int) -> None:
    q, k, v, alpha, beta = _inputs(13, 3, 4, 3, 6)
    S0 = np.random.default_rng(6).standard_normal((4, 3))
    trace = sim.run("deltaproduct", q, k, v, alpha=alpha, beta=beta, initial_state=S0)
    outputs, chunks = deltaproduct.run_chunkwise(q, k, v, alpha=alpha, beta=beta, chunk_size=C,
                                                 initial_state=S0)
    np.testing.assert_allclose(outputs, trace.outputs, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(chunks.final_state, trace.final_state, rtol=1e-10, atol=1e-11)
    # boundaries fall between tokens: chunk c starts at sub-step c·C·n_h
    assert np.array_equal(chunks.starts[:-1], np.arange(0, 13 * 3, C * 3))
    for c, start in enumerate(chunks.starts[1:-1], 1):
        np.testing.assert_allclose(chunks.boundary_states[c], trace.states[start // 3 - 1],
                                   rtol=1e-10, atol=1e-11)


def test_interleaved_sequence() -> None:
    q, k, v, alpha, beta = _inputs(2, 2, 3, 1, 7)
    Q, K, V, a, b = deltaproduct.interleave(q, k, v, alpha, beta)
    assert np.array_equal(a, [alpha[0], 1.0, alpha[1], 1.0])  # the gate on sub-step 0 only
    assert np.array_equal(K, k.reshape(4, 3)) and np.array_equal(b, beta.reshape(4))
    assert np.array_equal(Q, [np.zeros(3), q[0], np.zeros(3), q[1]])  # read after the last
    assert V.shape == (4, 1)


Q3, K3, V3 = np.ones((3, 2)), np.full((3, 2, 2), 0.5 ** 0.5), np.ones((3, 2, 2))


@pytest.mark.parametrize("args, params, message", [
    ((Q3, K3[:, 0], V3), {"alpha": 0.5, "beta": 0.5}, r"^k: expected shape \(T, n_h, d_k\) = \(3, 'any', 2\), got shape \(3, 2\)"),
    ((Q3, K3, V3[:, :1]), {"alpha": 0.5, "beta": 0.5}, r"^v: expected shape \(T, n_h, d_v\) = \(3, 2, 'any'\)"),
    ((Q3, K3, V3), {"alpha": 1.1, "beta": 0.5}, r"^alpha: expected every value in \(0, 1\], got 1.1"),
    ((Q3, K3, V3), {"alpha": np.ones((3, 2)), "beta": 0.5}, r"^alpha: expected a float or an array of shape \(T,\) = \(3,\)"),
    ((Q3, K3, V3), {"alpha": 0.5, "beta": np.ones(3)}, r"^beta: expected a float or an array of shape \(T, n_h\) = \(3, 2\)"),
    ((Q3, K3, V3), {"alpha": 0.5, "beta": 2.5}, r"^beta: expected every value in \[0, 2\], got 2.5"),
    ((Q3, K3, V3), {"beta": 0.5}, r"^alpha: rule 'deltaproduct' needs alpha"),
])
def test_bad_input_is_refused_by_name(args: tuple, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sim.run("deltaproduct", *args, **params)


def test_bad_step_input_is_refused_by_name() -> None:
    state = sim.init_state("deltaproduct", 2, 2)
    with pytest.raises(ValueError, match=r"^k: expected shape \(n_h, d_k\) = \(any, 2\), got shape \(2,\)"):
        sim.step("deltaproduct", state, np.ones(2), np.ones(2), np.ones((1, 2)), alpha=1.0, beta=1.0)
    with pytest.raises(ValueError, match=r"^v: expected shape \(n_h, d_v\) = \(2, 2\)"):
        sim.step("deltaproduct", state, np.ones(2), K3[0], np.ones((1, 2)), alpha=1.0, beta=1.0)
    with pytest.raises(ValueError, match=r"^alpha: expected a number in \(0, 1\], got 1.5"):
        sim.step("deltaproduct", state, np.ones(2), K3[0], V3[0], alpha=1.5, beta=1.0)
    with pytest.raises(ValueError, match=r"^beta: expected a float or an array of shape \(n_h,\)"):
        sim.step("deltaproduct", state, np.ones(2), K3[0], V3[0], alpha=1.0, beta=np.ones(3))
