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
from .user_input import (
    MAX_TEXT_BYTES,
    check_int,
    describe_value,
    key_path,
    parse_json_text,
    quote,
)


class _Reader:
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

    def sub(self, key: str) -> _Reader:
        """A reader for the nested object `key`, sharing this reader's lists."""
        value = self.raw(key)
        if not isinstance(value, dict):
            raise ValueError(f"{self.path(key)}: expected an object, got {describe_value(value)}")
        child = _Reader(value, f"{self.path(key)}.")
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


def _layers(r: _Reader) -> int:
    return r.int("num_hidden_layers", high=MAX_MIXERS)


def _head_dim(r: _Reader, *spellings: str) -> int:
    for key in (*spellings, "head_dim"):
        if r.has(key):
            return r.int(key)
    hidden, heads = r.int("hidden_size"), r.int("num_attention_heads")
    return r.quotient("head_dim = hidden_size / num_attention_heads", "hidden_size", hidden,
                      "num_attention_heads", heads)


def _kv_heads(r: _Reader, heads_key: str = "num_attention_heads") -> int:
    """num_key_value_heads, which must divide the attention heads (grouped-query attention
    shares each KV head among num_attention_heads / num_key_value_heads query heads)."""
    if not r.has("num_key_value_heads"):
        return r.derive(f"num_key_value_heads = {heads_key} (no grouping)", r.int(heads_key))
    kv = r.int("num_key_value_heads")
    if r.has(heads_key):
        heads = r.int(heads_key)
        if kv > heads or heads % kv:
            raise ValueError(
                f"{r.path('num_key_value_heads')}: {kv:,} KV heads cannot serve "
                f"{r.path(heads_key)} = {heads:,} query heads; accepted: a divisor of "
                f"{heads:,} (at most {heads:,})")
    return kv


def _attention(r: _Reader, label: str | None = None, **extra: Any) -> dict[str, Any]:
    entry = {"kind": "attention", "kv_heads": _kv_heads(r), "head_dim": _head_dim(r), **extra}
    return entry if label is None else {**entry, "label": label}


def _kinds_by_layer(r: _Reader, key: str, n: int, meaning: dict[Any, str],
                    length_key: str | None = "num_hidden_layers") -> str:
    """A per-layer list of names (layer_types, layers_block_type…) as one symbol per layer."""
    values = r.list(key, n, length_key)
    symbols = []
    for i, value in enumerate(values):
        if not isinstance(value, (str, int)) or isinstance(value, bool) or value not in meaning:
            raise ValueError(f"{r.path(key)}[{i}]: cannot interpret {quote(value)}; understood: "
                             f"{', '.join(str(m) for m in meaning)}")
        symbols.append(meaning[value])
    return "".join(symbols)


def _agree(r: _Reader, key_a: str, pattern_a: str, key_b: str, pattern_b: str) -> None:
    """Two fields that both give the layer pattern must give the same one."""
    if pattern_a != pattern_b:
        layer = next((i for i, (a, b) in enumerate(zip(pattern_a, pattern_b)) if a != b),
                     min(len(pattern_a), len(pattern_b)))
        raise ValueError(f"{r.path(key_a)}, {r.path(key_b)}: the two fields contradict each "
                         f"other (first at layer {layer}); remove one")


def _mamba2(r: _Reader, heads: int, head_dim: int, d_state: int, groups: int, kernel: int,
            d_inner: int, label: str = "Mamba-2") -> dict[str, Any]:
    return {"kind": "recurrent", "label": label, "state_shape": [heads, head_dim, d_state],
            "conv_channels": d_inner + 2 * groups * d_state, "conv_kernel": kernel}


def _same_inner(r: _Reader, heads_keys: tuple[str, str], heads: int, head_dim: int,
                inner_text: str, d_inner: int) -> None:
    """heads · head_dim must equal d_inner where a config gives both (they size one tensor)."""
    if heads * head_dim != d_inner:
        raise ValueError(
            f"{r.path(heads_keys[0])}, {r.path(heads_keys[1])}: {heads:,} × {head_dim:,} = "
            f"{heads * head_dim:,} contradicts {inner_text} = {d_inner:,}; the two must agree")


