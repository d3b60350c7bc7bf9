"""The cache calculator: published figures, per-layer sums, windows, MLA, parallel mixers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sim import cache
from sim.cache import PRESETS, cache_report, kv_cache_bytes, load_model, state_bytes

GiB = 2**30
SPEC_EXAMPLE = {"name": "demo", "layers": [
    {"kind": "attention", "count": 16, "kv_heads": 4, "head_dim": 256, "window": None},
    {"kind": "mla", "count": 7, "latent_dim": 576},
    {"kind": "recurrent", "count": 48, "state_shape": [48, 128, 128], "conv_channels": 10240,
     "conv_kernel": 4},
    {"kind": "mlp"}]}


def _indices(model: cache.Model, kind: str) -> list[int]:
    return [m.layer for m in model.mixers if m.kind == kind]


def test_preset_ids() -> None:
    assert list(PRESETS) == ["llama-3-8b", "mamba-2-2.7b", "jamba-v0.1", "zamba2-2.7b",
                             "recurrentgemma-2b", "qwen3-next-80b-a3b", "kimi-linear-48b-a3b",
                             "minimax-text-01", "nemotron-h-8b", "falcon-h1-7b"]
    for model in PRESETS.values():
        assert model.source and "://" not in model.source


def test_jamba_four_gib_at_256k() -> None:
    jamba = PRESETS["jamba-v0.1"]
    assert jamba.n_layers == 32 and _indices(jamba, "attention") == [4, 12, 20, 28]
    assert kv_cache_bytes(jamba, 262_144) == 4 * GiB == 4 * 2 * 8 * 128 * 2 * 262_144
    assert kv_cache_bytes("llama-3-8b", 262_144) == 32 * GiB  # Mixtral-like baseline
    assert cache_report(jamba, 262_144)["ratio"] == 1 / 8
    # Mamba-1 state: d_inner·d_state + conv d_inner·(4 − 1), fp32
    assert state_bytes(jamba) == 28 * (8192 * 16 + 8192 * 3) * 4


def test_llama_per_token() -> None:
    assert kv_cache_bytes("llama-3-8b", 1) == 128 * 1024
    assert cache_report("llama-3-8b", 10)["kv_bytes_per_token"] == 131_072
    assert kv_cache_bytes("llama-3-8b", 1, kv_dtype="fp32") == 256 * 1024
    assert kv_cache_bytes("llama-3-8b", 1, batch=3, kv_dtype="fp8") == 3 * 64 * 1024
    assert state_bytes("llama-3-8b") == 0


def test_recurrent_state_with_conv() -> None:
    qwen = PRESETS["qwen3-next-80b-a3b"]
    gdn = [m for m in qwen.mixers if m.kind == "recurrent"]
    assert len(gdn) == 36 and gdn[0].conv_channels == 8192 and gdn[0].conv_kernel == 4
    assert _indices(qwen, "attention") == list(range(3, 48, 4))
    assert state_bytes(qwen) == 36 * (32 * 128 * 128 + 8192 * 3) * 4
    assert state_bytes(qwen, batch=2, state_dtype="bf16") == state_bytes(qwen)
    mamba = PRESETS["mamba-2-2.7b"]
    assert state_bytes(mamba) == 64 * (80 * 64 * 128 + (5120 + 256) * 3) * 4
    assert cache_report(mamba, 10**6)["ratio"] is None  # no attention to compare with
    assert kv_cache_bytes(mamba, 10**6) == 0


def test_sliding_window_is_capped() -> None:
    gemma = PRESETS["recurrentgemma-2b"]
    assert _indices(gemma, "attention") == [2, 5, 8, 11, 14, 17, 20, 23]
    per_token = 8 * 2 * 1 * 256 * 2
    assert kv_cache_bytes(gemma, 1000) == per_token * 1000
    assert kv_cache_bytes(gemma, 2048) == kv_cache_bytes(gemma, 10**6) == per_token * 2048
    report = cache_report(gemma, 8192)
    assert report["full_attention_kv_bytes"] == 26 * 2 * 256 * 2 * 8192  # window removed
    assert state_bytes(gemma) == 18 * (2560 + 2560 * 3) * 4


def test_mla_latent_and_expanded() -> None:
    kimi = PRESETS["kimi-linear-48b-a3b"]
    assert kimi.n_layers == 27 and _indices(kimi, "mla") == [3, 7, 11, 15, 19, 23, 26]
    report = cache_report(kimi, 1000)
    assert report["kv_cache_bytes"] == 7 * 576 * 2 * 1000
    assert report["mla_expanded_kv_bytes"] == 7 * 32 * (192 + 128) * 2 * 1000
    assert report["ratio"] == pytest.approx(7 / 27)
    assert 1 - report["ratio"] == pytest.approx(0.74, abs=0.01)  # "up to 75% less" than full MLA


def test_parallel_entries_share_a_layer() -> None:
    falcon = PRESETS["falcon-h1-7b"]
    assert falcon.n_layers == 44 and len(falcon.mixers) == 88
    assert all(sorted(m.kind for m in group) == ["attention", "recurrent"]
               for group in falcon.layers())
    assert cache_report(falcon, 5000)["ratio"] == 1.0
    zamba = PRESETS["zamba2-2.7b"]
    assert zamba.n_layers == 54
    assert _indices(zamba, "attention") == [6, 12, 18, 24, 30, 36, 42, 47, 51]
    assert len(_indices(zamba, "recurrent")) == 54
    assert kv_cache_bytes(zamba, 100) == 9 * 2 * 32 * 160 * 2 * 100


def test_other_presets_layouts() -> None:
    nemotron = PRESETS["nemotron-h-8b"]
    kinds = [m.kind for m in nemotron.mixers]
    assert nemotron.n_layers == 52
    assert (kinds.count("recurrent"), kinds.count("attention"), kinds.count("mlp")) == (24, 4, 24)
    assert nemotron.mixers[0].conv_channels == 10240
    minimax = PRESETS["minimax-text-01"]
    assert minimax.n_layers == 80 and _indices(minimax, "attention") == list(range(7, 80, 8))


@pytest.mark.parametrize("key", list(PRESETS))
def test_per_layer_sums_and_round_trip(key: str) -> None:
    model = PRESETS[key]
    report = cache_report(model, 123_457, batch=2, kv_dtype="fp16", state_dtype="bf16")
    assert sum(r["kv_bytes"] for r in report["per_layer"]) == report["kv_cache_bytes"]
    assert sum(r["state_bytes"] for r in report["per_layer"]) == report["state_bytes"]
    assert report["total_bytes"] == report["kv_cache_bytes"] + report["state_bytes"]
    assert [r["layer"] for r in report["per_layer"]] == sorted(r["layer"] for r in report["per_layer"])
    assert report["kv_cache_bytes"] == kv_cache_bytes(model, 123_457, 2, "fp16")
    json.dumps(report)  # JSON-ready
    again = load_model(cache.model_to_json(model))
    assert again.mixers == model.mixers and again.n_layers == model.n_layers


def test_memory_curve_matches_scalar_calls() -> None:
    tokens = np.array([0, 1, 2047, 2048, 5000, 10**6])
    for key in ("recurrentgemma-2b", "jamba-v0.1", "mamba-2-2.7b"):
        curve = cache.memory_curve(key, tokens, batch=2)
        assert curve["kv_cache_bytes"].dtype == np.int64
        assert list(curve["kv_cache_bytes"]) == [kv_cache_bytes(key, int(t), 2) for t in tokens]
        assert np.all(curve["total_bytes"] == curve["kv_cache_bytes"] + state_bytes(key, 2))


def test_spec_example_loads() -> None:
    model = load_model(json.dumps(SPEC_EXAMPLE))
    assert model.n_layers == 16 + 7 + 48 + 1
    assert model.mixers[16].kind == "mla" and model.mixers[-1].kind == "mlp"
    assert kv_cache_bytes(model, 10) == (16 * 2 * 4 * 256 + 7 * 576) * 2 * 10
    assert state_bytes(model) == 48 * (48 * 128 * 128 + 10240 * 3) * 4
    assert cache_report(model, 10)["full_attention_kv_bytes"] == 71 * 2 * 4 * 256 * 2 * 10


@pytest.mark.parametrize("config, message", [
    ({"name": "x", "layers": [{"kind": "attention", "kv_heads": 2}]}, r"^layers\[0\]\.head_dim: missing"),
    ({"name": "x", "layers": [{"kind": "mlp"}, {"kind": "attention", "kv_heads": -2, "head_dim": 4}]},
     r"^layers\[1\]\.kv_heads: expected a positive integer, got -2"),
    ({"name": "x", "layers": [{"kind": "conv"}]}, r"^layers\[0\]\.kind: unknown kind 'conv'; accepted: attention"),
    ({"name": "x", "layers": [{"kind": "mlp", "count": 0}]}, r"^layers\[0\]\.count: expected a positive"),
    ({"name": "x", "layers": [{"kind": "mlp", "heads": 3}]}, r"^layers\[0\]\.heads: unknown field"),
    ({"name": "x", "layers": [{"kind": "mlp", "parallel": True}]}, r"^layers\[0\]\.parallel"),
    ({"name": "x", "layers": [{"kind": "recurrent", "state_shape": [4, 0]}]},
     r"^layers\[0\]\.state_shape\[1\]: expected a positive integer"),
    ({"name": "x", "layers": [{"kind": "recurrent", "state_shape": [4], "conv_kernel": 4}]},
     r"^layers\[0\]\.conv_channels: missing"),
    ({"name": "x", "layers": [{"kind": "mla", "latent_dim": 4, "heads": 2}]},
     r"^layers\[0\]\.qk_head_dim: missing"),
    ({"name": "x", "layers": [{"kind": "attention", "kv_heads": 1, "head_dim": 8, "window": 0}]},
     r"^layers\[0\]\.window"),
    ({"name": "x", "layers": []}, r"^layers: expected a non-empty list"),
    ({"layers": [{"kind": "mlp"}]}, r"^name: expected a non-empty string"),
    ('{"name": "x", "layers": [', r"^config: not valid JSON"),
])
def test_bad_configs_name_the_field(config, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_model(config)


@pytest.mark.parametrize("call, message", [
    (lambda: kv_cache_bytes("gpt-9", 10), r"^model: unknown value 'gpt-9'; accepted: llama-3-8b"),
    (lambda: kv_cache_bytes("llama-3-8b", -1), r"^tokens: expected an integer ≥ 0"),
    (lambda: kv_cache_bytes("llama-3-8b", 10, batch=0), r"^batch: expected a positive integer"),
    (lambda: kv_cache_bytes("llama-3-8b", 10, kv_dtype="int4"), r"^kv_dtype: unknown value 'int4'"),
    (lambda: state_bytes("llama-3-8b", state_dtype="fp64"), r"^state_dtype: unknown value"),
    (lambda: cache.memory_curve("llama-3-8b", [1.5, 2]), r"^tokens: expected"),
])
def test_bad_calculator_arguments(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_format_bytes() -> None:
    assert cache.format_bytes(4 * GiB) == "4 GiB"
    assert cache.format_bytes(131072) == "128 KiB"
    assert cache.format_bytes(12) == "12 B"
    assert math.isclose(cache.DTYPE_BYTES["bf16"], 2)


@pytest.mark.parametrize("call, message", [
    (lambda: cache.mixer_kv_bytes(float("nan"), 10), r"^mixer: expected a sim.cache.Mixer"),
    (lambda: cache.mixer_kv_bytes("attention", 10), r"^mixer: expected a sim.cache.Mixer"),
    (lambda: cache.parse_model_text(cache.model_to_json(PRESETS["llama-3-8b"]),
                                    source=np.ones(3)), r"^source: expected text or None"),
    (lambda: load_model({"name": "x", "layers": [{"kind": "attention", "kv_heads": 1,
                                                  "head_dim": 8}]}, source=float("nan")),
     r"^source: expected text or None, got nan"),
])
def test_mixer_and_source_are_refused_by_name(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
    mixer = PRESETS["llama-3-8b"].groups[0].mixer
    assert cache.mixer_kv_bytes(mixer, 10) == 10 * 2 * 8 * 128 * 2  # K and V, 8 heads × 128, bf16
