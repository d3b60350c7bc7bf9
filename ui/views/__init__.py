"""Views: read-only pictures of a Run, each bound to columns of it.

This package holds the views every page shares (here) and each page's own views (one module per
page: ``ui.views.running_sum``, ``ui.views.hybrid``, …); the pages in ``ui.pages`` compose them.

A view has two halves:
- ``setup(run)``: what is the same for every t of a run (axis ranges, colour scales, curves
  that do not move); it changes Bokeh models in Python, once per setting;
- ``frames(run)``: what changes with t, as ``{key: [value at t = 0, 1, …, t_max]}``, and
  ``bindings``: ``(model, attribute, key)`` triples saying where frame t of each key goes
  (``"data.<column>"`` for a ColumnDataSource column).
The page sends every view's frames to BokehJS once per setting; the browser's player
(assets/js/player.js) puts frame t of each key into its model on every step, with no Python.
``Page.show(t)`` does the same in Python (tests, and the page as built before it is sent).
"""

from __future__ import annotations

import re

import numpy as np
import panel as pn
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    Div,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    NoOverlap,
    Span,
)
from bokeh.plotting import figure

from ui.fmt import cell, num
from ui.theme import DIVERGING, HEATMAP, INK_STRONG_AT, LINES

TOOLS = "save"  # every plot can be saved as PNG; pan/zoom would fight with touch scrolling


def make_figure(title: str, *, width: int = 360, height: int = 290, **kwargs):
    """A figure as every page draws it: a PNG save button, no logo, no grid on request.

    The toolbar sits inside the plot's frame (top right) and shows only while the pointer is
    over the figure: above the frame it shared the title's row and covered long titles
    ("Tokens: key k, value v, query q⋮"), in every view.
    """
    fig = figure(title=title, width=width, height=height, tools=TOOLS, toolbar_location="above",
                 toolbar_inner=True, **kwargs)
    fig.toolbar.logo = None
    fig.toolbar.autohide = True
    thin_tick_labels(fig)
    return fig


TICK_LABEL_GAP = 4  # px: the least room between two tick labels BokehJS draws


def thin_tick_labels(fig) -> None:
    """Every axis of ``fig`` draws only the tick labels that fit, at whatever size it is drawn
    (BokehJS's NoOverlap, at draw time: the page, a phone, the presenter's scale): a label that
    would come within TICK_LABEL_GAP px of the last one drawn is left out. At d = 16 a heatmap's
    16 labels ran together ("9101112131415"); the tick marks stay."""
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.major_label_policy = NoOverlap(min_distance=TICK_LABEL_GAP)


PHONE_MIN_WIDTH = 300  # px: the narrowest a fluid figure gets (a 390 px phone less the margins)


def fluid(model, min_width: int = PHONE_MIN_WIDTH):
    """Let a model of fixed ``width`` shrink on a narrow screen and never grow past it: stretch
    to its row, at most its width (the desktop and presenter look), at least ``min_width``.
    A fixed width wider than a phone made every column holding it that wide (sideways scroll
    at 390 px). Returns the model."""
    width = model.width
    model.update(sizing_mode="stretch_width", max_width=width, min_width=min(min_width, width))
    return model


class View:
    """Base of the views. Subclasses build their models in __init__ and fill these in."""

    bindings: list[tuple] = []

    def figures(self) -> list:
        """The view's figures (a single-figure view keeps it in ``self.fig``)."""
        return [self.fig] if hasattr(self, "fig") else []

    def panel(self) -> pn.viewable.Viewable:
        return pn.pane.Bokeh(self.fig)

    def setup(self, run) -> None:
        """Per setting: everything that is the same for every t."""

    def frames(self, run) -> dict[str, list]:
        """Per setting: what changes with t, one value per t (0 … run.t_max)."""
        return {}


_TAG = re.compile(r"<[^>]*>")


