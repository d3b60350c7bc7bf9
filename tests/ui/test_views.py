"""The shared views, the formatters and the CSV writer."""

from __future__ import annotations

import csv
import io

import numpy as np
from bokeh.models import ColorBar

from ui.csvfile import to_csv
from ui.fmt import cell, count, num, plain, ratio, text, vec
from ui.page import Run
from ui.views import Heatmap, LinePlot, Readout


def run_of(**data) -> Run:
    t_max = len(next(iter(data.values()))) - 1
    return Run(t_max=t_max, data=data)


def test_heatmap_frames_borders_and_ticks():
    h = Heatmap("S", "S", row_label="i", col_label="j")
    m = np.arange(3 * 4 * 4, dtype=float).reshape(3, 4, 4) - 20
    run = run_of(S=m)
    h.setup(run)
    frames = h.frames(run)
    assert len(frames["image"]) == 3 and np.array_equal(frames["image"][2][0], m[2])
    data = h.grid_source.data
    assert len(data["x0"]) == 2 * (4 + 1)  # grid lines, not one outline per cell
    assert sorted(data["alpha"][:5]) == [0.5, 0.5, 0.75, 0.75, 0.75]
    assert (h.mapper.low, h.mapper.high) == (-27.0, 27.0) == (h.bar_mapper.low, h.bar_mapper.high)
    ticker = h.xticks
    h.setup(run_of(S=np.ones((2, 3, 5))))
    assert h.xticks is ticker and ticker.ticks == [0, 1, 2, 3, 4]  # set in place, no new model
    assert len(h.grid_source.data["x0"]) == (3 + 1) + (5 + 1)
    (bar,) = h.fig.select(type=ColorBar)
    assert bar.color_mapper is h.bar_mapper is not h.mapper
    # a step repaints the overlay level alone: the cells and their numbers; the colour bar,
    # whose scale is the run's, is painted with the axes (a moving scale's bar with the cells)
    assert {r.level for r in (h.cells, *h.labels)} == {"overlay"} and bar.level == "annotation"
    from ui.views.gates import ScaledHeatmap  # noqa: PLC0415
    (moving,) = ScaledHeatmap("S0", "S", row_label="i", col_label="j").fig.select(type=ColorBar)
    assert moving.level == "overlay"
    # the numbers' ink is one colour per glyph, never a colour per cell (BokehJS read a
    # shortened colour column against the old labels when the matrix shrank)
    assert [g.glyph.text_color for g in h.labels] == [Heatmap.INK, Heatmap.INK_ON_DARK]


def test_heatmap_numbers_fit_their_cells_and_residue_reads_about_zero():
    h = Heatmap("E", "erased", row_label="i", col_label="j")
    run = run_of(E=np.array([[[-1.2e-17, 0.0], [0.004, -1.25]], [[-0.0081, 150.0], [1, 2]]]),
                 E_limit=np.array(1.5))
    h.setup(run)
    frames = h.frames(run)
    labels = [[a or b for a, b in zip(*rows)] for rows in zip(frames["light"], frames["dark"])]
    assert labels[0] == ["≈0", "0", "4e-3", "-1.25"]
    # ink_strong on the two darkest colours at each end of the scale (1.5), ink on the others
    assert frames["light"][0] == ["≈0", "0", "4e-3", None]
    assert frames["dark"][1] == [None, "2e2", "1.00", "2.00"]
    assert labels[1] == ["-8e-3", "2e2", "1.00", "2.00"]
    assert all(len(s) <= 6 for row in labels for s in row)
    big = Heatmap("B", "big", row_label="i", col_label="j")
    run = run_of(B=np.ones((2, 9, 9)))
    big.setup(run)
    frames = big.frames(run)
    assert not any(g.visible for g in big.labels)
    assert frames["light"][0] == frames["dark"][0] == []  # no text points
    assert len(big.source.data["x"]) == 0