# --- one function per family: a reader in, model layers out -------------------------------------

_WINDOW_KINDS = {"full_attention": "A", "sliding_attention": "S"}


def _decoder(r: _Reader, family: str) -> list[dict[str, Any]]:
    """Plain-attention decoders read from the generic fields (Llama, Mistral, Mixtral,
    Qwen2/Qwen3, Gemma 1–3, Phi-3, gpt-oss, DeepSeek-V3's MLA).

    Which layers slide, in this order: `layer_types` ("full_attention" / "sliding_attention",
    transformers ≥ 4.53 writes it for gpt-oss, Gemma 2/3, Qwen2/3); else Gemma 2: even layers
    (0-based) slide; Gemma 3: every layer but each `sliding_window_pattern`-th (default 6);
    Qwen2/Qwen3: layers i ≥ `max_window_layers` slide when `use_sliding_window` is true;
    Mistral-style (Mistral, Mixtral, Phi-3): every layer slides when `sliding_window` is set;
    gpt-oss without layer_types: as Gemma 2. Any other family with a sliding_window and no
    layer_types is refused (which layers slide is not in the file).
    A sliding layer caches at most `sliding_window` tokens.
    """
    n = _layers(r)
    if family == "deepseek_v3":
        return [{**_mla(r), "count": n}]
    window = r.int("sliding_window", high=MAX_TOKENS) if r.has("sliding_window") else None
    pattern = "A" * n
    if r.has("layer_types"):
        pattern = _kinds_by_layer(r, "layer_types", n, _WINDOW_KINDS)
    elif family in ("gemma2", "gpt_oss"):  # transformers' default layer_types for both
        pattern = "".join("S" if i % 2 == 0 else "A" for i in range(n))
    elif family == "gemma3_text":
        every = r.int("sliding_window_pattern", default=6, high=n, why="Gemma3TextConfig default")
        pattern = "".join("A" if (i + 1) % every == 0 else "S" for i in range(n))
    elif family in ("qwen2", "qwen3", "qwen3_moe", "qwen2_moe"):
        if window is not None and r.bool("use_sliding_window", False, "Qwen2Config default"):
            first = r.int("max_window_layers", low=0, high=n, default=n, why="all full")
            pattern = "".join("S" if i >= first else "A" for i in range(n))
    elif window is not None and family in ("mistral", "mixtral", "phi3"):
        if r.bool("use_sliding_window", True, "Mistral-style default"):
            pattern = "S" * n
    elif window is not None:
        raise ValueError(f"sliding_window: {describe_value(window)} is not interpreted for "
                         f"{family} without layer_types (which layers slide is not in the file)")
    if "S" in pattern and window is None:
        raise ValueError(f"{r.path('sliding_window')}: missing; sliding layers need it")
    attention = _attention(r)
    return _from_pattern(pattern, {"A": attention,
                                   "S": {**attention, "label": "sliding attention",
                                         "window": window}})


def _mla(r: _Reader) -> dict[str, Any]:
    """Multi-head latent attention: one latent of kv_lora_rank + qk_rope_head_dim per token."""
    rope = r.int("qk_rope_head_dim")
    return {"kind": "mla", "label": "MLA",
            "latent_dim": r.derive("latent_dim = kv_lora_rank + qk_rope_head_dim",
                                   r.int("kv_lora_rank") + rope),
            "heads": r.int("num_attention_heads"),
            "qk_head_dim": r.derive("qk_head_dim = qk_nope_head_dim + qk_rope_head_dim",
                                    r.int("qk_nope_head_dim") + rope),
            "v_head_dim": r.int("v_head_dim")}


