"""A Hugging Face config.json → a `sim.cache.Model`, with a report of what was read.

    model, report = from_hf_config(text_or_dict)

The architecture is recognised from `model_type` (or `architectures`, or the mamba_ssm layout of
state-spaces checkpoints) for the families behind the presets:

    llama            attention in every layer: num_key_value_heads × head_dim
    mamba2 / mamba_ssm   Mamba-2 in every layer: heads × head_dim × d_state, conv d_inner + 2·g·N
    jamba            attention where i mod attn_layer_period = attn_layer_offset, else Mamba-1
                     (d_inner = mamba_expand · hidden_size, state d_inner × mamba_d_state)
    zamba2           Mamba-2 in every layer; shared attention joins the layers marked "hybrid"
                     in layers_block_type (or hybrid_layer_ids), each call with its own KV cache
    recurrent_gemma  block_types repeated over the layers; local attention with
                     attention_window_size; RG-LRU state lru_width, conv1d_width
    qwen3_next       layer_types, or full attention every full_attention_interval-th layer;
                     Gated DeltaNet linear_num_value_heads × linear_key_head_dim × linear_value_head_dim
    kimi_linear      linear_attn_config.full_attn_layers (1-based) are MLA (kv_lora_rank +
                     qk_rope_head_dim per token), the others KDA (num_heads × head_dim²)
    minimax          attn_type_list (1 = softmax attention) or layer_types; lightning attention
                     num_attention_heads × head_dim²
    nemotron_h       hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE) or
                     layers_block_type
    falcon_h1        attention and Mamba-2 side by side in every layer

The report says which fields were used, which figures were derived from others (e.g. head_dim
= hidden_size / num_attention_heads) or taken from the reference implementation's defaults,
and which fields were ignored (they do not change the cache). A field that matters but cannot
be interpreted raises a one-line ValueError naming it instead of a guess. Text goes through the
same limits as the model box (`sim.user_input`); sizes through the same bounds as `sim.cache`.
"""

from __future__ import annotations

from typing import Any

from .cache import MAX_DIM, MAX_MIXERS, MAX_TOKENS, Model, load_model
from .presets import _from_pattern
from .user_input import check_int, describe_value, key_path, parse_json_text, quote

FAMILIES = ("llama", "mamba2", "jamba", "zamba2", "recurrent_gemma", "qwen3_next", "kimi_linear",
            "minimax", "nemotron_h", "falcon_h1")
_MODEL_TYPES = {family: family for family in FAMILIES} | {
    "minimax_text_01": "minimax", "mamba_ssm": "mamba2"}
_ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "Mamba2ForCausalLM": "mamba2", "JambaForCausalLM": "jamba",
    "Zamba2ForCausalLM": "zamba2", "RecurrentGemmaForCausalLM": "recurrent_gemma",
    "Qwen3NextForCausalLM": "qwen3_next", "KimiLinearForCausalLM": "kimi_linear",
    "MiniMaxText01ForCausalLM": "minimax", "MiniMaxForCausalLM": "minimax",
    "NemotronHForCausalLM": "nemotron_h", "FalconH1ForCausalLM": "falcon_h1"}
# Fields that never change the cache, not worth listing one by one as "ignored".
_METADATA = {"_name_or_path", "transformers_version", "torch_dtype", "dtype", "auto_map"}


