"""Cache calculator: KV-cache and fixed-state bytes of a model, layer by layer.

A model is an ordered list of mixers in 0-indexed layers, read from JSON such as

    {"name": "demo", "layers": [
        {"kind": "attention", "count": 16, "kv_heads": 4, "head_dim": 256, "window": null},
        {"kind": "mla", "count": 7, "latent_dim": 576},
        {"kind": "recurrent", "count": 48, "state_shape": [48, 128, 128],
         "conv_channels": 10240, "conv_kernel": 4},
        {"kind": "mlp"}]}

Entry fields: `kind` (attention | mla | recurrent | mlp), `count` (default 1: the entry repeats
in that many consecutive layers), `label` (optional display name), `parallel` (true: the entry's
count copies join the last `count` layers instead of adding new ones, e.g. Falcon-H1's
attention and Mamba-2 side by side), and per kind:
    attention: kv_heads, head_dim, window (optional; the cache stops growing at the window),
               v_head_dim (optional, default head_dim: values narrower than keys, as MiMo's
               192/128; 0 caches keys only, as the sparse-attention indexer of DeepSeek V3.2)
    mla:       latent_dim (kv_lora_rank + rope dim, stored per token); optional heads,
               qk_head_dim, v_head_dim give the expanded size heads·(qk_head_dim + v_head_dim)
    recurrent: state_shape (e.g. [heads, d_k, d_v]); optional conv_channels and conv_kernel,
               the short convolution keeping channels·(kernel − 1) numbers
    mlp:       nothing (no cache; it appears in the layer strip)

Bytes (B batch, t tokens, e bytes per element):
    attention  kv_heads · (head_dim + v_head_dim) · min(t, window) · B · e_kv
    mla        latent_dim · t · B · e_kv
    recurrent  (Π state_shape + conv_channels · (conv_kernel − 1)) · B · e_state
Defaults: KV cache bf16, state fp32 (engines often keep recurrent state in fp32).

Limits, checked before any layer is built (a ValueError names the field's JSON path, the value,
shortened when huge, and the accepted range):
    count, summed over entries   ≤ MAX_MIXERS (4,096 layers and parallel mixers in all)
    every head count and dim     ≤ MAX_DIM (2^20): kv_heads, head_dim, latent_dim, heads,
                                   qk_head_dim, v_head_dim, state_shape[i], conv_channels,
                                   conv_kernel; state_shape has at most 4 entries
    window, tokens               ≤ MAX_TOKENS (2^40);  batch ≤ MAX_BATCH (2^20)
    every byte figure            ≤ MAX_BYTES (2^53): exact as an int, and exact again in a
                                   float64 (JSON, JavaScript); a model whose KV bytes per token or
                                   state bytes in fp32 pass it is refused when loaded, a tokens ×
                                   batch that makes a figure pass it is refused when asked
Work is proportional to the number of entries, not to `count`: a model is kept as groups
(one entry's mixer and its count) and every figure is computed once per group; only
`Model.mixers` and the per-layer rows list each layer (at most MAX_MIXERS of them).
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from .presets import PRESET_CONFIGS
from .user_input import (
    check_int,
    check_text,
    describe_value,
    key_path,
    parse_json_text,
    quote,
)
from .validation import check_choice

Array = np.ndarray

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
KINDS = ("attention", "mla", "recurrent", "mlp")
ATTENTION_KINDS = ("attention", "mla")

MAX_MIXERS = 4096  # layers plus parallel mixers; the presets have at most 88
MAX_DIM = 2**20  # any head count or dimension (today's largest are ~2^14)
MAX_STATE_RANK = 4  # entries of state_shape: [heads, d_k, d_v] has 3
MAX_TOKENS = 2**40  # ~1.1 trillion tokens per sequence; contexts today are below 2^24
MAX_BATCH = 2**20
MAX_BYTES = 2**53  # every byte figure stays an exact integer in a float64 (JSON, JavaScript)
MAX_POINTS = 2**20  # token counts in one memory curve
MAX_NAME_CHARS = 200  # name, label
MAX_SOURCE_CHARS = 4000  # the longest preset citation is ~600 characters

_COMMON_FIELDS = ("kind", "count", "label", "parallel")
_KIND_FIELDS = {
    "attention": (("kv_heads", "head_dim"), ("window", "v_head_dim")),
    "mla": (("latent_dim",), ("heads", "qk_head_dim", "v_head_dim")),
    "recurrent": (("state_shape",), ("conv_channels", "conv_kernel")),
    "mlp": ((), ()),
}
_FIELD_MAX = {"count": MAX_MIXERS, "window": MAX_TOKENS}  # every other size: MAX_DIM
_DEFAULT_LABELS = {"attention": "attention", "mla": "MLA", "recurrent": "recurrent", "mlp": "MLP"}


@dataclass(frozen=True)
class Mixer:
    """One mixer in one layer. Fields not used by its kind are None."""

    layer: int
    kind: str
    label: str
    kv_heads: int | None = None
    head_dim: int | None = None
    window: int | None = None
    latent_dim: int | None = None
    heads: int | None = None
    qk_head_dim: int | None = None
    v_head_dim: int | None = None
    state_shape: tuple[int, ...] | None = None
    conv_channels: int | None = None
    conv_kernel: int | None = None

    def kv_bytes_per_token(self, kv_bytes: int = 2, expanded: bool = False) -> int:
        """Bytes one token adds to this mixer's cache (batch 1); kv_bytes per element, 1 to 8."""
        if kv_bytes not in (1, 2, 4, 8) or isinstance(kv_bytes, bool):
            raise ValueError(f"kv_bytes: expected 1, 2, 4 or 8 bytes per element, got "
                             f"{describe_value(kv_bytes)}")
        if self.kind == "attention":
            return self.kv_heads * (self.head_dim + self.value_dim) * kv_bytes
        if self.kind == "mla":
            if expanded and self.heads is not None:
                return self.heads * (self.qk_head_dim + self.v_head_dim) * kv_bytes
            return self.latent_dim * kv_bytes
        return 0

    @property
    def value_dim(self) -> int:
        """An attention layer's value width per KV head: v_head_dim, else head_dim."""
        return self.head_dim if self.v_head_dim is None else self.v_head_dim

    def cached_tokens(self, tokens: Any, block_tokens: int | None = None) -> Any:
        """Tokens held: all of them, or at most the window for sliding-window attention; with
        `block_tokens` B, rounded up to whole blocks of B (what a paged engine allocates).
        An int in, an exact int out; an int64 array in, an array out (each checked: 0 to
        MAX_TOKENS, at most MAX_POINTS of them; block_tokens 1 to MAX_DIM)."""
        return self._held(_tokens(tokens), _block(block_tokens))

    def _held(self, tokens: Any, block_tokens: int | None = None) -> Any:
        """`cached_tokens` for checked arguments (the per-group inner loop)."""
        held = tokens
        if self.window is not None:
            held = (np.minimum(tokens, self.window) if isinstance(tokens, np.ndarray)
                    else min(tokens, self.window))
        if block_tokens is not None:
            held = -(-held // block_tokens) * block_tokens
        return held

    def state_numbers(self) -> int:
        """Numbers in the fixed state: Π state_shape + conv_channels · (conv_kernel − 1)."""
        if self.kind != "recurrent":
            return 0
        conv = self.conv_channels * (self.conv_kernel - 1) if self.conv_channels else 0
        product = 1
        for n in self.state_shape:
            product *= n
        return product + conv


@dataclass(frozen=True)
class MixerGroup:
    """`count` copies of `mixer` in the consecutive layers mixer.layer … mixer.layer + count − 1
    (one layer entry). Figures are computed once per group and multiplied by `count`."""

    mixer: Mixer
    count: int

    @property
    def first(self) -> int:
        return self.mixer.layer

    @property
    def last(self) -> int:
        return self.mixer.layer + self.count - 1


@dataclass(frozen=True)
class Model:
    """name, source (citation text), entries (the compact JSON layers, normalised), groups
    (one `MixerGroup` per entry, in entry order), n_layers.

    `mixers` (every mixer with its 0-based layer index, in layer order; parallel mixers of one
    layer in entry order) is listed on first use only."""

    name: str
    source: str
    entries: tuple[dict[str, Any], ...]
    groups: tuple[MixerGroup, ...]
    n_layers: int

    @cached_property
    def _order(self) -> list[tuple[int, int]]:
        """(layer, group index) of every mixer, in the order of `mixers`."""
        return sorted((layer, i) for i, group in enumerate(self.groups)
                      for layer in range(group.first, group.last + 1))

    @cached_property
    def mixers(self) -> tuple[Mixer, ...]:
        groups = self.groups
        return tuple(groups[i].mixer if layer == groups[i].first
                     else replace(groups[i].mixer, layer=layer) for layer, i in self._order)

    def layers(self) -> list[list[Mixer]]:
        """Mixers grouped by layer: n_layers lists (parallel mixers share a list)."""
        grouped: list[list[Mixer]] = [[] for _ in range(self.n_layers)]
        for mixer in self.mixers:
            grouped[mixer.layer].append(mixer)
        return grouped


# ---------------------------------------------------------------------------------------------
# Loading and validation

def _field_int(path: str, key: str, value: Any) -> int:
    return check_int(path, value, 1, _FIELD_MAX.get(key, MAX_DIM))


def _normalise_entry(i: int, entry: Any) -> dict[str, Any]:
    path = f"layers[{i}]"
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: expected an object with a 'kind', got {describe_value(entry)}")
    if "kind" not in entry:
        raise ValueError(f"{path}.kind: missing; accepted: {', '.join(KINDS)}")
    kind = entry["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"{path}.kind: unknown kind {quote(kind)}; accepted: {', '.join(KINDS)}")
    required, optional = _KIND_FIELDS[kind]
    accepted = (*_COMMON_FIELDS, *required, *optional)
    for key in entry:
        if key not in accepted:
            raise ValueError(f"{key_path(path, key)}: unknown field for kind {kind!r}; "
                             f"accepted: {', '.join(accepted)}")
    out: dict[str, Any] = {"kind": kind}
    out["count"] = _field_int(f"{path}.count", "count", entry.get("count", 1))
    out["label"] = check_text(f"{path}.label", entry.get("label", _DEFAULT_LABELS[kind]),
                              MAX_NAME_CHARS)
    parallel = entry.get("parallel", False)
    if not isinstance(parallel, bool):
        raise ValueError(f"{path}.parallel: expected true or false, got {describe_value(parallel)}")
    out["parallel"] = parallel
    for key in required:
        if key not in entry:
            raise ValueError(f"{path}.{key}: missing; kind {kind!r} needs {', '.join(required)}")
    if kind == "recurrent":
        shape = entry["state_shape"]
        if not isinstance(shape, (list, tuple)) or not 1 <= len(shape) <= MAX_STATE_RANK:
            raise ValueError(f"{path}.state_shape: expected a list of 1 to {MAX_STATE_RANK} "
                             f"positive integers such as [heads, d_k, d_v], got "
                             f"{describe_value(shape)}")
        out["state_shape"] = [_field_int(f"{path}.state_shape[{j}]", "state_shape", n)
                              for j, n in enumerate(shape)]
    else:
        for key in required:
            out[key] = _field_int(f"{path}.{key}", key, entry[key])
    for key in optional:
        if entry.get(key) is not None:
            if kind == "attention" and key == "v_head_dim":  # 0: keys only (an indexer)
                out[key] = check_int(f"{path}.{key}", entry[key], 0, MAX_DIM)
            else:
                out[key] = _field_int(f"{path}.{key}", key, entry[key])
    groups = {"mla": ("heads", "qk_head_dim", "v_head_dim"),
              "recurrent": ("conv_channels", "conv_kernel")}.get(kind, ())
    given = [key for key in groups if key in out]
    if given and len(given) != len(groups):
        missing = [key for key in groups if key not in out][0]
        raise ValueError(f"{path}.{missing}: missing; give all of {', '.join(groups)} or none")
    return out


def _check_model_size(groups: list[MixerGroup]) -> None:
    """KV bytes per token and state bytes, in the widest dtype (fp32), within MAX_BYTES."""
    widest = max(DTYPE_BYTES.values())
    kv = state = 0
    for i, group in enumerate(groups):
        mixer = group.mixer
        kv += group.count * max(mixer.kv_bytes_per_token(widest),
                                mixer.kv_bytes_per_token(widest, expanded=True))
        state += group.count * mixer.state_numbers() * widest
        for what, value in (("KV cache per token", kv), ("fixed state", state)):
            if value > MAX_BYTES:
                raise ValueError(
                    f"layers[{i}]: with this entry the model's {what} reaches {value:,} bytes "
                    f"in fp32; accepted: at most 2^53 = {MAX_BYTES:,} bytes; use smaller sizes")


def load_model(config: Any, source: str | None = None) -> Model:
    """A `Model` from a dict, a JSON text (see `parse_model_text`) or a `Model` (returned as is).

    Every problem raises a one-line ValueError naming the field path, e.g.
    "layers[2].kv_heads"; nothing is expanded per layer before every size is checked.
    """
    if isinstance(config, Model):
        return config
    if source is not None and not isinstance(source, str):
        raise ValueError(f"source: expected text or None, got {describe_value(source)}")
    if isinstance(config, (str, bytes, bytearray)):
        config = parse_json_text(config)
    if not isinstance(config, dict):
        raise ValueError("config: expected an object with 'name' and 'layers', got "
                         f"{describe_value(config)}")
    for key in config:
        if key not in ("name", "layers", "source"):
            raise ValueError(f"{key_path('', key)}: unknown field; accepted: name, layers, source")
    name = check_text("name", config.get("name"), MAX_NAME_CHARS)
    cited = check_text("source", config.get("source", source or ""), MAX_SOURCE_CHARS, empty=True)
    layers = config.get("layers")
    if not isinstance(layers, list) or not layers:
        raise ValueError(f"layers: expected a non-empty list of entries, got {describe_value(layers)}")
    if len(layers) > MAX_MIXERS:
        raise ValueError(f"layers: {len(layers):,} entries is too many; accepted: at most "
                         f"{MAX_MIXERS:,}")
    entries = tuple(_normalise_entry(i, entry) for i, entry in enumerate(layers))
    groups: list[MixerGroup] = []
    n_layers = mixers = 0
    for i, entry in enumerate(entries):
        count = entry["count"]
        mixers += count
        if mixers > MAX_MIXERS:
            raise ValueError(
                f"layers[{i}].count: with this entry the model has {mixers:,} layers and parallel "
                f"mixers; accepted: at most {MAX_MIXERS:,} in all")
        fields = {key: value for key, value in entry.items() if key not in _COMMON_FIELDS}
        if "state_shape" in fields:
            fields["state_shape"] = tuple(fields["state_shape"])
        if entry["parallel"]:
            if count > n_layers:
                raise ValueError(
                    f"layers[{i}].parallel: joins the last {count} layers, but only {n_layers} "
                    "come before it; lower count or drop parallel")
            first = n_layers - count
        else:
            first = n_layers
            n_layers += count
        groups.append(MixerGroup(Mixer(first, entry["kind"], entry["label"], **fields), count))
    _check_model_size(groups)
    return Model(name, cited, entries, tuple(groups), n_layers)


def parse_model_text(text: str | bytes, source: str | None = None) -> Model:
    """A `Model` from the text of a JSON box or file, within the limits of `sim.user_input`:
    at most 64 KiB, nested at most 32 deep, no NaN/Infinity, no integer longer than 40 digits
    (never converted), no key repeated in an object. Raises a one-line ValueError otherwise."""
    return load_model(parse_json_text(text), source)


def model_to_dict(model: Model) -> dict[str, Any]:
    """The compact JSON form (entries with counts); `load_model` reads it back."""
    if not isinstance(model, Model):
        raise ValueError(f"model: expected a sim.cache.Model, got {describe_value(model)}")
    entries = []
    for entry in model.entries:
        compact = {key: value for key, value in entry.items()
                   if not (key == "count" and value == 1) and not (key == "parallel" and not value)
                   and not (key == "label" and value == _DEFAULT_LABELS[entry["kind"]])}
        entries.append(compact)
    return {"name": model.name, "source": model.source, "layers": entries}


def model_to_json(model: Model, indent: int | None = 2) -> str:
    """The compact JSON form as text; indent None (one line) or 0 to 16 spaces."""
    if indent is not None:
        indent = _integer("indent", indent, 0, 16)
    return json.dumps(model_to_dict(model), indent=indent, ensure_ascii=False)


PRESETS: dict[str, Model] = {key: load_model(config) for key, config in PRESET_CONFIGS.items()}


def get_model(model: Any) -> Model:
    """A preset id, a `Model`, a dict or a JSON string → `Model`."""
    if isinstance(model, str):
        if model in PRESETS:
            return PRESETS[model]
        if not model[:1000].lstrip().startswith("{"):
            check_choice("model", model, PRESETS)
    return load_model(model)


# ---------------------------------------------------------------------------------------------
# Arguments of the byte calculations

def _dtype(name: str, value: str) -> int:
    return DTYPE_BYTES[check_choice(name, value, DTYPE_BYTES)]


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, np.integer) and not isinstance(value, np.bool_):
        value = int(value)
    return check_int(name, value, low, high)


def _batch(batch: Any) -> int:
    return _integer("batch", batch, 1, MAX_BATCH)


def _block(block_tokens: Any) -> int | None:
    return None if block_tokens is None else _integer("block_tokens", block_tokens, 1, MAX_DIM)


def _tokens(tokens: Any) -> int | Array:
    """One token count (an exact int) or an int64 array of them, each in [0, MAX_TOKENS]."""
    if isinstance(tokens, (int, np.integer)) and not isinstance(tokens, (bool, np.bool_)):
        return _integer("tokens", tokens, 0, MAX_TOKENS)
    accepted = f"an integer from 0 to {MAX_TOKENS:,} or an array of them"
    try:
        a = np.asarray(tokens)
    except (TypeError, ValueError, RecursionError, OverflowError):
        raise ValueError(f"tokens: expected {accepted}, got {describe_value(tokens)}") from None
    if a.ndim == 0 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"tokens: expected {accepted}, got {describe_value(tokens)}")
    if a.size > MAX_POINTS:
        raise ValueError(f"tokens: {a.size:,} points is too many; accepted: at most {MAX_POINTS:,}")
    if a.size and (a.min() < 0 or a.max() > MAX_TOKENS):
        bad = a.min() if a.min() < 0 else a.max()
        raise ValueError(f"tokens: expected {accepted}, got {int(bad):,}")
    return a.astype(np.int64)


