"""A config.json of a family the Lab has no builder for, read part by part.

    parts = read_parts(Reader(config), model_type)   # what each layer is made of
    parts.layers[i].mixer, parts.layers[i].ffn        # one Part each (kind + sizes)
    cache_entries(parts)                              # → sim.cache layer entries
    parts.left_out                                    # fields that name a part not interpreted

A new family is mostly made of parts the known ones already have; each part is recognised by
the fields that describe it, not by model_type:

    attention     num_attention_heads, num_key_value_heads, head_dim (else H / heads),
                  v_head_dim (values narrower than keys, MiMo)
    which layers  layer_types (full_attention, sliding_attention, chunked_attention,
                  linear_attention); hybrid_layer_pattern (MiMo: 1 = sliding window);
                  block_configs (DeciLM / nemotron-nas: per-layer attention and FFN, a no-op or
                  a plain linear in place of either); no_rope_layers / attention_chunk_size
                  (Llama 4: chunked local attention, every 4th layer global)
    windows       sliding_window (or sliding_window_size); the sliding layers' own heads
                  swa_num_attention_heads, swa_num_key_value_heads, swa_head_dim,
                  swa_v_head_dim (MiMo); the full layers' own global_head_dim and
                  num_global_key_value_heads (Gemma 4)
    MLA           kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim, q_lora_rank
    indexer       index_n_heads, index_head_dim (DeepSeek V3.2 / GLM-5 sparse attention): one
                  key of index_head_dim per token cached beside the MLA latent
    compression   compress_ratios (DeepSeek V4): a layer with ratio r > 0 also caches one
                  entry per r tokens (counted as head_dim / r numbers per token)
    linear        linear_num_value_heads, linear_key_head_dim… (Gated DeltaNet, as Qwen3-Next)
    experts       n_routed_experts | num_local_experts | num_experts; num_experts_per_tok |
                  num_experts_per_token | top_k_experts; moe_intermediate_size (else
                  intermediate_size); routed_expert_hidden_size | moe_latent_size (experts
                  work in a narrower latent); shared experts n_shared_experts ·
                  moe_intermediate_size, or shared_expert_intermediate_size | share_expert_dim
                  | shared_intermediate_size
    MoE layers    moe_layer_freq as a per-layer list (1 = MoE) or an int with
                  first_k_dense_replace; interleave_moe_layer_step; decoder_sparse_step and
                  mlp_only_layers; enable_moe_block (Gemma 4: MoE beside the dense MLP)
    dense MLP     dense_intermediate_size | intermediate_size_mlp | intermediate_size
    MTP           num_nextn_predict_layers | mtp_num_hidden_layers: extra layers for
                  multi-token prediction, counted apart (not loaded unless speculating)

Fields that describe a part not interpreted here are listed in `left_out` with what was done
instead (e.g. a block-sparse attention index whose cache layout is not known): the report
says what was read and what was left out, never silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cache import MAX_MIXERS, MAX_TOKENS
from .hf_reader import Reader
from .user_input import check_int, describe_value, quote


@dataclass
class Part:
    """One mixer or feed-forward part of one layer: kind and its sizes."""

    kind: str  # attention | mla | linear | none | dense | moe | dense+moe | linear_map
    sizes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Layer:
    mixer: Part
    ffn: Part


@dataclass
class Parts:
    """Every layer's parts, the model-wide sizes and what was left out."""

    family: str
    hidden: int
    layers: list[Layer]
    mtp_layers: int = 0
    left_out: list[str] = field(default_factory=list)


def _first_int(r: Reader, keys: tuple[str, ...], **options: Any) -> int | None:
    for key in keys:
        if r.has(key):
            return r.int(key, **options)
    return None