def _mamba2_family(r: _Reader, family: str) -> list[dict[str, Any]]:
    if r.has("ssm_cfg") or r.has("n_layer"):  # mamba_ssm's own layout (state-spaces/*)
        return _mamba_ssm(r)
    n = _layers(r)
    heads, head_dim = r.int("num_heads"), r.int("head_dim")
    d_state, groups = r.int("state_size"), r.int("n_groups")
    d_inner = r.derive("d_inner = expand · hidden_size", r.int("expand") * r.int("hidden_size"))
    _same_inner(r, ("num_heads", "head_dim"), heads, head_dim, "expand · hidden_size", d_inner)
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
    if r.config.get("ssm_cfg") is None:
        r.config = {**r.config, "ssm_cfg": {}}
    sub = r.sub("ssm_cfg")
    layer = sub.config.get("layer", "Mamba2")
    if layer != "Mamba2":
        raise ValueError(f"ssm_cfg.layer: only Mamba2 is interpreted, got {describe_value(layer)}")
    defaults = {"d_state": 128, "d_conv": 4, "expand": 2, "headdim": 64, "ngroups": 1}
    size = {key: sub.int(key, default=value, why="mamba_ssm Mamba2 default")
            for key, value in defaults.items()}
    d_inner = r.derive("d_inner = expand · d_model", size["expand"] * d_model)
    if d_inner % size["headdim"]:
        raise ValueError(f"ssm_cfg.headdim: {size['headdim']:,} does not divide d_inner = "
                         f"ssm_cfg.expand · d_model = {d_inner:,}; heads would not be whole")
    heads = r.derive("heads = d_inner / headdim", d_inner // size["headdim"])
    return [{**_mamba2(r, heads, size["headdim"], size["d_state"], size["ngroups"],
                       size["d_conv"], d_inner), "count": n}]


def _jamba(r: _Reader, family: str) -> list[dict[str, Any]]:
    n = _layers(r)
    period, offset = r.int("attn_layer_period", high=n), r.int("attn_layer_offset", low=0, high=n)
    if offset >= period:
        raise ValueError(f"attn_layer_offset: {offset} is not below attn_layer_period {period}, "
                         "so no layer would have attention; the two fields contradict each other")
    d_inner = r.derive("d_inner = mamba_expand · hidden_size",
                       r.int("mamba_expand") * r.int("hidden_size"))
    mamba = {"kind": "recurrent", "label": "Mamba", "state_shape": [d_inner, r.int("mamba_d_state")],
             "conv_channels": d_inner, "conv_kernel": r.int("mamba_d_conv")}
    pattern = "".join("A" if i % period == offset else "M" for i in range(n))
    return _from_pattern(pattern, {"M": mamba, "A": _attention(r)})


def _zamba2(r: _Reader, family: str) -> list[dict[str, Any]]:
    """layers_block_type: "mamba" (transformers 5 re-saves it as "linear_attention") or
    "hybrid"; or hybrid_layer_ids. When both are given they must agree."""
    n = _layers(r)
    by_ids = None
    if r.has("hybrid_layer_ids"):
        ids = r.list("hybrid_layer_ids")
        calls = {check_int(f"{r.path('hybrid_layer_ids')}[{i}]", x, 0, n - 1)
                 for i, x in enumerate(ids)}
        by_ids = "".join("H" if i in calls else "M" for i in range(n))
    if r.has("layers_block_type"):
        pattern = _kinds_by_layer(r, "layers_block_type", n, {
            "mamba": "M", "linear_attention": "M", "hybrid": "H"})
        if by_ids is not None:
            _agree(r, "layers_block_type", pattern, "hybrid_layer_ids", by_ids)
    elif by_ids is not None:
        pattern = by_ids
    else:
        raise ValueError("layers_block_type: missing (or hybrid_layer_ids); this architecture "
                         "needs one of them")
    hidden = r.int("hidden_size")
    d_inner = r.derive("d_inner = mamba_expand · hidden_size", r.int("mamba_expand") * hidden)
    heads, head_dim = r.int("n_mamba_heads"), r.int("mamba_headdim")
    _same_inner(r, ("n_mamba_heads", "mamba_headdim"), heads, head_dim,
                "mamba_expand · hidden_size", d_inner)
    mamba = _mamba2(r, heads, head_dim, r.int("mamba_d_state"),
                    r.int("mamba_ngroups"), r.int("mamba_d_conv"), d_inner)
    if r.has("attention_head_dim"):
        head_dim = r.int("attention_head_dim")
    else:  # Zamba2 attends over the concatenation of the input and the original embedding
        head_dim = r.quotient("attention_head_dim = 2 · hidden_size / num_attention_heads",
                              "hidden_size", 2 * hidden, "num_attention_heads",
                              r.int("num_attention_heads"))
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


def _recurrent_gemma(r: _Reader, family: str) -> list[dict[str, Any]]:
    """The cycle is `block_types` (transformers ≥ 4.40) or `_block_types`, the spelling of the
    published google/recurrentgemma-2b config.json; both present must agree."""
    n = _layers(r)
    spellings = [key for key in ("block_types", "_block_types") if r.has(key)]
    if not spellings:
        raise ValueError("block_types: missing (or _block_types); this architecture needs it")
    cycles = {key: r.list(key) for key in spellings}
    if len(cycles) == 2 and cycles["block_types"] != cycles["_block_types"]:
        raise ValueError("block_types, _block_types: the two spellings contradict each other; "
                         "remove one")
    key = spellings[0]
    cycle = cycles[key]
    if not cycle:
        raise ValueError(f"{key}: expected a non-empty list")
    meaning = {"recurrent": "R", "attention": "A"}
    for i, value in enumerate(cycle):
        if not isinstance(value, str) or value not in meaning:
            raise ValueError(f"{key}[{i}]: cannot interpret {quote(value)}; understood: "
                             "recurrent, attention")
    pattern = "".join(meaning[cycle[i % len(cycle)]] for i in range(n))
    width = r.int("lru_width") if r.has("lru_width") else r.derive(
        "lru_width = hidden_size", r.int("hidden_size"))
    rglru = {"kind": "recurrent", "label": "RG-LRU", "state_shape": [width],
             "conv_channels": width, "conv_kernel": r.int("conv1d_width")}
    local = _attention(r, "local attention",
                       window=r.int("attention_window_size", high=MAX_TOKENS))
    return _from_pattern(pattern, {"R": rglru, "A": local})


def _gated_deltanet(r: _Reader) -> dict[str, Any]:
    value_heads, key_heads = r.int("linear_num_value_heads"), r.int("linear_num_key_heads")
    d_k, d_v = r.int("linear_key_head_dim"), r.int("linear_value_head_dim")
    return {"kind": "recurrent", "label": "Gated DeltaNet", "state_shape": [value_heads, d_k, d_v],
            "conv_channels": 2 * key_heads * d_k + value_heads * d_v,
            "conv_kernel": r.int("linear_conv_kernel_dim")}


def _qwen3_next(r: _Reader, family: str) -> list[dict[str, Any]]:
    """Qwen3-Next and Qwen3.5 (text): `layer_types`, or full attention where
    (i + 1) mod full_attention_interval = 0; both present must agree."""
    n = _layers(r)
    by_interval = None
    if r.has("full_attention_interval") or not r.has("layer_types"):
        every = r.int("full_attention_interval", high=n)
        by_interval = "".join("A" if (i + 1) % every == 0 else "G" for i in range(n))
    pattern = by_interval
    if r.has("layer_types"):
        pattern = _kinds_by_layer(r, "layer_types", n, {"linear_attention": "G",
                                                        "full_attention": "A"})
        if by_interval is not None:
            _agree(r, "layer_types", pattern, "full_attention_interval", by_interval)
    return _from_pattern(pattern, {"G": _gated_deltanet(r),
                                   "A": _attention(r, "gated attention")})


def _kimi_linear(r: _Reader, family: str) -> list[dict[str, Any]]:
    n = _layers(r)
    sub = r.sub("linear_attn_config")
    full = sub.list("full_attn_layers")
    mla_layers = {check_int(f"{sub.path('full_attn_layers')}[{i}]", x, 1, n) - 1
                  for i, x in enumerate(full)}  # published 1-based
    heads, head_dim = sub.int("num_heads"), sub.int("head_dim")
    kernel = sub.int("short_conv_kernel_size")
    if sub.has("kda_layers"):
        kda = sub.list("kda_layers")
        listed = {check_int(f"{sub.path('kda_layers')}[{i}]", x, 1, n) - 1
                  for i, x in enumerate(kda)}
        if listed != set(range(n)) - mla_layers:
            raise ValueError(f"{sub.path('kda_layers')}, {sub.path('full_attn_layers')}: the two "
                             "fields contradict each other (together they must list every layer "
                             "exactly once); cannot tell which mixer a layer has")
    kda_entry = {"kind": "recurrent", "label": "KDA", "state_shape": [heads, head_dim, head_dim],
                 "conv_channels": 3 * heads * head_dim, "conv_kernel": kernel}  # q, k, v convs
    pattern = "".join("M" if i in mla_layers else "K" for i in range(n))
    return _from_pattern(pattern, {"K": kda_entry, "M": _mla(r)})


def _minimax(r: _Reader, family: str) -> list[dict[str, Any]]:
    n = _layers(r)
    patterns = {}
    if r.has("attn_type_list"):
        patterns["attn_type_list"] = _kinds_by_layer(r, "attn_type_list", n, {0: "L", 1: "A"})
    if r.has("layer_types") or not patterns:
        patterns["layer_types"] = _kinds_by_layer(r, "layer_types", n, {
            "linear_attention": "L", "full_attention": "A"})
    if len(patterns) == 2:
        _agree(r, "attn_type_list", patterns["attn_type_list"], "layer_types",
               patterns["layer_types"])
    pattern = next(iter(patterns.values()))
    heads, head_dim = r.int("num_attention_heads"), _head_dim(r)
    lightning = {"kind": "recurrent", "label": "lightning attention",
                 "state_shape": [heads, head_dim, head_dim]}
    return _from_pattern(pattern, {"L": lightning, "A": _attention(r)})


_NEMOTRON_BLOCKS = {"mamba": "M", "linear_attention": "M", "attention": "*",
                    "full_attention": "*", "mlp": "-", "moe": "E"}


def _nemotron_pattern(r: _Reader) -> str:
    """hybrid_override_pattern, or layers_block_type (transformers 5 converts the former into
    the latter on load and writes that); both present must agree."""
    patterns = {}
    if r.has("hybrid_override_pattern"):
        pattern = r.raw("hybrid_override_pattern")
        if not isinstance(pattern, str) or not 1 <= len(pattern) <= MAX_MIXERS:
            raise ValueError(f"hybrid_override_pattern: expected a string of 1 to {MAX_MIXERS} "
                             f"symbols, got {describe_value(pattern)}")
        for i, symbol in enumerate(pattern):
            if symbol not in "M*-E":
                raise ValueError(f"hybrid_override_pattern[{i}]: cannot interpret "
                                 f"{quote(symbol)}; understood: M, *, -, E")
        patterns["hybrid_override_pattern"] = pattern
    if r.has("layers_block_type") or not patterns:
        blocks = r.config.get("layers_block_type")
        n = len(blocks) if isinstance(blocks, list) else 0
        patterns["layers_block_type"] = _kinds_by_layer(r, "layers_block_type", n,
                                                        _NEMOTRON_BLOCKS, None)
        if not n:
            raise ValueError("layers_block_type: expected a non-empty list (or give "
                             "hybrid_override_pattern)")
    if len(patterns) == 2:
        _agree(r, "hybrid_override_pattern", patterns["hybrid_override_pattern"],
               "layers_block_type", patterns["layers_block_type"])
    key, pattern = next(iter(patterns.items()))
    if len(pattern) > MAX_MIXERS:
        raise ValueError(f"{key}: {len(pattern):,} blocks is too many; accepted: at most "
                         f"{MAX_MIXERS:,}")
    if r.has("num_hidden_layers") and r.int("num_hidden_layers", high=MAX_MIXERS) != len(pattern):
        raise ValueError(f"num_hidden_layers: {r.config['num_hidden_layers']} differs from "
                         f"the {len(pattern)} blocks of {key}; the two fields contradict each other")
    return pattern


def _nemotron_h(r: _Reader, family: str) -> list[dict[str, Any]]:
    pattern = _nemotron_pattern(r)
    heads, head_dim = r.int("mamba_num_heads"), r.int("mamba_head_dim")
    mamba = _mamba2(r, heads, head_dim, r.int("ssm_state_size"),
                    r.first("n_groups", "mamba_n_groups"), r.first("conv_kernel", "mamba_d_conv"),
                    r.derive("d_inner = mamba_num_heads · mamba_head_dim", heads * head_dim))
    attention = {"kind": "attention", "kv_heads": _kv_heads(r),
                 "head_dim": _head_dim(r, "attention_head_dim")}
    return _from_pattern(pattern, {"M": mamba, "*": attention, "-": {"kind": "mlp"},
                                   "E": {"kind": "mlp", "label": "MoE"}})


def _falcon_h1(r: _Reader, family: str) -> list[dict[str, Any]]:
    n = _layers(r)
    d_state = r.int("mamba_d_state")
    heads, head_dim = r.int("mamba_n_heads"), r.int("mamba_d_head")
    if r.has("mamba_d_ssm"):
        d_inner = r.int("mamba_d_ssm")
        _same_inner(r, ("mamba_n_heads", "mamba_d_head"), heads, head_dim, "mamba_d_ssm", d_inner)
    else:
        d_inner = r.derive("mamba_d_ssm = mamba_expand · hidden_size",
                           r.int("mamba_expand") * r.int("hidden_size"))
    mamba = _mamba2(r, heads, head_dim, d_state, r.int("mamba_n_groups"), r.int("mamba_d_conv"),
                    d_inner)
    return [{**_attention(r), "count": n}, {**mamba, "count": n, "parallel": True}]


def _granite_hybrid(r: _Reader, family: str) -> list[dict[str, Any]]:
    """Granite-4.0-H (granitemoehybrid): `layer_types` "mamba" / "attention" (transformers 5
    re-saves them as "linear_attention" / "full_attention"; `layers_block_type` is its other
    name, and both present must agree); Mamba-2 sizes mamba_n_heads, mamba_d_head (or
    d_inner / heads), mamba_d_state, mamba_n_groups, mamba_d_conv, mamba_expand; the experts
    are in the MLP and do not change the cache."""
    n = _layers(r)
    kinds = {"mamba": "M", "linear_attention": "M", "attention": "A", "full_attention": "A"}
    keys = [key for key in ("layer_types", "layers_block_type") if r.has(key)] or ["layer_types"]
    patterns = {key: _kinds_by_layer(r, key, n, kinds) for key in keys}
    if len(patterns) == 2:
        _agree(r, "layer_types", patterns["layer_types"], "layers_block_type",
               patterns["layers_block_type"])
    pattern = patterns[keys[0]]
    d_inner = r.derive("d_inner = mamba_expand · hidden_size",
                       r.int("mamba_expand") * r.int("hidden_size"))
    heads = r.int("mamba_n_heads")
    if r.has("mamba_d_head") and r.config["mamba_d_head"] != "auto":
        head_dim = r.int("mamba_d_head")
        _same_inner(r, ("mamba_n_heads", "mamba_d_head"), heads, head_dim,
                    "mamba_expand · hidden_size", d_inner)
    else:
        head_dim = r.quotient("mamba_d_head = d_inner / mamba_n_heads", "mamba_expand", d_inner,
                              "mamba_n_heads", heads)
    mamba = _mamba2(r, heads, head_dim, r.int("mamba_d_state"), r.int("mamba_n_groups"),
                    r.int("mamba_d_conv"), d_inner)
    return _from_pattern(pattern, {"M": mamba, "A": _attention(r)})


def _lfm2(r: _Reader, family: str) -> list[dict[str, Any]]:
    """LFM2: `layer_types` "conv" (a gated short convolution over hidden_size channels, kernel
    conv_L_cache, keeping its last conv_L_cache − 1 inputs) and "full_attention"; or
    `full_attn_idxs` (0-based)."""
    n = _layers(r)
    if r.has("layer_types"):
        pattern = _kinds_by_layer(r, "layer_types", n, {"conv": "C", "full_attention": "A"})
    else:
        ids = r.list("full_attn_idxs")
        full = {check_int(f"full_attn_idxs[{i}]", x, 0, n - 1) for i, x in enumerate(ids)}
        pattern = "".join("A" if i in full else "C" for i in range(n))
    hidden, kernel = r.int("hidden_size"), r.int("conv_L_cache", low=2)
    conv = {"kind": "recurrent", "label": "short convolution",
            "state_shape": [hidden, kernel - 1]}
    return _from_pattern(pattern, {"C": conv, "A": _attention(r)})


_DECODERS = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
             "gemma2", "gemma3_text", "phi3", "gpt_oss", "deepseek_v3")
