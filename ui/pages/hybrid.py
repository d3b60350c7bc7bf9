"""Page 4, "Hybrid models and their cache": which layers of a model keep a KV cache that grows
with the context, which keep a fixed state, what that costs in bytes, and what an inference
engine allocates for it on a GPU.

t indexes CONTEXTS (1K, 2K, 4K … 1M tokens): Step and Play double the context. ``compute``
asks `sim.cache` for each model's ideal report at every context and its memory curve, and
`sim.engines` / `sim.gpus` / `sim.weights` (through ``serve``) for what the chosen engine
allocates, the weights, the GPU's budget and the verdict (ui/pages/hybrid_serving*.py); every
byte count is sim's. The views and texts are in ui/views/hybrid.py. A custom model comes from
the JSON box, a config.json or a link (ui/pages/hybrid_models.py), always through sim's readers,
which bound size, depth, every number and every count before any work and name the field, value
and range when they refuse; models A and B each have one of their own (``custom``,
``custom_b``), so two pasted config.json files are compared side by side.
"""

from __future__ import annotations

from typing import Any

import panel as pn
import param
from bokeh.models import Div

from sim import cache, hf_config
from sim.exercises import hybrid_model
from sim.gpus import GPUS, OVERHEAD_BYTES, GiB
from sim.presets import PRESET_HF_CONFIGS
from sim.weights import WEIGHT_DTYPES
from ui.contract import role
from ui.exercises import exercise_setting
from ui.fmt import plain
from ui.page import Page, Run
from ui.pages import hybrid_engine
from ui.pages.hybrid_engine import WATCHED, engine_knobs, engine_settings, show_engine_knobs
from ui.pages.hybrid_models import (
    CUSTOM,
    DEFAULT_CUSTOM,
    SLOT_SETTINGS,
    CustomModelBoxes,
    read_model,  # noqa: F401 (the tests read models as the page does)
)
from ui.pages.hybrid_serving import engine_table, gpu_label, serve, usable_bytes
from ui.pages.hybrid_serving_text import engine_row_names, engine_rows, lines_html, verdict_html
from ui.views import Readout
from ui.views.hybrid import (
    CONTEXTS,
    CURVE_TOKENS,
    ENGINE_NAMES,
    MAX_EXACT,
    READOUT_CSS,
    LayerBars,
    LayerStrip,
    MemoryPlot,
    caption_html,
    card,
    curve_data,
    layer_data,
    readout_html,
    sources_html,
)

PRESET_NAMES = {model.name: key for key, model in cache.PRESETS.items()}
NONE = "none"
MODEL_A, MODEL_B = "jamba-v0.1", "llama-3-8b"  # the defaults
CUSTOM_SOURCE = "custom model, edited on this page"
JAMBA_DICT = cache.model_to_dict(hf_config.from_hf_config(PRESET_HF_CONFIGS["jamba-v0.1"])[0])


