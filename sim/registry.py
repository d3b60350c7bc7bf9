"""The one table of update rules: name → implementing module, `RuleInfo` and family.

Every rule is one row of `REGISTRY`. `sim.init_state`, `sim.step` and `sim.run` (`sim.dispatch`)
find a rule's module here; `sim.chunkwise`, `sim.parallel` and the pages read the families and
the lists below instead of writing them out. This module imports no rule, so any module may read
it.

    family    what a token does to S                                   rules
    softmax   appends k, v to a KV cache (no fixed-size state)          softmax
    linear    adds k vᵀ (φ(k) vᵀ) and never forgets                     linear
    decay     decays S by a gate, then adds k vᵀ                        retnet, mamba2, gla, rwkv6,
                                                                        mamba1, log_linear
    delta     erases what a key points at before it writes (β, a        deltanet, gated_deltanet,
              read-back and an error per token)                         kda, rwkv7, deltaproduct,
                                                                        gdn2

`RULES` are the eight rules with the shared inputs (q, k (T, d_k), v (T, d_v), gates of shape
(T,) or (T, d_k)), implemented in `sim.rules`; `MORE_RULES` the six with other shapes or states,
implemented in `sim.more_rules` (see its docstring), which a page opts in to by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from . import validation as check

Family = Literal["softmax", "linear", "decay", "delta"]
FAMILIES: tuple[str, ...] = get_args(Family)


@dataclass(frozen=True)
class RuleInfo:
    """What a page needs to present a rule.

    label:       human name ("Gated DeltaNet").
    equation:    the state update in LaTeX, in this package's convention (S is d_k × d_v).
    readout:     how the output is read, in LaTeX.
    gates:       the per-token gates `run`/`step` take, e.g. ("alpha", "beta").
    alpha_shape: "scalar" (one α per token), "channel" (α per key channel), "cell" (α per cell
                 of S, Mamba-1) or None.
    options:     every keyword `run` accepts for this rule.
    """

    name: str
    label: str
    equation: str
    readout: str
    gates: tuple[str, ...]
    alpha_shape: str | None
    options: tuple[str, ...]


@dataclass(frozen=True)
class RuleEntry:
    """One row of the registry.

    module: the module whose `init_state(rule, d_k, d_v)`, `step(rule, …)` and `run(rule, …)`
            implement the rule ("sim.rules" or "sim.more_rules").
    family: "softmax", "linear", "decay" or "delta" (the module docstring).
    info:   its `RuleInfo`.
    """

    module: str
    family: Family
    info: RuleInfo


_RECURRENT_OPTIONS = ("initial_state", "keep_states")
_READ = r"o_t = S_t^\top q_t"
_RULES_MODULE = "sim.rules"
_MORE_MODULE = "sim.more_rules"

REGISTRY: dict[str, RuleEntry] = {
    "softmax": RuleEntry(_RULES_MODULE, "softmax", RuleInfo(
        "softmax", "Softmax attention",
        r"K_t = [K_{t-1}; k_t^\top],\quad V_t = [V_{t-1}; v_t^\top]",
        r"o_t = \sum_{i \le t} \operatorname{softmax}_i\!\left(s\, q_t^\top k_i\right) v_i",
        (), None, ("scale", "keep_states"))),
    "linear": RuleEntry(_RULES_MODULE, "linear", RuleInfo(
        "linear", "Linear attention",
        r"S_t = S_{t-1} + \phi(k_t)\, v_t^\top,\quad z_t = z_{t-1} + \phi(k_t)",
        r"o_t = S_t^\top \phi(q_t) \;\left[\,/\, \phi(q_t)^\top z_t\right]",
        (), None, ("feature_map", "normalize", "initial_z", *_RECURRENT_OPTIONS))),
    "retnet": RuleEntry(_RULES_MODULE, "decay", RuleInfo(
        "retnet", "RetNet",
        r"S_t = \gamma\, S_{t-1} + k_t v_t^\top", _READ,
        ("gamma",), None, ("gamma", *_RECURRENT_OPTIONS))),
    "mamba2": RuleEntry(_RULES_MODULE, "decay", RuleInfo(
        "mamba2", "Mamba-2",
        r"S_t = a_t\, S_{t-1} + k_t v_t^\top", _READ,
        ("alpha",), "scalar", ("alpha", *_RECURRENT_OPTIONS))),
    "gla": RuleEntry(_RULES_MODULE, "decay", RuleInfo(
        "gla", "GLA",
        r"S_t = \operatorname{diag}(\alpha_t)\, S_{t-1} + k_t v_t^\top", _READ,
        ("alpha",), "channel", ("alpha", *_RECURRENT_OPTIONS))),
    "deltanet": RuleEntry(_RULES_MODULE, "delta", RuleInfo(
        "deltanet", "DeltaNet",
        r"S_t = S_{t-1} + \beta_t\, k_t \left(v_t - S_{t-1}^\top k_t\right)^\top", _READ,
        ("beta",), None, ("beta", *_RECURRENT_OPTIONS))),
    "gated_deltanet": RuleEntry(_RULES_MODULE, "delta", RuleInfo(
        "gated_deltanet", "Gated DeltaNet",
        r"S_t = a_t S_{t-1} + \beta_t\, k_t \left(v_t - a_t S_{t-1}^\top k_t\right)^\top", _READ,
        ("alpha", "beta"), "scalar", ("alpha", "beta", *_RECURRENT_OPTIONS))),
    "kda": RuleEntry(_RULES_MODULE, "delta", RuleInfo(
        "kda", "Kimi Delta Attention",
        r"S_t = \operatorname{diag}(\alpha_t) S_{t-1} + \beta_t\, k_t "
        r"\left(v_t - (\operatorname{diag}(\alpha_t) S_{t-1})^\top k_t\right)^\top", _READ,
        ("alpha", "beta"), "channel", ("alpha", "beta", *_RECURRENT_OPTIONS))),
    "rwkv7": RuleEntry(_MORE_MODULE, "delta", RuleInfo(
        "rwkv7", "RWKV-7",
        r"S_t = \operatorname{diag}(\alpha_t) S_{t-1} - (\beta_t \odot \hat\kappa_t)"
        r"(\hat\kappa_t^\top S_{t-1}) + k_t v_t^\top", _READ,
        ("alpha", "beta"), "channel", ("alpha", "beta", "removal_key", *_RECURRENT_OPTIONS))),
    "rwkv6": RuleEntry(_MORE_MODULE, "decay", RuleInfo(
        "rwkv6", "RWKV-6",
        r"S_t = \operatorname{diag}(\alpha_t) S_{t-1} + k_t v_t^\top",
        r"o_t = S_{t-1}^\top q_t + \left(q_t^\top (u \odot k_t)\right) v_t",
        ("alpha", "bonus"), "channel", ("alpha", "bonus", *_RECURRENT_OPTIONS))),
    "mamba1": RuleEntry(_MORE_MODULE, "decay", RuleInfo(
        "mamba1", "Mamba-1 (selective SSM)",
        r"S_t = \alpha_t \odot S_{t-1} + k_t v_t^\top", _READ,
        ("alpha",), "cell", ("alpha", *_RECURRENT_OPTIONS))),
    "deltaproduct": RuleEntry(_MORE_MODULE, "delta", RuleInfo(
        "deltaproduct", "DeltaProduct",
        r"S \leftarrow a_t S_{t-1};\ S \leftarrow S + \beta_{t,j} k_{t,j}"
        r"\left(v_{t,j} - S^\top k_{t,j}\right)^\top,\ j = 1..n_h;\ S_t = S", _READ,
        ("alpha", "beta"), "scalar", ("alpha", "beta", *_RECURRENT_OPTIONS))),
    "log_linear": RuleEntry(_MORE_MODULE, "decay", RuleInfo(
        "log_linear", "Log-linear attention (Mamba-2)",
        r"S^{(\ell)}_t = a_t S^{(\ell)}_{t-1} \text{ (after the Fenwick carry)},\ "
        r"S^{(0)}_t = k_t v_t^\top",
        r"o_t = \sum_\ell \lambda_t^{(\ell)} S^{(\ell)\top}_t q_t",
        ("alpha",), "scalar", ("alpha", "level_weights", "keep_states"))),
    "gdn2": RuleEntry(_MORE_MODULE, "delta", RuleInfo(
        "gdn2", "Gated DeltaNet-2",
        r"S_t = \left(I - k_t (b_t \odot k_t)^\top\right) \operatorname{diag}(\alpha_t) S_{t-1}"
        r" + k_t (w_t \odot v_t)^\top", _READ,
        ("alpha", "erase", "write"), "channel", ("alpha", "erase", "write", *_RECURRENT_OPTIONS))),
}

RULES: tuple[str, ...] = tuple(n for n, e in REGISTRY.items() if e.module == _RULES_MODULE)
RULE_INFO: dict[str, RuleInfo] = {n: REGISTRY[n].info for n in RULES}
MORE_RULES: tuple[str, ...] = tuple(n for n, e in REGISTRY.items() if e.module == _MORE_MODULE)
MORE_RULE_INFO: dict[str, RuleInfo] = {n: REGISTRY[n].info for n in MORE_RULES}


def rules_of(family: Family, among: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The rules of `family`, in registry order (`RULES`, then `MORE_RULES`); only those in
    `among` if given. rules_of("delta", RULES) == ("deltanet", "gated_deltanet", "kda")."""
    check.check_choice("family", family, FAMILIES)
    if among is not None and not (isinstance(among, tuple)
                                  and all(isinstance(n, str) for n in among)):
        raise ValueError(f"among: expected a tuple of rule names or None, got "
                         f"{check.describe(among)}")
    return tuple(n for n, e in REGISTRY.items()
                 if e.family == family and (among is None or n in among))


def module_of(rule: object) -> str | None:
    """The name of the module that implements `rule`, or None if `rule` is no registered name."""
    entry = REGISTRY.get(rule) if isinstance(rule, str) else None
    return entry.module if entry is not None else None
