"""What the hybrid page's engine allocates on its GPU, per model (ui/pages/hybrid.py
``HybridPage.compute`` calls ``serve``): ``Served`` at every context of CONTEXTS from sim.engines,
sim.gpus and sim.weights (every figure sim's). Its readout rows, verdict and arithmetic lines in
words, per t, are ui/pages/hybrid_serving_text.py; the engine settings ui/pages/hybrid_engine.py;
the views that show them ui/views/hybrid.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

import numpy as np

from sim import engines as sim_engines
from sim import gpus as sim_gpus
from sim import hf_config
from sim import weights as sim_weights
from ui.fmt import plain
from ui.views.hybrid import (
    CONTEXTS,
    CURVE_TOKENS,
    ENGINE_NAMES,
    MAX_EXACT,
    fmt_bytes,
)

BILLION = 10**9


@dataclass
class Served:
    """One model under the page's engine on the page's GPU, at every context of CONTEXTS.

    weights: bytes of the weights: None when a config.json's could not be counted (the
    verdict is then "cannot judge", never "fits"), 0 for a model with no config.json (written
    by hand), ``weights_text`` says why; weights_dtype: the dtype counted, in words ("as shipped
    in MXFP4 and bf16", "in fp8", "" when not counted); refusal: why the engine does not run the model ("" when it does); allocations and
    verdicts: sim.engines.Allocation and sim.gpus.gpu_verdict per context; curve: engine KV,
    state and total, and "gpu" (weights + overhead + total), at CURVE_TOKENS (float64)."""

    name: str
    model: object
    engine: str
    weights: int | None
    weights_text: str
    usable: int
    overhead: int = sim_gpus.OVERHEAD_BYTES  # the user-set overhead (activations, CUDA graphs), bytes
    refusal: str = ""
    max_context: int | None = None  # the model's own longest context (its config.json)
    allocations: list = dc_field(default_factory=list)
    verdicts: list = dc_field(default_factory=list)
    curve: dict = dc_field(default_factory=dict)
    weights_dtype: str = ""

    @property
    def weights_known(self) -> int:
        """The weights' bytes where they count toward the GPU (0 while unknown: a sum that
        needs them says so, ``weights is None``)."""
        return self.weights or 0


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
    rows = [("weights", "", f"weights, {sv.weights_text}", 0, 0,
             "" if sv.weights is None else sv.weights)]
    rows += [("engine", a.tokens, f"allocated by {ENGINE_NAMES[sv.engine]}", a.kv_bytes,
              a.state_bytes, a.total_bytes) for a in sv.allocations]
    for section, tokens, label, kv, state, total in rows:
        for key, value in zip(table, (section, slot.upper(), plain(sv.name, 200), tokens, "", "",
                                      label, kv, state, total)):
            table[key].append(value)


def model_facts(config: dict | None) -> tuple[str | None, int | None]:
    """(family, the model's own longest context) of a config.json, or (None, None). The
    reader's report names them, also for a family read part by part (deepseek_v32, glm_moe_dsa,
    nemotron-nas, …), which hf_reader.recognise refuses."""
    if not config:
        return None, None
    report = hf_config.from_hf_config(config)[1]
    return report["family"], report["max_context"]


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


def dtype_words(count: sim_weights.ParameterCount, dtype: str) -> str:
    """The dtype the weights were counted in, in words: "in fp8", or for "shipped" what the
    config.json says, largest share first ("as shipped in MXFP4 and bf16")."""
    if dtype != "shipped":
        return f"in {dtype}"
    labels = [label for label, _, _ in sorted(count.storage, key=lambda row: -row[1])]
    listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"as shipped in {listed}"


def weights_of(config: dict | None, dtype: str, why_not: str) -> tuple[int | None, str, str]:
    """(weight bytes, the figure in words, the dtype counted in words) from a config.json.
    No config.json (a model written by hand): (0, why_not, ""), the weights taken as 0 bytes.
    A config.json whose weights cannot be counted: (None, why, ""), so no verdict says "fits"
    (fuzz N1)."""
    if not config:
        return 0, why_not, ""
    try:
        count = sim_weights.parameter_count(config)
        size = sim_weights.weight_bytes(count, dtype)
    except ValueError as err:
        return None, f"not counted ({plain(err, 200)})", ""
    said = dtype_words(count, dtype)
    split = ""
    if dtype == "shipped" and len(count.storage) > 1:  # how many parameters each dtype holds
        split = ": " + ", ".join(f"{label} {params / BILLION:,.2f}B" for label, params, _ in
                                 sorted(count.storage, key=lambda row: -row[1]))
    return size, (f"{fmt_bytes(size)} {said} ({count.total / BILLION:.2f} billion parameters"
                  f"{split}; {count.active / BILLION:.2f} billion active per token)"), said


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
    weights, said, dtype = weights_of(config, s["weight_dtype"], why_not)
    options = engine_options(engine, s["kv_dtype"], s["state_dtype"], family,
                             s.get("prefix_caching", True), s.get("speculative_tokens", 0))
    overhead = s.get("overhead_bytes", sim_gpus.OVERHEAD_BYTES)
    out = Served(name, model, engine, weights, said, usable, overhead, max_context=limit,
                 weights_dtype=dtype)
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
    top = (max(points[-1].total_bytes, out.allocations[-1].total_bytes) + out.weights_known
           + overhead)
    if top > MAX_EXACT:
        raise ValueError(f"{name}: {top:,} bytes at 1M tokens under {ENGINE_NAMES[engine]}; "
                         f"accepted: at most 2^53 = {MAX_EXACT:,}")
    out.verdicts = sim_gpus.gpu_verdicts(model, CONTEXTS, n, engine, **gpu, weight_bytes=weights,
                                         overhead_bytes=overhead, max_context=limit, **options)
    kv = np.array([p.kv_bytes for p in points], dtype=float)
    state = np.array([p.state_bytes for p in points], dtype=float)
    on_gpu = (np.full(kv.shape, np.nan) if weights is None  # unknown: no line, not a guess
              else kv + state + float(weights + overhead))
    out.curve = {"kv": kv, "state": state, "total": kv + state, "gpu": on_gpu}
    return out
