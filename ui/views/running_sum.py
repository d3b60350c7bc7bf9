"""The running-sum page's own views: the token strip and the memory stack."""

from __future__ import annotations

import numpy as np
from bokeh.models import (
    BoxAnnotation,
    CDSView,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    IndexFilter,
    Label,
    LinearColorMapper,
)

from sim import cost
from sim.cache import DTYPE_BYTES
from ui.fmt import count, num, ratio, vec
from ui.theme import DIVERGING, LINES
from ui.views import View, legend_outside, make_figure

FP32 = DTYPE_BYTES["fp32"]  # memory is counted in fp32, as in the lesson
COST_T_MAX = 100_000  # the cost plots' right edge: a long context, where the gap is obvious


class TokenStrip(View):
    """k, v and q of every token as three bands of cells; the current token boxed, the tokens
    still to come veiled (both annotations on the overlay layer)."""

    def __init__(self):
        self.source = ColumnDataSource({"x": [], "y": [], "value": [], "what": []})
        self.fig = make_figure("Tokens: key k, value v, query q", x_range=(0.5, 1.5),
                               y_range=(1.0, -0.5))
        self.mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        cells = self.fig.rect("x", "y", 1, 1, source=self.source, line_color="#ffffff",
                              line_alpha=0.4, fill_color={"field": "value", "transform": self.mapper})
        self.fig.add_tools(HoverTool(renderers=[cells], tooltips=[
            ("token", "@x"), ("entry", "@what"), ("value", "@value{0.000000}")]))
        self.veil = BoxAnnotation(left=0.5, right=0.5, top=-0.5, bottom=1.0, level="overlay",
                                  fill_color="#ffffff", fill_alpha=0.72, line_alpha=0.0,
                                  name="lab-veil")
        self.box = BoxAnnotation(left=0.5, right=1.5, top=-0.5, bottom=1.0, level="overlay",
                                 fill_alpha=0.0, line_color=LINES[0], line_width=3)
        self.fig.add_layout(self.veil)
        self.fig.add_layout(self.box)
        self.fig.xaxis.axis_label, self.fig.yaxis.axis_label = "token t", "entry of k, v, q"
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        self.fig.xaxis.ticker, self.fig.yaxis.ticker = FixedTicker(ticks=[1]), FixedTicker(ticks=[0])
        self.fig.add_layout(ColorBar(color_mapper=self.mapper, width=10, label_standoff=6,
                                     padding=4), "right")
        self.bindings = [(self.box, "left", "box_left"), (self.box, "right", "box_right"),
                         (self.box, "visible", "box_on"), (self.veil, "left", "veil_left")]


    def setup(self, run) -> None:
        k, v, q = run.data["k"], run.data["v"], run.data["q"]
        T, d = k.shape
        band, i, j = np.meshgrid(np.arange(3), np.arange(T), np.arange(d), indexing="ij")
        values = np.stack([k, v, q])  # (3, T, d)
        self.source.data = {"x": (i + 1).ravel(), "y": (band * (d + 1) + j).ravel(),
                            "value": values.ravel(),
                            "what": [f"{'kvq'[b]}[{jj + 1}]" for b in range(3)
                                     for _ in range(T) for jj in range(d)]}
        bottom = 3 * d + 1.5
        self.fig.x_range.update(start=0.5, end=T + 0.5)
        self.fig.y_range.update(start=bottom, end=-0.5)
        mid = (d - 1) / 2
        self.fig.yaxis.ticker.ticks = [mid, d + 1 + mid, 2 * (d + 1) + mid]
        self.fig.yaxis.major_label_overrides = {mid: "k", d + 1 + mid: "v", 2 * (d + 1) + mid: "q"}
        self.fig.xaxis.ticker.ticks = list(range(1, T + 1, max(1, int(np.ceil(T / 12)))))
        limit = float(np.max(np.abs(values))) or 1.0
        self.mapper.update(low=-limit, high=limit)
        self.veil.update(bottom=bottom, right=T + 0.5)
        self.box.bottom = bottom

    def frames(self, run) -> dict:
        t = np.arange(run.t_max + 1, dtype=float)
        return {"box_left": t - 0.5, "box_right": t + 0.5, "box_on": [bool(x) for x in t],
                "veil_left": t + 0.5}


