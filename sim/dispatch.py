"""`sim.init_state`, `sim.step` and `sim.run`: every rule by name, through `sim.registry`.

A rule's row in `sim.registry.REGISTRY` names the module that implements it: `sim.rules` (the
eight rules of `sim.RULES`) or `sim.more_rules` (RWKV-7, RWKV-6, Mamba-1, DeltaProduct,
log-linear attention). That module is imported on first use, so a page that never names the
five more rules never loads them. A name in no row goes to `sim.rules`, whose message lists
`sim.RULES`. The parameters of each rule are in `sim.rules.run` and in `sim.more_rules`.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any

from . import rules
from .registry import module_of
from .state import State, Step, Trace


def _module(rule: Any) -> ModuleType:
    name = module_of(rule)
    return rules if name is None or name == rules.__name__ else import_module(name)


def init_state(rule: str, d_k: int, d_v: int) -> State:
    """The empty memory of `rule`: S = 0 (d_k, d_v), plus z = 0 (d_k,) for linear attention;
    softmax attention starts with an empty KV cache, keys (0, d_k) and values (0, d_v);
    log_linear a `LevelState` with no levels."""
    return _module(rule).init_state(rule, d_k, d_v)


def step(rule: str, state: State, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """Process one token of `rule`: update `state` with (k, v), then read with q. Returns a
    `Step`; `state` is never modified. Gates for this one token: `sim.rules.step` (the eight of
    `sim.RULES`) and `sim.more_rules` (the others)."""
    return _module(rule).step(rule, state, q, k, v, **gates)


def run(rule: str, q: Any, k: Any, v: Any, **params: Any) -> Trace:
    """Run `rule` over a stream: q, k (T, d_k), v (T, d_v). Returns a `Trace` (a `LevelTrace` for
    log_linear). Parameters: `sim.rules.run` (the eight of `sim.RULES`) and `sim.more_rules`
    (the others). Raises ValueError on bad input and DivergenceError when a computation
    overflows."""
    return _module(rule).run(rule, q, k, v, **params)
