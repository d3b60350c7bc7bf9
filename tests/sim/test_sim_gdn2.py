"""Gated DeltaNet-2 (sim/gated_deltanet2.py): a worked example by hand, its reductions to KDA and
Gated DeltaNet, run == step bit for bit, and random inputs against a loop written from the
reference, fla-org/flash-linear-attention fla/ops/gdn2/naive.py `naive_recurrent_gdn2`."""

from __future__ import annotations

import numpy as np
import pytest

import sim


def test_worked_by_hand_the_erase_gate_keeps_half_of_the_old_value() -> None:
    # token 1 (S = 0): nothing to erase; S = k (w ⊙ v)ᵀ = (1, 0) ⊗ (0.5·2, 1·4) = [[1, 4], [0, 0]]
    # token 2: diag(α) S = [[0.5, 2], [0, 0]]; e = (b ⊙ k)ᵀ that = 0.5 · (0.5, 2) = (0.25, 1);
    #   S = [[0.5, 2], [0, 0]] + (1, 0) ⊗ ((6, 2) − (0.25, 1)) = [[6.25, 3], [0, 0]]:
    #   half the decayed old value stays (0.25, 1), the new one is written whole (6, 2)
    k = np.array([[1.0, 0.0], [1.0, 0.0]])
    v = np.array([[2.0, 4.0], [6.0, 2.0]])
    q = np.ones((2, 2))
    alpha = np.array([[0.5, 1.0], [0.5, 1.0]])
    erase = np.array([[1.0, 1.0], [0.5, 0.0]])
    write = np.array([[0.5, 1.0], [1.0, 1.0]])
    trace = sim.run("gdn2", q, k, v, alpha=alpha, erase=erase, write=write, keep_states=True)
    np.testing.assert_array_equal(trace.states[0], [[1.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(trace.states[1], [[6.25, 3.0], [0.0, 0.0]])
    np.testing.assert_array_equal(trace.read_backs[1], [0.25, 1.0])
    np.testing.assert_array_equal(trace.outputs[1], [6.25, 3.0])  # Sᵀ q, q = (1, 1)


def _stream(seed: int, T: int = 12, d_k: int = 4, d_v: int = 3):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, T, d_k))
    k = sim.l2_normalize(k)
    return q, k, rng.standard_normal((T, d_v)), rng


@pytest.mark.parametrize("seed", range(4))
def test_one_scalar_for_both_gates_is_kda_and_with_a_scalar_decay_gated_deltanet(seed: int) -> None:
    q, k, v, rng = _stream(seed)
    T, d_k, d_v = k.shape[0], k.shape[1], v.shape[1]
    beta = rng.uniform(0.0, 1.0, T)
    a = rng.uniform(0.3, 1.0, T)
    gdn = sim.run("gated_deltanet", q, k, v, alpha=a, beta=beta)
    two = sim.run("gdn2", q, k, v, alpha=np.repeat(a[:, None], d_k, 1),
                  erase=np.repeat(beta[:, None], d_k, 1), write=np.repeat(beta[:, None], d_v, 1))
    np.testing.assert_allclose(two.outputs, gdn.outputs, rtol=1e-12, atol=1e-12)
    alpha = rng.uniform(0.3, 1.0, (T, d_k))
    kda = sim.run("kda", q, k, v, alpha=alpha, beta=beta)
    two = sim.run("gdn2", q, k, v, alpha=alpha, erase=np.repeat(beta[:, None], d_k, 1),
                  write=np.repeat(beta[:, None], d_v, 1))
    np.testing.assert_allclose(two.outputs, kda.outputs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_run_and_step_agree_bit_for_bit(seed: int) -> None:
    q, k, v, rng = _stream(seed)
    gates = {"alpha": rng.uniform(0.2, 1.0, k.shape), "erase": rng.uniform(0, 1, k.shape),
             "write": rng.uniform(0, 1, v.shape)}
    trace = sim.run("gdn2", q, k, v, **gates, keep_states=True)
    state = sim.init_state("gdn2", k.shape[1], v.shape[1])
    for t in range(k.shape[0]):
        s = sim.step("gdn2", state, q[t], k[t], v[t], **{n: g[t] for n, g in gates.items()})
        assert np.array_equal(s.state.S, trace.states[t]) and np.array_equal(s.output, trace.outputs[t])
        assert np.array_equal(s.read_back, trace.read_backs[t])
        state = s.state


def naive_recurrent_gdn2(q, k, v, g, b, w, scale=None, initial_state=None):
    """fla/ops/gdn2/naive.py naive_recurrent_gdn2, one batch and one head, in numpy, line by line
    (its names: h the state K × V, g the log-decay, b the erase gate, w the write gate; the
    initial state replaces the zeros, as there)."""
    if scale is None:
        scale = q.shape[-1] ** -0.5
    T, K = k.shape
    V = v.shape[-1]
    o = np.zeros((T, V))
    h = np.zeros((K, V)) if initial_state is None else np.array(initial_state, dtype=float)
    q = q * scale
    for t in range(T):
        b_q, b_k, b_v, b_g, b_b, b_w = q[t], k[t], v[t], g[t], b[t], w[t]
        h = h * np.exp(b_g)[:, None]
        erase = ((b_b * b_k)[:, None] * h).sum(-2)
        b_v_new = b_w * b_v - erase
        h = h + b_k[:, None] * b_v_new[None, :]
        o[t] = (b_q[:, None] * h).sum(-2)
    return o, h


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(1, 1, 1), (9, 4, 3), (33, 8, 5)])
def test_random_inputs_against_the_reference_loop(seed: int, shape: tuple[int, int, int]) -> None:
    T, d_k, d_v = shape
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, T, d_k))
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)
    v = rng.standard_normal((T, d_v))
    g = np.log(rng.uniform(0.2, 1.0, (T, d_k)))  # the reference takes the log-decay
    b, w = rng.uniform(0, 1, (T, d_k)), rng.uniform(0, 1, (T, d_v))
    o, h = naive_recurrent_gdn2(q, k, v, g, b, w)
    trace = sim.run("gdn2", q * d_k ** -0.5, k, v, alpha=np.exp(g), erase=b, write=w)
    np.testing.assert_allclose(trace.outputs, o, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(trace.final_state, h, rtol=1e-10, atol=1e-12)


def test_gates_out_of_range_are_refused_by_name() -> None:
    q, k, v, _ = _stream(0, T=2)
    with pytest.raises(ValueError, match="^erase"):
        sim.run("gdn2", q, k, v, alpha=1.0, erase=1.5, write=1.0)
    with pytest.raises(ValueError, match="^write"):
        sim.run("gdn2", q, k, v, alpha=1.0, erase=1.0, write=np.ones((2, 4)))
    with pytest.raises(ValueError, match="^alpha"):
        sim.run("gdn2", q, k, v, alpha=0.0, erase=1.0, write=1.0)


@pytest.mark.parametrize("seed", range(3))
def test_from_an_initial_state_against_the_reference_loop(seed: int) -> None:
    """The reference starts from initial_state when given one (a chunk carried over); so does sim."""
    T, d_k, d_v = 7, 4, 3
    rng = np.random.default_rng([seed, 40])
    q, k = rng.standard_normal((2, T, d_k))
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)
    v, h0 = rng.standard_normal((T, d_v)), rng.standard_normal((d_k, d_v))
    g = np.log(rng.uniform(0.2, 1.0, (T, d_k)))
    b, w = rng.uniform(0, 1, (T, d_k)), rng.uniform(0, 1, (T, d_v))
    o, h = naive_recurrent_gdn2(q, k, v, g, b, w, initial_state=h0)
    trace = sim.run("gdn2", q * d_k ** -0.5, k, v, alpha=np.exp(g), erase=b, write=w,
                    initial_state=h0)
    np.testing.assert_allclose(trace.outputs, o, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(trace.final_state, h, rtol=1e-10, atol=1e-12)
    assert not np.allclose(trace.final_state, sim.run("gdn2", q, k, v, alpha=np.exp(g), erase=b,
                                                      write=w).final_state)  # h0 matters
