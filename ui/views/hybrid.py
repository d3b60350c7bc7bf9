"""Views and texts of the hybrid page (ui/pages/hybrid.py): the layer strip, the bytes per
layer and the memory plot, each showing frame t of a run (t indexes CONTEXTS); and, per model,
what the chosen engine allocates on the chosen GPU (``serve``: sim.engines, sim.gpus and
sim.weights, every figure sim's), with the readout rows, the verdict and the arithmetic lines.

Anything a user wrote (a model's name, a layer's label, its source) reaches the page as text:
escaped with ``ui.fmt.text`` in HTML (readouts, captions), plain (``ui.fmt.plain``) where it is
drawn as text (figure titles and legends are canvas text; hover tooltips list ``@field`` values,
which BokehJS escapes: never ``{safe}``, never an HTML template).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field as dc_field

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
from sim import engines as sim_engines
from sim import gpus as sim_gpus
from sim import hf_config, hf_reader
from sim import weights as sim_weights
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
        self.legend = Legend(orientation="horizontal", location="center", margin=2, padding=4,
                             spacing=8, label_standoff=4, glyph_width=14, glyph_height=14)
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
        self.legend.items = [LegendItem(label=KIND_LABELS[k], renderers=[self.cells],
                                        index=kinds.index(k)) for k in present]
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
                               css_classes=["lab-present-drop"])  # the strips alone, if need be
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
                on_gpu = sv.weights + sv.overhead + a.total_bytes
                for y in (on_gpu, a.total_bytes, a.kv_bytes, a.state_bytes):
                    if y > 0:
                        xs.append(float(tokens))
                        ys.append(float(y))
                        colours.append(SLOT_COLOURS[slot])
                held = ", ".join(f"{what} {fmt_bytes(b)}" for what, b in (
                    ("KV cache", a.kv_bytes), ("state", a.state_bytes)) if b) or "nothing"
                said.append(f"{slot.upper()} on the GPU {fmt_bytes(on_gpu)} ({held} as "
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
    out[f"{slot}_gpu_text"] = [fmt_bytes(b) if np.isfinite(b) else "not run"
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
    heads, rows = ["<th></th>"], {k: [] for k in ("kv", "blocks", "state", "total", "ratio",
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


# What an engine allocates on a GPU, per model (data of a run) -----------------------------------

OVERHEAD_BYTES = 2 * 2**30  # sim.gpus.gpu_verdict's default estimate: activations, CUDA graphs
ENGINE_NAMES = {"ideal": "the ideal (exact bytes)", "vllm": "vLLM 0.33.0",
                "llama.cpp": "llama.cpp (0c1e570)", "sglang": "SGLang 0.5.23"}
GPU_COLOUR = "#cf222e"
BILLION = 10**9


@dataclass
class Served:
    """One model under the page's engine on the page's GPU, at every context of CONTEXTS.

    weights: bytes of the weights (0 when they cannot be counted, ``weights_text`` says why);
    refusal: why the engine does not run the model ("" when it does); allocations and
    verdicts: sim.engines.Allocation and sim.gpus.gpu_verdict per context; curve: engine KV,
    state and total, and "gpu" (weights + overhead + total), at CURVE_TOKENS (float64)."""

    name: str
    model: object
    engine: str
    weights: int
    weights_text: str
    usable: int
    overhead: int = 2 * 2**30  # the user-set overhead (activations, CUDA graphs), bytes
    refusal: str = ""
    max_context: int | None = None  # the model's own longest context (its config.json)
    allocations: list = dc_field(default_factory=list)
    verdicts: list = dc_field(default_factory=list)
    curve: dict = dc_field(default_factory=dict)


def gpu_label(name: str) -> str:
    """ "H100-80GB" → "H100 (80 GB)", for the GPU menu."""
    model, size = name.rsplit("-", 1)
    return f"{model.replace('-', ' ')} ({size.removesuffix('GB')} GB)"


def usable_bytes(s: dict) -> int:
    """The GPU memory the engine may use: vLLM its gpu_memory_utilization (0.92), others all."""
    gpu = {"gpu": s["gpu"]} if s["gpu"] else {"memory_gib": s["gpu_gib"]}
    return sim_gpus.engine_budget(s["engine"], sim_gpus.gpu_memory_bytes(**gpu), 0, 0)[0]


def engine_table(slot: str, sv, table: dict) -> None:
    """The CSV's rows of what the engine allocates (one per context) and of the weights."""
    if sv is None:
        return
    rows = [("weights", "", f"weights, {sv.weights_text}", 0, 0, sv.weights)]
    rows += [("engine", a.tokens, f"allocated by {ENGINE_NAMES[sv.engine]}", a.kv_bytes,
              a.state_bytes, a.total_bytes) for a in sv.allocations]
    for section, tokens, label, kv, state, total in rows:
        for key, value in zip(table, (section, slot.upper(), plain(sv.name, 200), tokens, "", "",
                                      label, kv, state, total)):
            table[key].append(value)


