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
    attention: kv_heads, head_dim, window (optional; the cache stops growing at the window)
    mla:       latent_dim (kv_lora_rank + rope dim, stored per token); optional heads,
               qk_head_dim, v_head_dim give the expanded size heads·(qk_head_dim + v_head_dim)
    recurrent: state_shape (e.g. [heads, d_k, d_v]); optional conv_channels and conv_kernel,
               the short convolution keeping channels·(kernel − 1) numbers
    mlp:       nothing (no cache; it appears in the layer strip)

Bytes (B batch, t tokens, e bytes per element):
    attention  2 · kv_heads · head_dim · min(t, window) · B · e_kv
    mla        latent_dim · t · B · e_kv
    recurrent  (Π state_shape + conv_channels · (conv_kernel − 1)) · B · e_state
Defaults: KV cache bf16, state fp32 (engines often keep recurrent state in fp32).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .presets import PRESET_CONFIGS
from .validation import check_choice, check_nonnegative_int, check_positive_int

Array = np.ndarray

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
KINDS = ("attention", "mla", "recurrent", "mlp")
ATTENTION_KINDS = ("attention", "mla")

_COMMON_FIELDS = ("kind", "count", "label", "parallel")
_KIND_FIELDS = {
    "attention": (("kv_heads", "head_dim"), ("window",)),
    "mla": (("latent_dim",), ("heads", "qk_head_dim", "v_head_dim")),
    "recurrent": (("state_shape",), ("conv_channels", "conv_kernel")),
    "mlp": ((), ()),
}
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
        """Bytes one token adds to this mixer's cache (batch 1)."""
        if self.kind == "attention":
            return 2 * self.kv_heads * self.head_dim * kv_bytes
        if self.kind == "mla":
            if expanded and self.heads is not None:
                return self.heads * (self.qk_head_dim + self.v_head_dim) * kv_bytes
            return self.latent_dim * kv_bytes
        return 0

    def cached_tokens(self, tokens: Any) -> Any:
        """Tokens held: all of them, or at most the window for sliding-window attention."""
        return tokens if self.window is None else np.minimum(tokens, self.window)

    def state_numbers(self) -> int:
        """Numbers in the fixed state: Π state_shape + conv_channels · (conv_kernel − 1)."""
        if self.kind != "recurrent":
            return 0
        conv = self.conv_channels * (self.conv_kernel - 1) if self.conv_channels else 0
        return math.prod(self.state_shape) + conv


@dataclass(frozen=True)
class Model:
    """name, source (citation text), entries (the compact JSON layers, normalised),
    mixers (every mixer with its 0-based layer index, in order), n_layers."""

    name: str
    source: str
    entries: tuple[dict[str, Any], ...]
    mixers: tuple[Mixer, ...]
    n_layers: int

    def layers(self) -> list[list[Mixer]]:
        """Mixers grouped by layer: n_layers lists (parallel mixers share a list)."""
        grouped: list[list[Mixer]] = [[] for _ in range(self.n_layers)]
        for mixer in self.mixers:
            grouped[mixer.layer].append(mixer)
        return grouped


# ---------------------------------------------------------------------------------------------
# Loading and validation

