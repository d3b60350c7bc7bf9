"""The shared views: Heatmap's borders and colour bar, Readout's fixed size."""

from __future__ import annotations

import numpy as np
from bokeh.models import ColorBar

from ui.views import Heatmap, LinePlot, Readout


def test_heatmap_borders_are_grid_lines_sent_only_on_a_new_shape():
    h = Heatmap("S", 4, 4, row_label="i", col_label="j")
    data = h.grid_source.data
    assert len(data["x0"]) == 2 * (4 + 1)  # not one outline per cell
    vertical = [(x0, y0, x1, y1) for x0, y0, x1, y1 in zip(data["x0"], data["y0"], data["x1"],
                                                             data["y1"]) if x0 == x1]
    assert sorted(v[0] for v in vertical) == [-0.5, 0.5, 1.5, 2.5, 3.5]
    assert all((v[1], v[3]) == (-0.5, 3.5) for v in vertical)
    assert h.borders.glyph.line_color == "#ffffff"
    # as outlined cells looked: 0.5 at the frame's edge, two 0.5 outlines over each other inside
    assert sorted(data["alpha"][:5]) == [0.5, 0.5, 0.75, 0.75, 0.75]
    before = h.grid_source.data
    h.update(np.ones((4, 4)))
    assert h.grid_source.data is before  # a step sends nothing for the borders
    h.update(np.ones((3, 5)))
    assert len(h.grid_source.data["x0"]) == (3 + 1) + (5 + 1)
    assert max(h.grid_source.data["x1"]) == 4.5 and max(h.grid_source.data["y1"]) == 2.5


def test_heatmap_draws_on_the_overlay_with_its_own_bar_mapper():
    h = Heatmap("S", 3, 3, row_label="i", col_label="j")
    (bar,) = h.fig.select(type=ColorBar)
    assert bar.color_mapper is h.bar_mapper is not h.mapper
    assert {r.level for r in (h.cells, h.borders, h.labels, bar)} == {"overlay"}
    h.set_range(2.5)
    assert (h.bar_mapper.low, h.bar_mapper.high) == (h.mapper.low, h.mapper.high) == (-2.5, 2.5)
    assert LinePlot("p", ["a"], x_label="x", y_label="y").marker.level == "overlay"


def test_heatmap_numbers_show_rounding_residue_as_about_zero():
    h = Heatmap("erased", 2, 2, row_label="i", col_label="j")
    h.set_range(1.5)
    h.update(np.array([[-1.2e-17, 0.0], [0.004, -1.25]]))
    assert h.source.data["label"] == ["≈0", "0", "4.0e-03", "-1.25"]
    np.testing.assert_array_equal(h.image_source.data["image"][0][0], [-1.2e-17, 0.0])  # hover


def test_readout_reserves_the_longest_text_and_sends_only_changes():
    r = Readout()
    r.fit(["short", "<b>much</b> longer text", "mid text"])
    assert "much</b> longer text" in r.pane.object and r.object == ""
    r.show("short")
    sent = r.pane.object
    assert r.object == "short" and "visibility:hidden" in sent
    r.show("short")
    assert r.pane.object is sent
    r.show_at(2)  # the fitted texts, by index (a page's text for token t)
    assert r.object == "mid text" and r.pane.object is not sent


def test_rendered_readout_sets_its_models_text_directly(monkeypatch):
    """Once rendered, a readout writes the text to its Bokeh models itself (Panel's own update
    re-derives every property of the pane); the model holds what Panel would have sent."""
    from bokeh.document import Document

    r = Readout()
    r.fit(["a < b", "longer & longer"])
    model = r.pane.get_root(Document())
    panel_updates = []
    monkeypatch.setattr(r.pane, "_update_object", lambda *args: panel_updates.append(args))
    r.show("a < b")
    assert panel_updates == []  # not through Panel's update
    assert r.object == "a < b" and "a < b" in r.pane.object
    assert model.text == r.pane._transform_object(r.pane.object)["object"]
    assert "a &lt; b" in model.text  # escaped, as Panel sends HTML panes' text
