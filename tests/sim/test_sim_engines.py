"""What vLLM, llama.cpp and SGLang allocate (docs/engines.md), worked by hand from the rules;
the GPU verdict's budget and searches."""

from __future__ import annotations

import numpy as np
import pytest

from sim.cache import cache_report
from sim.engines import allocate, allocation_report, compare_engines, vllm_state_dtypes
from sim.gpus import GPUS, engine_budget, gpu_memory_bytes, gpu_verdict, verdict_lines

GiB = 2**30


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("tokens", [32_768, 262_144])
def test_vllm_jamba_by_hand(tokens: int) -> None:
    # attn1 = 8 KV heads · (128 + 128) · 2 bytes; Mamba-1 state page in bf16 (conv = model
    # dtype, ssm = conv): conv (4 − 1) × 8192 + ssm 8192 × 16 numbers
    attn1 = 8 * 256 * 2
    state_page = (3 * 8192 + 8192 * 16) * 2
    assert (attn1, state_page) == (4096, 311_296)
    B = 16 * _ceil(state_page, 16 * attn1)  # align 16 (Mamba-1 has no checkpoint alignment)
    assert B == 80
    page = B * attn1  # the state page padded to 327,680 bytes
    # 4 attention layers, 28 Mamba: group size 4 (28 ≥ 1.5 · 4), 1 + 7 groups
    per_block = 4 * page
    attention_blocks = _ceil(tokens, B)
    for prefix_caching, slots in ((True, 2), (False, 1)):
        expected = per_block * (attention_blocks + 7 * slots)
        a = allocate("jamba-v0.1", tokens, 1, "vllm", prefix_caching=prefix_caching)
        assert a.block_tokens == 80 and a.total_bytes == expected
        assert a.kv_bytes == per_block * attention_blocks
    if tokens == 32_768:
        assert allocate("jamba-v0.1", tokens).total_bytes == 555_745_280
        assert allocate("jamba-v0.1", tokens, prefix_caching=False).total_bytes == 546_570_240


@pytest.mark.parametrize("tokens", [32_768, 262_144])
def test_vllm_qwen3_next_by_hand(tokens: int) -> None:
    attn1 = 2 * (256 + 256) * 2  # 2 KV heads, bf16
    state_page = (3 * 8192 + 32 * 128 * 128) * 2  # conv (K − 1) × 8192 + (32, 128, 128), bf16
    assert (attn1, state_page) == (2048, 1_097_728)
    # prefix caching on: align lcm(16, 64) = 64 (FlashInfer GDN checkpoints), 2 + 1 slots;
    # off: align 16, 1 slot. 12 attention, 36 GDN layers: group size 12, 1 + 3 groups.
    for prefix_caching, align, slots in ((True, 64, 3), (False, 16, 1)):
        B = align * _ceil(state_page, align * attn1)
        assert B == (576 if prefix_caching else 544)
        expected = 12 * B * attn1 * (_ceil(tokens, B) + 3 * slots)
        a = allocate("qwen3-next-80b-a3b", tokens, 1, "vllm", prefix_caching=prefix_caching)
        assert (a.block_tokens, a.total_bytes) == (B, expected)
    if tokens == 32_768:
        assert allocate("qwen3-next-80b-a3b", tokens).total_bytes == 934_281_216
        assert allocate("qwen3-next-80b-a3b", tokens,
                        prefix_caching=False).total_bytes == 855_638_016
    # two sequences take twice one
    assert allocate("qwen3-next-80b-a3b", tokens, 2).total_bytes == 2 * allocate(
        "qwen3-next-80b-a3b", tokens).total_bytes


def test_vllm_speculative_tokens_add_conv_rows_and_slots() -> None:
    s = 2
    state_page = ((3 + s) * 8192 + 32 * 128 * 128) * 2
    B = 64 * _ceil(state_page, 64 * 2048)
    a = allocate("qwen3-next-80b-a3b", 1000, 1, "vllm", speculative_tokens=s)
    assert a.block_tokens == B == 576
    assert a.total_bytes == 12 * B * 2048 * (_ceil(1000, B) + 3 * (2 + s + 1))
    # Mamba-1 takes no speculative conv rows: Jamba's block stays 80, slots grow to 2 + s
    j = allocate("jamba-v0.1", 1000, 1, "vllm", speculative_tokens=s)
    assert j.block_tokens == 80 and j.total_bytes == 4 * 80 * 4096 * (_ceil(1000, 80) + 7 * 4)


