"""The fixed-state page without a browser: compute() holds sim's numbers for every t, and
page.show(t) puts frame t into the views as the browser's player does."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import param
import pytest
from helpers import columns, same

import sim
from sim import recall as sim_recall
from sim.softmax_attention import softmax_read
from ui.fmt import cell
from ui.pages import fixed_state
from ui.pages.fixed_state import RULE_LABELS, FixedStatePage
from ui.urlstate import apply_query, to_query
from ui.views.fixed_state import EXACT

# A setting that only matters beside another: ρ shapes correlated keys alone (its slider is
# disabled for the other key sets). Every other setting must change the picture on its own.
CONTEXT = {"rho": {"keys": "correlated"}}


def figures(page: FixedStatePage) -> list:
    return [page.value_view.fig, page.pair_view.fig, page.curve_plot.fig, page.probe_plot.fig]


def snapshot(page: FixedStatePage) -> dict:
    """Everything the page shows at its t: the plots' data, axes, titles, colours, markers,
    the captions and every figure's text alternative (compare with ``same``)."""
    out = columns({"value": page.value_view.source, "pair": page.pair_view.source,
                   "probe": page.probe_plot.source, "curve": page.curve_plot.source})
    out["markers"] = (page.probe_plot.marker.location, page.curve_plot.marker.location)
    out["figures"] = [(f.title.text, f.x_range.start, f.x_range.end, f.y_range.start,
                       f.y_range.end) for f in figures(page)]
    out["colours"] = (page.value_view.read.glyph.fill_color, page.pair_view.bars.glyph.fill_color)
    out["capacity"] = [view.capacity[0].location for view in
                       (page.pair_view, page.curve_plot, page.probe_plot)]
    out["texts"] = (page.caption.div.text, page.readout.div.text)
    out["alt"] = [page.alt[f.id] for f in figures(page)]
    return out


def shown(readout) -> str:
    """The text a Readout shows now (without the invisible copy that sizes its box)."""
    return re.match(r"<div style='display:grid'><div[^>]*>(.*?)</div><div", readout.div.text,
                    re.S).group(1)


def sim_inputs(page: FixedStatePage):
    n = 4 * page.d
    return (sim_recall.make_keys(page.keys, n, page.d, page.rho, page.seed),
            sim_recall.make_values(n, page.d, page.seed))


@pytest.fixture
def page(build) -> FixedStatePage:
    return build(FixedStatePage)


def test_defaults_timeline_and_named_stops(page):
    assert (page.d, page.pairs, page.rule, page.keys, page.probe, page.t) == (
        8, 32, "linear", "orthonormal", 1, 0)
    assert page.run.t_max == 32
    assert page.curve_plot.source.data["x"].tolist() == list(range(1, 33))
    assert page.named_stops() == [("t = 0", 0), ("t = d", 8), ("t = d + 1", 9)]
    page.pairs = 8  # t = d + 1 is past the end of the timeline: no stop there
    assert page.named_stops() == [("t = 0", 0), ("t = d", 8)]
    assert np.isnan(page.pair_view.source.data["error"]).all()  # nothing written at t = 0
    assert "nothing written yet" in shown(page.caption)


def test_step_shows_sims_numbers(page):
    keys, values = sim_inputs(page)
    before = snapshot(page)
    for t in (1, 2, 3):
        page.show(t)
    assert not same(snapshot(page), before)
    # what querying key 1 returns after 3 writes, straight from sim
    expected = sim_recall.recall("linear", keys[:3], values[:3])
    np.testing.assert_allclose(page.value_view.source.data["read"], expected.retrieved[0])
    np.testing.assert_allclose(page.value_view.source.data["true"], values[0])
    errors = page.pair_view.source.data["error"]
    np.testing.assert_allclose(errors[:3], expected.errors)
    assert np.isnan(errors[3:]).all() and len(errors) == 32  # not written yet
    assert page.curve_plot.marker.location == 3 == page.probe_plot.marker.location


