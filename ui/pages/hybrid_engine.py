"""The hybrid page's engine settings: the engine, the GPU (a listed one or a custom size), the
weight dtype, the overhead the user sets for activations and CUDA graphs, and the engine's own
switches (prefix caching and speculative tokens, which vLLM's and SGLang's rules in sim.engines
read). Their widgets show only where they apply (the custom size with "custom size", the
switches under vLLM and SGLang; the overhead under every engine, as every budget subtracts it;
the KV cache dtype while a model shown has attention layers, the state dtype while one has a
fixed state: with none, changing it changed no byte, only the dtype's name in the engine's
lines), and ``engine_settings`` gathers them as ``serve`` (ui/pages/hybrid_serving.py) takes them.
"""

from __future__ import annotations

import math

import panel as pn

from sim import cache
from ui.page import SETTINGS_ERRORS

CUSTOM = "custom"
GiB = 2**30
SWITCHES = ("prefix_caching", "speculative_tokens")  # read by these engines' rules only:
SWITCH_ENGINES = ("vllm", "sglang")  # vLLM's state pages, SGLang's radix-cache slots
DTYPES = ("kv_dtype", "state_dtype")
WATCHED = ["gpu", "engine", "model_a", "model_b", "custom", "custom_b"]  # what ``shown`` reads
RADIO = {"width": 270, "color": "primary", "variant": "outline"}  # fits the presenter scale


def overhead_bytes(gib: float) -> int:
    """The overhead in bytes (GiB × 2^30, to the byte); refused by name unless 0 ≤ gib."""
    if isinstance(gib, bool) or not isinstance(gib, (int, float)) or not (
            math.isfinite(gib) and gib >= 0):
        raise ValueError(f"overhead: expected a size of 0 GiB or more, got {gib!r}")
    return round(gib * GiB)


def engine_settings(page) -> dict:
    """What ``serve`` reads: engine, dtypes, GPU (a name, or None for the custom size gpu_gib),
    sequences, overhead_bytes and the engine's switches."""
    s = {k: getattr(page, k) for k in ("engine", "kv_dtype", "state_dtype", "weight_dtype",
                                       "gpu_gib", "sequences", *SWITCHES)}
    s["gpu"] = None if page.gpu == CUSTOM else page.gpu
    s["overhead_bytes"] = overhead_bytes(page.overhead_gib)
    return s


def shown(page, name: str) -> bool:
    """Whether setting ``name``'s widget applies under the page's settings now."""
    if name == "gpu_gib":
        return page.gpu == CUSTOM
    if name in SWITCHES:
        return page.engine in SWITCH_ENGINES
    if name in DTYPES:
        return any(holds(model, name) for model in shown_models(page))
    return True


def shown_models(page) -> list:
    """The models on the page now (model B may be none); a custom model that cannot be read
    counts as one that holds both (its settings stay while the page says what is wrong)."""
    out = []
    for slot, choice in (("a", page.model_a), ("b", page.model_b)):
        try:
            out.append(page.load(choice, slot))
        except SETTINGS_ERRORS:  # (model B's "none" loads as None, never raises)
            out.append("unread")
    return [m for m in out if m is not None]


def holds(model, name: str) -> bool:
    """Whether ``model`` keeps what dtype setting ``name`` sizes: a KV cache (an attention
    layer) for kv_dtype, a fixed state (a layer with state numbers) for state_dtype."""
    if model == "unread":
        return True
    if name == "kv_dtype":
        return any(g.mixer.kind in cache.ATTENTION_KINDS for g in model.groups)
    return any(g.mixer.state_numbers() > 0 for g in model.groups)


def dtypes_by_link(page) -> dict[str, dict]:
    """``Page.applies_by_link`` for the dtypes: each applies if model A or B is a preset that
    holds what it sizes (``holds``) or the custom model (which may hold either)."""
    keys = [page.link_keys.get(n, n) for n in ("model_a", "model_b")]
    return {name: {"class": box_class(name), "keys": keys, "values": sorted(
        [key for key, model in cache.PRESETS.items() if holds(model, name)] + [CUSTOM])}
        for name in DTYPES}


def box_class(name: str) -> str:
    """The css class of dtype ``name``'s box, by which the shell finds it (``dtypes_by_link``)."""
    return f"lab-applies-{name}"


def show_engine_knobs(page, *_events) -> None:
    """Show each engine widget only where it applies (watching ``WATCHED``); a dtype's box
    (its label and its buttons) as one."""
    for name in ("gpu_gib", *SWITCHES):
        for w in page.widgets:
            if getattr(w, "name", None) == page.label(name):
                w.visible = shown(page, name)
    for name, box in getattr(page, "dtype_boxes", {}).items():
        box.visible = shown(page, name)


def engine_knobs(page) -> list:
    """The widgets of the engine settings and the dtypes, in the order of the page's settings
    bar."""
    return [
        page.widget("engine", pn.widgets.Select, width=230),
        page.widget("gpu", pn.widgets.Select, width=230),
        page.widget("gpu_gib", pn.widgets.FloatInput, width=230, step=1,
                    visible=shown(page, "gpu_gib")),
        page.widget("overhead_gib", pn.widgets.FloatInput, width=230, step=0.5),
        page.widget("prefix_caching", pn.widgets.Checkbox, width=230,
                    visible=shown(page, "prefix_caching")),
        page.widget("speculative_tokens", pn.widgets.IntInput, width=230,
                    visible=shown(page, "speculative_tokens")),
        pn.Column(pn.pane.HTML("Weight dtype", margin=(5, 10, 0, 10)),
                  # six buttons ("shipped" the widest): at 270 px they ran over the KV cache
                  # dtype's buttons beside them on a 1366 px laptop (axe: colour contrast)
                  page.widget("weight_dtype", pn.widgets.RadioButtonGroup, **{**RADIO, "width": 360})),
        *dtype_knobs(page),
    ]


def dtype_knobs(page) -> list:
    """The KV cache dtype and state dtype, each a labelled box kept as ``page.dtype_boxes``."""
    page.dtype_boxes = {name: pn.Column(pn.pane.HTML(page.label(name), margin=(5, 10, 0, 10)),
                                        page.widget(name, pn.widgets.RadioButtonGroup, **RADIO),
                                        visible=shown(page, name),
                                        css_classes=[box_class(name)])
                        for name in DTYPES}
    return list(page.dtype_boxes.values())
