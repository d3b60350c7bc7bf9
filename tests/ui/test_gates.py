"""The gates page without a browser: its state drives the plots, and every number is sim's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import columns, heat, same

import sim
from sim import scenarios
from ui.pages.gates import GATED_RULES, LABELS, GatesPage, GatesState
from ui.urlstate import apply_query, to_query


def cds(page: GatesPage) -> dict:
    """Everything the page's plots hold right now, as plain lists."""
    views = [*page.heatmaps, page.vectors, page.erased, page.write, *page.line_plots]
    out = columns({str(i): view.source for i, view in enumerate(views)})
    for i, view in enumerate([*page.heatmaps, page.vectors, page.erased, page.write]):
        out[f"{i}.range"] = (view.mapper.low, view.mapper.high)
    out["marker"] = page.norm_plot.marker.location
    return out


@pytest.fixture
def page(build) -> GatesPage:
    return build(GatesPage)


def test_stepping_shows_sims_states(page):
    s = page.state
    assert s.rules == ["linear", "retnet", "deltanet", "gated_deltanet"]
    assert np.all(heat(page.heatmaps[0]) == 0)
    for _ in range(5):
        s.step()
    stream = scenarios.overwrite(s.tokens, s.d, s.d, seed=s.seed, every=3)
    k = sim.l2_normalize(stream.k)
    T = stream.T
    expected = {
        "linear": sim.run("linear", stream.q, k, stream.v),
        "retnet": sim.run("retnet", stream.q, k, stream.v, gamma=0.9),
        "deltanet": sim.run("deltanet", stream.q, k, stream.v, beta=np.ones(T)),
        "gated_deltanet": sim.run("gated_deltanet", stream.q, k, stream.v,
                                  alpha=np.full(T, 0.9), beta=np.ones(T)),
    }
    for i, rule in enumerate(s.rules):
        np.testing.assert_allclose(heat(page.heatmaps[i]), expected[rule].states[4], rtol=0, atol=1e-15)
        assert page.heatmaps[i].fig.title.text == LABELS[rule]
    # The delta panel at t = 5: DeltaNet's read-back and error, and its erased / written parts.
    state = sim.init_state("deltanet", s.d, s.d)
    for t in range(5):
        step = sim.step("deltanet", state, stream.q[t], k[t], stream.v[t], beta=1.0)
        state = step.state
    vec = np.asarray(page.vectors.image_source.data["image"][0]).reshape(3, s.d)
    np.testing.assert_allclose(vec, np.stack([stream.v[4], step.read_back, step.error]))
    np.testing.assert_allclose(np.asarray(page.write.image_source.data["image"][0]).reshape(s.d, s.d),
                               step.write)
    np.testing.assert_allclose(np.asarray(page.erased.image_source.data["image"][0]).reshape(s.d, s.d),
                               step.erased)
    # ‖S‖ over time is sim's norm, and the marker sits at t.
    norm = np.asarray(page.norm_plot.source.data[LABELS["linear"]])
    np.testing.assert_allclose(norm, np.linalg.norm(expected["linear"].states, axis=(1, 2)))
    assert page.norm_plot.marker.location == 5


def test_overwrite_lesson_in_numbers(page):
    """Rewritten key: the delta rule (β = 1) recalls the newest value exactly, linear attention
    does not (it sums old and new), decay fades it; the delta rule's old value is gone."""
    s = page.state
    res = s.result
    t = 4 * 3  # after the 5th rewrite (tokens 0, 3, 6, 9, 12 write the key)
    newest = {r: res["runs"][r]["error_newest"][t] for r in s.rules}
    assert newest["deltanet"] < 1e-12
    assert newest["linear"] > 0.5
    assert 1e-3 < newest["retnet"]
    assert res["runs"]["deltanet"]["error_old"][t] > 0.5
    assert res["runs"]["linear"]["error_old"][0] < 1e-12


def test_jump_equals_stepping(page):
    s = page.state
    for _ in range(7):
        s.step()
    stepped = cds(page)
    fresh = GatesPage()
    fresh.state.jump(7)
    assert same(cds(fresh), stepped)
    s.back()
    assert not same(cds(page), stepped)
    s.step()
    assert same(cds(page), stepped)