def _field_int(path: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{path}: expected a positive integer, got {value!r}")
    return value


def _normalise_entry(i: int, entry: Any) -> dict[str, Any]:
    path = f"layers[{i}]"
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: expected an object with a 'kind', got {entry!r}")
    if "kind" not in entry:
        raise ValueError(f"{path}.kind: missing; accepted: {', '.join(KINDS)}")
    kind = entry["kind"]
    if kind not in KINDS:
        raise ValueError(f"{path}.kind: unknown kind {kind!r}; accepted: {', '.join(KINDS)}")
    required, optional = _KIND_FIELDS[kind]
    accepted = (*_COMMON_FIELDS, *required, *optional)
    for key in entry:
        if key not in accepted:
            raise ValueError(f"{path}.{key}: unknown field for kind {kind!r}; "
                             f"accepted: {', '.join(accepted)}")
    out: dict[str, Any] = {"kind": kind}
    out["count"] = _field_int(f"{path}.count", entry.get("count", 1))
    label = entry.get("label", _DEFAULT_LABELS[kind])
    if not isinstance(label, str) or not label:
        raise ValueError(f"{path}.label: expected a non-empty string, got {label!r}")
    out["label"] = label
    parallel = entry.get("parallel", False)
    if not isinstance(parallel, bool):
        raise ValueError(f"{path}.parallel: expected true or false, got {parallel!r}")
    out["parallel"] = parallel
    for key in required:
        if key not in entry:
            raise ValueError(f"{path}.{key}: missing; kind {kind!r} needs {', '.join(required)}")
    if kind == "recurrent":
        shape = entry["state_shape"]
        if not isinstance(shape, (list, tuple)) or not shape:
            raise ValueError(f"{path}.state_shape: expected a non-empty list of positive "
                             f"integers such as [heads, d_k, d_v], got {shape!r}")
        out["state_shape"] = [_field_int(f"{path}.state_shape[{j}]", n)
                              for j, n in enumerate(shape)]
    else:
        for key in required:
            out[key] = _field_int(f"{path}.{key}", entry[key])
    for key in optional:
        if entry.get(key) is not None:
            out[key] = _field_int(f"{path}.{key}", entry[key])
    groups = {"mla": ("heads", "qk_head_dim", "v_head_dim"),
              "recurrent": ("conv_channels", "conv_kernel")}.get(kind, ())
    given = [key for key in groups if key in out]
    if given and len(given) != len(groups):
        missing = [key for key in groups if key not in out][0]
        raise ValueError(f"{path}.{missing}: missing; give all of {', '.join(groups)} or none")
    return out


def load_model(config: Any, source: str | None = None) -> Model:
    """A `Model` from a dict, a JSON string or a `Model` (returned as is).

    Every problem raises ValueError naming the field path, e.g. "layers[2].kv_heads".
    """
    if isinstance(config, Model):
        return config
    if isinstance(config, (str, bytes)):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as error:
            raise ValueError(f"config: not valid JSON ({error})") from None
    if not isinstance(config, dict):
        raise ValueError(f"config: expected an object with 'name' and 'layers', got {config!r:.60}")
    for key in config:
        if key not in ("name", "layers", "source"):
            raise ValueError(f"{key}: unknown field; accepted: name, layers, source")
    name = config.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty string, got {name!r}")
    cited = config.get("source", source or "")
    if not isinstance(cited, str):
        raise ValueError(f"source: expected a string, got {cited!r}")
    layers = config.get("layers")
    if not isinstance(layers, list) or not layers:
        raise ValueError(f"layers: expected a non-empty list of entries, got {layers!r:.60}")
    entries = tuple(_normalise_entry(i, entry) for i, entry in enumerate(layers))
    mixers: list[Mixer] = []
    n_layers = 0
    for i, entry in enumerate(entries):
        fields = {key: value for key, value in entry.items()
                  if key not in ("kind", "count", "label", "parallel")}
        if "state_shape" in fields:
            fields["state_shape"] = tuple(fields["state_shape"])
        count = entry["count"]
        if entry["parallel"]:
            if count > n_layers:
                raise ValueError(
                    f"layers[{i}].parallel: joins the last {count} layers, but only {n_layers} "
                    "come before it; lower count or drop parallel")
            indices = range(n_layers - count, n_layers)
        else:
            indices = range(n_layers, n_layers + count)
            n_layers += count
        mixers.extend(Mixer(layer, entry["kind"], entry["label"], **fields) for layer in indices)
    mixers.sort(key=lambda m: m.layer)  # stable: within a layer, entries keep their order
    return Model(name, cited, entries, tuple(mixers), n_layers)


def model_to_dict(model: Model) -> dict[str, Any]:
    """The compact JSON form (entries with counts); `load_model` reads it back."""
    entries = []
    for entry in model.entries:
        compact = {key: value for key, value in entry.items()
                   if not (key == "count" and value == 1) and not (key == "parallel" and not value)
                   and not (key == "label" and value == _DEFAULT_LABELS[entry["kind"]])}
        entries.append(compact)
    return {"name": model.name, "source": model.source, "layers": entries}


def model_to_json(model: Model, indent: int | None = 2) -> str:
    return json.dumps(model_to_dict(model), indent=indent, ensure_ascii=False)


PRESETS: dict[str, Model] = {key: load_model(config) for key, config in PRESET_CONFIGS.items()}


def get_model(model: Any) -> Model:
    """A preset id, a `Model`, a dict or a JSON string → `Model`."""
    if isinstance(model, str) and not model.lstrip().startswith("{"):
        check_choice("model", model, PRESETS)
        return PRESETS[model]
    return load_model(model)


# ---------------------------------------------------------------------------------------------
# Bytes

def _dtype(name: str, value: str) -> int:
    return DTYPE_BYTES[check_choice(name, value, DTYPE_BYTES)]


def _tokens(tokens: Any) -> Any:
    if isinstance(tokens, (int, np.integer)) and not isinstance(tokens, bool):
        return check_nonnegative_int("tokens", tokens)
    a = np.asarray(tokens)
    if a.ndim == 0 or not np.issubdtype(a.dtype, np.integer) or (a.size and a.min() < 0):
        raise ValueError(f"tokens: expected an integer ≥ 0 or an array of them, got {tokens!r:.60}")
    return a.astype(np.int64)


def mixer_kv_bytes(mixer: Mixer, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                   expanded: bool = False) -> Any:
    """KV-cache bytes of one mixer after `tokens` tokens (an int or an int array)."""
    per_token = mixer.kv_bytes_per_token(_dtype("kv_dtype", kv_dtype), expanded)
    return per_token * mixer.cached_tokens(tokens) * batch


def kv_cache_bytes(model: Any, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                   expanded: bool = False) -> Any:
    """Total KV-cache bytes for `tokens` tokens per sequence and `batch` sequences. With
    `expanded`, MLA layers that give heads/qk_head_dim/v_head_dim count their expanded K and V."""
    model = get_model(model)
    tokens = _tokens(tokens)
    batch = check_positive_int("batch", batch)
    total = sum(mixer_kv_bytes(m, tokens, batch, kv_dtype, expanded) for m in model.mixers)
    return int(total) if np.ndim(total) == 0 else total


def state_bytes(model: Any, batch: int = 1, state_dtype: str = "fp32") -> int:
    """Fixed-state bytes: recurrent states plus short-convolution states, for `batch` sequences."""
    model = get_model(model)
    batch = check_positive_int("batch", batch)
    element = _dtype("state_dtype", state_dtype)
    return sum(m.state_numbers() for m in model.mixers) * element * batch


def memory_curve(model: Any, tokens: Any, batch: int = 1, kv_dtype: str = "bf16",
                 state_dtype: str = "fp32") -> dict[str, Array]:
    """KV bytes, state bytes and their total over an array of token counts (for plots).
    Returns int64 arrays {"tokens", "kv_cache_bytes", "state_bytes", "total_bytes"}."""
    model = get_model(model)
    t = np.atleast_1d(_tokens(tokens)).astype(np.int64)
    kv = np.asarray(kv_cache_bytes(model, t, batch, kv_dtype), dtype=np.int64)
    kv = np.broadcast_to(kv, t.shape).copy()
    state = np.full(t.shape, state_bytes(model, batch, state_dtype), dtype=np.int64)
    return {"tokens": t, "kv_cache_bytes": kv, "state_bytes": state, "total_bytes": kv + state}


def full_attention_reference(model: Any) -> Model | None:
    """The same model with every token-mixing layer (attention, MLA, recurrent) turned into one
    full-attention mixer shaped like the model's first attention-bearing mixer, window removed.
    MLP-only layers stay. None when the model has no attention to take the shape from."""
    model = get_model(model)
    shape = next((m for m in model.mixers if m.kind in ATTENTION_KINDS), None)
    if shape is None:
        return None
    mixers = []
    for layer, group in enumerate(model.layers()):
        if any(m.kind != "mlp" for m in group):
            mixers.append(Mixer(layer, shape.kind, f"full {shape.label}", shape.kv_heads,
                                shape.head_dim, None, shape.latent_dim, shape.heads,
                                shape.qk_head_dim, shape.v_head_dim))
        else:
            mixers.extend(group)
    return Model(f"{model.name} (full attention)", model.source, (), tuple(mixers),
                 model.n_layers)


def per_layer(model: Any, tokens: int, batch: int = 1, kv_dtype: str = "bf16",
              state_dtype: str = "fp32") -> list[dict[str, Any]]:
    """One row per mixer, in layer order: layer, kind, label, kv_bytes, state_bytes."""
    model = get_model(model)
    tokens = check_nonnegative_int("tokens", tokens)
    batch = check_positive_int("batch", batch)
    element = _dtype("state_dtype", state_dtype)
    return [{"layer": m.layer, "kind": m.kind, "label": m.label,
             "kv_bytes": int(mixer_kv_bytes(m, tokens, batch, kv_dtype)),
             "state_bytes": m.state_numbers() * element * batch} for m in model.mixers]


def cache_report(model: Any, tokens: int, batch: int = 1, kv_dtype: str = "bf16",
                 state_dtype: str = "fp32") -> dict[str, Any]:
    """Everything the calculator shows, JSON-ready.

    Keys: model, n_layers, tokens, batch, kv_dtype, state_dtype, kv_cache_bytes, state_bytes,
    total_bytes, kv_bytes_per_token (without window capping), mla_expanded_kv_bytes (None without
    MLA heads), full_attention_kv_bytes (None without attention), ratio (kv_cache_bytes over
    full_attention_kv_bytes, or None), per_layer (rows as in `per_layer`).
    """
    model = get_model(model)
    tokens = check_nonnegative_int("tokens", tokens)
    rows = per_layer(model, tokens, batch, kv_dtype, state_dtype)
    kv = sum(r["kv_bytes"] for r in rows)
    state = sum(r["state_bytes"] for r in rows)
    reference = full_attention_reference(model)
    full = kv_cache_bytes(reference, tokens, batch, kv_dtype) if reference else None
    has_expanded = any(m.kind == "mla" and m.heads is not None for m in model.mixers)
    element = _dtype("kv_dtype", kv_dtype)
    return {
        "model": model.name,
        "n_layers": model.n_layers,
        "tokens": tokens,
        "batch": batch,
        "kv_dtype": kv_dtype,
        "state_dtype": state_dtype,
        "kv_cache_bytes": kv,
        "state_bytes": state,
        "total_bytes": kv + state,
        "kv_bytes_per_token": sum(m.kv_bytes_per_token(element) for m in model.mixers),
        "mla_expanded_kv_bytes": (kv_cache_bytes(model, tokens, batch, kv_dtype, expanded=True)
                                  if has_expanded else None),
        "full_attention_kv_bytes": full,
        "ratio": kv / full if full else None,
        "per_layer": rows,
    }


def format_bytes(n: float) -> str:
    """Binary units for people: 4294967296 → "4 GiB", 131072 → "128 KiB"."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.4g} {unit}"
    return f"{int(n)} B"