_BUILDERS = {**{family: _decoder for family in _DECODERS},
             "mamba2": _mamba2_family, "jamba": _jamba, "zamba2": _zamba2,
             "recurrent_gemma": _recurrent_gemma, "qwen3_next": _qwen3_next,
             "qwen3_5_text": _qwen3_next, "kimi_linear": _kimi_linear, "minimax": _minimax,
             "nemotron_h": _nemotron_h, "falcon_h1": _falcon_h1,
             "granitemoehybrid": _granite_hybrid, "lfm2": _lfm2}
FAMILIES = tuple(_BUILDERS)
_MODEL_TYPES = {family: family for family in FAMILIES} | {
    "minimax_text_01": "minimax", "mamba_ssm": "mamba2", "qwen3_5_moe_text": "qwen3_5_text"}
# Wrappers whose language model sits in text_config (multimodal checkpoints).
_WRAPPERS = ("text_config",)
_ARCHITECTURES = {
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
# Fields that never change the cache, not worth listing one by one as "ignored".
_METADATA = {"_name_or_path", "transformers_version", "torch_dtype", "dtype", "auto_map"}
# Families whose sliding_window field is interpreted (which layers slide is in the file).
_WINDOWED = {"recurrent_gemma", *_DECODERS}
# Where a config gives the model's own longest context.
_MAX_CONTEXT_FIELDS = ("max_position_embeddings", "model_max_length", "max_sequence_length")


def recognise(config: dict[str, Any]) -> str:
    """The family of a config.json: model_type first, then architectures, then the mamba_ssm
    layout. Raises one line naming model_type and the supported ones otherwise."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in _MODEL_TYPES:
        return _MODEL_TYPES[model_type]
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        for name in architectures[:100]:
            if isinstance(name, str) and name in _ARCHITECTURES:
                return _ARCHITECTURES[name]
    if "ssm_cfg" in config and "n_layer" in config:
        return "mamba2"
    found = describe_value(model_type) if model_type is not None else "none"
    raise ValueError(f"model_type: unknown architecture {found}; recognised: "
                     f"{', '.join(sorted(_MODEL_TYPES))} (or their architectures names)")


def unwrap(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(path prefix, the language model's config): a multimodal wrapper's text_config when the
    top level is not itself a recognised family."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    if config.get("model_type") not in _MODEL_TYPES:
        for key in _WRAPPERS:
            inner = config.get(key)
            if isinstance(inner, dict) and inner.get("model_type") in _MODEL_TYPES:
                return f"{key}.", inner
    return "", config


def parse_config(config: Any) -> dict[str, Any]:
    """A config.json's text (or bytes, or parsed dict) → the dict; an empty file, a file of
    white space or anything but an object is refused with one line."""
    if isinstance(config, (str, bytes, bytearray)):
        head = config[:MAX_TEXT_BYTES + 1]  # longer texts are refused by parse_json_text
        blank = (head.lstrip("\ufeff").strip() if isinstance(head, str)
                 else bytes(head).removeprefix(b"\xef\xbb\xbf").strip())
        if len(head) <= MAX_TEXT_BYTES and not blank:
            raise ValueError("config.json: the file is empty; expected a JSON object with "
                             "model_type and the model's sizes")
        config = parse_json_text(config, "config.json")
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    if not config:
        raise ValueError("config.json: the object is empty ({}); expected model_type and the "
                         "model's sizes")
    return config


def max_context(config: dict[str, Any]) -> int | None:
    """The model's own longest context from its config (max_position_embeddings, or
    model_max_length, or max_sequence_length), or None when the file gives none."""
    if not isinstance(config, dict):
        raise ValueError(f"config.json: expected an object, got {describe_value(config)}")
    for key in _MAX_CONTEXT_FIELDS:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_TOKENS:
            return value
    return None


def context_note(report: dict[str, Any], tokens: int) -> str | None:
    """A line when `tokens` passes the model's own maximum (report["max_context"]), else None."""
    limit = report.get("max_context") if isinstance(report, dict) else None
    tokens = check_int("tokens", tokens, 0, MAX_TOKENS)
    if limit is None or tokens <= limit:
        return None
    return (f"{tokens:,} tokens is beyond the model's own maximum of {limit:,} "
            f"({report.get('max_context_field', 'max_position_embeddings')}): the figures are "
            "what the cache would hold, not what the model was trained for")


