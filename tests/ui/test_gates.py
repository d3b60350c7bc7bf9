"""The gates page without a browser: compute() against sim's plain recurrence, show(t) against
the views, and the settings, notices and links a user meets."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import ColorBar
from helpers import heat, other_value, picture, same

import sim
from sim import scenarios
from ui.fmt import cell, num, sub
from ui.pages.gates import LABELS, GatesPage
from ui.urlstate import apply_query, to_query
from ui.views.gates import TINY

DEFAULT_RULES = ["linear", "retnet", "deltanet", "gated_deltanet"]


def everything(page: GatesPage) -> dict:
    """What the page shows for its current settings (helpers.picture: every frame, glyph data
    and colour scale), plus which state panels show, their titles, the notes and the CSV."""
    out = picture(page)
    out["titles"] = [h.fig.title.text for h in page.heatmaps]
    out["shown"] = [h.fig.visible for h in page.heatmaps]
    out["notes"] = [page.legend.div.text, page.recall.div.text]
    out["csv"] = page.csv()
    return out


def plain_recurrence(rule: str, k, v, T: int, *, gamma=0.9, alpha=0.9, beta=1.0) -> list:
    """sim.step token by token: the Step of every token."""
    gates = {"retnet": {"gamma": gamma}, "mamba2": {"alpha": alpha}, "gla": {"alpha": alpha},
             "deltanet": {"beta": beta}, "gated_deltanet": {"alpha": alpha, "beta": beta},
             "kda": {"alpha": np.full(k.shape[1], alpha), "beta": beta}}.get(rule, {})
    state, steps = sim.init_state(rule, k.shape[1], v.shape[1]), []
    for t in range(T):
        steps.append(sim.step(rule, state, k[t], k[t], v[t], **gates))
        state = steps[-1].state
    return steps


@pytest.fixture
def page(build) -> GatesPage:
    return build(GatesPage)


def test_every_state_is_sims_plain_recurrence(page):
    assert page.rules == DEFAULT_RULES
    stream = scenarios.overwrite(24, 4, 4, seed=0, every=3)
    k = sim.l2_normalize(stream.k)
    for i, rule in enumerate(page.rules):
        steps = plain_recurrence(rule, k, stream.v, 24)
        states = page.run.data[f"S{i}"]  # (T + 1, d, d)
        assert states.shape == (25, 4, 4) and np.all(states[0] == 0)
        np.testing.assert_allclose(states[1:], [s.state.S for s in steps], rtol=0, atol=1e-15)
        np.testing.assert_allclose(page.run.data[f"norm{i}"],
                                   np.linalg.norm(states[1:], axis=(1, 2)), rtol=1e-15)
        trace = sim.run(rule, stream.q, k, stream.v, **({"gamma": 0.9} if rule == "retnet" else
                        {"alpha": np.full(24, 0.9)} if rule == "gated_deltanet" else {})
                        | ({"beta": np.ones(24)} if "delta" in rule else {}))
        np.testing.assert_array_equal(page.run.data[f"new{i}"],
                                      sim.recall.relative_error(trace.outputs, stream.targets))
    # DeltaNet's update taken apart: sim.step's read-back, error, erased and written parts.
    steps = plain_recurrence("deltanet", k, stream.v, 24)
    for t in (1, 4, 5, 24):
        s = steps[t - 1]
        np.testing.assert_array_equal(page.run.data["vectors"][t],
                                      np.stack([stream.v[t - 1], s.read_back, s.error]))
        np.testing.assert_array_equal(page.run.data["erased"][t], s.erased)
        np.testing.assert_array_equal(page.run.data["written"][t], s.write)


def test_overwrite_lesson_in_numbers(page):
    """Rewritten key: the delta rule (β = 1) recalls the newest value exactly, linear attention
    does not (it sums old and new), decay fades it; the delta rule's old value is gone."""
    t = 4 * 3  # after the 5th rewrite (tokens 0, 3, 6, 9, 12 write the key)
    newest = {r: page.run.data[f"new{i}"][t] for i, r in enumerate(page.rules)}
    assert newest["deltanet"] < 1e-12
    assert newest["linear"] > 0.5
    assert 1e-3 < newest["retnet"]
    assert page.run.data["old2"][t] > 0.5  # DeltaNet's first value is overwritten
    assert page.run.data["old0"][0] < 1e-12


