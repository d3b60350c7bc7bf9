"""The zoo: every model the Lab knows on one static page (zoo.html), its numbers from sim.

One row per model: the hybrid page's presets (sim.cache.PRESETS, their config.json from
sim.presets.PRESET_HF_CONFIGS) and every published config.json the library reads
(tests/sim/hf_configs/published/, shipped as data in zoo/). Every figure is sim's, worked out
here at build time under the hybrid page's own settings (SETTINGS: vLLM, bf16 KV, fp32 ideal
state, weights as shipped, one sequence on an H100), and written into the table: the page is
live at first paint and loads no Python, BokehJS or Panel (assets/zoo.js sorts and filters).

A row's link opens the hybrid page with the model as A: a preset by name (model_a=<key>), a
published config as the custom model with its config.json (custom=, hf=, as
ui/urlstate.py writes them), so the page counts its weights from the file. A config longer than
a link carries (ui/urlstate.py MAX_VALUE) goes as its layers only, and the row says so.

build.py calls ``write_zoo`` once the other pages are written (before the policy and the
service worker, which then cover zoo.html and zoo/ like every other file).
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from urllib.parse import urlencode

from sitebuild import ROOT, BuildError, copy, log

PUBLISHED = ROOT / "tests" / "sim" / "hf_configs" / "published"
LENGTHS = {"32K": 2**15, "128K": 2**17, "1M": 2**20}  # tokens; each is in ui/views/hybrid.py CONTEXTS
HYBRID_T = {"32K": 5, "128K": 7, "1M": 10}  # their index t in CONTEXTS (1K · 2^t)
GPU = "H100-80GB"
# The hybrid page's settings the numbers are worked out under (its defaults, but weights as shipped).
SETTINGS = {"engine": "vllm", "kv_dtype": "bf16", "state_dtype": "fp32", "weights": "shipped",
            "batch": 1, "block": 16, "gpu": GPU, "prefix": True, "spec": 0}
# A recurrent mixer's label → the gates page's rule that updates its state (None: not there).
RULES = {"Mamba-2": "mamba2", "Mamba": "mamba1", "Gated DeltaNet": "gated_deltanet",
         "KDA": "kda", "lightning attention": "retnet"}  # Lightning: a fixed decay per head
KINDS = {"full": "Full attention", "window": "Sliding window", "mla": "MLA", "linear": "Linear / SSM"}
CLASSES = ("Full attention", "Sliding window + full", "MLA", "Hybrid: linear + attention",
           "Linear / SSM only")  # a model's kind as a whole, the "by kind" scene's order


def link_value(value) -> str:
    """A dict as the hybrid page's link carries it: ui.urlstate's own encoding (a long one
    deflated), so the page reads it back as it reads its own links."""
    import param  # noqa: PLC0415

    from ui.urlstate import encode_value  # noqa: PLC0415

    return encode_value(param.Dict(), value)


def models() -> list[dict]:
    """Every model of the zoo: {id, name, source, model, config} (config: the config.json as
    a dict, or None), presets first."""
    from sim import cache  # noqa: PLC0415
    from sim.hf_config import from_hf_config  # noqa: PLC0415
    from sim.hf_reader import parse_config  # noqa: PLC0415
    from sim.presets import PRESET_HF_CONFIGS  # noqa: PLC0415

    out = [{"id": key, "name": model.name, "source": "preset", "model": model,
            "config": PRESET_HF_CONFIGS.get(key)} for key, model in cache.PRESETS.items()]
    files = sorted(PUBLISHED.glob("*.config.json"))
    if not files:
        raise BuildError(f"zoo: no config.json in {PUBLISHED.relative_to(ROOT)}")
    for path in files:
        config = parse_config(path.read_bytes())
        out.append({"id": path.name.removesuffix(".config.json"), "source": "published",
                    "name": path.name.removesuffix(".config.json"),
                    "model": from_hf_config(config)[0], "config": config, "file": path})
    return out


def layer_parts(model) -> list[dict]:
    """The model's mixers by kind: [{kind, label, window, count, rule}], one entry per distinct
    mixer (counts summed over the layers; a mixer beside another in its layer, as DeepSeek's
    indexer keys, counts too); MLPs keep no cache and are left out."""
    parts: dict[tuple, dict] = {}
    for g in model.groups:
        m = g.mixer
        if m.kind == "mlp":
            continue
        window = getattr(m, "window", None)
        kind = ("mla" if m.kind == "mla" else "linear" if m.kind == "recurrent"
                else "window" if window else "full")
        key = (kind, m.label, window)
        part = parts.setdefault(key, {"kind": kind, "label": m.label, "window": window, "count": 0,
                                      "rule": RULES.get(m.label)})
        part["count"] += g.count
    return list(parts.values())


def model_class(kinds: set[str]) -> str:
    if "linear" in kinds:
        return CLASSES[3] if kinds - {"linear"} else CLASSES[4]
    if "mla" in kinds:
        return CLASSES[2]
    return CLASSES[1] if "window" in kinds else CLASSES[0]


def figures(model, config: dict | None) -> dict:
    """Every number of a row, from sim, under SETTINGS: state (ideal, per sequence), ideal KV
    and cache (KV + state) and vLLM's KV and total at each of LENGTHS, weights as shipped, and
    the longest context one H100 holds under vLLM (capped at the model's own maximum)."""
    from sim import cache, engines, gpus, hf_config, weights  # noqa: PLC0415

    family = limit = None
    if config:  # the reader's report names the family, also one read part by part
        report = hf_config.from_hf_config(config)[1]
        family, limit = report["family"], report["max_context"]
    s = SETTINGS
    out = {"family": family or "", "max_context": limit, "ideal": {}, "vllm": None, "refusal": "",
           "weights": None, "weights_text": "not counted: no config.json", "max_tokens": None}
    for name, tokens in LENGTHS.items():
        report = cache.cache_report(model, tokens, s["batch"], s["kv_dtype"], s["state_dtype"], s["block"])
        out["ideal"][name] = {"kv": report["kv_cache_bytes"], "total": report["total_bytes"]}
        out["state"] = report["state_bytes"]
    if config:
        count = weights.parameter_count(config)
        out["weights"] = weights.weight_bytes(count, "shipped")
        out["weights_text"] = weights.describe_shipped(weights.shipped_bytes(count, config)[1])
        out["parameters"] = count.total
    options = {"family": family, "kv_dtype": s["kv_dtype"], "prefix_caching": s["prefix"],
               "speculative_tokens": s["spec"]}
    try:
        run = engines.prepare(model, s["engine"], **options)
    except ValueError as err:  # vLLM does not run this family: said, not an error
        out["refusal"] = str(err).removeprefix("engine: ").removeprefix("model: ")
        return out
    out["vllm"] = {name: {"kv": (a := run(tokens, s["batch"])).kv_bytes, "total": a.total_bytes}
                   for name, tokens in LENGTHS.items()}
    verdict = gpus.gpu_verdict(model, LENGTHS["32K"], s["batch"], s["engine"], gpu=GPU,
                               weight_bytes=out["weights"], max_context=limit, **options)
    out["max_tokens"] = verdict["max_tokens"]
    return out


def hybrid_link(entry: dict, t: int = HYBRID_T["1M"]) -> tuple[str, str]:
    """(the hybrid page's link with the model as A, a note when the link cannot carry its
    config.json)."""
    s = SETTINGS
    pairs = {"engine": s["engine"], "weights": s["weights"], "gpu": s["gpu"], "batch": s["batch"],
             "block": s["block"], "kv_dtype": s["kv_dtype"], "state_dtype": s["state_dtype"]}
    note = ""
    if entry["source"] == "preset":
        pairs = {"model_a": entry["id"], **pairs}
    else:
        from sim import cache  # noqa: PLC0415

        pairs = {"model_a": "custom", "custom": link_value(cache.model_to_dict(entry["model"])), **pairs}
        hf = link_value(entry["config"])
        from ui.urlstate import MAX_VALUE  # noqa: PLC0415

        if len(hf) <= MAX_VALUE:
            pairs["hf"] = hf
        else:
            note = (f"Its config.json takes {len(hf):,} characters in a link (at most "
                    f"{MAX_VALUE:,}): the link carries its layers, not its weights.")
    return f"hybrid.html?{urlencode({**pairs, 't': t}, safe=',')}", note


def rows() -> list[dict]:
    """The zoo's rows, JSON-ready (zoo/zoo.json), in the order of ``models``."""
    out = []
    for entry in models():
        parts = layer_parts(entry["model"])
        kinds = {p["kind"] for p in parts}
        link, note = hybrid_link(entry)
        out.append({"id": entry["id"], "name": entry["name"], "source": entry["source"],
                    "layers": parts, "n_layers": entry["model"].n_layers,
                    "kinds": sorted(kinds), "class": model_class(kinds), "link": link,
                    "link_note": note, **figures(entry["model"], entry["config"])})
    return out


# The page ---------------------------------------------------------------------------------------

def _bytes(n: int | None, none: str = "–") -> str:
    from sim.cache import format_bytes  # noqa: PLC0415

    return none if n is None else format_bytes(n)


def _tokens(n: int | None) -> str:
    if n is None:
        return "none"
    return f"{n / 2**20:.3g}M" if n >= 2**20 else f"{n / 2**10:.4g}K" if n >= 2**10 else str(n)


def fits_text(r: dict) -> str:
    """The longest context on one H100 in words: a length, its own maximum, or why none."""
    from sim.cache import MAX_TOKENS  # noqa: PLC0415

    n = r["max_tokens"]
    if not r["vllm"]:
        return "–"
    if r["weights"] is None:
        return "cannot judge"
    if n is None:
        return "none: the weights alone are too big"
    if n >= MAX_TOKENS:
        return "no limit: a fixed state"
    return _tokens(n) + (" (its maximum)" if n == r["max_context"] else "")


def _layers_html(parts: list[dict]) -> str:
    items = []
    for p in parts:
        what = html.escape(p["label"]) + (f" {_tokens(p['window'])}" if p["window"] else "")
        if p["rule"]:
            what = (f'<a href="gates.html?rules={p["rule"]}" title="This rule on the gates page">'
                    f"{what}</a>")
        items.append(f'<li class="k-{p["kind"]}">{p["count"]} × {what}</li>')
    return f'<ul class="zoo-layers">{"".join(items)}</ul>'


def _cell(key: str, label: str, value: str, sort: float | int | None, extra: str = "") -> str:
    data = "" if sort is None else f' data-v="{sort}"'
    return f'<td data-col="{key}" data-label="{html.escape(label)}"{data}>{value}{extra}</td>'


def row_html(r: dict) -> str:
    cells = [f'<th scope="row" data-col="name" data-v="{html.escape(r["name"].lower())}">'
             f'<a href="{html.escape(r["link"])}" class="zoo-open" title="Open on the hybrid page as model A">'
             f'{html.escape(r["name"])}</a><span class="zoo-src">{r["source"]}'
             + (f'<span class="zoo-fam"> · {html.escape(r["family"])}</span>' if r["family"] else "")  # when Family is hidden
             + "</span>"
             + (f'<span class="zoo-note">{html.escape(r["link_note"])}</span>' if r["link_note"] else "")
             + "</th>",
             _cell("family", "Family", html.escape(r["family"] or "–"), None),
             _cell("class", "Kind", html.escape(r["class"]), CLASSES.index(r["class"])),
             _cell("layers", "Layers", _layers_html(r["layers"]), r["n_layers"]),
             _cell("state", "State / sequence", _bytes(r["state"]), r["state"])]
    for name in LENGTHS:
        ideal, vllm = r["ideal"][name]["kv"], r["vllm"] and r["vllm"][name]["kv"]
        cells.append(_cell(f"kv{name}", f"KV at {name}", f'<span class="ideal">{_bytes(ideal)}</span>'
                           f'<span class="vllm">vLLM {_bytes(vllm, "does not run it")}</span>', ideal,
                           "" if vllm is None else f'<data hidden value="{vllm}" data-col="vllm{name}"></data>'))
    cells.append(_cell("weights", "Weights as shipped", _bytes(r["weights"], "not counted"), r["weights"]))
    cells.append(_cell("fits", "Longest on one H100", fits_text(r), r["max_tokens"] or 0))
    bars = "".join(f'<data hidden value="{r["ideal"][n]["total"]}" data-bar="ideal{n}"></data>'
                   f'<data hidden value="{r["vllm"][n]["total"] if r["vllm"] else 0}" data-bar="vllm{n}"></data>'
                   for n in LENGTHS)
    cells.append(f'<td data-col="bar" data-label="Cache" aria-hidden="true"><span class="zoo-bar">'
                 f'<i class="ideal"></i><i class="vllm"></i></span>{bars}</td>')
    return (f'<tr id="m-{html.escape(r["id"])}" data-kinds="{" ".join(r["kinds"])}" '
            f'data-source="{r["source"]}">{"".join(cells)}</tr>')


def write_zoo(out: Path, build_id: str) -> list[str]:
    """zoo.html (the table, rendered), zoo/zoo.json (the rows) and zoo/<name>.config.json (the
    published files, byte for byte) into `out`; the zoo's card into index.html. Returns the files."""
    sys.path.insert(0, str(ROOT))
    from ui.pages import PAGES  # noqa: PLC0415
    from ui.urlstate import SHELL_KEYS  # noqa: PLC0415

    table = rows()
    for path in sorted(PUBLISHED.glob("*.config.json")):
        copy(path, out / "zoo" / path.name)
    (out / "zoo" / "zoo.json").write_text(json.dumps(table, separators=(",", ":")))
    nav = "".join(f'<a href="{p.slug}.html">{html.escape(p.short)}</a>' for p in PAGES)
    page = (ROOT / "assets" / "zoo.html").read_text()
    for key, value in {"NAV": nav + '<a href="zoo.html" aria-current="page">Zoo</a>',
                       "ROWS": "".join(row_html(r) for r in table), "COUNT": str(len(table)),
                       "BUILD": build_id,  # the shell's flags, for boot-early.js (embed, present, theme)
                       "CONFIG": json.dumps({"page": "zoo", "link": {"shell": SHELL_KEYS}})}.items():
        if "{{" + key + "}}" not in page:
            raise BuildError(f"assets/zoo.html: the placeholder {{{{{key}}}}} is missing")
        page = page.replace("{{" + key + "}}", value)
    (out / "zoo.html").write_text(page)
    index = (out / "index.html").read_text()
    card = ('<li><a class="card" href="zoo.html"><span class="num">Z</span><strong>The zoo</strong>'
            f"<span>Every model the Lab knows ({len(table)}), side by side: its layers, its cache at "
            "32K, 128K and 1M tokens, its weights and what fits one H100.</span></a></li>")
    if index.count("</ol>") != 1:
        raise BuildError("index.html: expected one list of cards (</ol>) to add the zoo's card to")
    (out / "index.html").write_text(index.replace("</ol>", card + "</ol>"))
    log(f"zoo: {len(table)} models in zoo.html, their config.json files in zoo/")
    return ["zoo.html"]
