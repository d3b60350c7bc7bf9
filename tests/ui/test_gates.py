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
def test_every_setting_changes_the_picture(page, name):
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