def test_show_puts_frame_t_into_the_views(page):
    page.show(5)
    for i, h in enumerate(page.heatmaps):
        np.testing.assert_array_equal(heat(h), page.run.data[f"S{i}"][5])
        assert h.fig.title.text == LABELS[page.rules[i]]
        assert (h.mapper.low, h.mapper.high) == (-page.run.data["S_limits"][5],
                                                 page.run.data["S_limits"][5])
    np.testing.assert_array_equal(heat(page.erased), page.run.data["erased"][5])
    np.testing.assert_array_equal(heat(page.written), page.run.data["written"][5])
    assert page.norm_plot.marker.location == 5
    assert page.caption.div.text.count("<b>t = 5</b>") == 1
    norm = page.run.data["norm0"][4]
    assert f"Linear attention: ‖S‖ = {num(norm)}" in page.token_info.div.text
    # every figure has a text alternative for t, with the numbers shown
    assert f"at token t = 5: Linear attention {cell(norm, TINY)}" in page.alt[page.norm_plot.fig.id]
    assert page.alt[page.heatmaps[0].fig.id].startswith("Linear attention, 4 × 4")
    assert all(page.alt[v.fig.id] for v in (*page.heatmaps, page.vectors, page.erased))
    # a frame depends on t alone, not on the way there
    page.show(11)
    after = [everything(page), heat(page.heatmaps[2]).tolist(), page.caption.div.text]
    page.show(3)
    page.show(11)
    assert same([everything(page), heat(page.heatmaps[2]).tolist(), page.caption.div.text], after)


def test_caption_says_what_changed_in_words_and_numbers(page):
    texts = page.run.data["caption"]
    assert "every state is empty" in texts[0]
    assert "k₂ held nothing yet, so DeltaNet wrote 1 × v₂" in texts[2]
    held = np.linalg.norm(page.run.data["vectors"][4][1])  # ‖Sᵀk‖ before token 4's rewrite
    assert (f"DeltaNet erased all of what k₄ held (‖Sᵀk‖ = {num(held)}) and wrote v₄ in its "
            "place") in texts[4]
    assert f"its newest-value error is {cell(page.run.data['new2'][3], TINY)}" in texts[4]
    assert f"Linear attention's is {cell(page.run.data['new0'][3], TINY)}" in texts[4]
    page.write_strength = 0.8
    assert f"erased 0.8 of what k{sub(4)} held" in page.run.data["caption"][4]
    assert f"and wrote 0.8 × v{sub(4)}" in page.run.data["caption"][4]


@pytest.mark.parametrize("name", [n for n in GatesPage.settings() if n not in GatesPage.no_recompute])
def test_every_setting_changes_the_picture(build, name):
    page = build(GatesPage, **GatesPage.only_with.get(name, {}))  # a rule's own setting: with it
    page.stream = "random"  # the stream where normalising the keys matters too
    page.show(10)
    before = everything(page)
    value = other_value(page, name)
    setattr(page, name, value)
    assert page.notice == "" and getattr(page, name) == value
    assert not same(everything(page), before), name


def test_settings_are_labelled_in_words_and_old_links_still_work():
    for name in GatesPage.settings():
        assert GatesPage.param[name].label not in (None, name)
    assert GatesPage.param["write_strength"].label == "Write strength β"
    page = GatesPage()
    notices = apply_query(page, "scenario=random&gamma=0.8&alpha=0.7&beta=0.5")
    assert notices == []
    assert (page.stream, page.retnet_decay, page.decay, page.write_strength) == (
        "random", 0.8, 0.7, 0.5)


def test_link_round_trip(page):
    page.param.update(rules=["gla", "kda", "retnet"], stream="vocabulary", d=5, tokens=40,
                      retnet_decay=0.8, decay=0.75, write_strength=0.6,
                      data_dependent_gates=True, seed=11, inspect="kda")
    page.show(9)
    fresh = GatesPage()
    assert apply_query(fresh, to_query(page)) == []
    fresh.show(9)
    assert fresh.settings_now() == page.settings_now()
    assert same(everything(fresh), everything(page))


def test_bad_link_values_give_notices_naming_them():
    fresh = GatesPage()
    notices = apply_query(fresh, "rules=linear,softmax&beta=3&d=4&rules=linear,linear")
    assert any("rules=linear,linear" in n for n in notices)
    assert any("beta=3" in n for n in notices)
    assert fresh.rules == DEFAULT_RULES and fresh.write_strength == 1.0
    assert apply_query(fresh, "rules=linear") == [
        "Ignored Rules to compare (2 to 4) = ['linear'] from the link: choose 2 to 4 rules to "
        "compare (now 1)"]


