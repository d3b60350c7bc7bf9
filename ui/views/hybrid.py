"""Views and texts of the hybrid page (ui/pages/hybrid.py): the layer strip, the bytes per
layer and the memory plot, each showing frame t of a run (t indexes CONTEXTS), the readout and
the caption. What the chosen engine allocates on the chosen GPU, with its readout rows, verdict
and arithmetic lines, is computed by ui/pages/hybrid_serving.py (``serve``).

Anything a user wrote (a model's name, a layer's label, its source) reaches the page as text:
escaped with ``ui.fmt.text`` in HTML (readouts, captions), plain (``ui.fmt.plain``) where it is
drawn as text (figure titles and legends are canvas text; hover tooltips list ``@field`` values,
which BokehJS escapes: never ``{safe}``, never an HTML template).
"""

from __future__ import annotations

import json
import re

import numpy as np
import panel as pn
from bokeh.core.properties import field
from bokeh.models import (
    AdaptiveTicker,
    ColumnDataSource,
    CustomJSTickFormatter,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
    Span,
)
from bokeh.palettes import Colorblind8

from sim import cache as sim_cache
from ui.contract import role
from ui.fmt import count, num, plain, text
from ui.views import View, make_figure

# The timeline: one context length per step, doubling from 1K (2^10) to 1M (2^20) tokens.
CONTEXTS = tuple(2**p for p in range(10, 21))
# The memory plot: 8 points per doubling, so kinks (a sliding window filling up) show.
CURVE_TOKENS = np.unique(np.round(2.0 ** np.arange(10, 20.001, 0.125)).astype(np.int64))

# Display kinds of the layer strip (what a mixer is, not how much it stores), Okabe-Ito colours:
# attention kinds warm (they grow), linear/SSM green (fixed); models A and B in two blues.
KIND_LABELS = {"full": "full attention", "window": "sliding window", "mla": "MLA",
               "recurrent": "linear / SSM", "mlp": "MLP"}
KIND_COLOURS = {"full": Colorblind8[5], "window": Colorblind8[1], "mla": Colorblind8[6],
                "recurrent": Colorblind8[3], "mlp": "#b0b7bf"}
SLOT_COLOURS = {"a": Colorblind8[0], "b": Colorblind8[4]}
# The memory plot's lines per model: (column, legend, dash, width, alpha).
SERIES = (("gpu_bytes", "on the GPU", "solid", 5, 0.7),
          ("total_bytes", "allocated", "solid", 2.5, 1.0),
          ("kv_cache_bytes", "KV", "dashed", 2.5, 1.0), ("state_bytes", "state", "dotted", 2.5, 1.0),
          ("ideal_bytes", "ideal total", "dashdot", 1.5, 0.8))

# Axis labels in base-2 units (formatting only: bytes → "4 GiB", tokens → "256K").
BYTES_JS = """
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let x = tick, i = 0;
    while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    const label = (Math.round(x * 100) / 100) + " " + units[i];
"""
# The bars' byte labels are all 8 characters wide in a monospaced font, so the axis keeps its
# width as the bars rescale on a step (another width makes BokehJS lay the figure out again).
# (Made per figure, not once per module: a model made on import would be numbered by whatever
# the process imported first, not from the page's own base, ui.document.fresh_ids.)
BYTES_FIXED_JS = BYTES_JS + "return label.padStart(8);"
TOKENS_JS = """
    if (tick >= 1048576) return (tick / 1048576) + "M";
    if (tick >= 1024) return (tick / 1024) + "K";
    return String(tick);
"""
MAX_EXACT = 2**53  # bytes: beyond this a float64 (the plot, JavaScript) is no longer exact
BYTE_TICKS = [2.0**p for p in range(0, 81, 2)]  # 1 B, 4 B, … every power of 4 (floats: JS-safe)
fmt_bytes = sim_cache.format_bytes


def display_kind(mixer: sim_cache.Mixer) -> str:
    if mixer.kind == "attention":
        return "full" if mixer.window is None else "window"
    return mixer.kind


def context_label(tokens: int) -> str:
    """1024 → "1K", 1048576 → "1M" (the grid holds powers of two only)."""
    if tokens >= 2**20:
        return f"{tokens // 2**20}M"
    return f"{tokens // 2**10}K" if tokens >= 2**10 else str(tokens)


