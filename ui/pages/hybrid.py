"""Page 4, "Hybrid models and their cache": which layers of a model keep a KV cache that grows
with the context, which keep a fixed state, and what that costs in bytes.

t indexes CONTEXTS (1K, 2K, 4K … 1M tokens): Step and Play double the context. ``compute``
asks `sim.cache` for each model's report at every context and its memory curve; every byte
count is sim's. The views and texts are in hybrid_views.py. A custom model comes from the JSON
box or a link, always through ``read_model`` (sim's reader, which bounds size, depth, every
number and every count before any work and names the field, value and range when it refuses).
"""

from __future__ import annotations

import json
from typing import Any

import panel as pn
import param
from bokeh.models import Div

from sim import cache
from sim.exercises import hybrid_model
from ui.exercises import exercise_setting
from ui.fmt import plain
from ui.page import SETTINGS_ERRORS, Page, Run
from ui.pages.hybrid_models import DEFAULT_CUSTOM, HINT, ConfigImport, read_model
from ui.theme import style_widget
from ui.urlstate import MAX_VALUE
from ui.views import Readout
from ui.views.hybrid import (
    CONTEXTS,
    CURVE_TOKENS,
    READOUT_CSS,
    LayerBars,
    LayerStrip,
    MemoryPlot,
    caption_html,
    card,
    curve_data,
    format_model_json,
    layer_data,
    readout_html,
    sources_html,
)

PRESET_NAMES = {model.name: key for key, model in cache.PRESETS.items()}
CUSTOM, NONE = "custom", "none"
CUSTOM_SOURCE = "custom model, edited on this page"
MAX_EXACT = 2**53  # bytes: beyond this a float64 (the plot, JavaScript) is no longer exact