def _scalar_tokens(tokens: Any) -> int:
    if isinstance(tokens, np.ndarray) or not isinstance(tokens, (int, np.integer)):
        raise ValueError(f"tokens: expected an integer from 0 to {MAX_TOKENS:,}, got "
                         f"{describe_value(tokens) if not isinstance(tokens, np.ndarray) else 'an array'}")
    return _tokens(tokens)


def _check_bytes(what: str, value: int, culprit: str = "tokens, batch") -> int:
    if value > MAX_BYTES:
        raise ValueError(
            f"{culprit}: {what} would take {value:,} bytes, above the 2^53 = {MAX_BYTES:,} bytes "
            f"that keep every figure exact; lower {' or '.join(culprit.split(', '))}")
    return value


# ---------------------------------------------------------------------------------------------
# Bytes, one group at a time

def _group_kv(group: MixerGroup, tokens: Any, batch: int, element: int, expanded: bool = False,
              block_tokens: int | None = None) -> Any:
    """KV bytes of one copy of the group's mixer (int, or int64 array when tokens is one).
    Callers check the largest value first, so no array product wraps."""
    per_token = group.mixer.kv_bytes_per_token(element, expanded)
    if not per_token:
        return 0
    return per_token * batch * group.mixer._held(tokens, block_tokens)