def format_model_json(model: dict) -> str:
    """The JSON box's text: one layer entry per line, so a long model stays readable."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in model.items()
             if k != "layers"]
    layers = [json.dumps(entry, ensure_ascii=False) for entry in model.get("layers", [])]
    return "\n".join(["{", *lines, '  "layers": [', ",\n".join("    " + e for e in layers),
                      "  ]", "}"])


def plain_source(cited: str) -> str:
    """A citation as plain text: no scheme, so nothing on the page is an outside link."""
    return re.sub(r"(?i)\b[a-z][a-z0-9+.-]*://", "", cited)


def stores_text(row: dict) -> str:
    if row["kv_bytes"]:
        return f"{fmt_bytes(row['kv_bytes'])} of KV cache"
    if row["state_bytes"]:
        return f"{fmt_bytes(row['state_bytes'])} of fixed state"
    return "no cache"


class LayerStrip(View):
    """One model's layers as coloured cells (0-indexed), parallel mixers stacked in a layer;
    hover gives the layer, its kind and what it stores at the current context (frame t)."""

    def __init__(self, slot: str):
        self.slot = slot
        self.source = ColumnDataSource({k: [] for k in ("layer", "row", "kind", "kind_label",
                                                        "colour", "stores")})
        # The cells drawn, and the legend, read a source of their own that a step leaves
        # alone: BokehJS rebuilds a legend's entries (DOM, one canvas each) whenever the data
        # of a renderer it names changes, which cost about 3 ms a step, measured. The hover
        # reads the step's "stores" from ``source`` through an invisible copy of the cells,
        # drawn on the overlay level: new data repaints the figure's overlay canvas alone,
        # not its cells, axis and legend (strip A's repaint: 8-10 ms a step, measured).
        self.cell_source = ColumnDataSource({k: [] for k in ("layer", "row", "colour")})
        self.fig = make_figure("", height=150, sizing_mode="stretch_width", min_width=300,
                               max_width=980, x_range=Range1d(-0.5, 31.5),
                               y_range=Range1d(0.5, -0.5))
        self.fig.toolbar_location = None
        self.cells = self.fig.rect("layer", "row", 0.9, 0.85, source=self.cell_source,
                                   fill_color="colour", line_color=None)
        hits = self.fig.rect("layer", "row", 0.9, 0.85, source=self.source, fill_alpha=0.0,
                             line_color=None, level="overlay")
        # one entry per kind, made once and shown where the model has that kind: a change of
        # model changes values only, no models (so a model's run is a patch: ui/ahead.py)
        self.items = {k: LegendItem(label=label, renderers=[self.cells], visible=False)
                      for k, label in KIND_LABELS.items()}
        self.legend = Legend(items=list(self.items.values()), orientation="horizontal",
                             location="center", margin=2, padding=4, spacing=8,
                             label_standoff=4, glyph_width=14, glyph_height=14)
        self.fig.add_layout(self.legend, "below")
        self.fig.add_tools(HoverTool(renderers=[hits], tooltips=[
            ("layer", "@layer"), ("kind", "@kind_label"), ("at this context", "@stores")]))
        self.fig.xaxis.axis_label = "layer ℓ (0-indexed)"
        self.fig.xaxis.ticker.min_interval = 1  # whole layers, also for a model of two
        self.fig.yaxis.visible = self.fig.ygrid.visible = self.fig.xgrid.visible = False
        self.bindings = [(self.source, "data.stores", "stores"), (self.fig, "@alt", "alt")]

    def setup(self, run) -> None:
        model = run.data["models"][self.slot]
        self.fig.visible = model is not None
        if model is None:
            self.source.data = {k: [] for k in self.source.data}
            self.cell_source.data = {k: [] for k in self.cell_source.data}
            return
        layer, row, kinds, labels = [], [], [], []
        in_layer: dict[int, int] = {}
        for mixer in model.mixers:
            kind = display_kind(mixer)
            layer.append(mixer.layer)
            row.append(in_layer.get(mixer.layer, 0))
            in_layer[mixer.layer] = row[-1] + 1
            kinds.append(kind)
            labels.append(KIND_LABELS[kind] if mixer.label in (KIND_LABELS[kind], mixer.kind)
                          else f"{KIND_LABELS[kind]} ({plain(mixer.label, 40)})")
        colours = [KIND_COLOURS[k] for k in kinds]
        self.source.data = {"layer": layer, "row": row, "kind": kinds, "kind_label": labels,
                            "colour": colours, "stores": run.data[f"stores_{self.slot}"][0]}
        self.cell_source.data = {"layer": layer, "row": row, "colour": colours}
        rows = max(in_layer.values(), default=1)
        self.fig.x_range.update(start=-0.5, end=model.n_layers - 0.5)
        self.fig.y_range.update(start=rows - 0.5, end=-0.5)
        self.fig.height = 125 + 28 * rows
        present = [k for k in KIND_LABELS if k in kinds]
        for k, item in self.items.items():
            item.update(visible=k in present, index=kinds.index(k) if k in present else None)
        self.fig.title.text = (f"{self.slot.upper()}: {plain(model.name, 60)}, "
                               f"{model.n_layers} layers")
        self.kinds = ", ".join(f"{kinds.count(k)} {KIND_LABELS[k]}" for k in present)

    def frames(self, run) -> dict:
        stores = run.data[f"stores_{self.slot}"]
        if run.data["models"][self.slot] is None:
            return {"stores": stores, "alt": [""] * len(stores)}
        alt = [f"Layer strip, {self.fig.title.text}: {self.kinds}. At {context_label(c)} "
               f"tokens the layers hold {fmt_bytes(total)} in all."
               for c, total in zip(CONTEXTS, run.data[f"totals_{self.slot}"])]
        return {"stores": stores, "alt": alt}


class LayerBars(View):
    """KV-cache and state bytes of each layer at the current context, stacked per layer; a
    step sends the KV columns, the axis end and the title."""

    def __init__(self, slot: str, x_range):
        self.slot = slot
        self.source = ColumnDataSource({k: [] for k in (
            "layer", "kv", "state", "kv_colour", "kv_text", "state_text", "kinds")})
        self.fig = make_figure("", height=230, sizing_mode="stretch_width", min_width=300,
                               max_width=980, x_range=x_range, y_range=Range1d(0, 1),
                               css_classes=[role("present_drop")])  # the strips alone, if need be
        # KV bars in the colour of the layer's attention kind, state bars in the linear/SSM
        # colour, as in the strip; a layer with both (Falcon-H1) stacks them.
        bars = self.fig.vbar_stack(["kv", "state"], x="layer", width=0.8, source=self.source,
                                   color=[field("kv_colour"), KIND_COLOURS["recurrent"]],
                                   line_color=None)
        self.fig.add_tools(HoverTool(renderers=bars, tooltips=[
            ("layer", "@layer"), ("kind", "@kinds"), ("KV cache", "@kv_text"),
            ("fixed state", "@state_text")]))
        self.fig.yaxis.ticker = AdaptiveTicker(base=2, mantissas=[1], min_interval=1,
                                               desired_num_ticks=5)  # 8 MiB, 16 MiB, …
        self.fig.yaxis.formatter = CustomJSTickFormatter(code=BYTES_FIXED_JS)
        self.fig.yaxis.major_label_text_font = "monospace"
        self.fig.xaxis.axis_label, self.fig.yaxis.axis_label = "layer ℓ", "bytes"
        self.fig.xaxis.ticker.min_interval = 1
        self.fig.xgrid.visible = False
        self.bindings = [(self.source, "data.kv", "kv"), (self.source, "data.kv_text", "kv_text"),
                         (self.fig.y_range, "end", "top"), (self.fig.title, "text", "title"),
                         (self.fig, "@alt", "alt")]

    def setup(self, run) -> None:
        bars = run.data[f"bars_{self.slot}"]
        self.fig.visible = run.data["models"][self.slot] is not None
        self.source.data = {**bars, "kv": run.data[f"kv_{self.slot}"][0],
                            "kv_text": [fmt_bytes(b) for b in run.data[f"kv_{self.slot}"][0]]}

    def frames(self, run) -> dict:
        kv, state = run.data[f"kv_{self.slot}"], run.data[f"bars_{self.slot}"]["state"]
        tops = [float(np.max(k + state, initial=0.0)) for k in kv]
        label = self.slot.upper()
        return {"kv": kv, "kv_text": [[fmt_bytes(b) for b in k] for k in kv],
                "top": [top * 1.05 if top > 0 else 1.0 for top in tops],
                "title": [f"{label}: bytes per layer at {context_label(c)}" for c in CONTEXTS],
                "alt": [f"Bytes per layer of {label} at {context_label(c)} tokens: KV cache "
                        f"{fmt_bytes(k.sum())} in {int(np.count_nonzero(k))} layers, fixed state "
                        f"{fmt_bytes(state.sum())}; the largest layer holds {fmt_bytes(top)}."
                        for c, k, top in zip(CONTEXTS, kv, tops)]}


class MemoryPlot(View):
    """Memory against context length (log–log), per model: what the engine allocates (KV cache,
    fixed state, their total), the ideal total beside it, and everything on the GPU (weights,
    overhead and the allocation) against the memory the engine may use (a horizontal line);
    the current context as a dotted line and points (on the overlay layer)."""

    def __init__(self):
        self.source = ColumnDataSource({"x": [], **{f"{s}_{k}": [] for s in "ab"
                                                    for k, *_ in SERIES},
                                        "a_gpu_text": [], "b_gpu_text": []})
        self.now = ColumnDataSource({"x": [], "y": [], "colour": []})
        self.gpu = ColumnDataSource({"x": [float(CONTEXTS[0]), float(CONTEXTS[-1])],
                                     "y": [1.0, 1.0]})
        self.fig = make_figure("Memory against context", height=400, sizing_mode="stretch_width",
                               min_width=300, max_width=760, x_axis_type="log", y_axis_type="log",
                               x_range=Range1d(CONTEXTS[0], CONTEXTS[-1]),
                               y_range=Range1d(2.0**20, 2.0**40))
        self.fig.min_border_right = 18  # room for the last tick label, "1M"
        self.renderers: dict[str, list] = {"a": [], "b": []}
        gpu = self.fig.line("x", "y", source=self.gpu, line_width=2, color=GPU_COLOUR,
                            line_dash=[8, 3])
        for slot in "ab":
            for key, _name, dash, width, alpha in SERIES:
                r = self.fig.line("x", f"{slot}_{key}", source=self.source, line_width=width,
                                  color=SLOT_COLOURS[slot], line_dash=dash, line_alpha=alpha)
                self.renderers[slot].append(r)
        # one entry per model for what sits on the GPU, one per kind of line for both models
        # (A dark, B light, as in the readout): 7 rows fit the presenter view beside the plot
        items = [LegendItem(label="GPU memory it may use", renderers=[gpu]),
                 *(LegendItem(label=f"{s.upper()} on the GPU", renderers=[self.renderers[s][0]])
                   for s in "ab"),
                 *(LegendItem(label=name, renderers=[self.renderers[s][i] for s in "ab"])
                   for i, (_, name, *_) in enumerate(SERIES) if i)]
        self.fig.scatter("x", "y", source=self.now, size=8, color="colour", line_color="white",
                         level="overlay")
        # at the right, one entry a row: below, in rows of three, BokehJS left the second row
        # no room once the presenter view scaled the legend's rows (cut off at 1280×720)
        self.fig.add_layout(Legend(items=items, location="top_left", margin=2, padding=4, spacing=2,
                                   label_standoff=4, glyph_width=22, click_policy="hide"), "right")
        self.fig.add_tools(HoverTool(renderers=[self.renderers["a"][0]], mode="vline", tooltips=[
            ("context", "@x{0,0} tokens"), ("A on the GPU", "@a_gpu_text"),
            ("B on the GPU", "@b_gpu_text")]))
        self.marker = Span(location=CONTEXTS[0], dimension="height", line_color="#6e7781",
                           line_dash="dotted", line_width=1.5, level="overlay")
        self.fig.add_layout(self.marker)
        self.fig.xaxis.ticker = FixedTicker(ticks=[2**p for p in range(10, 21, 2)])
        self.fig.xaxis.formatter = CustomJSTickFormatter(code=TOKENS_JS)
        self.fig.yaxis.ticker = FixedTicker(ticks=BYTE_TICKS)
        self.fig.yaxis.formatter = CustomJSTickFormatter(code=BYTES_JS + "return label;")
        self.fig.xaxis.axis_label = "context t (tokens, log scale)"
        self.fig.yaxis.axis_label = "bytes (log scale, base 2)"
        self.bindings = [(self.marker, "location", "marker"), (self.now, "data.x", "now_x"),
                         (self.now, "data.y", "now_y"), (self.now, "data.colour", "now_colour"),
                         (self.fig, "@alt", "alt")]

    def setup(self, run) -> None:
        data = {k: run.data[k] for k in self.source.data}
        self.source.data = data
        usable = float(run.data["usable_bytes"])
        self.gpu.data = {"x": [float(CONTEXTS[0]), float(CONTEXTS[-1])], "y": [usable, usable]}
        for slot in "ab":
            for r in self.renderers[slot]:
                r.visible = run.data["models"][slot] is not None
        values = np.concatenate([data[f"{s}_{k}"] for s in "ab" for k, *_ in SERIES] + [[usable]])
        values = values[np.isfinite(values) & (values > 0)]
        if values.size:
            self.fig.y_range.update(start=values.min() / 2, end=values.max() * 2)

    def frames(self, run) -> dict:
        out: dict[str, list] = {"marker": [float(c) for c in CONTEXTS], "now_x": [],
                                "now_y": [], "now_colour": [], "alt": []}
        usable = run.data["usable_bytes"]
        for t, tokens in enumerate(CONTEXTS):
            xs, ys, colours, said = [], [], [], []
            for slot, sv in run.data["served"].items():
                if sv is None:
                    continue
                r = run.data["reports"][slot][t]
                if sv.refusal:
                    said.append(f"{slot.upper()} not run by {ENGINE_NAMES[sv.engine]}; ideal "
                                f"total {fmt_bytes(r['total_bytes'])}")
                    continue
                a = sv.allocations[t]
                # weights not counted: nothing is drawn or said for what sits on the GPU
                on_gpu = None if sv.weights is None else sv.weights + sv.overhead + a.total_bytes
                for y in (on_gpu, a.total_bytes, a.kv_bytes, a.state_bytes):
                    if y:
                        xs.append(float(tokens))
                        ys.append(float(y))
                        colours.append(SLOT_COLOURS[slot])
                held = ", ".join(f"{what} {fmt_bytes(b)}" for what, b in (
                    ("KV cache", a.kv_bytes), ("state", a.state_bytes)) if b) or "nothing"
                where = ("weights not counted" if on_gpu is None
                         else f"on the GPU {fmt_bytes(on_gpu)}")
                said.append(f"{slot.upper()} {where} ({held} as "
                            f"allocated; ideal total {fmt_bytes(r['total_bytes'])})")
            out["now_x"].append(xs)
            out["now_y"].append(ys)
            out["now_colour"].append(colours)
            out["alt"].append(f"Memory against context, log–log, 1K to 1M tokens, with the "
                              f"{fmt_bytes(usable)} of GPU memory the engine may use. At "
                              f"{count(tokens)} tokens: " + "; ".join(said) + ".")
        return out


# Per-model data of a run ------------------------------------------------------------------------

def curve_data(slot: str, model, args, served) -> dict:
    """The memory curves as float64 (exact: every figure is at most 2^53 bytes): the engine's
    (``served.curve``) and the ideal total (sim.cache; NaN when the engine is the ideal). A
    log axis cannot show 0 bytes, so those points are left out (NaN)."""
    nan = np.full(CURVE_TOKENS.shape, np.nan)
    if model is None:
        return {**{f"{slot}_{k}": nan for k, *_ in SERIES}, f"{slot}_gpu_text": ["–"] * len(nan)}
    ideal = sim_cache.memory_curve(model, CURVE_TOKENS, *args)["total_bytes"].astype(float)
    curve = {**{f"{k}_bytes": v for k, v in served.curve.items()},
             "kv_cache_bytes": served.curve["kv"], "state_bytes": served.curve["state"],
             "ideal_bytes": nan if served.engine == "ideal" else ideal}
    out = {f"{slot}_{k}": np.where(curve[k] > 0, curve[k], np.nan) for k, *_ in SERIES}
    missing = "weights not counted" if served.weights is None else "not run"
    out[f"{slot}_gpu_text"] = [fmt_bytes(b) if np.isfinite(b) else missing
                               for b in served.curve["gpu"]]
    return out

def layer_data(slot: str, model, reports, table: dict) -> dict:
    """Per layer, for every context: the bars' heights, the strip's hover texts, the CSV."""
    if model is None:
        empty = {"layer": [], "state": np.zeros(0), "kv_colour": [], "state_text": [],
                 "kinds": []}
        return {f"bars_{slot}": empty, f"kv_{slot}": [np.zeros(0)] * len(CONTEXTS),
                f"stores_{slot}": [[]] * len(CONTEXTS), f"totals_{slot}": [0] * len(CONTEXTS)}
    n, mixers = model.n_layers, model.mixers
    where = np.array([m.layer for m in mixers], dtype=int)
    state = np.zeros(n)  # floats: sent as one buffer, exact below 2^53
    np.add.at(state, where, [r["state_bytes"] for r in reports[0]["per_layer"]])
    kv = []
    for report in reports:
        kv.append(np.zeros(n))
        np.add.at(kv[-1], where, [r["kv_bytes"] for r in report["per_layer"]])
    kv_colour, kinds = [KIND_COLOURS["full"]] * n, [[] for _ in range(n)]
    for m in mixers:
        kinds[m.layer].append(KIND_LABELS[display_kind(m)])
        if m.kind in sim_cache.ATTENTION_KINDS:
            kv_colour[m.layer] = KIND_COLOURS[display_kind(m)]
    name, up = plain(model.name, 200), slot.upper()
    for r in reports:
        _rows(table, "context", up, name, r["tokens"], "", "", "", r["kv_cache_bytes"],
                   r["state_bytes"])
    for r in reports:
        for m, row in zip(mixers, r["per_layer"]):
            _rows(table, "layer", up, name, r["tokens"], m.layer,
                       KIND_LABELS[display_kind(m)], plain(m.label, 200), row["kv_bytes"],
                       row["state_bytes"])
    return {f"bars_{slot}": {"layer": np.arange(n), "state": state, "kv_colour": kv_colour,
                             "state_text": [fmt_bytes(b) for b in state],
                             "kinds": [" + ".join(k) for k in kinds]},
            f"kv_{slot}": kv, f"totals_{slot}": [r["total_bytes"] for r in reports],
            f"stores_{slot}": [[stores_text(row) for row in r["per_layer"]] for r in reports]}

def _rows(table: dict, *values) -> None:
    kv, state = values[-2:]
    for key, value in zip(table, (*values, kv + state)):
        table[key].append(value)


def readout_html(tokens: int, models: dict, reports: dict,
                 engine: tuple[dict, dict] | None = None) -> str:
    """The numbers at one context, per model, in base-2 units (names escaped); ``engine``:
    (rows, their names) of what the engine holds (``engine_rows``), after the ideal total."""
    heads, rows = ["<th>memory</th>"], {k: [] for k in ("kv", "blocks", "state", "total", "ratio",
                                                    "per")}
    block = next((r["block_tokens"] for r in reports.values() if r), None)
    for slot, model in models.items():
        if model is None:
            continue
        r = reports[slot]
        heads.append(f'<th><span style="color:{SLOT_COLOURS[slot]}">■</span> {slot.upper()}: '
                     f"{text(model.name, 60)}</th>")
        rows["kv"].append(fmt_bytes(r["kv_cache_bytes"]))
        rows["blocks"].append(blocks_text(r))
        rows["state"].append(fmt_bytes(r["state_bytes"]))
        rows["total"].append(f"<b>{fmt_bytes(r['total_bytes'])}</b>")
        rows["ratio"].append("none (no attention layer)" if r["ratio"] is None else
                             f"{r['ratio']:.4g}× ({fmt_bytes(r['full_attention_kv_bytes'])} "
                             "if all attention)")
        rows["per"].append(fmt_bytes(r["kv_bytes_per_token"]) + " / token")
    if not block:
        del rows["blocks"]
    names = {"kv": "KV cache, ideal (exact)", "blocks": f"KV cache in blocks of {block} tokens",
             "state": "fixed state, ideal", "total": "ideal total",
             "ratio": "KV cache vs. an all-attention model of the same shape",
             "per": "KV added per token (one sequence, before any window)"}
    if engine is not None:  # what the engine holds, after the ideal figures
        rows = ({k: v for k, v in rows.items() if k not in ("ratio", "per")} | engine[0]
                | {k: rows[k] for k in ("ratio", "per")})
        names |= engine[1]
    body = "".join(f"<tr><th>{names[k]}</th>{''.join(f'<td>{c}</td>' for c in v)}</tr>"
                   for k, v in rows.items())
    return (f'<div class="hybrid-context"><span class="hybrid-context-label">context</span> '
            f"<b>{count(tokens)} tokens</b> ({context_label(tokens)})</div>"
            f'<table class="hybrid-readout"><tr>{"".join(heads)}</tr>{body}</table>'
            '<p class="hybrid-units">KiB, MiB, GiB are base 2: 1 GiB = 2³⁰ bytes.</p>')


def blocks_text(r: dict) -> str:
    """The KV cache as an engine allocates it (whole blocks), beside the exact figure."""
    blocked, exact = r["kv_cache_bytes_in_blocks"], r["kv_cache_bytes"]
    if blocked is None or blocked == exact:
        return fmt_bytes(exact) + (" (the same: whole blocks)" if exact else "")
    return f"{fmt_bytes(blocked)} (+{fmt_bytes(blocked - exact)}: the last block of each layer)"


def sources_html(models: dict) -> str:
    return "".join(f"<p><b>{slot.upper()}: {text(m.name, 60)}</b>. Source: "
                   f"{text(plain_source(m.source) or 'no source given', 4000)}</p>"
                   for slot, m in models.items() if m is not None)


def caption_html(t: int, reports: dict) -> str:
    """One line: what this step changed, per model shown."""
    parts = []
    for slot, rs in reports.items():
        if rs is None:
            continue
        kv, state = rs[t]["kv_cache_bytes"], rs[t]["state_bytes"]
        grew = kv - rs[t - 1]["kv_cache_bytes"] if t else 0
        cache = (f"KV cache {fmt_bytes(kv)}{f' (+{fmt_bytes(grew)})' if grew else ''}" if kv
                 else "no KV cache")
        if kv and state:
            parts.append(f"{slot.upper()}: {cache}, state {fmt_bytes(state)}; the cache is "
                         f"{num(kv / state)}× the state")
        else:
            parts.append(f"{slot.upper()}: {cache}, "
                         + (f"state {fmt_bytes(state)}" if state else "no fixed state"))
    return f"<b>At {context_label(CONTEXTS[t])} tokens</b>: " + ". ".join(parts) + "."


READOUT_CSS = """
.hybrid-context { font-size: 1.6em; margin: 0.2em 0 0.4em; }
.hybrid-context-label { font-size: 0.6em; text-transform: uppercase; letter-spacing: 0.05em;
  opacity: 0.75; }
