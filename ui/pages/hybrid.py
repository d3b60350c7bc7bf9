"""Page 4, "Hybrid models and their cache": which layers of a model keep a KV cache that grows
with the context, which keep a fixed state, and what that costs in bytes.

The timeline sweeps the context length: t indexes CONTEXTS (1K, 2K, 4K … 1M tokens), so Step
and Play double the context. The state reloads the chosen models and their memory curves from
`sim.cache` whenever a setting moves; a step only asks `sim.cache.cache_report` for the new
context. Every byte count comes from `sim.cache`.
"""

from __future__ import annotations

import html
import io
import json
import re
from typing import Any

import numpy as np
import panel as pn
import param
from bokeh.core.properties import field
from bokeh.models import (
    AdaptiveTicker,
    ColumnDataSource,
    CustomJSHover,
    CustomJSTickFormatter,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
    Span,
)
from bokeh.palettes import Colorblind8
from bokeh.plotting import figure

from sim import cache as sim_cache
from ui.app import Page
from ui.state import PageState
from ui.theme import scale_widgets, set_size, style_widget
from ui.views import TOOLS, Readout

# The timeline: one context length per step, doubling from 1K (2^10) to 1M (2^20) tokens.
CONTEXTS = tuple(2**p for p in range(10, 21))
# The memory plot: 8 points per doubling, so kinks (a sliding window filling up) show.
CURVE_TOKENS = np.unique(np.round(2.0 ** np.arange(10, 20.001, 0.125)).astype(np.int64))

DTYPES = tuple(sim_cache.DTYPE_BYTES)  # fp32, bf16, fp16, fp8
PRESET_NAMES = {model.name: key for key, model in sim_cache.PRESETS.items()}
CUSTOM = "custom"
NONE = "none"

# The custom model the page starts with: issue 2's example of the JSON format.
DEFAULT_CUSTOM: dict[str, Any] = {
    "name": "my hybrid",
    "layers": [
        {"kind": "attention", "count": 16, "kv_heads": 4, "head_dim": 256, "window": None},
        {"kind": "mla", "count": 7, "latent_dim": 576},
        {"kind": "recurrent", "count": 48, "state_shape": [48, 128, 128],
         "conv_channels": 10240, "conv_kernel": 4},
        {"kind": "mlp"},
    ],
}

# Display kinds of the layer strip (what a mixer is, not how much it stores), Okabe-Ito colours.
KIND_LABELS = {"full": "full attention", "window": "sliding window", "mla": "MLA",
               "recurrent": "linear / SSM", "mlp": "MLP"}
# Attention kinds warm (they grow), linear/SSM green (fixed); models A and B in two blues, so a
# model's colour never reads as a layer kind.
KIND_COLOURS = {"full": Colorblind8[5], "window": Colorblind8[1], "mla": Colorblind8[6],
                "recurrent": Colorblind8[3], "mlp": "#b0b7bf"}
SLOT_COLOURS = {"a": Colorblind8[0], "b": Colorblind8[4]}  # model A blue, model B sky blue
SERIES = (("total_bytes", "total", "solid"), ("kv_cache_bytes", "KV", "dashed"),
          ("state_bytes", "state", "dotted"))

# Axis labels in base-2 units (formatting only: bytes → "4 GiB", tokens → "256K").
BYTES_JS = """
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let x = tick, i = 0;
    while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    const label = (Math.round(x * 100) / 100) + " " + units[i];
"""
BYTES_FORMAT = CustomJSTickFormatter(code=BYTES_JS + "return label;")
# The per-layer bars rescale on every step. Their byte labels are all 8 characters wide in a
# monospaced font, so the axis keeps its width: a label of another width would make BokehJS lay
# the figure out again on each step (about a quarter of a step's time on this page).
BYTES_FORMAT_FIXED = CustomJSTickFormatter(code=BYTES_JS + "return label.padStart(8);")
TOKENS_FORMAT = CustomJSTickFormatter(code="""
    if (tick >= 1048576) return (tick / 1048576) + "M";
    if (tick >= 1024) return (tick / 1024) + "K";
    return String(tick);
""")
BYTE_TICKS = [2.0**p for p in range(0, 81, 2)]  # 1 B, 4 B, … every power of 4 (floats: JS-safe)


