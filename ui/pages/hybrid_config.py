"""The hybrid page's config.json box (ui/pages/hybrid_models.py is the page's side of it): a
Hugging Face config.json, pasted or dropped as a file, read by sim.hf_config into model A's or
B's custom model.

The model is named by the file's ``_name_or_path``, else its architecture and size. The report
says what was read: the fields used, the figures derived from others, the sizes taken from the
reference implementation's defaults, the parts left out and the fields ignored (they do not
change the cache), and how the weights were counted. A field that matters but cannot be
interpreted is named in one line, the last report is cleared and the last good model stays.
Everything from the file is shown as text (escaped). Pasted and dropped text are read alike
(one byte-order mark dropped; at most MAX_FILE_BYTES, sim's own limit, which NVIDIA's largest
published files need); a text past it is refused with the limit named, before it is parsed
(Bokeh's file field has already read it into the browser's memory by then: its JavaScript
offers no size limit, and a custom one needs the ES-module shim the site does not ship).
"""

from __future__ import annotations

import html
from collections.abc import Callable

import panel as pn

from sim import cache, hf_config, hf_reader
from sim import weights as sim_weights
from ui.fmt import plain
from ui.page import SETTINGS_ERRORS
from ui.theme import group_label, style_widget

# sim's own limit (8 MiB): published files are 1-10 KB, NVIDIA's quantised re-releases list every
# layer in quantization_config (88.6 kB for Qwen3.6-27B-NVFP4, up to 3.1 MB)
MAX_FILE_BYTES = hf_reader.MAX_CONFIG_BYTES

CONFIG_HINT = ("Paste a model's <code>config.json</code> from the Hugging Face Hub (up to 8 MiB), "
               "or drop the file here, then read it as model A or model B: each keeps its own. "
               "Families with a reader of their own: " + ", ".join(hf_reader.FAMILIES)
               + "; any other is read part by part (attention, sliding windows, MLA, experts, "
               "linear and SSM layers), and a part it does not know is named.")


def size_text(n_bytes: int) -> str:
    """1,536 → "2 KiB", 9,437,184 → "9 MiB" (rounded up: a size past a limit never reads as
    the limit)."""
    if n_bytes >= 2**20:
        return f"{-(-n_bytes * 10 // 2**20) / 10:g} MiB"
    return f"{-(-n_bytes // 1024):,} KiB"


LIMIT_TEXT = size_text(MAX_FILE_BYTES)


def read_config(text: str) -> tuple[dict, dict, dict]:
    """A config.json's text → (the model in sim's JSON form, sim.hf_config's report, the
    file as a dict: its weights are counted from it). The model is named by the file's
    ``_name_or_path``, else its architecture and size in parameters (sim.hf_config.model_name);
    the report adds ``weights``: the parameter count, or why it could not be made."""
    config = hf_reader.parse_config(text)
    model, report = hf_config.from_hf_config(config)
    out = cache.model_to_dict(model)
    try:
        count = sim_weights.parameter_count(config)
        report = {**report, "weights": count}
    except ValueError as err:
        count, report = None, {**report, "weights": plain(err, 200)}
    parameters = None if count is None else count.total
    name = hf_config.pasted_name(config, report["family"], parameters)
    return {**out, "name": name}, report, config


def report_html(report: dict, name: str, slot: str = "a") -> str:
    """What was read, in words; every name from the file escaped."""
    def names(items: list, limit: int = 60) -> str:
        shown = ", ".join(html.escape(plain(i, 120)) for i in items[:limit])
        return (shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")
                ) or "none"

    rows = (("Used", report["used"]), ("Derived", report["derived"]),
            ("Defaults (not in the file)", report["defaults"]),
            ("Left out (parts not interpreted)", report.get("left_out", [])),
            ("Ignored (they do not change the cache)", report["ignored"]))
    count = report.get("weights")
    if isinstance(count, sim_weights.ParameterCount):
        weights = (f"its weights counted from the file: {count.total / 1e9:,.2f} billion "
                   f"parameters ({html.escape(plain(count.shipped_dtype, 200))})")
    else:
        weights = (f"its weights could not be counted ({html.escape(plain(count or '', 200))}), "
                   "so the GPU verdict cannot judge whether it fits")
    how = " (read part by part)" if report.get("read_by") == "parts" else ""
    return (f"<p>Read <b>{html.escape(plain(name, 80))}</b> as "
            f"<code>{html.escape(report['family'])}</code>{how}; it is now model {slot.upper()} "
            f"(custom model {slot.upper()}), {weights}.</p><ul>"
            + "".join(f"<li><b>{what}</b>: {names(items)}</li>" for what, items in rows
                      if items or what != "Left out (parts not interpreted)")
            + "</ul>")


