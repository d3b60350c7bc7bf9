"""Parameters from config.json: every preset's total and active count worked out module by module
by hand (docs/engines.md §4), checked against the published totals where engines.md gives them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cache import PRESETS, cache_report
from sim.hf_config import from_hf_config
from sim.hf_reader import FAMILIES
from sim.presets import PRESET_HF_CONFIGS
from sim.weights import COUNTED_FAMILIES, parameter_count, parameter_report, weight_bytes

FIXTURES = Path(__file__).parent / "hf_configs"


def _gqa(H: int, nh: int, nkv: int, hd: int) -> int:
    return H * nh * hd + 2 * H * nkv * hd + nh * hd * H


def _mamba2(H: int, heads: int, d: int, G: int, N: int, K: int, gated_norm: bool = True) -> int:
    c = d + 2 * G * N
    return H * (2 * d + 2 * G * N + heads) + c * K + c + 3 * heads + (d if gated_norm else 0) + d * H


# Hand-worked totals, one per preset: (total, active) with the embedding and lm_head counted.
def _llama() -> tuple[int, int]:
    H, V, I = 4096, 128256, 14336  # noqa: E741
    layer = _gqa(H, 32, 8, 128) + 3 * H * I + 2 * H
    total = 2 * V * H + 32 * layer + H
    return total, total


def _mamba2_27() -> tuple[int, int]:
    H, V = 2560, 50288  # vocab 50277 padded to a multiple of 16; tied
    layer = _mamba2(H, 80, 5120, 1, 128, 4) + H
    total = V * H + 64 * layer + H
    return total, total


def _jamba() -> tuple[int, int]:
    H, V, I, D, R, N, K = 4096, 65536, 14336, 8192, 256, 16, 4  # noqa: E741
    mamba = (H * 2 * D + D * K + D + D * (R + 2 * N) + R * D + D + D * N + D + D * H + R + 2 * N)
    attention = _gqa(H, 32, 8, 128)
    mlp = 3 * H * I
    moe = 16 * H + 16 * mlp
    # 4 attention layers (i mod 8 = 4), 28 Mamba; experts in the 16 odd layers
    total = 2 * V * H + H + 4 * attention + 28 * mamba + 16 * moe + 16 * mlp + 32 * 2 * H
    return total, total - 16 * (16 - 2) * mlp


def _zamba2() -> tuple[int, int]:
    H, V, I, r = 2560, 32000, 10240, 128  # noqa: E741 — tied embedding
    mamba = _mamba2(H, 80, 5120, 1, 64, 4) + H
    call = H * H + H * r + r * 2 * I
    block = 3 * (2 * H) ** 2 + 2 * H * H + H * 2 * I + I * H + 2 * H + H
    total = V * H + H + 54 * mamba + 9 * call + 2 * block
    return total, total


def _recurrentgemma() -> tuple[int, int]:
    H, V, W, K, heads, Ip = 2560, 256000, 2560, 4, 10, 15360 // 2  # tied
    attention = _gqa(H, 10, 1, 256) + H
    rglru = 2 * (H * W + W) + W * H + H + W * K + W + W + 2 * (heads * (W // heads) ** 2 + W)
    mlp = 3 * H * Ip + 2 * Ip + H
    total = V * H + H + 8 * attention + 18 * rglru + 26 * (mlp + 2 * H)
    return total, total


def _qwen3_next() -> tuple[int, int]:
    H, V, nh, nkv, hd = 2048, 151936, 16, 2, 256
    Hk, Hv, dk, dv, K, E, k, Im, Ish = 16, 32, 128, 128, 4, 512, 10, 512, 512
    attention = 2 * H * nh * hd + 2 * H * nkv * hd + nh * hd * H + 2 * hd
    gdn = (H * (2 * Hk * dk + 2 * Hv * dv) + H * 2 * Hv + (2 * Hk * dk + Hv * dv) * K + Hv + Hv
           + dv + Hv * dv * H)
    moe = E * H + E * 3 * H * Im + 3 * H * Ish + H
    total = 2 * V * H + H + 12 * attention + 36 * gdn + 48 * (moe + 2 * H)
    return total, total - 48 * (E - k) * 3 * H * Im


def _kimi() -> tuple[int, int]:
    H, V, nh, dn, dr, dv, r = 2304, 163840, 32, 128, 64, 128, 512
    kh, d, K, E, k, Im = 32, 128, 4, 256, 8, 1024
    p = kh * d
    mla = H * nh * (dn + dr) + H * (r + dr) + r + r * nh * (dn + dv) + nh * dv * H
    kda = (3 * H * p + 3 * p * K + H * d + d * p + p + kh + H * kh + H * d + d * p + d + p * H)
    moe = E * H + E * 3 * H * Im + 1 * 3 * H * Im
    dense = 3 * H * 9216  # first_k_dense_replace = 1
    total = 2 * V * H + H + 7 * mla + 20 * kda + 26 * moe + dense + 27 * 2 * H
    return total, total - 26 * (E - k) * 3 * H * Im


def _minimax() -> tuple[int, int]:
    H, V, nh, hd, E, k, I = 6144, 200064, 64, 128, 32, 2, 9216  # noqa: E741
    lightning = 3 * H * nh * hd + H * nh * hd + nh * hd + nh * hd * H
    attention = _gqa(H, 64, 8, 128)
    moe = E * H + E * 3 * H * I
    total = 2 * V * H + H + 70 * lightning + 10 * attention + 80 * (moe + 2 * H)
    return total, total - 80 * (E - k) * 3 * H * I


def _nemotron() -> tuple[int, int]:
    H, V, I = 4096, 131072, 21504  # noqa: E741
    mamba = _mamba2(H, 128, 8192, 8, 128, 4)
    # 52 blocks, each with one norm H: 24 Mamba-2, 4 attention, 24 relu² MLPs
    total = 2 * V * H + H + 24 * mamba + 4 * _gqa(H, 32, 8, 128) + 24 * 2 * H * I + 52 * H
    return total, total


def _falcon() -> tuple[int, int]:
    H, V, I = 3072, 130049, 12288  # noqa: E741
    layer = _gqa(H, 12, 2, 128) + _mamba2(H, 24, 3072, 1, 256, 4, gated_norm=False) \
        + 3 * H * I + 2 * H
    total = 2 * V * H + H + 44 * layer
    return total, total


BY_HAND = {"llama-3-8b": _llama, "mamba-2-2.7b": _mamba2_27, "jamba-v0.1": _jamba,
           "zamba2-2.7b": _zamba2, "recurrentgemma-2b": _recurrentgemma,
           "qwen3-next-80b-a3b": _qwen3_next, "kimi-linear-48b-a3b": _kimi,
           "minimax-text-01": _minimax, "nemotron-h-8b": _nemotron, "falcon-h1-7b": _falcon}


def test_every_preset_is_worked_by_hand() -> None:
    assert set(BY_HAND) == set(PRESETS) == set(PRESET_HF_CONFIGS)


@pytest.mark.parametrize("key", list(PRESETS))
def test_parameter_counts_equal_the_module_shapes_sums(key: str) -> None:
    total, active = BY_HAND[key]()
    count = parameter_count(PRESET_HF_CONFIGS[key])
    assert (count.total, count.active) == (total, active)
    assert count.total == sum(t.parameters for t in count.tensors)
    # the fixture config.json (with all its other fields) counts the same
    fixture = parameter_count((FIXTURES / f"{key}.json").read_text())
    assert (fixture.total, fixture.active) == (total, active)


@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_configs_give_the_presets_layers(key: str) -> None:
    model, _ = from_hf_config(PRESET_HF_CONFIGS[key])
    ours, theirs = cache_report(model, 1000, 2), cache_report(PRESETS[key], 1000, 2)
    assert [(r["kind"], r["kv_bytes"], r["state_bytes"]) for r in ours["per_layer"]] == [
        (r["kind"], r["kv_bytes"], r["state_bytes"]) for r in theirs["per_layer"]]


def test_published_totals() -> None:
    # Llama-3-8B 8.03B; Jamba 52B total / 12B active (with embeddings); MiniMax 456B total,
    # 45.9B activated (without embeddings); RecurrentGemma 2.7B.
    assert parameter_count(PRESET_HF_CONFIGS["llama-3-8b"]).total == 8_030_261_248
    jamba = parameter_count(PRESET_HF_CONFIGS["jamba-v0.1"])
    assert round(jamba.total / 1e9) == 52 and round(jamba.active / 1e9) == 12
    minimax = parameter_count(PRESET_HF_CONFIGS["minimax-text-01"])
    assert round(minimax.total / 1e9) == 456
    assert round(minimax.active_without_embeddings / 1e8) == 459
    assert round(parameter_count(PRESET_HF_CONFIGS["recurrentgemma-2b"]).total / 1e8) == 27
    # "A3B" is loose: with embeddings both exceed 3B; without, 3.25B and 2.73B
    qwen = parameter_count(PRESET_HF_CONFIGS["qwen3-next-80b-a3b"])
    kimi = parameter_count(PRESET_HF_CONFIGS["kimi-linear-48b-a3b"])
    assert qwen.active > 3e9 and kimi.active > 3e9
    assert round(qwen.total / 1e9) == 80 and round(kimi.total / 1e9) == 49


def test_weight_bytes_at_each_dtype() -> None:
    count = parameter_count(PRESET_HF_CONFIGS["llama-3-8b"])
    P = 8_030_261_248
    assert weight_bytes(count, "bf16") == 2 * P and weight_bytes(count, "fp8") == P
    assert weight_bytes(count, "fp32") == 4 * P
    # int4: half a byte each plus one bf16 scale per group of 128 parameters
    assert weight_bytes(count, "int4") == P // 2 + 2 * (P // 128)  # P is a multiple of 128
    assert weight_bytes(129, "int4") == 65 + 2 * 2
    with pytest.raises(ValueError, match=r"^dtype: unknown weight dtype 'int3'; accepted: fp32"):
        weight_bytes(count, "int3")
    with pytest.raises(ValueError, match=r"^count: expected an integer, got 1\.5"):
        weight_bytes(1.5)
    report = parameter_report(count, "fp8")
    assert report["weight_bytes"] == P and report["params_active"] == P
    assert report["params_active_without_embeddings"] == P - 2 * 128256 * 4096


def test_every_family_read_from_config_json_has_a_formula() -> None:
    assert set(COUNTED_FAMILIES) == set(FAMILIES)


# --- the three formulas docs/engines.md does not give, written from transformers 5.23's modules ---

def _load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_granite_4_h_small_by_hand() -> None:
    # ibm-granite/granite-4.0-h-small: 40 layers (attention at 5, 15, 25, 35; 36 Mamba-2),
    # MoE in every layer (72 experts, 10 per token, width 768) beside a shared MLP of 1536
    H, V, E, k, I, Ish = 4096, 100352, 72, 10, 768, 1536  # noqa: E741 — tied embedding
    heads, d, G, N, K = 128, 128 * 64, 1, 128, 4
    c = d + 2 * G * N  # conv channels 8448
    mamba = (H * (d + c + heads)  # in_proj: z, x B C, dt
             + c * K + c  # depthwise conv1d with its bias (mamba_conv_bias)
             + 3 * heads  # dt_bias, A_log, D
             + d  # the gated RMSNorm over d_inner
             + d * H)  # out_proj
    assert mamba == 102_286_976
    attention = H * 32 * 128 + 2 * H * 8 * 128 + 32 * 128 * H  # no biases
    router, experts, shared = E * H, E * 2 * I * H + E * H * I, 2 * Ish * H + Ish * H
    layer_ffn = router + experts + shared + 2 * H  # + input and post-attention norms
    total = V * H + H + 36 * mamba + 4 * attention + 40 * layer_ffn
    active = total - 40 * (E - k) * 3 * H * I
    count = parameter_count(_load("granite-4.0-h-small"))
    assert (count.total, count.active) == (total, active) == (32_207_337_984, 8_803_121_664)
    # IBM's model card: "32B total / 9B active" (with the tied embedding: 8.8B)
    assert round(total / 1e9) == 32 and round(active / 1e9) == 9
    assert count.active_without_embeddings == active - V * H


def test_granite_4_h_dense_and_transformers_5_names() -> None:
    # Granite-4.0-H-Micro's shape: no experts (num_local_experts 0), every layer a shared MLP
    # of 8192; hidden 2048, 64 Mamba heads of 64, attention at 5, 15, 25, 35
    config = _load("granite-4.0-h-small") | {
        "hidden_size": 2048, "num_local_experts": 0, "num_experts_per_tok": 0,
        "shared_intermediate_size": 8192, "mamba_n_heads": 64}
    H, V, heads, d, c = 2048, 100352, 64, 4096, 4096 + 256
    mamba = H * (d + c + heads) + c * 4 + c + 3 * heads + d + d * H
    attention = H * 2048 + 2 * H * 8 * 64 + 2048 * H
    total = V * H + H + 36 * mamba + 4 * attention + 40 * (3 * H * 8192 + 2 * H)
    count = parameter_count(config)
    assert count.total == count.active == total == 3_191_396_096  # the card's "3B"
    assert not any(t.name.startswith("moe.") for t in count.tensors)
    # attention_bias puts a bias on q, k, v and o
    biased = parameter_count(config | {"attention_bias": True})
    assert biased.total - total == 4 * (2048 + 2 * 512 + H)
    # transformers 5 re-saves the layer kinds as linear_attention / full_attention
    renamed = [{"mamba": "linear_attention", "attention": "full_attention"}[x]
               for x in config["layer_types"]]
    assert parameter_count(config | {"layer_types": renamed}).total == total
    resaved = {k: v for k, v in config.items() if k != "layer_types"} | {
        "layers_block_type": renamed}
    assert parameter_count(resaved).total == total
    with pytest.raises(ValueError, match=r"^layer_types, layers_block_type: the two fields "
                                         r"contradict each other \(first at layer 0\)"):
        parameter_count(config | {"layers_block_type": ["attention"] * 40})


def test_lfm2_1_2b_by_hand() -> None:
    # LiquidAI/LFM2-1.2B: 16 layers, 10 short convolutions and 6 attention (2, 5, 8, 10, 12,
    # 14); block_ff_dim 12288 auto-adjusted to 256 · ⌈⌊2 · 12288 / 3⌋ / 256⌉ = 8192
    H, V, K, I = 2048, 65536, 3, 8192  # noqa: E741 — tied embedding
    conv = 3 * H * H + H * K + H * H  # in_proj (B, C, x), depthwise conv, out_proj; no biases
    attention = H * 32 * 64 + 2 * H * 8 * 64 + 32 * 64 * H + 2 * 64  # + q_layernorm, k_layernorm
    layer = 3 * H * I + 2 * H  # SwiGLU w1, w3, w2; operator_norm and ffn_norm
    total = V * H + H + 10 * conv + 6 * attention + 16 * layer  # + embedding_norm (final)
    count = parameter_count(_load("lfm2-1.2b"))
    assert count.total == count.active == total
    assert total == 1_170_340_608  # the LFM2 model card's "Parameters" row, to the parameter
    assert count.by_part()["short_conv"] == 10 * conv
    # the original spelling tie_embedding, an untied head, conv biases, no auto-adjust
    config = _load("lfm2-1.2b")
    assert parameter_count(config | {"tie_embedding": False}).total == total + V * H
    assert parameter_count(config | {"conv_bias": True}).total == total + 10 * 5 * H
    plain = parameter_count(config | {"block_auto_adjust_ff_dim": False}).total
    assert plain == total + 16 * 3 * H * (12288 - I)
    # a multiplier rounds up to block_multiple_of: ⌊1.3 · 8192⌋ = 10649 → 10752
    wider = parameter_count(config | {"block_ffn_dim_multiplier": 1.3}).total
    assert wider == total + 16 * 3 * H * (10752 - I)
    with pytest.raises(ValueError, match=r"^block_ffn_dim_multiplier: expected a number above 0"):
        parameter_count(config | {"block_ffn_dim_multiplier": "big"})


def test_nemotron_3_nano_moe_by_hand() -> None:
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B: 52 blocks, 23 Mamba-2 (M), 23 MoE (E), 6 attention
    # (*); 128 relu² experts of 1856, 6 per token, one shared relu² expert of 3712
    H, V, E, k, I, Ish = 2688, 131072, 128, 6, 1856, 3712  # noqa: E741
    heads, d, G, N, K = 64, 64 * 64, 8, 128, 4
    c = d + 2 * G * N
    mamba = H * (d + c + heads) + c * K + c + 3 * heads + d + d * H
    attention = H * 32 * 128 + 2 * H * 2 * 128 + 32 * 128 * H
    moe = (E * H  # router (its e_score_correction_bias is a buffer)
           + E * I * H + E * H * I  # experts' up and down, no gate
           + Ish * H + H * Ish)  # the shared expert
    total = 2 * V * H + H + 23 * mamba + 6 * attention + 23 * moe + 52 * H
    active = total - 23 * (E - k) * 2 * H * I
    count = parameter_count(_load("nemotron-3-nano-30b-a3b"))
    assert (count.total, count.active) == (total, active) == (31_577_937_344, 3_580_073_408)
    # NVIDIA: "31.6B total, 3.2B active (3.6B including embeddings)": 3.2B leaves out the
    # input embedding only, the lm_head counts
    assert round(total / 1e8) == 316 and round(active / 1e8) == 36
    assert round((active - V * H) / 1e8) == 32
    # a latent MoE (moe_latent_size L): experts on L, fc1 H·L and fc2 L·H around them
    L = 1024
    latent = parameter_count(_load("nemotron-3-nano-30b-a3b") | {"moe_latent_size": L})
    assert latent.total == total + 23 * (2 * E * I * (L - H) + 2 * H * L)
    # the dense Nemotron-H-8B is unchanged by the MoE formula
    assert parameter_count(PRESET_HF_CONFIGS["nemotron-h-8b"]).total == _nemotron()[0]
