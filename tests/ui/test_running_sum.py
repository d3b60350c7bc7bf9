"""The running-sum page without a browser: its state drives the plots, and every number is sim's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import columns, heat, same

import sim
from sim import cost, scenarios
from sim.parallel import run_parallel
from ui.pages.running_sum import RANDOM, WORKED, RunningSumPage, RunningSumState
from ui.urlstate import apply_query, to_query


def snapshot(page: RunningSumPage) -> dict:
    """Everything the page shows right now: every plot's data, colour ranges, markers, titles
    and the readout texts."""
    views = {"tokens": page.tokens, "S": page.S_map, "write": page.write_map, "z": page.z_map,
             "memory": page.memory, "work": page.work, "total": page.total, "bytes": page.bytes}
    out: dict = {}
    for name, view in views.items():
        sources = ({"rows": view.rows, "block": view.block} if name == "memory"
                   else {"": view.source})
        out.update(columns({f"{name}.{sub}": source for sub, source in sources.items()}))
        fig = view.fig
        out[f"{name}.title"] = fig.title.text
        if hasattr(view, "mapper"):
            out[f"{name}.range"] = (view.mapper.low, view.mapper.high)
        if hasattr(view, "marker"):
            out[f"{name}.marker"] = view.marker.location
    for name in ("box", "veil"):
        box = getattr(page.tokens, name)
        out[name] = (box.left, box.right, box.top, box.bottom, box.visible)
    out["crossover"] = dict(page.memory.crossover.data_source.data)
    out["memory.shown"] = list(page.memory.filter.indices)
    out["spans"] = [span.location for span, _ in
                    (page.work_cross, page.total_cross, page.bytes_cross)]
    for name in ("token_readout", "outputs", "memory_readout", "cost_readout"):
        out[name] = getattr(page, name).object
    return out


@pytest.fixture
def page(build) -> RunningSumPage:
    return build(RunningSumPage)


def test_defaults_and_empty_start(page):
    s = page.state
    assert (s.preset, s.d, s.tokens, s.feature_map, s.normalize, s.t) == (
        RANDOM, 4, 12, "elu+1", True, 0)
    assert s.t_max == 12
    assert np.all(heat(page.S_map) == 0) and np.all(heat(page.z_map) == 0)
    assert list(page.memory.filter.indices) == []  # nothing cached yet
    assert len(page.memory.rows.data["left"]) == 2 * 12  # every row, drawn once per setting
    assert "Step" in page.token_readout.object


def test_stepping_shows_sims_state_write_and_outputs(page):
    s = page.state
    stream = scenarios.gaussian(12, 4, 4, seed=0)
    state = sim.init_state("linear", 4, 4)
    for t in range(1, 6):
        before = snapshot(page)
        s.step()
        assert not same(snapshot(page), before)
        step = sim.step("linear", state, stream.q[t - 1], stream.k[t - 1], stream.v[t - 1],
                        feature_map="elu+1", normalize=True)
        state = step.state
        np.testing.assert_allclose(heat(page.S_map), state.S, rtol=0, atol=0)
        np.testing.assert_allclose(heat(page.write_map), step.write, rtol=0, atol=0)
        np.testing.assert_allclose(heat(page.z_map)[:, 0], state.z, rtol=0, atol=0)
        assert page.S_map.fig.title.text.startswith("State S")
        assert f"<b>t = {t}</b>" in page.state_readout.object
        # the memory stack shows t rows of k and t rows of v: the first 2t of its rows
        assert list(page.memory.filter.indices) == list(range(2 * t))
        rows = page.memory.rows.data
        assert [rows["what"][i] for i in (2 * t - 2, 2 * t - 1)] == [
            f"k of token {t}: 4 numbers", f"v of token {t}: 4 numbers"]
        assert page.work.marker.location == t
    # The output both ways: the state's and the masked-matrix form's, and they agree.
    direct = run_parallel("linear", stream.q, stream.k, stream.v, feature_map="elu+1",
                          normalize=True)[4]
    html = page.outputs.object
    assert "agree" in html and "✔" in html
    for x in np.concatenate((direct, step.output)):
        assert f"{x:.4g}" in html
    assert np.allclose(direct, step.output)


def test_worked_example_gives_the_lessons_numbers(page):
    s = page.state
    s.preset = WORKED
    assert (s.feature_map, s.normalize, s.t_max) == ("identity", True, 2)
    s.jump(2)
    np.testing.assert_array_equal(heat(page.S_map), [[2, 4], [0, 4]])
    np.testing.assert_array_equal(heat(page.z_map)[:, 0], [2, 1])
    html = page.outputs.object
    assert "(1, 3)" in html  # scores q·k₁, q·k₂
    assert "(2, 12)" in html  # the blend and qᵀS
    assert "= 4<" in html  # the total score and q·z
    assert html.count("(0.5, 3)") == 2  # both ways
    assert "✔" in html
    np.testing.assert_array_equal(s.run.out_direct[1], [0.5, 3.0])
    np.testing.assert_array_equal(s.run.out_state[1], [0.5, 3.0])


def test_jump_equals_stepping(page, build):
    other = build(RunningSumPage)
    for _ in range(7):
        page.state.step()
    other.state.jump(7)
    assert same(snapshot(page), snapshot(other))
    page.state.back()
    other.state.jump(6)
    assert same(snapshot(page), snapshot(other))


@pytest.mark.parametrize("knob, value", [
    ("preset", WORKED), ("d", 7), ("tokens", 30), ("feature_map", "identity"),
    ("normalize", False), ("seed", 5),
])
def test_every_control_changes_the_picture(page, knob, value):
    page.state.jump(3)
    before = snapshot(page)
    setattr(page.state, knob, value)
    assert not same(snapshot(page), before)


def test_d_resizes_every_view_with_sims_cost_numbers(page):
    s = page.state
    s.d = 6
    s.jump(4)
    assert heat(page.S_map).shape == (6, 6) and heat(page.z_map).shape == (6, 1)
    work = page.work.source.data
    x = work["x"]
    assert x.min() == 1 and x.max() == 100_000
    np.testing.assert_array_equal(work["attention 4·t·d"], cost.attention_ops(x, 6))
    assert work["attention 4·t·d"][-1] == 2_400_000  # 4·t·d at t = 100,000, d = 6
    assert set(work["state 4·d²"]) == {144.0}  # 4·d²
    assert page.work_cross[0].location == 6  # work crossover t = d
    assert page.bytes_cross[0].location == cost.memory_crossover(6, 6) == 3
    assert page.memory.crossover.data_source.data["y0"] == [3.0]
    assert page.bytes.source.data["KV cache"][4] == cost.kv_cache_numbers(4, 6) * 4 == 192
    assert page.bytes.source.data["state S + z"][4] == cost.state_numbers(6, 6, with_z=True) * 4
    assert "192 bytes" in page.memory_readout.object and "168 bytes" in page.memory_readout.object
    total = page.total.source.data
    np.testing.assert_array_equal(total["attention"], cost.cumulative_attention_ops(x, 6))
    np.testing.assert_array_equal(total["state"], cost.cumulative_state_ops(x, 6))
    assert total["state"][-1] == 14_400_000  # 4·d²·T at T = 100,000


def test_url_round_trip_reproduces_the_picture(page, build):
    s = page.state
    s.param.update(d=5, tokens=20, feature_map="identity", normalize=False, seed=3)
    s.jump(9)
    query = to_query(s)
    fresh = build(RunningSumPage)
    notices, _ = apply_query(fresh.state, query)
    assert notices == []
    assert fresh.state.t == 9
    assert same(snapshot(fresh), snapshot(page))


def test_url_round_trip_of_the_worked_example(page):
    page.state.preset = WORKED
    page.state.jump(1)
    fresh = RunningSumPage()
    apply_query(fresh.state, to_query(page.state))
    assert same(snapshot(fresh), snapshot(page))


def test_bad_link_values_give_notices(page):
    notices, _ = apply_query(page.state, "d=99&feature_map=relu&t=3")
    assert page.state.d == 4 and page.state.feature_map == "elu+1" and page.state.t == 3
    assert any("d=99" in n for n in notices) and any("feature_map" in n for n in notices)


def test_sim_error_gives_a_notice_and_keeps_the_picture(page, monkeypatch):
    page.state.jump(4)
    before = snapshot(page)

    def broken(*_args, **_kwargs):
        raise sim.DivergenceError("state diverged at token t=3", 3)

    monkeypatch.setattr(scenarios, "gaussian", broken)
    page.state.d = 9  # must not raise
    assert "diverged" in page.state.notice
    assert page.state.d == 4  # the previous setting is back
    assert same(snapshot(page), before)
    monkeypatch.undo()
    page.state.d = 5
    assert page.state.notice == ""


def test_fragile_division_warning(page):
    assert not page.warning.visible
    page.state.feature_map = "identity"
    assert page.warning.visible  # random tokens, identity, divided: φ(q)·z may be near 0
    page.state.normalize = False
    assert not page.warning.visible


def test_csv_has_a_header_and_one_row_per_token(page):
    s = page.state
    s.param.update(d=3, tokens=5)
    lines = s.csv().strip().split("\n")
    assert lines[0].split(",") == ["t", "k_1", "k_2", "k_3", "v_1", "v_2", "v_3",
                                   "q_1", "q_2", "q_3", "o_direct_1", "o_direct_2",
                                   "o_direct_3", "o_state_1", "o_state_2", "o_state_3"]
    assert len(lines) == 6
    stream = scenarios.gaussian(5, 3, 3, seed=0)
    row = [float(x) for x in lines[3].split(",")]
    assert row[0] == 3
    np.testing.assert_array_equal(row[1:4], stream.k[2])
    np.testing.assert_array_equal(row[4:7], stream.v[2])
    np.testing.assert_array_equal(row[7:10], stream.q[2])
    trace = sim.run("linear", stream.q, stream.k, stream.v, feature_map="elu+1", normalize=True)
    np.testing.assert_array_equal(row[13:16], trace.outputs[2])
    np.testing.assert_allclose(row[10:13], trace.outputs[2], rtol=1e-9)
    s.preset = WORKED
    assert s.csv().strip().split("\n")[2] == "2,1.0,1.0,0.0,4.0,1.0,2.0,0.5,3.0,0.5,3.0"


def test_presenter_view_hides_secondary_and_restyles(page):
    page.set_view(present=True)
    assert all(not item.visible for item in page.secondary)
    page.set_view(theme="dark", present=False)
    assert all(item.visible for item in page.secondary)
    assert page.tokens.veil.fill_color == "#161b22"
    label = page.memory.crossover_label  # its box follows the theme, not white on dark
    assert (label.background_fill_color, label.text_color) == ("#161b22", "#e6edf3")


def test_state_needs_no_page():
    s = RunningSumState(d=3, tokens=6)
    s.jump(6)
    assert s.run.T == 6 and s.t == 6


def test_readouts_keep_their_size_from_step_to_step(page):
    """Each readout sends the text shown over an invisible copy of the run's longest text, so
    its height never changes on a step; the text shown is still sim's numbers for token t."""
    s = page.state
    s.d = 6
    sizers = {}
    for t in range(s.t_max + 1):
        s.jump(t)
        for name in ("token_readout", "outputs", "memory_readout", "cost_readout"):
            readout = getattr(page, name)
            sent = readout.pane.object
            assert readout.object in sent
            sizers.setdefault(name, sent.replace(readout.object, "", 1))
            assert sent.replace(readout.object, "", 1) == sizers[name]  # the same sizer
    for x in s.run.stream.k[-1]:
        assert f"{x:.4g}" in page.token_readout.object
    for x in s.run.out_state[-1]:
        assert f"{x:.4g}" in page.outputs.object
    # the sizer is the longest text the run shows
    longest = max((page._outputs_html(s.run, t) for t in range(s.t_max + 1)),
                  key=lambda html: len(re.sub(r"<[^>]*>", "", html)))
    assert longest in page.outputs.pane.object