def test_vllm_state_dtypes_per_family() -> None:
    assert vllm_state_dtypes("jamba") == ("bf16", "bf16")
    assert vllm_state_dtypes("nemotron_h") == ("bf16", "fp32")
    assert vllm_state_dtypes("nemotron_h", {"mamba_ssm_cache_dtype": "bfloat16"}) == ("bf16", "bf16")
    assert vllm_state_dtypes("qwen3_5_text", {"mamba_ssm_dtype": "float32"}) == ("bf16", "fp32")
    nemo = allocate("nemotron-h-8b", 0, 1, "vllm", family="nemotron_h", prefix_caching=False)
    conv, ssm = 3 * 10240, 128 * 64 * 128
    attn1 = 8 * 256 * 2
    B = 16 * _ceil(conv * 2 + ssm * 4, 16 * attn1)
    assert nemo.detail["ssm_dtype"] == "fp32" and nemo.block_tokens == B
    # 4 attention, 24 Mamba: group size 4, 6 state groups of one slot, no tokens yet
    assert nemo.total_bytes == 4 * B * attn1 * 6


def test_vllm_sliding_window_blocks() -> None:
    model = {"name": "w", "layers": [
        {"kind": "attention", "kv_heads": 8, "head_dim": 64, "window": 128, "count": 2},
        {"kind": "attention", "kv_heads": 8, "head_dim": 64, "count": 2}]}
    attn1 = 8 * 128 * 2
    for tokens in (100, 20_000):
        held = min(128 - 1 + 8192, tokens)
        window_blocks = min(_ceil(held, 16) + 1, _ceil(tokens, 16))
        expected = 2 * 16 * attn1 * (_ceil(tokens, 16) + window_blocks)
        assert allocate(model, tokens, 1, "vllm").total_bytes == expected


def test_llama_cpp_one_sequence_is_the_ideal_at_f16_and_fp32() -> None:
    for key in ("llama-3-8b", "jamba-v0.1", "qwen3-next-80b-a3b", "nemotron-h-8b",
                "falcon-h1-7b", "mamba-2-2.7b", "kimi-linear-48b-a3b"):
        for tokens in (256, 32_768, 262_144):
            ideal = cache_report(key, tokens, 1, "fp16", "fp32")
            ours = allocate(key, tokens, 1, "llama.cpp")
            assert ours.total_bytes == ideal["total_bytes"], key
        # 1000 tokens are held as 1024 cells
        assert allocate(key, 1000, 1, "llama.cpp").kv_bytes == cache_report(
            key, 1024, 1, "fp16")["kv_cache_bytes"]


def test_llama_cpp_server_default_and_parallel_sequences() -> None:
    state = cache_report("jamba-v0.1", 0, 1, "fp16", "fp32")["state_bytes"]
    per_cell = 4 * 2 * 8 * 128 * 2
    server = allocate("jamba-v0.1", 1000, 2, "llama.cpp", llama_cpp_server=True)
    assert server.kv_bytes == _ceil(2000, 256) * 256 * per_cell  # shared cells
    assert server.state_bytes == 4 * state  # four slots whatever the load
    split = allocate("jamba-v0.1", 1000, 2, "llama.cpp")
    assert split.kv_bytes == 2 * 1024 * per_cell and split.state_bytes == 2 * state
    with pytest.raises(ValueError, match=r"^sequences: the llama\.cpp server's default serves 4"):
        allocate("jamba-v0.1", 1000, 5, "llama.cpp", llama_cpp_server=True)
    with pytest.raises(ValueError, match=r"^engine: llama\.cpp does not run zamba2"):
        allocate("zamba2-2.7b", 10, 1, "llama.cpp", family="zamba2")