def _kv_total(groups: tuple[MixerGroup, ...], tokens: int, batch: int, element: int,
              expanded: bool = False, block_tokens: int | None = None) -> int:
    """Exact (Python int) KV bytes of every group at one token count."""
    return sum(group.count * _group_kv(group, tokens, batch, element, expanded, block_tokens)
               for group in groups)


def _state_total(groups: tuple[MixerGroup, ...], batch: int, element: int) -> int:
    return sum(group.count * group.mixer.state_numbers() for group in groups) * element * batch


def mixer_kv_bytes(mixer: Mixer, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                   expanded: bool = False, block_tokens: int | None = None) -> Any:
    """KV-cache bytes of one mixer after `tokens` tokens (an int, or an int array)."""
    if not isinstance(mixer, Mixer):
        raise ValueError(f"mixer: expected a sim.cache.Mixer (a group's .mixer), got "
                         f"{describe_value(mixer)}")
    group = MixerGroup(mixer, 1)
    return kv_cache_bytes(Model("mixer", "", (), (group,), mixer.layer + 1), tokens, batch,
                          kv_dtype, expanded, block_tokens)


def kv_cache_bytes(model: Any, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                   expanded: bool = False, block_tokens: int | None = None) -> Any:
    """Total KV-cache bytes for `tokens` tokens per sequence and `batch` sequences: an exact int
    for an int, an int64 array for an array. With `expanded`, MLA layers that give
    heads/qk_head_dim/v_head_dim count their expanded K and V. With `block_tokens` B, each
    attention/MLA layer's cached tokens are rounded up to a multiple of B (paged KV blocks).
    Raises ValueError when a figure would pass 2^53 bytes."""
    model = get_model(model)
    tokens = _tokens(tokens)
    batch = _batch(batch)
    element = _dtype("kv_dtype", kv_dtype)
    block = _block(block_tokens)
    if not isinstance(tokens, np.ndarray):
        return _check_bytes("the KV cache", _kv_total(model.groups, tokens, batch, element,
                                                      expanded, block))
    peak = _kv_total(model.groups, int(tokens.max()) if tokens.size else 0, batch, element,
                     expanded, block)
    _check_bytes("the KV cache", peak)  # each partial product below is at most the peak
    total = np.zeros(tokens.shape, dtype=np.int64)
    for group in model.groups:
        total += group.count * _group_kv(group, tokens, batch, element, expanded, block)
    return total


