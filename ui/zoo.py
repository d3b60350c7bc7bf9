"""The zoo's rows (zoo.html): one model's figures from sim, its row of the table as HTML, and
the contract of the zoo's Python worker. One function makes every row: at build time
(sitebuild/zoo.py, for the presets and the published config.json files) and in the browser for
a config.json the reader pastes (``pasted_row``, run by assets/zoo-worker.js in Pyodide with
numpy and this wheel only). So this module imports sim, the standard library and
ui/link_values.py, never param, Bokeh or Panel.

Every figure is sim's, under the hybrid page's own settings (SETTINGS: vLLM, bf16 KV, fp32
ideal state, weights as shipped, one sequence on an H100). A row's link opens the hybrid page
with the model as A: a preset by name (model_a=<key>), any other as the custom model with its
config.json (custom=, hf=, as ui/urlstate.py writes them), so the page counts its weights from
the file; a config longer than a link carries (MAX_VALUE) goes as its layers only, and the row
says so. A linear rule opens the gates page with that rule compared (``gates_link``).
"""

from __future__ import annotations

import html
import json
from urllib.parse import urlencode

from ui.link_values import MAX_VALUE, encode_json

LENGTHS = {"32K": 2**15, "128K": 2**17, "1M": 2**20}  # tokens; each is in ui/views/hybrid.py CONTEXTS
HYBRID_T = {"32K": 5, "128K": 7, "1M": 10}  # their index t in CONTEXTS (1K · 2^t)
GPU = "H100-80GB"
# The hybrid page's settings the numbers are worked out under (its defaults, but weights as shipped).
SETTINGS = {"engine": "vllm", "kv_dtype": "bf16", "state_dtype": "fp32", "weights": "shipped",
            "batch": 1, "block": 16, "gpu": GPU, "prefix": True, "spec": 0}
# A recurrent mixer's label → the gates page's rule that updates its state (None: not there).
RULES = {"Mamba-2": "mamba2", "Mamba": "mamba1", "Gated DeltaNet": "gated_deltanet",
         "KDA": "kda", "lightning attention": "retnet",  # Lightning: a fixed decay per head
         "Gated DeltaNet-2": "gdn2"}  # no config.json family reads it yet (a custom model may)
# The gates page compares 2 to 4 rules: each rule beside the one it extends (else linear attention).
COMPARED_WITH = {"gated_deltanet": "deltanet", "kda": "gated_deltanet", "gdn2": "gated_deltanet",
                 "mamba1": "mamba2"}
KINDS = {"full": "Full attention", "window": "Sliding window", "mla": "MLA", "linear": "Linear / SSM"}
CLASSES = ("Full attention", "Sliding window + full", "MLA", "Hybrid: linear + attention",
           "Linear / SSM only")  # a model's kind as a whole, the "by kind" scene's order
SOURCES = {"preset": "preset", "published": "published", "yours": "your config.json"}  # the row's mark
YOURS = "yours"  # the source of a row the reader pasted
# The zoo's worker (assets/zoo-worker.js): its messages, the function it calls and the most it reads.
# sitebuild/zoo.py writes this into zoo.html's config; the worker takes the names from its start.
WORKER = {"messages": {"start": "start", "ready": "ready", "row": "row", "failed": "failed"},
          "module": "ui.zoo", "function": "pasted_row_json"}


def gates_link(rule: str) -> str:
    """The gates page comparing ``rule`` with the rule it extends (the page takes 2 to 4)."""
    return f"gates.html?rules={COMPARED_WITH.get(rule, 'linear')},{rule}"