@pytest.mark.parametrize("change", [
    {"rules": ["linear", "mamba2", "gla"]},
    {"scenario": "random"},
    {"scenario": "vocabulary"},
    {"d": 6},
    {"tokens": 30},
    {"gamma": 0.6},
    {"alpha": 0.7},
    {"beta": 0.5},
    {"data_dependent_gates": True},
    {"inspect": "kda"},
    {"seed": 3},
])
def test_every_control_changes_the_picture(page, change):
    s = page.state
    s.jump(10)
    before = cds(page)
    s.param.update(**change)
    assert not s.notice.startswith("Choose")
    assert not same(cds(page), before), change


def test_normalize_keys_changes_random_stream(page):
    s = page.state
    s.param.update(scenario="random", t=8)
    before = cds(page)
    s.normalize_keys = False
    assert not same(cds(page), before)


def test_data_dependent_gates_stay_in_range(page):
    s = page.state
    s.param.update(rules=["mamba2", "gla", "gated_deltanet", "kda"], data_dependent_gates=True,
                   alpha=1.0, beta=2.0, tokens=200)
    for rule in s.rules:
        g = s.result["runs"][rule]["gates"]
        assert np.all((g["alpha"] > 0) & (g["alpha"] <= 1))
        assert np.ptp(g["alpha"]) > 0  # they do vary per token
        if "beta" in g:
            assert np.all((g["beta"] >= 0) & (g["beta"] <= 2))
    assert s.result["runs"]["gla"]["gates"]["alpha"].shape == (200, s.d)  # per channel
    assert s.result["runs"]["mamba2"]["gates"]["alpha"].shape == (200,)
    # The same draws for every rule that shares a gate.
    np.testing.assert_array_equal(s.result["runs"]["mamba2"]["gates"]["alpha"],
                                  s.result["runs"]["gated_deltanet"]["gates"]["alpha"])


def test_url_round_trip(page):
    s = page.state
    s.param.update(rules=["gla", "kda", "retnet"], scenario="vocabulary", d=5, tokens=40,
                   gamma=0.8, alpha=0.75, beta=0.6, data_dependent_gates=True, seed=11,
                   inspect="kda")
    for _ in range(9):
        s.step()
    query = to_query(s)
    fresh = GatesPage()
    notices, _ = apply_query(fresh.state, query)
    assert notices == []
    assert fresh.state.t == 9
    assert same(cds(fresh), cds(page))


def test_bad_link_values_give_notices():
    fresh = GatesPage()
    notices, _ = apply_query(fresh.state, "rules=linear,softmax&beta=3&d=4")
    assert any("rules" in n for n in notices) and any("beta" in n for n in notices)
    assert fresh.state.rules == ["linear", "retnet", "deltanet", "gated_deltanet"]


def test_rule_count_enforced_with_notice(page):
    s = page.state
    s.jump(6)
    before = cds(page)
    s.rules = ["linear"]
    assert "2 to 4" in s.notice
    assert same(cds(page), before)
    s.rules = ["linear", "retnet", "mamba2", "gla", "kda"]
    assert "2 to 4" in s.notice
    s.rules = ["linear", "kda"]
    assert s.notice == ""
    assert page.heat_panes[1].visible and not page.heat_panes[2].visible


def test_beta_above_one_warns(page):
    s = page.state
    s.beta = 1.5
    assert "overshoots" in s.notice
    s.beta = 0.9
    assert s.notice == ""


def test_divergence_keeps_picture_and_names_token(page):
    s = page.state
    s.param.update(scenario="random", d=16, tokens=256, normalize_keys=False, beta=1.0)
    s.jump(50)
    before = cds(page)
    s.beta = 2.0  # β‖k‖² ≈ 32 > 2: every write overshoots and the state explodes
    assert "diverged at token t =" in s.notice
    token = int(s.notice.split("t = ")[1].split(":")[0])
    with pytest.raises(sim.DivergenceError) as err:
        q = scenarios.gaussian(256, 16, 16, seed=0)
        sim.run("deltanet", q.k, q.k, q.v, beta=np.full(256, 2.0))
    assert token == err.value.token + 1
    assert same(cds(page), before)
    s.normalize_keys = True  # unit keys: β = 2 stays bounded
    assert "diverged" not in s.notice and "overshoots" in s.notice