@pytest.mark.parametrize("rules, words", [
    (["linear", "linear"], "Linear attention is chosen more than once"),
    (["linear", "kda", "kda"], "Kimi Delta Attention is chosen more than once"),
    (["linear"], "choose 2 to 4 rules to compare (now 1)"),
    (["linear", "retnet", "mamba2", "gla", "kda"], "(now 5)"),
])
def test_bad_rules_keep_the_last_good_run(page, rules, words):
    page.show(6)
    before = everything(page)
    page.rules = rules
    assert words in page.notice and "Rules to compare (2 to 4) = ['linear'" in page.notice
    assert page.rules == DEFAULT_RULES
    assert same(everything(page), before)
    page.rules = ["linear", "kda"]
    assert page.notice == ""
    assert [h.fig.visible for h in page.heatmaps] == [True, True, False, False]
    assert [h.fig.title.text for h in page.heatmaps[:2]] == ["Linear attention",
                                                             "Kimi Delta Attention"]
    assert [line.visible for line in page.norm_plot.fig.renderers] == [True, True, False, False]
    assert np.all(np.isnan(page.norm_plot.source.data["rule 3"]))


def test_divergence_keeps_the_picture_and_names_the_token(page):
    page.param.update(stream="random", d=16, tokens=256, normalize_keys=False)
    assert "β‖k‖² reaches" in page.run.info and "without bound" in page.run.info
    page.show(50)
    before = everything(page)
    page.write_strength = 2.0  # every write overshoots and the state explodes
    s = scenarios.gaussian(256, 16, 16, seed=0)
    with pytest.raises(sim.DivergenceError) as err:
        sim.run("deltanet", s.k, s.k, s.v, beta=np.full(256, 2.0))
    assert (f"Write strength β = 2.0 cannot run here (DeltaNet diverged at token "
            f"t = {err.value.token + 1}:") in page.notice
    assert page.write_strength == 1.0 and same(everything(page), before)
    page.normalize_keys = True  # unit keys: β ≤ 2 stays bounded
    page.write_strength = 2.0
    assert page.notice == "" and "overshoots" in page.run.info


def test_beta_above_one_warns_above_the_plots(page):
    page.write_strength = 1.5
    assert "β = 1.5 > 1 overshoots" in page.run.info and page.info.visible
    page.write_strength = 0.9
    assert page.run.info == "" and not page.info.visible


def test_no_new_bokeh_models_when_d_changes(page):
    doc = Document()
    page.layout.server_doc(doc=doc)
    page.d = 5
    models = len(doc.models)
    for d in [6, 16, 2, 9, 4] * 4:
        page.d = d
    assert page.d == 4 and len(doc.models) == models


def test_colour_scale_shared_and_a_running_max(page):
    highs = [page.frames.data[f"{i}:high"] for i in range(4)]
    assert all(h == highs[0] for h in highs)  # one colour scale for every rule
    limits = np.asarray(highs[0])
    assert np.all(np.diff(limits) >= 0)  # never shrinks, so a fading state pales
    for t in range(1, 25):
        shown = max(np.abs(page.run.data[f"S{i}"][t]).max() for i in range(4))
        assert limits[t] == pytest.approx(shown) or limits[t] > shown
    for t in (1, 5, 9, 3):
        page.show(t)
        for view in [*page.heatmaps, page.vectors, page.erased, page.written]:
            (bar,) = view.fig.select(type=ColorBar)
            assert bar.color_mapper is not view.mapper
            assert (bar.color_mapper.low, bar.color_mapper.high) == (view.mapper.low,
                                                                     view.mapper.high)


def test_rounding_residue_reads_the_same_everywhere(page):
    page.show(2)
    error = page.run.data["new0"][1]  # linear attention's error at t = 2: rounding residue
    assert 0 < error < 1e-15
    assert "<td>≈0</td>" in page.gate_table.div.text
    assert "2e-16" not in page.gate_table.div.text and "e-1" not in page.caption.div.text
    labels = page.heatmaps[2].shown_labels()
    assert all(len(x) <= 7 for x in labels)