class _Reader:
    """Reads fields of one config object, remembering every field it used."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.used: list[str] = []
        self.derived: list[str] = []
        self.defaults: list[str] = []

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def raw(self, key: str, path: str | None = None) -> Any:
        self.used.append(path or key)
        return self.config.get(key)

    def int(self, key: str, *, low: int = 1, high: int = MAX_DIM, default: int | None = None,
            why: str = "") -> int:
        """An integer field; `default` (with `why`) when absent, else a missing-field error."""
        if self.config.get(key) is None:
            if default is None:
                raise ValueError(f"{key}: missing; this architecture needs it")
            self.defaults.append(f"{key} = {default} ({why})")
            return default
        self.used.append(key)
        return check_int(key, self.config[key], low, high)

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

    def list(self, key: str, length: int | None = None) -> list[Any]:
        value = self.raw(key)
        if not isinstance(value, list) or (length is not None and len(value) != length):
            wanted = f"a list of {length} entries" if length is not None else "a list"
            raise ValueError(f"{key}: expected {wanted}, got {describe_value(value)}")
        return value


def _layers(r: _Reader) -> int:
    return r.int("num_hidden_layers", high=MAX_MIXERS)


def _head_dim(r: _Reader, *spellings: str) -> int:
    for key in (*spellings, "head_dim"):
        if r.has(key):
            return r.int(key)
    hidden, heads = r.int("hidden_size"), r.int("num_attention_heads")
    return r.derive("head_dim = hidden_size / num_attention_heads", hidden // heads)


def _kv_heads(r: _Reader) -> int:
    if r.has("num_key_value_heads"):
        return r.int("num_key_value_heads")
    return r.derive("num_key_value_heads = num_attention_heads (no grouping)",
                    r.int("num_attention_heads"))


def _attention(r: _Reader, label: str | None = None, **extra: Any) -> dict[str, Any]:
    entry = {"kind": "attention", "kv_heads": _kv_heads(r), "head_dim": _head_dim(r), **extra}
    return entry if label is None else {**entry, "label": label}


def _kinds_by_layer(r: _Reader, key: str, n: int, meaning: dict[str, str]) -> str:
    """A per-layer list of names (layer_types, layers_block_type…) as one symbol per layer."""
    values = r.list(key, n)
    symbols = []
    for i, value in enumerate(values):
        if value not in meaning:
            raise ValueError(f"{key}[{i}]: cannot interpret {quote(value)}; understood: "
                             f"{', '.join(meaning)}")
        symbols.append(meaning[value])
    return "".join(symbols)


def _mamba2(r: _Reader, heads: int, head_dim: int, d_state: int, groups: int, kernel: int,
            d_inner: int, label: str = "Mamba-2") -> dict[str, Any]:
    return {"kind": "recurrent", "label": label, "state_shape": [heads, head_dim, d_state],
            "conv_channels": d_inner + 2 * groups * d_state, "conv_kernel": kernel}


# --- one function per family: a reader in, model layers out -------------------------------------

def _llama(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    return [{**_attention(r), "count": n}]


def _mamba2_family(r: _Reader) -> list[dict[str, Any]]:
    if r.has("ssm_cfg") or r.has("n_layer"):  # mamba_ssm's own layout (state-spaces/*)
        return _mamba_ssm(r)
    n = _layers(r)
    heads, head_dim = r.int("num_heads"), r.int("head_dim")
    d_state, groups = r.int("state_size"), r.int("n_groups")
    d_inner = r.derive("d_inner = expand · hidden_size", r.int("expand") * r.int("hidden_size"))
    return [{**_mamba2(r, heads, head_dim, d_state, groups, r.int("conv_kernel"), d_inner),
             "count": n}]


def _mamba_ssm(r: _Reader) -> list[dict[str, Any]]:
    """state-spaces/mamba2-*: d_model, n_layer, ssm_cfg; sizes not in ssm_cfg are the defaults
    of mamba_ssm.modules.mamba2.Mamba2 (d_state 128, d_conv 4, expand 2, headdim 64, ngroups 1)."""
    n = r.int("n_layer", high=MAX_MIXERS)
    d_model = r.int("d_model")
    if r.raw("attn_layer_idx"):
        raise ValueError("attn_layer_idx: attention layers inside a mamba_ssm config are not "
                         "interpreted; describe the model in the JSON model format instead")
    ssm = r.raw("ssm_cfg") or {}
    if not isinstance(ssm, dict) or ssm.get("layer", "Mamba2") != "Mamba2":
        raise ValueError(f"ssm_cfg.layer: only Mamba2 is interpreted, got "
                         f"{describe_value(ssm.get('layer') if isinstance(ssm, dict) else ssm)}")
    sub = _Reader(ssm)
    defaults = {"d_state": 128, "d_conv": 4, "expand": 2, "headdim": 64, "ngroups": 1}
    size = {key: sub.int(key, default=value, why="mamba_ssm Mamba2 default")
            for key, value in defaults.items()}
    r.used += [f"ssm_cfg.{key}" for key in sub.used]
    r.defaults += [f"ssm_cfg.{text}" for text in sub.defaults]
    d_inner = r.derive("d_inner = expand · d_model", size["expand"] * d_model)
    heads = r.derive("heads = d_inner / headdim", d_inner // size["headdim"])
    return [{**_mamba2(r, heads, size["headdim"], size["d_state"], size["ngroups"],
                       size["d_conv"], d_inner), "count": n}]


def _jamba(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    period, offset = r.int("attn_layer_period", high=n), r.int("attn_layer_offset", low=0, high=n)
    d_inner = r.derive("d_inner = mamba_expand · hidden_size",
                       r.int("mamba_expand") * r.int("hidden_size"))
    mamba = {"kind": "recurrent", "label": "Mamba", "state_shape": [d_inner, r.int("mamba_d_state")],
             "conv_channels": d_inner, "conv_kernel": r.int("mamba_d_conv")}
    pattern = "".join("A" if i % period == offset else "M" for i in range(n))
    return _from_pattern(pattern, {"M": mamba, "A": _attention(r)})


def _zamba2(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    if r.has("layers_block_type"):
        pattern = _kinds_by_layer(r, "layers_block_type", n, {"mamba": "M", "hybrid": "H"})
    else:
        ids = r.list("hybrid_layer_ids")
        calls = {check_int(f"hybrid_layer_ids[{i}]", x, 0, n - 1) for i, x in enumerate(ids)}
        pattern = "".join("H" if i in calls else "M" for i in range(n))
    hidden = r.int("hidden_size")
    d_inner = r.derive("d_inner = mamba_expand · hidden_size", r.int("mamba_expand") * hidden)
    mamba = _mamba2(r, r.int("n_mamba_heads"), r.int("mamba_headdim"), r.int("mamba_d_state"),
                    r.int("mamba_ngroups"), r.int("mamba_d_conv"), d_inner)
    if r.has("attention_head_dim"):
        head_dim = r.int("attention_head_dim")
    else:  # Zamba2 attends over the concatenation of the input and the original embedding
        head_dim = r.derive("attention_head_dim = 2 · hidden_size / num_attention_heads",
                            2 * hidden // r.int("num_attention_heads"))
    attention = {"kind": "attention", "label": "shared attention", "kv_heads": _kv_heads(r),
                 "head_dim": head_dim, "parallel": True}
    entries: list[dict[str, Any]] = []
    for symbol in pattern:  # a hybrid layer is a Mamba-2 layer plus a call of shared attention
        if entries and entries[-1]["kind"] == "recurrent":
            entries[-1]["count"] += 1
        else:
            entries.append({**mamba, "count": 1})
        if symbol == "H":
            entries.append(dict(attention))
    return entries


def _recurrent_gemma(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    cycle = r.list("block_types")
    if not cycle:
        raise ValueError("block_types: expected a non-empty list")
    meaning = {"recurrent": "R", "attention": "A"}
    for i, value in enumerate(cycle):
        if value not in meaning:
            raise ValueError(f"block_types[{i}]: cannot interpret {quote(value)}; understood: "
                             "recurrent, attention")
    pattern = "".join(meaning[cycle[i % len(cycle)]] for i in range(n))
    width = r.int("lru_width") if r.has("lru_width") else r.derive(
        "lru_width = hidden_size", r.int("hidden_size"))
    rglru = {"kind": "recurrent", "label": "RG-LRU", "state_shape": [width],
             "conv_channels": width, "conv_kernel": r.int("conv1d_width")}
    local = _attention(r, "local attention",
                       window=r.int("attention_window_size", high=MAX_TOKENS))
    return _from_pattern(pattern, {"R": rglru, "A": local})


def _qwen3_next(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    if r.has("layer_types"):
        pattern = _kinds_by_layer(r, "layer_types", n, {"linear_attention": "G",
                                                        "full_attention": "A"})
    else:
        every = r.int("full_attention_interval", high=n)
        pattern = "".join("A" if (i + 1) % every == 0 else "G" for i in range(n))
    value_heads, key_heads = r.int("linear_num_value_heads"), r.int("linear_num_key_heads")
    d_k, d_v = r.int("linear_key_head_dim"), r.int("linear_value_head_dim")
    gdn = {"kind": "recurrent", "label": "Gated DeltaNet", "state_shape": [value_heads, d_k, d_v],
           "conv_channels": 2 * key_heads * d_k + value_heads * d_v,
           "conv_kernel": r.int("linear_conv_kernel_dim")}
    return _from_pattern(pattern, {"G": gdn, "A": _attention(r, "gated attention")})


def _kimi_linear(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    linear = r.raw("linear_attn_config")
    if not isinstance(linear, dict):
        raise ValueError(f"linear_attn_config: expected an object, got {describe_value(linear)}")
    sub = _Reader(linear)
    full = sub.list("full_attn_layers")
    mla_layers = {check_int(f"linear_attn_config.full_attn_layers[{i}]", x, 1, n) - 1
                  for i, x in enumerate(full)}  # published 1-based
    heads, head_dim = sub.int("num_heads"), sub.int("head_dim")
    kernel = sub.int("short_conv_kernel_size")
    if linear.get("kda_layers") is not None:
        kda = sub.list("kda_layers")
        listed = {check_int(f"linear_attn_config.kda_layers[{i}]", x, 1, n) - 1
                  for i, x in enumerate(kda)}
        if listed != set(range(n)) - mla_layers:
            raise ValueError("linear_attn_config.kda_layers: does not cover exactly the layers "
                             "that full_attn_layers leaves; cannot tell which mixer a layer has")
    r.used += [f"linear_attn_config.{key}" for key in sub.used]
    kda_entry = {"kind": "recurrent", "label": "KDA", "state_shape": [heads, head_dim, head_dim],
                 "conv_channels": 3 * heads * head_dim, "conv_kernel": kernel}  # q, k, v convs
    rope = r.int("qk_rope_head_dim")
    mla = {"kind": "mla", "label": "MLA",
           "latent_dim": r.derive("latent_dim = kv_lora_rank + qk_rope_head_dim",
                                  r.int("kv_lora_rank") + rope),
           "heads": r.int("num_attention_heads"),
           "qk_head_dim": r.derive("qk_head_dim = qk_nope_head_dim + qk_rope_head_dim",
                                   r.int("qk_nope_head_dim") + rope),
           "v_head_dim": r.int("v_head_dim")}
    pattern = "".join("M" if i in mla_layers else "K" for i in range(n))
    return _from_pattern(pattern, {"K": kda_entry, "M": mla})


def _minimax(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    if r.has("attn_type_list"):
        pattern = _kinds_by_layer(r, "attn_type_list", n, {0: "L", 1: "A"})
    else:
        pattern = _kinds_by_layer(r, "layer_types", n, {"linear_attention": "L",
                                                        "full_attention": "A"})
    heads, head_dim = r.int("num_attention_heads"), _head_dim(r)
    lightning = {"kind": "recurrent", "label": "lightning attention",
                 "state_shape": [heads, head_dim, head_dim]}
    return _from_pattern(pattern, {"L": lightning, "A": _attention(r)})


def _nemotron_h(r: _Reader) -> list[dict[str, Any]]:
    if r.has("hybrid_override_pattern"):
        pattern = r.raw("hybrid_override_pattern")
        if not isinstance(pattern, str) or not 1 <= len(pattern) <= MAX_MIXERS:
            raise ValueError(f"hybrid_override_pattern: expected a string of 1 to {MAX_MIXERS} "
                             f"symbols, got {describe_value(pattern)}")
        for i, symbol in enumerate(pattern):
            if symbol not in "M*-E":
                raise ValueError(f"hybrid_override_pattern[{i}]: cannot interpret "
                                 f"{quote(symbol)}; understood: M, *, -, E")
        if r.has("num_hidden_layers") and r.int("num_hidden_layers", high=MAX_MIXERS) != len(pattern):
            raise ValueError(f"num_hidden_layers: {r.config['num_hidden_layers']} differs from "
                             f"the {len(pattern)} symbols of hybrid_override_pattern")
    else:
        blocks = r.raw("layers_block_type")
        n = len(blocks) if isinstance(blocks, list) else 0
        r.used.pop()
        pattern = _kinds_by_layer(r, "layers_block_type", n, {
            "mamba": "M", "linear_attention": "M", "attention": "*", "full_attention": "*",
            "mlp": "-", "moe": "E"})
    heads, head_dim = r.int("mamba_num_heads"), r.int("mamba_head_dim")
    mamba = _mamba2(r, heads, head_dim, r.int("ssm_state_size"),
                    r.first("n_groups", "mamba_n_groups"), r.first("conv_kernel", "mamba_d_conv"),
                    r.derive("d_inner = mamba_num_heads · mamba_head_dim", heads * head_dim))
    attention = {"kind": "attention", "kv_heads": _kv_heads(r),
                 "head_dim": _head_dim(r, "attention_head_dim")}
    return _from_pattern(pattern, {"M": mamba, "*": attention, "-": {"kind": "mlp"},
                                   "E": {"kind": "mlp", "label": "MoE"}})


def _falcon_h1(r: _Reader) -> list[dict[str, Any]]:
    n = _layers(r)
    d_state = r.int("mamba_d_state")
    if r.has("mamba_d_ssm"):
        d_inner = r.int("mamba_d_ssm")
    else:
        d_inner = r.derive("mamba_d_ssm = mamba_expand · hidden_size",
                           r.int("mamba_expand") * r.int("hidden_size"))
    mamba = _mamba2(r, r.int("mamba_n_heads"), r.int("mamba_d_head"), d_state,
                    r.int("mamba_n_groups"), r.int("mamba_d_conv"), d_inner)
    return [{**_attention(r), "count": n}, {**mamba, "count": n, "parallel": True}]


_BUILDERS = {"llama": _llama, "mamba2": _mamba2_family, "jamba": _jamba, "zamba2": _zamba2,
             "recurrent_gemma": _recurrent_gemma, "qwen3_next": _qwen3_next,
             "kimi_linear": _kimi_linear, "minimax": _minimax, "nemotron_h": _nemotron_h,
             "falcon_h1": _falcon_h1}


def recognise(config: dict[str, Any]) -> str:
    """The family of a config.json: model_type first, then architectures, then the mamba_ssm
    layout. Raises a ValueError naming what it found otherwise."""
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in _MODEL_TYPES:
        return _MODEL_TYPES[model_type]
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        for name in architectures:
            if isinstance(name, str) and name in _ARCHITECTURES:
                return _ARCHITECTURES[name]
    if "ssm_cfg" in config and "n_layer" in config:
        return "mamba2"
    found = describe_value(model_type) if model_type is not None else "none"
    raise ValueError(f"model_type: unknown architecture {found}; recognised: "
                     f"{', '.join(sorted(_MODEL_TYPES))} (or their architectures names)")


def from_hf_config(config: dict[str, Any] | str | bytes) -> tuple[Model, dict[str, Any]]:
    """A `Model` and a report from a Hugging Face config.json (its text or the parsed dict).

    report: family, used (fields read, nested ones as a.b), derived (figures computed from other
    fields, as text), defaults (sizes absent from the file, taken from the reference
    implementation's defaults, as text), ignored (top-level fields that do not change the
    cache). Raises a one-line ValueError naming the field for anything it cannot interpret.
    """
    if isinstance(config, (str, bytes, bytearray)):
        config = parse_json_text(config, "config.json")
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    nested = ""
    if (config.get("model_type") not in _MODEL_TYPES and isinstance(config.get("text_config"), dict)
            and config["text_config"].get("model_type") in _MODEL_TYPES):
        nested, config = "text_config.", config["text_config"]  # multimodal wrappers
    family = recognise(config)
    window = config.get("sliding_window")
    if family != "recurrent_gemma" and window is not None and config.get("use_sliding_window", True):
        raise ValueError(f"{nested}sliding_window: {describe_value(window)} is not interpreted for "
                         f"{family} (which layers slide is not in the file); remove it or describe "
                         "the model in the JSON model format")
    reader = _Reader(config)
    try:
        layers = _BUILDERS[family](reader)
    except ValueError as error:
        raise ValueError(f"{nested}{error}") from None
    name = config.get("_name_or_path")
    if not (isinstance(name, str) and 0 < len(name) <= 200):
        name = f"{family} (config.json)"
    model = load_model({"name": name, "layers": layers,
                        "source": f"Hugging Face config.json, model_type {family}"})
    used = list(dict.fromkeys(nested + key for key in reader.used))
    top_used = {key.split(".")[0] for key in reader.used}
    for key in ("model_type", "architectures"):
        if key in config:
            top_used.add(key)
    ignored = [nested + key_path("", key) for key in config
               if key not in top_used and key not in _METADATA]
    report = {"family": family, "used": used, "derived": reader.derived,
              "defaults": reader.defaults, "ignored": ignored}
    return model, report
