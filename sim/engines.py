"""What an inference engine allocates for a model's KV cache and recurrent state, beside the
ideal bytes of `sim.cache`.

    a = allocate(model, tokens=32_768, sequences=1, engine="vllm")
    a.total_bytes, a.kv_bytes, a.state_bytes, a.block_tokens, a.lines

Engines and the rules followed (docs/engines.md; re-read the named code before relying on one):

ideal      sim.cache: KV bf16, state fp32 by default; no rounding.

vllm       vLLM v1, release 0.33.0 (vllm-project/vllm).
           Pages (`vllm/v1/kv_cache_interface.py`): attention page = B · attn1, attn1 =
           2 · kv_heads · head_dim · KV bytes (MLA: latent · KV bytes); state page (`MambaSpec`) =
           conv numbers · conv bytes + ssm numbers · ssm bytes, conv state (K − 1 + s, channels)
           with s speculative tokens (no s for Mamba-1), `MambaStateShapeCalculator`, TP = 1.
           Block size B (`Platform._align_hybrid_block_size`, `vllm/platforms/interface.py`), for
           hybrids: align = max(16, block_size 16) (at least 128 with MLA), lcm 64 for Gated
           DeltaNet under FlashInfer prefill on SM90 with prefix caching ("align" mode,
           `FLASHINFER_GDN_CHECKPOINT_ALIGNMENT`); B = align · ⌈state page / (align · attn1)⌉; every
           state page padded to B · attn1 (`mamba_page_size_padded`). Attention-only: B = 16.
           Groups (`vllm/v1/core/kv_cache_planning.py`): layers bucketed by spec; group_size =
           the smallest bucket, or the largest if under 1.5 × the smallest; each bucket cut into
           ⌈count / group_size⌉ groups; bytes per block = group_size · page.
           Blocks per request: full attention ⌈t/B⌉; sliding window w: min(⌈min(w − 1 +
           in-flight, t)/B⌉ + 1, ⌈t/B⌉) (`SlidingWindowSpec`, hybrid allocator on); state groups
           1 + s without prefix caching, 2 + s with it (+1 for Gated DeltaNet's FlashInfer
           prefill checkpoints) (`MambaSpec.max_memory_usage_bytes`, `MambaManager`).
           State dtypes (`MambaStateDtypeCalculator`, `mamba_utils.py`): conv = model dtype
           (bf16), ssm = conv dtype; KDA's recurrent state fp32; Nemotron-H's ssm the config's
           `mamba_ssm_cache_dtype`, else fp32; Qwen3.5 copies `mamba_ssm_dtype`.
           Bytes(t) = bytes per block · Σ over groups of their blocks, for each sequence.
           Not confirmed (read, not run; docs/engines.md §7): the backend vLLM picks for Qwen3-Next
           on SM90 (flashinfer_gdn=False for another), whether each Zamba2 shared-attention call
           gets its own KV layer (taken: yes), and the Kimi-Linear page (via `kimi_k3`).
           Attention layers with different KV sizes per token are refused, not unified. A
           model without attention (Mamba-2) is taken with the same state slots (inferred).

llama.cpp  commit 0c1e570 of 2026-10-01 (ggml-org/llama.cpp).
           n_ctx rounded up to a multiple of 256 (`llama_context`, `src/llama-context.cpp`);
           non-unified (an explicit -np N, the CLI's default of 1): n_ctx_seq = pad(t, 256) cells
           per sequence; the server's default (-np auto, `tools/server/server.cpp`): 4 slots,
           unified, the cells shared (pad(N · t, 256)). KV per cell per layer: K and V rows,
           F16 by default (`llama_context_default_params`; q8_0 34 bytes per 32 values, q4_0 18).
           Sliding windows (`llama_kv_cache_iswa`): pad(min(n_ctx_seq, n_swa · (unified ? slots :
           1) + n_ubatch 512), 256) cells per stream. Recurrent state (`llama_memory_recurrent`):
           F32, conv (d_conv − 1) · channels + state, one slot per sequence (max(1, n_seq_max)).
           No arch for Zamba2 or RecurrentGemma. MLA layers: taken as the latent per cell
           (kv_lora_rank + rope; not confirmed against `llama-kv-cache.cpp`).

sglang     SGLang 0.5.23 (sgl-project/sglang, `python/sglang/srt/`).
           KV: page_size 1 on CUDA (`_page_size_default`), so exactly t tokens; state dtypes
           (`configs/mamba_utils.py`): conv bf16, ssm fp32 (or the config's `mamba_ssm_dtype`);
           state slots per running request (`_calculate_mamba_ratio`): 3 with the radix cache
           (the default), 1 with --disable-radix-cache; speculative decoding adds slot bytes ·
           (requests + 1) · draft tokens (`mem_cache/kv_cache_configurator.py`).

Layer labels from `sim.cache` / `sim.hf_config` tell the mixers apart: "Mamba" is Mamba-1 (no
speculative conv rows), "Gated DeltaNet" takes the FlashInfer checkpoint rules, "KDA" keeps an
fp32 recurrent state in vLLM. Every byte figure is an exact int ≤ 2^53.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cache import (
    DTYPE_BYTES,
    MAX_BATCH,
    MAX_BYTES,
    MAX_DIM,
    MAX_TOKENS,
    Mixer,
    Model,
    get_model,
)
from .user_input import check_int, describe_value

ENGINES = ("ideal", "vllm", "llama.cpp", "sglang")
ENGINE_VERSIONS = {"ideal": "sim.cache", "vllm": "vLLM 0.33.0",
                   "llama.cpp": "llama.cpp 0c1e570 (2026-10-01)", "sglang": "SGLang 0.5.23"}
LLAMA_CPP_KV_TYPES = {"f16": (2, 1), "fp16": (2, 1), "bf16": (2, 1), "fp32": (4, 1),
                      "f32": (4, 1), "q8_0": (34, 32), "q4_0": (18, 32)}  # bytes per values
VLLM_BLOCK_SIZE = 16  # CacheConfig.DEFAULT_BLOCK_SIZE
VLLM_KERNEL_BLOCK = 16  # FlashAttention on SM90 takes multiples of 16
VLLM_MLA_ALIGN = 128
VLLM_GDN_CHECKPOINT = 64  # FLASHINFER_GDN_CHECKPOINT_ALIGNMENT, SM90
VLLM_IN_FLIGHT_TOKENS = 8192  # max_concurrent_batches 1 · max_num_batched_tokens 8192 (user-set)
LLAMA_CPP_PAD = 256
LLAMA_CPP_UBATCH = 512  # n_ubatch default
LLAMA_CPP_SERVER_SLOTS = 4
SGLANG_RADIX_SLOTS = 3  # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
MAX_SPECULATIVE = 64
# Families an engine does not run (docs/engines.md §1, vLLM's model registry; §2, llama.cpp's
# create_memory).
_NOT_SUPPORTED = {"vllm": {"minimax": "removed after vLLM 0.23.0",
                           "recurrent_gemma": "no RecurrentGemma model in vLLM"},
                  "llama.cpp": {"zamba2": "no Zamba2 arch in llama.cpp",
                                "recurrent_gemma": "no RecurrentGemma arch in llama.cpp"}}


@dataclass(frozen=True)
class Allocation:
    """Bytes an engine holds for `sequences` sequences of `tokens` tokens each.

    kv_bytes (attention and MLA pages or cells), state_bytes (recurrent state pages or slots,
    with padding), total_bytes; block_tokens (vLLM's block size B, else None); detail (the
    figures behind it, JSON-ready); lines (the arithmetic in words and numbers)."""

    engine: str
    tokens: int
    sequences: int
    kv_bytes: int
    state_bytes: int
    block_tokens: int | None
    detail: dict[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return self.kv_bytes + self.state_bytes


# ---------------------------------------------------------------------------------------------
# Arguments

def _choice(name: str, value: Any, accepted: tuple[str, ...] | dict[str, Any]) -> str:
    if not isinstance(value, str) or value not in accepted:
        raise ValueError(f"{name}: unknown value {describe_value(value)}; accepted: "
                         f"{', '.join(accepted)}")
    return value


def _or_default(value: Any, default: str) -> Any:
    """`value or default` for None and empty text; anything else (an array, whose truth is
    ambiguous) goes on to `_choice`, which refuses it by name."""
    empty = value is None or (isinstance(value, (str, int, float)) and not value)
    return default if empty else value


def _int(name: str, value: Any, low: int, high: int) -> int:
    if (hasattr(value, "item") and not isinstance(value, bool)
            and type(value).__module__ == "numpy" and getattr(value, "shape", None) == ()):
        value = value.item()
    return check_int(name, value, low, high)


def _plural(n: int, word: str) -> str:
    """"1 sequence", "4 sequences"."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _is_mamba1(m: Mixer) -> bool:
    return m.label == "Mamba"


