"""Read-only Bokeh views. Each owns its ColumnDataSource and patches it in place on update;
no figure is rebuilt after construction.
"""

from __future__ import annotations

import re

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    HoverTool,
    LinearColorMapper,
    Span,
)
from bokeh.plotting import figure

from ui.theme import DIVERGING, LINES

TOOLS = "save"  # every plot can be saved as PNG; pan/zoom would fight with touch scrolling


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 100 or abs(x) < 0.01:
        return f"{x:.1e}"
    return f"{x:.2f}"


_TAG = re.compile(r"<[^>]*>")


class Readout:
    """An HTML readout whose size stays the same from step to step.

    A Panel HTML pane that changes its height on a step makes BokehJS lay out the whole page
    again (every figure's axes and labels), which costs more than the step itself. So the text
    shown sits in one grid cell with an invisible copy of the run's longest text (its *sizer*,
    chosen by ``fit`` once per setting): the pane is always as tall as the sizer, at whatever
    width the browser gives it, and a step only swaps the text. The text is sent only when it
    changes. ``object`` is the text shown (without the sizer); ``pane`` goes in the layout.
    """

    def __init__(self, **params):
        self.pane = pn.pane.HTML("", **params)
        self.object = ""
        self.texts: list[str] = []
        self._sizer = ""

    def fit(self, texts) -> None:
        """Reserve room for the longest of ``texts`` (every text this setting can show). They
        are kept, in order, for ``show_at``."""
        self.texts = list(texts)
        sizer = max(self.texts, key=lambda html: len(_TAG.sub("", html)), default="")
        if sizer != self._sizer:
            self._sizer = sizer
            self._send()

    def show_at(self, i: int) -> None:
        """Show the i-th of the texts given to ``fit`` (on a page: the text for token t)."""
        self.show(self.texts[i])

    def show(self, html: str) -> None:
        if html != self.object:
            self.object = html
            self._send()

    def _send(self) -> None:
        html = ("<div style='display:grid'><div style='grid-area:1/1;min-width:0'>" + self.object
                + "</div><div style='grid-area:1/1;min-width:0;visibility:hidden' "
                "aria-hidden='true'>" + self._sizer + "</div></div>")
        models = [model for model, _parent in self.pane._models.values()]
        if not models:  # not rendered yet: Panel sends it with the page
            self.pane.object = html
            return
        # Rendered: set the text on the pane's Bokeh models directly, the way Panel's HTML pane
        # would send it. Panel's own update path re-derives every property of the pane (its
        # design's stylesheets included) on each change, about 1.5 ms a readout in Pyodide,
        # five times a step on some pages; the pane's `object` is kept current without events.
        with param.parameterized.discard_events(self.pane):
            self.pane.object = html
        text = self.pane._transform_object(html)["object"]
        for model in models:
            model.text = text


