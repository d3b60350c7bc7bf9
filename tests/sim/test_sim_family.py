"""One frame for the delta family (sim.family) and the registry of sim.more_rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sim
from sim.family import FRAME_RULES, apply_frame, frame_parts

D_K, D_V = 4, 3


def _token(rule: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(D_K)
    if rule == "deltaproduct":
        k = sim.l2_normalize(rng.standard_normal((2, D_K)))
        v = rng.standard_normal((2, D_V))
        return q, k, v, {"alpha": 0.7, "beta": np.array([0.5, 1.5])}
    k, v = sim.l2_normalize(rng.standard_normal(D_K)), rng.standard_normal(D_V)
    gates: dict[str, Any] = {
        "linear": {}, "retnet": {"gamma": 0.9}, "mamba2": {"alpha": 0.6},
        "gla": {"alpha": rng.uniform(0.2, 1, D_K)}, "deltanet": {"beta": 0.8},
        "gated_deltanet": {"alpha": 0.6, "beta": 0.8},
        "kda": {"alpha": rng.uniform(0.2, 1, D_K), "beta": 1.2},
        "rwkv7": {"alpha": rng.uniform(0.55, 1, D_K), "beta": rng.uniform(0, 1, D_K),
                  "removal_key": sim.l2_normalize(rng.standard_normal(D_K))},
        "gdn2": {"alpha": rng.uniform(0.2, 1, D_K), "erase": rng.uniform(0, 1, D_K),
                 "write": rng.uniform(0, 1, D_V)},
    }[rule]
    return q, 1.5 * k if rule == "rwkv7" else k, v, gates


@pytest.mark.parametrize("rule", FRAME_RULES)
def test_the_frame_is_the_rules_step(rule: str) -> None:
    q, k, v, gates = _token(rule, 1)
    S0 = np.random.default_rng(2).standard_normal((D_K, D_V))
    S0.flags.writeable = False
    state = sim.State(S=S0, z=np.zeros(D_K) if rule == "linear" else None)
    stepped = sim.step(rule, state, q, k, v, **gates).state.S
    parts = frame_parts(rule, k, v, **gates)
    assert len(parts) == (2 if rule == "deltaproduct" else 1)
    np.testing.assert_allclose(apply_frame(parts, S0), stepped, rtol=1e-12, atol=1e-13)
    # and the transition matrix, written out, does the same
    S = S0
    for factor in parts:
        S = factor.transition @ S + np.outer(factor.key, factor.value)
    np.testing.assert_allclose(S, stepped, rtol=1e-12, atol=1e-13)


def test_which_part_each_rule_uses() -> None:
    k, v = np.array([1.0, 0.0]), np.array([2.0, 3.0])
    (gated,) = frame_parts("gated_deltanet", k, v, alpha=0.5, beta=0.5)
    # Gated DeltaNet: decay a·1 = (½, ½), a = −k, b = a β k = (¼, 0), written key β k = (½, 0)
    np.testing.assert_array_equal(gated.decay, [0.5, 0.5])
    np.testing.assert_array_equal(gated.a, [-1.0, 0.0])
    np.testing.assert_array_equal(gated.b, [0.25, 0.0])
    np.testing.assert_array_equal(gated.key, [0.5, 0.0])
    np.testing.assert_array_equal(gated.transition, [[0.25, 0.0], [0.0, 0.5]])  # ½(I − ½kkᵀ)
    np.testing.assert_allclose(gated.log_decay, np.log([0.5, 0.5]))
    (kda,) = frame_parts("kda", k, v, alpha=[0.5, 0.25], beta=1.0)
    np.testing.assert_array_equal(kda.a, [-0.5, 0.0])  # −α ⊙ k: KDA erases the decayed state
    (rwkv,) = frame_parts("rwkv7", k, v, alpha=[0.5, 1.0], beta=[0.5, 1.0],
                          removal_key=[0.6, 0.8])
    np.testing.assert_array_equal(rwkv.a, [-0.6, -0.8])  # −κ̂
    np.testing.assert_array_equal(rwkv.b, [0.3, 0.8])  # β ⊙ κ̂
    np.testing.assert_array_equal(rwkv.key, k)  # the written key is its own input
    (two,) = frame_parts("gdn2", k, v, alpha=[0.5, 0.25], erase=[0.5, 1.0], write=[1.0, 0.5])
    # Gated DeltaNet-2: (I − k (b ⊙ k)ᵀ) diag(α) = diag(α) − k (α ⊙ b ⊙ k)ᵀ; a = −(¼, 0),
    # b = k, the written key k with the value w ⊙ v = (2, 1.5); transition [[½ − ¼, 0], [0, ¼]]
    np.testing.assert_array_equal(two.a, [-0.25, 0.0])
    np.testing.assert_array_equal(two.b, k)
    np.testing.assert_array_equal(two.value, [2.0, 1.5])
    np.testing.assert_array_equal(two.transition, [[0.25, 0.0], [0.0, 0.25]])
    (gla,) = frame_parts("gla", k, v, alpha=[0.5, 0.25])
    assert not gla.a.any() and not gla.b.any()  # no low-rank part: a pure decay
    first, second = frame_parts("deltaproduct", np.eye(2), np.ones((2, 2)), alpha=0.5,
                                beta=[1.0, 1.0])
    # (I − e₂e₂ᵀ)(I − e₁e₁ᵀ)·½ = 0: two Householder steps erase both directions
    np.testing.assert_array_equal(second.transition @ first.transition, np.zeros((2, 2)))
    np.testing.assert_array_equal(second.decay, [1.0, 1.0])  # one decay, on the first only


def test_frame_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match=r"^rule: unknown value 'rwkv6'; accepted: linear"):
        frame_parts("rwkv6", np.ones(2), np.ones(2), alpha=0.5, bonus=1.0)
    with pytest.raises(ValueError, match=r"^alpha: expected every value in \(0, 1\], got 1.5"):
        frame_parts("kda", np.ones(2), np.ones(2), alpha=[1.5, 1.0], beta=1.0)
    with pytest.raises(ValueError, match=r"^beta: rule 'deltanet' needs beta"):
        frame_parts("deltanet", np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"^k: expected shape \(n_h, d_k\)"):
        frame_parts("deltaproduct", np.ones(2), np.ones((1, 2)), alpha=1.0, beta=1.0)
    with pytest.raises(ValueError, match=r"^S: expected shape \(d_k, d_v\) = \(2, 'any'\)"):
        apply_frame(frame_parts("linear", np.ones(2), np.ones(2)), np.ones((3, 3)))


# --- the registry ----------------------------------------------------------------------------

def test_more_rules_stay_out_of_the_eight() -> None:
    assert sim.MORE_RULES == ("rwkv7", "rwkv6", "mamba1", "deltaproduct", "log_linear", "gdn2")
    assert set(sim.MORE_RULE_INFO) == set(sim.MORE_RULES)
    assert not set(sim.MORE_RULES) & set(sim.RULES)  # pages enumerating sim.RULES are unchanged
    assert len(sim.RULES) == 8 and not set(sim.MORE_RULES) & set(sim.CHUNKWISE_RULES)
    for name, info in sim.MORE_RULE_INFO.items():
        assert info.name == name and "S" in info.equation
        assert set(info.gates) <= set(info.options) and "keep_states" in info.options
    assert sim.MORE_RULE_INFO["rwkv6"].readout.startswith(r"o_t = S_{t-1}")  # reads first
    assert sim.MORE_RULE_INFO["mamba1"].alpha_shape == "cell"


def test_sim_entry_points_reach_the_more_rules() -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((4, 2)), rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    a = sim.run("rwkv6", q, k, v, alpha=0.5, bonus=0.5)
    b = sim.more_rules.run("rwkv6", q, k, v, alpha=0.5, bonus=0.5)
    assert np.array_equal(a.outputs, b.outputs) and a.rule == "rwkv6"
    assert sim.init_state("mamba1", 2, 3).S.shape == (2, 3)
    with pytest.raises(ValueError, match=r"^rule: unknown value 'rwkv8'; accepted: softmax"):
        sim.run("rwkv8", q, k, v)
    with pytest.raises(ValueError, match=r"^rule: unknown value 'rwkv8'; accepted: rwkv7"):
        sim.more_rules.run("rwkv8", q, k, v)
    with pytest.raises(ValueError, match=r"^rule: unknown value a list of shape \(1,\)"):
        sim.run(["rwkv7"], q, k, v)


def _growing(rule: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Inputs whose state passes ‖S‖ = 1e150 after some tokens (nothing decays)."""
    T = 80
    q = np.ones((T, 2))
    big = np.full((T, 2), 1e74)  # each write k vᵀ has norm 2e148: ‖S‖ > 1e150 at token 50
    if rule == "deltaproduct":  # β‖k‖² = 18 > 2: every sub-step overshoots
        rng = np.random.default_rng(0)
        k = 3.0 * sim.l2_normalize(rng.standard_normal((T * 2, 2))).reshape(T, 2, 2)
        return q, k, rng.standard_normal((T, 2, 2)), {"alpha": 1.0, "beta": 2.0}
    gates = {"rwkv7": {"alpha": 1.0, "beta": 0.0}, "rwkv6": {"alpha": 1.0, "bonus": 0.0},
             "mamba1": {"alpha": 1.0}, "log_linear": {"alpha": 1.0},
             "gdn2": {"alpha": 1.0, "erase": 0.0, "write": 1.0}}[rule]
    return q, big, big, gates


