"""The rules beyond `sim.RULES`: RWKV-7, RWKV-6, Mamba-1, DeltaProduct, log-linear attention and
Gated DeltaNet-2,
behind the same `init_state`, `step` and `run` (and reachable through `sim.init_state`,
`sim.step` and `sim.run` by name).

Their rows in `sim.registry` (`MORE_RULES`, `MORE_RULE_INFO`) name this module, and
`sim.dispatch` sends them here. They are kept
out of `sim.RULES` and `sim.RULE_INFO` on purpose: those list the eight rules that share one set
of inputs (q, k (T, d_k), v (T, d_v), gates of shape (T,) or (T, d_k)), which the
pages, `sim.parallel` and `sim.chunkwise` enumerate. These five take other shapes (a gate per
cell of S, n_h keys per token, L level weights) or other states (Fenwick levels), so a page
opts in to them by name from `MORE_RULES`.

    rule          module              run parameters (per run; floats broadcast)
    rwkv7         sim.rwkv            alpha (T, d_k) ∈ (0, 1], beta (T, d_k) ∈ [0, 1],
                                      removal_key (T, d_k) unit rows (default k / ‖k‖)
    rwkv6         sim.rwkv            alpha (T, d_k) ∈ (0, 1], bonus (d_k,)
    mamba1        sim.selective_ssm   alpha (T, d_k, d_v) ∈ (0, 1]
    deltaproduct  sim.deltaproduct    k (T, n_h, d_k), v (T, n_h, d_v), alpha (T,) ∈ (0, 1],
                                      beta (T, n_h) ∈ [0, 2]
    log_linear    sim.log_linear      alpha (T,) ∈ (0, 1], level_weights (T, L) ≥ 0,
                                      L = ⌈log₂ T⌉ + 1 (default all 1: Mamba-2)
    gdn2          sim.gated_deltanet2 alpha (T, d_k) ∈ (0, 1], erase (T, d_k) ∈ [0, 1],
                                      write (T, d_v) ∈ [0, 1] (Gated DeltaNet-2)
Every one but log_linear also takes initial_state (d_k, d_v); all take keep_states.
`step` takes one token's slice of the same (deltaproduct: k (n_h, d_k), v (n_h, d_v), beta
(n_h,); log_linear: level_weights (L,) with at least bit_length(t) + 1 entries at token t).

Also: `sim.selective_scan` (Mamba-1 with Mamba's own names and shapes), `sim.family` (the one
DPLR frame of the delta rules), parallel and chunkwise forms `sim.log_linear.run_parallel`,
`sim.log_linear.run_chunkwise` and `sim.deltaproduct.run_chunkwise` (through
`sim.chunkwise.run_chunkwise("gated_deltanet", ...)` on the interleaved sub-steps). No chunkwise
form for rwkv7 (its erase reads with κ̂ and writes with β ⊙ κ̂, a ≠ b: it needs the DPLR
chunk form, not the delta rule's UT transform that sim.chunkwise has), rwkv6 (its read of
S_{t−1} shifts the decay by a token: masks sim.chunkwise does not have) or mamba1 (a gate per
cell of S, not per key row: one GLA per value column).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import validation as check
from .deltaproduct import run_deltaproduct, step_deltaproduct
from .gated_deltanet2 import run_gdn2, step_gdn2
from .log_linear import init_state as _init_levels
from .log_linear import run_log_linear, step_log_linear
from .registry import MORE_RULES
from .rwkv import run_rwkv6, run_rwkv7, step_rwkv6, step_rwkv7
from .selective_ssm import run_mamba1, step_mamba1
from .state import State, Step, Trace

_STEPS: dict[str, Callable[..., Step]] = {
    "rwkv7": step_rwkv7, "rwkv6": step_rwkv6, "mamba1": step_mamba1,
    "deltaproduct": step_deltaproduct, "log_linear": step_log_linear, "gdn2": step_gdn2,
}
_RUNS: dict[str, Callable[..., Trace]] = {
    "rwkv7": run_rwkv7, "rwkv6": run_rwkv6, "mamba1": run_mamba1,
    "deltaproduct": run_deltaproduct, "log_linear": run_log_linear, "gdn2": run_gdn2,
}


def init_state(rule: str, d_k: int, d_v: int) -> State:
    """The empty memory of `rule`: S = 0 (d_k, d_v); a `LevelState` with no levels for
    log_linear."""
    check.check_choice("rule", rule, MORE_RULES)
    if rule == "log_linear":
        return _init_levels(d_k, d_v)
    d_k, d_v = check.check_state_dims(d_k, d_v)
    S = np.zeros((d_k, d_v))
    S.flags.writeable = False
    return State(S=S)


def step(rule: str, state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One token of `rule` (see the module docstring for the gates). Returns a `Step`."""
    check.check_choice("rule", rule, MORE_RULES)
    return _STEPS[rule](state, q, k, v, **gates)


def run(rule: str, q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """T tokens of `rule` (see the module docstring for the parameters). Returns a `Trace`
    (a `LevelTrace` for log_linear)."""
    check.check_choice("rule", rule, MORE_RULES)
    return _RUNS[rule](q, k, v, **params)
