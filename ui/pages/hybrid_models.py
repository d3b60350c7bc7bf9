"""Where the hybrid page's custom models come from: its JSON box (sim.cache's model format, model
A's), a Hugging Face config.json (ui/pages/hybrid_config.py: the box, pasted or dropped as a
file, read as model A or B) and a link's copies of both.

Models A and B each have a custom model of their own (``custom``, ``custom_b``) and the
config.json it was read from (``custom_config``, ``custom_config_b``: the weights are counted from
it, sim.weights; {} for a model written by hand). ``CustomModelBoxes`` is the page's side of the
boxes and of a link's copies of them; a model that cannot be read or run is refused in one line
and the last good model stays.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from sim import cache, hf_config
from sim.presets import PRESET_HF_CONFIGS
from ui.contract import role
from ui.fmt import plain
from ui.page import SETTINGS_ERRORS
from ui.pages.hybrid_config import ConfigImport, read_config_text
from ui.theme import style_widget
from ui.urlstate import MAX_VALUE, encode_value
from ui.views.hybrid import format_model_json

CUSTOM = "custom"
# The settings of each slot's custom model: (the model, the config.json it was read from).
SLOT_SETTINGS = {"a": ("custom", "custom_config"), "b": ("custom_b", "custom_config_b")}

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
def read_model(text: str) -> dict:
    """The JSON box's (or a link's) text as a model in sim's compact JSON form. Raises a
    one-line ValueError naming the field, the value and what is accepted."""
    model = cache.parse_model_text(text)  # bounded: size, nesting, digits, counts, sizes
    out = cache.model_to_dict(model)
    return out if out.get("source") else {k: v for k, v in out.items() if k != "source"}


def same_model(a: dict, b: dict) -> bool:
    """The same model apart from its name (a name edited in the box changes no byte)."""
    return {k: v for k, v in a.items() if k != "name"} == {k: v for k, v in b.items()
                                                            if k != "name"}


class CustomModelBoxes:
    """The hybrid page's custom models: the JSON box (model A's), the config.json box (model A's
    or B's), and a link's copies of both slots (a mixin of HybridPage: it reads and sets
    ``custom``, ``custom_config``, ``custom_b``, ``custom_config_b``, ``model_a``, ``model_b``,
    ``notice``, ``editor`` and ``editor_message``)."""

    def apply_text(self, text: str) -> bool:
        """Make the JSON box's text custom model A; on any problem keep the last good model
        and say why in one line (by the box and in the notice). A model edited by hand has no
        config.json behind it any more: its weights are no longer counted (a new name alone
        keeps them)."""
        try:
            model = read_model(text)
        except SETTINGS_ERRORS as err:
            return self._refuse(f"Custom model not applied: {plain(err, 300)} The last good "
                                "model is still shown.")
        if model != self.custom:
            config = self.custom_config if same_model(model, self.custom) else {}
            self._typed = True
            try:
                self.param.update(custom=model, custom_config=config)
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

    def config_of(self, choice: str, slot: str = "a") -> tuple[dict | None, str]:
        """The config.json behind slot A's or B's model choice (its weights are counted from
        it), or None and why not."""
        if choice in PRESET_HF_CONFIGS:
            return PRESET_HF_CONFIGS[choice], ""
        name, config_name = SLOT_SETTINGS[slot]
        config = getattr(self, config_name)
        if config:  # checked whichever model is shown, so a bad one is refused
            model, _ = hf_config.from_hf_config(config)
            if same_model(cache.model_to_dict(model), getattr(self, name)):
                return config, ""
            return None, ("not counted: the custom model was edited after its config.json was "
                          "read")
        return None, "not counted: a model written by hand has no config.json to count from"

    def apply_config(self, model: dict, config: dict, slot: str = "a") -> bool:
        """A config.json's model becomes slot A's or B's custom model (its weights counted
        from the file) and is shown there, in one recompute; the other slot keeps its own."""
        name, config_name = SLOT_SETTINGS[slot]
        self.param.update(**{name: model, config_name: config, f"model_{slot}": CUSTOM})
        return (getattr(self, name) == model and getattr(self, config_name) == config
                and getattr(self, f"model_{slot}") == CUSTOM)  # else the notice says why

    def apply_and_show(self, _event=None) -> None:
        if self.apply_text(self.editor.value) and self.model_a != CUSTOM:
            self.model_a = CUSTOM

    def apply_link_settings(self, updates: dict[str, Any]) -> list[str]:
        """A link's custom models and config.json files arrive as JSON text: read them as the
        boxes read theirs. A link from before B had a model of its own (model_b=custom without
        custom_b) showed the one custom model as B too: it still does."""
        notices = []
        if updates.get("model_b") == CUSTOM and not {"custom_b", "custom_config_b"} & set(updates):
            updates = {**updates, "custom_b": updates.get("custom", self.custom),
                       "custom_config_b": updates.get("custom_config", self.custom_config)}
        readers = {"custom": read_model, "custom_config": read_config_text,
                   "custom_b": read_model, "custom_config_b": read_config_text}
        for name, read in readers.items():
            if isinstance(updates.get(name), str):
                try:
                    updates = {**updates, name: read(updates[name])}
                except SETTINGS_ERRORS as err:
                    updates = {k: v for k, v in updates.items() if k != name}
                    notices.append(f"Ignored {self.link_keys.get(name, name)} from the link: "
                                   f"{plain(err, 300)}")
        for name, config_name in SLOT_SETTINGS.values():
            if updates.get(config_name) and name not in updates:  # a config.json alone (the
                # zoo's pasted file): the custom model is what it reads as, its weights counted
                model = hf_config.from_hf_config(updates[config_name])[0]
                updates = {**updates, name: cache.model_to_dict(model)}
        return notices + super().apply_link_settings(updates)

    def link_note(self) -> str:
        """Said above the plots when a model is too big for a link (as the link writes it)."""
        for slot, (name, config_name) in SLOT_SETTINGS.items():
            for what, setting, box in ((f"custom model {slot.upper()}", name,
                                        "its JSON from the box"),
                                       (f"config.json of model {slot.upper()}", config_name,
                                        "the file")):
                size = len(encode_value(self.param[setting], getattr(self, setting)))
                if size > MAX_VALUE:
                    return (f"The {what} takes {size:,} characters in a link; a link carries "
                            f"at most {MAX_VALUE:,} a value, so Share's link will not bring it "
                            f"back: copy {box} instead.")
        return ""

    def custom_boxes(self) -> pn.Tabs:
        """The two tabs: the model's JSON box (Apply and show) and the config.json box."""
        self.editor = pn.widgets.TextAreaInput(
            label="Custom model A (JSON)", value=format_model_json(self.custom), height=260,
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
            css_classes=[role("secondary")]))