class Readout(View):
    """HTML text that changes with t, in a box that keeps its size from step to step.

    A box that changes its height on a step makes BokehJS lay out the whole page again (every
    figure's axes and labels), which costs more than the step. So every text of a run sits in
    one grid cell with an invisible copy of the run's longest text (its sizer): the box is as
    tall as the sizer at whatever width it gets, and a step only swaps the text.
    ``key`` names a list of HTML texts in ``run.data``, one per t. The texts are the page's own
    markup; anything from outside must be escaped with ``ui.fmt.text`` first.
    """

    # A text wider than its box (a table on a phone) scrolls inside the box, not the page.
    CSS = ".bk-clearfix { max-width: 100%; overflow-x: auto; overflow-y: hidden; }"

    def __init__(self, key: str, **div):
        self.key = key
        div["stylesheets"] = [self.CSS, *div.get("stylesheets", [])]
        self.div = Div(text="", **div)
        self.bindings = [(self.div, "text", "text")]

    def panel(self):
        return pn.pane.Bokeh(self.div)

    def frames(self, run) -> dict[str, list]:
        texts = list(run.data[self.key])
        sizer = max(texts, key=lambda h: len(_TAG.sub("", h)), default="")
        box = ("<div style='display:grid'><div style='grid-area:1/1;min-width:0'>{}</div>"
               "<div style='grid-area:1/1;min-width:0;visibility:hidden' aria-hidden='true'>"
               + sizer + "</div></div>")
        return {"text": [box.format(h) for h in texts]}