def test_data_dependent_gates_stay_in_range(page):
    page.param.update(rules=["mamba2", "gla", "gated_deltanet", "kda"],
                      data_dependent_gates=True, decay=1.0, write_strength=2.0, tokens=200)
    g = page.gates(200)
    assert np.all((g["alpha"] > 0) & (g["alpha"] <= 1)) and np.ptp(g["alpha"]) > 0
    assert np.all((g["beta"] >= 0) & (g["beta"] <= 2))
    assert g["alpha_channel"].shape == (200, 4)  # per channel for GLA and KDA
    table = page.run.table
    rows = {r: [i for i, x in enumerate(table["rule"]) if x == r] for r in page.rules}
    # the same draws for every rule that shares a gate
    assert [table["alpha"][i] for i in rows["mamba2"]] == [table["alpha"][i]
                                                           for i in rows["gated_deltanet"]]
    assert len(table["alpha"][rows["gla"][0]].split()) == 4


def test_csv_rows_and_header(page):
    page.param.update(rules=["retnet", "gla", "kda"], tokens=10, d=3)
    lines = page.csv().strip().splitlines()
    assert lines[0] == "t,rule,state_norm,recall_error_newest,recall_error_old,gamma,alpha,beta"
    assert len(lines) == 1 + 10 * 3
    first = dict(zip(lines[0].split(","), lines[1].split(",")))
    assert first["t"] == "1" and first["rule"] == "retnet" and first["gamma"] == "0.9"
    kda = dict(zip(lines[0].split(","), lines[3].split(",")))
    assert kda["rule"] == "kda" and kda["alpha"] == "0.9 0.9 0.9" and float(kda["beta"]) == 1
    last = dict(zip(lines[0].split(","), lines[-1].split(",")))
    assert float(last["state_norm"]) == page.run.data["norm2"][-1]
    assert float(last["recall_error_old"]) == page.run.data["old2"][-1]


def test_named_stops(page):
    assert page.named_stops() == [("start", 0), ("a key written again", 4),
                                  ("t = d: as many keys as channels", 4)]
    page.stream = "random"
    assert page.named_stops() == [("start", 0), ("t = d: as many keys as channels", 4)]


def test_readouts_show_sims_numbers_for_every_t(page):
    page.param.update(rules=["gla", "kda"], data_dependent_gates=True)
    page.show(page.run.t_max)
    for i, rule in enumerate(page.rules):
        norm = page.run.data[f"norm{i}"][-1]
        assert f"{LABELS[rule]}: ‖S‖ = {num(norm)}" in page.token_info.div.text
        assert f"<td>{cell(page.run.data[f'old{i}'][-1], TINY)}</td>" in page.gate_table.div.text
    assert ("<b>Kimi Delta Attention</b> (the first delta rule compared), token t = 24: decay "
            "α = (") in page.delta_info.div.text
    assert "<style>" not in page.gate_table.div.text  # the table's CSS is a stylesheet


# The rules beyond sim.RULES (issue 21) ---------------------------------------------------------

NEW_RULES = ["rwkv7", "rwkv6", "deltaproduct", "log_linear"]


def by_hand(page: GatesPage):
    """The page's stream and every new rule's inputs, built here from sim and the settings."""
    T, d, seed = page.tokens, page.d, page.seed
    s = (scenarios.overwrite(T, d, d, seed=seed, every=3) if page.stream == "overwrite" else
         scenarios.gaussian(T, d, d, seed=seed))
    k = sim.l2_normalize(s.k) if page.normalize_keys else s.k
    drawn = scenarios.draw_gates(T, d, page.decay, page.write_strength, seed)
    if page.data_dependent_gates:
        w = scenarios.draw_gates(T, d, page.rwkv_decay, page.write_strength, seed)["alpha_channel"]
        rng = np.random.default_rng([seed, 21])
        rate = np.clip(page.learning_rate + 0.1 * rng.standard_normal((T, d)), 0, 1)
        alpha, beta = drawn["alpha"], drawn["beta"]
    else:
        w, rate = np.full((T, d), page.rwkv_decay), np.full((T, d), page.learning_rate)
        alpha, beta = np.full(T, page.decay), np.full(T, page.write_strength)
    n_h = page.householder_steps
    K, V = np.zeros((T, n_h, d)), np.zeros((T, n_h, d))
    for t in range(T):
        for j in range(n_h):
            if t - (n_h - 1 - j) >= 0:
                K[t, j], V[t, j] = k[t - (n_h - 1 - j)], s.v[t - (n_h - 1 - j)]
    L = int(np.ceil(np.log2(T))) + 1
    runs = {
        "rwkv7": (rate * k, s.v, {"alpha": w, "beta": rate, "removal_key": sim.l2_normalize(k)}),
        "rwkv6": (k, s.v, {"alpha": w, "bonus": np.full(d, page.bonus)}),
        "deltaproduct": (K, V, {"alpha": alpha, "beta": np.repeat(beta[:, None], n_h, axis=1)}),
        "log_linear": (k, s.v, {"alpha": alpha, "level_weights": np.tile(
            page.level_ratio ** np.arange(L), (T, 1))}),
    }
    return s, k, runs


