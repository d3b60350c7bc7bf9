"""Where the hybrid page's custom model comes from: its JSON box (sim.cache's model format) and a
Hugging Face config.json, pasted or dropped as a file (sim.hf_config).

A config.json becomes the custom model, shown as model A or B, and the file is kept beside it
(``custom_config``: the weights are counted from it, sim.weights) with a report of what was read: the
fields used, the figures derived from others, the sizes taken from the reference implementation's
defaults, and the fields ignored (they do not change the cache). A field that matters but cannot
be interpreted is named in one line and the last good model stays. Everything from the file is
shown as text (escaped). A file larger than MAX_FILE_BYTES is refused before it is decoded or
parsed (Bokeh's file field has already read it into the browser's memory by then: its
JavaScript offers no size limit, and a custom one needs the ES-module shim the site does not
ship). ``CustomModelBoxes`` is the page's side of both boxes and of a link's copies of them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import panel as pn

from sim import cache, hf_config, hf_reader
from ui.fmt import plain
from ui.page import SETTINGS_ERRORS
from ui.theme import group_label, style_widget
from ui.urlstate import MAX_VALUE
from ui.views.hybrid import format_model_json

CUSTOM = "custom"

MAX_FILE_BYTES = 64 * 1024  # a config.json is a few KiB; nothing bigger is read
# The custom model the page starts with: the JSON format of sim.cache, one entry of each kind.
DEFAULT_CUSTOM: dict[str, Any] = {"name": "my hybrid", "layers": [
    {"kind": "attention", "count": 16, "kv_heads": 4, "head_dim": 256},
    {"kind": "mla", "count": 7, "latent_dim": 576},
    {"kind": "recurrent", "count": 48, "state_shape": [48, 128, 128], "conv_channels": 10240,
     "conv_kernel": 4},
    {"kind": "mlp"}]}
HINT = ("One entry per layer kind: <code>attention</code> (kv_heads, head_dim, optional window), "
        "<code>mla</code> (latent_dim), <code>recurrent</code> (state_shape, optional "
        "conv_channels and conv_kernel) or <code>mlp</code>; <code>count</code> repeats an entry, "
        "<code>\"parallel\": true</code> puts it in the layers before it. Choose “custom” as "
        "model A or B to see it.")
CONFIG_HINT = ("Paste a model's <code>config.json</code> from the Hugging Face Hub, or drop the "
               "file here. Recognised: " + ", ".join(hf_reader.FAMILIES) + ".")


def read_model(text: str) -> dict:
    """The JSON box's (or a link's) text as a model in sim's compact JSON form. Raises a
    one-line ValueError naming the field, the value and what is accepted."""
    model = cache.parse_model_text(text)  # bounded: size, nesting, digits, counts, sizes
    out = cache.model_to_dict(model)
    return out if out.get("source") else {k: v for k, v in out.items() if k != "source"}


def read_config(text: str) -> tuple[dict, dict, dict]:
    """A config.json's text → (the model in sim's JSON form, sim.hf_config's report, the
    file as a dict: its weights are counted from it)."""
    config = hf_reader.parse_config(text)
    model, report = hf_config.from_hf_config(config)
    return cache.model_to_dict(model), report, config


def report_html(report: dict, name: str, slot: str = "a") -> str:
    """What was read, in words; every name from the file escaped."""
    def names(items: list, limit: int = 60) -> str:
        shown = ", ".join(html.escape(plain(i, 120)) for i in items[:limit])
        return (shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")
                ) or "none"

    rows = (("Used", report["used"]), ("Derived", report["derived"]),
            ("Defaults (not in the file)", report["defaults"]),
            ("Ignored (they do not change the cache)", report["ignored"]))
    return (f"<p>Read <b>{html.escape(plain(name, 80))}</b> as "
            f"<code>{html.escape(report['family'])}</code>; it is now model {slot.upper()} "
            "(custom), its weights counted from the file.</p><ul>"
            + "".join(f"<li><b>{what}</b>: {names(items)}</li>" for what, items in rows)
            + "</ul>")


class ConfigImport:
    """The config.json box: a text area, a file field, model A or B, 'Read config.json' and
    the report. ``apply(model_dict, config, slot)`` makes the model the custom model shown as
    model A or B; it returns False (with a notice already given) when the model cannot run."""

    def __init__(self, apply: Callable[[dict, dict, str], bool]):
        self.apply = apply
        self.box = pn.widgets.TextAreaInput(
            label="Hugging Face config.json", placeholder='{"model_type": "jamba", …}',
            height=160, max_length=MAX_FILE_BYTES, sizing_mode="stretch_width", min_width=280,
            max_width=760, styles={"font-family": "monospace"})
        self.file = pn.widgets.FileInput(label="Or read a config.json file", margin=(0, 10), accept=".json,application/json")
        self.slot = pn.widgets.RadioButtonGroup(options={"as model A": "a", "as model B": "b"},
                                                value="a", color="primary", variant="outline",
                                                width=220)
        self.button = pn.widgets.Button(label="Read config.json", color="primary", width=200)
        self.report = pn.pane.HTML("", sizing_mode="stretch_width", max_width=760, margin=(0, 10))
        self.button.on_click(lambda _e: self.read(self.box.value))
        self.file.param.watch(lambda e: self.read_file(e.new), "value")
        self.widgets = [style_widget(w) for w in (self.box, self.file, self.slot, self.button)]

    def read_file(self, data: bytes | None) -> bool:
        """A chosen or dropped file: at most MAX_FILE_BYTES, UTF-8, then read as if pasted."""
        if not data:
            return False
        name = plain(self.file.filename or "the file", 80)
        if len(data) > MAX_FILE_BYTES:
            return self._say(f"{name} is {-(-len(data) // 1024):,} KiB; a config.json is a few "
                             f"KiB and at most {MAX_FILE_BYTES // 1024} KiB is read.")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return self._say(f"{name} is not UTF-8 text; a config.json is JSON text.")
        return self.read(text, from_file=True)

    def read(self, text: str, from_file: bool = False) -> bool:
        if from_file:
            self.box.value = text[:MAX_FILE_BYTES]
        if len(text.encode()) > MAX_FILE_BYTES:
            return self._say(f"The config.json is {len(text.encode()) // 1024} KiB; at most "
                             f"{MAX_FILE_BYTES // 1024} KiB is read.")
        try:
            model, report, config = read_config(text)
        except ValueError as err:
            return self._say(f"config.json not read: {plain(err, 300)} The last good model is "
                             "still shown.")
        if not self.apply(model, config, self.slot.value):
            return self._say("config.json read, but the model cannot be shown here; see the "
                             "notice above.")
        self.report.object = report_html(report, model.get("name", ""), self.slot.value)
        return True

    def _say(self, message: str) -> bool:
        self.report.object = f"<p style='color:var(--danger-text-color, #cf222e)'>{html.escape(plain(message, 400))}</p>"
        return False

    def panel(self) -> pn.Column:
        return pn.Column(pn.pane.HTML(CONFIG_HINT, sizing_mode="stretch_width", max_width=760,
                                      margin=(0, 10), styles={"font-size": "0.85em"}),
                         self.box, self.file, group_label("Show the model read from it"),
                         self.slot, self.button, self.report,  # one a row (461 px on a phone)
                         sizing_mode="stretch_width")


def read_config_text(text: str) -> dict:
    """A link's config.json (JSON text) as a dict that sim.hf_config reads; "{}" is none."""
    if text.strip() == "{}":
        return {}
    config = hf_reader.parse_config(text)  # bounded: size, nesting, digits
    hf_config.from_hf_config(config)  # names the field it cannot interpret
    return config