def from_hf_config(config: dict[str, Any] | str | bytes) -> tuple[Model, dict[str, Any]]:
    """A `Model` and a report from a Hugging Face config.json (its text or the parsed dict).

    report: family, used (fields read, nested ones by their full path a.b), derived (figures
    computed from other fields, as text), defaults (sizes absent from the file, taken from the
    reference implementation's defaults, as text), ignored (top-level fields that do not change
    the cache), max_context and max_context_field (the model's own longest context, or None).
    Raises a one-line ValueError naming the field for anything it cannot interpret, and both
    fields where two contradict each other.
    """
    config = parse_config(config)
    nested, config = unwrap(config)
    family = recognise(config)
    window = config.get("sliding_window")
    if family not in _WINDOWED and window is not None and config.get("use_sliding_window", True):
        raise ValueError(f"{nested}sliding_window: {describe_value(window)} is not interpreted for "
                         f"{family} (which layers slide is not in the file); remove it or describe "
                         "the model in the JSON model format")
    reader = _Reader(config)
    try:
        layers = _BUILDERS[family](reader, family)
        name = config.get("_name_or_path")
        if not (isinstance(name, str) and 0 < len(name) <= 200):
            name = f"{family} (config.json)"
        model = load_model({"name": name, "layers": layers,
                            "source": f"Hugging Face config.json, model_type {family}"})
    except ValueError as error:
        raise ValueError(f"{nested}{error}") from None
    used = list(dict.fromkeys(nested + key for key in reader.used))
    top_used = {key.split(".")[0].split("[")[0] for key in reader.used}
    for key in ("model_type", "architectures", *_MAX_CONTEXT_FIELDS):
        if key in config:
            top_used.add(key)
    ignored = [nested + key_path("", key) for key in config
               if key not in top_used and key not in _METADATA]
    limit = max_context(config)
    field = next((key for key in _MAX_CONTEXT_FIELDS if config.get(key) == limit), None)
    report = {"family": family, "used": used,
              "derived": [nested + text for text in reader.derived],
              "defaults": [nested + text for text in reader.defaults], "ignored": ignored, "max_context": limit,
              "max_context_field": None if limit is None else nested + field}
    return model, report