def byte_ticker() -> AdaptiveTicker:
    """Linear byte axes ticked at round binary steps (8 MiB, 16 MiB …, not 4.77 MiB)."""
    return AdaptiveTicker(base=2, mantissas=[1], min_interval=1, desired_num_ticks=5)


def display_kind(mixer: sim_cache.Mixer) -> str:
    """The strip's kind of a mixer: full attention, sliding window, MLA, linear/SSM or MLP."""
    if mixer.kind == "attention":
        return "full" if mixer.window is None else "window"
    return mixer.kind


def context_label(tokens: int) -> str:
    """1024 → "1K", 1048576 → "1M" (the grid holds powers of two only)."""
    if tokens >= 2**20:
        return f"{tokens // 2**20}M"
    return f"{tokens // 2**10}K" if tokens >= 2**10 else str(tokens)


def format_model_json(model: dict) -> str:
    """The editor's text: one layer entry per line, so a long model stays readable."""
    head = {key: value for key, value in model.items() if key != "layers"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append('  "layers": [')
    layers = model.get("layers", [])
    for i, entry in enumerate(layers):
        comma = "," if i < len(layers) - 1 else ""
        lines.append(f"    {json.dumps(entry, ensure_ascii=False)}{comma}")
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines)


def plain_source(text: str) -> str:
    """A citation as plain text: no scheme, so nothing on the page is an outside link."""
    return re.sub(r"(?i)\b[a-z][a-z0-9+.-]*://", "", text)


class ModelDict(param.Dict):
    """A custom model as its JSON object; a value `sim.cache.load_model` rejects is refused
    (so a bad link value is skipped with a notice and the last good model stays)."""

    def _validate(self, val):
        super()._validate(val)
        if val is None:
            return
        try:
            sim_cache.load_model(val)
        except Exception as error:  # noqa: BLE001 — any rejection is reported as a bad value
            raise ValueError(f"custom model rejected: {error}") from None