def _is_gdn(m: Mixer) -> bool:
    return m.label == "Gated DeltaNet"


def _state_numbers(m: Mixer, speculative: int = 0) -> tuple[int, int]:
    """(conv numbers, recurrent numbers) of one state layer; conv (K − 1 + s) · channels."""
    ssm = math.prod(m.state_shape)
    if not m.conv_channels:
        return 0, ssm
    rows = m.conv_kernel - 1 + (0 if _is_mamba1(m) else speculative)
    return m.conv_channels * rows, ssm


def _supported(engine: str, family: str | None) -> None:
    reason = _NOT_SUPPORTED.get(engine, {}).get(family or "")
    if reason:
        raise ValueError(f"engine: {engine} does not run {family} ({reason})")


def _check(value: int, what: str) -> int:
    if value > MAX_BYTES:
        raise ValueError(f"tokens, sequences: {what} would take {value:,} bytes, above the "
                         f"2^53 = {MAX_BYTES:,} bytes that keep every figure exact; lower them")
    return value


# ---------------------------------------------------------------------------------------------
# vLLM

@dataclass(frozen=True)
class _VllmPlan:
    """The per-model part of vLLM's plan (independent of tokens and sequences)."""

    block_tokens: int | None
    page_bytes: int
    attn1: int | None
    state_page: int
    groups: tuple[tuple[Any, ...], ...]  # (kind, window, slots, block tokens, page) per group
    group_size: int
    buckets: dict[str, int]
    align: int | None
    conv_dtype: str
    ssm_dtype: str

    @property
    def bytes_per_block(self) -> int:
        return self.group_size * self.page_bytes

    def blocks(self, tokens: int, in_flight: int) -> tuple[int, int]:
        """(attention blocks, state blocks) of one request of `tokens` tokens."""
        attention = state = 0
        for kind, window, slots, B, _ in self.groups:
            if kind == "state":
                state += slots
            elif kind == "full":
                attention += -(-tokens // B)
            else:
                held = min(window - 1 + in_flight, tokens)
                attention += min(-(-held // B) + 1, -(-tokens // B))
        return attention, state

    def request_bytes(self, tokens: int, in_flight: int) -> tuple[int, int]:
        """(attention bytes, state bytes) of one request: group_size · Σ page · blocks, each
        group at its own page (equal pages when vLLM could unify them)."""
        attention = state = 0
        for kind, window, slots, B, page in self.groups:
            if kind == "state":
                state += slots * page
            elif kind == "full":
                attention += -(-tokens // B) * page
            else:
                held = min(window - 1 + in_flight, tokens)
                attention += min(-(-held // B) + 1, -(-tokens // B)) * page
        return self.group_size * attention, self.group_size * state


def _vllm_plan(model: Model, kv_dtype: str, conv_dtype: str, ssm_dtype: str, prefix_caching: bool,
               speculative: int, flashinfer_gdn: bool) -> _VllmPlan:
    kv_e = DTYPE_BYTES[kv_dtype]
    attention = [g for g in model.groups if g.mixer.kind in ("attention", "mla")]
    states = [g for g in model.groups if g.mixer.kind == "recurrent"]
    pages = {g.mixer.kv_bytes_per_token(kv_e) for g in attention}
    if len(pages) > 1 and states:
        raise ValueError("model: attention layers with different KV sizes per token beside "
                         "recurrent state are not planned here (vLLM would unify their pages "
                         "by an integer ratio)")
    attn1 = max(pages) if pages else None
    # Attention only, several KV sizes per token (unify_kv_cache_spec_page_size): the smaller
    # pages take block_size · (largest page / their page) tokens, so every page is equal;
    # when the ratio is not whole each keeps block 16 and its own page (not unified).
    unified = all((VLLM_BLOCK_SIZE * attn1) % p == 0 for p in pages) if pages else True

    def state_page(m: Mixer) -> int:
        conv, ssm = _state_numbers(m, speculative)
        ssm_e = 4 if m.label == "KDA" else DTYPE_BYTES[ssm_dtype]  # kda_state_dtype fp32
        return conv * DTYPE_BYTES[conv_dtype] + ssm * ssm_e

    largest = max((state_page(g.mixer) for g in states), default=0)
    align = None
    if attn1 is None:  # no attention: every state page padded to the largest
        B, page = None, largest
    elif not states:
        B, page = VLLM_BLOCK_SIZE, VLLM_BLOCK_SIZE * attn1
    else:
        align = max(VLLM_KERNEL_BLOCK, VLLM_BLOCK_SIZE)
        if any(g.mixer.kind == "mla" for g in attention):
            align = max(align, VLLM_MLA_ALIGN)
        if prefix_caching and flashinfer_gdn and any(_is_gdn(g.mixer) for g in states):
            align = math.lcm(align, VLLM_GDN_CHECKPOINT)
        B = align * -(-largest // (align * attn1))
        page = B * attn1
    buckets: dict[tuple[Any, ...], int] = {}
    for g in model.groups:
        m = g.mixer
        if m.kind == "recurrent":
            slots = 1 + speculative if not prefix_caching else 2 + speculative + int(
                flashinfer_gdn and _is_gdn(m))
            key: tuple[Any, ...] = ("state", None, slots, B, page, m.state_shape, m.conv_channels)
        elif m.kind in ("attention", "mla"):
            own = m.kv_bytes_per_token(kv_e)
            if B is None or own == attn1 or states:
                block, own_page = B, page
            elif unified:
                block, own_page = B * (attn1 // own), page
            else:
                block, own_page = VLLM_BLOCK_SIZE, VLLM_BLOCK_SIZE * own
            key = (("full", None, 0) if m.window is None else ("window", m.window, 0)) + (
                block, own_page, own)
        else:
            continue
        buckets[key] = buckets.get(key, 0) + g.count
    if not buckets:  # MLP layers only: no KV, no state, nothing per token or sequence
        return _VllmPlan(None, 0, None, 0, (), 0, {}, None, conv_dtype, ssm_dtype)
    counts = list(buckets.values())
    smallest, largest_bucket = min(counts), max(counts)
    size = largest_bucket if largest_bucket < 1.5 * smallest else smallest
    groups = []
    for key, count in buckets.items():
        groups += [key[:5]] * -(-count // size)
    names = {("state",): "state", ("full",): "full attention", ("window",): "sliding window"}
    summary: dict[str, int] = {}
    for key, count in buckets.items():
        label = names[(key[0],)] + (f" {key[1]}" if key[0] == "window" else "")
        summary[label] = summary.get(label, 0) + count
    return _VllmPlan(B, page, attn1, largest, tuple(groups), size, summary, align,
                     conv_dtype, ssm_dtype)


def _vllm(model: Model, tokens: int, sequences: int, kv_dtype: str, conv_dtype: str,
          ssm_dtype: str, prefix_caching: bool, speculative: int, flashinfer_gdn: bool,
          in_flight: int, plan: _VllmPlan | None = None) -> Allocation:
    """`plan`: `_vllm_plan` of the same arguments, made once by `prepare` (a page asks for a few
    hundred allocations of one plan a setting: the longest context, the most sequences)."""
    if plan is None:
        plan = _vllm_plan(model, kv_dtype, conv_dtype, ssm_dtype, prefix_caching, speculative,
                          flashinfer_gdn)
    attention_blocks, state_blocks = plan.blocks(tokens, in_flight)
    per_block = plan.bytes_per_block
    kv_one, state_one = plan.request_bytes(tokens, in_flight)
    kv, state = kv_one * sequences, state_one * sequences
    sizes = sorted({group[4] for group in plan.groups if group[0] != "state"})
    lines = [f"vLLM 0.33.0: KV {kv_dtype}, state conv {conv_dtype} / ssm {ssm_dtype}, prefix "
             f"caching {'on' if prefix_caching else 'off'}, {speculative} speculative tokens"]
    if not plan.groups:
        lines.append("no attention and no state layers: nothing is allocated per token or "
                     "sequence, 0 bytes")
        return Allocation("vllm", tokens, sequences, 0, 0, None,
                          {"block_tokens": None, "groups": 0, "bytes_per_block": 0,
                           "conv_dtype": conv_dtype, "ssm_dtype": ssm_dtype,
                           "prefix_caching": prefix_caching, "speculative_tokens": speculative},
                          tuple(lines))
    if plan.attn1 is not None and plan.state_page:
        padding = plan.page_bytes - plan.state_page
        lines += [
            f"attention page of one token attn1 = {plan.attn1:,} bytes; largest state page "
            f"{plan.state_page:,} bytes",
            f"block size B = {plan.align} · ⌈{plan.state_page:,} / ({plan.align} · "
            f"{plan.attn1:,})⌉ = {plan.block_tokens} tokens, so one page = {plan.block_tokens} · "
            f"{plan.attn1:,} = {plan.page_bytes:,} bytes (state page padded by {padding:,} bytes, "
            f"{100 * padding / plan.state_page:.2f}%)"]
    elif plan.attn1 is not None and len({g[3] for g in plan.groups}) > 1:
        blocks = ", ".join(f"{g[3]} tokens" for g in sorted(set(plan.groups), key=lambda g: g[3]))
        lines.append("attention layers with different KV sizes per token: pages "
                     + ("unified" if len(sizes) == 1 else "not unified (ratio not whole)")
                     + f" at {', '.join(f'{p:,}' for p in sizes)} bytes; block sizes {blocks}")
    elif plan.attn1 is not None:
        lines.append(f"block size B = {plan.block_tokens} tokens, page = {plan.page_bytes:,} bytes")
    else:
        lines.append(f"state page = {plan.page_bytes:,} bytes (no attention, no token blocks)")
    layers = ", ".join(f"{count} {name}" for name, count in plan.buckets.items())
    lines += [f"layers by spec: {layers}; group size {plan.group_size}, "
              f"{_plural(len(plan.groups), 'group')}, "
              f"bytes per block = {plan.group_size} · {plan.page_bytes:,} = {per_block:,}",
              f"blocks per request at {tokens:,} tokens: {attention_blocks:,} attention + "
              f"{state_blocks:,} state = {attention_blocks + state_blocks:,}",
              (f"allocated = {per_block:,} · {attention_blocks + state_blocks:,} · "
               f"{_plural(sequences, 'sequence')} = {kv + state:,} bytes" if len(sizes) <= 1
               else f"allocated = Σ group size · page · blocks · {_plural(sequences, 'sequence')}"
                    f" = {kv + state:,} bytes")]
    detail = {"block_tokens": plan.block_tokens, "page_bytes": plan.page_bytes,
              "attention_page_per_token_bytes": plan.attn1, "state_page_bytes": plan.state_page,
              "group_size": plan.group_size, "groups": len(plan.groups),
              "bytes_per_block": per_block, "attention_blocks": attention_blocks,
              "state_blocks": state_blocks, "conv_dtype": conv_dtype, "ssm_dtype": ssm_dtype,
              "prefix_caching": prefix_caching, "speculative_tokens": speculative}
    return Allocation("vllm", tokens, sequences, kv, state, plan.block_tokens, detail,
                      tuple(lines))


# ---------------------------------------------------------------------------------------------
# llama.cpp

def _pad(n: int, to: int = LLAMA_CPP_PAD) -> int:
    return -(-n // to) * to


def _llama_cpp(model: Model, tokens: int, sequences: int, kv_type: str, server: bool) -> Allocation:
    if server:
        if sequences > LLAMA_CPP_SERVER_SLOTS:
            raise ValueError(f"sequences: the llama.cpp server's default serves "
                             f"{LLAMA_CPP_SERVER_SLOTS} slots, got {sequences}; give -np "
                             "(server=False) for more")
        slots, unified = LLAMA_CPP_SERVER_SLOTS, True
        n_ctx = _pad(tokens * sequences)
        n_ctx_seq, streams = n_ctx, 1
    else:
        slots, unified = sequences, sequences == 1
        n_ctx_seq = _pad(tokens)
        n_ctx, streams = n_ctx_seq * sequences, sequences
    size, per = LLAMA_CPP_KV_TYPES[kv_type]
    kv = 0
    for g in model.groups:
        m = g.mixer
        if m.kind == "attention":  # ggml_row_size(type_k, n_embd_k) + (type_v, n_embd_v)
            rows = (m.kv_heads * m.head_dim, m.kv_heads * m.value_dim)
        elif m.kind == "mla":
            rows = (m.latent_dim,)
        else:
            continue
        row = sum(-(-values // per) * size for values in rows)
        cells = n_ctx_seq
        if m.window is not None:
            cells = _pad(min(n_ctx_seq, m.window * (slots if unified else 1) + LLAMA_CPP_UBATCH))
        kv += g.count * row * cells * streams
    numbers = sum(g.count * sum(_state_numbers(g.mixer)) for g in model.groups
                  if g.mixer.kind == "recurrent")
    state = numbers * 4 * max(1, slots)
    lines = [f"llama.cpp 0c1e570: KV {kv_type}, state f32 (hard-coded), "
             f"{'server default: 4 slots, unified' if server else _plural(slots, 'sequence')}",
             f"context {tokens:,} tokens per sequence → n_ctx = {n_ctx:,} cells "
             f"({'shared' if unified and slots > 1 else 'rounded up to a multiple of 256'}"
             f"{'' if unified else f', {n_ctx_seq:,} per sequence'})",
             f"KV = {kv:,} bytes; state = {numbers:,} numbers · 4 bytes · "
             f"{_plural(max(1, slots), 'slot')} = {state:,} bytes"]
    detail = {"n_ctx": n_ctx, "n_ctx_seq": n_ctx_seq, "slots": slots, "unified": unified,
              "kv_type": kv_type}
    return Allocation("llama.cpp", tokens, sequences, kv, state, None, detail, tuple(lines))


# ---------------------------------------------------------------------------------------------
# SGLang

def _sglang(model: Model, tokens: int, sequences: int, kv_dtype: str, ssm_dtype: str,
            radix_cache: bool, speculative: int) -> Allocation:
    kv = _ideal(model, tokens, sequences, kv_dtype, "fp32").kv_bytes
    slot = sum(g.count * (_state_numbers(g.mixer)[0] * 2
                          + _state_numbers(g.mixer)[1] * DTYPE_BYTES[ssm_dtype])
               for g in model.groups if g.mixer.kind == "recurrent")
    ratio = SGLANG_RADIX_SLOTS if radix_cache else 1
    spec = slot * (sequences + 1) * speculative
    state = slot * ratio * sequences + spec
    lines = [f"SGLang 0.5.23: KV {kv_dtype} with page size 1 (no block rounding), state conv bf16 "
             f"/ ssm {ssm_dtype}",
             f"KV = {kv:,} bytes for {sequences} × {tokens:,} tokens",
             f"state slot = {slot:,} bytes; {_plural(ratio, 'slot')} per request "
             f"({'radix cache' if radix_cache else 'radix cache off'}) · {sequences}"
             + (f" + speculative {slot:,} · {sequences + 1} · {speculative}" if speculative else "")
             + f" = {state:,} bytes"]
    detail = {"slot_bytes": slot, "slots_per_request": ratio, "ssm_dtype": ssm_dtype,
              "radix_cache": radix_cache, "speculative_tokens": speculative}
    return Allocation("sglang", tokens, sequences, kv, state, None, detail, tuple(lines))


# ---------------------------------------------------------------------------------------------
# The public entry

def vllm_state_dtypes(family: str | None = None, config: dict[str, Any] | None = None,
                      model_dtype: str = "bf16") -> tuple[str, str]:
    """(conv dtype, ssm dtype) vLLM 0.33.0 picks by default (`MambaStateDtypeCalculator`):
    both the model dtype, except Nemotron-H's ssm (the config's mamba_ssm_cache_dtype, else
    fp32) and Qwen3.5's (its mamba_ssm_dtype). KDA's fp32 state is applied per layer."""
    _choice("model_dtype", model_dtype, DTYPE_BYTES)
    if family is not None and not isinstance(family, str):
        raise ValueError(f"family: expected a model_type name or None, got {describe_value(family)}")
    if config is not None and not isinstance(config, dict):
        raise ValueError(f"config: expected the config.json object or None, got "
                         f"{describe_value(config)}")
    config = config or {}
    for key in ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"):
        value = config.get(key)
        if value is not None and (not isinstance(value, str) or value not in _STATE_DTYPE_NAMES):
            raise ValueError(f"{key}: unknown dtype {describe_value(value)}; accepted: "
                             f"{', '.join(_STATE_DTYPE_NAMES)}")
    if family == "nemotron_h":
        return model_dtype, _STATE_DTYPE_NAMES.get(config.get("mamba_ssm_cache_dtype"), "fp32")
    if family == "qwen3_5_text" and config.get("mamba_ssm_dtype") is not None:
        return model_dtype, _STATE_DTYPE_NAMES[config["mamba_ssm_dtype"]]
    return model_dtype, model_dtype


_STATE_DTYPE_NAMES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "fp32": "fp32",
                      "bf16": "bf16", "fp16": "fp16"}


def prepare(model: Any, engine: str = "vllm", *, family: str | None = None,
            config: dict[str, Any] | None = None, kv_dtype: str | None = None, conv_dtype: str | None = None,
            ssm_dtype: str | None = None, prefix_caching: bool = True,
            speculative_tokens: int = 0, flashinfer_gdn: bool = True,
            in_flight_tokens: int = VLLM_IN_FLIGHT_TOKENS,
            llama_cpp_server: bool = False) -> Callable[[int, int], Allocation]:
    """Check every option once and return `run(tokens, sequences) -> Allocation` for checked
    tokens (0 to MAX_TOKENS) and sequences (1 to MAX_BATCH); its byte figures are exact ints
    not yet held to 2^53 (`allocate` does that), so a search over tokens can call it freely.
    Options as in `allocate`."""
    engine = _choice("engine", engine, ENGINES)
    model = get_model(model)
    speculative = _int("speculative_tokens", speculative_tokens, 0, MAX_SPECULATIVE)
    in_flight = _int("in_flight_tokens", in_flight_tokens, 1, MAX_DIM)
    for name, flag in (("prefix_caching", prefix_caching), ("flashinfer_gdn", flashinfer_gdn),
                       ("llama_cpp_server", llama_cpp_server)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name}: expected true or false, got {describe_value(flag)}")
    if family is not None and (not isinstance(family, str) or not family.replace("_", "").replace(
            "-", "").replace(".", "").isalnum() or len(family) > 64):
        raise ValueError(f"family: expected a model_type name (letters, digits, _ - .) or None, "
                         f"got {describe_value(family)}")
    _supported(engine, family)
    for name, value, engines in (("ssm_dtype", ssm_dtype, ("ideal", "vllm", "sglang")),
                                 ("conv_dtype", conv_dtype, ("vllm",))):
        if value is not None and engine not in engines:  # N11: never accepted without effect
            own = {"llama.cpp": "state f32, hard-coded", "sglang": "conv bf16, hard-coded",
                   "ideal": "one state dtype, ssm_dtype"}[engine]
            raise ValueError(f"{name}: {engine} does not read it ({own}); give it only with "
                             f"{' or '.join(engines)}")
    if engine == "llama.cpp":
        kv_type = _choice("kv_dtype", _or_default(kv_dtype, "f16"), LLAMA_CPP_KV_TYPES)
        return lambda t, n: _llama_cpp(model, t, n, kv_type, llama_cpp_server)
    kv = _choice("kv_dtype", _or_default(kv_dtype, "bf16"), DTYPE_BYTES)
    if engine == "ideal":
        state_dtype = _choice("ssm_dtype", _or_default(ssm_dtype, "fp32"), DTYPE_BYTES)
        return lambda t, n: _ideal(model, t, n, kv, state_dtype)
    conv_default, ssm_default = vllm_state_dtypes(family, config)
    if engine == "sglang":  # ssm fp32 unless the config's own mamba_ssm_dtype says otherwise
        own = vllm_state_dtypes("qwen3_5_text", config)[1] if config and config.get(
            "mamba_ssm_dtype") else "fp32"
        ssm = _choice("ssm_dtype", _or_default(ssm_dtype, own), DTYPE_BYTES)
        return lambda t, n: _sglang(model, t, n, kv, ssm, prefix_caching, speculative)
    conv = _choice("conv_dtype", _or_default(conv_dtype, conv_default), DTYPE_BYTES)
    # ssm "auto" = the conv dtype, unless the family's config overrides it (Nemotron-H, Qwen3.5)
    ssm = _choice("ssm_dtype",
                  _or_default(ssm_dtype, ssm_default if ssm_default != conv_default else conv),
                  DTYPE_BYTES)
    plan = _vllm_plan(model, kv, conv, ssm, prefix_caching, speculative, flashinfer_gdn)  # refuses early
    return lambda t, n: _vllm(model, t, n, kv, conv, ssm, prefix_caching, speculative,
                              flashinfer_gdn, in_flight, plan)


def _ideal(model: Model, tokens: int, sequences: int, kv: str, state_dtype: str) -> Allocation:
    per_token = sum(g.count * g.mixer.kv_bytes_per_token(DTYPE_BYTES[kv]) for g in model.groups)
    k = sum(g.count * g.mixer.kv_bytes_per_token(DTYPE_BYTES[kv]) * g.mixer._held(tokens)
            for g in model.groups) * sequences
    s = sum(g.count * g.mixer.state_numbers() for g in model.groups) * DTYPE_BYTES[
        state_dtype] * sequences
    return Allocation("ideal", tokens, sequences, k, s, None,
                      {"kv_dtype": kv, "state_dtype": state_dtype, "kv_bytes_per_token": per_token},
                      (f"ideal: KV {kv} {k:,} bytes + state {state_dtype} {s:,} bytes",))


def allocate(model: Any, tokens: int, sequences: int = 1, engine: str = "vllm",
             **options: Any) -> Allocation:
    """What `engine` allocates for `sequences` sequences of `tokens` tokens (see the module
    docstring for each rule and its source).

    model: a preset id, a `sim.cache.Model`, a dict or JSON text. Options (keyword only):
    family: the config.json family (sim.hf_config), for the engines' per-family dtypes and
    support; None for a hand-written model. kv_dtype: default bf16 (vLLM "auto" = the model
    dtype; SGLang likewise), f16 for llama.cpp (also q8_0, q4_0). conv_dtype / ssm_dtype:
    vLLM's state dtypes (default `vllm_state_dtypes(family)`); for the ideal engine ssm_dtype
    is the state dtype (fp32); for SGLang ssm_dtype defaults to fp32 (conv is bf16).
    prefix_caching: vLLM's default on; SGLang's radix cache. speculative_tokens: 0 to 64.
    flashinfer_gdn: Qwen's Gated DeltaNet prefill under FlashInfer on SM90 (vLLM's default
    there). in_flight_tokens: vLLM's max_concurrent_batches · max_num_batched_tokens, for
    sliding windows. llama_cpp_server: the llama.cpp server's defaults (4 unified slots)
    instead of -np N. Raises a one-line ValueError naming the argument otherwise.
    """
    run = prepare(model, engine, **options)
    tokens = _int("tokens", tokens, 0, MAX_TOKENS)
    sequences = _int("sequences", sequences, 1, MAX_BATCH)
    result = run(tokens, sequences)
    _check(result.total_bytes, f"the {result.engine} allocation")
    return result


def allocation_report(allocation: Allocation) -> dict[str, Any]:
    """JSON-ready: engine, engine_version, tokens, sequences, allocated_bytes, kv_bytes,
    state_bytes, engine_block_tokens, detail, lines."""
    if not isinstance(allocation, Allocation):
        raise ValueError(f"allocation: expected an Allocation, got {describe_value(allocation)}")
    return {"engine": allocation.engine, "engine_version": ENGINE_VERSIONS[allocation.engine],
            "tokens": allocation.tokens, "sequences": allocation.sequences,
            "allocated_bytes": allocation.total_bytes, "allocated_kv_bytes": allocation.kv_bytes,
            "allocated_state_bytes": allocation.state_bytes,
            "engine_block_tokens": allocation.block_tokens, "detail": allocation.detail,
            "lines": list(allocation.lines)}


def compare_engines(model: Any, tokens: int, sequences: int = 1, *, family: str | None = None,
                    **options: Any) -> dict[str, Allocation | str]:
    """Every engine side by side for one model (for a page's table): engine → its Allocation,
    or the one-line reason it cannot run the model (an engine that does not run the family).
    Options are shared (see `allocate`); kv_dtype is left to each engine's default unless given."""
    out: dict[str, Allocation | str] = {}
    for engine in ENGINES:
        try:
            out[engine] = allocate(model, tokens, sequences, engine, family=family, **options)
        except ValueError as error:
            if not str(error).startswith("engine:"):
                raise
            out[engine] = str(error)
    return out