class Heatmap(View):
    """A signed matrix over t as coloured cells with exact values on hover.

    ``run.data[key]`` is (T + 1, rows, cols), or (T + 1, rows) for a column vector. Row 0 is at
    the top (matrix orientation). The colour scale is diverging and centred on zero, fixed over
    the whole run (``run.data[key + "_limit"]`` if given, else the run's largest |value|) so
    colours compare across t. Numbers are printed in cells when there are at most 64, each in
    the ink its cell's colour takes (ui/theme.py INK_STRONG_AT: 4.5:1 or more in both themes).

    The numbers are two text glyphs of constant colour, one for the light cells and one for the
    dark ones, each with its own column of labels (None where the cell is the other's): a
    colour per cell (text_color from a column) broke BokehJS when a run changed the number of
    cells, since it rebuilds the labels later than the colours ("Offset is outside the bounds
    of the DataView"), and parsing a colour per cell on every step cost time too.

    The colours are one image glyph (one small array a step, one bitmap to repaint); the borders
    are one segment glyph of rows + cols + 2 lines. What a step changes is on the overlay layer,
    so a step repaints that layer and not the axes. The colour bar has its own mapper, kept
    equal to the image's: a colour bar on the image's mapper re-lays-out its whole figure every
    time the image is coloured.
    """

    MAX_LABELLED = 64  # cells; beyond this the numbers do not fit and hover gives them
    INK, INK_ON_DARK = HEATMAP["light"]["ink"], HEATMAP["light"]["ink_strong"]  # (the dark theme's: restyle.js)
    TINY = 1e-9  # of the scale's limit: below it a number is rounding residue, shown "≈0"
    BORDER_ALPHA = 0.5  # white at this opacity around every cell

    # The colour bar is painted with the axes: a step repaints only the overlay level (the
    # cells, their numbers and lines), and a colour bar there was drawn again on every step
    # though its scale is the run's. A view whose scale moves per step paints it as an overlay.
    COLORBAR_LEVEL = "annotation"

    def __init__(self, key: str, title: str, *, row_label: str, col_label: str,
                 row_symbol: str = "i", col_symbol: str = "j", width: int = 300,
                 height: int = 300, colorbar: bool = True, show_values: bool = True,
                 value_name: str = "value"):
        self.key = key
        self.rows = self.cols = 0
        self.show_values = show_values
        self.mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.bar_mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.image_source = ColumnDataSource({"image": [np.zeros((1, 1))]})
        self.source = ColumnDataSource({"x": [], "y": [], "light": [], "dark": []})
        self.grid_source = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": [], "alpha": []})
        self.fig = make_figure(title, width=width, height=height, x_range=(-0.5, 0.5),
                               y_range=(0.5, -0.5))
        self.cells = self.fig.image(image="image", x=-0.5, y=-0.5, dw=1, dh=1,
                                    color_mapper=self.mapper, source=self.image_source,
                                    level="overlay")
        self.fig.segment("x0", "y0", "x1", "y1", source=self.grid_source, line_color=HEATMAP["light"]["border"],
                         line_alpha="alpha", level="overlay")
        self.labels = [self.fig.text("x", "y", text=column, source=self.source,
                                     text_align="center", text_baseline="middle",
                                     text_font_size="11px", text_color=ink, level="overlay")
                       for column, ink in (("light", self.INK), ("dark", self.INK_ON_DARK))]
        self.fig.add_tools(HoverTool(renderers=[self.cells], tooltips=[
            (f"{row_symbol}, {col_symbol}", "$y{0}, $x{0}"), (value_name, "@image{0.000000}")]))
        self.fig.xaxis.axis_label = col_label
        self.fig.yaxis.axis_label = row_label
        # One ticker per axis for good, its ticks set in place: assigning a new ticker on each
        # change of shape piled up models in the document that were never freed.
        self.xticks, self.yticks = FixedTicker(ticks=[0]), FixedTicker(ticks=[0])
        self.fig.xaxis.ticker = self.xticks
        self.fig.yaxis.ticker = self.yticks
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        if colorbar:
            self.fig.add_layout(ColorBar(color_mapper=self.bar_mapper, width=10, padding=4,
                                         ticker=BasicTicker(desired_num_ticks=5),
                                         label_standoff=6, level=self.COLORBAR_LEVEL), "right")
        self.title = title
        self.bindings = [(self.image_source, "data.image", "image"),
                         (self.source, "data.light", "light"), (self.source, "data.dark", "dark"),
                         (self.fig, "@alt", "alt")]


    # What a tick label takes at the figure's own size (11 px type): a digit's width, a line's
    # height, each with the least gap; what the axes, title and colour bar leave of the figure.
    DIGIT_PX, LINE_PX, TICK_GAP_PX = 7, 13, 4
    ASIDE_PX = (90, 70)

    @classmethod
    def tick_every(cls, n: int, room_px: float, unit_px: float) -> list[int]:
        """Ticks 0 … n − 1 at a regular step of 1, 2, 5, 10, … chosen so that the longest label
        (its digits × ``unit_px`` across, or one line of ``unit_px`` down) and a gap fit one step
        of cells over ``room_px``: at d = 16 "0 2 4 … 14", not 16 labels run together
        ("9101112131415"). Narrower than that (a phone), the axis leaves out what does not fit
        (``thin_tick_labels``)."""
        if n <= 1:
            return list(range(n))
        label = (len(str(n - 1)) * unit_px if unit_px == cls.DIGIT_PX else unit_px) + cls.TICK_GAP_PX
        cell = max(room_px, 1) / n
        step = next(s for s in (1, 2, 5, 10, 20, 50, 100, n) if s * cell >= label or s == n)
        return list(range(0, n, step))

    def _matrices(self, run) -> np.ndarray:
        m = np.asarray(run.data[self.key], dtype=float)
        return m[:, :, None] if m.ndim == 2 else m  # (T + 1, rows, cols)

    def labelled(self) -> bool:
        return self.show_values and self.rows * self.cols <= self.MAX_LABELLED

    def setup(self, run) -> None:
        m = self._matrices(run)
        rows, cols = m.shape[1:]
        limit = float(run.data.get(self.key + "_limit", np.max(np.abs(m), initial=0.0)))
        self.limit = limit if np.isfinite(limit) and limit > 0 else 1.0
        if (self.mapper.low, self.mapper.high) != (-self.limit, self.limit):
            self.mapper.update(low=-self.limit, high=self.limit)
            self.bar_mapper.update(low=-self.limit, high=self.limit)
        if (rows, cols) == (self.rows, self.cols):
            return
        self.rows, self.cols = rows, cols
        self.fig.x_range.update(start=-0.5, end=cols - 0.5)
        self.fig.y_range.update(start=rows - 0.5, end=-0.5)
        self.xticks.ticks = self.tick_every(cols, self.fig.width - self.ASIDE_PX[0], self.DIGIT_PX)
        self.yticks.ticks = self.tick_every(rows, self.fig.height - self.ASIDE_PX[1], self.LINE_PX)
        self.cells.glyph.update(dw=cols, dh=rows)
        for glyph in self.labels:
            glyph.visible = self.labelled()
        # No numbers in the cells: no text points at all, so no frame sends a label per cell.
        n = rows * cols if self.labelled() else 0
        y, x = np.divmod(np.arange(n), cols)
        self.source.data = {"x": x, "y": y, "light": [None] * n, "dark": [None] * n}
        self.grid_source.data = self._grid(rows, cols)

    def frames(self, run) -> dict[str, list]:
        m = self._matrices(run)
        out = {"image": [[frame] for frame in m], "alt": [self.describe(f) for f in m]}
        if self.labelled():
            flat = m.reshape(len(m), -1)
            tiny = self.TINY * self.limit
            labels = self.cell_labels([[cell(v, tiny) for v in row] for row in flat])
            out |= self.inked(labels, self.strong(flat, self.limit))
        else:
            out |= self.unlabelled(len(m))
        return out

    def cell_labels(self, labels: list[list[str]]) -> list[list[str]]:
        """The numbers printed in the cells, (T + 1, rows · cols); a subclass may reword them."""
        return labels

    @staticmethod
    def strong(values, limit) -> np.ndarray:
        """Which cells' numbers take "ink_strong": those whose colour (its index in the palette,
        worked out as BokehJS's LinearColorMapper does on a scale from -limit to limit, limit a
        number or one per row of ``values``) is one of ui/theme.py's INK_STRONG_AT."""
        v = np.asarray(values, dtype=float)
        high = np.broadcast_to(np.asarray(limit, dtype=float), v.shape)
        n = len(DIVERGING)
        with np.errstate(invalid="ignore", divide="ignore"):
            index = np.floor((v + high) * (1 / (2 * high)) / (1 / n))
        index = np.where(v == high, n - 1, np.clip(index, 0, n - 1))  # NaN (no colour) stays
        return np.isin(index, INK_STRONG_AT)

    @staticmethod
    def inked(labels: list[list[str]], dark) -> dict[str, list]:
        """The "light" and "dark" frames: each cell's label in the column of its ink ("dark":
        ink_strong, see ``strong``), None in the other and for no number (BokehJS skips a
        None). ``dark`` (T + 1, rows · cols) bool."""
        light_ink, dark_ink = [], []
        for row, on_dark in zip(labels, np.asarray(dark).tolist()):
            light_ink.append([None if d or not s else s for s, d in zip(row, on_dark)])
            dark_ink.append([s if d and s else None for s, d in zip(row, on_dark)])
        return {"light": light_ink, "dark": dark_ink}

    @staticmethod
    def unlabelled(frames: int) -> dict[str, list]:
        """The "light" and "dark" frames of a heatmap with no numbers: no text points."""
        return {"light": [[]] * frames, "dark": [[]] * frames}

    def shown_labels(self) -> list[str]:
        """The number printed in each cell now, row by row ("" for none)."""
        data = self.source.data
        return [a if a is not None else (b or "") for a, b in zip(data["light"], data["dark"])]

    def describe(self, m: np.ndarray) -> str:
        """The text alternative of one frame: the title, the shape and every number (rows)."""
        rows = "; ".join("row " + str(i) + ": " + ", ".join(cell(v, self.TINY * self.limit)
                                                            for v in row) for i, row in enumerate(m))
        return f"{self.title}, {m.shape[0]} × {m.shape[1]}: {rows}"

    @classmethod
    def _grid(cls, rows: int, cols: int) -> dict:
        """The lines between and around the cells: an inner line as opaque as two cell outlines
        drawn over each other (1 − (1 − a)²), the frame's edge as one."""
        a = cls.BORDER_ALPHA

        def alphas(n: int) -> np.ndarray:
            out = np.full(n + 1, 1 - (1 - a) ** 2)
            out[[0, -1]] = a
            return out

        xs, ys = np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5
        return {"x0": np.concatenate([xs, np.full(rows + 1, -0.5)]),
                "x1": np.concatenate([xs, np.full(rows + 1, cols - 0.5)]),
                "y0": np.concatenate([np.full(cols + 1, -0.5), ys]),
                "y1": np.concatenate([np.full(cols + 1, rows - 0.5), ys]),
                "alpha": np.concatenate([alphas(cols), alphas(rows)])}


