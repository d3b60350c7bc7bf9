"""Log-linear attention: worked example, FLA's level masks, Mamba-2 at λ = 1, chunkwise."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import make_inputs

import sim
from sim import log_linear
from sim.log_linear import LevelState, LevelTrace


def _params(T: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"alpha": rng.uniform(0.3, 1.0, T),
            "level_weights": rng.uniform(0.0, 2.0, (T, log_linear.n_levels(T)))}


def test_worked_example() -> None:
    q = np.ones((3, 2))
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]])
    lam = np.array([[1.0, 7.0, 7.0], [1.0, 2.0, 7.0], [1.0, 9.0, 10.0]])  # L = ⌈log₂3⌉ + 1 = 3
    trace = sim.run("log_linear", q, k, v, alpha=[1.0, 0.5, 0.5], level_weights=lam)
    # levels ℓ(t, s) = bit_length(t XOR s): ℓ(1, 0) = 1; ℓ(2, 0) = bl(2) = 2, ℓ(2, 1) = bl(3) = 2
    # t = 0: o = λ⁰ (q·k₀) v₀ = (1, 0)
    # t = 1: o = λ⁰ (q·k₁) v₁ + λ¹ a₁ (q·k₀) v₀ = (0, 2) + 2·½·(1, 0) = (1, 2)
    # t = 2: o = λ⁰ (q·k₂) v₂ + λ² [a₁a₂ (q·k₀) v₀ + a₂ (q·k₁) v₁]
    #          = 2·(4, 4) + 10·[¼·(1, 0) + ½·(0, 2)] = (8, 8) + (2.5, 10) = (10.5, 18)
    #   level 1 is empty at t = 2, so its weight 9 is never used (nor the 7s)
    np.testing.assert_array_equal(trace.outputs, [[1.0, 0.0], [1.0, 2.0], [10.5, 18.0]])
    np.testing.assert_array_equal(trace.counts[2], [1, 0, 2])
    np.testing.assert_array_equal(trace.levels[2, 2], [[0.25, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(trace.levels[2, 0], np.outer(k[2], v[2]))
    # the levels' sum is the Mamba-2 state; λ = 1 reads it: qᵀS₂ = ¼(1, 0) + ½(0, 2) + 2(4, 4)
    mamba = sim.run("log_linear", q, k, v, alpha=[1.0, 0.5, 0.5])
    np.testing.assert_array_equal(mamba.outputs[2], [8.25, 9.0])
    np.testing.assert_array_equal(trace.states, mamba.states)


@pytest.mark.parametrize("T, L", [(1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (8, 4), (9, 5),
                                  (1024, 11), (1025, 12)])
def test_number_of_levels(T: int, L: int) -> None:
    assert log_linear.n_levels(T) == L


def _fla_level_masks(T: int, L: int) -> np.ndarray:
    """fla-org/flash-linear-attention fla/ops/log_linear_attn/naive.py `construct_level_mask`:
    level 0 is the diagonal; level ℓ ≥ 1 holds (t, s) with t mod 2^ℓ ≥ 2^(ℓ−1),
    s mod 2^ℓ < 2^(ℓ−1) and t div 2^ℓ = s div 2^ℓ."""
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]
    masks = [t == s]
    for ell in range(1, L):
        masks.append((t % (1 << ell) >= (1 << (ell - 1))) & (s % (1 << ell) < (1 << (ell - 1)))
                     & (t // (1 << ell) == s // (1 << ell)))
    return np.array(masks)  # (L, T, T)


def _naive_log_linear(q, k, v, g, level_scales):
    """FLA's naive form: H = Σ_ℓ exp(segsum(g)) ⊙ mask_ℓ ⊙ λ^{(ℓ)}, o = (H ⊙ QKᵀ) V, with the
    segment sums written out as a loop over s < r ≤ t."""
    T, L = level_scales.shape
    masks = _fla_level_masks(T, L)
    H = np.zeros((T, T))
    for t in range(T):
        for s in range(t + 1):
            (ell,) = np.flatnonzero(masks[:, t, s])  # exactly one level holds (t, s)
            H[t, s] = level_scales[t, ell] * np.exp(g[s + 1:t + 1].sum())
    return (H * (q @ k.T)) @ v


@pytest.mark.parametrize("T, seed", [(1, 0), (2, 1), (7, 2), (16, 3), (37, 4)])
def test_recurrent_equals_the_parallel_form(T: int, seed: int) -> None:
    q, k, v = make_inputs(T, 3, 2, seed)
    p = _params(T, seed)
    trace = sim.run("log_linear", q, k, v, **p)
    reference = _naive_log_linear(q, k, v, np.log(p["alpha"]), p["level_weights"])
    np.testing.assert_allclose(trace.outputs, reference, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(log_linear.run_parallel(q, k, v, **p), reference, rtol=1e-11,
                               atol=1e-12)
    level = log_linear.fenwick_levels(T)  # bit_length(t XOR s) is FLA's mask index
    masks = _fla_level_masks(T, log_linear.n_levels(T))
    assert np.array_equal(masks.any(axis=0), level >= 0)
    assert np.array_equal(np.where(level >= 0, masks.argmax(axis=0), -1), level)


def test_levels_hold_the_fenwick_buckets() -> None:
    T = 23
    q, k, v = make_inputs(T, 2, 2, 5)
    trace = sim.run("log_linear", q, k, v, alpha=1.0)
    level = log_linear.fenwick_levels(T)
    for t in range(T):
        for ell in range(trace.counts.shape[1]):
            held = np.flatnonzero(level[t] == ell)  # the tokens s with ℓ(t, s) = ℓ
            assert trace.counts[t, ell] == held.size
            expected = sum((np.outer(k[s], v[s]) for s in held), np.zeros((2, 2)))
            np.testing.assert_allclose(trace.levels[t, ell], expected, rtol=1e-12, atol=1e-14)
        assert trace.counts[t].sum() == t + 1


def test_all_weights_one_is_mamba2() -> None:
    q, k, v = make_inputs(40, 4, 3, 6)
    alpha = np.random.default_rng(6).uniform(0.2, 1.0, 40)
    trace = sim.run("log_linear", q, k, v, alpha=alpha)
    mamba = sim.run("mamba2", q, k, v, alpha=alpha)
    np.testing.assert_allclose(trace.outputs, mamba.outputs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trace.states, mamba.states, rtol=1e-12, atol=1e-12)
    weighted = sim.run("log_linear", q, k, v, alpha=alpha, level_weights=_params(40, 6)["level_weights"])
    assert not np.allclose(weighted.outputs, mamba.outputs)


def test_run_and_step_agree_exactly() -> None:
    T = 13
    q, k, v = make_inputs(T, 3, 2, 7)
    p = _params(T, 7)
    trace = sim.run("log_linear", q, k, v, **p)
    assert isinstance(trace, LevelTrace)
    state = sim.init_state("log_linear", 3, 2)
    assert isinstance(state, LevelState) and state.numbers == 0
    for t in range(T):
        s = sim.step("log_linear", state, q[t], k[t], v[t], alpha=p["alpha"][t],
                     level_weights=p["level_weights"][t])
        assert np.array_equal(s.output, trace.outputs[t])
        assert np.array_equal(s.state.S, trace.states[t])
        n = len(s.state.levels)
        assert n == t.bit_length() + 1
        assert np.array_equal(np.array(s.state.levels), trace.levels[t, :n])
        assert np.array_equal(s.state.counts, trace.counts[t, :n])
        state = s.state
    assert state.numbers == 5 * 3 * 2  # O(log T) matrices: levels 0..bit_length(12) = 0..4
    lean = sim.run("log_linear", q, k, v, **p, keep_states=False)
    assert lean.states is None and lean.levels is None
    assert np.array_equal(lean.outputs, trace.outputs)
    assert np.array_equal(lean.final_state, trace.states[-1])


@pytest.mark.parametrize("C", [1, 2, 4, 8, 64])
@pytest.mark.parametrize("T", [1, 5, 16, 29])
def test_chunkwise_equals_the_recurrence(T: int, C: int) -> None:
    q, k, v = make_inputs(T, 3, 2, T + C)
    p = _params(T, T + C)
    trace = sim.run("log_linear", q, k, v, **p)
    chunks = log_linear.run_chunkwise(q, k, v, **p, chunk_size=C)
    np.testing.assert_allclose(chunks.outputs, trace.outputs, rtol=1e-11, atol=1e-12)
    np.testing.assert_array_equal(chunks.outputs, chunks.inter + chunks.intra)
    assert len(chunks.boundary_levels) == len(chunks.starts) - 1
    if T > C:  # earlier chunks reach later ones only through the chunk-level states
        assert np.abs(chunks.inter[C:]).max() > 0
    np.testing.assert_array_equal(chunks.inter[:C], 0.0)


def test_bad_input_is_refused_by_name() -> None:
    q, k, v = make_inputs(5, 2, 2, 0)
    with pytest.raises(ValueError, match=r"^level_weights: expected a float or an array of shape "
                                         r"\(T, L\) with L = ⌈log₂ T⌉ \+ 1 = 4 = \(5, 4\), got shape \(5, 3\)"):
        sim.run("log_linear", q, k, v, alpha=0.5, level_weights=np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"^level_weights: expected every value in \[0, 1e150\], got -1.0"):
        sim.run("log_linear", q, k, v, alpha=0.5, level_weights=-1.0)
    with pytest.raises(ValueError, match=r"^alpha: expected every value in \(0, 1\], got 2.0"):
        sim.run("log_linear", q, k, v, alpha=2.0)
    with pytest.raises(ValueError, match=r"^initial_state: not a parameter of rule 'log_linear'"):
        sim.run("log_linear", q, k, v, alpha=0.5, initial_state=np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"^chunk_size: expected a power of two .* got 3"):
        log_linear.run_chunkwise(q, k, v, alpha=0.5, chunk_size=3)
    state = sim.init_state("log_linear", 2, 2)
    for t in range(2):
        state = sim.step("log_linear", state, q[t], k[t], v[t], alpha=0.5).state
    with pytest.raises(ValueError, match=r"^level_weights: expected .* at least 3 levels at this "
                                         r"token, got shape \(1,\)"):
        sim.step("log_linear", state, q[2], k[2], v[2], alpha=0.5, level_weights=[1.0])
    with pytest.raises(ValueError, match=r"^state: expected a LevelState"):
        sim.step("log_linear", sim.init_state("gla", 2, 2), q[0], k[0], v[0], alpha=0.5)


@pytest.mark.parametrize("call, message", [
    # numpy's "Maximum allowed dimension exceeded" before: the size is refused before np.zeros
    (lambda: log_linear.init_state(10**30, 2), r"^d_k: 10{30} is too large; accepted: 1 to 134,217,728"),
    (lambda: sim.init_state("log_linear", 2**20, 2**20), r"^d_k, d_v: a 1,048,576 × 1,048,576"),
    (lambda: log_linear.fenwick_levels(float("nan")), r"^T: expected a positive integer"),
    (lambda: log_linear.fenwick_levels("abc"), r"^T: expected a positive integer"),
    (lambda: log_linear.fenwick_levels(-3), r"^T: expected a positive integer"),
    (lambda: log_linear.fenwick_levels(2**20), r"^T: the \(T, T\) levels of T = 1,048,576 tokens"),
])
def test_sizes_are_refused_before_any_work(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
    np.testing.assert_array_equal(log_linear.fenwick_levels(3),
                                  [[0, -1, -1], [1, 0, -1], [2, 2, 0]])
