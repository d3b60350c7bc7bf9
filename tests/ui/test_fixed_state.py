"""The fixed-state page without a browser: the state drives the plots' data sources."""

from __future__ import annotations

import numpy as np
import param
import pytest
from helpers import columns, same, sizers_over_a_run

from sim import recall as sim_recall
from ui.pages import fixed_state
from ui.pages.fixed_state import RULE_LABELS, FixedStatePage, FixedStateState
from ui.urlstate import apply_query, to_query


def snapshot(page: FixedStatePage) -> dict:
    """Everything the page's plots hold, as plain Python values (compare with ``same``)."""
    out = columns({"value": page.value_source, "pair": page.pair_source,
                   "probe": page.probe_plot.source, "curve": page.curve_plot.source})
    out["markers"] = (page.probe_plot.marker.location, page.curve_plot.marker.location)
    return out


def release(slider, value) -> None:
    """What the browser does when a slider is let go at ``value``."""
    with param.edit_constant(slider):
        slider.param.update(value=value, value_throttled=value)


def sim_inputs(state: FixedStateState):
    n = 4 * state.d
    keys = sim_recall.make_keys(state.keys, n, state.d, state.rho, state.seed)
    values = sim_recall.make_values(n, state.d, state.seed)
    return keys, values


@pytest.fixture
def page(build) -> FixedStatePage:
    return build(FixedStatePage)


def test_defaults_and_timeline_range(page):
    s = page.state
    assert (s.d, s.pairs, s.rule, s.keys, s.probe, s.t) == (8, 32, "linear", "orthonormal", 1, 0)
    assert s.t_max == 32
    assert page.curve_plot.source.data["x"].tolist() == list(range(1, 33))


def test_step_shows_sims_numbers(page):
    s = page.state
    keys, values = sim_inputs(s)
    before = snapshot(page)
    for _ in range(3):
        s.step()
    after = snapshot(page)
    assert after != before
    # what querying key #1 returns after 3 writes, straight from sim
    expected = sim_recall.recall("linear", keys[:3], values[:3])
    np.testing.assert_allclose(page.value_source.data["read"], expected.retrieved[0])
    np.testing.assert_allclose(page.value_source.data["true"], values[0])
    errors = page.pair_source.data["error"]
    np.testing.assert_allclose(errors[:3], expected.errors)
    assert np.isnan(errors[3:]).all() and len(errors) == 32  # not written yet
    assert page.curve_plot.marker.location == 3


def test_delta_rule_and_softmax_come_from_sim(page):
    s = page.state
    s.param.update(rule="deltanet", keys="random", probe=2)
    s.jump(12)
    keys, values = sim_inputs(s)
    delta = sim_recall.recall("deltanet", keys[:12], values[:12], beta=1.0)
    np.testing.assert_allclose(page.value_source.data["read"], delta.retrieved[1])
    np.testing.assert_allclose(page.pair_source.data["error"][:12], delta.errors)
    soft = sim_recall.recall("softmax", keys[:12], values[:12], scale=s.scale)
    probe_soft = page.probe_plot.source.data[RULE_LABELS["softmax"]]
    assert np.isnan(probe_soft[0])  # pair 2 is not written at t = 1
    assert probe_soft[11] == pytest.approx(soft.errors[1])


def test_recall_curve_matches_sim_and_the_lesson(page):
    s = page.state
    data = page.curve_plot.source.data
    for rule in ("linear", "deltanet", "softmax"):
        params = {"beta": 1.0} if rule == "deltanet" else {"scale": 6.0} if rule == "softmax" else {}
        expected = sim_recall.recall_curve(rule, "orthonormal", 8, rho=0.5, seed=0, **params)
        np.testing.assert_allclose(data[RULE_LABELS[rule]], expected["mean_error"])
    linear = np.asarray(data[RULE_LABELS["linear"]])
    assert linear[:8].max() < 1e-12  # exact while n ≤ d
    assert linear[8:].min() > 0.1  # interference beyond
    # the curve at n = t is the mean of the per-pair errors the step view shows at t
    s.jump(20)
    assert np.mean(page.pair_source.data["error"][:20]) == pytest.approx(linear[19])


def test_softmax_error_falls_as_the_scale_grows(page):
    s = page.state
    label = RULE_LABELS["softmax"]
    at = []
    for scale in (2.0, 6.0, 20.0):
        s.scale = scale
        at.append(page.curve_plot.source.data[label][-1])
    assert at[0] > at[1] > at[2]
    assert at[2] < 0.02


def test_jump_equals_stepping(page):
    s = page.state
    s.param.update(keys="correlated", rho=0.3, rule="deltanet", probe=3)
    for _ in range(17):
        s.step()
    stepped = snapshot(page)
    other = FixedStatePage()
    other.state.param.update(keys="correlated", rho=0.3, rule="deltanet", probe=3)
    other.state.jump(17)
    assert same(snapshot(other), stepped)
    s.back()
    s.step()
    assert same(snapshot(page), stepped)


