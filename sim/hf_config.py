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
Reading the file, the field reader and the table of families are `sim.hf_reader`'s, shared with
`sim.weights`; this module holds one builder per family (`_BUILDERS`).
"""

from __future__ import annotations

from typing import Any

from .cache import MAX_MIXERS, MAX_TOKENS, Model, load_model
from .hf_parts import cache_entries, read_parts
from .hf_reader import (  # parse_config and recognise are this module's public API too
    DECODERS,
    Reader,
    family_of,
    parse_config,
    recognise,
    unwrap,
)

__all__ = ["context_note", "from_hf_config", "max_context", "model_name", "parse_config",
           "recognise"]
from .presets import layers_from_pattern
from .user_input import check_int, describe_value, key_path, quote


def _layers(r: Reader) -> int:
    return r.int("num_hidden_layers", high=MAX_MIXERS)


def _attention(r: Reader, label: str | None = None, **extra: Any) -> dict[str, Any]:
    entry = {"kind": "attention", "kv_heads": r.kv_heads(), "head_dim": r.head_dim(), **extra}
    return entry if label is None else {**entry, "label": label}


def _kinds_by_layer(r: Reader, key: str, n: int, meaning: dict[Any, str],
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


def _agree(r: Reader, key_a: str, pattern_a: str, key_b: str, pattern_b: str) -> None:
    """Two fields that both give the layer pattern must give the same one."""
    if pattern_a != pattern_b:
        layer = next((i for i, (a, b) in enumerate(zip(pattern_a, pattern_b)) if a != b),
                     min(len(pattern_a), len(pattern_b)))
        raise ValueError(f"{r.path(key_a)}, {r.path(key_b)}: the two fields contradict each "
                         f"other (first at layer {layer}); remove one")


def _mamba2(r: Reader, heads: int, head_dim: int, d_state: int, groups: int, kernel: int,
            d_inner: int, label: str = "Mamba-2") -> dict[str, Any]:
    return {"kind": "recurrent", "label": label, "state_shape": [heads, head_dim, d_state],
            "conv_channels": d_inner + 2 * groups * d_state, "conv_kernel": kernel}


def _same_inner(r: Reader, heads_keys: tuple[str, str], heads: int, head_dim: int,
                inner_text: str, d_inner: int) -> None:
    """heads · head_dim must equal d_inner where a config gives both (they size one tensor)."""
    if heads * head_dim != d_inner:
        raise ValueError(
            f"{r.path(heads_keys[0])}, {r.path(heads_keys[1])}: {heads:,} × {head_dim:,} = "
            f"{heads * head_dim:,} contradicts {inner_text} = {d_inner:,}; the two must agree")


# --- one function per family: a reader in, model layers out -------------------------------------

_WINDOW_KINDS = {"full_attention": "A", "sliding_attention": "S"}


def _decoder(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"A": attention,
                                   "S": {**attention, "label": "sliding attention",
                                         "window": window}})


def _mla(r: Reader) -> dict[str, Any]:
    """Multi-head latent attention: one latent of kv_lora_rank + qk_rope_head_dim per token."""
    rope = r.int("qk_rope_head_dim")
    return {"kind": "mla", "label": "MLA",
            "latent_dim": r.derive("latent_dim = kv_lora_rank + qk_rope_head_dim",
                                   r.int("kv_lora_rank") + rope),
            "heads": r.int("num_attention_heads"),
            "qk_head_dim": r.derive("qk_head_dim = qk_nope_head_dim + qk_rope_head_dim",
                                    r.int("qk_nope_head_dim") + rope),
            "v_head_dim": r.int("v_head_dim")}


def _mamba2_family(r: Reader, family: str) -> list[dict[str, Any]]:
    if r.has("ssm_cfg") or r.has("n_layer"):  # mamba_ssm's own layout (state-spaces/*)
        return _mamba_ssm(r)
    n = _layers(r)
    heads, head_dim = r.int("num_heads"), r.int("head_dim")
    d_state, groups = r.int("state_size"), r.int("n_groups")
    d_inner = r.derive("d_inner = expand · hidden_size", r.int("expand") * r.int("hidden_size"))
    _same_inner(r, ("num_heads", "head_dim"), heads, head_dim, "expand · hidden_size", d_inner)
    return [{**_mamba2(r, heads, head_dim, d_state, groups, r.int("conv_kernel"), d_inner),
             "count": n}]


def _mamba_ssm(r: Reader) -> list[dict[str, Any]]:
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


def _jamba(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"M": mamba, "A": _attention(r)})


def _zamba2(r: Reader, family: str) -> list[dict[str, Any]]:
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
    attention = {"kind": "attention", "label": "shared attention", "kv_heads": r.kv_heads(),
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


def _recurrent_gemma(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"R": rglru, "A": local})


def _gated_deltanet(r: Reader) -> dict[str, Any]:
    value_heads, key_heads = r.int("linear_num_value_heads"), r.int("linear_num_key_heads")
    d_k, d_v = r.int("linear_key_head_dim"), r.int("linear_value_head_dim")
    return {"kind": "recurrent", "label": "Gated DeltaNet", "state_shape": [value_heads, d_k, d_v],
            "conv_channels": 2 * key_heads * d_k + value_heads * d_v,
            "conv_kernel": r.int("linear_conv_kernel_dim")}


def _qwen3_next(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"G": _gated_deltanet(r),
                                   "A": _attention(r, "gated attention")})


def _kimi_linear(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"K": kda_entry, "M": _mla(r)})


def _minimax(r: Reader, family: str) -> list[dict[str, Any]]:
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
    heads, head_dim = r.int("num_attention_heads"), r.head_dim()
    lightning = {"kind": "recurrent", "label": "lightning attention",
                 "state_shape": [heads, head_dim, head_dim]}
    return layers_from_pattern(pattern, {"L": lightning, "A": _attention(r)})


_NEMOTRON_BLOCKS = {"mamba": "M", "linear_attention": "M", "attention": "*",
                    "full_attention": "*", "mlp": "-", "moe": "E"}


def _nemotron_pattern(r: Reader) -> str:
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
    if not patterns and not r.has("layers_block_type"):
        # the published files spell it hybrid_override_pattern; name that one first (fuzz N13)
        layers = r.config.get("num_hidden_layers")
        which = (f"which of its {layers:,} layers (num_hidden_layers)"
                 if isinstance(layers, int) and not isinstance(layers, bool) and 0 < layers
                 <= MAX_MIXERS else "which layers")
        raise ValueError(f"hybrid_override_pattern: missing (or layers_block_type); this "
                         f"architecture needs one of them to know {which} are Mamba-2 (M), "
                         "attention (*), MLP (-) or MoE (E)")
    if r.has("layers_block_type"):
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


def _nemotron_h(r: Reader, family: str) -> list[dict[str, Any]]:
    pattern = _nemotron_pattern(r)
    heads, head_dim = r.int("mamba_num_heads"), r.int("mamba_head_dim")
    mamba = _mamba2(r, heads, head_dim, r.int("ssm_state_size"),
                    r.first("n_groups", "mamba_n_groups"), r.first("conv_kernel", "mamba_d_conv"),
                    r.derive("d_inner = mamba_num_heads · mamba_head_dim", heads * head_dim))
    attention = {"kind": "attention", "kv_heads": r.kv_heads(),
                 "head_dim": r.head_dim("attention_head_dim")}
    return layers_from_pattern(pattern, {"M": mamba, "*": attention, "-": {"kind": "mlp"},
                                   "E": {"kind": "mlp", "label": "MoE"}})


def _falcon_h1(r: Reader, family: str) -> list[dict[str, Any]]:
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


def _granite_hybrid(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"M": mamba, "A": _attention(r)})


def _lfm2(r: Reader, family: str) -> list[dict[str, Any]]:
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
    return layers_from_pattern(pattern, {"C": conv, "A": _attention(r)})


_BUILDERS = {**{family: _decoder for family in DECODERS},
             "mamba2": _mamba2_family, "jamba": _jamba, "zamba2": _zamba2,
             "recurrent_gemma": _recurrent_gemma, "qwen3_next": _qwen3_next,
             "qwen3_5_text": _qwen3_next, "kimi_linear": _kimi_linear, "minimax": _minimax,
             "nemotron_h": _nemotron_h, "falcon_h1": _falcon_h1,
             "granitemoehybrid": _granite_hybrid, "lfm2": _lfm2}
# Fields that never change the cache, not worth listing one by one as "ignored".
_METADATA = {"_name_or_path", "transformers_version", "torch_dtype", "dtype", "auto_map"}
# Families whose sliding_window field is interpreted (which layers slide is in the file).
_WINDOWED = {"recurrent_gemma", *DECODERS}
# Where a config gives the model's own longest context.
_MAX_CONTEXT_FIELDS = ("max_position_embeddings", "model_max_length", "max_sequence_length")


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


def model_name(config: dict[str, Any], family: str, parameters: int | None = None) -> str:
    """What a pasted model is called: the file's `_name_or_path`, else its first architecture
    (else model_type) and its size in parameters ("GptOssForCausalLM, 116.8B parameters")."""
    if not isinstance(config, dict):
        raise ValueError(f"config: expected a config.json object, got {describe_value(config)}")
    if not isinstance(family, str):
        raise ValueError(f"family: expected the model_type, got {describe_value(family)}")
    if parameters is not None:
        parameters = check_int("parameters", parameters, 0, 2**60)
    name = config.get("_name_or_path") if isinstance(config, dict) else None
    if isinstance(name, str) and name.strip() and len(name) <= 200 and name.isprintable():
        return name.strip()
    architectures = config.get("architectures") if isinstance(config, dict) else None
    base = next((a for a in architectures[:4] if isinstance(a, str) and 0 < len(a) <= 80
                 and a.isprintable()), None) if isinstance(architectures, list) else None
    base = base or f"{family} (config.json)"
    if parameters is None:
        return base
    return f"{base}, {parameters / 1e9:,.1f}B parameters"


def pasted_name(config: dict[str, Any], family: str, parameters: int | None = None) -> str:
    """`model_name` of a whole config.json: a multimodal wrapper with no name of its own is named
    by its language model's config (its text_config's `_name_or_path` or architecture)."""
    name = model_name(config, family, parameters)
    nested, inner = unwrap(config)
    if nested and name.startswith(f"{family} (config.json)"):
        name = model_name(inner, family, parameters)
    return name


def _read_layers(reader: Reader, family: str, known: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """(layer entries, parts left out): a known family's builder, else part by part."""
    if known:
        return _BUILDERS[family](reader, family), []
    parts = read_parts(reader.config, family, reader)
    return cache_entries(parts), parts.left_out