def state_bytes(model: Any, batch: int = 1, state_dtype: str = "fp32") -> int:
    """Fixed-state bytes: recurrent states plus short-convolution states, for `batch` sequences."""
    model = get_model(model)
    batch = _batch(batch)
    element = _dtype("state_dtype", state_dtype)
    return _check_bytes("the fixed state", _state_total(model.groups, batch, element), "batch")


def memory_curve(model: Any, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                 state_dtype: str = "fp32", block_tokens: int | None = None) -> dict[str, Array]:
    """KV bytes, state bytes and their total over an array of token counts (for plots).
    Returns int64 arrays {"tokens", "kv_cache_bytes", "state_bytes", "total_bytes"}; every
    value is exact (at most 2^53, checked before computing)."""
    model = get_model(model)
    t = np.atleast_1d(_tokens(tokens)).astype(np.int64)
    kv = kv_cache_bytes(model, t, batch, kv_dtype, block_tokens=block_tokens)
    state = state_bytes(model, batch, state_dtype)
    _check_bytes("the KV cache and state together", (int(kv.max()) if kv.size else 0) + state)
    return {"tokens": t, "kv_cache_bytes": kv, "state_bytes": np.full(t.shape, state, np.int64),
            "total_bytes": kv + state}


def full_attention_reference(model: Any) -> Model | None:
    """The same model with every token-mixing layer (attention, MLA, recurrent) turned into one
    full-attention mixer shaped like the model's first attention-bearing mixer, window removed.
    MLP-only layers stay. None when the model has no attention to take the shape from.
    Built from the groups' layer spans: one group per run of token-mixing layers."""
    model = get_model(model)
    attention = [(g.first, i) for i, g in enumerate(model.groups)
                 if g.mixer.kind in ATTENTION_KINDS]
    if not attention:
        return None
    shape = model.groups[min(attention)[1]].mixer  # the first in layer order, as in `mixers`
    full = Mixer(0, shape.kind, f"full {shape.label}", shape.kv_heads, shape.head_dim, None,
                 shape.latent_dim, shape.heads, shape.qk_head_dim, shape.v_head_dim)
    spans: list[list[int]] = []  # merged [first, last] of the layers holding a token mixer
    for first, last in sorted((g.first, g.last) for g in model.groups if g.mixer.kind != "mlp"):
        if spans and first <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    groups = [MixerGroup(replace(full, layer=first), last - first + 1) for first, last in spans]
    starts = [first for first, _ in spans]
    for g in model.groups:  # MLP mixers outside every span stay, cut around the spans
        if g.mixer.kind != "mlp":
            continue
        at, i = g.first, max(bisect.bisect_right(starts, g.first) - 1, 0)
        while at <= g.last:
            if i < len(spans) and spans[i][0] <= at <= spans[i][1]:
                at = spans[i][1] + 1
                i += 1
                continue
            if i < len(spans) and spans[i][0] < at:
                i += 1
                continue
            end = min(g.last, spans[i][0] - 1) if i < len(spans) else g.last
            groups.append(MixerGroup(replace(g.mixer, layer=at), end - at + 1))
            at = end + 1
    groups.sort(key=lambda group: group.first)
    return Model(f"{model.name} (full attention)", model.source, (), tuple(groups),
                 model.n_layers)