def model_facts(config: dict | None) -> tuple[str | None, int | None]:
    """(family, the model's own longest context) of a config.json, or (None, None)."""
    if not config:
        return None, None
    _, inner = hf_reader.unwrap(config)
    return hf_reader.recognise(inner), hf_config.max_context(inner)


def engine_options(engine: str, kv_dtype: str, state_dtype: str, family: str | None,
                   prefix_caching: bool = True, speculative_tokens: int = 0) -> dict:
    """The engine's own defaults, but the page's KV dtype (and, for the ideal, its state
    dtype); vLLM and SGLang also take the page's prefix caching and speculative tokens."""
    if engine == "llama.cpp" and kv_dtype == "fp8":
        raise ValueError("KV cache dtype: llama.cpp has no fp8 KV cache (it offers f16, bf16, "
                         "f32, q8_0 and q4_0); choose bf16 or fp16")
    options = {"family": family, "kv_dtype": kv_dtype}
    if engine in ("vllm", "sglang"):
        options |= {"prefix_caching": prefix_caching, "speculative_tokens": speculative_tokens}
    return options | ({"ssm_dtype": state_dtype} if engine == "ideal" else {})


def weights_of(config: dict | None, dtype: str, why_not: str) -> tuple[int, str]:
    """(weight bytes, the figure in words) from a config.json; (0, why) when not countable."""
    if not config:
        return 0, why_not
    try:
        count = sim_weights.parameter_count(config)
    except ValueError as err:
        return 0, f"not counted ({plain(err, 200)})"
    size = sim_weights.weight_bytes(count, dtype)
    return size, (f"{fmt_bytes(size)} ({count.total / BILLION:.2f} billion parameters; "
                  f"{count.active / BILLION:.2f} billion active per token)")


def serve(name: str, model, config: dict | None, why_not: str, s: dict) -> Served:
    """What ``s["engine"]`` allocates for ``model`` on the GPU of ``s`` at every context.
    ``s``: engine, kv_dtype, state_dtype, weight_dtype, gpu (a name or None), gpu_gib, sequences,
    and optionally overhead_bytes (default 2 GiB), prefix_caching, speculative_tokens.
    An engine that does not run the model (or cannot plan it) is a refusal, not an error; a
    bad GPU size or a dtype the engine lacks raises (the page keeps its settings)."""
    engine, n = s["engine"], s["sequences"]
    gpu = {"gpu": s["gpu"]} if s["gpu"] else {"memory_gib": s["gpu_gib"]}
    memory = sim_gpus.gpu_memory_bytes(**gpu)
    usable = sim_gpus.engine_budget(engine, memory, 0, 0)[0]
    family, limit = model_facts(config)
    weights, said = weights_of(config, s["weight_dtype"], why_not)
    options = engine_options(engine, s["kv_dtype"], s["state_dtype"], family,
                             s.get("prefix_caching", True), s.get("speculative_tokens", 0))
    overhead = s.get("overhead_bytes", OVERHEAD_BYTES)
    out = Served(name, model, engine, weights, said, usable, overhead, max_context=limit)
    try:
        run = sim_engines.prepare(model, engine, **options)
    except ValueError as err:
        if not str(err).startswith(("engine:", "model:")):
            raise
        out.refusal = plain(err, 300).removeprefix("engine: ").removeprefix("model: ")
        nan = np.full(CURVE_TOKENS.shape, np.nan)
        out.curve = {k: nan for k in ("kv", "state", "total", "gpu")}
        return out
    out.allocations = [run(c, n) for c in CONTEXTS]
    points = [run(int(x), n) for x in CURVE_TOKENS]
    top = max(points[-1].total_bytes, out.allocations[-1].total_bytes) + weights + overhead
    if top > MAX_EXACT:
        raise ValueError(f"{name}: {top:,} bytes at 1M tokens under {ENGINE_NAMES[engine]}; "
                         f"accepted: at most 2^53 = {MAX_EXACT:,}")
    out.verdicts = sim_gpus.gpu_verdicts(model, CONTEXTS, n, engine, **gpu, weight_bytes=weights,
                                         overhead_bytes=overhead, max_context=limit, **options)
    kv = np.array([p.kv_bytes for p in points], dtype=float)
    state = np.array([p.state_bytes for p in points], dtype=float)
    out.curve = {"kv": kv, "state": state, "total": kv + state,
                 "gpu": kv + state + float(weights + overhead)}
    return out


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.3g}%"