class HybridState(PageState):
    """Knobs of the hybrid page; t indexes CONTEXTS (the context length in tokens)."""

    model_a = param.Selector(objects={**PRESET_NAMES, "custom (edited below)": CUSTOM},
                             default="jamba-v0.1", label="Model A",
                             doc="The first model: a preset or the custom model")
    model_b = param.Selector(objects={"none": NONE, **PRESET_NAMES,
                                      "custom (edited below)": CUSTOM},
                             default="llama-3-8b", label="Model B (to compare)",
                             doc="A second model to compare with, or none")
    custom = ModelDict(default=DEFAULT_CUSTOM, label="Custom model",
                       doc="The custom model as JSON (the format of sim.cache.load_model)")
    kv_dtype = param.Selector(objects=list(DTYPES), default="bf16", label="KV cache dtype",
                              doc="Bytes per cached key/value number: fp32 4, bf16/fp16 2, fp8 1")
    state_dtype = param.Selector(objects=list(DTYPES), default="fp32", label="State dtype",
                                 doc="Bytes per fixed-state number (engines often keep fp32)")
    batch = param.Integer(1, bounds=(1, 256), label="Batch (sequences)",
                          doc="Sequences served at once; every byte count scales with it")
    custom_error = param.String("", precedence=-1,
                                doc="Why the text in the custom-model editor was not applied")
    revision = param.Integer(0, precedence=-1, doc="Bumped after every recompute (views refresh)")

    url_exclude = (*PageState.url_exclude, "custom_error", "revision")

    def __init__(self, **params):
        super().__init__(**params)
        self.models: dict[str, sim_cache.Model | None] = {}
        self.curves: dict[str, dict[str, np.ndarray] | None] = {}
        self.set_t_max(len(CONTEXTS) - 1)
        self._recompute()

    # Settings → models and curves ------------------------------------------------------------
    @param.depends("model_a", "model_b", "custom", "kv_dtype", "state_dtype", "batch",
                   watch=True)
    def _recompute(self) -> None:
        self.models = {"a": self._model(self.model_a), "b": self._model(self.model_b)}
        self.curves = {slot: None if model is None else sim_cache.memory_curve(
            model, CURVE_TOKENS, self.batch, self.kv_dtype, self.state_dtype)
            for slot, model in self.models.items()}
        self.revision += 1

    def _model(self, choice: str) -> sim_cache.Model | None:
        if choice == NONE:
            return None
        if choice == CUSTOM:
            return sim_cache.load_model(self.custom, source="custom model, edited on this page")
        return sim_cache.PRESETS[choice]

    # The custom-model editor ----------------------------------------------------------------
    def apply_custom_text(self, text: str) -> bool:
        """Parse the editor's JSON and make it the custom model. On bad JSON or a model
        `sim.cache` rejects, keep the last good model and say what is wrong (custom_error)."""
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            return self._reject(f"Not valid JSON: {error.msg} at line {error.lineno}, "
                                f"column {error.colno}.")
        try:
            sim_cache.load_model(config)
        except ValueError as error:
            return self._reject(f"The model was not accepted: {error}.")
        self.custom_error = ""
        if self.notice.startswith("Custom model"):
            self.notice = ""
        self.custom = config
        return True

    def _reject(self, message: str) -> bool:
        self.custom_error = message + " The last good model is still shown."
        self.notice = "Custom model not applied: see the message by the editor."
        return False

    # Readings at the current context --------------------------------------------------------
    @property
    def tokens(self) -> int:
        """The context length at step t, in tokens per sequence."""
        return CONTEXTS[self.t]

    def report(self, slot: str, tokens: int | None = None) -> dict | None:
        """sim.cache's report for model A or B at the current (or a given) context."""
        model = self.models[slot]
        if model is None:
            return None
        return sim_cache.cache_report(model, self.tokens if tokens is None else tokens,
                                      self.batch, self.kv_dtype, self.state_dtype)

    def csv(self) -> str:
        """Per context length (the timeline's grid): KV, state and total bytes of each model;
        then one row per mixer at the current context."""
        out = io.StringIO()
        out.write("section,slot,model,context_tokens,layer,kind,label,"
                  "kv_cache_bytes,state_bytes,total_bytes\n")
        shown = [(slot, m) for slot, m in self.models.items() if m is not None]

        def name(model):
            return '"' + model.name.replace('"', '""') + '"'

        for slot, model in shown:
            curve = sim_cache.memory_curve(model, np.array(CONTEXTS), self.batch,
                                           self.kv_dtype, self.state_dtype)
            for i, tokens in enumerate(curve["tokens"]):
                out.write(f"context,{slot.upper()},{name(model)},{tokens},,,,"
                          f"{curve['kv_cache_bytes'][i]},{curve['state_bytes'][i]},"
                          f"{curve['total_bytes'][i]}\n")
        for slot, model in shown:
            for mixer, row in zip(model.mixers, self.report(slot)["per_layer"]):
                label = '"' + row["label"].replace('"', '""') + '"'
                out.write(f"layer,{slot.upper()},{name(model)},{self.tokens},{row['layer']},"
                          f"{KIND_LABELS[display_kind(mixer)]},{label},{row['kv_bytes']},"
                          f"{row['state_bytes']},{row['kv_bytes'] + row['state_bytes']}\n")
        return out.getvalue()


# Views ------------------------------------------------------------------------------------------