def entry_of(config: dict, key: str, name: str, source: str) -> dict:
    """A model of the zoo from its config.json (a parsed dict): {id, name, source, model, config}."""
    from sim.hf_config import from_hf_config  # noqa: PLC0415

    return {"id": key, "name": name, "source": source, "model": from_hf_config(config)[0],
            "config": config}


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
    try:  # a file read part by part may have a cache but no weights to count (the hybrid page's way)
        count = weights.parameter_count(config) if config else None
    except ValueError as err:
        count, out["weights_text"] = None, f"not counted: {' '.join(str(err).split())[:200]}"
    if count is not None:
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
    from sim import cache  # noqa: PLC0415

    s = SETTINGS
    pairs = {"engine": s["engine"], "weights": s["weights"], "gpu": s["gpu"], "batch": s["batch"],
             "block": s["block"], "kv_dtype": s["kv_dtype"], "state_dtype": s["state_dtype"]}
    note = ""
    if entry["source"] == "preset":
        pairs = {"model_a": entry["id"], **pairs}
    else:
        pairs = {"model_a": "custom", "custom": encode_json(cache.model_to_dict(entry["model"])), **pairs}
        hf = encode_json(entry["config"])
        if len(hf) <= MAX_VALUE:
            pairs["hf"] = hf
        else:
            note = (f"Its config.json takes {len(hf):,} characters in a link (at most "
                    f"{MAX_VALUE:,}): the link carries its layers, not its weights.")
    return f"hybrid.html?{urlencode({**pairs, 't': t}, safe=',')}", note


def row(entry: dict) -> dict:
    """One row of the zoo, JSON-ready: the model's layers by kind, its kind as a whole, the
    hybrid page's link and every figure (``figures``)."""
    parts = layer_parts(entry["model"])
    kinds = {p["kind"] for p in parts}
    link, note = hybrid_link(entry)
    return {"id": entry["id"], "name": entry["name"], "source": entry["source"],
            "layers": parts, "n_layers": entry["model"].n_layers,
            "kinds": sorted(kinds), "class": model_class(kinds), "link": link,
            "link_note": note, **figures(entry["model"], entry["config"])}


def pasted_row(text: str | bytes, name: str = "", key: str = "yours-1") -> dict:
    """The reader's own config.json (pasted text, or a file's bytes: one byte-order mark dropped,
    at most sim's 8 MiB, as the hybrid page reads it) as a row of the zoo: {"row", "html"}, the
    row as ``row`` makes the build's, marked as the reader's (source YOURS). ``name``: the file's
    name without .json (a paste: the model's name from the file, as the hybrid page names it).
    A file sim cannot read raises a one-line ValueError naming what is wrong."""
    from sim import hf_config, hf_reader, weights  # noqa: PLC0415

    config = hf_reader.parse_config(text)  # bounded: size, nesting, digits; a BOM dropped
    entry = entry_of(config, key, "", YOURS)
    if not name:
        report = hf_config.from_hf_config(config)[1]
        try:
            parameters = weights.parameter_count(config).total
        except ValueError:
            parameters = None
        name = hf_config.pasted_name(config, report["family"], parameters)
    entry["name"] = name
    r = row(entry)
    return {"row": r, "html": row_html(r)}


def pasted_row_json(text, name: str = "", key: str = "yours-1") -> str:
    """``pasted_row`` as JSON text for the worker: {"row", "html"}, or {"error": one line}. Bytes
    come from JavaScript as a memoryview (a file), text as str (a paste)."""
    if not isinstance(text, (str, bytes)):
        text = bytes(text)
    try:
        return json.dumps(pasted_row(text, name, key))
    except ValueError as err:
        return json.dumps({"error": " ".join(str(err).split())[:400]})


# The row as HTML ---------------------------------------------------------------------------------

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
            what = (f'<a href="{html.escape(gates_link(p["rule"]))}" title="This rule on the gates page">'
                    f"{what}</a>")
        items.append(f'<li class="k-{p["kind"]}">{p["count"]} × {what}</li>')
    return f'<ul class="zoo-layers">{"".join(items)}</ul>'


def _cell(key: str, label: str, value: str, sort: float | int | None, extra: str = "") -> str:
    data = "" if sort is None else f' data-v="{sort}"'
    return f'<td data-col="{key}" data-label="{html.escape(label)}"{data}>{value}{extra}</td>'


def row_html(r: dict) -> str:
    cells = [f'<th scope="row" data-col="name" data-v="{html.escape(r["name"].lower())}">'
             f'<a href="{html.escape(r["link"])}" class="zoo-open" title="Open on the hybrid page as model A">'
             f'{html.escape(r["name"])}</a><span class="zoo-src">{SOURCES[r["source"]]}'
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