class CustomModelBoxes:
    """The hybrid page's custom model: the JSON box, the config.json box, and a link's copies
    of both (a mixin of HybridPage: it reads and sets ``custom``, ``custom_config``,
    ``model_a``, ``model_b``, ``notice``, ``editor`` and ``editor_message``)."""

    def apply_text(self, text: str) -> bool:
        """Make the JSON box's text the custom model; on any problem keep the last good model
        and say why in one line (by the box and in the notice). A model edited by hand has no
        config.json behind it any more: its weights are no longer counted."""
        try:
            model = read_model(text)
        except SETTINGS_ERRORS as err:
            return self._refuse(f"Custom model not applied: {plain(err, 300)} The last good "
                                "model is still shown.")
        if model != self.custom:
            self._typed = True
            try:
                self.param.update(custom=model, custom_config={})
            finally:
                self._typed = False
            if self.custom != model:  # it could not run (the base kept the last good run)
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
        """A model from elsewhere (a link, a config.json) shows its JSON in the box."""
        if self.editor is not None and not self._typed:
            self.editor.value = format_model_json(event.new)

    def apply_config(self, model: dict, config: dict, slot: str = "a") -> bool:
        """A config.json's model becomes the custom model (its weights counted from the
        file), shown as model A or B."""
        self.param.update(custom=model, custom_config=config)
        if self.custom != model or self.custom_config != config:  # the notice says why
            return False
        setattr(self, f"model_{slot}", CUSTOM)
        return True

    def apply_and_show(self, _event=None) -> None:
        if self.apply_text(self.editor.value) and CUSTOM not in (self.model_a, self.model_b):
            self.model_a = CUSTOM

    def apply_link_settings(self, updates: dict[str, Any]) -> list[str]:
        """A link's custom model and config.json arrive as JSON text: read them as the boxes
        read theirs."""
        notices = []
        for name, read in (("custom", read_model), ("custom_config", read_config_text)):
            if isinstance(updates.get(name), str):
                try:
                    updates = {**updates, name: read(updates[name])}
                except SETTINGS_ERRORS as err:
                    updates = {k: v for k, v in updates.items() if k != name}
                    notices.append(f"Ignored {self.link_keys.get(name, name)} from the link: "
                                   f"{plain(err, 300)}")
        if updates.get("custom_config") and "custom" not in updates:  # a config.json alone (the
            # zoo's pasted file): the custom model is what it reads as, its weights counted
            model = hf_config.from_hf_config(updates["custom_config"])[0]
            updates = {**updates, "custom": cache.model_to_dict(model)}
        return notices + super().apply_link_settings(updates)

    def link_note(self) -> str:
        for what, value, box in (("custom model", self.custom, "its JSON from the box"),
                                 ("config.json", self.custom_config, "the file")):
            raw = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
            size = -(-len(raw) * 4 // 3)  # base64 characters in the link
            if size > MAX_VALUE:
                return (f"The {what} takes {size:,} characters in a link; a link carries at "
                        f"most {MAX_VALUE:,}, so Share will leave it out: copy {box} instead.")
        return ""

    def custom_boxes(self) -> pn.Tabs:
        """The two tabs: the model's JSON box (Apply and show) and the config.json box."""
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
        return style_widget(pn.Tabs(("Model as JSON", editor), (
            "Hugging Face config.json", self.importer.panel()), sizing_mode="stretch_width",
            css_classes=["lab-secondary"]))
