"""Issue 18: inputs that used to be read without a word are refused, naming the file's fields."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim import cache, engines, gpus, hf_config, user_input, weights
from sim.hf_config import from_hf_config

FIXTURES = Path(__file__).parent / "hf_configs"


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_more_kv_heads_than_attention_heads_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match=r"^num_key_value_heads: 64 KV heads cannot serve "
                                         r"num_attention_heads = 32 query heads"):
        from_hf_config({**_fixture("llama-3-8b"), "num_key_value_heads": 64})
    with pytest.raises(ValueError, match=r"^num_key_value_heads: 12 .* accepted: a divisor of 32"):
        from_hf_config({**_fixture("llama-3-8b"), "num_key_value_heads": 12})
    model, _ = from_hf_config({**_fixture("llama-3-8b"), "num_key_value_heads": 32})
    assert model.mixers[0].kv_heads == 32  # multi-head attention: every head its own KV


def test_hidden_size_below_the_head_count_names_the_files_fields() -> None:
    with pytest.raises(ValueError) as error:
        from_hf_config({**_fixture("llama-3-8b"), "hidden_size": 16})
    message = str(error.value)
    assert message.startswith("hidden_size: 16 is not a multiple of num_attention_heads 32")
    assert "layers[0]" not in message
    zamba = _fixture("zamba2-2.7b")
    with pytest.raises(ValueError, match=r"^hidden_size: 5,120 is not a multiple of "
                                         r"num_attention_heads 33"):
        from_hf_config({**zamba, "num_attention_heads": 33, "num_key_value_heads": 33})


@pytest.mark.parametrize("text", ["", "   \n", b"", "\ufeff"])
def test_an_empty_config_file_gets_a_message(text) -> None:
    with pytest.raises(ValueError, match=r"^config\.json: the file is empty"):
        from_hf_config(text)
    with pytest.raises(ValueError, match=r"^config\.json: the object is empty"):
        from_hf_config("{}")


def test_nested_fields_are_named_by_their_full_path() -> None:
    kimi = _fixture("kimi-linear-48b-a3b")
    kimi["linear_attn_config"]["num_heads"] = 0
    with pytest.raises(ValueError, match=r"^linear_attn_config\.num_heads: expected a positive"):
        from_hf_config(kimi)
    mamba = _fixture("mamba-2-2.7b")
    mamba["ssm_cfg"]["d_state"] = -1
    with pytest.raises(ValueError, match=r"^ssm_cfg\.d_state: expected a positive integer, got -1"):
        from_hf_config(mamba)
    mamba["ssm_cfg"] = {"headdim": 3000}
    with pytest.raises(ValueError, match=r"^ssm_cfg\.headdim: 3,000 does not divide d_inner"):
        from_hf_config(mamba)
    wrapped = {"model_type": "llava", "text_config": {**_fixture("llama-3-8b"),
                                                      "num_key_value_heads": 0}}
    with pytest.raises(ValueError, match=r"^text_config\.num_key_value_heads: expected a positive"):
        from_hf_config(wrapped)
    _, report = from_hf_config(_fixture("kimi-linear-48b-a3b"))
    assert "linear_attn_config.num_heads" in report["used"]


def test_fields_that_contradict_each_other_are_both_named() -> None:
    zamba = _fixture("zamba2-2.7b")
    zamba["hybrid_layer_ids"] = [5, 12, 18, 24, 30, 36, 42, 47, 51]
    with pytest.raises(ValueError, match=r"^layers_block_type, hybrid_layer_ids: the two fields "
                                         r"contradict each other \(first at layer 5\)"):
        from_hf_config(zamba)
    qwen = _fixture("qwen3-next-80b-a3b")
    qwen["layer_types"] = ["linear_attention"] * 46 + ["full_attention"] * 2
    with pytest.raises(ValueError, match=r"^layer_types, full_attention_interval: the two"):
        from_hf_config(qwen)
    qwen["layer_types"] = ["full_attention"] * 40
    with pytest.raises(ValueError, match=r"^layer_types: has 40 entries but 48 are needed as "
                                         r"num_hidden_layers = 48 says"):
        from_hf_config(qwen)
    falcon = {**_fixture("falcon-h1-7b"), "mamba_d_head": 64}
    with pytest.raises(ValueError, match=r"^mamba_n_heads, mamba_d_head: 24 × 64 = 1,536 "
                                         r"contradicts mamba_d_ssm = 3,072"):
        from_hf_config(falcon)
    jamba = {**_fixture("jamba-v0.1"), "attn_layer_offset": 9}
    with pytest.raises(ValueError, match=r"^attn_layer_offset: 9 is not below attn_layer_period 8"):
        from_hf_config(jamba)
    kimi = _fixture("kimi-linear-48b-a3b")
    kimi["linear_attn_config"]["kda_layers"] = [1, 2]
    with pytest.raises(ValueError, match=r"^linear_attn_config\.kda_layers, "
                                         r"linear_attn_config\.full_attn_layers: the two"):
        from_hf_config(kimi)
    nemotron = _fixture("nemotron-h-8b")
    nemotron["layers_block_type"] = ["mamba"] * 52
    with pytest.raises(ValueError, match=r"^hybrid_override_pattern, layers_block_type: the two"):
        from_hf_config(nemotron)
    # fuzz N13: without its pattern the file was told "layers_block_type: expected a list, got
    # null", a field it never had; the published spelling comes first, with the layers it has
    del nemotron["hybrid_override_pattern"], nemotron["layers_block_type"]
    with pytest.raises(ValueError, match=r"^hybrid_override_pattern: missing \(or "
                                         r"layers_block_type\); this architecture needs one of "
                                         r"them to know which of its 52 layers "
                                         r"\(num_hidden_layers\) are Mamba-2"):
        from_hf_config(nemotron)
    gemma = _fixture("recurrentgemma-2b")
    gemma["_block_types"] = ["attention"]
    with pytest.raises(ValueError, match=r"^block_types, _block_types: the two spellings"):
        from_hf_config(gemma)
    minimax = _fixture("minimax-text-01")
    minimax["layer_types"] = ["linear_attention"] * 80
    with pytest.raises(ValueError, match=r"^attn_type_list, layer_types: the two fields"):
        from_hf_config(minimax)


@pytest.mark.parametrize("value, kind, message", [
    (None, TypeError, r"^format_bytes: n must be a real number of bytes, got null"),
    ("5", TypeError, r"^format_bytes: n must be a real number of bytes, got '5'"),
    (1 + 2j, TypeError, r"^format_bytes: n must be a real number of bytes, got a complex"),
    (True, TypeError, r"^format_bytes: n must be a real number of bytes, got true"),
    (float("nan"), ValueError, r"^format_bytes: n must be a finite number of bytes, got nan"),
    (float("inf"), ValueError, r"^format_bytes: n must be a finite number of bytes, got inf"),
    (10**400, ValueError, r"^format_bytes: n = an integer of about 401 digits is out of range"),
])
def test_format_bytes_refuses_what_is_not_a_number_of_bytes(value, kind, message) -> None:
    with pytest.raises(kind, match=message):
        cache.format_bytes(value)


def test_format_bytes_still_formats() -> None:
    assert cache.format_bytes(2**32) == "4 GiB"
    assert cache.format_bytes(np.int64(131_072)) == "128 KiB"
    assert cache.format_bytes(1023.0) == "1023 B"


@pytest.mark.parametrize("call, message", [
    (lambda: cache.kv_cache_bytes("llama-3-8b", float("nan")), r"^tokens: expected an integer"),
    (lambda: cache.kv_cache_bytes("llama-3-8b", 1 + 1j), r"^tokens: expected an integer"),
    (lambda: cache.kv_cache_bytes("llama-3-8b", np.array([1 + 1j])), r"^tokens: expected"),
    (lambda: cache.kv_cache_bytes("llama-3-8b", "12"), r"^tokens: expected an integer"),
    (lambda: cache.kv_cache_bytes("llama-3-8b", 10, batch=2.0), r"^batch: expected a positive"),
    (lambda: cache.kv_cache_bytes("llama-3-8b", 2**41), r"^tokens: 2199023255552 is too large"),
    (lambda: cache.state_bytes("jamba-v0.1", batch=2**21), r"^batch: 2097152 is too large"),
    (lambda: cache.memory_curve("llama-3-8b", np.arange(2**21)), r"^tokens: 2,097,152 points"),
    (lambda: cache.PRESETS["llama-3-8b"].mixers[0].cached_tokens(-1), r"^tokens: expected"),
    (lambda: cache.PRESETS["llama-3-8b"].mixers[0].cached_tokens(5, 0), r"^block_tokens: expected"),
    (lambda: cache.PRESETS["llama-3-8b"].mixers[0].kv_bytes_per_token(3), r"^kv_bytes: expected"),
    (lambda: cache.model_to_json(cache.PRESETS["llama-3-8b"], 10**9), r"^indent: 1000000000 is"),
    (lambda: cache.model_to_dict("llama"), r"^model: expected a sim\.cache\.Model"),
    (lambda: user_input.printable(None), r"^text: expected a string, got null"),
    (lambda: user_input.printable("x" * (2**24 + 1)), r"^text: 16,777,217 characters is too"),
    (lambda: user_input.escape_unprintable("x", -1), r"^limit: expected an integer from 1"),
    (lambda: user_input.quote("x", 10**12), r"^limit: expected an integer from 2"),
    (lambda: user_input.check_text("p", "x", float("nan")), r"^limit: expected an integer"),
    (lambda: user_input.check_int("p", 1, 5, 2), r"^low, high: expected integers"),
    (lambda: user_input.check_int("p", 1 + 0j, 0, 2), r"^p: expected an integer, got a complex"),
    (lambda: user_input.check_int("p", float("nan"), 0, 2), r"^p: expected an integer, got nan"),
    (lambda: user_input.nesting_depth(b"[]"), r"^config: expected a string"),
    (lambda: hf_config.recognise([1]), r"^config\.json: expected an object, got a list"),
    (lambda: hf_config.context_note({"max_context": 10}, -5), r"^tokens: expected an integer"),
    (lambda: hf_config.unwrap("{}"), r"^config\.json: expected an object, got '\{\}'"),
    (lambda: hf_config.max_context(None), r"^config\.json: expected an object, got null"),
    (lambda: hf_config.parse_config(12), r"^config\.json: expected an object, got 12"),
    (lambda: gpus.engine_budget("tgi", 1, 0, 0), r"^engine: unknown value 'tgi'"),
    (lambda: gpus.engine_budget("vllm", 0, 0, 0), r"^memory_bytes: expected a positive"),
    (lambda: engines.vllm_state_dtypes(model_dtype="int4"), r"^model_dtype: unknown value"),
    (lambda: weights.parameter_count("[]"), r"^config\.json: expected an object, got a list"),
    (lambda: weights.parameter_report(5), r"^count: expected a ParameterCount"),
])
def test_public_functions_refuse_unworkable_arguments_by_name(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_lists_longer_than_any_model_are_refused_before_reading_them() -> None:
    zamba = _fixture("zamba2-2.7b")
    del zamba["layers_block_type"]
    zamba["hybrid_layer_ids"] = list(range(10_000))
    with pytest.raises(ValueError, match=r"^hybrid_layer_ids: 10,000 entries is too many; "
                                         r"accepted: at most 4,096"):
        from_hf_config(zamba)


@pytest.mark.parametrize("path", [np.ones((2, 3)), float("nan"), None, 3])
def test_key_path_refuses_a_path_that_is_not_text(path) -> None:
    with pytest.raises(ValueError, match=r"^path: expected a field path \(text, '' at the top\)"):
        user_input.key_path(path, "heads")
    assert user_input.key_path("layers[0]", "heads") == "layers[0].heads"
    assert user_input.key_path("", "heads") == "heads"
