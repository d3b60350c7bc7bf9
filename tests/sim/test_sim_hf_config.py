"""Hugging Face config.json → the same breakdown as the preset; block rounding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sim_helpers

from sim.cache import PRESETS, cache_report, kv_cache_bytes, load_model, memory_curve
from sim.hf_config import from_hf_config

FIXTURES = Path(__file__).parent / "hf_configs"


def _pattern(report: dict) -> list[tuple]:
    return [(r["layer"], r["kind"], r["label"], r["kv_bytes"], r["state_bytes"])
            for r in report["per_layer"]]


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_presets_config_json_gives_the_presets_figures(key: str) -> None:
    model, report = from_hf_config((FIXTURES / f"{key}.json").read_text())
    preset = PRESETS[key]
    assert model.n_layers == preset.n_layers
    for tokens, batch in ((1, 1), (123_457, 3)):
        ours, theirs = cache_report(model, tokens, batch), cache_report(preset, tokens, batch)
        for field in ("kv_bytes_per_token", "kv_cache_bytes", "state_bytes",
                      "mla_expanded_kv_bytes", "full_attention_kv_bytes"):
            assert ours[field] == theirs[field], field
        assert _pattern(ours) == _pattern(theirs)
    assert report["used"] and set(report["used"]).isdisjoint(report["ignored"])
    assert "vocab_size" in report["ignored"] or key == "mamba-2-2.7b"


def test_report_names_used_derived_defaulted_and_ignored_fields() -> None:
    _, report = from_hf_config((FIXTURES / "jamba-v0.1.json").read_text())
    assert report["family"] == "jamba"
    assert {"attn_layer_period", "attn_layer_offset", "mamba_d_state", "num_key_value_heads"} <= set(
        report["used"])
    assert "head_dim = hidden_size / num_attention_heads = 128" in report["derived"]
    assert "num_experts" in report["ignored"] and "torch_dtype" not in report["ignored"]
    _, report = from_hf_config((FIXTURES / "mamba-2-2.7b.json").read_text())
    assert "ssm_cfg.headdim = 64 (mamba_ssm Mamba2 default)" in report["defaults"]


@pytest.mark.parametrize("change, message", [
    ({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]},
     r"^model_type: unknown architecture 'gpt2'; recognised: deepseek_v3, falcon_h1"),
    ({"num_key_value_heads": 2**40}, r"^num_key_value_heads: 1099511627776 is too large"),
    ({"attn_layer_period": None}, r"^attn_layer_period: missing"),
    ({"sliding_window": 4096}, r"^sliding_window: 4096 is not interpreted for jamba"),
    ({"num_hidden_layers": 10**30}, r"^num_hidden_layers: 1000000000000000000000000000000 is too"),
])
def test_uninterpretable_fields_are_named_not_guessed(change: dict, message: str) -> None:
    config = {**json.loads((FIXTURES / "jamba-v0.1.json").read_text()), **change}
    with pytest.raises(ValueError, match=message):
        from_hf_config(config)


def test_unknown_layer_kinds_and_patterns_are_named() -> None:
    qwen = json.loads((FIXTURES / "qwen3-next-80b-a3b.json").read_text())
    qwen["layer_types"] = ["linear_attention"] * 47 + ["sliding_attention"]
    with pytest.raises(ValueError, match=r"^layer_types\[47\]: cannot interpret 'sliding_attention'"):
        from_hf_config(qwen)
    nemotron = json.loads((FIXTURES / "nemotron-h-8b.json").read_text())
    nemotron["hybrid_override_pattern"] = "M-<img>" + "M" * 45
    with pytest.raises(ValueError, match=r"^hybrid_override_pattern\[2\]: cannot interpret '<'"):
        from_hf_config(nemotron)
    kimi = json.loads((FIXTURES / "kimi-linear-48b-a3b.json").read_text())
    kimi["linear_attn_config"]["full_attn_layers"] = [0, 4]
    with pytest.raises(ValueError, match=r"^linear_attn_config\.full_attn_layers\[0\]: expected a "
                                         r"positive integer, got 0"):
        from_hf_config(kimi)


def test_hf_text_has_the_same_limits() -> None:
    text = (FIXTURES / "nemotron-h-8b.json").read_text()
    model, report = from_hf_config(text[:-2] + ', "time_step_limit": [0.0, Infinity]}')
    assert model.n_layers == 52 and "time_step_limit" in report["ignored"]
    with pytest.raises(ValueError, match=r"^config\.json: nested more than 32 levels deep"):
        from_hf_config("[" * 40 + "]" * 40)
    with pytest.raises(ValueError, match=r"^num_hidden_layers: a number written with 5,000"):
        from_hf_config('{"model_type": "llama", "num_hidden_layers": ' + "9" * 5000 + "}")
    multimodal = {"model_type": "llava", "text_config": json.loads(
        (FIXTURES / "llama-3-8b.json").read_text())}
    model, report = from_hf_config(multimodal)
    assert model.n_layers == 32 and "text_config.num_key_value_heads" in report["used"]


# --- block rounding --------------------------------------------------------------------------

def test_block_rounding_worked_numbers() -> None:
    # Llama-3-8B: 128 KiB per token. 100 tokens in blocks of 16 hold 112 tokens.
    assert kv_cache_bytes("llama-3-8b", 100, block_tokens=16) == 112 * 131_072
    assert kv_cache_bytes("llama-3-8b", 112, block_tokens=16) == 112 * 131_072
    assert kv_cache_bytes("llama-3-8b", 0, block_tokens=16) == 0
    # RecurrentGemma: the window 2048 is already whole blocks of 16; 2050 tokens stay at 2048,
    # but blocks of 1000 round the window up to 3000 tokens per layer.
    gemma_token = 8 * 2 * 1 * 256 * 2
    assert kv_cache_bytes("recurrentgemma-2b", 2050, block_tokens=16) == 2048 * gemma_token
    assert kv_cache_bytes("recurrentgemma-2b", 2050, block_tokens=1000) == 3000 * gemma_token
    # Kimi Linear: 7 MLA layers × 576 × 2 bytes; 17 tokens → 32 in blocks of 16
    assert kv_cache_bytes("kimi-linear-48b-a3b", 17, block_tokens=16) == 7 * 576 * 2 * 32
    report = cache_report("llama-3-8b", 100, batch=2, block_tokens=16)
    assert report["kv_cache_bytes"] == 2 * 100 * 131_072
    assert report["kv_cache_bytes_in_blocks"] == 2 * 112 * 131_072 and report["block_tokens"] == 16
    assert cache_report("llama-3-8b", 100)["kv_cache_bytes_in_blocks"] is None
    curve = memory_curve("llama-3-8b", [1, 16, 17], block_tokens=16)
    assert curve["kv_cache_bytes"].tolist() == [16 * 131_072, 16 * 131_072, 32 * 131_072]
    with pytest.raises(ValueError, match=r"^block_tokens: expected a positive integer, got 0"):
        kv_cache_bytes("llama-3-8b", 10, block_tokens=0)


def test_block_rounding_equals_a_plain_per_layer_sum() -> None:
    model = load_model({"name": "m", "layers": [
        {"kind": "attention", "kv_heads": 2, "head_dim": 8, "window": 50, "count": 3},
        {"kind": "mla", "latent_dim": 24}, {"kind": "recurrent", "state_shape": [4]}]})
    for tokens in (0, 1, 49, 50, 51, 1000):
        for block in (1, 7, 16, 64):
            plain = sum(m.kv_bytes_per_token(2) * -(-min(tokens, m.window or tokens) // block)
                        * block for m in model.mixers)
            assert kv_cache_bytes(model, tokens, block_tokens=block) == plain


# --- the command line ---------------------------------------------------------------------------

sim_cli = sim_helpers.sim_cli  # `python -m sim ARGS` in-process


def test_cli_hf_config_prints_the_presets_table_and_the_fields(sim_cli) -> None:
    ours = sim_cli("cache", "--hf-config", str(FIXTURES / "jamba-v0.1.json"), "--tokens", "262144")
    theirs = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "262144")
    assert ours.returncode == 0, ours.stderr
    table = ours.stdout.split("\n", 1)[1]  # the first line names the model
    assert table.startswith(theirs.stdout.split("\n", 1)[1].rstrip("\n"))
    assert "(4,294,967,296 bytes)" in ours.stdout
    assert "config.json read as jamba" in ours.stdout and "attn_layer_period" in ours.stdout
    assert "ignored (no effect on the cache):" in ours.stdout


def test_cli_block_option(sim_cli) -> None:
    result = sim_cli("cache", "--model", "llama-3-8b", "--tokens", "100", "--block")
    assert result.returncode == 0, result.stderr
    assert "in 16-token blocks:" in result.stdout and "(14,680,064 bytes)" in result.stdout
    result = sim_cli("cache", "--model", "llama-3-8b", "--tokens", "100", "--block", "64", "--json")
    assert json.loads(result.stdout)["kv_cache_bytes_in_blocks"] == 128 * 131_072


def test_cli_hf_config_errors_are_one_line(tmp_path: Path, sim_cli) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"model_type": "qwen3_next", "num_hidden_layers": 48}))
    result = sim_cli("cache", "--hf-config", str(bad), "--tokens", "5")
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == ["error: full_attention_interval: missing; this "
                                          "architecture needs it"]


def test_granite_layer_kinds_in_transformers_5_names_give_the_same_model() -> None:
    # transformers 5 re-saves "mamba" / "attention" as "linear_attention" / "full_attention"
    # (_LEGACY_LAYER_TYPE_REMAP) and names the field layers_block_type as well
    config = json.loads((Path(__file__).parent / "hf_configs" / "granite-4.0-h-small.json")
                        .read_text())
    model, _ = from_hf_config(config)
    names = {"mamba": "linear_attention", "attention": "full_attention"}
    renamed = [names[x] for x in config["layer_types"]]
    for variant in (config | {"layer_types": renamed},
                    {k: v for k, v in config.items() if k != "layer_types"}
                    | {"layers_block_type": renamed}):
        other, _ = from_hf_config(variant)
        assert cache_report(other, 4096)["per_layer"] == cache_report(model, 4096)["per_layer"]
    assert [g.mixer.kind for g in model.groups].count("attention") == 4
    with pytest.raises(ValueError, match=r"^layer_types\[0\]: cannot interpret 'conv'"):
        from_hf_config(config | {"layer_types": ["conv"] + config["layer_types"][1:]})