def _rows(model: Model, kv_each: list[int], state_each: list[int]) -> list[dict[str, Any]]:
    groups = model.groups
    return [{"layer": layer, "kind": groups[i].mixer.kind, "label": groups[i].mixer.label,
             "kv_bytes": kv_each[i], "state_bytes": state_each[i]} for layer, i in model._order]


def per_layer(model: Any, tokens: int, batch: int = 1, kv_dtype: str = "bf16",
              state_dtype: str = "fp32", block_tokens: int | None = None) -> list[dict[str, Any]]:
    """One row per mixer, in layer order: layer, kind, label, kv_bytes, state_bytes
    (each group's figures are computed once and repeated for its layers)."""
    return cache_report(model, tokens, batch, kv_dtype, state_dtype, block_tokens)["per_layer"]


def cache_report(model: Any, tokens: int, batch: int = 1, kv_dtype: str = "bf16",
                 state_dtype: str = "fp32", block_tokens: int | None = None) -> dict[str, Any]:
    """Everything the calculator shows, JSON-ready; every byte figure an exact int ≤ 2^53.

    Keys: model, n_layers, tokens, batch, kv_dtype, state_dtype, block_tokens, kv_cache_bytes,
    kv_cache_bytes_in_blocks (with block_tokens B: each attention layer's cached tokens
    rounded up to a multiple of B; else None), state_bytes, total_bytes, kv_bytes_per_token
    (without window capping), mla_expanded_kv_bytes (None without MLA heads),
    full_attention_kv_bytes (None without attention), ratio (kv_cache_bytes over
    full_attention_kv_bytes, or None), per_entry (one row per layer entry: entry, kind, label,
    first_layer, count, kv_bytes and state_bytes of each copy), per_layer (one row per mixer:
    layer, kind, label, kv_bytes, state_bytes).
    """
    model = get_model(model)
    tokens = _scalar_tokens(tokens)
    batch = _batch(batch)
    kv_element = _dtype("kv_dtype", kv_dtype)
    state_element = _dtype("state_dtype", state_dtype)
    block = _block(block_tokens)
    groups = model.groups
    kv_each = [_group_kv(g, tokens, batch, kv_element) for g in groups]
    state_each = [g.mixer.state_numbers() * state_element * batch for g in groups]
    kv = _check_bytes("the KV cache", sum(g.count * b for g, b in zip(groups, kv_each)))
    state = _check_bytes("the fixed state", sum(g.count * b for g, b in zip(groups, state_each)),
                         "batch")
    total = _check_bytes("the KV cache and state together", kv + state)
    reference = full_attention_reference(model)
    full = None
    if reference is not None:
        full = _check_bytes("an all-attention model of the same shape",
                            _kv_total(reference.groups, tokens, batch, kv_element))
    expanded = None
    if any(g.mixer.kind == "mla" and g.mixer.heads is not None for g in groups):
        expanded = _check_bytes("the expanded MLA cache",
                                _kv_total(groups, tokens, batch, kv_element, expanded=True))
    blocked = None
    if block is not None:
        blocked = _check_bytes("the KV cache in blocks",
                               _kv_total(groups, tokens, batch, kv_element, block_tokens=block))
    return {
        "model": model.name,
        "n_layers": model.n_layers,
        "tokens": tokens,
        "batch": batch,
        "kv_dtype": kv_dtype,
        "state_dtype": state_dtype,
        "block_tokens": block,
        "kv_cache_bytes": kv,
        "kv_cache_bytes_in_blocks": blocked,
        "state_bytes": state,
        "total_bytes": total,
        "kv_bytes_per_token": sum(g.count * g.mixer.kv_bytes_per_token(kv_element) for g in groups),
        "mla_expanded_kv_bytes": expanded,
        "full_attention_kv_bytes": full,
        "ratio": kv / full if full else None,
        "per_entry": [{"entry": i, "kind": g.mixer.kind, "label": g.mixer.label,
                       "first_layer": g.first, "count": g.count, "kv_bytes": kv_each[i],
                       "state_bytes": state_each[i]} for i, g in enumerate(groups)],
        "per_layer": _rows(model, kv_each, state_each),
    }


def format_bytes(n: Any) -> str:
    """Binary units for people: 4294967296 → "4 GiB", 131072 → "128 KiB".

    `n` is a real number of bytes (an int, a float or a numpy scalar, not bool) of at most
    2^1024 in size; None, text, complex numbers, NaN and infinities are refused by name."""
    if isinstance(n, np.generic) and not isinstance(n, (np.bool_, np.complexfloating)):
        n = n.item()
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise TypeError(f"format_bytes: n must be a real number of bytes, got "
                        f"{describe_value(n) if not isinstance(n, complex) else 'a complex number'}")
    if isinstance(n, int) and n.bit_length() > 1000:
        raise ValueError(f"format_bytes: n = {describe_value(n)} is out of range; accepted: "
                         "a number of bytes below 2^1000")
    if isinstance(n, float) and not math.isfinite(n):
        raise ValueError(f"format_bytes: n must be a finite number of bytes, got {n!r}")
    return _in_units(n)


@lru_cache(maxsize=4096)  # a page formats the same few sizes thousands of times a run
def _in_units(n: int | float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.4g} {unit}"
    return f"{int(n)} B"
