"""What the hybrid page's engine allocates on its GPU, per model (ui/pages/hybrid.py
``HybridPage.compute`` calls ``serve``): ``Served`` at every context of CONTEXTS from sim.engines,
sim.gpus and sim.weights (every figure sim's), and the readout's rows, the verdict and the
arithmetic lines in words, per t. The engine settings are ui/pages/hybrid_engine.py; the views
that show them ui/views/hybrid.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

import numpy as np

from sim import cache as sim_cache
from sim import engines as sim_engines
from sim import gpus as sim_gpus
from sim import hf_config, hf_reader
from sim import weights as sim_weights
from ui.fmt import count, plain, text
from ui.views.hybrid import (
    CONTEXTS,
    CURVE_TOKENS,
    ENGINE_NAMES,
    MAX_EXACT,
    SLOT_COLOURS,
    context_label,
    fmt_bytes,
)

BILLION = 10**9


@dataclass
class Served:
    """One model under the page's engine on the page's GPU, at every context of CONTEXTS.

    weights: bytes of the weights (0 when they cannot be counted, ``weights_text`` says why);
    refusal: why the engine does not run the model ("" when it does); allocations and
    verdicts: sim.engines.Allocation and sim.gpus.gpu_verdict per context; curve: engine KV,
    state and total, and "gpu" (weights + overhead + total), at CURVE_TOKENS (float64)."""

    name: str
    model: object
    engine: str
    weights: int
    weights_text: str
    usable: int
    overhead: int = sim_gpus.OVERHEAD_BYTES  # the user-set overhead (activations, CUDA graphs), bytes
    refusal: str = ""
    max_context: int | None = None  # the model's own longest context (its config.json)
    allocations: list = dc_field(default_factory=list)
    verdicts: list = dc_field(default_factory=list)
    curve: dict = dc_field(default_factory=dict)


def gpu_label(name: str) -> str:
    """ "H100-80GB" → "H100 (80 GB)", for the GPU menu."""
    model, size = name.rsplit("-", 1)
    return f"{model.replace('-', ' ')} ({size.removesuffix('GB')} GB)"


def usable_bytes(s: dict) -> int:
    """The GPU memory the engine may use: vLLM its gpu_memory_utilization (0.92), others all."""
    gpu = {"gpu": s["gpu"]} if s["gpu"] else {"memory_gib": s["gpu_gib"]}
    return sim_gpus.engine_budget(s["engine"], sim_gpus.gpu_memory_bytes(**gpu), 0, 0)[0]


def engine_table(slot: str, sv, table: dict) -> None:
    """The CSV's rows of what the engine allocates (one per context) and of the weights."""
    if sv is None:
        return
    rows = [("weights", "", f"weights, {sv.weights_text}", 0, 0, sv.weights)]
    rows += [("engine", a.tokens, f"allocated by {ENGINE_NAMES[sv.engine]}", a.kv_bytes,
              a.state_bytes, a.total_bytes) for a in sv.allocations]
    for section, tokens, label, kv, state, total in rows:
        for key, value in zip(table, (section, slot.upper(), plain(sv.name, 200), tokens, "", "",
                                      label, kv, state, total)):
            table[key].append(value)


def model_facts(config: dict | None) -> tuple[str | None, int | None]:
    """(family, the model's own longest context) of a config.json, or (None, None)."""
    if not config:
        return None, None
    _, inner = hf_reader.unwrap(config)
    return hf_reader.recognise(inner), hf_config.max_context(inner)


def engine_options(engine: str, kv_dtype: str, state_dtype: str, family: str | None,
                   prefix_caching: bool = True, speculative_tokens: int = 0) -> dict:
    """The engine's own defaults, but the page's KV dtype (and, for the ideal, its state
    dtype); vLLM and SGLang also take the page's prefix caching and speculative tokens."""
    if engine == "llama.cpp" and kv_dtype == "fp8":
        raise ValueError("KV cache dtype: llama.cpp has no fp8 KV cache (it offers f16, bf16, "
                         "f32, q8_0 and q4_0); choose bf16 or fp16")
    options = {"family": family, "kv_dtype": kv_dtype}
    if engine in ("vllm", "sglang"):
        options |= {"prefix_caching": prefix_caching, "speculative_tokens": speculative_tokens}
    return options | ({"ssm_dtype": state_dtype} if engine == "ideal" else {})


