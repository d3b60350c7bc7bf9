"""Reading a Hugging Face config.json: the field reader and the table of families, shared by
`sim.hf_config` (config → the cache's `Model`) and `sim.weights` (config → `ParameterCount`).

    config = parse_config(text)          # text, bytes or dict → dict, refused with one line
    prefix, inner = unwrap(config)       # a multimodal wrapper's text_config
    family = recognise(inner)            # model_type, architectures or the mamba_ssm layout
    r = Reader(inner)                    # r.int("hidden_size"), r.head_dim(), r.kv_heads() …

`FAMILIES` is the one list of families; `MODEL_TYPES` and `ARCHITECTURES` the other spellings
that name them. A `Reader` remembers every field it read (used), every figure it derived and
every default it took, for the report.
"""

from __future__ import annotations

from typing import Any

from .cache import MAX_DIM, MAX_MIXERS
from .user_input import check_int, describe_value, parse_json_text

# The largest config.json read: published files are 1–10 KB, NVIDIA's quantised re-releases
# list every layer in quantization_config (88.6 kB for Qwen3.6-27B-NVFP4, up to 3.1 MB).
MAX_CONFIG_BYTES = 8 * 2**20


class Reader:
    """Reads fields of one config object, remembering every field it used.

    `prefix` is the object's path in the file ("" at the top, "ssm_cfg." inside ssm_cfg), so
    every message and every report line names a nested field by its full path."""

    def __init__(self, config: dict[str, Any], prefix: str = "") -> None:
        self.config = config
        self.prefix = prefix
        self.used: list[str] = []
        self.derived: list[str] = []
        self.defaults: list[str] = []

    def path(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def sub(self, key: str) -> Reader:
        """A reader for the nested object `key`, sharing this reader's lists."""
        value = self.raw(key)
        if not isinstance(value, dict):
            raise ValueError(f"{self.path(key)}: expected an object, got {describe_value(value)}")
        child = Reader(value, f"{self.path(key)}.")
        child.used, child.derived, child.defaults = self.used, self.derived, self.defaults
        return child

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def raw(self, key: str) -> Any:
        self.used.append(self.path(key))
        return self.config.get(key)

    def int(self, key: str, *, low: int = 1, high: int = MAX_DIM, default: int | None = None,
            why: str = "") -> int:
        """An integer field; `default` (with `why`) when absent, else a missing-field error."""
        if self.config.get(key) is None:
            if default is None:
                raise ValueError(f"{self.path(key)}: missing; this architecture needs it")
            self.defaults.append(f"{self.path(key)} = {default} ({why})")
            return default
        self.used.append(self.path(key))
        return check_int(self.path(key), self.config[key], low, high)

    def bool(self, key: str, default: bool, why: str) -> bool:
        """A true/false field; `default` (reported with `why`) when absent."""
        if key not in self.config or self.config[key] is None:
            self.defaults.append(f"{self.path(key)} = {str(default).lower()} ({why})")
            return default
        self.used.append(self.path(key))
        value = self.config[key]
        if not isinstance(value, bool):
            raise ValueError(f"{self.path(key)}: expected true or false, got {describe_value(value)}")
        return value

    def first(self, *keys: str, **options: Any) -> int:
        """The first of several spellings of one field that is present (e.g. head_dim,
        attention_head_dim)."""
        for key in keys:
            if self.has(key):
                return self.int(key)
        return self.int(keys[0], **options)

    def derive(self, text: str, value: int) -> int:
        self.derived.append(f"{text} = {value}")
        return value

    def quotient(self, text: str, num_key: str, num: int, den_key: str, den: int) -> int:
        """num / den for a derived size; refused naming both fields unless it divides exactly
        (`hidden_size` below the head count would otherwise give a size of 0)."""
        if num % den:
            raise ValueError(
                f"{self.path(num_key)}: {num:,} is not a multiple of {self.path(den_key)} "
                f"{den:,}, so {text} is not a whole number; give the size explicitly or fix "
                "one of the two")
        return self.derive(text, num // den)

    def list(self, key: str, length: int | None = None, length_key: str | None = None) -> list[Any]:
        """A list field; with `length`, it must have that many entries (`length_key` is the
        field that says so, named beside this one when they disagree)."""
        value = self.raw(key)
        if not isinstance(value, list):
            raise ValueError(f"{self.path(key)}: expected a list, got {describe_value(value)}")
        if len(value) > MAX_MIXERS:  # no list in a config.json lists more than its layers
            raise ValueError(f"{self.path(key)}: {len(value):,} entries is too many; accepted: "
                             f"at most {MAX_MIXERS:,}")
        if length is not None and len(value) != length:
            because = f" as {self.path(length_key)} = {length} says" if length_key else ""
            raise ValueError(f"{self.path(key)}: has {len(value):,} entries but {length:,} are "
                             f"needed{because}; the two fields contradict each other")
        return value

    def head_dim(self, *spellings: str) -> int:
        """head_dim (or the first of `spellings` present), else hidden_size /
        num_attention_heads, derived and reported."""
        for key in (*spellings, "head_dim"):
            if self.has(key):
                return self.int(key)
        hidden, heads = self.int("hidden_size"), self.int("num_attention_heads")
        return self.quotient("head_dim = hidden_size / num_attention_heads", "hidden_size", hidden,
                             "num_attention_heads", heads)

    def kv_heads(self, heads_key: str = "num_attention_heads") -> int:
        """num_key_value_heads, which must divide the attention heads (grouped-query attention
        shares each KV head among num_attention_heads / num_key_value_heads query heads)."""
        if not self.has("num_key_value_heads"):
            return self.derive(f"num_key_value_heads = {heads_key} (no grouping)",
                               self.int(heads_key))
        kv = self.int("num_key_value_heads")
        if self.has(heads_key):
            heads = self.int(heads_key)
            if kv > heads or heads % kv:
                raise ValueError(
                    f"{self.path('num_key_value_heads')}: {kv:,} KV heads cannot serve "
                    f"{self.path(heads_key)} = {heads:,} query heads; accepted: a divisor of "
                    f"{heads:,} (at most {heads:,})")
        return kv


# Decoder-only transformers: attention in every layer (sim.hf_config and sim.weights read them
# with one builder and one counter).
DECODERS: tuple[str, ...] = (
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
    "gemma3_text", "phi3", "gpt_oss", "deepseek_v3")
# Every family, in the order the model box lists them. Each has a builder in sim.hf_config
# (`_BUILDERS`) and a counter in sim.weights (`_COUNTERS`); tests/sim/test_sim_families.py holds
# both tables to this one.
FAMILIES: tuple[str, ...] = (
    *DECODERS, "mamba2", "jamba", "zamba2", "recurrent_gemma", "qwen3_next", "qwen3_5_text",
    "kimi_linear", "minimax", "nemotron_h", "falcon_h1", "granitemoehybrid", "lfm2")
MODEL_TYPES: dict[str, str] = {family: family for family in FAMILIES} | {
    "minimax_text_01": "minimax", "mamba_ssm": "mamba2", "qwen3_5_moe_text": "qwen3_5_text"}
# Wrappers whose language model sits in text_config (multimodal checkpoints).
WRAPPERS = ("text_config",)
ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "GemmaForCausalLM": "gemma",
    "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
    "Phi3ForCausalLM": "phi3", "GptOssForCausalLM": "gpt_oss",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "Mamba2ForCausalLM": "mamba2", "JambaForCausalLM": "jamba",
    "Zamba2ForCausalLM": "zamba2", "RecurrentGemmaForCausalLM": "recurrent_gemma",
    "Qwen3NextForCausalLM": "qwen3_next", "KimiLinearForCausalLM": "kimi_linear",
    "MiniMaxText01ForCausalLM": "minimax", "MiniMaxForCausalLM": "minimax",
    "NemotronHForCausalLM": "nemotron_h", "FalconH1ForCausalLM": "falcon_h1",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid", "Lfm2ForCausalLM": "lfm2"}


def recognise(config: dict[str, Any]) -> str:
    """The family of a config.json: model_type first, then architectures, then the mamba_ssm
    layout. Raises one line naming model_type and the supported ones otherwise."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in MODEL_TYPES:
        return MODEL_TYPES[model_type]
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        for name in architectures[:100]:
            if isinstance(name, str) and name in ARCHITECTURES:
                return ARCHITECTURES[name]
    if "ssm_cfg" in config and "n_layer" in config:
        return "mamba2"
    found = describe_value(model_type) if model_type is not None else "none"
    raise ValueError(f"model_type: unknown architecture {found}; recognised: "
                     f"{', '.join(sorted(MODEL_TYPES))} (or architectures); others part by part")


def unwrap(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(path prefix, the language model's config): a multimodal wrapper's text_config when the
    top level is not itself a recognised family and has no layers of its own."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    if config.get("model_type") not in MODEL_TYPES:
        for key in WRAPPERS:
            inner = config.get(key)
            if isinstance(inner, dict) and (inner.get("model_type") in MODEL_TYPES or (
                    "num_hidden_layers" not in config and "hidden_size" in inner)):
                return f"{key}.", inner
    return "", config


def family_of(config: dict[str, Any]) -> tuple[str, bool]:
    """(family, known): a family of FAMILIES, else the file's own model_type to be read part
    by part (sim.hf_parts) when the file has the sizes every decoder gives."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    try:
        return recognise(config), True
    except ValueError as error:
        model_type = config.get("model_type")
        foreign = [key for key in config if isinstance(key, str)
                   and key.startswith(_FOREIGN_PARTS)][:4]
        if foreign:  # parts the part-by-part reader does not know: name them, never guess
            raise ValueError(f"{error}; read part by part, its fields name parts not known "
                             f"here: {', '.join(foreign)}") from None
        if (isinstance(model_type, str) and 0 < len(model_type) <= 64 and model_type.isprintable()
                and all(key in config for key in ("hidden_size", "num_attention_heads"))
                and ("num_hidden_layers" in config or "block_configs" in config)):
            return model_type, False
        raise


# Field prefixes of mixers the part-by-part reader (sim.hf_parts) does not interpret: Mamba and
# other state-space layers, Jamba's periods, the family-specific layer patterns.
_FOREIGN_PARTS = ("mamba_", "ssm_", "attn_layer_", "expert_layer_", "hybrid_override_pattern",
                  "layers_block_type", "linear_attn_config", "block_types", "_block_types",
                  "attn_type_list", "lru_width", "conv_L_cache", "time_step_", "d_state",
                  "state_size")


def parse_config(config: Any) -> dict[str, Any]:
    """A config.json's text (or bytes, or parsed dict) → the dict; an empty file, a file of
    white space or anything but an object is refused with one line."""
    if isinstance(config, (str, bytes, bytearray)):
        head = config[:MAX_CONFIG_BYTES + 1]  # longer texts are refused by parse_json_text
        blank = (head.lstrip("\ufeff").strip() if isinstance(head, str)
                 else bytes(head).removeprefix(b"\xef\xbb\xbf").strip())
        if len(head) <= MAX_CONFIG_BYTES and not blank:
            raise ValueError("config.json: the file is empty; expected a JSON object with "
                             "model_type and the model's sizes")
        config = parse_json_text(config, "config.json", max_bytes=MAX_CONFIG_BYTES)
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    if not config:
        raise ValueError("config.json: the object is empty ({}); expected model_type and the "
                         "model's sizes")
    return config