class LayerStrip:
    """One model's layers as coloured cells (0-indexed), parallel mixers stacked in a layer;
    hover gives the layer, its kind and what it stores at the current context.

    What each layer stores at every context is written once per setting, and the hover picks
    the current context's text in the browser. (Sending it on every step made BokehJS repaint
    the strip and re-measure its legend: about a third of a step on this page.)
    """

    def __init__(self, slot: str, context):
        self.slot = slot
        self.source = ColumnDataSource({k: [] for k in (
            "layer", "row", "kind", "kind_label", "colour", "stores")})
        self.fig = figure(title="", height=150, sizing_mode="stretch_width", min_width=300,
                          max_width=980, tools=TOOLS, toolbar_location=None,
                          x_range=Range1d(-0.5, 31.5), y_range=Range1d(0.5, -0.5))
        self.fig.toolbar.logo = None
        self.cells = self.fig.rect("layer", "row", 0.9, 0.85, source=self.source,
                                   fill_color="colour", line_color=None)
        self.legend = Legend(orientation="horizontal", location="center", margin=2, padding=4,
                             spacing=8, label_standoff=4, glyph_width=14, glyph_height=14)
        self.fig.add_layout(self.legend, "below")
        # Each layer's `stores` holds its text at every context, joined by "|"; the hover
        # picks the current one from `context` (a model whose `location` is the context in
        # tokens), so a step sends nothing to the strip.
        at_context = CustomJSHover(args={"context": context, "contexts": list(CONTEXTS)},
                                   code="""
            const i = contexts.indexOf(context.location);
            return value.split("|")[i < 0 ? 0 : i];
        """)
        self.fig.add_tools(HoverTool(renderers=[self.cells], formatters={"@stores": at_context},
                                     tooltips=[("layer", "@layer"), ("kind", "@kind_label"),
                                               ("at this context", "@stores{custom}")]))
        self.fig.xaxis.axis_label = "layer ℓ (0-indexed)"
        self.fig.yaxis.visible = False
        self.fig.ygrid.visible = False
        self.fig.xgrid.visible = False

    def show(self, model: sim_cache.Model, reports: list[dict]) -> None:
        """Draw ``model``; ``reports`` are sim's reports at each of CONTEXTS."""
        layer, row, kinds, labels, colours = [], [], [], [], []
        in_layer: dict[int, int] = {}
        for mixer in model.mixers:
            kind = display_kind(mixer)
            layer.append(mixer.layer)
            row.append(in_layer.get(mixer.layer, 0))
            in_layer[mixer.layer] = row[-1] + 1
            kinds.append(kind)
            labels.append(f"{KIND_LABELS[kind]} ({mixer.label})"
                          if mixer.label not in (KIND_LABELS[kind], mixer.kind) else KIND_LABELS[kind])
            colours.append(KIND_COLOURS[kind])
        stores = zip(*([_stores(entry) for entry in report["per_layer"]] for report in reports))
        self.source.data = {"layer": layer, "row": row, "kind": kinds, "kind_label": labels,
                            "colour": colours, "stores": ["|".join(texts) for texts in stores]}
        rows = max(in_layer.values(), default=1)
        self.fig.x_range.update(start=-0.5, end=model.n_layers - 0.5)
        self.fig.y_range.update(start=rows - 0.5, end=-0.5)
        set_size(self.fig, height=125 + 28 * rows)  # scaled at once in the presenter view
        present = [k for k in KIND_LABELS if k in kinds]
        if [item.label.value for item in self.legend.items] != [KIND_LABELS[k] for k in present]:
            self.legend.items = [LegendItem(label=KIND_LABELS[k], renderers=[self.cells],
                                            index=kinds.index(k)) for k in present]
        self.fig.title.text = (f"{self.slot.upper()}: {model.name}, {model.n_layers} layers")

    def stores(self, context: int) -> list[str]:
        """What each layer stores at CONTEXTS[context], as the hover shows it."""
        return [texts.split("|")[context] for texts in self.source.data["stores"]]


def _stores(entry: dict) -> str:
    if entry["kv_bytes"]:
        return f"{sim_cache.format_bytes(entry['kv_bytes'])} of KV cache"
    if entry["state_bytes"]:
        return f"{sim_cache.format_bytes(entry['state_bytes'])} of fixed state"
    return "no cache"


