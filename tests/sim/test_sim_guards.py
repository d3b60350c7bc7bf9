"""Sim guards (issue 18): each case the independent check found, refused by name before any work
(a ValueError naming the argument and the accepted range), never a MemoryError, a numpy
warning, a NaN passed on or a long run. "Before any work" is shown by counting: the numpy
allocation a case would need is never asked for (`_no_allocation`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sim
from sim import log_linear, parallel, random_features, recall, scenarios, selective_ssm

Q3 = np.ones((3, 2))


class _Counted:
    """Counts calls of a numpy function while a case runs (np.zeros, np.ones, ...)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module, name: str) -> None:
        self.calls = 0
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def _refused(call, pattern: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning fails the test
        with pytest.raises(ValueError, match=pattern) as info:
            call()
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    return message


@pytest.mark.parametrize("x", [Q3 + 1j, (Q3 + 0j).tolist(), [[1, 2j], [3, 4], [5, 6]]],
                         ids=["array", "list", "mixed"])
@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_complex_q_k_v_are_refused_by_name(name: str, x) -> None:
    args = {"q": Q3, "k": Q3 / 2, "v": Q3} | {name: x}
    for call in (lambda: sim.run("linear", **args),
                 lambda: sim.run_chunkwise("linear", chunk_size=2, **args),
                 lambda: parallel.run_parallel("linear", **args)):
        _refused(call, rf"^{name}: expected an array of real numbers, got complex numbers")
    state = sim.init_state("deltanet", 2, 2)
    _refused(lambda: sim.step("deltanet", state, **{n: a[0] for n, a in args.items()}, beta=1.0),
             rf"^{name}: expected an array of real numbers, got complex numbers")


@pytest.mark.parametrize("gate", [np.complex128(0.5 + 0.1j), "0.5", None, True])
def test_step_gates_refuse_complex_text_none_and_bool(gate) -> None:
    state = sim.init_state("gated_deltanet", 2, 2)
    _refused(lambda: sim.step("gated_deltanet", state, Q3[0], Q3[0] / 2, Q3[0], alpha=gate,
                              beta=0.5), r"^alpha: (expected a number in \(0, 1\], got |rule "
                                         r"'gated_deltanet' needs alpha)")


def test_text_numbers_are_not_numbers() -> None:
    _refused(lambda: sim.run("linear", [["1", "2"]], [[1, 2]], [[1, 2]]),
             r"^q: expected an array of real numbers, got text")


def test_init_state_of_a_million_square_is_refused_before_allocating(monkeypatch) -> None:
    zeros = _Counted(monkeypatch, np, "zeros")
    message = _refused(lambda: sim.init_state("linear", 10**6, 10**6),
                       r"^d_k, d_v: a 1,000,000 × 1,000,000 state's numbers would be "
                       r"1,000,000,000,000; accepted: at most 134,217,728")
    assert zeros.calls == 0, message
    _refused(lambda: sim.init_state("kda", 10**30, 2), r"^d_k: 10{30} is too large; accepted: 1 to")


def test_causal_mask_of_a_million_tokens_is_refused_before_allocating(monkeypatch) -> None:
    ones = _Counted(monkeypatch, np, "ones")
    _refused(lambda: parallel.causal_mask(10**6),
             r"^T: the causal mask's entries \(T² = 1,000,000²\) would be 1,000,000,000,000")
    assert ones.calls == 0
    assert parallel.causal_mask(3).tolist() == [[True, False, False], [True, True, False],
                                                [True, True, True]]


@pytest.mark.parametrize("kind", recall.KEY_KINDS)
def test_make_keys_too_many_is_refused_before_drawing(monkeypatch, kind: str) -> None:
    draws = _Counted(monkeypatch, np.random, "default_rng")
    _refused(lambda: recall.make_keys(kind, 10**6, 10**6), r"^n, d_k: the keys' numbers")
    _refused(lambda: recall.make_keys(kind, 10**9, 4), r"^n: 1000000000 is too large")
    assert draws.calls == 0


def test_make_keys_needs_a_bounded_basis() -> None:
    _refused(lambda: recall.make_keys("orthonormal", 2, 5000),
             r"^d_k: 5000 is too large; accepted: 1 to 2,048")
    assert recall.make_keys("random", 2, 5000).shape == (2, 5000)  # no basis needed


def test_draw_projection_of_a_billion_rows_is_refused_before_drawing(monkeypatch) -> None:
    draws = _Counted(monkeypatch, np.random, "default_rng")
    _refused(lambda: random_features.draw_projection(10**9, 8, 0), r"^m: 1000000000 is too large")
    _refused(lambda: random_features.draw_projection(10**7, 64, 0),
             r"^m, d: the Gaussian draw's numbers")
    assert draws.calls == 0


@pytest.mark.parametrize("ms, seeds, pattern", [
    ([4], range(10**6), r"^seeds: expected a non-empty list of at most 1,024 integers"),
    (list(range(1, 10**5 + 1)), [0], r"^ms: expected a non-empty list of at most 1,024 integers"),
    ([10**6], range(100), r"^ms, seeds: the projections' numbers"),
    ([2**40], [0], r"^ms: expected a non-empty list of at most 1,024 integers from 1 to"),
])
def test_approximation_error_refuses_unbounded_work_before_any_draw(monkeypatch, ms, seeds,
                                                                    pattern) -> None:
    draws = _Counted(monkeypatch, random_features, "draw_projection")
    q, K = np.ones(4) / 2, np.eye(4)
    _refused(lambda: sim.approximation_error(q, K, ms, list(seeds)), pattern)
    assert draws.calls == 0


@pytest.mark.parametrize("eps", [float("nan"), "tiny", None, 0.0, -1.0, 1j])
def test_l2_normalize_refuses_a_bad_eps(eps) -> None:
    _refused(lambda: sim.l2_normalize(np.ones(3), eps=eps),
             r"^eps: expected a number in \(0, 1e300\], got ")


def test_l2_normalize_of_huge_and_tiny_rows_is_unit_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sim.l2_normalize(np.array([[1e300, 1e300], [3e-200, 4e-200], [3.0, 4.0]]), eps=1e-300)
    np.testing.assert_allclose(out, [[2**-0.5, 2**-0.5], [0.6, 0.8], [0.6, 0.8]], rtol=1e-15)


@pytest.mark.parametrize("alpha, beta, name", [(float("nan"), 0.5, "alpha"),
                                               (0.9, float("nan"), "beta"),
                                               (0.9, "0.5", "beta"), (0.9, 2.5, "beta"),
                                               (0.0, 0.5, "alpha"), (1j, 0.5, "alpha")])
def test_draw_gates_never_passes_a_nan_on(alpha, beta, name: str) -> None:
    _refused(lambda: scenarios.draw_gates(8, 2, alpha, beta), rf"^{name}: expected a number in ")


def test_favor_features_at_1e200_is_quiet_and_finite_or_a_message() -> None:
    W = random_features.draw_projection(4, 2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # before: "overflow encountered" from numpy
        tiny = random_features.favor_features(np.array([1e200, 0.0]), W)
    # exp(ω·x − |x|²/2) with |x|² = 1e400: the correctly rounded value is 0 for every feature
    np.testing.assert_array_equal(tiny, np.zeros(4))
    message = _refused(lambda: random_features.favor_features(np.array([1e10, 1e10]), W * 1e300),
                       r"^x: φ\(x\) = exp\(W x − \|x\|²/2\) / √m leaves float64's range")
    assert "softmax_weights_favor" in message
    np.testing.assert_allclose(random_features.favor_features(np.array([1.0, 0.5]), W),
                               np.exp(W @ [1.0, 0.5] - 0.625) / 2, rtol=1e-15)


def test_softmax_weights_beyond_float64_are_refused() -> None:
    q, K = np.array([1e150, 0.0]), np.array([[1e150, 0.0], [0.0, 1.0]])
    _refused(lambda: random_features.softmax_weights_exact(q, K, scale=1e12),
             r"^q, K, scale: a score")
    _refused(lambda: random_features.softmax_weights_exact(q * 1e10, K), r"^q: expected every "
                                                                         r"entry at most 1e150")


def test_run_refuses_a_kept_history_too_large_before_running(monkeypatch) -> None:
    empty = _Counted(monkeypatch, np, "empty")
    # T = 2^13 tokens at d_k = d_v = 2^10: 2^33 multiply-adds, twice the budget (one number
    # repeated: the inputs take no memory)
    big = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(2**13, 2**10), strides=(0, 0))
    _refused(lambda: sim.run("linear", big, big, big),
             r"^q, k, v: the multiply-adds of a run of T = 8,192 tokens would be 8,589,934,592; "
             r"accepted: at most 4,294,967,296")
    assert empty.calls == 0
    small = big[:2**10, :2**9]  # 2^28 multiply-adds: within the budget, but 2^28 kept numbers
    _refused(lambda: sim.run("linear", small, small, small), r"^keep_states: the numbers kept")
    assert empty.calls == 0


def test_recall_curve_and_relative_error_are_bounded() -> None:
    _refused(lambda: recall.recall_curve("linear", "random", 4, [10**9]), r"^ns: 1000000000 is too")
    _refused(lambda: recall.recall_curve("linear", "random", 4, [1] * (2**20 + 1)),
             r"^ns: the number of points would be")
    _refused(lambda: recall.relative_error(np.ones((2, 2)), np.zeros((2, 2))),
             r"^target: every row needs a non-zero norm")
    _refused(lambda: recall.relative_error(np.ones((2, 2)), np.ones((3, 2))),
             r"^target: expected the shape of retrieved \(2, 2\)")
    np.testing.assert_array_equal(recall.relative_error([[1.0, 1.0]], [[2.0, 2.0]]), [0.5])


# ---------------------------------------------------------------------------------------------
# The rules added after issue 18 (fuzz 2026-12-03 N3) take sim.run's budget too: MAX_TOKENS,
# MAX_WORK, MAX_NUMBERS. "Before allocating" is held strictly: np.empty, np.zeros and np.ones
# raise while a case runs, so the unguarded code fails at once instead of running for minutes.

def _same(shape: tuple[int, ...], value: float = 0.5) -> np.ndarray:
    """An array of `shape` holding one number (zero strides): a huge input that takes no memory."""
    return np.lib.stride_tricks.as_strided(np.full(1, value), shape=shape,
                                           strides=(0,) * len(shape))


@pytest.fixture
def no_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("empty", "zeros", "ones"):
        def refuse(*args, _name=name, **kwargs):
            raise AssertionError(f"np.{_name}{args} was asked for before the size check")
        monkeypatch.setattr(np, name, refuse)


TOO_MANY = 2**21  # tokens, twice MAX_TOKENS
X = _same((TOO_MANY, 1))
K3, V3 = _same((TOO_MANY, 1, 1)), _same((TOO_MANY, 1, 1))  # DeltaProduct: n_h = 1
NEW_RULES_AT_2_21 = {
    "rwkv7": lambda: sim.run("rwkv7", X, X, X, alpha=0.9, beta=0.5),
    "rwkv6": lambda: sim.run("rwkv6", X, X, X, alpha=0.9, bonus=0.5),
    "mamba1": lambda: sim.run("mamba1", X, X, X, alpha=0.9, keep_states=False),
    "deltaproduct": lambda: sim.run("deltaproduct", X, K3, V3, alpha=0.9, beta=0.5),
    "log_linear": lambda: sim.run("log_linear", X, X, X, alpha=0.5, keep_states=False),
    "log_linear chunkwise": lambda: log_linear.run_chunkwise(X, X, X, alpha=0.5, chunk_size=4),
}


@pytest.mark.parametrize("call", NEW_RULES_AT_2_21.values(), ids=NEW_RULES_AT_2_21)
def test_new_rules_refuse_t_past_max_tokens_before_allocating(call, no_allocation) -> None:
    _refused(call, r"^q: the number of tokens T would be 2,097,152; accepted: at most 1,048,576$")


def test_selective_scan_refuses_t_past_max_tokens_before_allocating(no_allocation) -> None:
    _refused(lambda: selective_ssm.selective_scan(X, X, [[-1.0]], X, X),
             r"^u: the number of tokens T would be 2,097,152; accepted: at most 1,048,576$")


def test_selective_scan_refuses_its_kept_states_before_allocating(no_allocation) -> None:
    # the finding: T = 200,000, d_inner = N = 64 was a bare 6.10 GiB MemoryError after 8 s
    u = _same((200_000, 64))
    A = -np.linspace(1.0, 2.0, 64 * 64).reshape(64, 64)
    B = _same((200_000, 64))
    _refused(lambda: selective_ssm.selective_scan(u, u, A, B, B),
             r"^u, A: the states h \(T, d_inner, N\) of T = 200,000 tokens would be 819,200,000; "
             r"accepted: at most 134,217,728$")


def test_log_linear_keep_states_counts_every_level(no_allocation) -> None:
    # the finding: (4096, 96) inputs asked numpy for (4096, 13, 96, 96) levels, 3.66 GiB
    x = _same((4096, 96), 0.01)
    _refused(lambda: sim.run("log_linear", x, x, x, alpha=0.5),
             r"^keep_states: the numbers kept over T = 4,096 tokens \(pass keep_states=False to "
             r"keep only the final state\) would be 528,482,304; accepted: at most 134,217,728$")


def test_new_rules_refuse_work_past_max_work(no_allocation) -> None:
    x = _same((2**11, 2**11))  # 2^33 multiply-adds, twice MAX_WORK
    gates = {"rwkv7": {"alpha": 0.9, "beta": 0.5}, "rwkv6": {"alpha": 0.9, "bonus": 0.5},
             "log_linear": {"alpha": 0.5}}
    for rule, given in gates.items():
        _refused(lambda r=rule, g=given: sim.run(r, x, x, x, keep_states=False, **g),
                 r"^q, k, v: the multiply-adds of a run of T = 2,048 tokens would be ")
    # DeltaProduct does n_h delta steps per token: T·n_h·d_k·d_v = 32·33·2^22, past 2^32 only
    # because of n_h
    q, k = _same((32, 2**11)), _same((32, 33, 2**11))
    _refused(lambda: sim.run("deltaproduct", q, k, k, alpha=0.9, beta=0.5, keep_states=False),
             r"^q, k, v: the multiply-adds of a run of T = 32 tokens would be 4,429,185,024; "
             r"accepted: at most 4,294,967,296$")


def test_mamba1_refuses_its_per_cell_decays_when_states_are_not_kept(no_allocation) -> None:
    x = _same((2**12, 2**8))  # α (T, d_k, d_v) alone is 2^28 numbers
    _refused(lambda: sim.run("mamba1", x, x, x, alpha=0.9, keep_states=False),
             r"^alpha: the per-cell decays \(T, d_k, d_v\) of T = 4,096 tokens would be "
             r"268,435,456; accepted: at most 134,217,728$")
