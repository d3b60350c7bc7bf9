"""sim: the mathematics of linear attention and hybrid models, numpy only.

One head, one convention everywhere: S is d_k × d_v, each token writes k vᵀ, then reads
o_t = S_tᵀ q_t. See `sim.rules` for the glossary of symbols and `sim.registry` for the rules.

    import sim
    trace = sim.run("gated_deltanet", q, k, v, alpha=0.9, beta=0.5)
    s = sim.init_state("kda", 4, 4); s = sim.step("kda", s, q0, k0, v0, alpha=a0, beta=0.5).state
"""

from importlib import import_module
from typing import Any

from . import cache, chunkwise, cost, parallel, random_features, recall, scenarios
from .chunkwise import CHUNKWISE_RULES, ChunkTrace, FormCosts, chunkwise_cost, run_chunkwise
from .dispatch import init_state, run, step
from .features import FEATURE_MAPS, feature_map, l2_normalize
from .random_features import (
    ApproximationError,
    approximation_error,
    draw_projection,
    elu1_weights,
    favor_features,
    softmax_weights_exact,
    softmax_weights_favor,
)
from .registry import MORE_RULE_INFO, MORE_RULES, RULE_INFO, RULES, RuleInfo
from .state import State, Step, Trace
from .validation import DivergenceError

__all__ = [
    "FEATURE_MAPS", "RULES", "RULE_INFO", "DivergenceError", "RuleInfo", "State", "Step", "Trace",
    "feature_map", "init_state", "l2_normalize", "run", "step",
    "cache", "cost", "parallel", "recall", "scenarios",
    "CHUNKWISE_RULES", "ChunkTrace", "FormCosts", "chunkwise_cost", "run_chunkwise", "chunkwise",
    "ApproximationError", "approximation_error", "draw_projection", "elu1_weights",
    "favor_features", "softmax_weights_exact", "softmax_weights_favor", "random_features",
    "MORE_RULES", "MORE_RULE_INFO", "selective_scan", "FRAME_RULES", "FrameFactor", "apply_frame",
    "frame_parts", "more_rules", "rwkv", "selective_ssm", "deltaproduct", "log_linear", "family",
]

# The rules beyond sim.RULES load on first use, so a page that never names them starts as fast
# as before (about 17 ms of imports on this machine's CPython).
_LAZY_MODULES = ("more_rules", "rwkv", "selective_ssm", "deltaproduct", "log_linear", "family",
                 "gated_deltanet2")
_LAZY_NAMES = {"selective_scan": "selective_ssm", "FRAME_RULES": "family",
               "FrameFactor": "family", "apply_frame": "family", "frame_parts": "family"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        return getattr(import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