def weights_of(config: dict | None, dtype: str, why_not: str) -> tuple[int, str]:
    """(weight bytes, the figure in words) from a config.json; (0, why) when not countable."""
    if not config:
        return 0, why_not
    try:
        count = sim_weights.parameter_count(config)
    except ValueError as err:
        return 0, f"not counted ({plain(err, 200)})"
    size = sim_weights.weight_bytes(count, dtype)
    return size, (f"{fmt_bytes(size)} ({count.total / BILLION:.2f} billion parameters; "
                  f"{count.active / BILLION:.2f} billion active per token)")


def serve(name: str, model, config: dict | None, why_not: str, s: dict) -> Served:
    """What ``s["engine"]`` allocates for ``model`` on the GPU of ``s`` at every context.
    ``s``: engine, kv_dtype, state_dtype, weight_dtype, gpu (a name or None), gpu_gib, sequences,
    and optionally overhead_bytes (default 2 GiB), prefix_caching, speculative_tokens.
    An engine that does not run the model (or cannot plan it) is a refusal, not an error; a
    bad GPU size or a dtype the engine lacks raises (the page keeps its settings)."""
    engine, n = s["engine"], s["sequences"]
    gpu = {"gpu": s["gpu"]} if s["gpu"] else {"memory_gib": s["gpu_gib"]}
    memory = sim_gpus.gpu_memory_bytes(**gpu)
    usable = sim_gpus.engine_budget(engine, memory, 0, 0)[0]
    family, limit = model_facts(config)
    weights, said = weights_of(config, s["weight_dtype"], why_not)
    options = engine_options(engine, s["kv_dtype"], s["state_dtype"], family,
                             s.get("prefix_caching", True), s.get("speculative_tokens", 0))
    overhead = s.get("overhead_bytes", sim_gpus.OVERHEAD_BYTES)
    out = Served(name, model, engine, weights, said, usable, overhead, max_context=limit)
    try:
        run = sim_engines.prepare(model, engine, **options)
    except ValueError as err:
        if not str(err).startswith(("engine:", "model:")):
            raise
        out.refusal = plain(err, 300).removeprefix("engine: ").removeprefix("model: ")
        nan = np.full(CURVE_TOKENS.shape, np.nan)
        out.curve = {k: nan for k in ("kv", "state", "total", "gpu")}
        return out
    out.allocations = [run(c, n) for c in CONTEXTS]
    points = [run(int(x), n) for x in CURVE_TOKENS]
    top = max(points[-1].total_bytes, out.allocations[-1].total_bytes) + weights + overhead
    if top > MAX_EXACT:
        raise ValueError(f"{name}: {top:,} bytes at 1M tokens under {ENGINE_NAMES[engine]}; "
                         f"accepted: at most 2^53 = {MAX_EXACT:,}")
    out.verdicts = sim_gpus.gpu_verdicts(model, CONTEXTS, n, engine, **gpu, weight_bytes=weights,
                                         overhead_bytes=overhead, max_context=limit, **options)
    kv = np.array([p.kv_bytes for p in points], dtype=float)
    state = np.array([p.state_bytes for p in points], dtype=float)
    out.curve = {"kv": kv, "state": state, "total": kv + state,
                 "gpu": kv + state + float(weights + overhead)}
    return out


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.3g}%"