class LayerBars:
    """KV-cache and state bytes of each layer at the current context, stacked per layer."""

    def __init__(self, slot: str, x_range):
        self.slot = slot
        self.source = ColumnDataSource({k: [] for k in (
            "layer", "kv", "state", "kv_colour", "kv_text", "state_text", "kinds")})
        self.fig = figure(title="", height=230, sizing_mode="stretch_width", min_width=300,
                          max_width=980, tools=TOOLS, toolbar_location="above", x_range=x_range,
                          y_range=Range1d(0, 1))
        self.fig.toolbar.logo = None
        # KV bars take the colour of the layer's attention kind, state bars the linear/SSM
        # colour, as in the strip above; a layer with both (Falcon-H1) stacks them.
        bars = self.fig.vbar_stack(["kv", "state"], x="layer", width=0.8, source=self.source,
                                   color=[field("kv_colour"), KIND_COLOURS["recurrent"]],
                                   line_color=None)
        self.fig.add_tools(HoverTool(renderers=bars, tooltips=[
            ("layer", "@layer"), ("kind", "@kinds"), ("KV cache", "@kv_text"),
            ("fixed state", "@state_text")]))
        self.fig.yaxis.ticker = byte_ticker()
        self.fig.yaxis.formatter = BYTES_FORMAT_FIXED
        self.fig.yaxis.major_label_text_font = "monospace"
        self.fig.xaxis.axis_label = "layer ℓ"
        self.fig.yaxis.axis_label = "bytes"
        self.fig.xgrid.visible = False

    def show(self, model: sim_cache.Model, report: dict, tokens: int, *, new: bool = True) -> None:
        """Draw ``report`` (sim's, at ``tokens``); ``new=False`` when only the context changed
        since the last call, so only the KV cache's columns are sent."""
        n = model.n_layers
        kv, state = np.zeros(n), np.zeros(n)  # floats: sent as one buffer, exact below 2⁵³
        kv_colour = [KIND_COLOURS["full"]] * n
        kinds: list[list[str]] = [[] for _ in range(n)]
        for mixer, entry in zip(model.mixers, report["per_layer"]):
            kv[entry["layer"]] += entry["kv_bytes"]  # parallel mixers share a layer's bar
            state[entry["layer"]] += entry["state_bytes"]
            kinds[entry["layer"]].append(KIND_LABELS[display_kind(mixer)])
            if mixer.kind in sim_cache.ATTENTION_KINDS:
                kv_colour[entry["layer"]] = KIND_COLOURS[display_kind(mixer)]
        columns = {"kv": kv, "kv_text": [sim_cache.format_bytes(b) for b in kv]}
        if new or len(self.source.data["kv"]) != n:
            self.source.data = {
                **columns, "layer": np.arange(n), "state": state, "kv_colour": kv_colour,
                "state_text": [sim_cache.format_bytes(b) for b in state],
                "kinds": [" + ".join(k) for k in kinds]}
        else:
            self.source.data.update(**columns)  # a step: only the KV cache grows
        # The axis is set here, not by a DataRange1d: BokehJS would recompute it on every paint.
        top = float(np.max(kv + state)) if n else 0.0
        self.fig.y_range.update(start=0, end=top * 1.05 if top > 0 else 1.0)
        self.fig.title.text = f"{self.slot.upper()}: bytes per layer at {context_label(tokens)}"


