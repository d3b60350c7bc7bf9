"""The chunkwise form: chunk by chunk == the recurrence, its pieces, and the cost of the three forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lanes import examples
from sim_helpers import make_inputs, make_params

import sim
from sim.chunkwise import CHUNKWISE_RULES, chunkwise_cost, run_chunkwise
from sim.parallel import run_parallel
from sim.scenarios import worked_example

DELTA = ("deltanet", "gated_deltanet", "kda")


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10)


def test_supported_rules() -> None:
    assert CHUNKWISE_RULES == tuple(r for r in sim.RULES if r != "softmax")


@settings(max_examples=examples(300), deadline=None)
@given(rule=st.sampled_from(CHUNKWISE_RULES), T=st.integers(1, 40), C=st.integers(1, 45),
       d_k=st.integers(1, 6), d_v=st.integers(1, 5), seed=st.integers(0, 10_000),
       low=st.sampled_from([0.05, 0.5, 1.0]), with_initial=st.booleans())
def test_chunkwise_equals_recurrent(rule: str, T: int, C: int, d_k: int, d_v: int, seed: int,
                                    low: float, with_initial: bool) -> None:
    q, k, v = make_inputs(T, d_k, d_v, seed)
    params = make_params(rule, T, d_k, seed, low=low)
    if with_initial:
        params["initial_state"] = np.random.default_rng(seed).standard_normal((d_k, d_v))
    recurrent = sim.run(rule, q, k, v, **params)
    chunked = run_chunkwise(rule, q, k, v, chunk_size=C, **params)

    n_chunks = math.ceil(T / C)
    assert chunked.n_chunks == n_chunks
    assert chunked.starts.tolist() == [*range(0, T, C), T]
    assert chunked.outputs.shape == (T, d_v)
    assert chunked.boundary_states.shape == (n_chunks + 1, d_k, d_v)
    assert [a.shape for a in chunked.scores] == [
        (min(C, T - s),) * 2 for s in range(0, T, C)]
    assert_close(chunked.outputs, recurrent.outputs)
    assert_close(chunked.boundary_states[1:], recurrent.states[chunked.starts[1:] - 1])
    assert_close(chunked.boundary_states[0], params.get("initial_state", np.zeros((d_k, d_v))))
    assert_close(chunked.final_state, recurrent.final_state)
    assert_close(chunked.inter + chunked.intra, chunked.outputs)
    if rule in DELTA:
        # the WY/UT form writes exactly what the recurrence writes: β_t (v_t − Sᵀk_t)
        assert_close(chunked.written, params["beta"][:, None] * recurrent.errors)
        assert len(chunked.transforms) == n_chunks


@pytest.mark.parametrize("feature_map", ["identity", "elu+1"])
@pytest.mark.parametrize("C", [1, 2, 4, 9, 20])
def test_linear_options(feature_map: str, C: int) -> None:
    rng = np.random.default_rng(C)
    q, k = rng.uniform(0.1, 1, (9, 4)), rng.uniform(0.1, 1, (9, 4))
    v = rng.standard_normal((9, 3))
    params = {"feature_map": feature_map, "normalize": True,
              "initial_state": rng.standard_normal((4, 3)), "initial_z": rng.uniform(0, 1, 4)}
    recurrent = sim.run("linear", q, k, v, **params)
    chunked = run_chunkwise("linear", q, k, v, chunk_size=C, **params)
    assert_close(chunked.outputs, recurrent.outputs)
    assert_close(chunked.boundary_z[1:], recurrent.z[chunked.starts[1:] - 1])
    assert_close((chunked.inter + chunked.intra) / chunked.normalizers[:, None],
                 chunked.outputs)
    unnormalised = run_chunkwise("linear", q, k, v, chunk_size=C, feature_map=feature_map)
    assert unnormalised.normalizers is None
    assert_close(unnormalised.outputs, run_parallel("linear", q, k, v, feature_map=feature_map))


def test_worked_example_by_hand() -> None:
    s = worked_example()
    # One chunk of two tokens: the masked matrix alone. S = [[2, 4], [0, 4]], qᵀS = (2, 12).
    one = run_chunkwise("linear", s.q, s.k, s.v, chunk_size=2)
    np.testing.assert_array_equal(one.outputs[1], [2.0, 12.0])
    np.testing.assert_array_equal(one.scores[0], [[1.0, 0.0], [1.0, 3.0]])  # q·k₁ = 1, q·k₂ = 3
    np.testing.assert_array_equal(one.inter, 0.0)
    np.testing.assert_array_equal(one.final_state, [[2.0, 4.0], [0.0, 4.0]])
    # Chunks of one: token 2 reads the carried S₁ = k₁v₁ᵀ, (2, 0), plus its own 3·v₂ = (0, 12).
    two = run_chunkwise("linear", s.q, s.k, s.v, chunk_size=1)
    np.testing.assert_array_equal(two.inter[1], [2.0, 0.0])
    np.testing.assert_array_equal(two.intra[1], [0.0, 12.0])
    np.testing.assert_array_equal(two.boundary_states[1], [[2.0, 0.0], [0.0, 0.0]])
    normalised = run_chunkwise("linear", s.q, s.k, s.v, chunk_size=2, normalize=True)
    np.testing.assert_array_equal(normalised.normalizers, [1.0, 4.0])  # q·z = 4 at token 2
    np.testing.assert_array_equal(normalised.outputs[1], [0.5, 3.0])


def test_delta_rule_wy_by_hand() -> None:
    # Two equal unit keys, β = 1: the second write replaces the first under the same key.
    q = k = np.array([[1.0, 0.0], [1.0, 0.0]])
    v = np.array([[2.0, 0.0], [0.0, 4.0]])
    trace = run_chunkwise("deltanet", q, k, v, chunk_size=2, beta=1.0)
    # L = [[0, 0], [1, 0]], T_ut = (I + L)⁻¹ = [[1, 0], [-1, 1]]: u₂ = v₂ − v₁
    np.testing.assert_array_equal(trace.transforms[0], [[1.0, 0.0], [-1.0, 1.0]])
    np.testing.assert_array_equal(trace.written, [[2.0, 0.0], [-2.0, 4.0]])
    np.testing.assert_array_equal(trace.outputs[1], [0.0, 4.0])  # the latest value only
    np.testing.assert_array_equal(trace.final_state, [[0.0, 4.0], [0.0, 0.0]])


@pytest.mark.parametrize("rule,ungated", [("retnet", "linear"), ("mamba2", "linear"),
                                          ("gla", "linear"), ("gated_deltanet", "deltanet"),
                                          ("kda", "deltanet")])
def test_gates_at_one_reduce_to_ungated(rule: str, ungated: str) -> None:
    q, k, v = make_inputs(13, 4, 3, 5)
    gates = {"gamma": 1.0} if rule == "retnet" else {"alpha": 1.0}
    beta = {"beta": np.linspace(0.1, 1.5, 13)} if ungated == "deltanet" else {}
    gated = run_chunkwise(rule, q, k, v, chunk_size=4, **gates, **beta)
    plain = run_chunkwise(ungated, q, k, v, chunk_size=4, **beta)
    assert_close(gated.outputs, plain.outputs)
    assert_close(gated.boundary_states, plain.boundary_states)


@pytest.mark.parametrize("rule", DELTA)
def test_delta_rule_with_zero_beta_never_writes(rule: str) -> None:
    q, k, v = make_inputs(10, 3, 2, 1)
    params = make_params(rule, 10, 3, 1)
    params["beta"] = 0.0
    trace = run_chunkwise(rule, q, k, v, chunk_size=3, **params)
    np.testing.assert_array_equal(trace.boundary_states, 0.0)
    np.testing.assert_array_equal(trace.outputs, 0.0)


def test_orthonormal_keys_delta_writes_what_linear_writes() -> None:
    k = np.eye(4)
    rng = np.random.default_rng(0)
    q, v = rng.standard_normal((4, 4)), rng.standard_normal((4, 3))
    delta = run_chunkwise("deltanet", q, k, v, chunk_size=3, beta=1.0)
    linear = run_chunkwise("linear", q, k, v, chunk_size=3)
    assert_close(delta.outputs, linear.outputs)
    assert_close(delta.written, v)


def test_strong_decay_over_long_chunks_stays_finite() -> None:
    # Products of small gates reach ~1e-80 inside a chunk; nothing is ever divided by them.
    q, k, v = make_inputs(64, 3, 2, 2)
    alpha = np.full((64, 3), 0.05)
    recurrent = sim.run("kda", q, k, v, alpha=alpha, beta=1.0)
    chunked = run_chunkwise("kda", q, k, v, chunk_size=64, alpha=alpha, beta=1.0)
    assert np.all(np.isfinite(chunked.outputs))
    assert_close(chunked.outputs, recurrent.outputs)


def test_bad_input_names_the_argument() -> None:
    q, k, v = make_inputs(5, 2, 2, 0)
    with pytest.raises(ValueError, match="chunk_size"):
        run_chunkwise("linear", q, k, v, chunk_size=0)
    with pytest.raises(ValueError, match="rule"):
        run_chunkwise("softmax", q, k, v, chunk_size=2)
    with pytest.raises(ValueError, match="alpha"):
        run_chunkwise("mamba2", q, k, v, chunk_size=2, alpha=1.5)
    with pytest.raises(ValueError, match="beta"):
        run_chunkwise("deltanet", q, k, v, chunk_size=2)
    with pytest.raises(ValueError, match="gamma: not a parameter"):
        run_chunkwise("linear", q, k, v, chunk_size=2, gamma=0.5)
    with pytest.raises(ValueError, match="k: expected shape"):
        run_chunkwise("linear", q, k[:3], v, chunk_size=2)
    with pytest.raises(ValueError, match="normalize"):
        run_chunkwise("linear", q, np.zeros_like(k), v, chunk_size=2, normalize=True)
    # inputs past 1e150 are refused by name, before any work, as sim.run refuses them
    message = r"^v: expected every entry at most 1e150 in size, got .* at token t=0"
    with pytest.raises(ValueError, match=message):
        sim.run("linear", q, k, v * 1e200)
    with pytest.raises(ValueError, match=message):
        run_chunkwise("linear", q, k, v * 1e200, chunk_size=2)


# ---------------------------------------------------------------------------------------------
# Cost of the three forms, against a literal count.

def literal_counts(T: int, C: int, d_k: int, d_v: int) -> dict[str, int]:
    """Count every multiply-add (2 operations) of each form by walking its loops."""
    counts = dict.fromkeys(("recurrent", "parallel", "chunkwise"), 0)
    for _t in range(T):
        for _i in range(d_k):
            for _j in range(d_v):
                counts["recurrent"] += 2 + 2  # S_ij += k_i v_j; o_j += S_ij q_i
    for _t in range(T):
        for _s in range(T):
            counts["parallel"] += 2 * d_k  # score q_t·k_s (the full square, masked afterwards)
            counts["parallel"] += 2 * d_v  # o_t += A_ts v_s
    peak = 0
    for start in range(0, T, C):
        n = min(C, T - start)
        peak = max(peak, n * n + d_k * d_v)  # this chunk's scores beside the carried state
        for _t in range(n):
            for _s in range(n):
                counts["chunkwise"] += 2 * d_k + 2 * d_v  # intra: score, then blend
            counts["chunkwise"] += 2 * d_k * d_v  # inter: o_t += (S_[c])ᵀ q_t
        for _s in range(n):
            counts["chunkwise"] += 2 * d_k * d_v  # carry: S += k_s v_sᵀ
    counts["chunkwise_numbers"] = peak
    counts["n_chunks"] = len(range(0, T, C))
    return counts


@pytest.mark.parametrize("T,C,d_k,d_v", [(1, 1, 1, 1), (7, 3, 2, 3), (8, 4, 3, 3), (5, 9, 2, 1),
                                         (12, 1, 2, 2), (12, 12, 4, 2), (13, 5, 3, 4)])
def test_cost_formulas_match_a_literal_count(T: int, C: int, d_k: int, d_v: int) -> None:
    cost = chunkwise_cost(T, C, d_k, d_v)
    counts = literal_counts(T, C, d_k, d_v)
    assert cost.recurrent_ops == counts["recurrent"]
    assert cost.parallel_ops == counts["parallel"]
    assert cost.chunkwise_ops == counts["chunkwise"]
    assert cost.chunkwise_numbers == counts["chunkwise_numbers"]
    assert cost.n_chunks == cost.chunkwise_steps == counts["n_chunks"]
    assert (cost.recurrent_numbers, cost.parallel_numbers) == (d_k * d_v, T * T)
    assert (cost.recurrent_steps, cost.parallel_steps) == (T, 1)


def test_cost_matches_the_chunks_a_run_builds() -> None:
    q, k, v = make_inputs(23, 3, 2, 0)
    trace = run_chunkwise("linear", q, k, v, chunk_size=5)
    cost = chunkwise_cost(23, 5, 3, 2)
    scores_numbers = sum(a.size for a in trace.scores)  # Σ n_c²
    assert cost.chunkwise_ops == 2 * (3 + 2) * scores_numbers + 4 * 23 * 3 * 2
    assert cost.chunkwise_numbers == max(a.size for a in trace.scores) + 3 * 2
    assert cost.n_chunks == trace.n_chunks


def test_cost_limits_and_vectorised() -> None:
    T, d = 4096, 64
    # C = T: the parallel form plus reading and carrying the state
    assert chunkwise_cost(T, T, d).chunkwise_ops == (chunkwise_cost(T, T, d).parallel_ops
                                                     + 4 * T * d * d)
    # C = 1: the recurrence plus one 1 × 1 score per token
    assert chunkwise_cost(T, 1, d).chunkwise_ops == (chunkwise_cost(T, 1, d).recurrent_ops
                                                     + 2 * T * 2 * d)
    Ts = np.array([256, 1024, 4096])
    Cs = np.array([[16], [64]])
    cost = chunkwise_cost(Ts, Cs, d)
    assert cost.chunkwise_ops.shape == (2, 3)
    np.testing.assert_array_equal(cost.chunkwise_ops, 2 * Ts * Cs * 2 * d + 4 * Ts * d * d)
    np.testing.assert_array_equal(cost.n_chunks, Ts // Cs)
    np.testing.assert_array_equal(cost.parallel_numbers, np.broadcast_to(Ts * Ts, (2, 3)))
    # chunkwise work grows linearly in T for a fixed C, the parallel form quadratically
    assert cost.chunkwise_ops[0, 2] == 16 * cost.chunkwise_ops[0, 0]
    assert cost.parallel_ops[0, 2] == 256 * cost.parallel_ops[0, 0]
    # the causal half of the parallel form is the attention total of sim.cost
    assert (T * (T + 1) * 2 * d) == sim.cost.cumulative_attention_ops(T, d)


@pytest.mark.parametrize("bad", [0, -3, 2.5, float("nan"), "8", True, [], 2.0**40])
def test_cost_rejects_bad_sizes(bad: object) -> None:
    with pytest.raises(ValueError, match="^C:"):
        chunkwise_cost(16, bad, 4)
    with pytest.raises(ValueError, match="^T:"):
        chunkwise_cost(bad, 4, 4)


# ---------------------------------------------------------------------------------------------
# Expanding transitions (β‖k‖² > 2): the chunkwise form is held to the recurrence, whatever C.

def _scaled_keys(T: int, d: int, norm: float, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q, v = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    return q, norm * sim.l2_normalize(rng.standard_normal((T, d))), v


@pytest.mark.parametrize("C", [1, 4, 16, 64, 128])
@pytest.mark.parametrize("T,d", [(64, 4), (128, 4), (200, 8)])
def test_expanding_delta_rule_stays_exact_where_run_is_finite(T: int, d: int, C: int) -> None:
    # ‖k‖ = 2, β = 1.5: β‖k‖² = 6, every write multiplies the keyed direction by −5. sim.run
    # stays finite (‖o‖ reaches 1e20 … 1e46); the UT transform applied to V and Γ∘K apart lost
    # every digit at C = 64 (relative error 0.12 … 1.3); the row-by-row solve keeps ~1e-14.
    q, k, v = _scaled_keys(T, d, 2.0, T + d)
    recurrent = sim.run("deltanet", q, k, v, beta=1.5)
    assert np.abs(recurrent.outputs).max() > 1e19  # the regime that broke the old form
    chunked = run_chunkwise("deltanet", q, k, v, chunk_size=C, beta=1.5)
    scale = np.abs(recurrent.outputs).max()
    np.testing.assert_allclose(chunked.outputs, recurrent.outputs, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(chunked.written, 1.5 * recurrent.errors, rtol=0,
                               atol=1e-11 * np.abs(recurrent.errors).max())
    np.testing.assert_allclose(chunked.final_state, recurrent.final_state, rtol=0,
                               atol=1e-11 * np.abs(recurrent.final_state).max())


@pytest.mark.parametrize("rule", DELTA)
@pytest.mark.parametrize("C", [1, 3, 16, 64, 200])
def test_expanding_delta_rule_diverges_at_the_token_run_names(rule: str, C: int) -> None:
    # ‖k‖ = 10, β = 2: β‖k‖² = 200. sim.run raises DivergenceError at a token (t = 84 for
    # DeltaNet here, as in the issue); before, C = 64 returned finite wrong numbers and C = 16
    # named a later token.
    T, d = 200, 4
    q, k, v = _scaled_keys(T, d, 10.0, 0)
    params = {"beta": 2.0} | ({"alpha": 1.0} if rule != "deltanet" else {})
    with pytest.raises(sim.DivergenceError) as run_error:
        sim.run(rule, q, k, v, **params)
    with pytest.raises(sim.DivergenceError) as chunk_error:
        run_chunkwise(rule, q, k, v, chunk_size=C, **params)
    assert chunk_error.value.token == run_error.value.token
    assert str(chunk_error.value) == str(run_error.value)
    if rule == "deltanet":
        assert run_error.value.token == 84
        assert "β‖k‖² = 200 > 2" in str(run_error.value)


def test_a_state_that_passes_1e150_inside_a_chunk_is_caught_there() -> None:
    # Token 1 writes 2e150 into row 0 (‖S‖ ≈ 2.8e150), token 2 (a unit key along row 0, β = 1,
    # v = 0) erases the row again: the chunk's end state is small, but sim.run stops at t = 1,
    # and so must every C.
    k = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    q, v = np.ones((3, 2)), np.array([[1.0, 1.0], [1e150, 1e150], [0.0, 0.0]])
    beta = np.array([1.0, 2.0, 1.0])
    with pytest.raises(sim.DivergenceError) as run_error:
        sim.run("deltanet", q, k, v, beta=beta)
    assert run_error.value.token == 1
    for C in (1, 2, 3):
        with pytest.raises(sim.DivergenceError) as chunk_error:
            run_chunkwise("deltanet", q, k, v, chunk_size=C, beta=beta)
        assert chunk_error.value.token == 1


@pytest.mark.parametrize("rule", ["linear", "retnet", "gla"])
def test_other_rules_diverge_at_the_token_run_names(rule: str) -> None:
    T, d = 40, 3
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    v = rng.standard_normal((T, d)) * np.logspace(0, 149.9, T)[:, None]  # up to ~1e150
    params = {"retnet": {"gamma": 1.0}, "gla": {"alpha": 1.0}}.get(rule, {})
    with pytest.raises(sim.DivergenceError) as run_error:
        sim.run(rule, q, k, v, **params)
    for C in (1, 7, 40):
        with pytest.raises(sim.DivergenceError) as chunk_error:
            run_chunkwise(rule, q, k, v, chunk_size=C, **params)
        assert chunk_error.value.token == run_error.value.token


def test_cost_is_exact_at_the_largest_sizes() -> None:
    # T = C = 2³¹, d = 1: parallel_ops = 2·(2³¹)²·2 = 2⁶⁴, which int64 wrapped to 0.
    cost = chunkwise_cost(2**31, 2**31, 1)
    assert cost.parallel_ops == 2**64 and type(cost.parallel_ops) is int
    assert cost.chunkwise_ops == 2 * 2 * 2**62 + 4 * 2**31  # one chunk: 2⁶⁴ + 2³³
    assert cost.recurrent_ops == 2**33 and cost.parallel_numbers == 2**62
    assert cost.chunkwise_numbers == 2**62 + 1 and cost.n_chunks == 1
    # every size at its largest: 2 · 2⁶² · 2³² = 2⁹⁵, chunkwise 2⁹⁵ + 4 · 2³¹ · 2⁶² = 2⁹⁶
    top = chunkwise_cost(2**31, 2**31, 2**31, 2**31)
    assert (top.recurrent_ops, top.parallel_ops, top.chunkwise_ops) == (2**95, 2**95, 2**96)
    assert (top.recurrent_numbers, top.chunkwise_numbers) == (2**62, 2**63)
    # arrays beyond int64 hold Python ints, the same numbers as the scalars
    many = chunkwise_cost(np.array([2**31, 2**30]), 2**31, 1)
    assert many.parallel_ops.tolist() == [2**64, 2**62]
    assert all(type(x) is int for x in many.parallel_ops.tolist())


@pytest.mark.parametrize("T", [2**27, 2**27 + 1, 2**28, 2**31])
def test_cost_is_exact_past_2_27_tokens_at_d_128(T: int) -> None:
    # d = 128: parallel_ops = 2·T²·256 = 2⁶³ at T = 2²⁷, where int64 turned negative.
    C, d = 64, 128
    full, rest = divmod(T, C)
    expected = {"parallel_ops": 2 * T * T * 256, "recurrent_ops": 4 * T * d * d,
                "chunkwise_ops": 2 * 256 * (full * C * C + rest * rest) + 4 * T * d * d}
    scalar = chunkwise_cost(T, C, d)
    array = chunkwise_cost(np.array([T, 1024]), C, d)
    for field, value in expected.items():
        assert getattr(scalar, field) == value
        assert getattr(array, field).tolist()[0] == value
    if T == 2**27:
        assert scalar.parallel_ops == 2**63
    assert chunkwise_cost(np.array([1024]), C, d).parallel_ops.dtype == np.int64  # small: int64


def test_cost_refuses_a_broadcast_too_large_before_any_work() -> None:
    with pytest.raises(ValueError, match=r"^T, C, d_k, d_v: the entries of the broadcast result "
                                         r"\(shape \(2048, 2048\)\) would be 4,194,304; accepted: "
                                         r"at most 1,048,576"):
        chunkwise_cost(np.ones(2048), np.ones((2048, 1)), 4)
    with pytest.raises(ValueError, match=r"^T: expected whole numbers from 1 to 2³¹, got 2147483649"):
        chunkwise_cost(2**31 + 1, 4, 4)
    with pytest.raises(ValueError, match=r"^d_v: expected whole numbers from 1 to 2³¹, got \(1\+2j\)"):
        chunkwise_cost(4, 4, 4, 1 + 2j)