class MemoryStack(View):
    """The KV cache as a stack of (k, v) rows, one per token (2·d numbers a row), beside the
    state (S, d × d, then z, d) laid out in rows of the same 2·d numbers, so the two heights
    compare as the two totals do and they are level at t = (d + 1)/2. Heights are bytes (fp32). Every row the cache can
    reach is drawn once per setting; a step only changes which rows the filter lets through."""

    GAP = 2  # columns between the cache and the state

    def __init__(self):
        keys = ("left", "right", "bottom", "top", "color", "what")
        self.rows = ColumnDataSource({k: [] for k in keys})
        self.block = ColumnDataSource({k: [] for k in keys})
        self.fig = make_figure("Memory: KV cache against the state", height=300,
                               x_range=(0, 1), y_range=(0, 1))
        kw = {k: k for k in keys[:4]} | {"fill_color": "color", "line_color": "#ffffff",
                                         "fill_alpha": 0.85}
        self.filter = IndexFilter(indices=[])
        cache = self.fig.quad(source=self.rows, view=CDSView(filter=self.filter),
                              level="overlay", **kw)
        block = self.fig.quad(source=self.block, **kw)
        for colour, name in zip(LINES[:2] + LINES[3:5], ("cached key k", "cached value v",
                                                          "state S", "key total z")):
            # The legend's swatches: one quad each, out of sight (a legend draws its glyph
            # from the renderer's first point; an empty renderer shows no swatch).
            self.fig.quad(left=[-9], right=[-8], bottom=[-9], top=[-8], fill_color=colour,
                          line_color="#ffffff", legend_label=name)
        # under the plot, in two columns: inside, it covered the top of a long cache
        legend_outside(self.fig, "below", orientation="horizontal", ncols=2, label_text_font_size="11px",
                       glyph_width=18, spacing=10, margin=4, padding=4, location="center")
        self.fig.add_tools(HoverTool(renderers=[cache, block], tooltips=[("", "@what")]))
        self.crossover = self.fig.segment("x0", "y0", "x1", "y1", level="overlay",
                                          source=ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []}),
                                          line_color=LINES[2], line_dash="dashed", line_width=2.5)
        # over the state block, whose top the line marks (over the cache it sat on the bars)
        self.crossover_label = Label(x=0, y=0, text="", text_font_size="11px", y_offset=4,
                                     text_align="right", level="overlay")
        self.fig.add_layout(self.crossover_label)
        self.fig.xaxis.visible = False
        # In bytes, as the memory plot beside it ("tokens stored t" there mixed two units).
        self.fig.yaxis.axis_label = "bytes (fp32)"
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        self.bindings = [(self.filter, "indices", "shown")]


    def setup(self, run) -> None:
        d, T, cross = run.data["d"], run.t_max, run.data["memory_crossover"]
        row = 2 * d * FP32  # bytes of one token's k and v: the height of a row
        x0 = 2 * d + self.GAP  # left edge of the state block
        self.fig.x_range.update(start=-0.5, end=x0 + 2 * d + 0.5)
        self.fig.y_range.update(start=0, end=(max(T, cross) * 1.12 + 1) * row)  # room for the label
        self.block.data = {"left": [x0, x0], "right": [x0 + 2 * d] * 2,
                           "bottom": [0, d / 2 * row], "top": [d / 2 * row, cross * row],
                           "color": [LINES[3], LINES[4]],
                           "what": [f"state S: {d} × {d} numbers, always",
                                    f"key total z: {d} numbers, always"]}
        self.crossover.data_source.data = {"x0": [-0.3], "x1": [x0 + 2 * d + 0.3],
                                           "y0": [cross * row], "y1": [cross * row]}
        self.crossover_label.update(x=x0 + 2 * d, y=cross * row,
                                    text=f"same size at t = {num(cross)}")
        ts = np.repeat(np.arange(T, dtype=float), 2)  # k and v rows interleaved
        self.rows.data = {"left": np.tile([0.0, d], T), "right": np.tile([d, 2.0 * d], T),
                          "bottom": ts * row, "top": (ts + 1) * row,
                          "color": [LINES[0], LINES[1]] * T,
                          "what": [f"{n} of token {i + 1}: {d} numbers"
                                   for i in range(T) for n in ("k", "v")]}

    def frames(self, run) -> dict:
        return {"shown": [list(range(2 * t)) for t in range(run.t_max + 1)]}


# Readout texts of the memory and cost panels, one per t -----------------------------------------

def memory_text(r: dict, t: int) -> str:
    kv, st = r["kv"][t], r["st"]
    now = ("the cache is larger" if kv > st else "the state is larger" if kv < st
           else "they are the same size")
    return (f"<p>After t = {t} tokens: <b>KV cache</b> 2·t·d = {count(kv)} numbers = "
            f"{count(kv * FP32)} bytes; <b>state</b> d² + d = {count(st)} numbers = "
            f"{count(st * FP32)} bytes at every t (fp32). Now {now}; they are the same size "
            f"at t = (d + 1)/2 = {num(r['cross'])}.</p>")


def cost_text(d: int, t: int) -> str:
    """The work of token t (at t = 0, before any token, the first one's, said as such: the
    caption read "Token t = 1" at t = 0)."""
    tt = max(t, 1)
    head = f"Token t = {t}" if t else "No token read yet (t = 0); the first, t = 1"
    return (f"<p>{head}, d = {d}: attention {count(cost.attention_ops(tt, d))} "
            f"operations, state {count(cost.state_ops(d))}; attention ÷ state = "
            f"{ratio(cost.work_ratio(tt, d))}. They cross at t = d = {d}. At t = 100,000 "
            f"attention does {ratio(cost.work_ratio(COST_T_MAX, d))}× the state's work.</p>")


def token_text(r: dict, phi: dict, t: int) -> str:
    """The token read at t (the first one, to come, at t = 0) for the settings' readout."""
    # At t = 0 the first token, to come: the box is as full as at every t (its room is kept
    # for the longest text, which left about 100 px empty above the state row at t = 0).
    i, s = max(t - 1, 0), r["s"]
    label = f" ({s.labels[i]})" if s.labels else ""
    head = (f"<b>Token t = {t}</b>{label}" if t else
            f"<b>Next: token t = 1</b>{label}, read at <b>Step</b>")
    lines = [head, f"k = {vec(s.k[i])}", f"v = {vec(s.v[i])}", f"q = {vec(s.q[i])}"]
    if r["fm"] != "identity":
        lines += [f"φ(k) = {vec(phi['phi_k'][i])}", f"φ(q) = {vec(phi['phi_q'][i])}"]
    return "<div class='rs-token'>" + "<br>".join(lines) + "</div>"
