"""The running-sum page without a browser: every number it shows is sim's, at every t."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import heat, picture, same

import sim
from sim import cost, scenarios
from sim.parallel import run_parallel
from ui.fmt import num
from ui.pages.running_sum import RANDOM, WORKED, RunningSumPage
from ui.urlstate import apply_query


def text_at(page, readout) -> str:
    """The text a Readout shows now (without its invisible sizer)."""
    return readout.div.text.split("visibility:hidden")[0]


@pytest.fixture
def page(build) -> RunningSumPage:
    return build(RunningSumPage)


def test_defaults_and_empty_start(page):
    assert (page.preset, page.d, page.tokens, page.feature_map, page.normalize, page.t) == (
        RANDOM, 4, 12, "elu+1", True, 0)
    assert page.run.t_max == 12
    assert np.all(heat(page.S_map) == 0) and np.all(heat(page.z_map) == 0)
    assert list(page.memory.filter.indices) == []  # nothing cached yet
    assert len(page.memory.rows.data["left"]) == 2 * 12  # every row, drawn once per setting
    assert "Step" in text_at(page, page.token_text)


def test_stepping_shows_sims_state_write_and_outputs(page):
    stream = scenarios.gaussian(12, 4, 4, seed=0)
    state = sim.init_state("linear", 4, 4)
    for t in range(1, 6):
        before = picture(page)
        page.show(t)
        assert not same(picture(page), before)
        step = sim.step("linear", state, stream.q[t - 1], stream.k[t - 1], stream.v[t - 1],
                        feature_map="elu+1", normalize=True)
        state = step.state
        np.testing.assert_allclose(heat(page.S_map), state.S, rtol=0, atol=0)
        np.testing.assert_allclose(heat(page.write_map), step.write, rtol=0, atol=0)
        np.testing.assert_allclose(heat(page.z_map)[:, 0], state.z, rtol=0, atol=0)
        # the one-line caption: the write's biggest cell, from the plain outer product, and o_t
        caption = text_at(page, page.state_text)
        assert f"<b>t = {t}</b>" in caption
        write = np.outer(np.where(stream.k[t - 1] > 0, stream.k[t - 1] + 1, np.exp(stream.k[t - 1])),
                         stream.v[t - 1])
        i, j = np.unravel_index(np.argmax(np.abs(write)), write.shape)
        assert f"biggest change S[{i}, {j}]: {num(write[i, j])})" in caption
        assert all(num(x) in caption for x in step.output) and "the same from the state alone" in caption
        # the memory stack shows t rows of k and t rows of v: the first 2t of its rows
        assert list(page.memory.filter.indices) == list(range(2 * t))
        rows = page.memory.rows.data
        assert [rows["what"][i] for i in (2 * t - 2, 2 * t - 1)] == [
            f"k of token {t}: 4 numbers", f"v of token {t}: 4 numbers"]
        assert page.work.marker.location == t
        assert (page.tokens_view.box.left, page.tokens_view.veil.left) == (t - 0.5, t + 0.5)
    direct = run_parallel("linear", stream.q, stream.k, stream.v, feature_map="elu+1",
                          normalize=True)[4]
    html = text_at(page, page.outputs_text)
    assert "agree" in html and "✔" in html
    for x in np.concatenate((direct, step.output)):
        assert f"{x:.4g}" in html
    assert np.allclose(direct, step.output)
    # the figures' text alternatives state the numbers shown
    alt = page.alt[page.S_map.fig.id]
    assert alt.startswith("State S (after token t), 4 × 4: row 0: ")
    assert f"{state.S[0, 0]:.2f}" in alt


def test_worked_example_gives_the_lessons_numbers(page):
    page.preset = WORKED
    assert (page.feature_map, page.normalize, page.run.t_max) == ("identity", True, 2)
    page.show(2)
    np.testing.assert_array_equal(heat(page.S_map), [[2, 4], [0, 4]])
    np.testing.assert_array_equal(heat(page.z_map)[:, 0], [2, 1])
    html = text_at(page, page.outputs_text)
    assert "(1, 3)" in html  # scores q·k₁, q·k₂
    assert "(2, 12)" in html  # the blend and qᵀS
    assert "= 4<" in html  # the total score and q·z
    assert html.count("(0.5, 3)") == 2  # both ways
    assert "✔" in html
    table = page.run.table
    assert [table["o_direct_1"][1], table["o_direct_2"][1]] == [0.5, 3.0]
    assert [table["o_state_1"][1], table["o_state_2"][1]] == [0.5, 3.0]


def test_d_resizes_every_view_with_sims_cost_numbers(page):
    page.d = 6
    page.show(4)
    assert heat(page.S_map).shape == (6, 6) and heat(page.z_map).shape == (6, 1)
    assert page.S_map.xticks.ticks == list(range(6))
    work = page.work.source.data
    x = work["x"]
    assert x.min() == 1 and x.max() == 100_000
    np.testing.assert_array_equal(work["attention 4·t·d"], cost.attention_ops(x, 6))
    assert work["attention 4·t·d"][-1] == 2_400_000  # 4·t·d at t = 100,000, d = 6
    assert set(work["state 4·d²"]) == {144.0}  # 4·d²
    assert page.crossings[0][0].location == 6  # work crossover t = d
    # memory: 2·t·d = d² + d (S and z) at t = (d + 1)/2 = 3.5
    assert page.crossings[2][0].location == 3.5
    # the stack in bytes, as the memory plot beside it: rows of 2·d fp32 numbers, 48 bytes
    assert page.memory.fig.yaxis.axis_label == "bytes (fp32)"
    assert page.memory.crossover.data_source.data["y0"] == [3.5 * 48]
    top_of_state = page.memory.block.data["top"][-1]
    assert top_of_state == cost.state_numbers(6, 6, with_z=True) * 4 == 168  # S + z in bytes
    assert page.memory.rows.data["top"][2 * 4 - 1] == cost.kv_cache_numbers(4, 6) * 4  # t = 4
    assert page.bytes.source.data["KV cache"][4] == cost.kv_cache_numbers(4, 6) * 4 == 192
    assert page.bytes.source.data["state S + z"][4] == cost.state_numbers(6, 6, with_z=True) * 4
    memory = text_at(page, page.memory_text)
    assert "192 bytes" in memory and "168 bytes" in memory and "the cache is larger" in memory
    total = page.total.source.data
    np.testing.assert_array_equal(total["attention"], cost.cumulative_attention_ops(x, 6))
    np.testing.assert_array_equal(total["state"], cost.cumulative_state_ops(x, 6))
    assert total["state"][-1] == 14_400_000  # 4·d²·T at T = 100,000


def test_memory_text_and_picture_agree_at_every_t(page):
    """At t = 3, d = 4 the cache (24 numbers) is larger than S + z (20): the caption, the
    totals and the heights of the two stacks all say so."""
    page.show(3)
    memory = text_at(page, page.memory_text)
    assert "24 numbers" in memory and "20 numbers" in memory and "the cache is larger" in memory
    cache_height = page.memory.rows.data["top"][2 * 3 - 1]  # the rows shown: 3 tokens, bytes
    assert cache_height == 24 * 4 > page.memory.block.data["top"][-1] == 20 * 4


def test_url_round_trip_of_the_worked_example(page, build):
    page.preset = WORKED
    fresh = build(RunningSumPage)
    assert apply_query(fresh, "preset=worked+example") == []
    assert (fresh.feature_map, fresh.run.t_max) == ("identity", 2)


def test_sim_error_gives_a_notice_and_keeps_the_picture(page, monkeypatch):
    page.show(4)
    before = picture(page)

    def broken(*_args, **_kwargs):
        raise sim.DivergenceError("state diverged at token t=3", 3)

    monkeypatch.setattr(scenarios, "gaussian", broken)
    page.d = 9  # must not raise
    assert "diverged" in page.notice and "Size d" in page.notice and "= 9" in page.notice
    assert page.d == 4  # the previous setting is back
    assert same(picture(page), before)
    monkeypatch.undo()
    page.d = 5
    assert page.notice == ""


def test_fragile_division_warning(page):
    assert not page.info.visible
    page.feature_map = "identity"
    assert page.info.visible and "φ(q)·z" in page.info.text
    page.normalize = False
    assert not page.info.visible


def test_csv_has_a_header_and_one_row_per_token(page):
    page.param.update(d=3, tokens=5)
    lines = page.csv().strip().split("\n")
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
    page.preset = WORKED
    assert page.csv().strip().split("\n")[2] == "2,1.0,1.0,0.0,4.0,1.0,2.0,0.5,3.0,0.5,3.0"


def test_named_stops(page):
    assert page.named_stops() == [("start", 0), ("t = d", 4), ("t = d + 1", 5)]
    page.d = 16  # beyond the run's 12 tokens: the stops stay within it
    assert [t for _, t in page.named_stops()] == [0, 12, 12]


def test_readouts_keep_their_size_from_step_to_step(page):
    """Each readout sends the text shown over an invisible copy of the run's longest text, so
    its height never changes on a step."""
    page.d = 6
    for readout in (page.token_text, page.outputs_text, page.memory_text, page.cost_text):
        sizers = set()
        for t in range(page.run.t_max + 1):
            page.show(t)
            shown, _, sizer = readout.div.text.partition("visibility:hidden")
            sizers.add(sizer)
        assert len(sizers) == 1
        texts = page.run.data[readout.key]
        longest = max(texts, key=lambda html: len(re.sub(r"<[^>]*>", "", html)))
        assert longest in sizers.pop()


def test_the_cost_caption_at_t_0_names_no_token_read():
    """At t = 0 the cost caption read "Token t = 1, d = 4: …", a token not yet read; it says
    t = 0 now, and gives the first token's work as the first's."""
    from ui.views.running_sum import cost_text  # noqa: PLC0415

    zero, one = cost_text(4, 0), cost_text(4, 1)
    assert "t = 0" in zero and "Token t = 1," not in zero and "the first, t = 1, d = 4" in zero
    assert one.startswith("<p>Token t = 1, d = 4: attention 16 operations")
    assert zero.split("attention ", 1)[1] == one.split("attention ", 1)[1]  # the same numbers
