"""The hybrid page's words for what its engine allocates (``Served``, ui/pages/hybrid_serving.py),
per t: the readout's rows (how the engine's KV cache and state differ from the exact figures and
why), the verdict on the GPU and the arithmetic lines sim wrote.
"""

from __future__ import annotations

from sim import cache as sim_cache
from ui.fmt import count, text
from ui.pages.hybrid_serving import Served
from ui.views.hybrid import CONTEXTS, ENGINE_NAMES, SLOT_COLOURS, context_label, fmt_bytes


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
        if sv.weights is None:
            rows["on_gpu"].append(f"not judged: the weights were not counted, besides which "
                                  f"{fmt_bytes(sv.overhead)} of overhead, KV cache and state "
                                  f"take {fmt_bytes(sv.overhead + a.total_bytes)}")
            continue
        total = sv.weights + sv.overhead + a.total_bytes
        rows["on_gpu"].append(f"<b>{fmt_bytes(total)}</b> ({percent(total, sv.usable)} of the "
                              f"{fmt_bytes(sv.usable)} it may use): weights, "
                              f"{fmt_bytes(sv.overhead)} of overhead, KV cache and state")
    return rows


def engine_row_names(engine: str, weight_dtype: str) -> dict[str, str]:
    name = ENGINE_NAMES[engine]
    weights = "weights as shipped" if weight_dtype == "shipped" else f"weights in {weight_dtype}"
    return {"weights": weights, "kv_engine": f"KV cache, {name}",
            "state_engine": f"fixed state, {name}", "on_gpu": "on the GPU in all"}


def longest_text(v: dict, limit: int | None) -> str:
    """The longest context in words; capped at the model's own maximum, it says so and what
    the memory alone would hold (sim.gpus: max_tokens is capped, max_tokens_memory is not)."""
    memory = v.get("max_tokens_memory", v["max_tokens"])
    held = ("any context (its memory stops growing)" if memory >= sim_cache.MAX_TOKENS
            else f"{count(memory)} tokens")
    if limit is not None and memory > limit:
        return (f"{count(limit)} tokens, the model's own maximum (the memory alone would hold "
                f"{held.removesuffix(' (its memory stops growing)')})")
    return held


def weights_said(sv: Served) -> str:
    """Which weights the verdict counted, in words."""
    if sv.weights is None:
        return "its weights not counted"
    if not sv.weights_dtype:  # a model with no config.json: the weights are taken as 0 bytes
        return "its weights taken as 0 bytes (not counted: no config.json)"
    return f"its weights {sv.weights_dtype}"


def verdict_text(sv: Served, t: int, sequences: int) -> str:
    """One sentence: does it fit, with which weights (the dtype counted); the longest context
    for these sequences (capped at the model's own maximum, and said so), and the most
    sequences at this context. "Cannot judge" when the weights could not be counted. Plain
    text (names escaped by the caller)."""
    name, tokens = sv.name, context_label(CONTEXTS[t])
    if sv.refusal:
        return f"{ENGINE_NAMES[sv.engine]} does not run {name} ({sv.refusal})."
    v = sv.verdicts[t]
    seqs = f"{sequences:,} sequence{'s' if sequences != 1 else ''}"
    limit = sv.max_context
    beyond = f" (past its own maximum of {count(limit)})" if v["beyond_max_context"] else ""
    if sv.weights is None:
        return (f"Cannot judge whether {name} fits, because its weights were not counted "
                f"({sv.weights_text.removeprefix('not counted (').removesuffix(')')}); "
                f"besides them, {seqs} of {tokens} tokens{beyond} allocate"
                f"{'s' if sequences == 1 else ''} {fmt_bytes(v['allocated_bytes'])} and the "
                f"overhead is {fmt_bytes(sv.overhead)}.")
    on_gpu = fmt_bytes(sv.weights + sv.overhead + v["allocated_bytes"])
    weights = weights_said(sv)
    if v["max_tokens"] is None:
        if v["budget_bytes"] < 0:
            return (f"{name} does not fit: its weights ({fmt_bytes(sv.weights)} "
                    f"{sv.weights_dtype or 'taken as 0 bytes'}) and "
                    f"{fmt_bytes(sv.overhead)} of overhead alone pass "
                    f"{fmt_bytes(sv.usable)}.")
        return (f"{name} does not fit: the fixed state of {seqs} alone passes what the weights "
                f"leave ({weights}).")
    longest = longest_text(v, limit)
    most = v["max_sequences"]
    most_text = (f"at {tokens} tokens at most {most:,} sequence{'s fit' if most != 1 else ' fits'}"
                 if most else f"not one sequence of {tokens} tokens fits")
    if v["fits"]:
        return (f"{name} fits: {seqs} of {tokens} tokens{beyond} take"
                f"{'s' if sequences == 1 else ''} {on_gpu}, {weights}; the longest context "
                f"for {seqs} is {longest}, and {most_text}.")
    return (f"{name} does not fit with {seqs} of {tokens} tokens{beyond}, which would take "
            f"{on_gpu}, {weights}; the longest context for {seqs} is {longest}, and "
            f"{most_text}.")


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
        lines.insert(0, f"weights: {sv.weights_text}" if sv.weights or sv.weights_dtype else
                     f"weights: {sv.weights_text}; not judged" if sv.weights is None else
                     f"weights: {sv.weights_text}; counted as 0 bytes")
        parts.append(f"<p><b>{slot.upper()}: {text(sv.name, 60)}</b></p><ul>"
                     + "".join(f"<li>{text(in_words(line), 600)}</li>" for line in lines)
                     + "</ul>")
    return '<div class="hybrid-lines">' + "".join(parts) + "</div>"
