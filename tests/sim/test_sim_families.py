"""More families from config.json (issue 22): each fixture in hf_configs/ with hand-worked figures.

Bytes per token of one attention layer: 2 · kv_heads · head_dim · 2 (bf16); a sliding layer holds
at most `sliding_window` tokens; recurrent state in fp32 (sim.cache's default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cache import cache_report
from sim.hf_config import context_note, from_hf_config
from sim.hf_reader import FAMILIES
from sim.weights import parameter_count

FIXTURES = Path(__file__).parent / "hf_configs"


def _load(name: str) -> tuple:
    text = (FIXTURES / f"{name}.json").read_text()
    model, report = from_hf_config(text)
    return model, report, text


def _windows(model) -> list:
    return [m.window for m in model.mixers if m.kind == "attention"]


def test_mistral_slides_in_every_layer() -> None:
    model, report, text = _load("mistral-7b-v0.1")
    assert report["family"] == "mistral" and _windows(model) == [4096] * 32
    per_layer = 2 * 8 * 128 * 2
    assert cache_report(model, 100_000)["kv_cache_bytes"] == 32 * per_layer * 4096
    assert cache_report(model, 1000)["kv_cache_bytes"] == 32 * per_layer * 1000
    # 7.24B: embeddings 2·32000·4096, per layer 4096·4096·2 + 2·4096·1024 + 3·4096·14336 + 2·4096
    layer = 4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert parameter_count(text).total == 2 * 32000 * 4096 + 32 * layer + 4096 == 7_241_732_096


def test_qwen2_and_qwen3_plain_attention() -> None:
    model, report, text = _load("qwen2-7b")  # use_sliding_window false: no window
    assert report["family"] == "qwen2" and _windows(model) == [None] * 28
    assert cache_report(model, 10)["kv_bytes_per_token"] == 28 * 2 * 4 * 128 * 2
    # q, k, v biases (Qwen2), head_dim 3584 / 28 = 128
    attention = 3584 * 3584 * 2 + 2 * 3584 * 512 + 3584 + 2 * 512
    layer = attention + 3 * 3584 * 18944 + 2 * 3584
    assert parameter_count(text).total == 2 * 152064 * 3584 + 28 * layer + 3584
    assert "head_dim = hidden_size / num_attention_heads = 128" in report["derived"]
    slid = json.loads(text) | {"use_sliding_window": True, "max_window_layers": 20,
                               "sliding_window": 4096}
    assert _windows(from_hf_config(slid)[0]) == [None] * 20 + [4096] * 8
    model, report, text = _load("qwen3-8b")
    assert cache_report(model, 10)["kv_bytes_per_token"] == 36 * 2 * 8 * 128 * 2
    layer = 4096 * 4096 * 2 + 2 * 4096 * 1024 + 2 * 128 + 3 * 4096 * 12288 + 2 * 4096  # q/k norms
    assert parameter_count(text).total == 2 * 151936 * 4096 + 36 * layer + 4096 == 8_190_735_360


def test_gemma2_and_gemma3_local_and_global_layers() -> None:
    model, report, text = _load("gemma-2-9b")
    assert _windows(model) == [4096, None] * 21  # even layers slide
    per_layer = 2 * 8 * 256 * 2
    assert cache_report(model, 100_000)["kv_cache_bytes"] == 21 * per_layer * (100_000 + 4096)
    layer = 3584 * 4096 * 2 + 2 * 3584 * 2048 + 3 * 3584 * 14336 + 4 * 3584  # 4 norms, tied
    assert parameter_count(text).total == 256000 * 3584 + 42 * layer + 3584 == 9_241_705_984
    model, report, _ = _load("gemma-3-12b")  # wrapped in text_config
    assert report["family"] == "gemma3_text" and "text_config.sliding_window" in report["used"]
    assert _windows(model) == ([1024] * 5 + [None]) * 8  # every 6th layer global
    assert "text_config.sliding_window_pattern = 6 (Gemma3TextConfig default)" in report["defaults"]
    assert cache_report(model, 131_072)["kv_cache_bytes"] == per_layer * (40 * 1024 + 8 * 131_072)


def test_phi3_window_and_parameters() -> None:
    model, _, text = _load("phi-3-mini-4k")
    assert _windows(model) == [2047] * 32
    assert cache_report(model, 4096)["kv_cache_bytes"] == 32 * 2 * 32 * 96 * 2 * 2047
    layer = 4 * 3072 * 3072 + 3 * 3072 * 8192 + 2 * 3072
    assert parameter_count(text).total == 2 * 32064 * 3072 + 32 * layer + 3072 == 3_821_079_552


def test_deepseek_v3_mla_and_published_totals() -> None:
    model, report, text = _load("deepseek-v3")
    assert [m.kind for m in model.mixers] == ["mla"] * 61
    assert cache_report(model, 1)["kv_bytes_per_token"] == 61 * (512 + 64) * 2
    count = parameter_count(text)
    H, nh = 7168, 128
    mla = (H * 1536 + 1536 + 1536 * nh * 192 + H * 576 + 512 + 512 * nh * 256 + nh * 128 * H)
    moe = 256 * H + 256 * 3 * H * 2048 + 3 * H * 2048
    total = 2 * 129280 * H + H + 61 * (mla + 2 * H) + 3 * 3 * H * 18432 + 58 * moe
    assert count.total == total and count.active == total - 58 * 248 * 3 * H * 2048
    assert round(count.total / 1e9) == 671 and round(count.active / 1e9) == 38  # "671B, 37B"


def test_gpt_oss_sliding_and_full_layers() -> None:
    model, _, text = _load("gpt-oss-20b")
    assert _windows(model) == [128, None] * 12
    per_layer = 2 * 8 * 64 * 2
    assert cache_report(model, 100_000)["kv_cache_bytes"] == 12 * per_layer * (100_000 + 128)
    H, I, E = 2880, 2880, 32  # noqa: E741
    attention = H * 4096 + 4096 + 2 * (H * 512 + 512) + 4096 * H + H + 64  # biases, sinks
    experts = E * ((H + 1) * 2 * I + (I + 1) * H)  # gate_up and down with their biases
    layer = attention + E * (H + 1) + experts + 2 * H
    count = parameter_count(text)
    assert count.total == 2 * 201088 * H + H + 24 * layer == 20_914_757_184  # "21B"
    assert count.active == count.total - 24 * (E - 4) * experts // E


def test_granite_4_h_mamba2_hybrid() -> None:
    model, report, _ = _load("granite-4.0-h-small")
    assert report["family"] == "granitemoehybrid"
    assert [m.layer for m in model.mixers if m.kind == "attention"] == [5, 15, 25, 35]
    r = cache_report(model, 1000)
    assert r["kv_cache_bytes"] == 4 * 2 * 8 * 128 * 2 * 1000  # head_dim 4096 / 32
    conv = (8192 + 2 * 1 * 128) * 3  # d_inner = 2 · 4096, one group, d_state 128
    assert r["state_bytes"] == 36 * (128 * 64 * 128 + conv) * 4


def test_qwen3_5_hybrid_in_text_config() -> None:
    model, report, text = _load("qwen3.5-27b")
    assert report["family"] == "qwen3_5_text"
    assert [m.layer for m in model.mixers if m.kind == "attention"] == list(range(3, 64, 4))
    r = cache_report(model, 1000)
    assert r["kv_bytes_per_token"] == 16 * 2 * 4 * 256 * 2
    assert r["state_bytes"] == 48 * (48 * 128 * 128 + (2 * 16 * 128 + 48 * 128) * 3) * 4
    assert report["max_context"] == 262_144 and report["max_context_field"] == (
        "text_config.max_position_embeddings")


def test_lfm2_short_convolutions_and_attention() -> None:
    model, report, _ = _load("lfm2-1.2b")
    assert [m.layer for m in model.mixers if m.kind == "attention"] == [2, 5, 8, 10, 12, 14]
    r = cache_report(model, 1000)
    assert r["kv_cache_bytes"] == 6 * 2 * 8 * 64 * 2 * 1000  # head_dim 2048 / 32
    assert r["state_bytes"] == 10 * 2048 * (3 - 1) * 4  # the last L − 1 inputs per channel


@pytest.mark.parametrize("resaved, original", [
    ("recurrentgemma-2b-published", "recurrentgemma-2b"),
    ("zamba2-2.7b-transformers5", "zamba2-2.7b"),
    ("nemotron-h-8b-transformers5", "nemotron-h-8b"),
])
def test_both_spellings_give_the_same_model(resaved: str, original: str) -> None:
    ours, theirs = _load(resaved)[0], _load(original)[0]
    for tokens in (1, 50_000):
        a, b = cache_report(ours, tokens, 2), cache_report(theirs, tokens, 2)
        assert [(r["kind"], r["kv_bytes"], r["state_bytes"]) for r in a["per_layer"]] == [
            (r["kind"], r["kv_bytes"], r["state_bytes"]) for r in b["per_layer"]]


def test_context_beyond_the_models_maximum_is_marked() -> None:
    _, report, _ = _load("llama-3-8b")
    assert report["max_context"] == 8192
    assert context_note(report, 8192) is None
    note = context_note(report, 8193)
    assert note.startswith("8,193 tokens is beyond the model's own maximum of 8,192")


def test_an_unknown_family_gets_one_line_naming_model_type() -> None:
    with pytest.raises(ValueError) as error:
        from_hf_config({"model_type": "bloom", "n_layer": 2})
    message = str(error.value)
    assert message.startswith("model_type: unknown architecture 'bloom'; recognised: ")
    assert "\n" not in message and all(family in message for family in FAMILIES)


def test_a_window_without_its_layers_is_refused_not_guessed() -> None:
    llama = json.loads((FIXTURES / "llama-3-8b.json").read_text()) | {"sliding_window": 4096}
    with pytest.raises(ValueError, match=r"^sliding_window: 4096 is not interpreted for llama "
                                         r"without layer_types"):
        from_hf_config(llama)
    llama["layer_types"] = ["sliding_attention", "full_attention"] * 16
    assert _windows(from_hf_config(llama)[0]) == [4096, None] * 16
    oss = json.loads((FIXTURES / "gpt-oss-20b.json").read_text())
    del oss["layer_types"]
    assert _windows(from_hf_config(oss)[0]) == [128, None] * 12


def test_one_family_table() -> None:
    """sim.hf_reader.FAMILIES is the one list: every family has a builder (the cache) and a
    counter (the weights), in its order, and every other spelling names one of them."""
    from sim import hf_config, hf_reader, weights  # noqa: PLC0415

    assert tuple(hf_config._BUILDERS) == FAMILIES == tuple(weights._COUNTERS)
    assert weights.COUNTED_FAMILIES == FAMILIES
    assert set(hf_reader.DECODERS) < set(FAMILIES)
    assert set(hf_reader.MODEL_TYPES.values()) == set(FAMILIES)
    assert set(hf_reader.ARCHITECTURES.values()) <= set(FAMILIES)