def test_lineplot_marker_and_text_alternative():
    p = LinePlot("Memory", {"cache": "kv"}, x="ts", x_label="t", y_label="bytes", marker="ts")
    run = run_of(ts=np.arange(4), kv=np.array([0.0, 8, 16, 24]))
    p.setup(run)
    frames = p.frames(run)
    assert list(frames["marker"]) == [0, 1, 2, 3] and p.marker.level == "overlay"
    assert frames["alt"][2] == "Memory: at 2: cache 16"


def test_readout_reserves_the_longest_text():
    r = Readout("t")
    frames = r.frames(run_of(t=["short", "<b>much</b> longer text", "mid"]))["text"]
    assert len(frames) == 3 and all("much</b> longer text" in f for f in frames)
    assert frames[2].startswith("<div style='display:grid'><div style='grid-area:1/1;min-width:0'>mid<")


def test_formatters():
    assert [num(0), num(2.0), num(1 / 3), num(123456), num(1e-5)] == [
        "0", "2", "0.3333", "1.235e+05", "1.000e-05"]
    assert vec([0.5, 3]) == "(0.5, 3)" and count(1234567.4) == "1,234,567"
    assert ratio(781.25) == "781.25" and ratio(25000) == "25,000"
    assert cell(2.17e-16, tiny=1e-9) == "≈0" and cell(-0.0081) == "-8e-3"
    # control and invisible characters shown as escapes: what is quoted is what was given
    assert plain("a\x1b[31mb\nc") == "a\\u001b[31mb\\u000ac" and len(plain("x" * 100, 10)) == 10
    assert plain("8\u200b") == "8\\u200b"
    assert text('<img src="x" onerror="f()">') == "&lt;img src=&quot;x&quot; onerror=&quot;f()&quot;&gt;"


def test_csv_neutralises_formulas_and_keeps_numbers():
    out = to_csv({"name": ["=HYPERLINK(\"x\")", "+1", "-2.5", "@SUM(A1)", "plain"],
                  "value": [1, 2.5, -3.0, float("nan"), True]})
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["name", "value"]
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(\"x\")", "+1", "-2.5", "'@SUM(A1)", "plain"]
    assert [r[1] for r in rows[1:]] == ["1", "2.5", "-3.0", "nan", "1"]


def test_every_axis_of_every_page_draws_only_the_tick_labels_that_fit():
    """At d = 16 running-sum's heatmaps ran 16 tick labels together ("9101112131415"): every
    axis of every figure on every page leaves out a label that would come within a few px of the
    last one drawn (BokehJS's NoOverlap, at whatever size the figure is drawn)."""
    from bokeh.models import Axis, NoOverlap  # noqa: PLC0415

    from ui.pages import PAGES, page_class  # noqa: PLC0415
    from ui.views import TICK_LABEL_GAP  # noqa: PLC0415

    for info in PAGES:
        page = page_class(info)()
        figures = [fig for view in page.views for fig in view.figures()]
        axes = [a for fig in figures for a in fig.select(type=Axis)]
        assert figures and len(axes) >= 2 * len(figures), info.slug
        policies = {type(a.major_label_policy) for a in axes}
        assert policies == {NoOverlap}, (info.slug, policies)
        assert {a.major_label_policy.min_distance for a in axes} == {TICK_LABEL_GAP}


def test_heatmap_ticks_step_regularly_where_sixteen_labels_would_run_together():
    """At d = 16 the heatmaps' 16 tick labels ran together ("9101112131415"): a heatmap of its own
    size ticks every 2nd cell then ("0 2 4 … 14"), every cell at d = 4, every 5th at 32."""
    h = Heatmap("S", "S", row_label="i", col_label="j", width=300, height=290)
    for d, want in ((4, [0, 1, 2, 3]), (16, list(range(0, 16, 2))), (32, list(range(0, 32, 5)))):
        h.setup(run_of(S=np.ones((2, d, d))))
        assert h.xticks.ticks == want and h.yticks.ticks == want, (d, h.xticks.ticks, h.yticks.ticks)
    wide = Heatmap("o", "o", row_label="", col_label="j", width=330, height=150)
    wide.setup(run_of(o=np.ones((2, 2, 16))))
    assert wide.yticks.ticks == [0, 1] and wide.xticks.ticks == list(range(0, 16, 2))