.hybrid-readout { border-collapse: collapse; font-size: 0.95em; }
.hybrid-readout th, .hybrid-readout td { text-align: left; padding: 0.2em 0.8em 0.2em 0;
  vertical-align: top; }
.hybrid-readout tr + tr { border-top: 1px solid rgba(128, 128, 128, 0.25); }
.hybrid-readout th:first-child { font-weight: normal; max-width: 14em; }
.hybrid-units { font-size: 0.85em; opacity: 0.8; margin: 0.3em 0 0; }
.hybrid-verdict { display: block; margin-top: 0.15em; }
.hybrid-lines ul { margin: 0.2em 0 0.6em; padding-left: 1.4em; }
.hybrid-lines p { margin: 0.4em 0 0; }
"""


def card(*figs) -> pn.Column:
    return pn.Column(*(pn.pane.Bokeh(f, sizing_mode="stretch_width") for f in figs),
                     sizing_mode="stretch_width")


# The engines by name and version (the page's menu, the plot's words), and the GPU's line
ENGINE_NAMES = {"ideal": "the ideal (exact bytes)", "vllm": "vLLM 0.33.0",
                "llama.cpp": "llama.cpp (0c1e570)", "sglang": "SGLang 0.5.23"}
GPU_COLOUR = "#cf222e"