class Heatmap:
    """A signed matrix as coloured cells with exact values on hover.

    Row i is drawn at the top for i = 0 (matrix orientation). The colour scale is diverging,
    centred on zero; ``set_range`` fixes it (e.g. over a whole run, so colours compare across t).
    Cell numbers are printed when there are at most 64 cells, in white on cells darker than
    DARK of the scale's limit (``contrast``) so they stay readable; call ``set_range`` before
    ``update``, the ink is chosen against the current limit.

    The colours are one Bokeh image (a single glyph, however many cells), so a step sends one
    small array and BokehJS repaints one bitmap; the cell borders are one static glyph of
    rows + cols + 2 grid lines, sent again only when the shape changes, and the numbers are sent
    only while they are shown.

    What a step changes is drawn on the figure's overlay layer. BokehJS repaints a figure's
    primary layer (axes, title and every glyph on it) whenever one of its glyphs changes, but
    only the overlay layer when just overlay renderers changed. A step changes the cells and
    numbers, and on some steps the colour scale, so they, the borders over them and the colour
    bar go there; the axes and title are repainted only when they change. The picture is the
    same: the overlay is drawn over the frame and beside it, where they were.

    The colour bar has its own mapper, kept equal to the image's by ``set_range``: BokehJS's
    colour mapper announces new "metrics" every time it colours the image, and a colour bar on
    the same mapper answers by re-laying-out and repainting its whole figure, on every step.
    Change the scale through ``set_range`` only.
    """

    DARK = 0.55  # beyond this fraction of the colour scale's limit a cell is too dark for black ink
    MAX_LABELLED = 64  # cells; beyond this the numbers do not fit and hover gives them
    INK, INK_ON_DARK = "#1f2328", "#ffffff"
    TINY = 1e-9  # of the colour scale's limit: below it a number is rounding residue, shown "≈0"

    def __init__(self, title: str, rows: int, cols: int, *, row_label: str, col_label: str,
                 row_symbol: str = "i", col_symbol: str = "j", width: int = 300, height: int = 300,
                 colorbar: bool = True, show_values: bool = True, value_name: str = "value",
                 contrast: bool = True):
        self.rows, self.cols = rows, cols
        self.show_values = show_values
        self.contrast = contrast
        self.matrix = np.zeros((rows, cols))
        self.mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.bar_mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.image_source = ColumnDataSource({"image": [self.matrix.copy()]})
        self.source = ColumnDataSource(self._cells(self.matrix))  # the numbers
        self.grid_source = ColumnDataSource(self._grid(rows, cols))  # the cell borders
        self.fig = figure(title=title, width=width, height=height, tools=TOOLS,
                          toolbar_location="above", x_range=(-0.5, cols - 0.5),
                          y_range=(rows - 0.5, -0.5), match_aspect=False)
        self.fig.toolbar.logo = None
        # Row 0 of the image sits at y = -0.5, the top of the flipped y range.
        self.cells = self.fig.image(image="image", x=-0.5, y=-0.5, dw=cols, dh=rows,
                                    color_mapper=self.mapper, source=self.image_source,
                                    level="overlay")
        # The borders are the grid's rows + cols + 2 lines, one segment glyph, not a rect per cell.
        self.borders = self.fig.segment("x0", "y0", "x1", "y1", source=self.grid_source,
                                        line_color="#ffffff", line_alpha="alpha", level="overlay")
        ink = {"field": "ink"} if contrast else self.INK
        self.labels = self.fig.text("x", "y", text="label", source=self.source, text_align="center",
                                    text_baseline="middle", text_font_size="11px", text_color=ink,
                                    level="overlay")
        self.labels.visible = self._labelled()
        self.fig.add_tools(HoverTool(renderers=[self.cells], tooltips=[
            (f"{row_symbol}, {col_symbol}", "$y{0}, $x{0}"), (value_name, "@image{0.000000}")]))
        self.fig.xaxis.axis_label = col_label
        self.fig.yaxis.axis_label = row_label
        self.fig.xaxis.ticker = list(range(cols))
        self.fig.yaxis.ticker = list(range(rows))
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        if colorbar:
            bar = ColorBar(color_mapper=self.bar_mapper, ticker=BasicTicker(desired_num_ticks=5),
                           width=10, label_standoff=6, padding=4, level="overlay")
            self.fig.add_layout(bar, "right")

    def _labelled(self) -> bool:
        return self.show_values and self.rows * self.cols <= self.MAX_LABELLED

    def _text(self, values: np.ndarray) -> dict:
        """The cell numbers and their ink (empty while the numbers are hidden)."""
        if not self._labelled():
            return {"label": [""] * len(values), "ink": [self.INK] * len(values)}
        limit = max(abs(self.mapper.high or 1.0), 1e-300)
        ink = np.where(np.abs(values) > self.DARK * limit, self.INK_ON_DARK, self.INK)
        # Rounding residue (|x| below a billionth of the scale, e.g. 1e-17 left where the delta
        # rule erased a value exactly) reads "≈0": its digits would spill out of the cell; hover
        # still gives the exact value.
        tiny = self.TINY * limit
        labels = [_fmt(v) if v == 0 or abs(v) >= tiny else "≈0" for v in values]
        return {"label": labels, "ink": ink.tolist()}

    BORDER_ALPHA = 0.5  # white at this opacity around every cell

    @classmethod
    def _grid(cls, rows: int, cols: int) -> dict:
        """The lines between and around the cells: cols + 1 vertical, rows + 1 horizontal.

        A line between two cells is as opaque as both cells' outlines drawn over each other
        (1 − (1 − a)²), the frame's edge as one outline, so the grid looks as outlined cells did.
        """
        xs = np.arange(cols + 1) - 0.5
        ys = np.arange(rows + 1) - 0.5
        top, bottom, left, right = -0.5, rows - 0.5, -0.5, cols - 0.5
        a = cls.BORDER_ALPHA
        inner = 1 - (1 - a) ** 2

        def alphas(n: int) -> np.ndarray:  # n + 1 lines: the two outer ones once, inner twice
            out = np.full(n + 1, inner)
            out[[0, -1]] = a
            return out

        return {"x0": np.concatenate([xs, np.full(rows + 1, left)]),
                "x1": np.concatenate([xs, np.full(rows + 1, right)]),
                "y0": np.concatenate([np.full(cols + 1, top), ys]),
                "y1": np.concatenate([np.full(cols + 1, bottom), ys]),
                "alpha": np.concatenate([alphas(cols), alphas(rows)])}

    def _cells(self, matrix: np.ndarray) -> dict:
        rows, cols = matrix.shape
        y, x = np.divmod(np.arange(rows * cols), cols)
        return {"x": x, "y": y, **self._text(matrix.ravel())}

    def update(self, matrix: np.ndarray) -> None:
        """Show a new matrix of the same or a new shape (one data patch)."""
        matrix = np.array(matrix, dtype=float)  # a copy: the view must not alias caller arrays
        if matrix.ndim == 1:
            matrix = matrix[:, None]
        reshaped = matrix.shape != (self.rows, self.cols)
        self.matrix = matrix
        if reshaped:
            self.rows, self.cols = matrix.shape
            self.fig.x_range.end = self.cols - 0.5
            self.fig.y_range.start = self.rows - 0.5
            self.fig.xaxis.ticker = list(range(self.cols))
            self.fig.yaxis.ticker = list(range(self.rows))
            self.cells.glyph.update(dw=self.cols, dh=self.rows)
            self.labels.visible = self._labelled()
            self.source.data = self._cells(matrix)
            self.grid_source.data = self._grid(self.rows, self.cols)
        elif self.labels.visible:
            self.source.data.update(**self._text(matrix.ravel()))
        self.image_source.data.update(image=[matrix])

    def set_range(self, limit: float) -> None:
        """Fix the colour scale to [-limit, limit] (nothing is sent if it is already there)."""
        limit = float(limit) if np.isfinite(limit) and limit > 0 else 1.0
        if self.mapper.low != -limit or self.mapper.high != limit:
            self.mapper.update(low=-limit, high=limit)
            self.bar_mapper.update(low=-limit, high=limit)


