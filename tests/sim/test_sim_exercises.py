"""The exercises' numbers, answers and named mistakes, held to sim's own recurrences."""

from __future__ import annotations

import numpy as np
import pytest

import sim
from sim import exercises as ex
from sim.cache import cache_report, load_model

SEEDS = range(40)


def test_the_lessons_exercise_and_its_three_named_mistakes():
    e = ex.running_sum(0)
    assert e.given == {"k": [[1, 0], [1, 1], [0, 1]], "v": [[2, 0], [0, 4], [4, 2]], "q": [1, 1]}
    assert "(0, 1)" in e.prompt and "(4, 2)" in e.prompt and "query (1, 1)" in e.prompt
    assert e.answer == (1.5, 2.5) and e.answer_text == "(1.5, 2.5)"
    wrong = {tuple(round(x, 2) for x in answer): why for answer, why in e.mistakes}
    assert list(wrong) == [(2.0, 3.33), (0.5, 3.5), (6.0, 10.0)]
    assert wrong[(2.0, 3.33)].startswith("left z alone")
    assert wrong[(0.5, 3.5)].startswith("added v kᵀ in place of k vᵀ")
    assert wrong[(6.0, 10.0)].startswith("skipped the divide")
    assert e.steps[0].endswith("S = k₁v₁ᵀ + k₂v₂ᵀ = [[2, 4], [0, 4]], z = k₁ + k₂ = (2, 1).")
    assert e.steps[-1].endswith("o = (6, 10) / 4 = (1.5, 2.5).")


def _small_integers(values, limit=4):
    a = np.asarray(values)
    return a.dtype.kind in "iu" and np.all(np.abs(a) <= limit)


@pytest.mark.parametrize("seed", SEEDS)
def test_running_sum_against_sims_linear_attention(seed):
    e = ex.running_sum(seed)
    k, v, q = (np.array(e.given[n]) for n in ("k", "v", "q"))
    assert _small_integers(k) and _small_integers(v) and _small_integers(q)
    Q = np.vstack([q, q, q]).astype(float)  # the third token's query is the exercise's
    out = sim.run("linear", Q, k.astype(float), v.astype(float), normalize=True,
                  feature_map="identity").outputs[-1]
    np.testing.assert_allclose(e.answer, out, rtol=1e-12)
    assert all(len(str(x)) <= 6 for x in e.answer)  # short decimals: the divisor is 2, 4, 5, 8, 10


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_state_against_sims_recurrence(seed):
    e = ex.fixed_state(seed)
    k, v = np.array(e.given["k"], dtype=float), np.array(e.given["v"], dtype=float)
    assert _small_integers(e.given["k"], 1) and _small_integers(e.given["v"], 3)
    state = sim.init_state("linear", 3, 2)
    for i in range(3):
        state = sim.step("linear", state, k[i], k[i], v[i]).state
    reads = k @ state.S  # row p: Sᵀk_p
    exact = [p + 1 for p in range(3) if np.allclose(reads[p], v[p])]
    if e.kind == ex.KIND_NUMBER:
        assert e.answer == (float(exact[0]),) and len(exact) == 1
        assert {m[0] for m, _ in e.mistakes} == {1.0, 2.0, 3.0} - {float(exact[0])}
    else:
        p = e.given["pair"] - 1
        np.testing.assert_allclose(e.answer, reads[p] - v[p])
        assert p + 1 not in exact


@pytest.mark.parametrize("seed", SEEDS)
def test_gates_against_sims_rules(seed):
    e = ex.gates(seed)
    S, k, v = (np.array(e.given[n], dtype=float) for n in ("S", "k", "v"))
    assert _small_integers(e.given["S"], 3) and _small_integers(e.given["v"], 3)
    if seed % 2 == 0:  # Mamba-2's scalar gate: S ← α S + k vᵀ, then the query reads Sᵀq
        state = sim.State(S=S)
        q = np.array(e.given["q"], dtype=float)
        out = sim.step("mamba2", state, q, k, v, alpha=0.5).output
    else:  # the delta rule, β = 0.5, read with the same key
        out = sim.step("deltanet", sim.State(S=S), k, k, v, beta=0.5).output
    np.testing.assert_allclose(e.answer, out)


