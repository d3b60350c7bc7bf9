"""Where the hybrid page's custom model comes from: its JSON box (sim.cache's model format) and a
Hugging Face config.json, pasted or dropped as a file (sim.hf_config).

A config.json becomes the custom model, shown as model A, with a report of what was read: the
fields used, the figures derived from others, the sizes taken from the reference implementation's
defaults, and the fields ignored (they do not change the cache). A field that matters but cannot
be interpreted is named in one line and the last good model stays. Everything from the file is
shown as text (escaped). A file larger than MAX_FILE_BYTES is refused before it is decoded or
parsed (Bokeh's file field has already read it into the browser's memory by then: its
JavaScript offers no size limit, and a custom one needs the ES-module shim the site does not
ship).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import panel as pn

from sim import cache, hf_config
from ui.fmt import plain
from ui.theme import style_widget

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
               "file here. Recognised: " + ", ".join(hf_config.FAMILIES) + ".")


def read_model(text: str) -> dict:
    """The JSON box's (or a link's) text as a model in sim's compact JSON form. Raises a
    one-line ValueError naming the field, the value and what is accepted."""
    model = cache.parse_model_text(text)  # bounded: size, nesting, digits, counts, sizes
    out = cache.model_to_dict(model)
    return out if out.get("source") else {k: v for k, v in out.items() if k != "source"}


def read_config(text: str) -> tuple[dict, dict]:
    """A config.json's text → (the model in sim's JSON form, sim.hf_config's report)."""
    model, report = hf_config.from_hf_config(text)
    return cache.model_to_dict(model), report


def report_html(report: dict, name: str) -> str:
    """What was read, in words; every name from the file escaped."""
    def names(items: list, limit: int = 60) -> str:
        shown = ", ".join(html.escape(plain(i, 120)) for i in items[:limit])
        return (shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")
                ) or "none"

    rows = (("Used", report["used"]), ("Derived", report["derived"]),
            ("Defaults (not in the file)", report["defaults"]),
            ("Ignored (they do not change the cache)", report["ignored"]))
    return (f"<p>Read <b>{html.escape(plain(name, 80))}</b> as "
            f"<code>{html.escape(report['family'])}</code>; it is now model A (custom).</p><ul>"
            + "".join(f"<li><b>{what}</b>: {names(items)}</li>" for what, items in rows)
            + "</ul>")


class ConfigImport:
    """The config.json box: a text area, a file field, 'Read config.json' and the report.
    ``apply(model_dict)`` makes the model the custom model A; it returns False (with a notice
    already given) when the model cannot run."""

    def __init__(self, apply: Callable[[dict], bool]):
        self.apply = apply
        self.box = pn.widgets.TextAreaInput(
            label="Hugging Face config.json", placeholder='{"model_type": "jamba", …}',
            height=160, max_length=MAX_FILE_BYTES, sizing_mode="stretch_width", min_width=280,
            max_width=760, styles={"font-family": "monospace"})
        self.file = pn.widgets.FileInput(accept=".json,application/json", margin=(0, 10))
        self.button = pn.widgets.Button(label="Read config.json", color="primary", width=200)
        self.report = pn.pane.HTML("", sizing_mode="stretch_width", max_width=760,
                                   margin=(0, 10))
        self.button.on_click(lambda _e: self.read(self.box.value))
        self.file.param.watch(lambda e: self.read_file(e.new), "value")
        self.widgets = [style_widget(self.box), style_widget(self.file), style_widget(self.button)]

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
            model, report = read_config(text)
        except ValueError as err:
            return self._say(f"config.json not read: {plain(err, 300)} The last good model is "
                             "still shown.")
        if not self.apply(model):
            return self._say("config.json read, but the model cannot be shown here; see the "
                             "notice above.")
        self.report.object = report_html(report, model.get("name", ""))
        return True

    def _say(self, message: str) -> bool:
        self.report.object = f"<p style='color:var(--danger-text-color, #cf222e)'>{html.escape(plain(message, 400))}</p>"
        return False

    def panel(self) -> pn.Column:
        return pn.Column(pn.pane.HTML(CONFIG_HINT, sizing_mode="stretch_width", max_width=760,
                                      margin=(0, 10), styles={"font-size": "0.85em"}),
                         self.box, self.file, self.button, self.report,
                         sizing_mode="stretch_width")