def test_csv_rows_and_header(page):
    s = page.state
    s.param.update(rules=["retnet", "gla", "kda"], tokens=10, d=3)
    lines = s.csv().strip().splitlines()
    assert lines[0] == "t,rule,state_norm,recall_error_newest,recall_error_old,gamma,alpha,beta"
    assert len(lines) == 1 + 10 * 3
    first = dict(zip(lines[0].split(","), lines[1].split(",")))
    assert first["t"] == "1" and first["rule"] == "retnet" and first["gamma"] == "0.9"
    kda = dict(zip(lines[0].split(","), lines[3].split(",")))
    assert kda["rule"] == "kda" and kda["alpha"] == "0.9 0.9 0.9" and kda["beta"] == "1"
    last = dict(zip(lines[0].split(","), lines[-1].split(",")))
    assert float(last["state_norm"]) == pytest.approx(s.result["runs"]["kda"]["norm"][-1])
    assert float(last["recall_error_old"]) == pytest.approx(
        s.result["runs"]["kda"]["error_old"][-1])


def test_only_chosen_rules_are_drawn(page):
    s = page.state
    s.rules = ["mamba2", "kda"]
    shown = [name for name, r in zip(GATED_RULES, page.norm_plot.fig.renderers) if r.visible]
    assert shown == ["mamba2", "kda"]
    assert np.all(np.isnan(page.norm_plot.source.data[LABELS["linear"]]))


def test_warnings_survive_a_rewritten_notice(page):
    """At start-up the app writes the link's notices over the state's: β's warning stays."""
    s = page.state
    s.beta = 1.4
    s.notice = ""
    assert "overshoots" in s.notice
    s.notice = "Ignored foo=1."
    assert s.notice.startswith("Ignored foo=1.") and "overshoots" in s.notice


def test_bad_settings_from_the_start_show_the_defaults():
    p = GatesPage(GatesState(rules=["linear"]))
    assert "2 to 4" in p.state.notice
    assert [h.fig.title.text for h in p.heatmaps] == [LABELS[r] for r in
                                                      ("linear", "retnet", "deltanet",
                                                       "gated_deltanet")]


def test_colour_scale_shared_and_running_max(page):
    s = page.state
    limits = []
    for _ in range(s.tokens):
        s.step()
        lows = {h.mapper.low for h in page.heatmaps}
        assert len(lows) == 1  # one colour scale for every rule
        limits.append(page.heatmaps[0].mapper.high)
        shown = max(np.abs(s.result["runs"][r]["states"][s.t - 1]).max() for r in s.rules)
        assert limits[-1] >= shown - 1e-12
    assert limits == sorted(limits)  # never shrinks, so a fading state pales


def test_unnormalised_keys_warn_about_the_effective_step(page):
    s = page.state
    s.param.update(scenario="random", d=16, beta=1.0)
    assert s.notice == ""
    s.normalize_keys = False  # ‖k‖² ≈ 16: β‖k‖² ≫ 2
    assert "β‖k‖² reaches" in s.notice and "without bound" in s.notice


def test_alert_shows_warning_after_startup_notice():
    """As in `launch`: the link's (empty) notices are written last; the Alert still warns."""
    p = GatesPage()
    p.layout  # noqa: B018
    notices, _ = apply_query(p.state, "beta=1.5")
    p.state.notice = " ".join(notices)
    assert p.notice.visible and "overshoots" in p.notice.object


def test_readouts_keep_their_size_and_show_sims_numbers(page):
    """Each readout sends the text shown over an invisible copy of the run's longest text (one
    per setting), so its height never changes on a step."""
    s = page.state
    sizers = {}
    for t in range(s.t_max + 1):
        s.jump(t)
        for readout in (page.token_info, page.delta_info, page.gate_table):
            sent = readout.pane.object
            assert readout.object in sent
            rest = sent.replace(readout.object, "", 1)
            assert sizers.setdefault(id(readout), rest) == rest
    res = s.result
    for rule in res["rules"]:
        assert f"‖S‖ = {res['runs'][rule]['norm'][-1]:.3g}" in page.token_info.object
        assert f"<td>{res['runs'][rule]['error_old'][-1]:.3g}</td>" in page.gate_table.object
    assert "<style>" not in page.gate_table.pane.object  # the table's CSS is a stylesheet


def test_colour_bars_follow_the_scale(page):
    """The colour bars have their own mappers (so a new image does not redraw them), always at
    the scale the cells are coloured with."""
    from bokeh.models import ColorBar  # noqa: PLC0415

    for t in (1, 5, 9, 3):
        page.state.jump(t)
        for view in [*page.heatmaps, page.vectors, page.erased, page.write]:
            (bar,) = view.fig.select(type=ColorBar)
            assert bar.color_mapper is not view.mapper
            assert (bar.color_mapper.low, bar.color_mapper.high) == (view.mapper.low,
                                                                     view.mapper.high)