@pytest.mark.parametrize("seed", SEEDS)
def test_hybrid_against_sim_cache(seed):
    e = ex.hybrid(seed)
    g = e.given
    report = cache_report(load_model(ex.hybrid_model(g)), g["tokens"], 1, "bf16", "fp32",
                          block_tokens=ex.BLOCK_TOKENS)
    want = {0: report["kv_cache_bytes"], 1: report["state_bytes"],
            2: report["kv_cache_bytes_in_blocks"]}[g["variant"]]
    assert e.answer == (float(want),) and e.kind == ex.KIND_BYTES
    if g["variant"] == 2:
        assert (float(report["kv_cache_bytes"]),) in [m for m, _ in e.mistakes]


def _scan_two_tokens(g):
    """The exercise's token as the second of two through sim.selective_scan: the first token
    (Δ = 1, u = 1, B = h_{t−1}) writes the previous state from zero."""
    u = np.array([[1.0], [g["u"]]])
    delta = np.array([[1.0], [g["delta"]]])
    A = np.array([g["A"]])  # (d_inner = 1, N = 2)
    B = np.array([g["h_prev"], g["B"]], dtype=float)
    C = np.array([[0.0, 0.0], g["C"]])
    return sim.selective_scan(u, delta, A, B, C, np.array([float(g["D"])]))


@pytest.mark.parametrize("seed", SEEDS)
def test_state_space_against_sims_selective_scan(seed):
    e = ex.state_space(seed)
    g = e.given
    assert _small_integers(g["h_prev"], 3) and _small_integers(g["B"], 2)
    assert _small_integers(g["C"], 2) and g["u"] != 0 and g["D"] in (1, 2)
    assert g["delta"] in (0.5, 2.0) and set(g["decay"]) <= {0.5, 0.25}
    np.testing.assert_allclose(np.exp(g["delta"] * np.array(g["A"])), g["decay"], rtol=1e-12)
    y, h = _scan_two_tokens(g)
    np.testing.assert_allclose(h[0, 0], g["h_prev"], rtol=1e-12)  # the previous state, as said
    if g["ask"] == "y":
        assert e.kind == ex.KIND_NUMBER and seed % 2 == 0
        np.testing.assert_allclose(e.answer, [y[1, 0]], rtol=1e-12, atol=1e-12)
    else:
        assert e.kind == ex.KIND_VECTOR and seed % 2 == 1
        np.testing.assert_allclose(e.answer, h[1, 0], rtol=1e-12, atol=1e-12)
    assert all(x * 4 == round(x * 4) for x in e.answer)  # quarters: by hand


def test_state_space_mistakes_are_sims_scan_done_wrong():
    e = ex.state_space(0)  # y_t
    g = e.given
    wrong = {why.split(":")[0]: answer[0] for answer, why in e.mistakes}
    assert set(wrong) == {"left out the skip", "read the old state",
                          f"used exp(A) = {ex.vec(np.exp(g['A']))} in place of exp(Δ A) = "
                          f"{ex.vec(g['decay'])}", "multiplied the input by B without Δ"}
    no_skip = dict(g, D=0)
    assert wrong["left out the skip"] == pytest.approx(_scan_two_tokens(no_skip)[0][1, 0])
    # Δ = 1 with Δ folded into B: the same input term, the decay exp(A)
    undecayed_step = dict(g, delta=1.0, B=[g["delta"] * b for b in g["B"]])
    exp_a = [w for k, w in wrong.items() if k.startswith("used exp(A)")][0]
    assert exp_a == pytest.approx(_scan_two_tokens(undecayed_step)[0][1, 0])  # decay exp(A)
    no_delta = dict(g, B=[b / g["delta"] for b in g["B"]])
    assert wrong["multiplied the input by B without Δ"] == pytest.approx(
        _scan_two_tokens(no_delta)[0][1, 0])
    assert e.steps[-1].startswith("Add the skip D u_t")
    h = ex.state_space(1)
    assert "What is the new state h_t" in h.prompt and len(h.answer) == 2
    assert any(why.startswith("left out the decay") for _, why in h.mistakes)