class MemoryPlot:
    """Memory against context length (log–log): KV cache, fixed state and total per model."""

    def __init__(self):
        self.source = ColumnDataSource({"x": [], **{f"{slot}_{key}": [] for slot in "ab"
                                                    for key, _, _ in SERIES},
                                        **{f"{slot}_total_text": [] for slot in "ab"}})
        self.now = ColumnDataSource({"x": [], "y": [], "colour": []})
        self.fig = figure(title="Memory against context", height=380,
                          sizing_mode="stretch_width", min_width=300, max_width=760,
                          tools=TOOLS, toolbar_location="above", x_axis_type="log",
                          y_axis_type="log", x_range=Range1d(CONTEXTS[0], CONTEXTS[-1]),
                          y_range=Range1d(2.0**20, 2.0**40))  # set from the data in show()
        self.fig.toolbar.logo = None
        self.fig.min_border_right = 18  # room for the last tick label, "1M"
        self.renderers: dict[str, list] = {"a": [], "b": []}
        items = []
        for slot in "ab":
            for key, label, dash in SERIES:
                r = self.fig.line("x", f"{slot}_{key}", source=self.source, line_width=2.5,
                                  color=SLOT_COLOURS[slot], line_dash=dash)
                r.tags = [2.5]
                self.renderers[slot].append(r)
                items.append(LegendItem(label=f"{slot.upper()} {label}", renderers=[r]))
        # What moves on a step (the current-context points and line) is drawn on the overlay
        # layer, so BokehJS repaints neither the curves nor the log axes for it.
        self.fig.scatter("x", "y", source=self.now, size=8, color="colour", line_color="white",
                         level="overlay")
        self.legend = Legend(items=items, orientation="horizontal", ncols=3, location="center",
                             margin=2, padding=4, spacing=6, label_standoff=4, glyph_width=22,
                             click_policy="hide")
        self.fig.add_layout(self.legend, "below")
        self.fig.add_tools(HoverTool(renderers=[self.renderers["a"][0]], mode="vline", tooltips=[
            ("context", "@x{0,0} tokens"), ("A total", "@a_total_text"),
            ("B total", "@b_total_text")]))
        self.marker = Span(location=CONTEXTS[0], dimension="height", line_color="#6e7781",
                           line_dash="dotted", line_width=1.5, level="overlay")
        self.fig.add_layout(self.marker)
        self.fig.xaxis.ticker = FixedTicker(ticks=[2**p for p in range(10, 21, 2)])
        self.fig.xaxis.formatter = TOKENS_FORMAT
        self.fig.yaxis.ticker = FixedTicker(ticks=BYTE_TICKS)
        self.fig.yaxis.formatter = BYTES_FORMAT
        self.fig.xaxis.axis_label = "context t (tokens, log scale)"
        self.fig.yaxis.axis_label = "bytes (log scale, base 2)"

    def show(self, curves: dict) -> None:
        data: dict[str, Any] = {"x": CURVE_TOKENS}
        for slot in "ab":
            curve = curves[slot]
            for key, _, _ in SERIES:
                if curve is None:
                    data[f"{slot}_{key}"] = np.full(CURVE_TOKENS.shape, np.nan)
                else:  # a log axis cannot show 0 bytes: leave those points out of the line
                    values = curve[key].astype(float)
                    data[f"{slot}_{key}"] = np.where(values > 0, values, np.nan)
            data[f"{slot}_total_text"] = (["–"] * len(CURVE_TOKENS) if curve is None else
                                         [sim_cache.format_bytes(b) for b in curve["total_bytes"]])
            for r in self.renderers[slot]:
                r.visible = curve is not None
        self.source.data = data
        finite = [v for k, v in data.items() if k.endswith("bytes") and np.isfinite(v).any()]
        if finite:
            values = np.concatenate(finite)
            values = values[np.isfinite(values)]
            self.fig.y_range.update(start=values.min() / 2, end=values.max() * 2)

    def mark(self, tokens: int, reports: dict) -> None:
        self.marker.location = tokens
        xs, ys, colours = [], [], []
        for slot, report in reports.items():
            if report is None:
                continue
            for key, _, _ in SERIES:
                if report[key] > 0:
                    xs.append(tokens)
                    ys.append(report[key])
                    colours.append(SLOT_COLOURS[slot])
        self.now.data = {"x": xs, "y": ys, "colour": colours}


def _readout_html(tokens: int, models: dict, reports: dict) -> str:
    """The numbers at the current context, per model, in base-2 units."""
    def cell(text: str) -> str:
        return f"<td>{text}</td>"

    heads, rows = ["<th></th>"], {k: [] for k in ("kv", "state", "total", "ratio", "per")}
    for slot, model in models.items():
        report = reports[slot]
        if model is None:
            continue
        colour = SLOT_COLOURS[slot]
        heads.append(f'<th><span style="color:{colour}">■</span> {slot.upper()}: '
                     f"{html.escape(model.name)}</th>")
        rows["kv"].append(cell(sim_cache.format_bytes(report["kv_cache_bytes"])))
        rows["state"].append(cell(sim_cache.format_bytes(report["state_bytes"])))
        rows["total"].append(cell(f"<b>{sim_cache.format_bytes(report['total_bytes'])}</b>"))
        ratio = report["ratio"]
        if ratio is None:
            rows["ratio"].append(cell("none (no attention layer)"))
        else:
            full = sim_cache.format_bytes(report["full_attention_kv_bytes"])
            rows["ratio"].append(cell(f"{ratio:.4g}× ({full} if all attention)"))
        rows["per"].append(cell(sim_cache.format_bytes(report["kv_bytes_per_token"]) + " / token"))
    names = {"kv": "KV cache", "state": "fixed state", "total": "total",
             "ratio": "KV cache vs. an all-attention model of the same shape",
             "per": "KV added per token (one sequence, before any window)"}
    body = "".join(f"<tr><th>{names[k]}</th>{''.join(v)}</tr>" for k, v in rows.items())
    return (f'<div class="hybrid-context"><span class="hybrid-context-label">context</span> '
            f"<b>{tokens:,} tokens</b> ({context_label(tokens)})</div>"
            f'<table class="hybrid-readout"><tr>{"".join(heads)}</tr>{body}</table>'
            '<p class="hybrid-units">KiB, MiB, GiB are base 2: 1 GiB = 2³⁰ bytes.</p>')