def kv_note(a, ideal_kv: int, windows: bool) -> str:
    """How the engine's KV cache differs from the exact figure, and why (in words)."""
    if a.engine == "ideal" or a.kv_bytes == ideal_kv:
        return "the exact figure" if a.kv_bytes else "no KV cache"
    why = {"vllm": f"whole blocks of {a.block_tokens} tokens"
                   + (", sliding windows kept with the tokens in flight" if windows else ""),
           "llama.cpp": "cells rounded up to a multiple of 256"
                        + (", sliding windows plus a batch of 512" if windows else ""),
           "sglang": "pages of one token"}[a.engine]
    if not ideal_kv:
        return why
    extra = a.kv_bytes - ideal_kv
    sign = "+" if extra > 0 else "−"
    return (f"{sign}{fmt_bytes(abs(extra))} ({sign}{percent(abs(extra), ideal_kv)}) against "
            f"the exact {fmt_bytes(ideal_kv)}, in {why}")


def state_note(a, state_layers: int) -> str:
    """The engine's state: its dtype, its copies per sequence and its padding (in words)."""
    d = a.detail
    if a.engine == "vllm":
        pad = d["page_bytes"] - d["state_page_bytes"]
        per = d["state_blocks"] * d["group_size"]
        pages = per // state_layers if state_layers else 0
        how = ("with prefix caching" if d["prefix_caching"] else "without prefix caching") + (
            f" and {d['speculative_tokens']} speculative tokens" if d["speculative_tokens"] else "")
        copies = (f"{pages} page{'s' if pages != 1 else ''} per layer and sequence {how}"
                  if state_layers and per % state_layers == 0 else
                  f"{d['state_blocks']} state blocks per sequence ({how})")
        padded = (f", each padded by {percent(pad, d['state_page_bytes'])} to fill a block"
                  if pad else "")
        dtypes = (d["conv_dtype"] if d["conv_dtype"] == d["ssm_dtype"] else
                  f"{d['conv_dtype']} convolution, {d['ssm_dtype']} recurrent")
        return f"{dtypes} state, {copies}{padded}"
    if a.engine == "sglang":
        slots = d["slots_per_request"]
        spec = (f", and {d['speculative_tokens']} speculative tokens add slots"
                if d["speculative_tokens"] else "")
        return (f"bf16 convolution, {d['ssm_dtype']} recurrent state, {slots} "
                f"slot{'s' if slots != 1 else ''} per sequence (radix cache "
                f"{'on' if d['radix_cache'] else 'off'}){spec}")
    if a.engine == "llama.cpp":
        return "fp32 (fixed in llama.cpp), one slot per sequence"
    return f"{d['state_dtype']}, one copy per sequence"


def engine_rows(t: int, served: dict, reports: dict) -> dict[str, list[str]]:
    """The readout's rows of what the engine holds at CONTEXTS[t], one cell per model shown."""
    rows: dict[str, list[str]] = {"weights": [], "kv_engine": [], "state_engine": [],
                                  "on_gpu": []}
    for slot, sv in served.items():
        if sv is None:
            continue
        rows["weights"].append(text(sv.weights_text, 300))
        if sv.refusal:
            rows["kv_engine"].append(f"not run: {text(sv.refusal, 300)}")
            rows["state_engine"].append("–")
            rows["on_gpu"].append("–")
            continue
        a, r = sv.allocations[t], reports[slot][t]
        groups = sv.model.groups
        state_layers = sum(g.count for g in groups if g.mixer.kind == "recurrent")
        windows = any(getattr(g.mixer, "window", None) for g in groups)
        rows["kv_engine"].append(f"<b>{fmt_bytes(a.kv_bytes)}</b>: "
                                 f"{kv_note(a, r['kv_cache_bytes'], windows)}"
                                 if a.kv_bytes else "no KV cache")
        rows["state_engine"].append(f"<b>{fmt_bytes(a.state_bytes)}</b>: "
                                    f"{state_note(a, state_layers)}"
                                    if a.state_bytes else "no fixed state")
        total = sv.weights + sv.overhead + a.total_bytes
        rows["on_gpu"].append(f"<b>{fmt_bytes(total)}</b> ({percent(total, sv.usable)} of the "
                              f"{fmt_bytes(sv.usable)} it may use): weights, "
                              f"{fmt_bytes(sv.overhead)} of overhead, KV cache and state")
    return rows