@pytest.mark.parametrize("rule, keys", [("linear", "random"), ("deltanet", "correlated")])
def test_every_frame_matches_sims_plain_recurrence(page, rule, keys):
    """Frame t against a plain loop over the writes: sim.step for the state, Sᵀk for the
    lookup; and softmax attention read from its cache with sim's softmax_read."""
    page.param.update(rule=rule, keys=keys, rho=0.4, pairs=14, probe=3, seed=2)
    K, V = sim_inputs(page)
    state = sim.init_state(rule, 8, 8)
    params = {"beta": 1.0} if rule == "deltanet" else {}
    for t in range(1, 15):
        state = sim.step(rule, state, K[t - 1], K[t - 1], V[t - 1], **params).state
        read = K[:t] @ state.S  # (t, d): every written key queried
        errors = np.linalg.norm(read - V[:t], axis=1) / np.linalg.norm(V[:t], axis=1)
        np.testing.assert_allclose(page.run.data["pair_errors"][t, :t], errors, atol=1e-12)
        soft = [softmax_read(K[:t], V[:t], K[i], page.scale)[0] for i in range(t)]
        np.testing.assert_allclose(page.run.data["per_t_softmax"][t, :t],
                                   np.linalg.norm(soft - V[:t], axis=1)
                                   / np.linalg.norm(V[:t], axis=1), atol=1e-12)
        page.show(t)
        expected = read[2] if t >= 3 else np.full(8, np.nan)
        np.testing.assert_allclose(page.value_view.source.data["read"], expected, atol=1e-12)


def test_delta_rule_and_softmax_come_from_sim(page):
    page.param.update(rule="deltanet", keys="random", probe=2)
    page.show(12)
    keys, values = sim_inputs(page)
    delta = sim_recall.recall("deltanet", keys[:12], values[:12], beta=1.0)
    np.testing.assert_allclose(page.value_view.source.data["read"], delta.retrieved[1])
    np.testing.assert_allclose(page.pair_view.source.data["error"][:12], delta.errors)
    soft = sim_recall.recall("softmax", keys[:12], values[:12], scale=page.scale)
    probe_soft = page.probe_plot.source.data[RULE_LABELS["softmax"]]
    assert np.isnan(probe_soft[0])  # pair 2 is not written at t = 1
    assert probe_soft[11] == pytest.approx(soft.errors[1])
    assert page.pair_view.fig.title.text == "Each pair's error (delta rule)"


def test_recall_curve_matches_sim_and_the_lesson(page):
    data = page.curve_plot.source.data
    for rule in ("linear", "deltanet", "softmax"):
        params = {"beta": 1.0} if rule == "deltanet" else {"scale": 6.0} if rule == "softmax" else {}
        expected = sim_recall.recall_curve(rule, "orthonormal", 8, rho=0.5, seed=0, **params)
        np.testing.assert_array_equal(data[RULE_LABELS[rule]], expected["mean_error"])
    linear = np.asarray(data[RULE_LABELS["linear"]])
    assert linear[:8].max() < 1e-12  # exact while n ≤ d
    assert linear[8:].min() > 0.1  # interference beyond
    # the curve at n = t is the mean of the per-pair errors the step view shows at t
    page.show(20)
    assert np.mean(page.pair_view.source.data["error"][:20]) == pytest.approx(linear[19])


def test_softmax_error_falls_as_the_scale_grows(page):
    label = RULE_LABELS["softmax"]
    at = []
    for scale in (2.0, 6.0, 20.0):
        page.scale = scale
        at.append(page.curve_plot.source.data[label][-1])
    assert at[0] > at[1] > at[2]
    assert at[2] < 0.02


def test_caption_says_what_the_step_changed_with_the_runs_numbers(page):
    page.show(1)
    assert "wrote pair 1 (key k₁ → value v₁)" in shown(page.caption)
    assert "every stored pair is recalled exactly" in shown(page.caption)
    page.show(5)  # orthonormal keys, t ≤ d: nothing moves
    assert "no earlier pair's recall error changed" in shown(page.caption)
    page.show(10)
    errors = page.run.data["pair_errors"]
    change = errors[10, :9] - errors[9, :9]
    i, j = int(np.argmax(np.abs(change))), int(np.nanargmax(errors[10]))
    verb = "rose" if change[i] > 0 else "fell"
    text = shown(page.caption)
    assert text.startswith("<b>t = 10</b>, linear attention: wrote pair 10 (key k₁₀ → value v₁₀)")
    assert f"pair {i + 1}'s recall error {verb} to {cell(errors[10, i], EXACT)}" in text
    assert f"the largest error is pair {j + 1}'s {cell(errors[10, j], EXACT)}" in text
    # the readout below it: the probed pair and the three rules' means
    assert "Querying key 1 with linear attention" in shown(page.readout)
    soft = page.run.data["per_t_softmax"][10, :10].mean()
    assert f"softmax attention <b>{cell(soft, EXACT)}</b>" in shown(page.readout)