def kv_note(a, ideal_kv: int, windows: bool) -> str:
    """How the engine's KV cache differs from the exact figure, and why (in words)."""
    if a.engine == "ideal" or a.kv_bytes == ideal_kv:
        return "the exact figure" if a.kv_bytes else "no KV cache"
    why = {"vllm": f"whole blocks of {a.block_tokens} tokens"
                   + (", sliding windows kept with the tokens in flight" if windows else ""),
           "llama.cpp": "cells rounded up to a multiple of 256"
                        + (", sliding windows plus a batch of 512" if windows else ""),
           "sglang": "pages of one token"}[a.engine]
    if not ideal_kv:
        return why
    extra = a.kv_bytes - ideal_kv
    sign = "+" if extra > 0 else "−"
    return (f"{sign}{fmt_bytes(abs(extra))} ({sign}{percent(abs(extra), ideal_kv)}) against "
            f"the exact {fmt_bytes(ideal_kv)}, in {why}")


def state_note(a, state_layers: int) -> str:
    """The engine's state: its dtype, its copies per sequence and its padding (in words)."""
    d = a.detail
    if a.engine == "vllm":
        pad = d["page_bytes"] - d["state_page_bytes"]
        per = d["state_blocks"] * d["group_size"]
        pages = per // state_layers if state_layers else 0
        how = ("with prefix caching" if d["prefix_caching"] else "without prefix caching") + (
            f" and {d['speculative_tokens']} speculative tokens" if d["speculative_tokens"] else "")
        copies = (f"{pages} page{'s' if pages != 1 else ''} per layer and sequence {how}"
                  if state_layers and per % state_layers == 0 else
                  f"{d['state_blocks']} state blocks per sequence ({how})")
        padded = (f", each padded by {percent(pad, d['state_page_bytes'])} to fill a block"
                  if pad else "")
        dtypes = (d["conv_dtype"] if d["conv_dtype"] == d["ssm_dtype"] else
                  f"{d['conv_dtype']} convolution, {d['ssm_dtype']} recurrent")
        return f"{dtypes} state, {copies}{padded}"
    if a.engine == "sglang":
        slots = d["slots_per_request"]
        spec = (f", and {d['speculative_tokens']} speculative tokens add slots"
                if d["speculative_tokens"] else "")
        return (f"bf16 convolution, {d['ssm_dtype']} recurrent state, {slots} "
                f"slot{'s' if slots != 1 else ''} per sequence (radix cache "
                f"{'on' if d['radix_cache'] else 'off'}){spec}")
    if a.engine == "llama.cpp":
        return "fp32 (fixed in llama.cpp), one slot per sequence"
    return f"{d['state_dtype']}, one copy per sequence"


def engine_rows(t: int, served: dict, reports: dict) -> dict[str, list[str]]:
    """The readout's rows of what the engine holds at CONTEXTS[t], one cell per model shown."""
    rows: dict[str, list[str]] = {"weights": [], "kv_engine": [], "state_engine": [],
                                  "on_gpu": []}
    for slot, sv in served.items():
        if sv is None:
            continue
        rows["weights"].append(text(sv.weights_text, 300))
        if sv.refusal:
            rows["kv_engine"].append(f"not run: {text(sv.refusal, 300)}")
            rows["state_engine"].append("–")
            rows["on_gpu"].append("–")
            continue
        a, r = sv.allocations[t], reports[slot][t]
        groups = sv.model.groups
        state_layers = sum(g.count for g in groups if g.mixer.kind == "recurrent")
        windows = any(getattr(g.mixer, "window", None) for g in groups)
        rows["kv_engine"].append(f"<b>{fmt_bytes(a.kv_bytes)}</b>: "
                                 f"{kv_note(a, r['kv_cache_bytes'], windows)}"
                                 if a.kv_bytes else "no KV cache")
        rows["state_engine"].append(f"<b>{fmt_bytes(a.state_bytes)}</b>: "
                                    f"{state_note(a, state_layers)}"
                                    if a.state_bytes else "no fixed state")
        total = sv.weights + sv.overhead + a.total_bytes
        rows["on_gpu"].append(f"<b>{fmt_bytes(total)}</b> ({percent(total, sv.usable)} of the "
                              f"{fmt_bytes(sv.usable)} it may use): weights, "
                              f"{fmt_bytes(sv.overhead)} of overhead, KV cache and state")
    return rows