class ConfigImport:
    """The config.json box: a text area, a file field, model A or B, 'Read config.json' and
    the report. ``apply(model_dict, config, slot)`` makes the model slot A's or B's custom model
    and shows it there; it returns False (with a notice already given) when the model cannot
    run."""

    def __init__(self, apply: Callable[[dict, dict, str], bool]):
        self.apply = apply
        # One character past the limit: a longer paste is cut there by the browser, so the
        # size check sees that it was longer (cut at the limit, it read as broken JSON: N8).
        self.box = pn.widgets.TextAreaInput(
            label="Hugging Face config.json", placeholder='{"model_type": "jamba", …}',
            height=160, max_length=MAX_FILE_BYTES + 1, sizing_mode="stretch_width",
            min_width=280, max_width=760, styles={"font-family": "monospace"})
        self.file = pn.widgets.FileInput(label="Or read a config.json file", margin=(0, 10),
                                         accept=".json,application/json")
        self.slot = pn.widgets.RadioButtonGroup(options={"as model A": "a", "as model B": "b"},
                                                value="a", color="primary", variant="outline",
                                                width=220)
        self.button = pn.widgets.Button(label="Read config.json", color="primary", width=200)
        self.report = pn.pane.HTML("", sizing_mode="stretch_width", max_width=760, margin=(0, 10))
        self.button.on_click(lambda _e: self.read(self.box.value))
        # the name and the bytes of a file arrive together: one read, named by its own file
        self.file.param.watch(lambda *_e: self.read_file(self.file.value), ["value", "filename"])
        self.widgets = [style_widget(w) for w in (self.box, self.file, self.slot, self.button)]

    def read_file(self, data: bytes | None) -> bool:
        """A chosen or dropped file: at most MAX_FILE_BYTES, UTF-8, then read as if pasted."""
        if data is None:
            return False
        name = plain(self.file.filename or "the file", 80)
        if len(data) > MAX_FILE_BYTES:
            return self._say(self._too_big(name, len(data)))
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return self._say(f"Not read: {name} is not UTF-8 text; a config.json is JSON text.")
        self.box.value = text
        return self.read(text, what=name)

    def read(self, text: str | None, what: str = "the pasted text") -> bool:
        """Read a config.json's text into the slot chosen. Whatever happens, the last report
        goes: a failure says why in its place and the last good models stay."""
        self.report.object = ""
        text = text or ""
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_FILE_BYTES:
            cut = len(text) == MAX_FILE_BYTES + 1 and what == "the pasted text"
            return self._say(self._too_big(what, size, cut))
        try:
            model, report, config = read_config(text)
        except SETTINGS_ERRORS as err:
            return self._say(f"config.json not read: {plain(err, 300)} The last good model is "
                             "still shown.")
        slot = self.slot.value
        try:
            applied = self.apply(model, config, slot)
        except Exception as err:  # noqa: BLE001 — a bug must not leave the last report up
            return self._say(f"config.json read, but model {slot.upper()} could not be shown "
                             f"({type(err).__name__}: {plain(err, 200)}).")
        if not applied:
            return self._say(f"config.json read, but model {slot.upper()} cannot be shown here; "
                             "see the notice above. The last good model is still shown.")
        self.report.object = report_html(report, model.get("name", ""), slot)
        return True

    @staticmethod
    def _too_big(what: str, size: int, cut: bool = False) -> str:
        """The size refusal, pasted or dropped alike; ``cut``: the box cut a longer paste."""
        shown = f"more than {LIMIT_TEXT}" if cut else size_text(size)
        return (f"Not read: {what} is {shown}; a config.json of at most {LIMIT_TEXT} is read "
                "(published files are a few KiB; NVIDIA's quantised ones, which list every "
                "layer, up to 3.1 MB).")

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