def test_every_figure_has_a_text_alternative_per_t(page):
    page.param.update(probe=2)
    page.show(1)
    value_alt = page.alt[page.value_view.fig.id]
    assert "pair 2 is not written yet after 1 writes" in value_alt
    page.show(12)
    read = page.value_view.source.data["read"]
    assert f"{read[0]:.4g}" in page.alt[page.value_view.fig.id]
    errors = page.pair_view.source.data["error"]
    assert page.alt[page.pair_view.fig.id].endswith(": " + ", ".join(
        f"pair {i + 1} {cell(e, EXACT)}" for i, e in enumerate(errors[:12])))
    assert page.alt[page.curve_plot.fig.id].startswith("Recall error against n: t = 12: ")
    soft = page.probe_plot.source.data[RULE_LABELS["softmax"]][11]
    assert f"softmax attention {cell(soft, EXACT)}" in page.alt[page.probe_plot.fig.id]


def test_jump_equals_stepping(page, build):
    page.param.update(keys="correlated", rho=0.3, rule="deltanet", probe=3)
    for _ in range(17):
        page.show(page.t + 1)
    stepped = snapshot(page)
    other = build(FixedStatePage, keys="correlated", rho=0.3, rule="deltanet", probe=3)
    other.show(17)
    assert same(snapshot(other), stepped)
    page.show(16)
    page.show(17)
    assert same(snapshot(page), stepped)
    page.show(99)  # past the end: the last frame
    assert page.t == 32


def other_values(p: param.Parameter, current) -> list:
    """Valid values of a setting other than its current one, nearest first."""
    if isinstance(p, param.Selector):
        return [v for v in p.objects if v != current]
    if isinstance(p, param.Number):
        lo, hi = p.bounds
        step = p.step or 1
        return [v for v in (current + step, current - step, lo, hi) if lo <= v <= hi and v != current]
    raise AssertionError(f"no test values for a {type(p).__name__}")


@pytest.mark.parametrize("name", [n for n in FixedStatePage.settings() if n not in FixedStatePage.no_recompute])
def test_every_setting_changes_the_picture(build, name):
    page = build(FixedStatePage, **CONTEXT.get(name, {}))
    page.show(9)
    before, run = snapshot(page), page.run
    for value in other_values(page.param[name], getattr(page, name)):
        setattr(page, name, value)
        if getattr(page, name) == value and not page.notice:
            break
    assert getattr(page, name) == value and page.notice == ""
    assert page.run is not run and not same(snapshot(page), before), name


def test_rho_applies_to_correlated_keys_only(page):
    """ρ shows only with correlated keys, the only ones it shapes (disabled, it still looked
    like a setting that applies)."""
    w = page.widgets_by_name
    assert w["rho"].visible is False
    page.keys = "correlated"
    assert w["rho"].visible is True and w["rho"].disabled is False
    page.keys = "orthonormal"
    assert w["rho"].visible is False


def release(slider, value) -> None:
    """What the browser does when a slider is let go at ``value``."""
    with param.edit_constant(slider):
        slider.param.update(value=value, value_throttled=value)


def test_widgets_drive_the_settings(page):
    w = page.widgets_by_name
    w["d"].value = 16  # dragging does nothing: d acts on release
    assert page.d == 8
    release(w["d"], 16)
    assert page.d == 16 and page.run.t_max == 64 and page.pairs == 64  # n was at its maximum
    assert w["pairs"].end == 64
    release(w["scale"], 20.0)
    assert page.scale == 20.0
    w["rule"].value = "deltanet"
    assert page.rule == "deltanet"
    page.scale = 7.25  # a value from a link, off the slider's steps, is still shown
    assert w["scale"].value == 7.25 and 7.25 in w["scale"].options


def test_bounds_follow_d_and_n(page):
    page.pairs = 20
    page.probe = 18
    page.show(20)
    page.d = 4  # n ≤ 4·d = 16, probe ≤ n, t ≤ n
    assert (page.pairs, page.probe, page.t, page.run.t_max) == (16, 16, 16, 16)
    assert len(page.pair_view.source.data["i"]) == 16
    assert len(page.value_view.source.data["true"]) == 4
    assert (page.widgets_by_name["pairs"].end, page.widgets_by_name["probe"].end) == (16, 16)
    page.pairs = 5  # the probe follows n down
    assert page.probe == 5 and page.notice == ""


