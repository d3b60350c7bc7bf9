"""Model presets for the cache calculator, as plain configurations (loaded by `sim.cache`).

Each preset cites its source as plain text next to it (no scheme: nothing here is fetched).
Layer indices are 0-based. Where a figure could not be checked against the public config it is
marked "unverified" in `source`.

Conv channels follow references.md: Mamba-2 d_inner + 2·n_groups·d_state; Mamba-1 d_inner;
Gated DeltaNet 2·key_heads·d_k + value_heads·d_v; RG-LRU its width.
"""

from __future__ import annotations

from typing import Any


def layers_from_pattern(pattern: str, mixers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries from a layer pattern such as "MMMA": runs of one symbol become one entry, each
    the symbol's mixer in `mixers` with its `count` (the presets here and the config.json
    builders of `sim.hf_config` use it)."""
    if not isinstance(mixers, dict) or not all(
            isinstance(k, str) and isinstance(m, dict) for k, m in mixers.items()):
        raise ValueError(f"mixers: expected a dict of symbol -> mixer dict, got "
                         f"{type(mixers).__name__}")
    if not isinstance(pattern, str):
        raise ValueError(f"pattern: expected text such as 'MMMA', got {type(pattern).__name__}")
    unknown = sorted(set(pattern) - set(mixers))
    if unknown:
        raise ValueError(f"pattern: symbol {unknown[0]!r} has no mixer; accepted: "
                         f"{', '.join(sorted(mixers)) or 'none'}")
    entries: list[dict[str, Any]] = []
    for symbol in pattern:
        if entries and entries[-1]["_symbol"] == symbol:
            entries[-1]["count"] += 1
        else:
            entries.append({"_symbol": symbol, **mixers[symbol], "count": 1})
    for entry in entries:
        del entry["_symbol"]
    return entries


_LLAMA_ATTENTION = {"kind": "attention", "kv_heads": 8, "head_dim": 128}

_JAMBA_MAMBA = {"kind": "recurrent", "label": "Mamba", "state_shape": [8192, 16],
                "conv_channels": 8192, "conv_kernel": 4}

_ZAMBA_MAMBA = {"kind": "recurrent", "label": "Mamba-2", "state_shape": [80, 64, 64],
                "conv_channels": 5120 + 2 * 1 * 64, "conv_kernel": 4}
_ZAMBA_ATTENTION = {"kind": "attention", "label": "shared attention", "kv_heads": 32,
                    "head_dim": 160, "parallel": True}


def _zamba_layers() -> list[dict[str, Any]]:
    """54 Mamba-2 layers; the shared attention block is called at 6, 12, ..., 47, 51."""
    calls = (6, 12, 18, 24, 30, 36, 42, 47, 51)
    entries: list[dict[str, Any]] = []
    start = 0
    for call in calls:
        entries.append({**_ZAMBA_MAMBA, "count": call - start + 1})  # layers start..call
        entries.append(dict(_ZAMBA_ATTENTION))  # same layer as the Mamba-2 block `call`
        start = call + 1
    entries.append({**_ZAMBA_MAMBA, "count": 54 - start})
    return entries


PRESET_CONFIGS: dict[str, dict[str, Any]] = {
    "llama-3-8b": {
        "name": "Llama-3-8B",
        "source": "huggingface.co/meta-llama/Meta-Llama-3-8B config.json: 32 layers, "
                  "8 KV heads, head_dim 4096/32 = 128 (the full-attention baseline)",
        "layers": [{**_LLAMA_ATTENTION, "count": 32}],
    },
    "mamba-2-2.7b": {
        "name": "Mamba-2-2.7B",
        "source": "huggingface.co/state-spaces/mamba2-2.7b config.json: 64 layers, d_model 2560, "
                  "expand 2 (d_inner 5120), headdim 64 (80 heads), d_state 128, ngroups 1, "
                  "d_conv 4; Dao & Gu 2024, arXiv:2405.21060",
        "layers": [{"kind": "recurrent", "label": "Mamba-2", "count": 64,
                    "state_shape": [80, 64, 128], "conv_channels": 5120 + 2 * 1 * 128,
                    "conv_kernel": 4}],
    },
    "jamba-v0.1": {
        "name": "Jamba-v0.1",
        "source": "huggingface.co/ai21labs/Jamba-v0.1 config.json: 32 layers, attn_layer_period 8, "
                  "attn_layer_offset 4, 8 KV heads x 128; Mamba-1 d_inner 8192, d_state 16, "
                  "d_conv 4; Lieber et al. 2024, arXiv:2403.19887 (4 GB KV cache at 256K tokens)",
        "layers": layers_from_pattern("MMMMAMMMMMMMAMMMMMMMAMMMMMMMAMMM", {
            "M": _JAMBA_MAMBA, "A": _LLAMA_ATTENTION}),
    },
    "zamba2-2.7b": {
        "name": "Zamba2-2.7B",
        "source": "huggingface.co/Zyphra/Zamba2-2.7B config.json: 54 Mamba-2 layers (d_model "
                  "2560, 80 heads x 64, d_state 64, d_conv 4), two shared attention blocks used "
                  "alternately at hybrid_layer_ids 6, 12, 18, 24, 30, 36, 42, 47, 51, each call "
                  "with its own KV cache (32 KV heads x 160, head dim 2*2560/32); checked against "
                  "Zyphra's Zamba2 modeling code, whose default config is the 2.7B (layers_block_type "
                  "hybrids at 6..42 every 6, then 47, 51; mamba_ngroups 1; conv d_inner + 2*ngroups*d_state)",
        "layers": _zamba_layers(),
    },
    "recurrentgemma-2b": {
        "name": "RecurrentGemma-2B",
        "source": "huggingface.co/google/recurrentgemma-2b config.json: 26 layers in the "
                  "pattern (recurrent, recurrent, attention), local attention window 2048, "
                  "1 KV head x 256, RG-LRU width 2560, conv1d width 4; Botev et al. 2024, "
                  "arXiv:2404.07839",
        "layers": layers_from_pattern("RRA" * 8 + "RR", {
            "R": {"kind": "recurrent", "label": "RG-LRU", "state_shape": [2560],
                  "conv_channels": 2560, "conv_kernel": 4},
            "A": {"kind": "attention", "label": "local attention", "kv_heads": 1,
                  "head_dim": 256, "window": 2048}}),
    },
    "qwen3-next-80b-a3b": {
        "name": "Qwen3-Next-80B-A3B",
        "source": "huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct config.json: 48 layers, "
                  "full_attention_interval 4, 2 KV heads x 256; Gated DeltaNet 32 value heads, "
                  "16 key heads, head dims 128, linear_conv_kernel_dim 4 "
                  "(conv channels 2*16*128 + 32*128 = 8192)",
        "layers": layers_from_pattern("GGGA" * 12, {
            "G": {"kind": "recurrent", "label": "Gated DeltaNet", "state_shape": [32, 128, 128],
                  "conv_channels": 2 * 16 * 128 + 32 * 128, "conv_kernel": 4},
            "A": {"kind": "attention", "label": "gated attention", "kv_heads": 2,
                  "head_dim": 256}}),
    },
    "kimi-linear-48b-a3b": {
        "name": "Kimi-Linear-48B-A3B",
        "source": "huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct config.json: 27 "
                  "layers, MLA at 3, 7, 11, 15, 19, 23, 26 (kv_lora_rank 512 + rope 64, 32 heads, "
                  "qk 128+64, v 128), KDA 32 heads x 128 x 128; Kimi Team 2025, "
                  "arXiv:2510.26692 (up to 75% less KV cache than full MLA); KDA keeps "
                  "separate q, k and v short convolutions (q_conv1d, k_conv1d, v_conv1d; kernel "
                  "short_conv_kernel_size 4), so conv channels 3*32*128",
        "layers": layers_from_pattern("KKKM" * 6 + "KKM", {
            "K": {"kind": "recurrent", "label": "KDA", "state_shape": [32, 128, 128],
                  "conv_channels": 3 * 32 * 128, "conv_kernel": 4},
            "M": {"kind": "mla", "label": "MLA", "latent_dim": 512 + 64, "heads": 32,
                  "qk_head_dim": 128 + 64, "v_head_dim": 128}}),
    },
    "minimax-text-01": {
        "name": "MiniMax-Text-01",
        "source": "huggingface.co/MiniMaxAI/MiniMax-Text-01 config.json: 80 layers, softmax "
                  "attention every 8th (7:1), 8 KV heads x 128; lightning attention 64 heads x "
                  "128 x 128, no short convolution; MiniMax 2025, arXiv:2501.08313",
        "layers": layers_from_pattern("LLLLLLLA" * 10, {
            "L": {"kind": "recurrent", "label": "lightning attention",
                  "state_shape": [64, 128, 128]},
            "A": _LLAMA_ATTENTION}),
    },
    "nemotron-h-8b": {
        "name": "Nemotron-H-8B",
        "source": "huggingface.co/nvidia/Nemotron-H-8B-Base-8K config.json: 52 blocks, "
                  "hybrid_override_pattern M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M- "
                  "(24 Mamba-2, 4 attention at 7, 18, 29, 40, 24 MLP), 8 KV heads x 128; "
                  "Mamba-2 128 heads x 64, d_state 128, n_groups 8, conv kernel 4 "
                  "(conv channels 8192 + 2*8*128 = 10240); NVIDIA 2025, arXiv:2504.03624; "
                  "pattern checked against the NemotronHConfig defaults in transformers",
        "layers": layers_from_pattern(
            "M-M-M-M*-" + "M-M-M-M-M*-" * 3 + "M-M-M-M-M-", {
                "M": {"kind": "recurrent", "label": "Mamba-2", "state_shape": [128, 64, 128],
                      "conv_channels": 128 * 64 + 2 * 8 * 128, "conv_kernel": 4},
                "*": _LLAMA_ATTENTION,
                "-": {"kind": "mlp"}}),
    },
    "falcon-h1-7b": {
        "name": "Falcon-H1-7B",
        "source": "huggingface.co/tiiuae/Falcon-H1-7B-Base config.json: 44 layers, attention "
                  "(2 KV heads x 128) and Mamba-2 (24 heads x 128, d_state 256, conv kernel 4) "
                  "in parallel in every layer; Falcon-H1 report 2025, arXiv:2507.22448; "
                  "mamba_d_ssm 3072, mamba_n_groups 1 (conv channels 3072 + 2*256) as in copies of "
                  "the published config.json",
        "layers": [
            {"kind": "attention", "count": 44, "kv_heads": 2, "head_dim": 128},
            {"kind": "recurrent", "label": "Mamba-2", "count": 44, "parallel": True,
             "state_shape": [24, 128, 256], "conv_channels": 24 * 128 + 2 * 1 * 256,
             "conv_kernel": 4},
        ],
    },
}


# The config.json fields behind each preset that the parameter count and the engines read
# (sim.weights, sim.engines): the same values as tests/sim/hf_configs/<key>.json, which are
# written from the published files named in each preset's source. `from_hf_config` of each
# gives the preset's layers exactly (tests/sim/test_sim_weights.py checks it).
PRESET_HF_CONFIGS: dict[str, dict[str, Any]] = {
    "llama-3-8b": {
        "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
        "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
        "attention_bias": False, "vocab_size": 128256, "tie_word_embeddings": False,
        "max_position_embeddings": 8192, "torch_dtype": "bfloat16"},
    "mamba-2-2.7b": {
        "d_model": 2560, "d_intermediate": 0, "n_layer": 64, "vocab_size": 50277,
        "ssm_cfg": {"layer": "Mamba2"}, "attn_layer_idx": [], "pad_vocab_size_multiple": 16,
        "tie_embeddings": True},
    "jamba-v0.1": {
        "model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096,
        "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
        "attn_layer_offset": 4, "attn_layer_period": 8, "expert_layer_offset": 1,
        "expert_layer_period": 2, "num_experts": 16, "num_experts_per_tok": 2,
        "mamba_conv_bias": True, "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_dt_rank": 256,
        "mamba_expand": 2, "mamba_proj_bias": False, "vocab_size": 65536,
        "tie_word_embeddings": False, "max_position_embeddings": 262144,
        "torch_dtype": "bfloat16"},
    "zamba2-2.7b": {
        "model_type": "zamba2", "num_hidden_layers": 54, "hidden_size": 2560,
        "intermediate_size": 10240, "num_attention_heads": 32, "num_key_value_heads": 32,
        "hybrid_layer_ids": [6, 12, 18, 24, 30, 36, 42, 47, 51], "adapter_rank": 128,
        "add_bias_linear": False, "mamba_d_conv": 4, "mamba_d_state": 64, "mamba_expand": 2,
        "mamba_headdim": 64, "mamba_ngroups": 1, "n_mamba_heads": 80, "num_mem_blocks": 2,
        "use_conv_bias": True, "use_shared_attention_adapter": False,
        "use_shared_mlp_adapter": True, "vocab_size": 32000, "max_position_embeddings": 4096},
    "recurrentgemma-2b": {
        "model_type": "recurrent_gemma", "num_hidden_layers": 26, "hidden_size": 2560,
        "intermediate_size": 15360, "num_attention_heads": 10, "num_key_value_heads": 1,
        "head_dim": 256, "block_types": ["recurrent", "recurrent", "attention"],
        "attention_window_size": 2048, "conv1d_width": 4, "lru_width": 2560,
        "vocab_size": 256000, "torch_dtype": "float32"},
    "qwen3-next-80b-a3b": {
        "model_type": "qwen3_next", "num_hidden_layers": 48, "hidden_size": 2048,
        "intermediate_size": 5120, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "linear_value_head_dim": 128, "decoder_sparse_step": 1, "num_experts": 512,
        "num_experts_per_tok": 10, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "vocab_size": 151936,
        "tie_word_embeddings": False, "max_position_embeddings": 262144,
        "torch_dtype": "bfloat16"},
    "kimi-linear-48b-a3b": {
        "model_type": "kimi_linear", "num_hidden_layers": 27, "hidden_size": 2304,
        "intermediate_size": 9216, "num_attention_heads": 32, "kv_lora_rank": 512,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "head_dim": 128,
                               "num_heads": 32, "short_conv_kernel_size": 4},
        "first_k_dense_replace": 1, "moe_layer_freq": 1, "num_experts": 256,
        "num_experts_per_token": 8, "num_shared_experts": 1, "moe_intermediate_size": 1024,
        "vocab_size": 163840, "tie_word_embeddings": False, "model_max_length": 1048576,
        "torch_dtype": "bfloat16"},
    "minimax-text-01": {
        "model_type": "minimax_text_01", "num_hidden_layers": 80, "hidden_size": 6144,
        "intermediate_size": 9216, "num_attention_heads": 64, "num_key_value_heads": 8,
        "head_dim": 128, "attn_type_list": ([0] * 7 + [1]) * 10, "num_local_experts": 32,
        "num_experts_per_tok": 2, "vocab_size": 200064, "tie_word_embeddings": False,
        "max_position_embeddings": 10240000},
    "nemotron-h-8b": {
        "model_type": "nemotron_h", "num_hidden_layers": 52, "hidden_size": 4096,
        "intermediate_size": 21504, "num_attention_heads": 32, "num_key_value_heads": 8,
        "attention_head_dim": 128,
        "hybrid_override_pattern": "M-M-M-M*-" + "M-M-M-M-M*-" * 3 + "M-M-M-M-M-",
        "mamba_head_dim": 64, "mamba_num_heads": 128, "n_groups": 8, "ssm_state_size": 128,
        "conv_kernel": 4, "use_bias": False, "use_conv_bias": True, "vocab_size": 131072,
        "tie_word_embeddings": False, "max_position_embeddings": 8192,
        "torch_dtype": "bfloat16"},
    "falcon-h1-7b": {
        "model_type": "falcon_h1", "num_hidden_layers": 44, "hidden_size": 3072,
        "intermediate_size": 12288, "num_attention_heads": 12, "num_key_value_heads": 2,
        "head_dim": 128, "attention_bias": False, "mamba_conv_bias": True, "mamba_d_conv": 4,
        "mamba_d_head": 128, "mamba_d_ssm": 3072, "mamba_d_state": 256, "mamba_n_groups": 1,
        "mamba_n_heads": 24, "mamba_proj_bias": False, "mamba_rms_norm": False,
        "vocab_size": 130049, "tie_word_embeddings": False, "max_position_embeddings": 262144,
        "torch_dtype": "bfloat16"},
}
