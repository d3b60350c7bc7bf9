"""The hybrid page's engine settings: the engine, the GPU (a listed one or a custom size), the
weight dtype, the overhead the user sets for activations and CUDA graphs, and the engine's own
switches (prefix caching and speculative tokens, which vLLM's and SGLang's rules in sim.engines
read). Their widgets show only where they apply (the custom size with "custom size", the
switches under vLLM and SGLang; the overhead under every engine, as every budget subtracts it),
and ``engine_settings`` gathers them as ``serve`` (ui/views/hybrid.py) takes them.
"""

from __future__ import annotations

import math

import panel as pn

CUSTOM = "custom"
GiB = 2**30
SWITCHES = ("prefix_caching", "speculative_tokens")  # read by these engines' rules only:
SWITCH_ENGINES = ("vllm", "sglang")  # vLLM's state pages, SGLang's radix-cache slots


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
    return True


def show_engine_knobs(page, *_events) -> None:
    """Show each engine widget only where it applies (watching gpu and engine)."""
    for name in ("gpu_gib", *SWITCHES):
        for w in page.widgets:
            if getattr(w, "name", None) == page.label(name):
                w.visible = shown(page, name)


def engine_knobs(page) -> list:
    """The widgets of the engine settings, in the order of the page's settings bar."""
    radio = {"width": 270, "color": "primary", "variant": "outline"}
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
                  page.widget("weight_dtype", pn.widgets.RadioButtonGroup, **radio)),
    ]
