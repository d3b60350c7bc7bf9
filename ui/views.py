"""Read-only Bokeh views. Each owns its ColumnDataSource and patches it in place on update;
no figure is rebuilt after construction.
"""

from __future__ import annotations

import numpy as np
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


class Heatmap:
    """A signed matrix as coloured cells with exact values on hover.

    Row i is drawn at the top for i = 0 (matrix orientation). The colour scale is diverging,
    centred on zero; ``set_range`` fixes it (e.g. over a whole run, so colours compare across t).
    Cell numbers are printed when there are at most 64 cells, in white on cells darker than
    DARK of the scale's limit (``contrast``) so they stay readable; call ``set_range`` before
    ``update``, the ink is chosen against the current limit.

    A step sends only what changed: the cell values (and the numbers and their ink while they
    are shown), never the cell positions, and the colour scale only when its limit moves.
    """

    DARK = 0.55  # beyond this fraction of the colour scale's limit a cell is too dark for black ink
    MAX_LABELLED = 64  # cells; beyond this the numbers do not fit and hover gives them
    INK, INK_ON_DARK = "#1f2328", "#ffffff"

    def __init__(self, title: str, rows: int, cols: int, *, row_label: str, col_label: str,
                 row_symbol: str = "i", col_symbol: str = "j", width: int = 300, height: int = 300,
                 colorbar: bool = True, show_values: bool = True, value_name: str = "value",
                 contrast: bool = True):
        self.rows, self.cols = rows, cols
        self.show_values = show_values
        self.contrast = contrast
        self.mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.source = ColumnDataSource(self._cells(np.zeros((rows, cols))))
        self.fig = figure(title=title, width=width, height=height, tools=TOOLS,
                          toolbar_location="above", x_range=(-0.5, cols - 0.5),
                          y_range=(rows - 0.5, -0.5), match_aspect=False)
        self.fig.toolbar.logo = None
        self.cells = self.fig.rect("x", "y", 1, 1, source=self.source, line_color="#ffffff",
                                   line_alpha=0.5, fill_color={"field": "value", "transform": self.mapper})
        ink = {"field": "ink"} if contrast else self.INK
        self.labels = self.fig.text("x", "y", text="label", source=self.source, text_align="center",
                                    text_baseline="middle", text_font_size="11px", text_color=ink)
        self.labels.visible = self._labelled()
        self.fig.add_tools(HoverTool(renderers=[self.cells], tooltips=[
            (f"{row_symbol}, {col_symbol}", "@y, @x"), (value_name, "@value{0.000000}")]))
        self.fig.xaxis.axis_label = col_label
        self.fig.yaxis.axis_label = row_label
        self.fig.xaxis.ticker = list(range(cols))
        self.fig.yaxis.ticker = list(range(rows))
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        if colorbar:
            bar = ColorBar(color_mapper=self.mapper, ticker=BasicTicker(desired_num_ticks=5),
                           width=10, label_standoff=6, padding=4)
            self.fig.add_layout(bar, "right")

    def _labelled(self) -> bool:
        return self.show_values and self.rows * self.cols <= self.MAX_LABELLED

    def _text(self, values: np.ndarray) -> dict:
        """The cell numbers and their ink."""
        limit = max(abs(self.mapper.high or 1.0), 1e-300)
        ink = np.where(np.abs(values) > self.DARK * limit, self.INK_ON_DARK, self.INK)
        return {"label": [_fmt(v) for v in values], "ink": ink.tolist()}

    def _cells(self, matrix: np.ndarray) -> dict:
        rows, cols = matrix.shape
        y, x = np.divmod(np.arange(rows * cols), cols)
        values = matrix.ravel().astype(float)
        return {"x": x, "y": y, "value": values, **self._text(values)}

    def update(self, matrix: np.ndarray) -> None:
        """Show a new matrix of the same or a new shape (one data patch)."""
        matrix = np.asarray(matrix, dtype=float)
        if matrix.ndim == 1:
            matrix = matrix[:, None]
        if matrix.shape != (self.rows, self.cols):
            self.rows, self.cols = matrix.shape
            self.fig.x_range.end = self.cols - 0.5
            self.fig.y_range.start = self.rows - 0.5
            self.fig.xaxis.ticker = list(range(self.cols))
            self.fig.yaxis.ticker = list(range(self.rows))
            self.labels.visible = self._labelled()
            self.source.data = self._cells(matrix)
            return
        values = matrix.ravel()  # a new array: BokehJS receives it as one binary column
        if self.labels.visible:
            self.source.data.update(value=values, **self._text(values))
        else:  # the numbers are hidden: leave them, only the colours change
            self.source.data.update(value=values)

    def set_range(self, limit: float) -> None:
        """Fix the colour scale to [-limit, limit] (nothing is sent if it is already there)."""
        limit = float(limit) if np.isfinite(limit) and limit > 0 else 1.0
        if self.mapper.low != -limit or self.mapper.high != limit:
            self.mapper.update(low=-limit, high=limit)


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
        self.marker = Span(location=0, dimension="height", line_color="#6e7781", line_dash="dotted",
                           line_width=1.5, visible=marker)
        self.fig.add_layout(self.marker)

    def update(self, x, **columns) -> None:
        self.source.data = {"x": np.asarray(x), **{k: np.asarray(v) for k, v in columns.items()}}

    def mark(self, x: float) -> None:
        self.marker.location = float(x)