@pytest.mark.parametrize("dependent", [False, True])
def test_new_rules_are_sims_runs(build, dependent):
    page = build(GatesPage, rules=NEW_RULES, data_dependent_gates=dependent, d=5, tokens=30,
                 rwkv_decay=0.8, learning_rate=0.7, bonus=-0.5, householder_steps=3,
                 level_ratio=0.6)
    s, k, runs = by_hand(page)
    for i, rule in enumerate(page.rules):
        K, V, gates = runs[rule]
        trace = sim.run(rule, s.q, K, V, **gates)
        np.testing.assert_array_equal(page.run.data[f"S{i}"][1:], trace.states)
        np.testing.assert_array_equal(page.run.data[f"new{i}"],
                                      sim.recall.relative_error(trace.outputs, s.targets))
    page.show(7)
    assert "RWKV-6: ‖S‖ = " in page.token_info.div.text
    assert "(its output read S before this write)" in page.token_info.div.text
    assert "RWKV-6 reads before it writes" in page.recall.div.text
    assert "its output read S before this token's write" in page.gate_table.div.text
    assert "DeltaProduct, step 3" in page.frame_table.div.text


def test_reductions_seen_on_the_page(build):
    """RWKV-6 with w = 1, u = 1 is linear attention; log-linear with every λ = 1 is Mamba-2;
    DeltaProduct with one step is Gated DeltaNet; RWKV-7 with w = 1 and a = 1 (unit keys) is
    DeltaNet with β = 1."""
    for rules, settings in ((["linear", "rwkv6"], {"rwkv_decay": 1.0, "bonus": 1.0}),
                            (["mamba2", "log_linear"], {"level_ratio": 1.0}),
                            (["gated_deltanet", "deltaproduct"], {"householder_steps": 1}),
                            (["deltanet", "rwkv7"], {"rwkv_decay": 1.0, "learning_rate": 1.0})):
        page = build(GatesPage, rules=rules, stream="random", **settings)
        np.testing.assert_allclose(page.run.data["S1"], page.run.data["S0"], atol=1e-12)
        np.testing.assert_allclose(page.run.data["new1"], page.run.data["new0"], atol=1e-12)


def test_mamba1_is_sims_selective_scan(build):
    page = build(GatesPage, rules=["gla", "mamba1"], decay=0.8)
    s = scenarios.overwrite(24, 4, 4, seed=0, every=3)
    k = sim.l2_normalize(s.k)
    delta = np.full((24, 4), -np.log(0.8))  # Δ = −log α in every channel
    A = -np.tile(np.arange(1.0, 5.0), (4, 1))  # (d_inner, N): A[d, n] = −(n + 1)
    y, h = sim.selective_scan(s.v / delta, delta, A, k, s.q)
    np.testing.assert_allclose(page.run.data["S1"][1:], np.swapaxes(h, 1, 2), atol=1e-14)
    np.testing.assert_allclose(page.run.data["new1"], sim.recall.relative_error(y, s.targets),
                               atol=1e-12)
    page.show(3)
    assert "decay exp(Δ A) = (0.8, 0.64, 0.512, 0.4096) per key channel" in \
        page.gate_table.div.text
    page.data_dependent_gates = True  # a Δ per value channel: outside the one frame
    page.show(3)
    assert "Mamba-1</td><td colspan='5'>outside the frame" in page.frame_table.div.text