@pytest.mark.parametrize("knob, value", [
    ("d", 12), ("pairs", 10), ("rule", "deltanet"), ("keys", "random"), ("scale", 15.0),
    ("probe", 4), ("seed", 3),
])
def test_every_control_changes_the_picture(page, knob, value):
    s = page.state
    s.jump(9)
    before = snapshot(page)
    setattr(s, knob, value)
    assert not same(snapshot(page), before), knob


def test_rho_changes_correlated_keys(page):
    s = page.state
    s.keys = "correlated"
    s.jump(6)
    before = snapshot(page)
    s.rho = 0.9
    assert not same(snapshot(page), before)
    assert page.widgets["rho"].disabled is False
    s.keys = "orthonormal"
    assert page.widgets["rho"].disabled is True


def test_widgets_drive_the_state(page):
    s = page.state
    w = page.widgets
    release(w["d"], 16)  # the slider acts on release
    assert s.d == 16 and s.t_max == 64 and s.pairs == 64  # n was at its maximum, so it follows
    release(w["scale"], 20.0)
    assert s.scale == 20.0
    w["rule"].value = "deltanet"
    assert s.rule == "deltanet"
    s.scale = 7.25  # a value from a link, off the slider's steps, is still shown
    assert w["scale"].value == 7.25


def test_bounds_follow_d_and_n(page):
    s = page.state
    s.pairs = 20
    s.probe = 18
    s.jump(20)
    s.d = 4  # n ≤ 4·d = 16, probe ≤ n, t ≤ n
    assert (s.pairs, s.probe, s.t, s.t_max) == (16, 16, 16, 16)
    assert len(page.pair_source.data["i"]) == 16
    assert len(page.value_source.data["true"]) == 4


def test_url_round_trip(page):
    s = page.state
    s.param.update(d=10, keys="correlated", rho=0.35, scale=12.0, rule="deltanet", seed=5)
    s.param.update(pairs=30, probe=7)
    s.jump(23)
    query = to_query(s)
    fresh = FixedStatePage()
    notices, _ = apply_query(fresh.state, query)
    assert notices == []
    assert to_query(fresh.state) == query
    assert same(snapshot(fresh), snapshot(page))


def test_bad_link_value_gives_a_notice(page):
    notices, _ = apply_query(page.state, "d=999&keys=hexagonal&probe=3&t=5")
    assert len(notices) == 2 and "d=999" in notices[0] and "keys=hexagonal" in notices[1]
    assert (page.state.d, page.state.keys, page.state.probe, page.state.t) == (8, "orthonormal", 3, 5)


def test_sim_failure_gives_a_notice_and_keeps_the_picture(page, monkeypatch):
    s = page.state
    s.jump(5)
    before = snapshot(page)

    def broken(*args, **kwargs):
        raise ValueError("keys: something sim did not accept")

    monkeypatch.setattr(fixed_state.sim_recall, "recall", broken)
    s.seed = 9  # must not raise
    assert "something sim did not accept" in s.notice
    assert page.notice.visible
    assert same(snapshot(page), before)
    monkeypatch.undo()
    s.seed = 10
    assert s.notice == ""


def test_csv_has_the_curve_and_the_pairs(page):
    s = page.state
    s.jump(5)
    lines = s.csv().splitlines()
    header = "n,linear attention,delta rule (β = 1),softmax attention"
    start = lines.index(header)
    curve_rows = lines[start + 1: start + 33]
    assert [row.split(",")[0] for row in curve_rows] == [str(n) for n in range(1, 33)]
    second = lines.index("pair,linear attention,delta rule (β = 1),softmax attention")
    pair_rows = lines[second + 1:]
    assert len(pair_rows) == 5
    assert float(pair_rows[0].split(",")[1]) == pytest.approx(page.pair_source.data["error"][0])
    assert page.csv() == s.csv()


def test_presenter_view_hides_the_secondary_plot_even_before_the_layout_exists():
    page = FixedStatePage()
    page.set_view(present=True)  # what launch does before building the layout
    assert page.layout is not None
    assert page.probe_pane in page.secondary and page.probe_pane.visible is False
    page.set_view(present=False)
    assert page.probe_pane.visible is True


def test_presenter_view_scales_figures_and_restores_them(page):
    def sizes():
        return [(f.width, f.height, f.title.text_font_size,
                 [getattr(r.glyph, "line_width", None) for r in f.renderers]) for f in page.figures]

    before = sizes()
    widths = {k: w.width for k, w in page.widgets.items()}
    page.set_view(present=True)
    assert page.value_fig.width > 380 and page.value_fig.height > 260
    assert page.curve_plot.fig.renderers[0].glyph.line_width > 2.5
    assert page.widgets["d"].width > widths["d"]
    page.set_view(theme="dark")
    page.set_view(present=False)
    assert sizes() == before
    assert {k: w.width for k, w in page.widgets.items()} == widths


def test_a_step_keeps_the_readouts_size(page):
    (sizer,) = sizers_over_a_run(page, page.readout)  # one for the whole run
    assert "Mean error" in sizer