def _after(states: np.ndarray, n: int) -> np.ndarray:
    """The recurrence's state after token n (S₀ = 0 for n = 0); states (T, d_k, d_v)."""
    return states[n - 1] if n else np.zeros_like(states[0])


@pytest.mark.parametrize("seed", SEEDS)
def test_chunkwise_against_sims_chunkwise_form(seed):
    e = ex.chunkwise(seed)
    g = e.given
    rng = np.random.default_rng(seed)
    if g["variant"] == "state":
        assert seed % 2 == 0 and e.kind == ex.KIND_NUMBER
        T, C, t = g["T"], g["C"], g["t"]
        q, k, v = rng.standard_normal((3, T, 3))
        tr = sim.run_chunkwise("linear", q, k, v, chunk_size=C)
        states = sim.run("linear", q, k, v).states  # (T, d, d)
        n = int(e.answer[0])
        c = int(np.searchsorted(tr.starts, t - 1, side="right")) - 1  # token t's chunk, from 0
        np.testing.assert_allclose(tr.boundary_states[c], _after(states, n), atol=1e-12)
        np.testing.assert_allclose(tr.inter[t - 1], _after(states, n).T @ q[t - 1], atol=1e-12)
        for wrong, _why in e.mistakes:  # each names a state the carried part does not read
            read = _after(states, int(wrong[0])).T @ q[t - 1]
            assert not np.allclose(tr.inter[t - 1], read, atol=1e-6), (wrong, _why)
        assert 0 < n < t - 1  # a token past its chunk's first: the recurrence's state differs
    else:
        assert seed % 2 == 1 and e.kind == ex.KIND_VECTOR and g["C"] == 4
        assert _small_integers(g["q"], 2) and _small_integers(g["k"], 2)
        # tokens 1–4 anything, tokens 5–8 the exercise's chunk; values do not enter the scores
        q = np.vstack([rng.standard_normal((4, 2)), g["q"]])
        k = np.vstack([rng.standard_normal((4, 2)), g["k"]])
        v = rng.standard_normal((8, 2))
        gates = {"gamma": g["gamma"]} if g["rule"] == "retnet" else {}
        assert (g["rule"] == "retnet") == (seed % 4 == 3) and g["gamma"] in (None, 0.5)
        A = sim.run_chunkwise(g["rule"], q, k, v, chunk_size=4, **gates).scores[1]
        np.testing.assert_allclose(e.answer, A[g["row"] - 1], atol=1e-12)
        if gates:  # "left out the decay" is linear attention's row of the same chunk
            plain = sim.run_chunkwise("linear", q, k, v, chunk_size=4).scores[1][g["row"] - 1]
            no_decay = [w for w, why in e.mistakes if why.startswith("left out the decay")]
            np.testing.assert_allclose(no_decay[0], plain, atol=1e-12)