@pytest.mark.parametrize("dependent", [False, True])
def test_rwkv7_update_taken_apart(build, dependent):
    page = build(GatesPage, rules=["rwkv7", "kda"], data_dependent_gates=dependent,
                 learning_rate=0.8, rwkv_decay=0.85, stream="random")
    assert page.run.data["inspected"] == "rwkv7"  # the first delta rule shown
    s, k, runs = by_hand(page)
    w, rate = runs["rwkv7"][2]["alpha"], runs["rwkv7"][2]["beta"]
    kappa = k / np.linalg.norm(k, axis=1, keepdims=True)
    S = page.run.data["S0"]  # (T + 1, d, d), S[0] = 0
    for t in (1, 2, 9, 24):
        read = kappa[t - 1] @ S[t - 1]  # the old state, before the decay
        np.testing.assert_allclose(page.run.data["vectors"][t],
                                   [s.v[t - 1], read, s.v[t - 1] - read], atol=1e-15)
        erased = np.outer(rate[t - 1] * kappa[t - 1], read)
        written = np.outer(rate[t - 1] * k[t - 1], s.v[t - 1])
        np.testing.assert_allclose(page.run.data["erased"][t], erased, atol=1e-15)
        np.testing.assert_allclose(page.run.data["written"][t], written, atol=1e-15)
        np.testing.assert_allclose(S[t], w[t - 1][:, None] * S[t - 1] - erased + written,
                                   atol=1e-14)
    page.show(9)
    assert page.erased.fig.title.text == "Erased: (a ⊙ κ̂)(κ̂ᵀS)ᵀ"
    assert page.vectors.fig.yaxis[0].major_label_overrides == {0: "v", 1: "κ̂ᵀS", 2: "v − κ̂ᵀS"}
    share = float(np.sum(rate[8] * kappa[8] ** 2))
    assert f"RWKV-7 erased {num(share)} of what κ̂₉ read in the old state" in page.caption.div.text
    assert "in-context learning rate a = " in page.delta_info.div.text
    page.inspect = "deltanet"  # back to the delta rule's own names
    assert page.erased.fig.title.text == "Erased: β k (Sᵀk)ᵀ"
    assert page.vectors.fig.yaxis[0].major_label_overrides == {0: "v", 1: "Sᵀk", 2: "v − Sᵀk"}


def test_deltaproduct_update_taken_apart(build):
    page = build(GatesPage, rules=["deltaproduct", "deltanet"], householder_steps=3,
                 data_dependent_gates=True, stream="random")
    s, k, runs = by_hand(page)
    K, V = np.zeros((24, 3, 4)), np.zeros((24, 3, 4))
    for t in range(24):
        for j, lag in enumerate((2, 1, 0)):
            if t >= lag:
                K[t, j], V[t, j] = k[t - lag], s.v[t - lag]
    gates = runs["deltaproduct"][2]
    state = sim.init_state("deltaproduct", 4, 4)
    S = page.run.data["S0"]
    for t in range(1, 25):
        step = sim.step("deltaproduct", state, s.q[t - 1], K[t - 1], V[t - 1],
                        alpha=gates["alpha"][t - 1], beta=gates["beta"][t - 1])
        state = step.state
        np.testing.assert_array_equal(S[t], step.state.S)
        read = step.read_back[-1]  # the last sub-step: the token's own pair
        np.testing.assert_array_equal(page.run.data["vectors"][t], [s.v[t - 1], read,
                                                                    s.v[t - 1] - read])
        b = gates["beta"][t - 1]
        erased = sum(b[j] * np.outer(K[t - 1, j], step.read_back[j]) for j in range(3))
        written = sum(b[j] * np.outer(K[t - 1, j], V[t - 1, j]) for j in range(3))
        np.testing.assert_allclose(page.run.data["erased"][t], erased, atol=1e-15)
        np.testing.assert_allclose(page.run.data["written"][t], written, atol=1e-15)
        np.testing.assert_allclose(S[t], gates["alpha"][t - 1] * S[t - 1] - erased + written,
                                   atol=1e-14)
    assert "in the last of its 3 steps, DeltaProduct" in page.run.data["caption"][5]
    assert page.written.fig.title.text == "Written: Σⱼ βⱼ kⱼ vⱼᵀ"


