"""Every bad-input path: a ValueError that names the argument and what is accepted."""

from __future__ import annotations

import numpy as np
import pytest

import sim
from sim.parallel import run_parallel
from sim.recall import make_keys, recall, recall_curve

T, DK, DV = 4, 3, 2
Q, K, V = np.ones((T, DK)), np.ones((T, DK)) / np.sqrt(DK), np.ones((T, DV))
NAN_K = K.copy()
NAN_K[2, 1] = np.nan
S = sim.init_state("kda", DK, DV)
x3, x2 = np.ones(DK), np.ones(DV)

BAD_RUNS = [
    (("attention", Q, K, V), {}, r"^rule: unknown value 'attention'; accepted: softmax, linear"),
    (("linear", Q[:, :2], K, V), {}, r"^k: expected shape \(T, d_k\) = \(4, 2\), got shape \(4, 3\)"),
    (("linear", Q, K, V[:3]), {}, r"^v: expected shape \(T, d_v\)"),
    (("linear", Q[0], K, V), {}, r"^q: expected shape \(T, d_k\)"),
    (("linear", np.ones((0, 3)), K, V), {}, r"^q: expected shape"),
    (("linear", Q, NAN_K, V), {}, r"^k: expected finite numbers, got nan at index \(2, 1\)"),
    (("linear", Q, K, [["a", "b"]] * 4), {}, r"^v: expected an array of real numbers"),
    (("retnet", Q, K, V), {}, r"^gamma: rule 'retnet' needs gamma"),
    (("retnet", Q, K, V), {"gamma": 0.0}, r"^gamma: expected a number in \(0, 1\], got 0.0"),
    (("retnet", Q, K, V), {"gamma": 1.5}, r"^gamma: expected a number in \(0, 1\]"),
    (("mamba2", Q, K, V), {"alpha": [0.5, 0.5, 1.2, 0.5]}, r"^alpha: expected every value in \(0, 1\], got 1.2 at index 2"),
    (("mamba2", Q, K, V), {"alpha": np.ones(3)}, r"^alpha: expected a float or an array of shape \(T,\) = \(4,\)"),
    (("gla", Q, K, V), {"alpha": np.ones(T)}, r"^alpha: expected a float or an array of shape \(T, d_k\)"),
    (("gla", Q, K, V), {"alpha": float("nan")}, r"^alpha: expected every value in \(0, 1\]"),
    (("deltanet", Q, K, V), {"beta": 2.5}, r"^beta: expected every value in \[0, 2\], got 2.5"),
    (("deltanet", Q, K, V), {"beta": -0.1}, r"^beta: expected every value in \[0, 2\]"),
    (("kda", Q, K, V), {"beta": 0.5}, r"^alpha: rule 'kda' needs alpha"),
    (("linear", Q, K, V), {"beta": 0.5}, r"^beta: not a parameter of rule 'linear'; accepted: feature_map"),
    (("linear", Q, K, V), {"feature_map": "relu"}, r"^feature_map: unknown value 'relu'; accepted: identity, elu\+1"),
    (("linear", Q, K, V), {"normalize": "yes"}, r"^normalize: expected True or False"),
    (("linear", Q, K, V), {"keep_states": 1}, r"^keep_states: expected True or False"),
    (("deltanet", Q, K, V), {"beta": 1.0, "initial_state": np.ones((2, 2))}, r"^initial_state: expected shape \(d_k, d_v\) = \(3, 2\)"),
    (("softmax", Q, K, V), {"scale": -1.0}, r"^scale: expected a number in \[0"),
    (("softmax", Q, K, V), {"initial_state": np.ones((3, 2))}, r"^initial_state: not a parameter of rule 'softmax'"),
    (("linear", -Q, K, V), {"normalize": True}, None),  # fine: scores negative but non-zero
]


@pytest.mark.parametrize("args, params, message", BAD_RUNS)
def test_bad_run_inputs(args, params, message) -> None:
    if message is None:
        sim.run(*args, **params)
        return
    with pytest.raises(ValueError, match=message):
        sim.run(*args, **params)
    if args[0] in sim.RULES and "keep_states" not in params and "normalize" not in params:
        with pytest.raises(ValueError, match=message):
            run_parallel(*args, **params)


def test_normalised_zero_denominator_is_explained() -> None:
    with pytest.raises(ValueError, match=r"^normalize: φ\(q\)·z = 0 at token t=0"):
        sim.run("linear", np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]]), np.ones((1, 2)),
                normalize=True)


