"""The chunkwise page without a browser: the parts it shows add up to the output, which is the
recurrence's (sim.run) for every rule it offers; its matrices and costs are sim's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import heat

import sim
from sim import scenarios
from ui.pages.chunkwise import DELTA_RULES, RULES, ChunkwisePage


def text_at(readout) -> str:
    """The text a Readout shows now (without its invisible sizer)."""
    return readout.div.text.split("visibility:hidden")[0]


def stream(T=16, d=4, seed=0):
    s = scenarios.gaussian(T, d, d, seed=seed)
    return s.q, sim.l2_normalize(s.k), s.v


@pytest.fixture
def page(build) -> ChunkwisePage:
    return build(ChunkwisePage)


@pytest.mark.parametrize("rule", RULES.values())
def test_parts_add_up_to_the_recurrent_output_for_every_rule(page, rule):
    page.param.update(rule=rule, tokens=11, chunk_size=3, decay=0.8, write_strength=0.7)
    assert page.notice == ""
    q, k, v = stream(11)
    gates = page.gates(11)
    recurrent = sim.run(rule, q, k, v, **gates)
    trace = sim.run_chunkwise(rule, q, k, v, chunk_size=3, **gates)
    for t in range(1, 12):
        page.show(t)
        carried, inside, total, rec, diff = heat(page.parts)  # rows of the figure
        np.testing.assert_array_equal(carried + inside, total)
        np.testing.assert_array_equal(total, trace.outputs[t - 1])
        np.testing.assert_array_equal(rec, recurrent.outputs[t - 1])
        np.testing.assert_allclose(total, rec, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(diff, total - rec)
        c = (t - 1) // 3
        # the state carried into the chunk is the recurrence's state before the chunk
        before = recurrent.states[3 * c - 1] if c else np.zeros((4, 4))
        np.testing.assert_allclose(heat(page.state), before, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(heat(page.state), trace.boundary_states[c])
        shown = heat(page.scores)
        n = len(trace.scores[c])  # the last chunk has 2 tokens: padded with NaN
        np.testing.assert_array_equal(np.nan_to_num(shown[:n, :n]),
                                      np.tril(trace.scores[c]))
        assert np.isnan(shown[np.triu_indices(3, 1)]).all() and np.isnan(shown[n:]).all()
        assert (page.scores.row_box.top, page.scores.row_box.visible) == ((t - 1) % 3 - 0.5, True)
    assert page.ut.fig.visible == (rule in DELTA_RULES)
    if rule in DELTA_RULES:
        page.show(4)  # chunk 2
        np.testing.assert_array_equal(np.nan_to_num(heat(page.ut)), np.tril(trace.transforms[1]))
    rows = page.run.table
    np.testing.assert_array_equal(rows["o_recurrent_2"], recurrent.outputs[:, 1])
    np.testing.assert_array_equal(np.add(rows["inter_3"], rows["intra_3"]), rows["o_chunkwise_3"])
    assert rows["chunk"] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4]


def test_caption_states_the_numbers_shown(page):
    page.show(9)
    html = text_at(page.caption)
    assert "<b>t = 9, chunk 3 of 4</b>" in html
    trace = sim.run_chunkwise("linear", *stream(), chunk_size=4)
    for x in (trace.inter[8, 0], trace.intra[8, 1], trace.outputs[8, 2]):
        assert f"{x:.4g}" in html
    gap = np.max(np.abs(trace.outputs[8] - sim.run("linear", *stream()).outputs[8]))
    assert gap < 1e-14 and "difference" in html
    # the difference row reads ≈0 whether the residue is 0 or 4e-16 (CPython and Pyodide differ)
    assert page.parts.shown_labels()[-4:] == ["≈0"] * 4
    assert page.alt[page.parts.fig.id].endswith("row 4: ≈0, ≈0, ≈0, ≈0")
    assert "S<sub>[2]</sub>" in text_at(page.state_text) and "after token 8" in text_at(page.state_text)
    # the strip boxes token 9 and outlines chunk 3 (tokens 9-12)
    assert (page.strip.box.left, page.strip.chunk_box.left, page.strip.chunk_box.right) == (
        8.5, 8.5, 12.5)
    assert page.alt[page.strip.fig.id].endswith("token 9 (chunk 3) is read now")


def test_costs_are_sims(page):
    page.param.update(chunk_size=8, d=6)
    page.show(5)
    x = page.work.source.data["x"]
    assert x[0] == 1 and x[-1] == 100_000
    costs = sim.chunkwise_cost(x.astype(np.int64), 8, 6)
    for plot, what in ((page.work, "ops"), (page.memory, "numbers"), (page.steps, "steps")):
        for form in ("recurrent", "parallel", "chunkwise"):
            np.testing.assert_array_equal(plot.source.data[form], getattr(costs, f"{form}_{what}"))
    assert page.work.marker.location == 5
    assert all(span.location == 8 for span, _ in page.crossings)  # T = C
    at5 = sim.chunkwise_cost(5, 8, 6)
    html = text_at(page.cost_text)
    assert at5.parallel_ops == 2 * 25 * 12 and f"<td>{at5.parallel_ops:,}</td>" in html
    assert f"<td>{at5.chunkwise_ops:,}</td>" in html and f"<td>{at5.recurrent_ops:,}</td>" in html
    assert f"<td>{at5.chunkwise_numbers:,}</td>" in html  # 5² + 36 = 61
    assert at5.chunkwise_numbers == 61


def test_named_stops_at_chunk_boundaries(page):
    assert page.named_stops() == [("start", 0), ("chunk 1 begins", 1), ("chunk 2 begins", 5),
                                  ("chunk 3 begins", 9), ("chunk 4 begins", 13),
                                  ("last token", 16)]
    page.chunk_size = 5  # chunks 1-5, 6-10, 11-15, 16
    assert [t for _, t in page.named_stops()] == [0, 1, 6, 11, 16, 16]


def test_one_chunk_is_the_parallel_form_and_chunks_of_one_the_recurrence(page):
    page.chunk_size = 32
    assert "parallel form" in page.info.text and page.run.data["starts"].tolist() == [0, 16]
    page.show(16)
    assert heat(page.scores).shape == (16, 16)
    assert np.all(heat(page.state) == 0)  # nothing is carried into the only chunk
    page.chunk_size = 1
    assert "recurrence" in page.info.text
    page.show(7)  # the in-chunk part is token 7's own write read by its query: (q·k) v
    q, k, v = stream()
    np.testing.assert_allclose(heat(page.parts)[1], (q[6] @ k[6]) * v[6], rtol=1e-12)
    np.testing.assert_allclose(heat(page.parts)[0],
                               sim.run("linear", q[:6], k[:6], v[:6]).states[-1].T @ q[6],
                               rtol=1e-12)


def test_gate_settings_reach_sim(page):
    page.param.update(rule="retnet", decay=0.6)
    assert page.gates(16) == {"gamma": 0.6}
    page.param.update(rule="gated_deltanet", write_strength=0.4)
    g = page.gates(16)
    np.testing.assert_array_equal(g["beta"], np.full(16, 0.4))
    np.testing.assert_array_equal(g["alpha"], scenarios.draw_gates(16, 4, 0.6, 0.4, 0)["alpha"])


def test_your_turn_names_the_carried_state_and_plays_it_on_the_plots(page):
    from sim import exercises as sim_exercises  # noqa: PLC0415
    from ui.exercises import GENERATORS, check  # noqa: PLC0415

    assert GENERATORS["chunkwise"] is sim_exercises.chunkwise
    box = page.exercise_box
    assert box.exercise == sim_exercises.chunkwise(0) and "carried-state part" in box.exercise.prompt
    g = box.exercise.given
    n = int(box.exercise.answer[0])
    assert check(box.exercise, str(n)).verdict == "right"
    why = check(box.exercise, str(g["t"] - 1)).html  # the recurrence's state: a named mistake
    assert "Not quite" in why and "previous token" in why
    assert box.plots.visible
    box.show_on_plots()  # the exercise's T and C on the page, the plots at its token
    assert (page.tokens, page.chunk_size) == (g["T"], g["C"])
    box.reveal()
    assert page.t == g["t"]
    # the page says the same: the chunk starts from the state after token n, which it holds
    assert f"the state after token {n}," in text_at(page.state_text)
    q, k, v = stream(g["T"])
    states = sim.run("linear", q, k, v).states
    np.testing.assert_allclose(heat(page.state), states[n - 1], atol=1e-12)


def test_your_turn_a_chunks_masked_scores(page):
    from ui.exercises import check  # noqa: PLC0415

    page.exercise = 3  # odd seeds: a row of a chunk's masked scores (3: RetNet, γ = 0.5)
    box = page.exercise_box
    g = box.exercise.given
    assert g["variant"] == "scores" and g["rule"] == "retnet"
    assert len(box.exercise.answer) == 4 and f"row {g['row']}" in box.prompt.object
    typed = ", ".join(str(x) for x in box.exercise.answer)
    assert check(box.exercise, typed).verdict == "right"
    for wrong, why in box.exercise.mistakes:
        feedback = check(box.exercise, ", ".join(str(x) for x in wrong))
        assert feedback.verdict == "mistake" and why.split(":")[0] in feedback.html
    names = " ".join(why for _, why in box.exercise.mistakes)
    assert "causal mask" in names and "diagonal" in names and "decay" in names
    box.show_on_plots()  # the same rule and chunk size; the row asked for boxed in chunk 2
    box.reveal()
    assert (page.rule, page.chunk_size, page.decay) == ("retnet", 4, 0.5)
    assert page.t == 4 + g["row"] and page.run.data["row"][page.t] == g["row"] - 1


def test_your_turn_travels_in_the_link(page):
    from ui.urlstate import apply_query, to_query  # noqa: PLC0415

    run = page.run
    page.exercise = 7
    assert page.run is run and "ex=7" in to_query(page).split("&")
    fresh = ChunkwisePage()
    assert apply_query(fresh, "ex=7") == [] and fresh.exercise_box.exercise.seed == 7


def test_chunk_names_fit_their_chunks(page):
    """"chunk c" over a chunk of four tokens or more, the number alone over a shorter one (the
    last chunk of one token at T = 17 had "chunk 5" running off the figure's edge) and over more
    than eight chunks."""
    page.param.update(tokens=17, chunk_size=4)
    names = page.strip.names.data
    assert list(names["text"]) == ["chunk 1", "chunk 2", "chunk 3", "chunk 4", "5"]
    np.testing.assert_array_equal(names["x"], [2.5, 6.5, 10.5, 14.5, 17])  # each chunk's middle
    page.chunk_size = 3  # chunks of three: numbers only, as before
    assert list(page.strip.names.data["text"]) == [str(c) for c in range(1, 7)]
    page.param.update(tokens=64, chunk_size=4)  # sixteen chunks: "chunk 16" is wider than its chunk
    assert list(page.strip.names.data["text"]) == [str(c) for c in range(1, 17)]
    page.tokens = 32  # eight: named
    assert list(page.strip.names.data["text"]) == [f"chunk {c}" for c in range(1, 9)]