def _ffn_mult_to_width(mult: Any, hidden: int, where: str) -> int:
    """DeciLM's FFN width: int(2 · ffn_mult · H / 3) rounded up to a multiple of 256
    (`_ffn_mult_to_intermediate_size`, modeling_decilm.py)."""
    if isinstance(mult, bool) or not isinstance(mult, (int, float)) or not 0 < mult <= 1024:
        raise ValueError(f"{where}: expected a number above 0 and at most 1,024, got "
                         f"{describe_value(mult)}")
    width = int(2 * mult * hidden / 3)
    return -(-width // 256) * 256


def _attention_sizes(r: Reader, prefix: str = "") -> dict[str, Any]:
    heads_key = f"{prefix}num_attention_heads" if r.has(f"{prefix}num_attention_heads") \
        else "num_attention_heads"
    heads = r.int(heads_key)
    if prefix and r.has(f"{prefix}num_key_value_heads"):
        kv = r.int(f"{prefix}num_key_value_heads")
    else:
        kv = r.kv_heads()
    if prefix and r.has(f"{prefix}head_dim"):
        hd = r.int(f"{prefix}head_dim")
    else:
        hd = r.head_dim()
    value_key = f"{prefix}v_head_dim" if prefix and r.has(f"{prefix}v_head_dim") else "v_head_dim"
    vd = r.int(value_key) if r.has(value_key) else hd
    return {"heads": heads, "kv_heads": kv, "head_dim": hd, "v_head_dim": vd}


def _layer_kinds(r: Reader, n: int) -> list[str]:
    """One of full, sliding, chunked, linear per layer, from whichever field gives the pattern."""
    if r.has("layer_types"):
        meaning = {"full_attention": "full", "sliding_attention": "sliding",
                   "chunked_attention": "chunked", "linear_attention": "linear",
                   "attention": "full"}
        values = r.list("layer_types", n, "num_hidden_layers")
        kinds = []
        for i, value in enumerate(values):
            if not isinstance(value, str) or value not in meaning:
                raise ValueError(f"{r.path('layer_types')}[{i}]: cannot interpret {quote(value)} "
                                 f"(a part not known here); understood: {', '.join(meaning)}")
            kinds.append(meaning[value])
        return kinds
    if r.has("hybrid_layer_pattern"):  # MiMo: 1 = sliding-window attention, 0 = full
        values = r.list("hybrid_layer_pattern", n, "num_hidden_layers")
        return ["sliding" if check_int(f"{r.path('hybrid_layer_pattern')}[{i}]", v, 0, 1)
                else "full" for i, v in enumerate(values)]
    if r.has("attention_chunk_size") and r.has("no_rope_layers"):
        values = r.list("no_rope_layers", n, "num_hidden_layers")
        return ["chunked" if check_int(f"{r.path('no_rope_layers')}[{i}]", v, 0, 1) else "full"
                for i, v in enumerate(values)]
    if r.has("attention_chunk_size"):  # Llama 4's default no_rope_layers: every 4th is global
        every = r.int("no_rope_layer_interval", default=4, why="Llama4TextConfig default")
        return ["full" if (i + 1) % every == 0 else "chunked" for i in range(n)]
    return ["full"] * n


def _moe_flags(r: Reader, n: int) -> list[bool]:
    """Which layers hold routed experts."""
    if isinstance(r.config.get("moe_layer_freq"), list):
        values = r.list("moe_layer_freq", n, "num_hidden_layers")
        return [bool(check_int(f"{r.path('moe_layer_freq')}[{i}]", v, 0, 1))
                for i, v in enumerate(values)]
    first = r.int("first_k_dense_replace", low=0, high=n, default=0, why="no dense layers")
    if r.has("interleave_moe_layer_step"):
        step = r.int("interleave_moe_layer_step", high=n)
        return [i >= first and (i + 1) % step == 0 for i in range(n)]
    every = r.int("moe_layer_freq", high=n) if r.has("moe_layer_freq") else (
        r.int("decoder_sparse_step", high=n) if r.has("decoder_sparse_step") else 1)
    dense = set()
    if r.has("mlp_only_layers"):
        dense = {check_int(f"{r.path('mlp_only_layers')}[{i}]", x, 0, n - 1)
                 for i, x in enumerate(r.list("mlp_only_layers"))}
    key = "moe_layer_freq" if r.has("moe_layer_freq") else "decoder_sparse_step"
    if key == "moe_layer_freq":
        return [i >= first and (i - first) % every == 0 and i not in dense for i in range(n)]
    return [i >= first and (i + 1) % every == 0 and i not in dense for i in range(n)]


_EXPERTS = ("n_routed_experts", "num_local_experts", "num_experts")
_PER_TOKEN = ("num_experts_per_tok", "num_experts_per_token", "top_k_experts",
              "experts_per_token")


def _moe_sizes(r: Reader, hidden: int) -> dict[str, Any] | None:
    experts = _first_int(r, _EXPERTS, low=0)
    if not experts:
        return None
    k = _first_int(r, _PER_TOKEN, high=experts)
    if k is None:
        raise ValueError(f"{r.path('num_experts_per_tok')}: missing; {experts} experts need the "
                         "number used per token")
    width = _first_int(r, ("moe_intermediate_size",)) or r.int("intermediate_size")
    latent = _first_int(r, ("routed_expert_hidden_size", "moe_latent_size"))
    shared = 0
    n_shared = r.int("n_shared_experts", low=0) if r.has("n_shared_experts") else (
        r.int("num_shared_experts", low=0) if r.has("num_shared_experts") else None)
    explicit = _first_int(r, ("shared_expert_intermediate_size", "share_expert_dim",
                              "shared_intermediate_size"), low=0)
    if explicit is not None:
        shared = explicit * (n_shared if n_shared and r.has("share_expert_dim") else 1)
    elif n_shared:
        shared = n_shared * width
    elif r.has("interleave_moe_layer_step"):  # Llama 4: one shared expert beside the routed
        shared = r.derive("shared expert width = intermediate_size (Llama 4)", width)
    return {"experts": experts, "k": k, "width": width, "latent": latent, "shared": shared}


def _dense_width(r: Reader) -> int | None:
    return _first_int(r, ("dense_intermediate_size", "intermediate_size_mlp", "intermediate_size"))


def _mla_sizes(r: Reader) -> dict[str, Any]:
    rope = r.int("qk_rope_head_dim")
    nope = r.int("qk_nope_head_dim") if r.has("qk_nope_head_dim") else r.derive(
        "qk_nope_head_dim = qk_head_dim − qk_rope_head_dim", r.int("qk_head_dim") - rope)
    return {"heads": r.int("num_attention_heads"), "rank": r.int("kv_lora_rank"), "rope": rope,
            "nope": nope, "v_head_dim": r.int("v_head_dim"),
            "q_rank": r.int("q_lora_rank") if r.has("q_lora_rank") else None}


def _block_configs(r: Reader, n: int, hidden: int) -> list[Layer]:
    """DeciLM (nemotron-nas): each layer's attention (no_op, replace_with_linear, or GQA with
    num_attention_heads / n_heads_in_group KV heads, window_length) and FFN (no_op,
    replace_with_linear, or SwiGLU of width from ffn_mult)."""
    blocks = r.list("block_configs", n, "num_hidden_layers")
    heads, hd = r.int("num_attention_heads"), r.head_dim()
    layers = []
    for i, block in enumerate(blocks):
        where = f"{r.path('block_configs')}[{i}]"
        if not isinstance(block, dict) or not isinstance(block.get("attention"), dict) \
                or not isinstance(block.get("ffn"), dict):
            raise ValueError(f"{where}: expected an object with attention and ffn objects, got "
                             f"{describe_value(block)}")
        attention, ffn = block["attention"], block["ffn"]
        for part, name in ((attention, "attention"), (ffn, "ffn")):
            for key in ("sparsify", "num_sink_tokens"):
                if part.get(key):
                    raise ValueError(f"{where}.{name}.{key}: {describe_value(part[key])} is a part "
                                     "not interpreted here; only null is read")
        if attention.get("no_op"):
            mixer = Part("none")
        elif attention.get("replace_with_linear"):
            mixer = Part("linear_map", {"width": hidden})
        else:
            group = check_int(f"{where}.attention.n_heads_in_group",
                              attention.get("n_heads_in_group"), 1, heads)
            if heads % group:
                raise ValueError(f"{where}.attention.n_heads_in_group: {group} does not divide "
                                 f"num_attention_heads {heads}")
            window = attention.get("window_length")
            sizes = {"heads": heads, "kv_heads": heads // group, "head_dim": hd,
                     "v_head_dim": hd}
            if window is not None:
                sizes["window"] = check_int(f"{where}.attention.window_length", window, 1,
                                            MAX_TOKENS)
            mixer = Part("attention", sizes)
        if ffn.get("no_op"):
            mlp = Part("none")
        elif ffn.get("replace_with_linear"):
            mlp = Part("linear_map", {"width": hidden})
        else:
            mlp = Part("dense", {"width": _ffn_mult_to_width(ffn.get("ffn_mult"), hidden,
                                                             f"{where}.ffn.ffn_mult")})
        layers.append(Layer(mixer, mlp))
    r.used.append(r.path("block_configs"))
    return layers


# Fields that name a part, read elsewhere or left out; the report lists the left-out ones.
_LEFT_OUT = {
    "sparse_attention_config": "block-sparse attention index (its cache layout is not known "
                               "here): counted as full attention",
    "hc_mult": "hyper-connections (hc_mult streams): the small mixing weights are not counted",
    "num_hash_layers": "hash-routed first MoE layers: counted as ordinary MoE layers",
    "o_lora_rank": "grouped low-rank output projection: counted as o_groups × o_lora_rank",
    "attention_k_eq_v": "keys equal values in the full layers: no v_proj counted, but both "
                        "K and V cached (as engines allocate standard attention)",
    "vocab_size_per_layer_input": "per-layer input embeddings: counted only when "
                                  "hidden_size_per_layer_input > 0",
    "num_kv_shared_layers": "layers sharing another layer's KV: none when 0",
    "compress_ratios": "compressed attention (DeepSeek V4): a layer with ratio r keeps a "
                       "128-token window plus one shared key-value entry per r tokens (and, at "
                       "r = 4, indexer keys per compressed entry); r = 0 taken as full "
                       "attention; the compressors' weights counted as two H × head_dim maps",
}


def read_parts(config: dict[str, Any], family: str, reader: Reader | None = None) -> Parts:
    """Every layer's mixer and feed-forward part, from the fields of `config` (a config.json
    object, its text_config for a wrapper) that describe them; `reader`, when given, is the
    Reader of that object (it records the fields used, for a report)."""
    if not isinstance(config, dict):
        raise ValueError(f"config: expected a config.json object, got {describe_value(config)}")
    if not isinstance(family, str):
        raise ValueError(f"family: expected the model_type, got {describe_value(family)}")
    if reader is not None and (not isinstance(reader, Reader) or reader.config is not config):
        raise ValueError(f"reader: expected the Reader of config, got {describe_value(reader)}")
    if reader is not None:
        return _read(reader, family)
    try:
        return _read(Reader(config), family)
    except ValueError as error:  # called on its own: the message says it is about the config
        raise ValueError(f"config: {error}") from None


def _read(r: Reader, family: str) -> Parts:
    hidden = r.int("hidden_size")
    if r.has("block_configs"):
        n = r.int("num_hidden_layers", high=MAX_MIXERS) if r.has("num_hidden_layers") else len(
            r.config["block_configs"]) if isinstance(r.config["block_configs"], list) else 0
        layers = _block_configs(r, n, hidden)
        return Parts(family, hidden, layers, _mtp(r))
    n = r.int("num_hidden_layers", high=MAX_MIXERS)
    kinds = _layer_kinds(r, n)
    window = _first_int(r, ("sliding_window", "sliding_window_size"), high=MAX_TOKENS)
    chunk = r.int("attention_chunk_size", high=MAX_TOKENS) if "chunked" in kinds else None
    if "sliding" in kinds and window is None:
        raise ValueError(f"{r.path('sliding_window')}: missing; sliding layers need it")
    mla = _mla_sizes(r) if r.has("kv_lora_rank") else None
    full = None if mla else _attention_sizes(r)
    if full is not None and r.has("global_head_dim"):  # Gemma 4: the full layers' own sizes
        full = {**full, "head_dim": r.int("global_head_dim"), "v_head_dim": r.int("global_head_dim")}
        if r.has("num_global_key_value_heads"):
            full["kv_heads"] = r.int("num_global_key_value_heads")
    if full is not None and r.bool("attention_k_eq_v", False, "keys and values apart"):
        full["k_eq_v"] = True
    sliding = full
    if "sliding" in kinds and r.has("swa_num_attention_heads"):  # MiMo's own window heads
        sliding = _attention_sizes(r, "swa_")
    if full is not None and "sliding" in kinds and r.has("global_head_dim"):
        sliding = _attention_sizes(r)
    linear = None
    if "linear" in kinds:
        linear = {"value_heads": r.int("linear_num_value_heads"),
                  "key_heads": r.int("linear_num_key_heads"),
                  "d_k": r.int("linear_key_head_dim"), "d_v": r.int("linear_value_head_dim"),
                  "kernel": r.int("linear_conv_kernel_dim")}
    indexer = None
    if r.has("index_n_heads"):
        indexer = {"heads": r.int("index_n_heads"), "dim": r.int("index_head_dim")}
    ratios = None
    shared_kv = False
    if r.has("compress_ratios"):
        shared_kv = True  # DeepSeek V4: one key-value latent of head_dim per token
        values = r.list("compress_ratios")
        if len(values) < n:
            raise ValueError(f"{r.path('compress_ratios')}: has {len(values)} entries but the "
                             f"{n} layers (num_hidden_layers) each need one")
        ratios = [check_int(f"{r.path('compress_ratios')}[{i}]", v, 0, 1 << 20)
                  for i, v in enumerate(values[:n])]
    moe = _moe_sizes(r, hidden)
    flags = _moe_flags(r, n) if moe else [False] * n
    both = moe is not None and r.bool("enable_moe_block", False, "MoE in place of the MLP")
    dense = _dense_width(r)
    layers = []
    for i, kind in enumerate(kinds):
        if ratios is not None and ratios[i] and window is not None:
            kind = "sliding"  # DeepSeek V4: a window of raw tokens beside the compressed ones
        if kind == "linear":
            mixer = Part("gdn", dict(linear))
        elif mla is not None:
            mixer = Part("mla", dict(mla))
        else:
            sizes = dict(sliding if kind == "sliding" else full)
            if shared_kv:
                sizes["v_head_dim"], sizes["k_eq_v"] = 0, True
            if kind == "sliding":
                sizes["window"] = window
            elif kind == "chunked":
                sizes["window"], sizes["chunked"] = chunk, True
            mixer = Part("attention", sizes)
        if indexer is not None and mixer.kind in ("attention", "mla") and (
                ratios is None or ratios[i] == 4):  # V4: the indexer serves the 1/4 layers
            mixer.sizes["indexer"] = indexer
        if ratios is not None and ratios[i]:
            mixer.sizes["compress"] = ratios[i]
        if flags[i] and both:
            ffn = Part("dense+moe", {**moe, "dense": dense})
        elif flags[i]:
            ffn = Part("moe", dict(moe))
        else:
            if dense is None:
                raise ValueError(f"{r.path('intermediate_size')}: missing; layer {i} has a dense "
                                 "MLP")
            ffn = Part("dense", {"width": dense})
        layers.append(Layer(mixer, ffn))
    parts = Parts(family, hidden, layers, _mtp(r))
    for key, what in _LEFT_OUT.items():
        if r.config.get(key) not in (None, False, 0):
            r.used.append(r.path(key))
            parts.left_out.append(f"{r.path(key)}: {what}")
    return parts


def _mtp(r: Reader) -> int:
    return _first_int(r, ("num_nextn_predict_layers", "mtp_num_hidden_layers"), low=0,
                      high=64) or 0


def cache_entries(parts: Parts) -> list[dict[str, Any]]:
    """The sim.cache layer entries of `parts` (consecutive equal layers merged)."""
    if not isinstance(parts, Parts):
        raise ValueError(f"parts: expected the Parts of read_parts, got {describe_value(parts)}")
    entries: list[dict[str, Any]] = []

    def add(entry: dict[str, Any], parallel: bool = False) -> None:
        if parallel:
            entries.append({**entry, "count": 1, "parallel": True})
            return
        last = entries[-1] if entries else None
        if last is not None and not last.get("parallel") and \
                {k: v for k, v in last.items() if k != "count"} == entry:
            last["count"] += 1
        else:
            entries.append({**entry, "count": 1})

    for layer in parts.layers:
        m = layer.mixer
        s = m.sizes
        extras = []
        if m.kind == "attention":
            entry = {"kind": "attention", "kv_heads": s["kv_heads"], "head_dim": s["head_dim"]}
            if s["v_head_dim"] != s["head_dim"]:
                entry["v_head_dim"] = s["v_head_dim"]
            if s.get("window") is not None:
                entry["window"] = s["window"]
                entry["label"] = "chunked attention" if s.get("chunked") else "sliding attention"
        elif m.kind == "mla":
            entry = {"kind": "mla", "label": "MLA", "latent_dim": s["rank"] + s["rope"],
                     "heads": s["heads"], "qk_head_dim": s["nope"] + s["rope"],
                     "v_head_dim": s["v_head_dim"]}
        elif m.kind == "gdn":
            entry = {"kind": "recurrent", "label": "Gated DeltaNet",
                     "state_shape": [s["value_heads"], s["d_k"], s["d_v"]],
                     "conv_channels": 2 * s["key_heads"] * s["d_k"] + s["value_heads"] * s["d_v"],
                     "conv_kernel": s["kernel"]}
        else:  # no mixer, or a plain linear map: nothing cached
            entry = {"kind": "mlp", "label": "no attention" if m.kind == "none" else "linear"}
        ratio = s.get("compress") or 1
        if s.get("indexer") and s["indexer"]["dim"] % ratio == 0:
            extras.append({"kind": "attention", "label": "indexer keys", "kv_heads": 1,
                           "head_dim": s["indexer"]["dim"] // ratio, "v_head_dim": 0})
        if s.get("compress"):  # one entry per `ratio` tokens: head_dim / ratio numbers a token
            width = s["head_dim"] if m.kind == "attention" else s["rank"] + s["rope"]
            if width % ratio == 0:
                extras.append({"kind": "attention", "label": f"compressed 1/{ratio}",
                               "kv_heads": 1, "head_dim": width // ratio, "v_head_dim": 0})
        add(entry)
        for extra in extras:
            add(extra, parallel=True)
    return entries