BAD_STEPS = [
    (("nope", S, x3, x3, x2), {}, r"^rule: unknown value 'nope'"),
    (("kda", S, np.ones(4), x3, x2), {"alpha": 0.5, "beta": 0.5}, r"^q: expected shape \(3,\), got shape \(4,\)"),
    (("kda", S, x3, x3, np.ones(3)), {"alpha": 0.5, "beta": 0.5}, r"^v: expected shape \(2,\)"),
    (("kda", S, x3, np.array([1.0, np.inf, 0]), x2), {"alpha": 0.5, "beta": 0.5}, r"^k: expected finite numbers, got inf at index 1"),
    (("kda", S, x3, x3, x2), {"alpha": np.array([0.5, 0.0, 1.0]), "beta": 0.5}, r"^alpha: expected every value in \(0, 1\], got 0.0 at index 1"),
    (("kda", S, x3, x3, x2), {"alpha": np.ones(2), "beta": 0.5}, r"^alpha: expected shape \(3,\)"),
    (("kda", S, x3, x3, x2), {"alpha": 1.0, "beta": 2.1}, r"^beta: expected a number in \[0, 2\], got 2.1"),
    (("kda", S, x3, x3, x2), {"alpha": 1.0}, r"^beta: rule 'kda' needs beta"),
    (("gated_deltanet", S, x3, x3, x2), {"alpha": np.ones(3), "beta": 1.0}, r"^alpha: expected a number in \(0, 1\]"),
    (("retnet", S, x3, x3, x2), {"gamma": "0.5x"}, r"^gamma: expected a number in \(0, 1\]"),
    (("retnet", S, x3, x3, x2), {"gamma": 0.5, "alpha": 0.5}, r"^alpha: not a parameter of rule 'retnet'"),
    (("linear", S, x3, x3, x2), {}, r"^state: linear attention needs z"),
    (("linear", sim.init_state("linear", 3, 2), x3, x3, x2), {"feature_map": "tanh"}, r"^feature_map: unknown value"),
    (("softmax", S, x3, x3, x2), {}, r"^state: expected a softmax State"),
    (("deltanet", sim.init_state("softmax", 3, 2), x3, x3, x2), {"beta": 1.0}, r"^state: expected the State of a recurrent rule"),
    (("softmax", sim.init_state("softmax", 3, 2), x3, x3, x2), {"scale": float("nan")}, r"^scale: expected a number"),
]


@pytest.mark.parametrize("args, gates, message", BAD_STEPS)
def test_bad_step_inputs(args, gates, message) -> None:
    with pytest.raises(ValueError, match=message):
        sim.step(*args, **gates)


@pytest.mark.parametrize("call, message", [
    (lambda: sim.init_state("linear", 0, 2), r"^d_k: expected a positive integer"),
    (lambda: sim.init_state("linear", 2, 2.5), r"^d_v: expected a positive integer"),
    (lambda: sim.init_state("lstm", 2, 2), r"^rule: unknown value 'lstm'"),
    (lambda: sim.feature_map("softplus", np.ones(2)), r"^feature_map: unknown value"),
    (lambda: sim.l2_normalize(np.array([np.nan])), r"^x: expected finite numbers"),
    (lambda: make_keys("sparse", 3, 4), r"^kind: unknown value 'sparse'; accepted: orthonormal"),
    (lambda: make_keys("random", 0, 4), r"^n: expected a positive integer"),
    (lambda: make_keys("correlated", 3, 4, rho=1.5), r"^rho: expected a number in \[0, 1\]"),
    (lambda: make_keys("random", 3, 4, seed=-1), r"^seed: expected an integer ≥ 0"),
    (lambda: recall("linear", np.ones((3, 2)), np.ones((2, 2))), r"^values: expected shape \(n, d_v\)"),
    (lambda: recall("softmax", np.ones((2, 2)), np.ones((2, 2)), scale=-2), r"^scale: expected"),
    (lambda: recall_curve("linear", "random", 4, [0, 3]), r"^ns: expected"),
    (lambda: recall_curve("linear", "random", -4), r"^d: expected a positive integer"),
    (lambda: sim.scenarios.gaussian(0, 2, 2), r"^T: expected a positive integer"),
    (lambda: sim.scenarios.vocabulary(5, 2, 2, vocab_size=0), r"^vocab_size: expected a positive"),
    (lambda: sim.scenarios.overwrite(8, 4, 2, key_index=4), r"^key_index: expected an index in 0..3"),
    (lambda: sim.scenarios.associative_recall(-1, 2, 2), r"^n_pairs: expected a positive integer"),
])
def test_bad_helper_inputs(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_feature_maps() -> None:
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(sim.feature_map("elu+1", x), [np.exp(-1), 1.0, 3.0])
    assert np.array_equal(sim.feature_map("identity", x), x)
    np.testing.assert_allclose(sim.l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]])),
                               [[0.6, 0.8], [0.0, 0.0]])


def test_float_gates_broadcast() -> None:
    a = sim.run("gated_deltanet", Q, K, V, alpha=0.9, beta=0.5)
    b = sim.run("gated_deltanet", Q, K, V, alpha=np.full(T, 0.9), beta=np.full(T, 0.5))
    assert np.array_equal(a.outputs, b.outputs)
    c = sim.run("kda", Q, K, V, alpha=0.9, beta=0.5)
    assert np.array_equal(a.outputs, c.outputs)