class LinePlot(View):
    """Named curves that are the same for every t, and a dotted marker at the current x.

    ``series`` maps a legend name to a key of ``run.data``; ``x`` is the key of the shared x;
    ``marker`` the key of the marker's x at each t (one value per t), or None for no marker.
    """

    def __init__(self, title: str, series: dict[str, str], *, x: str, x_label: str,
                 y_label: str, marker: str | None = None, width: int = 420, height: int = 280,
                 x_axis_type: str = "linear", y_axis_type: str = "linear",
                 legend: str = "top_left", dashed: tuple[str, ...] = ()):
        self.series, self.x, self.marker_key = dict(series), x, marker
        self.source = ColumnDataSource({"x": [], **{name: [] for name in self.series}})
        self.fig = make_figure(title, width=width, height=height, x_axis_type=x_axis_type,
                               y_axis_type=y_axis_type)
        self.fig.xaxis.axis_label = x_label
        self.fig.yaxis.axis_label = y_label
        for i, name in enumerate(self.series):
            self.fig.line("x", name, source=self.source, color=LINES[i % len(LINES)],
                          line_width=2.5, legend_label=name,
                          line_dash="dashed" if name in dashed else "solid")
        self.fig.add_tools(HoverTool(mode="vline", renderers=self.fig.renderers[:1], tooltips=[
            ("x", "@x{0,0.[00]}"), *[(s, f"@{{{s}}}{{0.[0000]}}") for s in self.series]]))
        if self.series:
            self.fig.legend.location = legend
            self.fig.legend.click_policy = "hide"
        # On the overlay layer: moving the marker on a step repaints that layer alone.
        self.marker = Span(location=0, dimension="height", line_color="#6e7781",
                           line_dash="dotted", line_width=1.5, visible=marker is not None,
                           level="overlay")
        self.fig.add_layout(self.marker)
        self.title = title
        self.bindings = [(self.marker, "location", "marker"), (self.fig, "@alt", "alt")] if marker else []


    def setup(self, run) -> None:
        self.source.data = {"x": np.asarray(run.data[self.x], dtype=float),
                            **{name: np.asarray(run.data[key], dtype=float)
                               for name, key in self.series.items()}}

    def frames(self, run) -> dict[str, list]:
        if not self.marker_key:
            return {}
        xs = np.asarray(run.data[self.x], dtype=float)
        marks = np.asarray(run.data[self.marker_key], dtype=float)
        alt = []
        for m in marks:  # each curve's value at the marker (the nearest x)
            i = int(np.argmin(np.abs(xs - m))) if len(xs) else 0
            values = ", ".join(f"{name} {num(run.data[key][i])}" for name, key in self.series.items())
            alt.append(f"{self.title}: at {num(m)}: {values}")
        return {"marker": marks, "alt": alt}


def legend_outside(fig, place: str = "below", **props):
    """Move a figure's legend out of the plot to ``place`` (inside, it covers the data) and
    set ``props`` on it; returns the legend."""
    legend = fig.legend[0]
    fig.center.remove(legend)
    fig.add_layout(legend, place)
    legend.update(**props)
    return legend


def crossover(fig, text: str, colour: str = LINES[2]):
    """A dashed vertical line on ``fig`` where two curves cross, with its name at the bottom.
    Returns (span, label) to place with ``place_crossover``."""
    from bokeh.models import Label  # noqa: PLC0415

    span = Span(location=1, dimension="height", line_color=colour, line_dash="dashed",
                line_width=2)
    label = Label(x=1, y=0, y_units="screen", text=text, text_font_size="11px",
                  text_color=colour, x_offset=4, y_offset=4)
    fig.add_layout(span)
    fig.add_layout(label)
    return span, label
