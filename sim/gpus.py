"""Does it fit on a GPU? The engine's memory budget, and from it the longest context and the most
sequences, with the arithmetic in words and numbers.

    v = gpu_verdict("jamba-v0.1", tokens=32_768, sequences=4, engine="vllm", gpu="H100-80GB",
                    weight_bytes=103_140_647_456)
    v["fits"], v["max_tokens"], v["max_sequences"], v["lines"]

GPU memory is taken as the device reports it (`nvidia-smi`'s total, in MiB; what vLLM's
`request_memory` multiplies by gpu_memory_utilization), not the vendor's rounded "80 GB":
an H100 80GB reports 81,559 MiB = 85,520,809,984 bytes. `GPU_MIB` cites each figure; a custom
size is given in GiB.

Budget, per engine:
    vllm       ⌈memory · 0.92⌉ (gpu_memory_utilization's default in 0.33.0, `request_memory`,
               `vllm/v1/worker/utils.py`) − weights − overhead. The overhead (activation peak,
               non-torch memory, CUDA graphs) is what vLLM measures at start-up
               (`determine_available_memory`); here it is the caller's estimate.
    llama.cpp, sglang, ideal
               memory − weights − overhead (SGLang's mem_fraction_static and reserved-memory
               heuristics, and its split between KV and state pools, are not modelled).
fits: the allocation for `sequences` × `tokens` (sim.engines) ≤ budget. max_tokens: the
largest context per sequence whose allocation for `sequences` sequences fits; max_sequences:
the most sequences of `tokens` that fit. Both are searched by bisection over the exact
allocation (which only grows with tokens and with sequences), ≤ 41 and ≤ 21 evaluations.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .cache import MAX_BATCH, MAX_BYTES, MAX_TOKENS, format_bytes
from .engines import ENGINE_VERSIONS, prepare
from .user_input import check_int, describe_value

GiB = 2**30
OVERHEAD_BYTES = 2 * GiB  # the default overhead beside the weights: activation peak, CUDA graphs
# Memory per GPU as the vendor states it (GB), one variant each.
GPUS: dict[str, int] = {
    "H100-80GB": 80, "H200-141GB": 141, "A100-80GB": 80, "A100-40GB": 40, "L40S-48GB": 48,
    "L4-24GB": 24, "A10-24GB": 24, "RTX-4090-24GB": 24, "RTX-5090-32GB": 32,
    "MI300X-192GB": 192,
}
MiB = 2**20
# Total memory as each device reports it (nvidia-smi "Memory-Usage" total, MiB), with where the
# figure was seen.
GPU_MIB: dict[str, tuple[int, str]] = {
    "H100-80GB": (81_559, "nvidia-smi on H100 80GB HBM3 (modal-labs/modal-client PR #2797; "
                          "NVIDIA/nccl issue #1264)"),
    "A100-80GB": (81_920, "nvidia-smi (modal-labs/modal-client PR #2797)"),
    "A100-40GB": (40_960, "nvidia-smi (modal-labs/modal-client PR #2797)"),
    "L40S-48GB": (46_068, "nvidia-smi (modal-labs/modal-client PR #2797)"),
    "L4-24GB": (23_034, "nvidia-smi (modal-labs/modal-client PR #2797)"),
    "A10-24GB": (23_028, "nvidia-smi (modal-labs/modal-client PR #2797)"),
    "RTX-5090-32GB": (32_607, "nvidia-smi on GeForce RTX 5090 (noonghunna/club-3090 issue "
                              "#1229)"),
    "H200-141GB": (143_771, "nvidia-smi, recalled, not confirmed by a cited page"),
    "RTX-4090-24GB": (24_564, "nvidia-smi, recalled, not confirmed by a cited page"),
    "MI300X-192GB": (196_288, "rocm-smi VRAM total 205,822,885,888 bytes, recalled, not "
                              "confirmed by a cited page"),
}
VLLM_UTILIZATION = (92, 100)  # gpu_memory_utilization default, as a fraction
MAX_GPU_BYTES = 2**44  # 16 TiB: far above any single device


def gpu_memory_bytes(gpu: str | None = None, memory_gib: float | None = None) -> int:
    """Bytes of one GPU: a name from GPUS (as the device reports it, GPU_MIB), or a custom size
    in GiB (> 0, at most 16,384)."""
    if (gpu is None) == (memory_gib is None):
        raise ValueError("gpu, memory_gib: give exactly one (a GPU name or a size in GiB)")
    if gpu is not None:
        if not isinstance(gpu, str) or gpu not in GPUS:
            raise ValueError(f"gpu: unknown GPU {describe_value(gpu)}; accepted: "
                             f"{', '.join(GPUS)} (or a size in GiB)")
        return GPU_MIB[gpu][0] * MiB
    if isinstance(memory_gib, bool) or not isinstance(memory_gib, (int, float)) or not (
            math.isfinite(memory_gib) and 0 < memory_gib <= MAX_GPU_BYTES / GiB):
        raise ValueError(f"memory_gib: expected a size above 0 and at most "
                         f"{MAX_GPU_BYTES // GiB:,} GiB, got {describe_value(memory_gib)}")
    size = int(memory_gib * GiB)
    if size < 1:
        raise ValueError(f"memory_gib: {memory_gib!r} GiB is less than one byte")
    return size


def engine_budget(engine: str, memory_bytes: int, weight_bytes: int,
                  overhead_bytes: int) -> tuple[int, list[str]]:
    """(bytes left for KV and state, the lines that explain it); may be negative."""
    if not isinstance(engine, str) or engine not in ENGINE_VERSIONS:
        raise ValueError(f"engine: unknown value {describe_value(engine)}; accepted: "
                         f"{', '.join(ENGINE_VERSIONS)}")
    memory = check_int("memory_bytes", memory_bytes, 1, MAX_GPU_BYTES)
    weights = check_int("weight_bytes", weight_bytes, 0, MAX_BYTES)
    overhead = check_int("overhead_bytes", overhead_bytes, 0, MAX_GPU_BYTES)
    if engine == "vllm":
        num, den = VLLM_UTILIZATION
        requested = -(-memory * num // den)
        budget = requested - weights - overhead
        return budget, [
            f"vLLM requests ⌈{num / den:.2f} × {memory:,}⌉ = {requested:,} bytes "
            f"(gpu_memory_utilization {num / den:.2f})",
            f"budget for KV and state = {requested:,} − weights {weights:,} − overhead "
            f"{overhead:,} (activations, CUDA graphs) = {_signed(budget)} bytes ({_fmt(budget)})"]
    budget = memory - weights - overhead
    return budget, [f"budget for KV and state = {memory:,} − weights {weights:,} − overhead "
                    f"{overhead:,} = {_signed(budget)} bytes ({_fmt(budget)})"]


def _fmt(n: int) -> str:
    return ("−" + format_bytes(-n)) if n < 0 else format_bytes(n)


def _signed(n: int) -> str:
    """n with thousands separators and a minus sign (−), not a hyphen, when negative."""
    return f"−{-n:,}" if n < 0 else f"{n:,}"


def _sequences(n: int) -> str:
    return f"{n:,} sequence{'' if n == 1 else 's'}"


MAX_CONTEXTS = 64  # gpu_verdicts: contexts asked at once (the hybrid page asks at eleven)


def _largest(fits: Any, low: int, high: int, guess: int | None = None) -> int | None:
    """The largest x in [low, high] with fits(x), for a monotone `fits`; None if not even low.

    With a `guess` (an estimate of the answer), the search gallops out from it, then halves
    what is left: a handful of calls of `fits` when the guess is near, where halving the whole
    range takes about log2(high - low) (41 for a context; the hybrid page's verdicts called it
    about 400 times a setting). The answer is the same either way."""
    if not fits(low):
        return None
    if guess is not None and guess > low:
        guess, step = min(guess, high), 1
        if fits(guess):  # up from the guess: low fits; the first probe that does not caps it
            low = guess
            while low < high:
                probe = min(high, low + step)
                if not fits(probe):
                    high = probe - 1
                    break
                low, step = probe, step * 2
        else:  # down from the guess: it does not fit; the first probe that fits raises low
            high = guess - 1
            while low < high:
                probe = max(low, high - step + 1)
                if fits(probe):
                    low = probe
                    break
                high, step = probe - 1, step * 2
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _guess(size_at: Any, budget: int, high: int) -> int:
    """Where a size linear in x, size_at(0) + x · (size_at(high) − size_at(0)) / high, reaches
    the budget: the starting point of `_largest`'s search (an engine's blocks and pages make the
    true size a staircase near that line); `high` when it does not grow."""
    base, top = size_at(0), size_at(high)
    if top <= base:
        return high
    return (budget - base) * high // (top - base)


def gpu_verdict(model: Any, tokens: int, sequences: int = 1, engine: str = "vllm", *,
                gpu: str | None = None, memory_gib: float | None = None,
                weight_bytes: int | None = 0, overhead_bytes: int = OVERHEAD_BYTES,
                max_context: int | None = None, **options: Any) -> dict[str, Any]:
    """Does `sequences` × `tokens` fit on `gpu` (or `memory_gib`) under `engine`?

    weight_bytes: the weights at their dtype (sim.weights.weight_bytes), None when they could
    not be counted (fits, max_tokens, max_sequences None: "cannot judge"); overhead_bytes: the
    activation peak, non-torch memory and CUDA graphs (default 2 GiB, the caller's estimate);
    max_context: the model's own longest context (sim.hf_config's report), marked when passed.
    Other options go to `sim.engines.allocate`.

    Returns {gpu, memory_bytes, engine, engine_version, budget_bytes, allocated_bytes, fits,
    max_tokens (None when not even 0 tokens fit; capped at max_context, and said so),
    max_tokens_memory (what the memory alone would hold), max_sequences (0 when none fits),
    beyond_max_context, lines}."""
    tokens = check_int("tokens", tokens, 0, MAX_TOKENS)
    return gpu_verdicts(model, [tokens], sequences, engine, gpu=gpu, memory_gib=memory_gib,
                        weight_bytes=weight_bytes, overhead_bytes=overhead_bytes,
                        max_context=max_context, **options)[0]


def gpu_verdicts(model: Any, contexts: Any, sequences: int = 1, engine: str = "vllm", *,
                 gpu: str | None = None, memory_gib: float | None = None,
                 weight_bytes: int | None = 0, overhead_bytes: int = OVERHEAD_BYTES,
                 max_context: int | None = None, **options: Any) -> list[dict[str, Any]]:
    """`gpu_verdict` at each of `contexts` (token counts), the same model, GPU and engine: the
    engine is planned and the longest context searched once, not once a context (the hybrid
    page asks at eleven contexts on every setting)."""
    memory = gpu_memory_bytes(gpu, memory_gib)
    if weight_bytes is None:  # a config.json whose weights could not be counted: never "fits"
        return _cannot_judge(model, contexts, sequences, engine, gpu, memory_gib, memory,
                             max_context, options)
    if not isinstance(contexts, (list, tuple, range, np.ndarray)) or len(contexts) > MAX_CONTEXTS:
        raise ValueError(f"contexts: expected a list of at most {MAX_CONTEXTS} token counts, got "
                         f"{describe_value(contexts)}")
    contexts = [check_int("contexts", tokens, 0, MAX_TOKENS) for tokens in contexts]
    sequences = check_int("sequences", sequences, 1, MAX_BATCH)
    if max_context is not None:
        max_context = check_int("max_context", max_context, 1, MAX_TOKENS)
    run = prepare(model, engine, **options)
    budget, head = engine_budget(engine, memory, weight_bytes, overhead_bytes)
    name = gpu if gpu is not None else f"custom {memory_gib:g} GiB"
    head.insert(0, f"GPU {name}: {memory:,} bytes ({_fmt(memory)}); engine "
                   f"{ENGINE_VERSIONS[engine]}")
    def size(t: int) -> int:
        return run(t, sequences).total_bytes

    max_tokens = _largest(lambda t: size(t) <= budget, 0, MAX_TOKENS,
                          _guess(size, budget, MAX_TOKENS))
    return [_verdict(run, tokens, sequences, engine, name, memory, budget, list(head), max_tokens,
                     max_context) for tokens in contexts]


def _cannot_judge(model: Any, contexts: Any, sequences: int, engine: str, gpu: str | None,
                  memory_gib: float | None, memory: int, max_context: int | None,
                  options: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts when the weights are unknown (weight_bytes None): fits, max_tokens and
    max_sequences None, and a line that says why; the allocation is still shown."""
    if not isinstance(contexts, (list, tuple, range, np.ndarray)) or len(contexts) > MAX_CONTEXTS:
        raise ValueError(f"contexts: expected a list of at most {MAX_CONTEXTS} token counts, got "
                         f"{describe_value(contexts)}")
    contexts = [check_int("contexts", tokens, 0, MAX_TOKENS) for tokens in contexts]
    sequences = check_int("sequences", sequences, 1, MAX_BATCH)
    run = prepare(model, engine, **options)
    name = gpu if gpu is not None else f"custom {memory_gib:g} GiB"
    out = []
    for tokens in contexts:
        allocated = run(tokens, sequences).total_bytes
        out.append({"gpu": name, "memory_bytes": memory, "engine": engine,
                    "engine_version": ENGINE_VERSIONS[engine], "budget_bytes": None,
                    "allocated_bytes": allocated, "fits": None, "max_tokens": None,
                    "max_tokens_memory": None, "max_sequences": None,
                    "beyond_max_context": max_context is not None and tokens > max_context,
                    "lines": [f"GPU {name}: {memory:,} bytes ({_fmt(memory)}); engine "
                              f"{ENGINE_VERSIONS[engine]}",
                              f"{_sequences(sequences)} × {tokens:,} tokens allocate "
                              f"{allocated:,} bytes ({_fmt(allocated)})",
                              "cannot judge: the weights were not counted, so whether it fits "
                              "is unknown (never taken as 0 bytes)"]})
    return out