def _one_feature_estimates(sigma: float, rows: int, seed: int) -> np.ndarray:
    """`rows` one-feature estimates of exp(q̃·k̃) by sim's positive features, divided by it, for
    q̃ = k̃ = x e₁ with √(exp|q̃ + k̃|² − 1) = σ (so 4x² = ln(1 + σ²)); independent rows."""
    x = np.sqrt(np.log1p(sigma**2)) / 2
    qk = np.array([[x, 0.0], [x, 0.0]])
    W = sim.draw_projection(rows, 2, seed, orthogonal=False)
    phi = sim.favor_features(qk, W)  # (2, rows), each divided by √rows
    return rows * phi[0] * phi[1] / np.exp(x * x)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_features_against_sims_features(seed):
    e = ex.random_features(seed)
    g = e.given
    assert e.kind == ex.KIND_NUMBER
    if g["variant"] in ("spread", "count"):
        assert seed % 2 == 0 and (g["variant"] == "spread") == (seed % 4 == 0)
        m = g["m"] if g["variant"] == "spread" else int(e.answer[0])
        spread = e.answer[0] if g["variant"] == "spread" else g["target"]
        rows = 2**18
        one = _one_feature_estimates(g["sigma1"], rows, seed)
        draws = one[: rows // m * m].reshape(-1, m).mean(axis=1)  # estimates by m features each
        measured = draws.std(ddof=1)
        assert abs(draws.mean() - 1) < 0.05  # unbiased
        assert abs(measured / spread - 1) < 0.15, (measured, spread)
        for wrong, why in e.mistakes:  # sim's spread is nearer the answer than any mistake
            if g["variant"] == "spread":
                assert abs(measured - spread) < abs(measured - wrong[0]), (wrong, why)
            else:  # m features of the mistake spread differently
                other = one[: rows // int(wrong[0]) * int(wrong[0])].reshape(
                    -1, int(wrong[0])).mean(axis=1).std(ddof=1)
                assert abs(other / spread - 1) > 0.25, (wrong, why, other)
    else:
        assert seed % 2 == 1 and g["variant"] == "sign"
        est = np.array(g["estimates"])
        assert (est < 0).sum() == 1 and est.sum() > 0
        j = g["key"] - 1
        assert e.answer[0] == pytest.approx(est[j] / est.sum(), abs=1e-12)
        # sim's FAVOR+ weights are that same division, of positive estimates: within 0 … 1
        K = np.random.default_rng(seed).standard_normal((3, 2)) / 2
        qv = np.array([0.5, -0.25])
        W = sim.draw_projection(8, 2, seed)
        pos = sim.favor_features(qv, W) @ sim.favor_features(K, W).T  # (3,) φ(q)·φ(k_j) > 0
        weights = sim.softmax_weights_favor(qv, K, 8, seed, scale=1.0)
        np.testing.assert_allclose(weights, pos / pos.sum(), rtol=1e-12)
        assert np.all(pos > 0) and np.all((weights > 0) & (weights < 1))


@pytest.mark.parametrize("make", list(ex.GENERATORS.values()))
def test_every_exercise_is_its_seeds_alone_and_names_distinct_mistakes(make):
    for seed in SEEDS:
        a, b = make(seed), make(seed)
        assert a == b and a.prompt and a.steps and len(a.mistakes) >= 2
        answers = [a.answer, *(m for m, _ in a.mistakes)]
        assert len({tuple(round(x, 3) for x in ans) for ans in answers}) == len(answers)
        assert all(why and why[0].islower() for _, why in a.mistakes)  # "… if you <why>"
    assert len({make(s).prompt for s in SEEDS}) > len(SEEDS) // 2  # fresh numbers


def test_generators_refuse_bad_seeds_by_name() -> None:
    for make in ex.GENERATORS.values():
        for bad in (-1, 2**63, 1.5, "3", None):
            with pytest.raises(ValueError, match=r"^seed: "):
                make(bad)
    assert ex.number_text(float("inf")) == "inf" and ex.number_text(float("nan")) == "nan"
    with pytest.raises(ValueError, match=r"^x: expected a real number, got 'abc'"):
        ex.number_text("abc")
    with pytest.raises(ValueError, match=r"^given: expected the key 'heads'"):
        ex.hybrid_model({"attention": 1, "kv_heads": 1, "head_dim": 8, "recurrent": 1, "d": 4})