class HybridPage(Page):
    title = "Hybrid models and their cache"
    slug = "hybrid"
    only_with = {"custom": {"model_a": CUSTOM}}  # the JSON shows as model A when chosen
    examples = {"custom": [{"name": "small", "layers": [
        {"kind": "attention", "count": 2, "kv_heads": 2, "head_dim": 64},
        {"kind": "recurrent", "count": 6, "state_shape": [4, 64, 64]}]}]}
    link_keys = {"sequences": "batch", "kv_block": "block", "exercise": "ex"}  # the link's name since the first version
    stops = (("4K", "stop_4k"), ("128K", "stop_128k"), ("1M", "stop_1m"),
             ("A's cache passes its state", "stop_cross"))

    model_a = param.Selector(objects={**PRESET_NAMES, "custom (edited below)": CUSTOM},
                             default="jamba-v0.1", label="Model A")
    model_b = param.Selector(objects={"none": NONE, **PRESET_NAMES,
                                      "custom (edited below)": CUSTOM},
                             default="llama-3-8b", label="Model B (to compare)")
    custom = param.Dict(DEFAULT_CUSTOM, label="Custom model (JSON)",
                        doc="The custom model in sim.cache's JSON format")
    kv_dtype = param.Selector(objects=list(cache.DTYPE_BYTES), default="bf16",
                              label="KV cache dtype", doc="fp32 4 bytes, bf16/fp16 2, fp8 1")
    state_dtype = param.Selector(objects=list(cache.DTYPE_BYTES), default="fp32",
                                 label="State dtype", doc="Engines often keep the state in fp32")
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

    # Settings → a run ----------------------------------------------------------------------
    def load(self, choice: str) -> cache.Model | None:
        if choice == NONE:
            return None
        return (cache.load_model(self.custom, source=CUSTOM_SOURCE) if choice == CUSTOM
                else cache.PRESETS[choice])

    def compute(self) -> Run:
        models = {"a": self.load(self.model_a), "b": self.load(self.model_b)}
        args = (self.sequences, self.kv_dtype, self.state_dtype)
        reports = {s: None if m is None else [cache.cache_report(m, c, *args, self.kv_block or None)
                                              for c in CONTEXTS]
                   for s, m in models.items()}
        for slot, rs in reports.items():  # memory only grows with t: 1M is the largest
            if rs is not None and rs[-1]["total_bytes"] > MAX_EXACT:
                raise ValueError(f"model {slot.upper()} holds {rs[-1]['total_bytes']:,} bytes at "
                                 f"1M tokens; accepted: at most 2^53 = {MAX_EXACT:,}")
        ts = range(len(CONTEXTS))
        data: dict[str, Any] = {"models": models, "reports": reports,
                                "x": CURVE_TOKENS.astype(float), "stop_4k": 2, "stop_128k": 7,
                                "stop_1m": 10, "stop_cross": -1}
        table: dict[str, list] = {k: [] for k in (
            "section", "slot", "model", "context_tokens", "layer", "kind", "label",
            "kv_cache_bytes", "state_bytes", "total_bytes")}
        for slot, model in models.items():
            data |= curve_data(slot, model, args) | layer_data(slot, model, reports[slot], table)
        if reports["a"] is not None:
            data["stop_cross"] = next((t for t in ts if 0 < reports["a"][t]["state_bytes"]
                                       < reports["a"][t]["kv_cache_bytes"]), -1)
        data["caption"] = [caption_html(t, reports) for t in ts]
        data["readout"] = [readout_html(CONTEXTS[t], models, {s: r and r[t] for s, r in
                                                                reports.items()}) for t in ts]
        data["sources"] = [sources_html(models)] * len(CONTEXTS)
        return Run(t_max=len(CONTEXTS) - 1, data=data, table=table, info=self._link_note())

    def _link_note(self) -> str:
        raw = json.dumps(self.custom, separators=(",", ":"), sort_keys=True).encode()
        size = -(-len(raw) * 4 // 3)  # base64 characters in the link
        if size <= MAX_VALUE:
            return ""
        return (f"The custom model takes {size:,} characters in a link; a link carries at most "
                f"{MAX_VALUE:,}, so Share will leave it out: copy its JSON from the box instead.")

    # The JSON box ----------------------------------------------------------------------------
    def apply_text(self, text: str) -> bool:
        """Make the JSON box's text the custom model; on any problem keep the last good model
        and say why in one line (by the box and in the notice)."""
        try:
            config = read_model(text)
        except SETTINGS_ERRORS as err:
            return self._refuse(f"Custom model not applied: {plain(err, 300)} The last good "
                                "model is still shown.")
        self._typed = True
        try:
            self.custom = config
        finally:
            self._typed = False
        if self.custom != config:  # it could not run (the base kept the last good run)
            return self._refuse(self.notice)
        self.editor_message.update(text="", visible=False)
        if self.notice.startswith("Custom model"):
            self.notice = ""
        return True

    def _refuse(self, message: str) -> bool:
        self.notice = message
        self.editor_message.update(text=message, visible=True)
        return False

    def _show_custom(self, event) -> None:
        """A model from elsewhere (a link) shows its JSON in the box."""
        if self.editor is not None and not self._typed:
            self.editor.value = format_model_json(event.new)

    def apply_config(self, model: dict) -> bool:
        """A config.json's model becomes the custom model, shown as model A."""
        self.custom = model
        if self.custom != model:  # it could not run: the notice says why
            return False
        self.model_a = CUSTOM
        return True

    def play_exercise(self, exercise) -> tuple[int, ...]:
        """'Show it on the plots': the exercise's model as model A, in the exercise's units."""
        self.param.update(custom=hybrid_model(exercise.given), model_a=CUSTOM, model_b=NONE,
                          kv_dtype="bf16", state_dtype="fp32", sequences=1, kv_block=16)
        return ()

    def apply_and_show(self, _event=None) -> None:
        if self.apply_text(self.editor.value) and CUSTOM not in (self.model_a, self.model_b):
            self.model_a = CUSTOM

    def apply_link_settings(self, updates: dict[str, Any]) -> list[str]:
        """A link's custom model arrives as JSON text: read it as the box's text is read."""
        notices = []
        if isinstance(updates.get("custom"), str):
            try:
                updates = {**updates, "custom": read_model(updates["custom"])}
            except SETTINGS_ERRORS as err:
                updates = {k: v for k, v in updates.items() if k != "custom"}
                notices.append(f"Ignored custom from the link: {plain(err, 300)}")
        return notices + super().apply_link_settings(updates)

    # Views and layout -------------------------------------------------------------------------
    def make_views(self) -> list:
        self.memory = MemoryPlot()
        self.strips = {s: LayerStrip(s) for s in "ab"}
        self.bars = {s: LayerBars(s, self.strips[s].fig.x_range) for s in "ab"}
        self.readout = Readout("readout", stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                               min_width=300, max_width=520, margin=(0, 10),
                               styles={"flex": "1 1 340px"},
                               css_classes=["lab-present-drop"])  # the caption keeps its numbers
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(0, 10),
                               styles={"font-size": "15px"}, css_classes=["lab-caption"])
        self.sources = Readout("sources", sizing_mode="stretch_width", margin=(0, 10),
                               styles={"font-size": "0.9em"})
        return [self.memory, *self.strips.values(), *self.bars.values(), self.readout,
                self.caption, self.sources]

    def body(self) -> pn.viewable.Viewable:
        radio = {"width": 220, "color": "primary", "variant": "outline"}
        label = lambda s: pn.pane.HTML(s, margin=(5, 10, 0, 10))  # noqa: E731
        knobs = pn.FlexBox(
            self.widget("model_a", pn.widgets.Select, width=230),
            self.widget("model_b", pn.widgets.Select, width=230),
            pn.Column(label("KV cache dtype"), self.widget("kv_dtype", pn.widgets.RadioButtonGroup,
                                                           **radio)),
            pn.Column(label("State dtype"), self.widget("state_dtype",
                                                        pn.widgets.RadioButtonGroup, **radio)),
            self.widget("sequences", pn.widgets.IntSlider, width=220),
            self.widget("kv_block", pn.widgets.IntInput, width=220),
            sizing_mode="stretch_width", align_items="end", css_classes=["lab-controls"])
        self.editor = pn.widgets.TextAreaInput(
            label="Custom model (JSON)", value=format_model_json(self.custom), height=260,
            max_length=2**20,  # Panel's default (5,000) cut long models silently; sim says why
            sizing_mode="stretch_width", min_width=280, max_width=760,
            styles={"font-family": "monospace"})
        self.editor.param.watch(lambda e: self.apply_text(e.new), "value")
        apply = pn.widgets.Button(label="Apply and show as model A", color="primary",
                                  width=240)
        apply.on_click(self.apply_and_show)
        self.widgets += [style_widget(self.editor), style_widget(apply)]
        self.importer = ConfigImport(self.apply_config)
        self.widgets += self.importer.widgets
        editor = pn.Column(self.editor, pn.pane.HTML(HINT, sizing_mode="stretch_width",
                                                     max_width=760, margin=(0, 10),
                                                     styles={"font-size": "0.85em"}),
                           pn.pane.Bokeh(self.editor_message), apply, sizing_mode="stretch_width")
        editor = style_widget(pn.Tabs(("Model description (JSON)", editor), (
            "Hugging Face config.json", self.importer.panel()), sizing_mode="stretch_width",
            css_classes=["lab-secondary"]))
        sources = pn.Column(pn.pane.HTML("<b>Sources</b> (plain text)", margin=(0, 10)),
                            self.sources.panel(), sizing_mode="stretch_width",
                            css_classes=["lab-secondary"])
        memory = pn.pane.Bokeh(self.memory.fig, sizing_mode="stretch_width", min_width=300,
                               max_width=760, styles={"flex": "2 1 420px"})
        return pn.Column(knobs, pn.Column(self.caption.panel(), pn.FlexBox(
                             self.readout.panel(), memory, sizing_mode="stretch_width"),
                             sizing_mode="stretch_width", css_classes=["lab-main-view", "lab-view-memory"]),
                         *(card(self.strips[s].fig, self.bars[s].fig) for s in "ab"),
                         editor, sources, sizing_mode="stretch_width")