def _verdict(run: Any, tokens: int, sequences: int, engine: str, name: str, memory: int,
             budget: int, lines: list[str], max_tokens: int | None,
             max_context: int | None) -> dict[str, Any]:
    allocated = run(tokens, sequences).total_bytes
    fits = allocated <= budget
    lines.append(f"{_sequences(sequences)} × {tokens:,} tokens "
                 f"allocate{'s' if sequences == 1 else ''} {allocated:,} bytes ({_fmt(allocated)}) "
                 f"{'≤' if fits else '>'} {_signed(budget)}: {'fits' if fits else 'does not fit'}")
    if engine == "vllm" and not fits:
        lines.append("vLLM refuses to start when one request at max_model_len does not fit "
                     "(get_kv_cache_configs)" + (": lower --max-model-len to the longest "
                                                 "context below" if max_tokens else ""))
    if max_tokens is None and budget < 0:
        lines.append("the weights and the overhead alone pass the memory: nothing fits")
    elif max_tokens is None:
        lines.append(f"even 0 tokens do not fit for {_sequences(sequences)}: the fixed state "
                     f"alone takes {run(0, sequences).total_bytes:,} bytes")
    elif max_context is not None and max_tokens > max_context:
        lines.append(f"longest context for {_sequences(sequences)}: {max_context:,} tokens, the "
                     f"model's own maximum (the memory would hold "
                     f"{'at least ' if max_tokens == MAX_TOKENS else ''}{max_tokens:,})")
    else:
        at = run(max_tokens, sequences).total_bytes
        lines.append(f"longest context for {_sequences(sequences)}: {max_tokens:,} tokens "
                     f"(allocates {at:,} bytes; one more token would pass the budget)"
                     if max_tokens < MAX_TOKENS else
                     f"longest context for {_sequences(sequences)}: at least {MAX_TOKENS:,} tokens")
    one = run(tokens, 1).total_bytes  # n sequences hold about n times one's
    most = _largest(lambda n: run(tokens, n).total_bytes <= budget, 1, MAX_BATCH,
                    budget // one if one > 0 else None) or 0
    lines.append(f"most sequences at {tokens:,} tokens: {'at least ' if most == MAX_BATCH else ''}"
                 f"{most:,}"
                 + (f" (allocate {run(tokens, most).total_bytes:,} bytes)" if most else ""))
    beyond = max_context is not None and tokens > max_context
    if max_context is not None:
        lines.append(f"the model's own maximum context is {max_context:,} tokens"
                     + (f": {tokens:,} is beyond it" if beyond else ""))
    return {"gpu": name, "memory_bytes": memory, "engine": engine,
            "engine_version": ENGINE_VERSIONS[engine], "budget_bytes": budget,
            "allocated_bytes": allocated, "fits": fits,
            "max_tokens": max_tokens if max_tokens is None or max_context is None
            else min(max_tokens, max_context), "max_tokens_memory": max_tokens,
            "max_sequences": most, "beyond_max_context": beyond, "lines": lines}


def verdict_lines(verdict: dict[str, Any]) -> list[str]:
    """The explanation lines of a `gpu_verdict` result, for a page to show."""
    if not isinstance(verdict, dict) or not isinstance(verdict.get("lines"), list):
        raise ValueError(f"verdict: expected a gpu_verdict result, got {describe_value(verdict)}")
    return list(verdict["lines"])