@pytest.mark.parametrize("name, value, reason", [
    ("pairs", 100, "at most 4·d = 32 pairs"), ("probe", 40, "pair 40 is not among the 32"),
])
def test_a_setting_that_cannot_run_keeps_the_last_run_and_says_so(page, name, value, reason):
    page.show(6)
    before, run = snapshot(page), page.run
    setattr(page, name, value)
    assert page.run is run and getattr(page, name) == {"pairs": 32, "probe": 1}[name]
    assert f"{page.label(name)} = {value}" in page.notice and reason in page.notice
    assert same(snapshot(page), before)
    page.seed = 1  # a good change clears it
    assert page.notice == ""


def test_sim_failure_gives_a_notice_and_keeps_the_picture(page, monkeypatch):
    page.show(5)
    before = snapshot(page)

    def broken(*args, **kwargs):
        raise ValueError("keys: something sim did not accept")

    monkeypatch.setattr(fixed_state.sim_recall, "recall_after_each_write", broken)
    page.seed = 9  # must not raise
    assert "Seed = 9" in page.notice and "something sim did not accept" in page.notice
    assert page.seed == 0
    assert same(snapshot(page), before)
    monkeypatch.undo()
    page.seed = 10
    assert page.notice == ""


def test_url_round_trip(page, build):
    page.param.update(d=10, keys="correlated", rho=0.35, scale=12.0, rule="deltanet", seed=5)
    page.param.update(pairs=30, probe=7)
    page.show(23)
    query = to_query(page)
    assert query == ("d=10&pairs=30&rule=deltanet&keys=correlated&rho=0.35&scale=12.0"
                     "&probe=7&seed=5&ex=0")  # the old links' keys
    fresh = build(FixedStatePage)
    assert apply_query(fresh, query + "&t=23") == []
    assert to_query(fresh) == query
    fresh.show(23)  # t is the player's (assets/js/player.js reads it from the link)
    assert same(snapshot(fresh), snapshot(page))


def test_bad_link_values_give_notices(page):
    notices = apply_query(page, "d=999&keys=hexagonal&probe=3&t=5")
    assert len(notices) == 2 and "d=999" in notices[0] and "keys=hexagonal" in notices[1]
    assert (page.d, page.keys, page.probe) == (8, "orthonormal", 3)
    # together these cannot run (n > 4·d): d applies, n is named with the reason
    notices = apply_query(page, "d=4&pairs=32")
    assert notices == ["Ignored Pairs written n = 32 from the link: pairs: a 4 × 4 state "
                       "takes at most 4·d = 16 pairs, got 32"]
    assert (page.d, page.pairs) == (4, 16)
    notices = apply_query(page, "scale=%3Cb%3E&seed=-1")
    assert len(notices) == 2 and "scale=<b>" in notices[0] and "seed=-1" in notices[1]


def test_csv_has_the_curves(page):
    page.param.update(pairs=20, probe=3)
    rows = list(csv.reader(io.StringIO(page.csv())))
    names = [RULE_LABELS[r] for r in ("linear", "deltanet", "softmax")]
    assert rows[0] == ["pairs n", *[f"mean error, {n}" for n in names],
                       *[f"pair 3's error after n writes, {n}" for n in names]]
    assert len(rows) == 33 and [r[0] for r in rows[1:]] == [str(n) for n in range(1, 33)]
    curve = page.curve_plot.source.data
    for j, name in enumerate(names):
        assert [float(r[1 + j]) for r in rows[1:]] == curve[name].tolist()  # exact digits
    probe = page.probe_plot.source.data[names[0]]
    assert [r[4] for r in rows[1:3]] == ["", ""]  # pair 3 not written yet
    assert [float(r[4]) for r in rows[3:21]] == probe[2:20].tolist()
    assert all(r[4:] == ["", "", ""] for r in rows[21:])  # beyond the timeline's n = 20


def test_readouts_keep_their_size_from_step_to_step(page):
    for readout in (page.caption, page.readout):
        texts = page.run.data[readout.key]
        longest = max(texts, key=lambda h: len(re.sub(r"<[^>]*>", "", h)))
        for t in (0, 7, 32):
            page.show(t)
            assert shown(readout) == texts[t]
            assert readout.div.text.endswith(longest + "</div></div>")  # the same sizer


@pytest.mark.parametrize("query", ["keys=random&pairs=40&d=10&probe=50",
                                   "probe=50&pairs=40&keys=random&d=10"])
def test_a_link_means_the_same_in_any_order(build, query):
    page = build(FixedStatePage)
    notices = apply_query(page, query)
    assert notices == ["Ignored Probe: pair number = 50 from the link: probe: pair 50 is not "
                       "among the 40 pairs written"]
    assert (page.keys, page.d, page.pairs, page.probe) == ("random", 10, 40, 1)