def test_sglang_by_hand() -> None:
    slot = 28 * (3 * 8192 * 2 + 8192 * 16 * 4)  # conv bf16, ssm fp32, 28 Mamba layers
    kv = 4 * 2 * 8 * 128 * 2 * 5000 * 2
    a = allocate("jamba-v0.1", 5000, 2, "sglang")
    assert (a.kv_bytes, a.state_bytes) == (kv, slot * 3 * 2)
    off = allocate("jamba-v0.1", 5000, 2, "sglang", prefix_caching=False, speculative_tokens=3)
    assert off.state_bytes == slot * 1 * 2 + slot * (2 + 1) * 3


@pytest.mark.parametrize("call, message", [
    (lambda: allocate("jamba-v0.1", 10, 1, "tgi"), r"^engine: unknown value 'tgi'; accepted: ideal"),
    (lambda: allocate("jamba-v0.1", 10, -1), r"^sequences: expected a positive integer, got -1"),
    (lambda: allocate("jamba-v0.1", 2**41), r"^tokens: 2199023255552 is too large"),
    (lambda: allocate("jamba-v0.1", 10.5), r"^tokens: expected an integer, got 10\.5"),
    (lambda: allocate("jamba-v0.1", 10, speculative_tokens=65), r"^speculative_tokens: 65 is too"),
    (lambda: allocate("jamba-v0.1", 10, prefix_caching="yes"), r"^prefix_caching: expected true"),
    (lambda: allocate("jamba-v0.1", 10, 1, "llama.cpp", kv_dtype="q2"), r"^kv_dtype: unknown"),
    (lambda: allocate("jamba-v0.1", 2**40, 2**20), r"^tokens, sequences: the vllm allocation"),
    (lambda: allocate("minimax-text-01", 10, family="minimax"), r"^engine: vllm does not run"),
    (lambda: gpu_memory_bytes(memory_gib=0), r"^memory_gib: expected a size above 0"),
    (lambda: engine_budget("vllm", 0, 0, 0), r"^memory_bytes: expected a positive integer, got 0"),
    (lambda: gpu_verdict("jamba-v0.1", 10, 1, "tgi", gpu="L4-24GB"), r"^engine: unknown value"),
    (lambda: gpu_verdict("jamba-v0.1", 10, -1, gpu="L4-24GB"), r"^sequences: expected a positive"),
    (lambda: gpu_memory_bytes(memory_gib=float("nan")), r"^memory_gib: expected a size above 0"),
    (lambda: gpu_memory_bytes("H100"), r"^gpu: unknown GPU 'H100'; accepted: H100-80GB"),
    (lambda: gpu_memory_bytes(), r"^gpu, memory_gib: give exactly one"),
    (lambda: gpu_verdict("llama-3-8b", 10, 0, gpu="L4-24GB"), r"^sequences: expected a positive"),
    (lambda: gpu_verdict("llama-3-8b", 10, weight_bytes=-1, gpu="L4-24GB"), r"^weight_bytes:"),
    (lambda: verdict_lines(None), r"^verdict: expected a gpu_verdict result"),
    (lambda: allocation_report(3), r"^allocation: expected an Allocation"),
])
def test_bad_inputs_are_refused_by_name(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_gpu_verdict_arithmetic() -> None:
    # memory as the device reports it: nvidia-smi's 81,559 MiB for an H100 80GB, not 80 GiB
    h100, l4 = 81_559 * 2**20, 23_034 * 2**20
    assert gpu_memory_bytes("H100-80GB") == h100 == 85_520_809_984 and len(GPUS) >= 8
    weights, overhead = 16_060_522_496, 2 * GiB
    v = gpu_verdict("llama-3-8b", 8192, 4, "vllm", gpu="H100-80GB", weight_bytes=weights)
    budget = _ceil(h100 * 92, 100) - weights - overhead
    assert v["budget_bytes"] == budget == 60_471_139_042
    per_token = 32 * 2 * 8 * 128 * 2  # 128 KiB; 8192 tokens are 512 whole blocks of 16
    assert v["allocated_bytes"] == 4 * 8192 * per_token and v["fits"]
    assert v["max_sequences"] == budget // (8192 * per_token) == 56
    # longest context for 4 sequences: whole blocks of 16 tokens
    blocks = budget // (4 * 16 * per_token)
    assert v["max_tokens"] == blocks * 16 == 115_328
    assert any("⌈0.92 × 85,520,809,984⌉ = 78,679,145,186" in line for line in v["lines"])
    assert verdict_lines(v) == v["lines"]
    small = gpu_verdict("llama-3-8b", 8192, 1, "vllm", gpu="L4-24GB", weight_bytes=weights,
                        max_context=8192)
    assert small["budget_bytes"] == _ceil(l4 * 92, 100) - weights - overhead
    # the memory would hold more; the longest context is capped at the model's own 8,192
    assert small["max_tokens_memory"] == small["budget_bytes"] // (16 * per_token) * 16 > 8192
    assert small["max_tokens"] == 8192
    assert any("8,192 tokens, the model's own maximum" in line for line in small["lines"])
    assert not small["beyond_max_context"]
    beyond = gpu_verdict("llama-3-8b", 9000, 1, "ideal", memory_gib=80, max_context=8192)
    assert beyond["beyond_max_context"] and "beyond it" in beyond["lines"][-1]
    tiny = gpu_verdict("jamba-v0.1", 10, 1, "ideal", memory_gib=2.0, overhead_bytes=0,
                       weight_bytes=2 * GiB)
    assert tiny["max_tokens"] is None and tiny["max_sequences"] == 0 and not tiny["fits"]


def test_compare_engines_side_by_side() -> None:
    table = compare_engines("zamba2-2.7b", 4096, 1, family="zamba2")
    assert list(table) == ["ideal", "vllm", "llama.cpp", "sglang"]
    assert table["llama.cpp"] == "engine: llama.cpp does not run zamba2 (no Zamba2 arch in llama.cpp)"
    assert table["ideal"].total_bytes == cache_report("zamba2-2.7b", 4096)["total_bytes"]
    assert table["vllm"].block_tokens == 16 * _ceil((3 * 5248 + 80 * 64 * 64) * 2, 16 * 20480)
    with pytest.raises(ValueError, match=r"^sequences: expected a positive integer"):
        compare_engines("zamba2-2.7b", 4096, 0)


ARRAY = np.ones((2, 3))  # its truth is ambiguous: `x or default` and `x == name` raised numpy's error


@pytest.mark.parametrize("call, message", [
    (lambda: vllm_state_dtypes(family=ARRAY), r"^family: expected a model_type name or None, got"),
    (lambda: allocate("jamba-v0.1", 10, kv_dtype=ARRAY), r"^kv_dtype: unknown value a ndarray; accepted"),
    (lambda: allocate("jamba-v0.1", 10, conv_dtype=ARRAY), r"^conv_dtype: unknown value"),
    (lambda: allocate("jamba-v0.1", 10, ssm_dtype=ARRAY), r"^ssm_dtype: unknown value"),
    (lambda: allocate("jamba-v0.1", 10, 1, "sglang", ssm_dtype=ARRAY), r"^ssm_dtype: unknown"),
    (lambda: allocate("jamba-v0.1", ARRAY), r"^tokens: expected an integer, got a ndarray"),
    (lambda: compare_engines("jamba-v0.1", ARRAY), r"^tokens: expected an integer"),
])
def test_arrays_where_a_name_or_count_goes_are_refused_by_name(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()
    # None and "" still mean the default; a numpy integer still counts as an integer
    default = allocate("jamba-v0.1", 1000)
    assert allocate("jamba-v0.1", np.int64(1000), kv_dtype="", ssm_dtype=None) == default


def test_a_model_of_mlp_layers_only_allocates_nothing() -> None:
    # no KV and no state: zero bytes under every engine, said in a line (vLLM's planner used
    # to raise min()'s "arg is an empty sequence")
    model = {"name": "mlp only", "layers": [{"kind": "mlp", "count": 4}]}
    for engine in ("ideal", "vllm", "llama.cpp", "sglang"):
        a = allocate(model, 32_768, 4, engine)
        assert (a.kv_bytes, a.state_bytes) == (0, 0), engine
    vllm = allocate(model, 32_768, 4, "vllm")
    assert vllm.block_tokens is None
    assert vllm.lines[-1] == ("no attention and no state layers: nothing is allocated per "
                              "token or sequence, 0 bytes")
    v = gpu_verdict(model, 32_768, 1, "vllm", gpu="L4-24GB")
    assert v["fits"] and v["allocated_bytes"] == 0


def test_lines_say_1_sequence_and_4_sequences_and_a_negative_budget_with_a_minus_sign() -> None:
    one = allocate("jamba-v0.1", 1000, 1, "vllm").lines[-1]
    four = allocate("jamba-v0.1", 1000, 4, "vllm").lines[-1]
    assert " · 1 sequence = " in one and " · 4 sequences = " in four
    cpp = allocate("jamba-v0.1", 1000, 1, "llama.cpp").lines
    assert cpp[0].endswith("1 sequence") and " · 1 slot = " in cpp[2]
    assert " · 2 slots = " in allocate("jamba-v0.1", 1000, 2, "llama.cpp").lines[2]
    assert "3 slots per request" in allocate("jamba-v0.1", 1000, 1, "sglang").lines[2]
    v = gpu_verdict("jamba-v0.1", 1000, 1, "vllm", gpu="L4-24GB",
                    weight_bytes=103_000_000_000)
    budget = _ceil(23_034 * 2**20 * 92, 100) - 103_000_000_000 - 2 * GiB  # L4: 23,034 MiB
    assert budget < 0 and v["budget_bytes"] == budget
    text = "\n".join(v["lines"])
    assert f"= −{-budget:,} bytes (−77.23 GiB)" in text and f"> −{-budget:,}: does not" in text
    assert "1 sequence × 1,000 tokens allocates " in text
    # nothing fits, so there is no longer context to lower --max-model-len to
    assert "(get_kv_cache_configs)" in text and "lower --max-model-len" not in text
    assert any(", 1 group, bytes per block" in line
               for line in allocate("llama-3-8b", 1000).lines)
    assert any(", 8 groups, bytes per block" in line
               for line in allocate("jamba-v0.1", 1000).lines)
    assert not any("(s)" in line or "-" + str(-budget)[:3] in line for line in v["lines"])
    many = gpu_verdict("llama-3-8b", 8192, 4, "vllm", gpu="H100-80GB")["lines"]
    assert any(line.startswith("longest context for 4 sequences: ") for line in many)
    assert any(line.startswith("4 sequences × 8,192 tokens allocate ") for line in many)


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp", "sglang", "ideal"])
def test_verdicts_at_many_contexts_are_the_verdict_at_each(engine):
    """gpu_verdicts plans the engine and searches the longest context once for every context
    (the hybrid page asks at eleven): each answer is gpu_verdict's at that context, its bytes are
    sim.engines.allocate's, and its longest context is the last token count whose allocation
    stays within the budget (checked against allocate one token either side)."""
    from sim import gpus  # noqa: PLC0415

    contexts = [0, 1, 4096, 131072, 1048576]
    for model, n in (("jamba-v0.1", 1), ("qwen3-next-80b-a3b", 16)):
        many = gpus.gpu_verdicts(model, contexts, n, engine, gpu="H100-80GB", weight_bytes=3 * 10**10,
                                 max_context=262144)
        assert many == [gpu_verdict(model, c, n, engine, gpu="H100-80GB", weight_bytes=3 * 10**10,
                                    max_context=262144) for c in contexts]
        for c, v in zip(contexts, many):
            assert v["allocated_bytes"] == allocate(model, c, n, engine).total_bytes
            assert v["beyond_max_context"] is (c > 262144)
        top, budget = many[0]["max_tokens_memory"], many[0]["budget_bytes"]
        assert {v["max_tokens_memory"] for v in many} == {top}
        if top is not None and top < gpus.MAX_TOKENS:
            assert allocate(model, top, n, engine).total_bytes <= budget
            assert allocate(model, top + 1, n, engine).total_bytes > budget
    assert gpus.gpu_verdicts("jamba-v0.1", [], 1, engine, gpu="H100-80GB") == []
