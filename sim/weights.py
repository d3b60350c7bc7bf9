"""Parameters and weight bytes of a model, from its Hugging Face config.json.

    count = parameter_count(config)          # a dict, JSON text or bytes
    count.total, count.active, count.tensors # exact ints; one row per weight tensor shape
    weight_bytes(count, "bf16")

Every figure is the sum of the module shapes, listed as `Tensor` rows (name, shape, copies):
the formulas of the Lab's engines notes (docs/engines.md §4, which equal `sum(p.numel())` of
the transformers 5.24 modules for the preset families), written out tensor by tensor.
Notation: H hidden_size, V vocab_size, I intermediate_size, nh / nkv attention / KV heads,
hd head dim, E experts, k experts per token.

    embedding      V·H, and the lm_head V·H again unless tie_word_embeddings
    final norm     H;  RMSNorms 2H per layer unless the family says otherwise
    GQA attention  q H·nh·hd, k and v H·nkv·hd each, o nh·hd·H (+ biases where the config has them)
    SwiGLU MLP     gate and up H·I each, down I·H
    MoE layer      router E·H, experts E·3·H·I_moe (+ a shared expert 3·H·I_sh)

"Active" parameters (what one token uses): the total minus the unrouted experts,
(E − k) experts in every MoE layer. `active` counts the embedding and the lm_head (the
convention of Jamba's "12B active"); `active_without_embeddings` leaves both out (MiniMax's
"45.9B activated"). Attention, recurrent mixers, routers, shared experts and norms all count.

Weight bytes (`weight_bytes`): parameters × bytes per parameter, fp32 4, bf16/fp16 2, fp8 1;
int4 is half a byte per parameter plus one bf16 scale (2 bytes) per group of 128 parameters
(GPTQ/AWQ-style, group size 128, zero points not counted). Every tensor is taken at the same
dtype (real checkpoints often keep embeddings and norms in bf16: a lower bound for fp8/int4).

Granite-4.0-H, LFM2 and Nemotron-H's MoE blocks (Nemotron 3) have no formula in docs/engines.md
§4: theirs are written from the module shapes of transformers 5.23 (`modeling_granitemoehybrid.py`,
`modeling_lfm2.py`, `modeling_nemotron_h.py`), each in its function's docstring, from the
module types of §4 (GQA attention, Mamba-2, SwiGLU, MoE). A family without a formula is
refused with one line naming model_type; its cache figures (sim.hf_config) stand. A multimodal
wrapper counts its text_config's language model only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .cache import Model
from .hf_config import from_hf_config
from .hf_parts import Layer, Parts, read_parts
from .hf_reader import DECODERS, Reader, family_of, parse_config, unwrap
from .user_input import check_int, describe_value

WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int4", "shipped")  # shipped: as the file says
_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
INT4_GROUP = 128  # parameters per bf16 scale in int4 weights
MAX_PARAMETERS = 2**50  # ~10^15, far above any model (the largest today ~2·10^12)


@dataclass(frozen=True)
class Tensor:
    """One weight tensor shape, repeated in `copies` layers. `experts` (E, k) marks a stack of
    E routed experts of which k are used per token: shape[0] is E."""

    name: str
    shape: tuple[int, ...]
    copies: int = 1
    embedding: bool = False
    experts: tuple[int, int] | None = None
    mtp: bool = False  # a multi-token-prediction layer's tensor, counted apart from the total

    @property
    def parameters(self) -> int:
        n = self.copies
        for size in self.shape:
            n *= size
        return n

    @property
    def active_parameters(self) -> int:
        if self.experts is None:
            return self.parameters
        total, used = self.experts
        return self.parameters // total * used


@dataclass(frozen=True)
class ParameterCount:
    """family; tensors (every weight tensor shape with its copies); total, active (with the
    embedding and lm_head), embeddings (embedding + lm_head), active_without_embeddings; tied
    (lm_head shares the embedding); notes (what was assumed)."""

    family: str
    tensors: tuple[Tensor, ...]
    tied: bool
    notes: tuple[str, ...] = ()
    storage: tuple[tuple[str, int, int], ...] = ()  # (dtype, parameters, bytes) as shipped
    quantization: str = ""  # the quant_method of the file's quantization_config, or ""

    @property
    def shipped_bytes(self) -> int:
        """Bytes of the weights as the config.json says they ship (see `shipped_bytes`)."""
        return sum(size for _, _, size in self.storage)

    @property
    def shipped_dtype(self) -> str:
        """The storage in words: "MXFP4 114.70B params, bf16 2.13B params"."""
        return describe_shipped({label: [params, size] for label, params, size in self.storage})

    @property
    def total(self) -> int:
        return sum(t.parameters for t in self.tensors if not t.mtp)

    @property
    def active(self) -> int:
        return sum(t.active_parameters for t in self.tensors if not t.mtp)

    @property
    def embeddings(self) -> int:
        return sum(t.parameters for t in self.tensors if t.embedding)

    @property
    def input_embedding(self) -> int:
        """The input embedding alone (embed_tokens; with tied weights also the lm_head)."""
        return sum(t.parameters for t in self.tensors if t.embedding and "lm_head" not in t.name)

    @property
    def active_without_embeddings(self) -> int:
        return self.active - self.embeddings

    @property
    def active_without_input_embedding(self) -> int:
        """What one token uses when the embedding lookup is not counted as a matrix product
        (gpt-oss's "5.1B active" counts the unembedding but not the embedding)."""
        return self.active - self.input_embedding

    @property
    def mtp(self) -> int:
        """Parameters of the multi-token-prediction layers (in the checkpoint, loaded only for
        speculative decoding; not in total)."""
        return sum(t.parameters for t in self.tensors if t.mtp)

    def by_part(self) -> dict[str, int]:
        """Parameters per part (the tensor name before its first dot)."""
        parts: dict[str, int] = {}
        for t in self.tensors:
            if t.mtp:
                continue
            part = t.name.split(".")[0]
            parts[part] = parts.get(part, 0) + t.parameters
        return parts


class _Builder:
    """Collects tensors: `add("attention.q_proj", (nh·hd, H), copies=n)`; zero copies skipped."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.notes: list[str] = []
        self.mtp = False

    def add(self, name: str, shape: tuple[int, ...], copies: int = 1, **kind: Any) -> None:
        if copies:
            self.tensors.append(Tensor(name, tuple(shape), copies, mtp=self.mtp, **kind))

    def embeddings(self, V: int, H: int, tied: bool) -> None:
        self.add("embedding.embed_tokens", (V, H), embedding=True)
        if not tied:
            self.add("embedding.lm_head", (V, H), embedding=True)
        self.add("final_norm", (H,))

    def gqa(self, where: str, n: int, H: int, nh: int, nkv: int, hd: int, *, qkv_bias: bool = False,
            o_bias: bool = False, q_gate: bool = False, qk_norm: bool = False,
            vd: int | None = None, k_eq_v: bool = False) -> None:
        """q (nh·hd [×2 with an output gate], H), k (nkv·hd, H), v (nkv·vd, H; none when the
        values are the keys), o (H, nh·vd); vd = hd unless given."""
        vd = hd if vd is None else vd
        self.add(f"{where}.q_proj", ((2 if q_gate else 1) * nh * hd, H), n)
        self.add(f"{where}.k_proj", (nkv * hd, H), n)
        if not k_eq_v:
            self.add(f"{where}.v_proj", (nkv * vd, H), n)
        self.add(f"{where}.o_proj", (H, nh * (vd or hd)), n)
        if qkv_bias:
            self.add(f"{where}.q_proj.bias", (nh * hd,), n)
            self.add(f"{where}.k_proj.bias", (nkv * hd,), n)
            if not k_eq_v:
                self.add(f"{where}.v_proj.bias", (nkv * vd,), n)
        if o_bias:
            self.add(f"{where}.o_proj.bias", (H,), n)
        if qk_norm:
            self.add(f"{where}.q_norm", (hd,), n)
            self.add(f"{where}.k_norm", (hd,), n)

    def swiglu(self, where: str, n: int, H: int, I: int) -> None:  # noqa: E741 — I as in the notes
        self.add(f"{where}.gate_proj", (I, H), n)
        self.add(f"{where}.up_proj", (I, H), n)
        self.add(f"{where}.down_proj", (H, I), n)

    def moe(self, where: str, n: int, H: int, E: int, k: int, I: int,  # noqa: E741
            shared: int = 0, shared_gate: bool = False) -> None:
        """router (E, H); experts (E, I, H) ×2 and (E, H, I); a shared SwiGLU of width `shared`."""
        if k > E:
            raise ValueError(f"experts per token: {k} is more than the {E} experts")
        self.add(f"{where}.router", (E, H), n)
        for part, shape in (("gate_proj", (E, I, H)), ("up_proj", (E, I, H)),
                            ("down_proj", (E, H, I))):
            self.add(f"{where}.experts.{part}", shape, n, experts=(E, k))
        if shared:
            self.swiglu(f"{where}.shared_expert", n, H, shared)
        if shared_gate:
            self.add(f"{where}.shared_expert_gate", (1, H), n)

    def norms(self, n_layers: int, H: int, per_layer: int = 2) -> None:
        self.add("norms", (per_layer, H), n_layers)

    def mamba2(self, where: str, n: int, H: int, heads: int, d: int, G: int, N: int, K: int, *,
               gated_norm: bool = True, conv_bias: bool = True, proj_bias: bool = False) -> None:
        """in_proj H·(2d + 2GN + heads), conv1d c·K (+ c), dt_bias/A_log/D 3·heads, gated
        RMSNorm d, out_proj d·H; c = d + 2GN."""
        c = d + 2 * G * N
        self.add(f"{where}.in_proj", (2 * d + 2 * G * N + heads, H), n)
        self.add(f"{where}.conv1d", (c, K), n)
        if conv_bias:
            self.add(f"{where}.conv1d.bias", (c,), n)
        self.add(f"{where}.dt_bias_A_log_D", (3, heads), n)
        if gated_norm:
            self.add(f"{where}.norm", (d,), n)
        self.add(f"{where}.out_proj", (H, d), n)
        if proj_bias:
            self.add(f"{where}.in_proj.bias", (2 * d + 2 * G * N + heads,), n)
            self.add(f"{where}.out_proj.bias", (H,), n)


def _count(model: Model, *labels: str) -> int:
    """Mixers of `model` whose label is one of `labels` (kind for the generic ones)."""
    return sum(g.count for g in model.groups if g.mixer.label in labels or g.mixer.kind in labels)


def _moe_layers(r: Reader, n: int, experts_key: str) -> list[bool]:
    """Which layers hold experts (Qwen): num_experts > 0, not in mlp_only_layers, and
    (i + 1) mod decoder_sparse_step = 0."""
    if not r.has(experts_key) or r.int(experts_key, low=0) == 0:
        return [False] * n
    step = r.int("decoder_sparse_step", default=1, high=n, why="Qwen default")
    only = r.list("mlp_only_layers") if r.has("mlp_only_layers") else []
    dense = {check_int(f"{r.path('mlp_only_layers')}[{i}]", x, 0, n - 1) for i, x in enumerate(only)}
    return [i not in dense and (i + 1) % step == 0 for i in range(n)]


def _tied(r: Reader, default: bool, why: str, key: str = "tie_word_embeddings") -> bool:
    return r.bool(key, default, why)


# --- one function per family: (reader, model) → tensors ---------------------------------------

def _decoder(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, family in ("gemma", "gemma2", "gemma3_text"), f"{family} default")
    b.embeddings(V, H, tied)
    if family == "deepseek_v3":
        _mla(b, r, "attention", n, H)
    else:
        nh, nkv, hd = r.int("num_attention_heads"), r.kv_heads(), r.head_dim()
        bias = r.bool("attention_bias", family == "gpt_oss", f"{family} default")
        b.gqa("attention", n, H, nh, nkv, hd, qkv_bias=bias or family == "qwen2",
              o_bias=bias, qk_norm=family in ("qwen3", "qwen3_moe", "gemma3_text"))
        if family == "gpt_oss":
            b.add("attention.sinks", (nh,), n)
    b.norms(n, H, 4 if family in ("gemma2", "gemma3_text") else 2)
    if family == "gpt_oss":  # experts with biases, gate and up fused; a router with a bias
        E, k = r.int("num_local_experts"), r.int("num_experts_per_tok")
        I = r.int("intermediate_size")  # noqa: E741
        b.add("moe.router", (E, H + 1), n)
        b.add("moe.experts.gate_up_proj", (E, H + 1, 2 * I), n, experts=(E, k))
        b.add("moe.experts.down_proj", (E, I + 1, H), n, experts=(E, k))
    elif family == "mixtral":
        b.moe("moe", n, H, r.int("num_local_experts"), r.int("num_experts_per_tok"),
              r.int("intermediate_size"))
    elif family in ("qwen3_moe", "qwen2_moe"):
        sparse = _moe_layers(r, n, "num_experts")
        moe, dense = sum(sparse), n - sum(sparse)
        if moe:
            shared = (r.int("shared_expert_intermediate_size", low=0)
                      if r.has("shared_expert_intermediate_size") else 0)
            b.moe("moe", moe, H, r.int("num_experts"), r.int("num_experts_per_tok"),
                  r.int("moe_intermediate_size"), shared, family == "qwen2_moe" and shared > 0)
        b.swiglu("mlp", dense, H, r.int("intermediate_size")) if dense else None
    elif family == "deepseek_v3":
        _deepseek_moe(b, r, n, H)
    else:
        b.swiglu("mlp", n, H, r.int("intermediate_size"))
    return tied


def _mla(b: _Builder, r: Reader, where: str, n: int, H: int) -> None:
    """MLA: q (or its LoRA H·q_r + q_r + q_r·nh·(dn+dr)), kv_a H·(r+dr), kv norm r,
    kv_b r·nh·(dn+dv), o nh·dv·H."""
    nh, rank = r.int("num_attention_heads"), r.int("kv_lora_rank")
    dn, dr, dv = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    if r.has("q_lora_rank"):
        q = r.int("q_lora_rank")
        b.add(f"{where}.q_a_proj", (q, H), n)
        b.add(f"{where}.q_a_layernorm", (q,), n)
        b.add(f"{where}.q_b_proj", (nh * (dn + dr), q), n)
    else:
        b.add(f"{where}.q_proj", (nh * (dn + dr), H), n)
    b.add(f"{where}.kv_a_proj_with_mqa", (rank + dr, H), n)
    b.add(f"{where}.kv_a_layernorm", (rank,), n)
    b.add(f"{where}.kv_b_proj", (nh * (dn + dv), rank), n)
    b.add(f"{where}.o_proj", (H, nh * dv), n)


def _deepseek_moe(b: _Builder, r: Reader, n: int, H: int, experts_key: str = "n_routed_experts",
                  k_key: str = "num_experts_per_tok", shared_key: str = "n_shared_experts",
                  latent_key: str | None = None) -> None:
    """The first `first_k_dense_replace` layers dense, then MoE every moe_layer_freq-th; shared
    experts of moe_intermediate_size each. With a latent size L (Kimi K3's
    routed_expert_hidden_size) the routed experts work in L: down-projection H·L and
    up-projection L·H around them, experts E·3·L·I_moe."""
    first = r.int("first_k_dense_replace", low=0, high=n, default=0, why="no dense layers")
    every = r.int("moe_layer_freq", default=1, high=n, why="every layer")
    moe = sum(1 for i in range(first, n) if (i - first) % every == 0)
    I_moe = r.int("moe_intermediate_size")
    shared = r.int(shared_key, low=0, default=0, why="no shared experts")
    latent = r.int(latent_key) if latent_key and r.has(latent_key) else None
    if latent and latent != H:
        E, k = r.int(experts_key), r.int(k_key)
        b.add("moe.router", (E, H), moe)
        for part, shape in (("gate_proj", (E, I_moe, latent)), ("up_proj", (E, I_moe, latent)),
                            ("down_proj", (E, latent, I_moe))):
            b.add(f"moe.experts.{part}", shape, moe, experts=(E, k))
        b.add("moe.latent_down_proj", (latent, H), moe)
        b.add("moe.latent_up_proj", (H, latent), moe)
        if r.bool("latent_moe_use_norm", False, "no latent norm"):
            b.add("moe.latent_norm", (latent,), moe)
        if shared:
            b.swiglu("moe.shared_experts", moe, H, shared * I_moe)
    else:
        b.moe("moe", moe, H, r.int(experts_key), r.int(k_key), I_moe, shared * I_moe)
    b.swiglu("mlp", n - moe, H, r.int("intermediate_size"))


def _mamba2_family(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n = model.n_layers
    if r.has("d_model"):  # mamba_ssm layout: vocab padded, in_proj without bias, conv with bias
        H, V = r.int("d_model"), r.int("vocab_size")
        pad = r.int("pad_vocab_size_multiple", default=8, why="mamba_ssm default")
        V = -(-V // pad) * pad
        b.notes.append(f"vocab_size padded to a multiple of {pad}: {V}")
        tied = _tied(r, True, "mamba_ssm default", "tie_embeddings")
        d_mlp = r.int("d_intermediate", low=0, default=0, why="mamba_ssm default")
        gated, conv_bias, proj_bias = True, True, False
    else:
        H, V = r.int("hidden_size"), r.int("vocab_size")
        tied = _tied(r, False, "Mamba2Config default")
        d_mlp = 0
        gated = True
        conv_bias = r.bool("use_conv_bias", True, "Mamba2Config default")
        proj_bias = r.bool("use_bias", False, "Mamba2Config default")
    b.embeddings(V, H, tied)
    _mamba2_from(b, model, n, H, gated_norm=gated, conv_bias=conv_bias, proj_bias=proj_bias)
    b.norms(n, H, 1)
    if d_mlp:
        b.swiglu("mlp", n, H, d_mlp)
        b.norms(n, H, 1)
    return tied


def _jamba(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "JambaConfig default")
    b.embeddings(V, H, tied)
    attention = _count(model, "attention")
    b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim())
    D = r.int("mamba_expand") * H
    rank = (-(-H // 16) if r.config.get("mamba_dt_rank") in (None, "auto")
            else r.int("mamba_dt_rank"))
    N, K, m = r.int("mamba_d_state"), r.int("mamba_d_conv"), n - attention
    b.add("mamba.in_proj", (2 * D, H), m)
    b.add("mamba.conv1d", (D, K), m)
    if r.bool("mamba_conv_bias", True, "JambaConfig default"):
        b.add("mamba.conv1d.bias", (D,), m)
    b.add("mamba.x_proj", (rank + 2 * N, D), m)
    b.add("mamba.dt_proj", (D, rank), m)
    b.add("mamba.dt_proj.bias", (D,), m)
    b.add("mamba.A_log", (D, N), m)
    b.add("mamba.D", (D,), m)
    b.add("mamba.out_proj", (H, D), m)
    if r.bool("mamba_proj_bias", False, "JambaConfig default"):
        b.add("mamba.in_proj.bias", (2 * D,), m)
        b.add("mamba.out_proj.bias", (H,), m)
    b.add("mamba.dt_B_C_layernorms", (rank + 2 * N,), m)
    period = r.int("expert_layer_period", high=n)
    offset = r.int("expert_layer_offset", low=0, high=n)
    E = r.int("num_experts", default=1, why="JambaConfig: one expert is a dense MLP")
    moe = sum(1 for i in range(n) if i % period == offset) if E > 1 else 0
    I = r.int("intermediate_size")  # noqa: E741
    if moe:
        b.moe("moe", moe, H, E, r.int("num_experts_per_tok"), I)
    b.swiglu("mlp", n - moe, H, I)
    b.norms(n, H)
    return tied


def _mamba2_from(b: _Builder, model: Model, n: int, H: int, **flags) -> None:
    """n Mamba-2 mixers of hidden size H, their shape read from the model's recurrent mixer
    (heads x head_dim inner channels, N-wide B and C per group: the groups are what the
    convolution's channels hold beyond the inner ones)."""
    mixer = next(g.mixer for g in model.groups if g.mixer.kind == "recurrent")
    heads, head_dim, N = mixer.state_shape
    d = heads * head_dim
    b.mamba2("mamba", n, H, heads, d, (mixer.conv_channels - d) // (2 * N), N, mixer.conv_kernel, **flags)


def _zamba2(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, True, "Zamba2Config default")
    b.embeddings(V, H, tied)
    _mamba2_from(b, model, n, H, conv_bias=r.bool("use_conv_bias", True, "Zamba2Config default"),
                 proj_bias=r.bool("add_bias_linear", False, "Zamba2Config default"))
    b.norms(n, H, 1)
    calls = _count(model, "attention")
    I = r.int("intermediate_size") if r.has("intermediate_size") else r.derive(  # noqa: E741
        "intermediate_size = 4 · hidden_size", 4 * H)
    rank = r.int("adapter_rank")
    b.add("hybrid.linear", (H, H), calls)
    if r.bool("use_shared_mlp_adapter", True, "Zamba2Config default"):
        b.add("hybrid.mlp_adapter.down", (rank, H), calls)
        b.add("hybrid.mlp_adapter.up", (2 * I, rank), calls)
    nh = r.int("num_attention_heads")
    attn = next(g.mixer for g in model.groups if g.mixer.kind == "attention")
    hd, nkv = attn.head_dim, attn.kv_heads
    if r.bool("use_shared_attention_adapter", False, "Zamba2Config default"):
        for part in ("q", "k", "v"):
            b.add(f"hybrid.{part}_adapter.down", (rank, 2 * H), calls)
            b.add(f"hybrid.{part}_adapter.up", ((nh if part == "q" else nkv) * hd, rank), calls)
    blocks = r.int("num_mem_blocks")
    # attention reads the concatenation [x, embedding] (2H) and writes H
    b.add("shared_block.attention.q_proj", (nh * hd, 2 * H), blocks)
    b.add("shared_block.attention.k_proj", (nkv * hd, 2 * H), blocks)
    b.add("shared_block.attention.v_proj", (nkv * hd, 2 * H), blocks)
    b.add("shared_block.attention.o_proj", (H, nh * hd), blocks)
    b.add("shared_block.mlp.gate_up_proj", (2 * I, H), blocks)
    b.add("shared_block.mlp.down_proj", (H, I), blocks)
    b.add("shared_block.norms", (3 * H,), blocks)  # input norm over 2H, pre-MLP norm H
    return tied


def _recurrent_gemma(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, True, "RecurrentGemmaConfig default")
    b.embeddings(V, H, tied)
    attention = _count(model, "attention")
    b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim(),
          o_bias=True)
    rec = n - attention
    W = next(g.mixer for g in model.groups if g.mixer.kind == "recurrent").state_shape[0]
    K, heads = r.int("conv1d_width"), r.int("num_attention_heads")
    for part in ("linear_x", "linear_y"):
        b.add(f"rg_lru.{part}", (W, H), rec)
        b.add(f"rg_lru.{part}.bias", (W,), rec)
    b.add("rg_lru.linear_out", (H, W), rec)
    b.add("rg_lru.linear_out.bias", (H,), rec)
    b.add("rg_lru.conv_1d", (W, K), rec)
    b.add("rg_lru.conv_1d.bias", (W,), rec)
    b.add("rg_lru.recurrent_param", (W,), rec)
    if W % heads:
        raise ValueError(f"lru_width: {W} is not a multiple of num_attention_heads {heads}")
    for gate in ("input_gate", "recurrent_gate"):  # block-diagonal: one (W/heads)² block per head
        b.add(f"rg_lru.{gate}_weight", (heads, W // heads, W // heads), rec)
        b.add(f"rg_lru.{gate}_bias", (W,), rec)
    I = r.int("intermediate_size") // 2  # noqa: E741 — gelu-gated with biases, I′ = I/2
    b.add("mlp.gate_up_proj", (2 * I, H), n)
    b.add("mlp.gate_up_proj.bias", (2 * I,), n)
    b.add("mlp.down_proj", (H, I), n)
    b.add("mlp.down_proj.bias", (H,), n)
    b.norms(n, H)
    return tied


def _qwen3_next(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "Qwen3NextConfig default")
    b.embeddings(V, H, tied)
    attention = _count(model, "attention")
    b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim(),
          q_gate=True, qk_norm=True)
    g = n - attention
    Hk, Hv = r.int("linear_num_key_heads"), r.int("linear_num_value_heads")
    dk, dv, K = r.int("linear_key_head_dim"), r.int("linear_value_head_dim"), r.int(
        "linear_conv_kernel_dim")
    b.add("gated_deltanet.in_proj_qkv", (2 * Hk * dk + Hv * dv, H), g)
    b.add("gated_deltanet.in_proj_z", (Hv * dv, H), g)
    b.add("gated_deltanet.in_proj_ba", (2 * Hv, H), g)
    b.add("gated_deltanet.conv1d", (2 * Hk * dk + Hv * dv, K), g)
    b.add("gated_deltanet.dt_bias_A_log", (2, Hv), g)
    b.add("gated_deltanet.norm", (dv,), g)
    b.add("gated_deltanet.out_proj", (H, Hv * dv), g)
    sparse = _moe_layers(r, n, "num_experts")
    moe = sum(sparse)
    if moe:
        shared = (r.int("shared_expert_intermediate_size", low=0)
                  if r.has("shared_expert_intermediate_size") else 0)
        b.moe("moe", moe, H, r.int("num_experts"), r.int("num_experts_per_tok"),
              r.int("moe_intermediate_size"), shared, shared > 0)
    if n - moe:  # Qwen3.5 MoE has experts in every layer and no intermediate_size
        b.swiglu("mlp", n - moe, H, r.int("intermediate_size"))
    b.norms(n, H)
    return tied


def _kimi_linear(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "KimiLinearConfig default")
    b.embeddings(V, H, tied)
    _mla(b, r, "mla", _count(model, "mla"), H)
    sub = r.sub("linear_attn_config")
    nh, d, K = sub.int("num_heads"), sub.int("head_dim"), sub.int("short_conv_kernel_size")
    p, m = nh * d, _count(model, "KDA")
    for part in ("q", "k", "v"):
        b.add(f"kda.{part}_proj", (p, H), m)
        b.add(f"kda.{part}_conv1d", (p, K), m)
    b.add("kda.f_a_proj", (d, H), m)
    b.add("kda.f_b_proj", (p, d), m)
    b.add("kda.dt_bias", (p,), m)
    b.add("kda.A_log", (nh,), m)
    b.add("kda.b_proj", (nh, H), m)
    b.add("kda.g_a_proj", (d, H), m)
    b.add("kda.g_b_proj", (p, d), m)
    b.add("kda.o_norm", (d,), m)
    b.add("kda.o_proj", (H, p), m)
    _deepseek_moe(b, r, n, H, "num_experts", "num_experts_per_token", "num_shared_experts",
                  latent_key="routed_expert_hidden_size")
    b.norms(n, H)
    return tied


def _minimax(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "MiniMaxConfig default")
    b.embeddings(V, H, tied)
    nh, hd = r.int("num_attention_heads"), r.head_dim()
    attention = _count(model, "attention")
    b.gqa("attention", attention, H, nh, r.kv_heads(), hd)
    m = n - attention
    b.add("lightning.qkv_proj", (3 * nh * hd, H), m)
    b.add("lightning.output_gate", (nh * hd, H), m)
    b.add("lightning.norm", (nh * hd,), m)
    b.add("lightning.out_proj", (H, nh * hd), m)
    b.moe("moe", n, H, r.int("num_local_experts"), r.int("num_experts_per_tok"),
          r.int("intermediate_size"))
    b.norms(n, H)
    return tied


def _nemotron_h(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    """Blocks of one kind each (hybrid_override_pattern): Mamba-2 (M), attention (*), a relu²
    MLP (-) up I·H + down H·I, or MoE (E, Nemotron 3): router E·H (its score-correction bias
    is a buffer, not a parameter), E experts of up I_moe·L and down L·I_moe (relu², no gate;
    L = moe_latent_size, else H), a shared relu² expert of moe_shared_expert_intermediate_size,
    and with a latent size fc1 H·L and fc2 L·H; mlp_bias adds the biases of every MLP part.
    One norm H per block."""
    H, V = r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "NemotronHConfig default")
    b.embeddings(V, H, tied)
    mamba = _count(model, "recurrent")
    if mamba:
        _mamba2_from(b, model, mamba, H, conv_bias=r.bool("use_conv_bias", True, "NemotronHConfig default"),
                     proj_bias=r.bool("use_bias", False, "NemotronHConfig default"))
    attention = _count(model, "attention")
    if attention:
        b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(),
              r.head_dim("attention_head_dim"))
    bias = r.bool("mlp_bias", False, "NemotronHConfig default")
    mlp = _count(model, "mlp") - _count(model, "MoE")
    if mlp:
        _relu2("mlp", b, mlp, H, r.int("intermediate_size"), bias)
    moe = _count(model, "MoE")
    if moe:
        E = r.first("n_routed_experts", "num_local_experts")
        k = r.int("num_experts_per_tok", high=E)
        I_moe = r.int("moe_intermediate_size")
        latent = r.int("moe_latent_size") if r.has("moe_latent_size") else None
        L = latent or H
        b.add("moe.router", (E, H), moe)
        b.add("moe.experts.up_proj", (E, I_moe, L), moe, experts=(E, k))
        b.add("moe.experts.down_proj", (E, L, I_moe), moe, experts=(E, k))
        _relu2("moe.shared_experts", b, moe, H, r.int(
            "moe_shared_expert_intermediate_size", default=7688, why="NemotronHConfig default"),
            bias)
        if latent:
            b.add("moe.fc1_latent_proj", (L, H), moe)
            b.add("moe.fc2_latent_proj", (H, L), moe)
            if bias:
                b.add("moe.fc1_latent_proj.bias", (L,), moe)
                b.add("moe.fc2_latent_proj.bias", (H,), moe)
    b.norms(model.n_layers, H, 1)  # one norm per block
    return tied


def _relu2(where: str, b: _Builder, n: int, H: int, I: int, bias: bool) -> None:  # noqa: E741
    """Nemotron-H's MLP: up (I, H) and down (H, I), relu² between them (no gate)."""
    b.add(f"{where}.up_proj", (I, H), n)
    b.add(f"{where}.down_proj", (H, I), n)
    if bias:
        b.add(f"{where}.up_proj.bias", (I,), n)
        b.add(f"{where}.down_proj.bias", (H,), n)


def _falcon_h1(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "FalconH1Config default")
    b.embeddings(V, H, tied)
    b.gqa("attention", n, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim(),
          qkv_bias=r.bool("attention_bias", False, "FalconH1Config default"),
          o_bias=r.bool("attention_bias", False, "FalconH1Config default"))
    mixer = next(g.mixer for g in model.groups if g.mixer.kind == "recurrent")
    heads, head_dim, N = mixer.state_shape
    d = mixer.conv_channels - 2 * r.int("mamba_n_groups") * N
    b.mamba2("mamba", n, H, heads, d, r.int("mamba_n_groups"), N, mixer.conv_kernel,
             gated_norm=r.bool("mamba_rms_norm", False, "FalconH1Config default"),
             conv_bias=r.bool("mamba_conv_bias", True, "FalconH1Config default"),
             proj_bias=r.bool("mamba_proj_bias", False, "FalconH1Config default"))
    b.swiglu("mlp", n, H, r.int("intermediate_size"))
    b.norms(n, H)
    return tied


def _granite_hybrid(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    """Granite-4.0-H (transformers `modeling_granitemoehybrid.py`): every layer has Mamba-2 or
    attention (q, k, v, o with biases when attention_bias), then the MoE (when
    num_local_experts > 0: router E·H, experts gate_up (E, 2I, H) and down (E, H, I),
    I = intermediate_size) plus a shared SwiGLU MLP that every layer has (input_linear
    2·I_sh·H, output_linear I_sh·H, I_sh = shared_intermediate_size); 2 norms H per layer.
    Mamba-2 as the formula (gated norm d; conv bias mamba_conv_bias, projection biases
    mamba_proj_bias)."""
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    tied = _tied(r, False, "GraniteMoeHybridConfig default")
    b.embeddings(V, H, tied)
    attention = _count(model, "attention")
    bias = r.bool("attention_bias", False, "GraniteMoeHybridConfig default")
    b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim(),
          qkv_bias=bias, o_bias=bias)
    mamba = n - attention
    if mamba:
        _mamba2_from(b, model, mamba, H,
                     conv_bias=r.bool("mamba_conv_bias", True, "GraniteMoeHybridConfig default"),
                     proj_bias=r.bool("mamba_proj_bias", False, "GraniteMoeHybridConfig default"))
    E = r.int("num_local_experts", low=0, default=8, why="GraniteMoeHybridConfig default")
    if E:
        k = r.int("num_experts_per_tok", high=E, default=min(2, E),
                  why="GraniteMoeHybridConfig default")
        I = r.int("intermediate_size", default=11008,  # noqa: E741
                  why="GraniteMoeHybridConfig default")
        b.add("moe.router", (E, H), n)
        b.add("moe.experts.gate_up_proj", (E, 2 * I, H), n, experts=(E, k))
        b.add("moe.experts.down_proj", (E, H, I), n, experts=(E, k))
    shared = r.int("shared_intermediate_size", default=1024, why="GraniteMoeHybridConfig default")
    b.add("shared_mlp.input_linear", (2 * shared, H), n)
    b.add("shared_mlp.output_linear", (H, shared), n)
    b.norms(n, H)
    return tied


def _lfm2_intermediate(r: Reader) -> int:
    """LFM2's MLP width (`Lfm2MLP`): block_ff_dim (or intermediate_size), and with
    block_auto_adjust_ff_dim: ⌊2I/3⌋, then ⌊multiplier · that⌋ rounded up to a multiple of
    block_multiple_of (when block_ffn_dim_multiplier is not null)."""
    key = "block_ff_dim" if r.has("block_ff_dim") else "intermediate_size"
    width = r.int(key, default=12288, why="Lfm2Config default")
    if not r.bool("block_auto_adjust_ff_dim", True, "Lfm2Config default"):
        return width
    width = 2 * width // 3
    multiplier = r.raw("block_ffn_dim_multiplier") if "block_ffn_dim_multiplier" in r.config \
        else 1.0
    if multiplier is None:
        return r.derive(f"MLP width = ⌊2 · {key} / 3⌋", width)
    if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) or not (
            0 < multiplier <= 64):
        raise ValueError(f"block_ffn_dim_multiplier: expected a number above 0 and at most 64, "
                         f"got {describe_value(multiplier)}")
    every = r.int("block_multiple_of", default=256, why="Lfm2Config default")
    width = -(-int(multiplier * width) // every) * every
    return r.derive(f"MLP width = {every} · ⌈⌊{multiplier:g} · ⌊2 · {key} / 3⌋⌋ / {every}⌉",
                    width)


def _lfm2(b: _Builder, r: Reader, model: Model, family: str) -> bool:
    """LFM2 (transformers `modeling_lfm2.py`): a short-convolution layer is in_proj 3H·H, a
    depthwise conv H·K and out_proj H·H (biases on all three when conv_bias); an attention
    layer q, k, v, out_proj without biases plus q_layernorm and k_layernorm hd each; every
    layer a SwiGLU MLP (w1, w3 I′·H, w2 H·I′, I′ from `_lfm2_intermediate`) and 2 norms H;
    one final norm H (`embedding_norm`, applied after the last layer). Tied unless
    tie_word_embeddings (or the original spelling tie_embedding) says otherwise."""
    n, H, V = model.n_layers, r.int("hidden_size"), r.int("vocab_size")
    key = "tie_embedding" if "tie_embedding" in r.config else "tie_word_embeddings"
    tied = _tied(r, True, "Lfm2Config default", key)
    b.embeddings(V, H, tied)
    attention = _count(model, "attention")
    b.gqa("attention", attention, H, r.int("num_attention_heads"), r.kv_heads(), r.head_dim(),
          qk_norm=True)
    conv = n - attention
    K = r.int("conv_L_cache", low=2, default=3, why="Lfm2Config default")
    bias = r.bool("conv_bias", False, "Lfm2Config default")
    b.add("short_conv.in_proj", (3 * H, H), conv)
    b.add("short_conv.conv", (H, 1, K), conv)
    b.add("short_conv.out_proj", (H, H), conv)
    if bias:
        b.add("short_conv.in_proj.bias", (3 * H,), conv)
        b.add("short_conv.conv.bias", (H,), conv)
        b.add("short_conv.out_proj.bias", (H,), conv)
    width = _lfm2_intermediate(r)
    b.add("feed_forward.w1", (width, H), n)
    b.add("feed_forward.w3", (width, H), n)
    b.add("feed_forward.w2", (H, width), n)
    b.norms(n, H)
    return tied


def _layer_tensors(b: _Builder, r: Reader, layer: Layer, H: int, copies: int,
                   flags: dict[str, bool]) -> None:
    """The tensors of `copies` identical layers read part by part (sim.hf_parts)."""
    m, f = layer.mixer, layer.ffn
    s = m.sizes
    if m.kind == "attention":
        b.gqa("attention", copies, H, s["heads"], s["kv_heads"], s["head_dim"],
              qkv_bias=flags["bias"], o_bias=flags["bias"], q_gate=flags["gate"],
              qk_norm=flags["qk_norm"], vd=s["v_head_dim"], k_eq_v=s.get("k_eq_v", False)
              and s["v_head_dim"] != 0)
        if s.get("k_eq_v") and s["v_head_dim"] == 0:  # V4: one shared key-value projection
            b.tensors.pop()  # its o_proj is written below, grouped
            if r.has("o_lora_rank"):
                rank, groups = r.int("o_lora_rank"), r.int("o_groups", default=1, why="one group")
                b.add("attention.wo_a", (groups * rank, s["heads"] * s["head_dim"] // groups),
                      copies)
                b.add("attention.wo_b", (H, groups * rank), copies)
            else:
                b.add("attention.o_proj", (H, s["heads"] * s["head_dim"]), copies)
        if flags["sinks"]:
            b.add("attention.sinks", (s["heads"],), copies)
    elif m.kind == "mla":
        _mla(b, r, "mla", copies, H)
    elif m.kind == "gdn":
        Hk, Hv, dk, dv = s["key_heads"], s["value_heads"], s["d_k"], s["d_v"]
        b.add("gated_deltanet.in_proj_qkv", (2 * Hk * dk + Hv * dv, H), copies)
        b.add("gated_deltanet.in_proj_z", (Hv * dv, H), copies)
        b.add("gated_deltanet.in_proj_ba", (2 * Hv, H), copies)
        b.add("gated_deltanet.conv1d", (2 * Hk * dk + Hv * dv, s["kernel"]), copies)
        b.add("gated_deltanet.dt_bias_A_log", (2, Hv), copies)
        b.add("gated_deltanet.norm", (dv,), copies)
        b.add("gated_deltanet.out_proj", (H, Hv * dv), copies)
    elif m.kind == "linear_map":
        b.add("attention.linear", (H, H), copies)
    if s.get("indexer"):  # DSA: q from the q LoRA (or H), one key, per-head weights
        heads, dim = s["indexer"]["heads"], s["indexer"]["dim"]
        q_in = r.int("q_lora_rank") if r.has("q_lora_rank") else H
        b.add("indexer.wq_b", (heads * dim, q_in), copies)
        b.add("indexer.wk", (dim, H), copies)
        b.add("indexer.k_norm", (2, dim), copies)
        b.add("indexer.weights_proj", (heads, H), copies)
    if s.get("compress"):  # compressor: key-value and gate maps to head_dim
        b.add("attention.compressor", (2 * s["head_dim"], H), copies)
    if f.kind in ("dense", "dense+moe"):
        b.swiglu("mlp", copies, H, f.sizes["width"] if f.kind == "dense" else f.sizes["dense"])
    elif f.kind == "linear_map":
        b.add("mlp.linear", (H, H), copies)
    if f.kind in ("moe", "dense+moe"):
        E, k, width, latent = f.sizes["experts"], f.sizes["k"], f.sizes["width"], f.sizes["latent"]
        L = latent or H
        b.add("moe.router", (E, H), copies)
        for part, shape in (("gate_proj", (E, width, L)), ("up_proj", (E, width, L)),
                            ("down_proj", (E, L, width))):
            b.add(f"moe.experts.{part}", shape, copies, experts=(E, k))
        if latent:
            b.add("moe.latent_down_proj", (L, H), copies)
            b.add("moe.latent_up_proj", (H, L), copies)
        if f.sizes["shared"]:
            b.swiglu("moe.shared_experts", copies, H, f.sizes["shared"])
    b.norms(copies, H, 2 if m.kind != "none" and f.kind != "none" else 1)


def _parts(b: _Builder, r: Reader, parts: Parts) -> bool:
    """A family read part by part: embeddings, each layer's parts, the MTP layers apart."""
    H, V = parts.hidden, r.int("vocab_size")
    tied = _tied(r, False, "transformers default")
    b.embeddings(V, H, tied)
    flags = {"bias": r.bool("attention_bias", False, "no attention biases"),
             "gate": r.bool("attn_output_gate", False, "no output gate")
             or r.bool("attention_output_gate", False, "no output gate"),
             "qk_norm": bool(r.config.get("use_qk_norm") or r.config.get("qk_norm_type")
                             or parts.family.startswith("gemma")),
             "sinks": bool(r.config.get("add_swa_attention_sink_bias")
                           or r.config.get("add_full_attention_sink_bias"))}
    runs: list[tuple[Layer, int]] = []
    for layer in parts.layers:
        if runs and runs[-1][0] == layer:
            runs[-1] = (layer, runs[-1][1] + 1)
        else:
            runs.append((layer, 1))
    for layer, copies in runs:
        _layer_tensors(b, r, layer, H, copies, flags)
    if parts.mtp_layers:  # each: the last layer's parts + eh_proj 2H → H and two norms
        b.mtp = True
        _layer_tensors(b, r, parts.layers[-1], H, parts.mtp_layers, flags)
        b.add("mtp.eh_proj", (H, 2 * H), parts.mtp_layers)
        b.add("mtp.norms", (3, H), parts.mtp_layers)
        b.mtp = False
        b.notes.append(f"{parts.mtp_layers} multi-token-prediction layer(s) counted apart "
                       "(params_mtp), not in the total")
    b.notes.extend(parts.left_out)
    return tied


_COUNTERS = {**{family: _decoder for family in DECODERS},
             "mamba2": _mamba2_family, "jamba": _jamba, "zamba2": _zamba2,
             "recurrent_gemma": _recurrent_gemma, "qwen3_next": _qwen3_next,
             "qwen3_5_text": _qwen3_next, "kimi_linear": _kimi_linear, "minimax": _minimax,
             "nemotron_h": _nemotron_h, "falcon_h1": _falcon_h1,
             "granitemoehybrid": _granite_hybrid, "lfm2": _lfm2}
COUNTED_FAMILIES = tuple(_COUNTERS)


def _mtp_of_known(b: _Builder, r: Reader, model: Model, family: str) -> None:
    """Multi-token-prediction layers of a known family (num_nextn_predict_layers,
    mtp_num_hidden_layers), counted apart: each as one average decoder layer plus eh_proj
    2H → H and its norms (an estimate; they are not in the total)."""
    layers = 0
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers"):
        if r.has(key):
            layers = r.int(key, low=0, high=64)
            break
    if not layers:
        return
    H = r.int("hidden_size")
    body = [t for t in b.tensors if not t.embedding and t.name != "final_norm"]
    per_layer = sum(t.parameters for t in body) // max(1, model.n_layers)
    b.mtp = True
    b.add("mtp.layer", (per_layer,), layers)
    b.add("mtp.eh_proj", (H, 2 * H), layers)
    b.mtp = False
    b.notes.append(f"{layers} multi-token-prediction layer(s) estimated as average layers and "
                   "counted apart (params_mtp), not in the total")


def parameter_count(config: Any) -> ParameterCount:
    """Every weight tensor of the model a config.json describes (text, bytes or dict), from
    the module shapes; families in COUNTED_FAMILIES. Raises a one-line ValueError naming the
    field (or model_type) otherwise. The layer pattern is the one `sim.hf_config` reads."""
    config = parse_config(config)
    nested, inner = unwrap(config)
    model, _ = from_hf_config(config)
    family, known = family_of(inner)
    builder, reader = _Builder(), Reader(inner)
    if nested:
        builder.notes.append(f"the language model in {nested.rstrip('.')} only: a vision "
                             "tower or other parts of the wrapper are not counted")
    try:
        if known:
            tied = _COUNTERS[family](builder, reader, model, family)
            _mtp_of_known(builder, reader, model, family)
        else:
            tied = _parts(builder, reader, read_parts(inner, family, Reader(inner)))
    except ValueError as error:
        raise ValueError(f"{nested}{error}") from None
    count = ParameterCount(family, tuple(builder.tensors), tied,
                           tuple(builder.notes + reader.defaults + reader.derived))
    _, rows, _ = shipped_bytes(count, config)
    q = config.get("quantization_config") or inner.get("quantization_config")
    count = replace(count, storage=tuple((label, params, size)
                                         for label, (params, size) in rows.items()),
                    quantization=q.get("quant_method", "") if isinstance(q, dict) else "")
    if count.total > MAX_PARAMETERS:
        raise ValueError(f"{nested}config.json: {count.total:,} parameters is out of range; "
                         f"accepted: at most 2^50 = {MAX_PARAMETERS:,}")
    return count


def weight_bytes(count: ParameterCount | int, dtype: str = "bf16") -> int:
    """Bytes of the weights at `dtype` (see the module docstring): parameters × bytes, int4
    ⌈P/2⌉ + 2·⌈P/128⌉ (one bf16 scale per group of 128)."""
    if isinstance(count, ParameterCount):
        params = count.total
    else:
        params = check_int("count", count, 0, MAX_PARAMETERS)
    if not isinstance(dtype, str) or dtype not in WEIGHT_DTYPES:
        raise ValueError(f"dtype: unknown weight dtype {describe_value(dtype)}; accepted: "
                         f"{', '.join(WEIGHT_DTYPES)}")
    if dtype == "shipped":
        if not isinstance(count, ParameterCount) or not count.storage:
            raise ValueError("dtype: shipped needs the ParameterCount of a config.json (a bare "
                             "parameter number has no storage)")
        return count.shipped_bytes
    if dtype == "int4":
        return -(-params // 2) + 2 * -(-params // INT4_GROUP)
    return params * _BYTES[dtype]


def parameter_report(count: ParameterCount, dtype: str | None = "bf16") -> dict[str, Any]:
    """JSON-ready: family, params_total, params_active, params_active_without_embeddings,
    params_embeddings, tied, weight_dtype, weight_bytes (None without a dtype), notes, parts."""
    if not isinstance(count, ParameterCount):
        raise ValueError(f"count: expected a ParameterCount, got {describe_value(count)}")
    return {"family": count.family, "params_total": count.total, "params_active": count.active,
            "params_active_without_embeddings": count.active_without_embeddings,
            "params_active_without_input_embedding": count.active_without_input_embedding,
            "params_mtp": count.mtp, "params_embeddings": count.embeddings, "tied": count.tied,
            "weight_dtype": dtype,
            "weight_storage": count.shipped_dtype if isinstance(dtype, str) and dtype == "shipped"
            else dtype,
            "weight_bytes": None if dtype is None else weight_bytes(count, dtype),
            "notes": list(count.notes), "parts": count.by_part()}


# --- weights as they ship: quantization_config ------------------------------------------------

@dataclass(frozen=True)
class Scheme:
    """How one tensor is stored: `bits` per parameter, `scale_bytes` per group of `group`
    parameters (block scales count as groups of the block's size), `tensor_bytes` per tensor
    (global or per-tensor scales, per expert)."""

    label: str
    bits: int
    group: int = 0
    scale_bytes: int = 0
    tensor_bytes: int = 0

    def bytes_of(self, t: Tensor) -> int:
        params = t.parameters
        size = -(-params * self.bits // 8)
        if self.group:
            size += self.scale_bytes * -(-params // self.group)
        matrices = t.copies * (t.experts[0] if t.experts else 1)
        return size + self.tensor_bytes * matrices


_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "bf16": "bf16",
                 "fp16": "fp16", "fp32": "fp32", "half": "fp16", "float": "fp32"}
# HF module paths of the tensors, for matching a quantization_config's module lists.
_HF_PATHS = (("embedding.embed_tokens", "model.embed_tokens"), ("embedding.lm_head", "lm_head"),
             ("moe.experts.", "mlp.experts."), ("moe.router", "mlp.gate"),
             ("moe.shared_experts.", "mlp.shared_experts."),
             ("moe.shared_expert.", "mlp.shared_expert."), ("moe.", "mlp."),
             ("mlp.", "mlp."), ("gated_deltanet.", "linear_attn."), ("mamba.", "mixer."),
             ("attention.", "self_attn."), ("mla.", "self_attn."), ("kda.", "self_attn."),
             ("indexer.", "self_attn.indexer."), ("lightning.", "self_attn."),
             ("shared_mlp.", "shared_mlp."), ("short_conv.", "conv."),
             ("feed_forward.", "feed_forward."))


def _hf_path(name: str) -> str:
    for ours, theirs in _HF_PATHS:
        if name.startswith(ours):
            return theirs + name[len(ours):]
    return name


def _linear(t: Tensor) -> bool:
    """A weight matrix a quantizer converts (not a norm, bias, router, conv or embedding)."""
    return (len(t.shape) >= 2 and not t.name.endswith((".bias", "norm", "norms"))
            and "router" not in t.name and "conv" not in t.name and not t.name.startswith(
                ("norms", "embedding.embed_tokens")) and "dt_bias" not in t.name
            and "sinks" not in t.name)


def _matches(path: str, pattern: str) -> bool:
    """A module pattern of a quantization_config: "re:<regex>", a glob with *, or a module
    name that the path equals or ends with (any layer index)."""
    if pattern.startswith("re:"):
        try:
            return re.fullmatch(pattern[3:], "model.layers.0." + path) is not None or \
                re.fullmatch(pattern[3:], path) is not None
        except re.error:
            return False
    plain = re.sub(r"^(model\.)?(language_model\.)?(model\.)?(layers\.(\d+|\*)\.)?", "", pattern)
    if "*" in plain:
        regex = re.escape(plain).replace(r"\*", ".*")
        return re.fullmatch(regex + r"(\..*)?", path) is not None
    return path == plain or path.startswith(plain + ".")


def _group_scheme(weights: dict[str, Any], fmt: str, where: str) -> Scheme:
    """A compressed-tensors / modelopt group's weights entry → Scheme."""
    bits = check_int(f"{where}.num_bits", weights.get("num_bits"), 1, 32)
    kind = weights.get("type", "int")
    group = weights.get("group_size")
    group = check_int(f"{where}.group_size", group, 1, 1 << 20) if group is not None else 0
    block = weights.get("block_structure")
    if isinstance(block, list) and len(block) == 2 and all(isinstance(x, int) for x in block):
        group = block[0] * block[1]
    if kind == "float" and bits == 4 and ("mxfp4" in fmt or group == 32):
        return Scheme("MXFP4", 4, 32, 1)  # e8m0 scale per 32
    if kind == "float" and bits == 4:
        return Scheme("NVFP4", 4, group or 16, 1, 4)  # fp8 scale per 16, fp32 global
    if kind == "float" and bits == 8:
        return Scheme("FP8" + (" block" if group else ""), 8, group, 4 if group else 0,
                      0 if group else 4)
    zero = 0 if weights.get("symmetric", True) else 1
    return Scheme(f"INT{bits}", bits, group, 2 + zero, 0 if group else 2)


def _plan(q: Any, where: str) -> tuple[list[tuple[list[str], Scheme]], list[str], bool, str]:
    """(rules: module patterns → scheme, ignored patterns, whether unlisted linear layers are
    quantized by the default rule, method) of a quantization_config."""
    if not isinstance(q, dict):
        raise ValueError(f"{where}: expected an object, got {describe_value(q)}")
    method = q.get("quant_method")
    if not isinstance(method, str):
        raise ValueError(f"{where}.quant_method: expected text, got {describe_value(method)}")
    ignore = q.get("modules_to_not_convert") or q.get("ignore") or q.get("ignored_layers") or []
    if not isinstance(ignore, list):
        ignore = []
    ignore = [p for p in ignore if isinstance(p, str)][:10_000]
    method = method.lower()
    if method == "mxfp4":
        return [(["*"], Scheme("MXFP4", 4, 32, 1))], ignore + ["lm_head", "embed_tokens"], \
            True, method
    if method == "fp8":
        block = q.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in block):
            scheme = Scheme("FP8 block", 8, block[0] * block[1], 4)
        else:
            scheme = Scheme("FP8", 8, 0, 0, 4)
        return [(["*"], scheme)], ignore + ["lm_head", "embed_tokens"], True, method
    if method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit", 4))
        bits = check_int(f"{where}.bits", bits, 1, 16)
        group = q.get("group_size", q.get("q_group_size", 128))
        group = check_int(f"{where}.group_size", group, -1, 1 << 20)
        group = 0 if group <= 0 else group
        # fp16 scale per group, plus packed zero points (bits per group)
        scheme = Scheme(f"{method.upper()} int{bits}", bits, group, 2 + -(-bits // 8),
                        0 if group else 2)
        return [(["*"], scheme)], ignore + ["lm_head", "embed_tokens"], True, method
    if method in ("compressed-tensors", "modelopt"):
        rules: list[tuple[list[str], Scheme]] = []
        layers = q.get("quantized_layers")
        if isinstance(layers, dict) and layers:
            for path, entry in list(layers.items())[:100_000]:
                algo = entry.get("quant_algo", "") if isinstance(entry, dict) else ""
                group = entry.get("group_size", 16) if isinstance(entry, dict) else 16
                scheme = (Scheme("FP8", 8, 0, 0, 4) if "FP8" in algo else
                          Scheme("NVFP4", 4, group if isinstance(group, int) and group > 0 else 16,
                                 1, 4) if "FP4" in algo else
                          Scheme("INT4 AWQ", 4, 128, 2) if "INT4" in algo else None)
                if scheme is not None:
                    rules.append(([path], scheme))
            return rules, ignore, False, method
        groups = q.get("config_groups")
        if isinstance(groups, dict):
            fmt = str(q.get("format", "")).lower()
            for name, group in list(groups.items())[:64]:
                if not isinstance(group, dict) or not isinstance(group.get("weights"), dict):
                    continue
                targets = [t for t in group.get("targets", []) if isinstance(t, str)]
                fmt_g = str(group.get("format", fmt)).lower()
                scheme = _group_scheme(group["weights"], fmt_g, f"{where}.config_groups.{name}.weights")
                rules.append((["*" if t == "Linear" else t for t in targets], scheme))
            return rules, ignore, False, method
        algo = str(q.get("quant_algo", "")).upper()
        if "FP8" in algo:
            return [(["*"], Scheme("FP8", 8, 0, 0, 4))], ignore + ["lm_head", "embed_tokens"], \
                True, method
        if "FP4" in algo:
            return [(["*"], Scheme("NVFP4", 4, 16, 1, 4))], ignore + ["lm_head", "embed_tokens"], \
                True, method
    raise ValueError(f"{where}.quant_method: {describe_value(method)} is not read here; "
                     "accepted: mxfp4, fp8, awq, gptq, compressed-tensors, modelopt (weights "
                     "counted at the model dtype instead would be wrong, so nothing is guessed)")


def shipped_bytes(count: ParameterCount, config: Any) -> tuple[int, dict[str, list[int]], str]:
    """(bytes, {storage label: [parameters, bytes]}, dtype of the rest) of the weights as the
    config.json says they ship: its quantization_config (top level or text_config), every
    other tensor at torch_dtype / dtype (default bf16). Norms, biases, routers and embeddings
    stay at the model dtype unless the quantization_config lists them; scales are counted."""
    if not isinstance(count, ParameterCount):
        raise ValueError(f"count: expected a ParameterCount, got {describe_value(count)}")
    config = parse_config(config)
    nested, inner = unwrap(config)
    where, q = "quantization_config", config.get("quantization_config")
    if q is None and isinstance(inner, dict) and inner.get("quantization_config") is not None:
        where, q = f"{nested}quantization_config", inner["quantization_config"]
    raw = next((c.get(k) for c in (inner, config) for k in ("torch_dtype", "dtype")
                if isinstance(c.get(k), str)), "bfloat16")
    rest = _TORCH_DTYPES.get(raw, "bf16")
    rules, ignore, default, method = ([], [], False, "") if q is None else _plan(q, where)
    rows: dict[str, list[int]] = {}
    total = 0
    for t in count.tensors:
        if t.mtp:
            continue
        path = _hf_path(t.name)
        scheme = None
        if _linear(t) or (t.name.startswith("embedding.lm_head") and not default):
            if not any(_matches(path, p) for p in ignore):
                scheme = next((s for patterns, s in rules
                               if any(p == "*" or _matches(path, p) for p in patterns)), None)
        size = scheme.bytes_of(t) if scheme else t.parameters * _BYTES[rest]
        label = scheme.label if scheme else rest
        row = rows.setdefault(label, [0, 0])
        row[0] += t.parameters
        row[1] += size
        total += size
    return total, rows, rest


def describe_shipped(rows: dict[str, list[int]]) -> str:
    """"MXFP4 110.1B params, bf16 6.8B params": the storage of the weights, largest first."""
    if not isinstance(rows, dict) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) and len(v) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            for k, v in rows.items()):
        raise ValueError(f"rows: expected {{dtype: [parameters, bytes]}}, got "
                         f"{describe_value(rows)}")
    parts = sorted(rows.items(), key=lambda item: -item[1][0])
    return ", ".join(f"{label} {params / 1e9:,.2f}B params" for label, (params, _) in parts)