class LinePlot:
    """Several named series over a shared x, plus a vertical marker (the current token)."""

    def __init__(self, title: str, series: list[str], *, x_label: str, y_label: str,
                 width: int = 420, height: int = 280, x_axis_type: str = "linear",
                 y_axis_type: str = "linear", marker: bool = True, legend: str = "top_left",
                 dashed: tuple[str, ...] = ()):
        self.series = list(series)
        self.source = ColumnDataSource({"x": [], **{s: [] for s in self.series}})
        self.fig = figure(title=title, width=width, height=height, tools=TOOLS,
                          toolbar_location="above", x_axis_type=x_axis_type, y_axis_type=y_axis_type)
        self.fig.toolbar.logo = None
        self.fig.xaxis.axis_label = x_label
        self.fig.yaxis.axis_label = y_label
        for i, name in enumerate(self.series):
            r = self.fig.line("x", name, source=self.source, color=LINES[i % len(LINES)],
                              line_width=2.5, legend_label=name,
                              line_dash="dashed" if name in dashed else "solid")
            r.tags = [2.5]
        self.fig.add_tools(HoverTool(tooltips=[("x", "@x{0,0.[00]}"), *[(s, f"@{{{s}}}{{0.[0000]}}") for s in self.series]],
                                     mode="vline", renderers=self.fig.renderers[:1]))
        if self.series:
            self.fig.legend.location = legend
            self.fig.legend.click_policy = "hide"
        # On the overlay layer: moving the marker on a step repaints that layer alone.
        self.marker = Span(location=0, dimension="height", line_color="#6e7781", line_dash="dotted",
                           line_width=1.5, visible=marker, level="overlay")
        self.fig.add_layout(self.marker)

    def update(self, x, **columns) -> None:
        self.source.data = {"x": np.asarray(x), **{k: np.asarray(v) for k, v in columns.items()}}

    def mark(self, x: float) -> None:
        self.marker.location = float(x)