@pytest.mark.parametrize("dependent", [False, True])
def test_gdn2_update_taken_apart(build, dependent):
    """Gated DeltaNet-2 on the page: its state is sim.step's, token by token, with the page's
    gates (constant: α, b and w as set; data-dependent: per token and channel, in range); its
    update taken apart is S_t = diag(α) S_{t−1} − k ((b ⊙ k)ᵀ diag(α) S_{t−1})ᵀ + k (w ⊙ v)ᵀ."""
    page = build(GatesPage, rules=["gdn2", "kda"], data_dependent_gates=dependent, decay=0.8,
                 erase_gate=0.6, write_gate=0.7, stream="random")
    assert page.run.data["inspected"] == "gdn2"  # the first delta rule shown
    s = scenarios.gaussian(24, 4, 4, seed=0)
    k = sim.l2_normalize(s.k)
    gates = page.gates(24)
    alpha, erase, write = gates["alpha_channel"], gates["erase"], gates["write"]  # (T, d) each
    if dependent:  # drawn per token and channel around the chosen values, kept in range
        assert np.ptp(erase) > 0 and np.ptp(write) > 0 and 0 <= erase.min() and write.max() <= 1
        assert abs(erase.mean() - 0.6) < 0.05 and abs(write.mean() - 0.7) < 0.05
    else:
        assert np.all(alpha == 0.8) and np.all(erase == 0.6) and np.all(write == 0.7)
    state, S = sim.init_state("gdn2", 4, 4), page.run.data["S0"]
    for t in range(1, 25):
        i = t - 1
        step = sim.step("gdn2", state, s.q[i], k[i], s.v[i], alpha=alpha[i], erase=erase[i],
                        write=write[i])
        state = step.state
        np.testing.assert_array_equal(S[t], step.state.S)
        decayed = alpha[i][:, None] * S[t - 1]
        read = (erase[i] * k[i]) @ decayed  # what the gated key finds
        value = write[i] * s.v[i]
        np.testing.assert_allclose(page.run.data["vectors"][t], [value, read, value - read],
                                   atol=1e-15)
        np.testing.assert_allclose(page.run.data["erased"][t], np.outer(k[i], read), atol=1e-15)
        np.testing.assert_allclose(page.run.data["written"][t], np.outer(k[i], value), atol=1e-15)
        np.testing.assert_allclose(S[t], decayed - np.outer(k[i], read) + np.outer(k[i], value),
                                   atol=1e-14)
    page.show(5)
    assert page.erased.fig.title.text == "Erased: k ((b ⊙ k)ᵀS)ᵀ"
    assert page.written.fig.title.text == "Written: k (w ⊙ v)ᵀ"
    assert page.vectors.fig.yaxis[0].major_label_overrides == {
        0: "w ⊙ v", 1: "(b ⊙ k)ᵀS", 2: "w ⊙ v − (b ⊙ k)ᵀS"}
    assert "erase gate b = " in page.gate_table.div.text and "write gate w = " in page.gate_table.div.text
    assert "Gated DeltaNet-2 erased" in page.caption.div.text and "wrote w ⊙ v₅" in page.caption.div.text
    assert "Gated DeltaNet-2, its written value w ⊙ v" in page.frame_table.div.text
    read_text = page.run.data["overwrite_text@read"][5]
    assert "along b ⊙ k₅: (b ⊙ k₅)ᵀS = (" in read_text
    header = page.csv().splitlines()[0]
    assert header.endswith(",erase,write")


def test_gdn2_with_both_gates_at_beta_is_kda_on_the_page(build):
    """b = w = β (constant gates) makes Gated DeltaNet-2 KDA: the same state at every t, and the
    page says why; its own two settings show only while it is compared."""
    page = build(GatesPage, rules=["kda", "gdn2"], write_strength=0.7, erase_gate=0.7,
                 write_gate=0.7, stream="random")
    np.testing.assert_allclose(page.run.data["S1"], page.run.data["S0"], atol=1e-12)
    assert "hold the same state at every t here" in page.run.info
    own = {w.name: w for w in page.widgets}
    assert own["Erase gate b (GDN-2)"].visible and own["Write gate w (GDN-2)"].visible
    assert apply_query(page, "rules=linear,deltanet&erase=0.3&write=0.4") == []
    assert (page.erase_gate, page.write_gate) == (0.3, 0.4)
    assert not own["Erase gate b (GDN-2)"].visible and not own["Write gate w (GDN-2)"].visible


