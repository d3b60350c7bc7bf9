"""Mamba-1: the "mamba1" rule and sim.selective_scan, against mamba's selective_scan_ref."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sim_helpers import make_inputs

import sim


def test_mamba1_worked_example() -> None:
    q = np.array([[1.0, 0.0], [1.0, 2.0]])
    k = np.array([[1.0, 1.0], [1.0, 0.0]])
    v = np.array([[2.0, 4.0], [1.0, 3.0]])
    alpha = np.array([[[1.0, 1.0], [1.0, 1.0]],
                      [[0.5, 0.25], [1.0, 0.5]]])  # a decay per cell of S
    trace = sim.run("mamba1", q, k, v, alpha=alpha)
    # token 0: S₁ = k vᵀ = [[2, 4], [2, 4]]; o = S₁ᵀ(1, 0) = (2, 4)
    np.testing.assert_array_equal(trace.outputs[0], [2.0, 4.0])
    # token 1: α ⊙ S₁ = [[1, 1], [2, 2]]; + k vᵀ = [[1, 3], [0, 0]]: S₂ = [[2, 4], [2, 2]]
    #   o = S₂ᵀ(1, 2) = (2 + 4, 4 + 4) = (6, 8)
    np.testing.assert_array_equal(trace.states[1], [[2.0, 4.0], [2.0, 2.0]])
    np.testing.assert_array_equal(trace.outputs[1], [6.0, 8.0])


def test_selective_scan_worked_example() -> None:
    # Δ = 1 and A = −ln 2, −ln 4, so exp(ΔA) = 1/2, 1/4
    A = -np.log([[2.0, 4.0], [4.0, 2.0]])  # (d_inner, N)
    u = np.array([[2.0, 4.0], [1.0, 2.0]])  # (T, d_inner)
    B = np.array([[1.0, 0.0], [1.0, 1.0]])  # (T, N)
    C = np.array([[1.0, 1.0], [0.0, 1.0]])
    y, h = sim.selective_scan(u, np.ones((2, 2)), A, B, C, D=np.array([1.0, 0.0]))
    # t = 0: h[d, n] = Δ B[n] u[d] = [[2, 0], [4, 0]]; y = Σ_n C[n] h[d, n] + D u = (2 + 2, 4)
    np.testing.assert_array_equal(h[0], [[2.0, 0.0], [4.0, 0.0]])
    np.testing.assert_array_equal(y[0], [4.0, 4.0])
    # t = 1: Ā ⊙ h = [[2·½, 0], [4·¼, 0]] = [[1, 0], [1, 0]]; + u[d] B[n] = [[1, 1], [2, 2]]
    #   h = [[2, 1], [3, 2]]; y = h (0, 1) + D u = (1, 2) + (1, 0) = (2, 2)
    np.testing.assert_allclose(h[1], [[2.0, 1.0], [3.0, 2.0]], rtol=1e-15)
    np.testing.assert_allclose(y[1], [2.0, 2.0], rtol=1e-15)


def _selective_scan_ref(u, delta, A, B, C, D=None):
    """state-spaces/mamba mamba_ssm/ops/selective_scan_interface.py `selective_scan_ref`, one
    sequence, real A, B and C per token (B, C (L, N) here for the ref's (B, N, L)), no z, no
    delta_bias or softplus:
        deltaA = exp(einsum('bdl,dn->bdln', delta, A))
        deltaB_u = einsum('bdl,bnl,bdl->bdln', delta, B, u)
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i];  y = einsum('bdn,bn->bd', x, C[:, :, i])
        out = y + u * D"""
    deltaA = np.exp(np.einsum("ld,dn->ldn", delta, A))
    deltaB_u = np.einsum("ld,ln,ld->ldn", delta, B, u)
    x = np.zeros(A.shape)
    ys, xs = [], []
    for i in range(u.shape[0]):
        x = deltaA[i] * x + deltaB_u[i]
        ys.append(np.einsum("dn,n->d", x, C[i]))
        xs.append(x)
    y = np.array(ys)
    return (y if D is None else y + u * D), np.array(xs)


def _mamba_inputs(T: int, d_inner: int, N: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((T, d_inner))
    delta = np.log1p(np.exp(rng.standard_normal((T, d_inner)) - 2.0))  # softplus, > 0
    A = -np.tile(np.arange(1.0, N + 1), (d_inner, 1))  # S4D-real init, A[d, n] = −(n + 1)
    A *= rng.uniform(0.5, 2.0, (d_inner, 1))
    B, C = rng.standard_normal((T, N)), rng.standard_normal((T, N))
    D = rng.standard_normal(d_inner)
    return u, delta, A, B, C, D


@pytest.mark.parametrize("T, d_inner, N, seed", [(1, 1, 1, 0), (12, 4, 3, 1), (40, 8, 16, 2)])
def test_selective_scan_matches_selective_scan_ref(T: int, d_inner: int, N: int,
                                                   seed: int) -> None:
    u, delta, A, B, C, D = _mamba_inputs(T, d_inner, N, seed)
    y, h = sim.selective_scan(u, delta, A, B, C, D)
    y_ref, h_ref = _selective_scan_ref(u, delta, A, B, C, D)
    assert y.shape == (T, d_inner) and h.shape == (T, d_inner, N)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-13)
    y0, _ = sim.selective_scan(u, delta, A, B, C)  # no skip
    np.testing.assert_allclose(y0, _selective_scan_ref(u, delta, A, B, C)[0], rtol=1e-12,
                               atol=1e-13)


def test_selective_scan_is_the_mamba1_rule() -> None:
    """q = C, k = B, v = Δ ⊙ u, α_t[n, d] = exp(Δ_t[d] A[d, n]); y = o + D ⊙ u, h = Sᵀ."""
    u, delta, A, B, C, D = _mamba_inputs(15, 5, 4, 3)
    y, h = sim.selective_scan(u, delta, A, B, C, D)
    alpha = np.exp(delta[:, None, :] * A.T[None, :, :])  # (T, N, d_inner)
    trace = sim.run("mamba1", C, B, delta * u, alpha=alpha)
    assert np.array_equal(trace.outputs + D * u, y)
    assert np.array_equal(trace.states.transpose(0, 2, 1), h)


def test_mamba1_with_one_gate_per_row_is_gla() -> None:
    q, k, v = make_inputs(10, 4, 3, 6)
    alpha = np.random.default_rng(6).uniform(0.2, 1.0, (10, 4))
    trace = sim.run("mamba1", q, k, v, alpha=np.repeat(alpha[:, :, None], 3, axis=2))
    gla = sim.run("gla", q, k, v, alpha=alpha)
    assert np.array_equal(trace.outputs, gla.outputs)
    assert np.array_equal(trace.states, gla.states)
    # and a gate that differs along the value axis is not one GLA
    cells = np.random.default_rng(7).uniform(0.2, 1.0, (10, 4, 3))
    assert not np.allclose(sim.run("mamba1", q, k, v, alpha=cells).outputs, gla.outputs)


def test_mamba1_run_and_step_agree_exactly() -> None:
    q, k, v = make_inputs(9, 3, 2, 9)
    alpha = np.random.default_rng(9).uniform(0.1, 1.0, (9, 3, 2))
    S0 = np.random.default_rng(10).standard_normal((3, 2))
    trace = sim.run("mamba1", q, k, v, alpha=alpha, initial_state=S0)
    state = sim.State(S=S0)
    for t in range(9):
        s = sim.step("mamba1", state, q[t], k[t], v[t], alpha=alpha[t])
        assert np.array_equal(s.output, trace.outputs[t])
        assert np.array_equal(s.state.S, trace.states[t])
        state = s.state
    np.testing.assert_array_equal(s.write, np.outer(k[-1], v[-1]))


T, DI, N = 3, 2, 2
GOOD = {"u": np.ones((T, DI)), "delta": np.full((T, DI), 0.1), "A": -np.ones((DI, N)),
        "B": np.ones((T, N)), "C": np.ones((T, N))}


@pytest.mark.parametrize("bad, message", [
    ({"A": np.array([[-1.0, 0.5], [-1.0, -1.0]])}, r"^A: expected every value in \[-1e150, 0\) .* got 0.5 at index \(0, 1\)"),
    ({"A": np.zeros((DI, N))}, r"^A: expected every value in \[-1e150, 0\)"),
    ({"A": -np.ones((3, N))}, r"^A: expected shape \(d_inner, N\) = \(2, any\)"),
    ({"delta": np.zeros((T, DI))}, r"^delta: expected every value in \(0, 1e150\], got 0.0"),
    ({"delta": np.ones((T, 3))}, r"^delta: expected a float or an array of shape \(T, d_inner\)"),
    ({"B": np.ones((T, 3))}, r"^B: expected shape \(T, N\) = \(3, 2\)"),
    ({"C": np.ones((2, N))}, r"^C: expected shape \(T, N\)"),
    ({"D": np.ones(3)}, r"^D: expected shape \(d_inner,\) = \(2,\)"),
    ({"u": np.full((T, DI), np.nan)}, r"^u: expected finite numbers"),
])
def test_selective_scan_refuses_bad_input(bad: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sim.selective_scan(**(GOOD | bad))


@pytest.mark.parametrize("alpha, message", [
    (1.5, r"^alpha: expected every value in \(0, 1\], got 1.5"),
    (np.ones((3, 2)), r"^alpha: expected a float or an array of shape \(T, d_k, d_v\) = \(3, 2, 2\)"),
])
def test_mamba1_refuses_bad_decay(alpha, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sim.run("mamba1", np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), alpha=alpha)
    with pytest.raises(ValueError, match=r"^alpha: expected"):
        sim.step("mamba1", sim.init_state("mamba1", 2, 2), np.ones(2), np.ones(2), np.ones(2),
                 alpha=np.full((2, 2), 1.0 + 2 ** -40))


def test_strong_decay_rounds_to_zero_in_selective_scan_only() -> None:
    # exp(ΔA) underflows to 0 for ΔA < −745: the scan forgets; the rule refuses a 0 decay
    u, B, C = np.ones((2, 1)), np.ones((2, 1)), np.ones((2, 1))
    y, _ = sim.selective_scan(u, np.full((2, 1), 1000.0), -np.ones((1, 1)), B, C)
    np.testing.assert_array_equal(y, [[1000.0], [1000.0]])  # Δ·B·u = 1000, nothing carried
    assert math.exp(-1000.0) == 0.0


@pytest.mark.parametrize("bad, message", [
    # named u, delta and B, C: the shared check would say "v" (Δ ⊙ u) and "q", "k"
    ({"u": np.full((T, DI), 1e200)}, r"^u, delta: the value Δ ⊙ u a channel writes is above "
                                     r"1e150 in size at token t=0"),
    ({"delta": np.full((T, DI), 1e150), "u": np.full((T, DI), 1e300)}, r"^u, delta: "),
    ({"B": np.full((T, N), 1e200)}, r"^B: expected every entry at most 1e150 in size"),
    ({"C": np.full((T, N), 1e200)}, r"^C: expected every entry at most 1e150 in size"),
])
def test_selective_scan_names_the_input_too_large(bad: dict, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Δ ⊙ u = 1e450 no longer warns of an overflow
        with pytest.raises(ValueError, match=message):
            sim.selective_scan(**(GOOD | bad))


def test_mamba1_init_state_refuses_a_huge_size_by_name() -> None:
    with pytest.raises(ValueError, match=r"^d_k: 10{30} is too large; accepted: 1 to 134,217,728"):
        sim.init_state("mamba1", 10**30, 2)