class HybridPage(CustomModelBoxes, Page):
    only_with = {"custom": {"model_a": CUSTOM}, "gpu_gib": {"gpu": CUSTOM},  # shown when chosen
                 "custom_config": {"model_a": CUSTOM, "custom": JAMBA_DICT},
                 "custom_b": {"model_b": CUSTOM},
                 "custom_config_b": {"model_b": CUSTOM, "custom_b": JAMBA_DICT},
                 "prefix_caching": {"engine": "vllm"}, "speculative_tokens": {"engine": "vllm"}}
    _SMALL = {"name": "small", "layers": [
        {"kind": "attention", "count": 2, "kv_heads": 2, "head_dim": 64},
        {"kind": "recurrent", "count": 6, "state_shape": [4, 64, 64]}]}
    examples = {"custom": [_SMALL], "custom_b": [_SMALL],
                "custom_config": [PRESET_HF_CONFIGS["jamba-v0.1"]],
                "custom_config_b": [PRESET_HF_CONFIGS["jamba-v0.1"]]}
    link_keys = {"sequences": "batch", "kv_block": "block", "exercise": "ex",  # since the first version
                 "custom_config": "hf", "weight_dtype": "weights", "gpu_gib": "gib",
                 "overhead_gib": "overhead", "prefix_caching": "prefix",
                 "speculative_tokens": "spec", "custom_config_b": "hf_b"}
    stops = (("4K", "stop_4k"), ("128K", "stop_128k"), ("1M", "stop_1m"),
             ("A's cache passes its state", "stop_cross"))
    named_views = {"memory": "Memory against context, and the verdict", "layers": "The layers of each model"}
    subject = "memory"  # on the first screen (ui/page.py Page.subject)
    # Each model A or B chosen with the other at its default is built ahead of time (ui/ahead.py):
    # the two menus respond before Python; a pair of models is Python's.
    offered = (*(f"model_a={m}" for m in (*PRESET_NAMES.values(), CUSTOM) if m != MODEL_A),
               *(f"model_b={m}" for m in (NONE, *PRESET_NAMES.values(), CUSTOM) if m != MODEL_B))

    model_a = param.Selector(objects={**PRESET_NAMES, "custom A (below)": CUSTOM},
                             default=MODEL_A, label="Model A")
    model_b = param.Selector(objects={"none": NONE, **PRESET_NAMES,
                                      "custom B (below)": CUSTOM},
                             default=MODEL_B, label="Model B (to compare)")
    custom = param.Dict(DEFAULT_CUSTOM, label="Custom model A (JSON)",
                        doc="Model A's custom model in sim.cache's JSON format")
    kv_dtype = param.Selector(objects=list(cache.DTYPE_BYTES), default="bf16",
                              label="KV cache dtype", doc="fp32 4 bytes, bf16/fp16 2, fp8 1")
    state_dtype = param.Selector(objects=list(cache.DTYPE_BYTES), default="fp32",
                                 label="State dtype (the ideal)",
                                 doc="The ideal's state; each engine keeps its own (shown)")
    custom_config = param.Dict({}, label="config.json of custom model A",
                               doc="The Hugging Face config.json custom model A was read from "
                                   "({} for a model written by hand): its weights are counted")
    custom_b = param.Dict(DEFAULT_CUSTOM, label="Custom model B (JSON)",
                          doc="Model B's own custom model (a config.json read as model B)")
    custom_config_b = param.Dict({}, label="config.json of custom model B",
                                 doc="The Hugging Face config.json custom model B was read from")
    engine = param.Selector(objects={v: k for k, v in ENGINE_NAMES.items()}, default="vllm",
                            label="Engine", doc="Whose allocation rules: docs/engines.md")
    weight_dtype = param.Selector(objects=list(WEIGHT_DTYPES), default="shipped",
                                  label="Weight dtype",
                                  doc="shipped: as the config.json says (its quantization_config, "
                                      "else torch_dtype); int4: half a byte and a scale per 128")
    gpu = param.Selector(objects={**{gpu_label(n): n for n in GPUS},
                                  "custom size (GiB below)": CUSTOM},
                         default="H100-80GB", label="GPU")
    gpu_gib = param.Number(80.0, bounds=(0, 16384), label="Custom GPU memory (GiB)",
                           doc="The GPU's memory when GPU is a custom size; above 0")
    overhead_gib = param.Number(OVERHEAD_BYTES / GiB, bounds=(0, 16384), label="Overhead (GiB)",
                                doc="Activations and CUDA graphs: what the engine takes besides "
                                    "the weights, the KV cache and the state")
    prefix_caching = param.Boolean(True, label="Prefix caching",
                                   doc="vLLM's prefix caching; SGLang's radix cache")
    speculative_tokens = param.Integer(0, bounds=(0, 64), label="Speculative tokens",
                                       doc="vLLM: state pages and conv rows; SGLang: slots")
    sequences = param.Integer(1, bounds=(1, 256), label="Batch (sequences)",
                          doc="Sequences served at once; every byte count scales with it")
    kv_block = param.Integer(16, bounds=(0, 2**20), label="KV blocks of B tokens (0 = exact)",
                             doc="An engine allocates the KV cache in blocks of B tokens")
    exercise = exercise_setting()

    def __init__(self, **params):
        self.editor = None
        # The message by the box is text, never markup: it repeats what the user typed.
        self.editor_message = Div(text="", render_as_text=True, visible=False,
                                  sizing_mode="stretch_width", max_width=760,
                                  styles={"color": "#cf222e"})
        self._typed = False  # the custom model came from the JSON box (keep the user's text)
        super().__init__(**params)
        self.param.watch(self._show_custom, "custom")
        self.param.watch(lambda *e: show_engine_knobs(self), WATCHED)

    # Settings → a run ----------------------------------------------------------------------
    applies_by_link = hybrid_engine.dtypes_by_link  # the dtypes' boxes, hidden before Python

    def load(self, choice: str, slot: str = "a") -> cache.Model | None:
        """Model ``choice`` as slot A or B shows it: "custom" is that slot's own."""
        if choice == NONE:
            return None
        if choice != CUSTOM:
            return cache.PRESETS[choice]
        return cache.load_model(getattr(self, SLOT_SETTINGS[slot][0]), source=CUSTOM_SOURCE)

    def compute(self) -> Run:
        models = {"a": self.load(self.model_a, "a"), "b": self.load(self.model_b, "b")}
        args = (self.sequences, self.kv_dtype, self.state_dtype)
        reports = {s: None if m is None else [cache.cache_report(m, c, *args, self.kv_block or None)
                                              for c in CONTEXTS]
                   for s, m in models.items()}
        for slot, rs in reports.items():  # memory only grows with t: 1M is the largest
            if rs is not None and rs[-1]["total_bytes"] > MAX_EXACT:
                raise ValueError(f"model {slot.upper()} holds {rs[-1]['total_bytes']:,} bytes at "
                                 f"1M tokens; accepted: at most 2^53 = {MAX_EXACT:,}")
        settings = engine_settings(self)
        configs = {s: self.config_of(getattr(self, f"model_{s}"), s) for s in "ab"}
        served = {s: None if m is None else serve(plain(m.name, 60), m, *configs[s], settings)
                  for s, m in models.items()}
        ts = range(len(CONTEXTS))
        data: dict[str, Any] = {"models": models, "reports": reports, "served": served,
                                "usable_bytes": usable_bytes(settings),
                                "x": CURVE_TOKENS.astype(float), "stop_4k": 2, "stop_128k": 7,
                                "stop_1m": 10, "stop_cross": -1}
        table: dict[str, list] = {k: [] for k in (
            "section", "slot", "model", "context_tokens", "layer", "kind", "label",
            "kv_cache_bytes", "state_bytes", "total_bytes")}
        for slot, model in models.items():
            data |= (curve_data(slot, model, args, served[slot])
                     | layer_data(slot, model, reports[slot], table))
            engine_table(slot, served[slot], table)
        if reports["a"] is not None:
            data["stop_cross"] = next((t for t in ts if 0 < reports["a"][t]["state_bytes"]
                                       < reports["a"][t]["kv_cache_bytes"]), -1)
        names = engine_row_names(self.engine, self.weight_dtype)
        gpu = f"the {gpu_label(self.gpu)}" if settings["gpu"] else f"a GPU of {self.gpu_gib:g} GiB"
        data["caption"] = [caption_html(t, reports) for t in ts]
        data["readout"] = [readout_html(CONTEXTS[t], models, {s: r and r[t] for s, r in
                                                                reports.items()},
                                        (engine_rows(t, served, reports), names)) for t in ts]
        data["verdict"] = [verdict_html(t, served, self.sequences, gpu, data["usable_bytes"])
                           for t in ts]
        data["lines"] = [lines_html(t, served) for t in ts]
        data["sources"] = [sources_html(models)] * len(CONTEXTS)
        return Run(t_max=len(CONTEXTS) - 1, data=data, table=table, info=self.link_note())

    def play_exercise(self, exercise) -> tuple[int, ...]:
        """'Show it on the plots': the exercise's model as model A, in the exercise's units."""
        self.param.update(custom=hybrid_model(exercise.given), custom_config={},
                          model_a=CUSTOM, model_b=NONE,
                          kv_dtype="bf16", state_dtype="fp32", sequences=1, kv_block=16)
        return ()

    # Views and layout -------------------------------------------------------------------------
    def make_views(self) -> list:
        self.memory = MemoryPlot()
        self.strips = {s: LayerStrip(s) for s in "ab"}
        self.bars = {s: LayerBars(s, self.strips[s].fig.x_range) for s in "ab"}
        self.readout = Readout("readout", stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                               min_width=300, max_width=560, margin=(0, 10),
                               styles={"flex": "1 1 340px"},
                               css_classes=[role("present_drop")])  # the caption keeps its numbers
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(0, 10),
                               styles={"font-size": "15px"}, css_classes=[role("caption")])
        self.verdict = Readout("verdict", stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                               margin=(0, 10), styles={"font-size": "15px"})
        self.lines = Readout("lines", stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                             margin=(0, 10), styles={"font-size": "14px"})
        self.sources = Readout("sources", sizing_mode="stretch_width", margin=(0, 10),
                               styles={"font-size": "0.9em"})
        return [self.memory, *self.strips.values(), *self.bars.values(), self.readout,
                self.caption, self.verdict, self.lines, self.sources]

    def body(self) -> pn.viewable.Viewable:
        knobs = pn.FlexBox(
            self.widget("model_a", pn.widgets.Select, width=230),
            self.widget("model_b", pn.widgets.Select, width=230),
            *engine_knobs(self),
            self.widget("sequences", pn.widgets.IntSlider, width=220),
            self.widget("kv_block", pn.widgets.IntInput, width=220),
            sizing_mode="stretch_width", align_items="end", css_classes=[role("controls")])
        section = lambda title, view: pn.Column(  # noqa: E731
            pn.pane.HTML(title, margin=(0, 10)), view.panel(), sizing_mode="stretch_width",
            css_classes=[role("secondary")])
        # the figure before the readout's long table: where they wrap (a phone, its presenter
        # view) the picture comes first
        memory = pn.pane.Bokeh(self.memory.fig, sizing_mode="stretch_width", min_width=300,
                               max_width=760, styles={"flex": "2 1 420px"})
        return pn.Column(knobs, pn.Column(self.caption.panel(), self.verdict.panel(), pn.FlexBox(
                             memory, self.readout.panel(), sizing_mode="stretch_width"),
                             sizing_mode="stretch_width", css_classes=[role("main_view"), self.view_class("memory")]),
                         section("<b>How the engine's figures and the verdict are worked out</b>",
                                 self.lines),
                         pn.Column(*(card(self.strips[s].fig, self.bars[s].fig) for s in "ab"),
                                   sizing_mode="stretch_width", css_classes=[self.view_class("layers")]),
                         self.custom_boxes(), section("<b>Sources</b> (plain text)", self.sources),
                         sizing_mode="stretch_width")