@pytest.mark.parametrize("rule", sim.MORE_RULES)
def test_divergence_names_the_same_token_in_run_and_step(rule: str) -> None:
    q, k, v, gates = _growing(rule)
    with pytest.raises(sim.DivergenceError) as ran:
        sim.run(rule, q, k, v, **gates)
    state = sim.init_state(rule, 2, 2)
    with pytest.raises(sim.DivergenceError) as stepped:
        for t in range(q.shape[0]):
            per_token = {n: (x if np.ndim(x) == 0 else x[t]) for n, x in gates.items()}
            state = sim.step(rule, state, q[t], k[t], v[t], **per_token).state
    assert 0 < ran.value.token == stepped.value.token < q.shape[0]
    if rule != "deltaproduct":
        assert ran.value.token == 50


@pytest.mark.parametrize("parts", [float("nan"), (), "abc", [np.ones(2)]])
def test_apply_frame_refuses_what_is_not_frame_parts(parts: Any) -> None:
    with pytest.raises(ValueError, match=r"^parts: expected the FrameFactors of one token "
                                         r"\(from sim.frame_parts\)"):
        apply_frame(parts, np.zeros((2, 2)))
    k = np.array([0.6, 0.8])
    np.testing.assert_array_equal(apply_frame(list(frame_parts("linear", k, k)), np.zeros((2, 2))),
                                  np.outer(k, k))