def engine_row_names(engine: str, weight_dtype: str) -> dict[str, str]:
    name = ENGINE_NAMES[engine]
    return {"weights": f"weights in {weight_dtype}", "kv_engine": f"KV cache, {name}",
            "state_engine": f"fixed state, {name}", "on_gpu": "on the GPU in all"}


def verdict_text(sv: Served, t: int, sequences: int) -> str:
    """One sentence: does it fit; the longest context for these sequences, and the most
    sequences at this context. Plain text (names escaped by the caller)."""
    name, tokens = sv.name, context_label(CONTEXTS[t])
    if sv.refusal:
        return f"{ENGINE_NAMES[sv.engine]} does not run {name} ({sv.refusal})."
    v = sv.verdicts[t]
    seqs = f"{sequences:,} sequence{'s' if sequences != 1 else ''}"
    on_gpu = fmt_bytes(sv.weights + sv.overhead + v["allocated_bytes"])
    if v["max_tokens"] is None:
        if v["budget_bytes"] < 0:
            return (f"{name} does not fit: its weights ({fmt_bytes(sv.weights)}) and "
                    f"{fmt_bytes(sv.overhead)} of overhead alone pass "
                    f"{fmt_bytes(sv.usable)}.")
        return f"{name} does not fit: the fixed state of {seqs} alone passes what the weights leave."
    limit = sv.max_context
    longest = ("any context (its memory stops growing)" if v["max_tokens"] >= sim_cache.MAX_TOKENS
               else f"{count(v['max_tokens'])} tokens")
    if limit is not None and v["max_tokens"] > limit:
        longest += f" (past its own maximum of {count(limit)})"
    most = v["max_sequences"]
    most_text = (f"at {tokens} tokens at most {most:,} sequence{'s fit' if most != 1 else ' fits'}"
                 if most else f"not one sequence of {tokens} tokens fits")
    beyond = f" (past its own maximum of {count(limit)})" if v["beyond_max_context"] else ""
    if v["fits"]:
        return (f"{name} fits: {seqs} of {tokens} tokens{beyond} take"
                f"{'s' if sequences == 1 else ''} {on_gpu}; the longest context for {seqs} is "
                f"{longest}, and {most_text}.")
    return (f"{name} does not fit with {seqs} of {tokens} tokens{beyond}, which would take "
            f"{on_gpu}; the longest context for {seqs} is {longest}, and {most_text}.")


def verdict_html(t: int, served: dict, sequences: int, gpu_name: str, usable: int) -> str:
    """The GPU and what the engine may use of it, then one sentence per model."""
    engine = next((ENGINE_NAMES[sv.engine] for sv in served.values() if sv is not None), "")
    lead = f"<b>On {text(gpu_name, 80)}</b>, {engine} may use {fmt_bytes(usable)}:"
    return lead + "".join(
        f' <span class="hybrid-verdict"><span style="color:{SLOT_COLOURS[slot]}">■</span> '
        f"<b>{slot.upper()}</b> {text(verdict_text(sv, t, sequences), 600)}</span>"
        for slot, sv in served.items() if sv is not None)


def in_words(line: str) -> str:
    """sim's ⌈x⌉ as "round up (x)": the UI font is cut to the pages' characters, without these."""
    return line.replace("⌈", "round up (").replace("⌉", ")")


def lines_html(t: int, served: dict) -> str:
    """The arithmetic behind the readout: the engine's allocation and the GPU verdict, line by
    line (sim.engines and sim.gpus write them)."""
    parts = []
    for slot, sv in served.items():
        if sv is None:
            continue
        lines = ([f"not run: {sv.refusal}"] if sv.refusal else
                 [*sv.allocations[t].lines, *sv.verdicts[t]["lines"]])
        lines.insert(0, f"weights: {sv.weights_text}" if sv.weights else
                     f"weights: {sv.weights_text}; counted as 0 bytes")
        parts.append(f"<p><b>{slot.upper()}: {text(sv.name, 60)}</b></p><ul>"
                     + "".join(f"<li>{text(in_words(line), 600)}</li>" for line in lines)
                     + "</ul>")
    return '<div class="hybrid-lines">' + "".join(parts) + "</div>"