def test_the_one_frame_for_every_token(build):
    """The frame table shows sim.frame_parts of every compared rule at t, and the frame applied
    to S_{t−1} gives the page's S_t."""
    from ui.views.gates import FRAME_SYMBOLS, along, short  # noqa: PLC0415

    page = build(GatesPage, rules=["rwkv7", "kda", "gated_deltanet", "deltaproduct"],
                 data_dependent_gates=True, stream="random", learning_rate=0.6)
    s, k, runs = by_hand(page)
    drawn = scenarios.draw_gates(24, 4, 0.9, 1.0, 0)
    texts = page.run.data["frame_text"]
    assert len(set(texts)) == 25  # a frame per t
    for t in (1, 6, 24):
        i = t - 1
        K7, V7, g7 = runs["rwkv7"]
        parts = {
            "rwkv7": sim.frame_parts("rwkv7", K7[i], V7[i], alpha=g7["alpha"][i],
                                     beta=g7["beta"][i], removal_key=g7["removal_key"][i]),
            "kda": sim.frame_parts("kda", k[i], s.v[i], alpha=drawn["alpha_channel"][i],
                                   beta=drawn["beta"][i]),
            "gated_deltanet": sim.frame_parts("gated_deltanet", k[i], s.v[i],
                                              alpha=drawn["alpha"][i], beta=drawn["beta"][i]),
            "deltaproduct": sim.frame_parts("deltaproduct", runs["deltaproduct"][0][i],
                                            runs["deltaproduct"][1][i],
                                            alpha=drawn["alpha"][i],
                                            beta=runs["deltaproduct"][2]["beta"][i]),
        }
        page.show(t)
        shown = page.frame_table.div.text
        for n, rule in enumerate(page.rules):
            S = page.run.data[f"S{n}"]
            np.testing.assert_allclose(sim.apply_frame(parts[rule], S[t - 1]), S[t], atol=1e-14)
            tiny = TINY * max(float(np.abs(S[t]).max()), 1.0)
            decay, b, a, key = FRAME_SYMBOLS[rule]
            f = parts[rule][0]
            assert f"<td>{decay} = {short(f.decay, tiny)}</td>" in shown, rule
            assert f"<td>{along(b, f.b, k[i], tiny)}</td><td>{along(a, f.a, k[i], tiny)}</td>" \
                   f"<td>{along(key, f.key, k[i], tiny)}</td>" in shown, rule
        assert f"token t = {t}" in shown
    # RWKV-7's per-channel decay and rate read as vectors; KDA's read key −α ⊙ k too
    assert "<td>w = (" in texts[6] and "rate ⊙ κ̂ = (" in texts[6] and "−α ⊙ k = (" in texts[6]
    page.param.update(rules=DEFAULT_RULES, data_dependent_gates=False)
    page.show(2)
    assert ("<td>Gated DeltaNet</td><td>α = 0.90</td><td>α β k = 0.90 k</td><td>−k</td>"
            "<td>β k = k</td>") in page.frame_table.div.text


def test_new_settings_links_and_defaults(build):
    page = build(GatesPage)
    assert page.rules == DEFAULT_RULES  # the page built ahead of time is as before
    assert (page.rwkv_decay, page.learning_rate, page.bonus, page.householder_steps,
            page.level_ratio) == (0.9, 1.0, 1.0, 2, 0.5)
    own = {w.name: w for w in page.widgets}
    labels = ["RWKV decay w", "In-context learning rate a (RWKV-7)", "Bonus u (RWKV-6)",
              "Householder steps per token n_h (DeltaProduct)",
              "Level weights λ = r^ℓ (log-linear)"]
    assert all(not own[label].visible for label in labels)  # no new rule compared: hidden
    assert page.csv().splitlines()[0] == ("t,rule,state_norm,recall_error_newest,"
                                          "recall_error_old,gamma,alpha,beta")
    notices = apply_query(page, "rules=rwkv7,deltaproduct&w=0.8&a=0.5&nh=3&r=1.5&u=-0.5"
                                "&gamma=0.8&beta=0.5")
    assert notices == []
    assert (page.rules, page.rwkv_decay, page.learning_rate, page.householder_steps,
            page.level_ratio, page.bonus, page.retnet_decay, page.write_strength) == (
        ["rwkv7", "deltaproduct"], 0.8, 0.5, 3, 1.5, -0.5, 0.8, 0.5)
    assert [own[label].visible for label in labels] == [True, True, False, True, False]
    assert "w=0.8" in to_query(page) and "nh=3" in to_query(page)
    assert apply_query(page, "nh=9") == ["Ignored nh=9: expected a whole number from 1 to 4."]


def test_rules_that_hold_the_same_state_are_named_with_why(build):
    """RWKV-6 (w = 0.9) and log-linear (α = 0.9) compared with RetNet (γ = 0.9) hold RetNet's
    state exactly, and nothing said why: the remark above the plots names them and the reason;
    once RetNet's decay differs, only the two that still agree are named."""
    page = build(GatesPage, rules=["retnet", "rwkv6", "log_linear", "deltanet"])
    data = page.run.data
    assert [np.allclose(data["S0"], data[f"S{i}"]) for i in (1, 2, 3)] == [True, True, False]
    retnet, rwkv6, log_linear = (LABELS[r] for r in ("retnet", "rwkv6", "log_linear"))
    assert page.run.info.startswith(f"{retnet}, {rwkv6} and {log_linear} hold the same state at every t here: "
                                    "with these settings their gates are the same constants"), page.run.info
    page.retnet_decay = 0.8
    assert page.run.info.startswith(f"{rwkv6} and {log_linear} hold the same state"), page.run.info
    page.rules = ["retnet", "deltanet"]
    assert "same state" not in page.run.info