def from_hf_config(config: dict[str, Any] | str | bytes) -> tuple[Model, dict[str, Any]]:
    """A `Model` and a report from a Hugging Face config.json (its text or the parsed dict).

    report: family, read_by ("family" for the families with a builder, "parts" for a new one
    read part by part, `sim.hf_parts`), used (fields read, nested ones by their full path a.b),
    derived (figures computed from other fields, as text), defaults (sizes absent from the
    file, taken from the reference implementation's defaults, as text), left_out (fields that
    name a part not interpreted, with what was done instead), ignored (top-level fields that
    do not change the cache), max_context and max_context_field (the model's own longest
    context, or None).
    Raises a one-line ValueError naming the field for anything it cannot interpret, and both
    fields where two contradict each other.
    """
    config = parse_config(config)
    outer = config
    nested, config = unwrap(config)
    family, known = family_of(config)
    window = config.get("sliding_window")
    if known and family not in _WINDOWED and window is not None and config.get(
            "use_sliding_window", True):
        raise ValueError(f"{nested}sliding_window: {describe_value(window)} is not interpreted for "
                         f"{family} (which layers slide is not in the file); remove it or describe "
                         "the model in the JSON model format")
    reader = Reader(config)
    try:
        layers, left_out = _read_layers(reader, family, known)
        name = model_name(outer, family) if nested else model_name(config, family)
        if nested and name.endswith("(config.json)"):
            name = model_name(config, family)
        model = load_model({"name": name, "layers": layers,
                            "source": f"Hugging Face config.json, model_type {family}"
                                      + ("" if known else ", read part by part")})
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
    report = {"family": family, "read_by": "family" if known else "parts", "used": used,
              "derived": [nested + text for text in reader.derived],
              "defaults": [nested + text for text in reader.defaults],
              "left_out": [nested + text for text in left_out], "ignored": ignored,
              "max_context": limit,
              "max_context_field": None if limit is None else nested + field}
    return model, report