def engine_row_names(engine: str, weight_dtype: str) -> dict[str, str]:
    name = ENGINE_NAMES[engine]
    return {"weights": f"weights in {weight_dtype}", "kv_engine": f"KV cache, {name}",
            "state_engine": f"fixed state, {name}", "on_gpu": "on the GPU in all"}


def verdict_text(sv: Served, t: int, sequences: int) -> str:
    """One sentence: does it fit; the longest context for these sequences, and the most
    sequences at this context. Plain text (names escaped by the caller)."""
    name, tokens = sv.name, context_label(CONTEXTS[t])
    if sv.refusal:
        return f"{ENGINE_NAMES[sv.engine]} does not run {name} ({sv.refusal})."
    v = sv.verdicts[t]
    seqs = f"{sequences:,} sequence{'s' if sequences != 1 else ''}"
    on_gpu = fmt_bytes(sv.weights + sv.overhead + v["allocated_bytes"])
    if v["max_tokens"] is None:
        if v["budget_bytes"] < 0:
            return (f"{name} does not fit: its weights ({fmt_bytes(sv.weights)}) and "
                    f"{fmt_bytes(sv.overhead)} of overhead alone pass "
                    f"{fmt_bytes(sv.usable)}.")
        return f"{name} does not fit: the fixed state of {seqs} alone passes what the weights leave."
    limit = sv.max_context
    longest = ("any context (its memory stops growing)" if v["max_tokens"] >= sim_cache.MAX_TOKENS
               else f"{count(v['max_tokens'])} tokens")
    if limit is not None and v["max_tokens"] > limit:
        longest += f" (past its own maximum of {count(limit)})"
    most = v["max_sequences"]
    most_text = (f"at {tokens} tokens at most {most:,} sequence{'s fit' if most != 1 else ' fits'}"
                 if most else f"not one sequence of {tokens} tokens fits")
    beyond = f" (past its own maximum of {count(limit)})" if v["beyond_max_context"] else ""
    if v["fits"]:
        return (f"{name} fits: {seqs} of {tokens} tokens{beyond} take"
                f"{'s' if sequences == 1 else ''} {on_gpu}; the longest context for {seqs} is "
                f"{longest}, and {most_text}.")
    return (f"{name} does not fit with {seqs} of {tokens} tokens{beyond}, which would take "
            f"{on_gpu}; the longest context for {seqs} is {longest}, and {most_text}.")


def verdict_html(t: int, served: dict, sequences: int, gpu_name: str, usable: int) -> str:
    """The GPU and what the engine may use of it, then one sentence per model."""
    engine = next((ENGINE_NAMES[sv.engine] for sv in served.values() if sv is not None), "")
    lead = f"<b>On {text(gpu_name, 80)}</b>, {engine} may use {fmt_bytes(usable)}:"
    return lead + "".join(
        f' <span class="hybrid-verdict"><span style="color:{SLOT_COLOURS[slot]}">■</span> '
        f"<b>{slot.upper()}</b> {text(verdict_text(sv, t, sequences), 600)}</span>"
        for slot, sv in served.items() if sv is not None)


def in_words(line: str) -> str:
    """sim's ⌈x⌉ as "round up (x)": the UI font is cut to the pages' characters, without these."""
    return line.replace("⌈", "round up (").replace("⌉", ")")


def lines_html(t: int, served: dict) -> str:
    """The arithmetic behind the readout: the engine's allocation and the GPU verdict, line by
    line (sim.engines and sim.gpus write them)."""
    parts = []
    for slot, sv in served.items():
        if sv is None:
            continue
        lines = ([f"not run: {sv.refusal}"] if sv.refusal else
                 [*sv.allocations[t].lines, *sv.verdicts[t]["lines"]])
        lines.insert(0, f"weights: {sv.weights_text}" if sv.weights else
                     f"weights: {sv.weights_text}; counted as 0 bytes")
        parts.append(f"<p><b>{slot.upper()}: {text(sv.name, 60)}</b></p><ul>"
                     + "".join(f"<li>{text(in_words(line), 600)}</li>" for line in lines)
                     + "</ul>")
    return '<div class="hybrid-lines">' + "".join(parts) + "</div>"