def _sources_html(models: dict) -> str:
    parts = []
    for slot, model in models.items():
        if model is None:
            continue
        source = plain_source(model.source) or "no source given"
        parts.append(f"<p><b>{slot.upper()}: {html.escape(model.name)}</b>. "
                     f"Source: {html.escape(source)}</p>")
    return "".join(parts)


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
"""


class HybridPage(Page):
    title = "Hybrid models and their cache"
    slug = "hybrid"

    def __init__(self, state: HybridState | None = None):
        super().__init__(state or HybridState())
        # On this page a step doubles the context: say so on the shared timeline.
        self.transport.timeline.label = "Context step (1K → 1M tokens)"
        # Built here, not in main(): launch() applies the presenter view (which hides
        # self.secondary) before it asks for the layout.
        self._body = self._build()

    def main(self) -> pn.viewable.Viewable:
        return self._body

    def set_view(self, *, theme: str | None = None, present: bool | None = None) -> None:
        super().set_view(theme=theme, present=present)
        if hasattr(self, "widgets"):  # larger type in the presenter view needs wider widgets
            scale_widgets(self.widgets.values(), self.present)

    def _build(self) -> pn.viewable.Viewable:
        s: HybridState = self.state
        self.memory = MemoryPlot()
        self.strips = {slot: LayerStrip(slot, self.memory.marker) for slot in "ab"}
        self.bars = {slot: LayerBars(slot, self.strips[slot].fig.x_range) for slot in "ab"}
        for fig in (self.memory.fig, *(v.fig for v in (*self.strips.values(),
                                                      *self.bars.values()))):
            self.add_figure(fig)
        # The same size at every context (room for the longest text of these settings): a step
        # only swaps the numbers, it never lays the page out again.
        self.readout = Readout(stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                               min_width=300, max_width=520, margin=(0, 10),
                               styles={"flex": "1 1 340px"})
        self.sources = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    styles={"font-size": "0.9em"})

        # The dtype choices as outlined primary buttons (as on the fixed-state page): the chosen
        # one is filled, which reads in both themes (the default style marks it by a shadow only).
        self.widgets = {
            "model_a": pn.widgets.Select.from_param(s.param.model_a, label="Model A", width=230),
            "model_b": pn.widgets.Select.from_param(s.param.model_b, label="Model B (to compare)",
                                                    width=230),
            "kv_dtype": pn.widgets.RadioButtonGroup.from_param(
                s.param.kv_dtype, label="KV cache dtype", width=220, color="primary",
                variant="outline"),
            "state_dtype": pn.widgets.RadioButtonGroup.from_param(
                s.param.state_dtype, label="State dtype", width=220, color="primary",
                variant="outline"),
            "batch": pn.widgets.IntSlider.from_param(s.param.batch, label="Batch (sequences)",
                                                     width=220),
        }
        w = self.widgets
        knobs = pn.FlexBox(
            w["model_a"], w["model_b"],
            pn.Column(pn.pane.HTML("KV cache dtype", margin=(5, 10, 0, 10)), w["kv_dtype"]),
            pn.Column(pn.pane.HTML("State dtype", margin=(5, 10, 0, 10)), w["state_dtype"]),
            w["batch"], sizing_mode="stretch_width", align_items="end")

        self.editor = pn.widgets.TextAreaInput(
            label="Custom model (JSON)",
            value=format_model_json(s.custom), height=260, sizing_mode="stretch_width",
            min_width=280, max_width=760, styles={"font-family": "monospace"})
        self.editor_message = pn.pane.Alert("", alert_type="danger", visible=False,
                                            sizing_mode="stretch_width", max_width=760)
        apply = pn.widgets.Button(label="Apply and show as model A", color="primary",
                                  width=240)
        apply.on_click(self._apply_and_show)
        for widget in (*self.widgets.values(), self.editor, apply):
            style_widget(widget)
        self.widgets["apply"] = apply
        self.editor.param.watch(lambda e: s.apply_custom_text(e.new), "value")
        s.param.watch(self._on_custom, ["custom", "custom_error"])

        self.model_cards = {slot: pn.Column(pn.pane.Bokeh(self.strips[slot].fig,
                                                          sizing_mode="stretch_width"),
                                            pn.pane.Bokeh(self.bars[slot].fig,
                                                          sizing_mode="stretch_width"),
                                            sizing_mode="stretch_width")
                            for slot in "ab"}
        hint = pn.pane.HTML(
            "One entry per layer kind: <code>attention</code> (kv_heads, head_dim, optional "
            "window), <code>mla</code> (latent_dim), <code>recurrent</code> (state_shape, "
            "optional conv_channels and conv_kernel) or <code>mlp</code>; <code>count</code> "
            "repeats an entry, <code>\"parallel\": true</code> puts it in the layers before it. "
            "Choose “custom” as model A or B to see it.", sizing_mode="stretch_width",
            max_width=760, margin=(0, 10), styles={"font-size": "0.85em"})
        editor_box = pn.Column(self.editor, hint, self.editor_message, apply,
                               sizing_mode="stretch_width")
        sources_box = pn.Column(pn.pane.HTML("<b>Sources</b> (plain text)", margin=(0, 10)),
                                self.sources, sizing_mode="stretch_width")
        self.secondary.extend([editor_box, sources_box])

        s.param.watch(self._refresh, ["t", "revision"])
        self._refresh()
        return pn.Column(
            knobs,
            pn.FlexBox(self.readout.pane, pn.pane.Bokeh(self.memory.fig, sizing_mode="stretch_width",
                                                   min_width=300, max_width=760,
                                                   styles={"flex": "2 1 420px"}),
                       sizing_mode="stretch_width"),
            self.model_cards["a"], self.model_cards["b"], editor_box, sources_box,
            sizing_mode="stretch_width")

    # Refresh ---------------------------------------------------------------------------------
    def _refresh(self, *events) -> None:
        s: HybridState = self.state
        settings_changed = not events or any(e.name == "revision" for e in events)
        if settings_changed:
            # Everything a step shows, for every context of these settings: a step looks it up.
            self._reports = [{slot: s.report(slot, tokens) for slot in "ab"} for tokens in CONTEXTS]
            self.memory.show(s.curves)
            self.sources.object = _sources_html(s.models)
            self.readout.fit(_readout_html(tokens, s.models, self._reports[i])
                             for i, tokens in enumerate(CONTEXTS))
        reports = self._reports[s.t]
        for slot in "ab":
            model = s.models[slot]
            self.model_cards[slot].visible = model is not None
            if model is None:
                continue
            if settings_changed:
                self.strips[slot].show(model, [r[slot] for r in self._reports])
            self.bars[slot].show(model, reports[slot], s.tokens, new=settings_changed)
        self.memory.mark(s.tokens, reports)
        self.readout.show_at(s.t)

    def _on_custom(self, event) -> None:
        s: HybridState = self.state
        self.editor_message.object = s.custom_error
        self.editor_message.visible = bool(s.custom_error)
        if event.name == "custom":
            try:
                shown = json.loads(self.editor.value)
            except json.JSONDecodeError:
                shown = None
            if shown != s.custom:  # the model came from elsewhere (a link): show its JSON
                self.editor.value = format_model_json(s.custom)

    def _apply_and_show(self, _event=None) -> None:
        s: HybridState = self.state
        if s.apply_custom_text(self.editor.value) and CUSTOM not in (s.model_a, s.model_b):
            s.model_a = CUSTOM
