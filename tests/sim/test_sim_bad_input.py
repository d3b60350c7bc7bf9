"""Every public function of the sim modules this suite owns, thrown bad values at each argument:
it returns finite results or raises ValueError/TypeError with a message naming the argument;
never MemoryError, OverflowError, a numpy RuntimeWarning (warnings are errors here) or a hang
(the good values are tiny and every bad size is refused before any work)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim

# Modules another helper owns (the model loader, its inputs, engines, GPUs, weights); their
# owner adds them here.
OTHER_OWNERS = ("cache", "hf_config", "user_input", "presets", "__main__", "engines", "gpus",
                "weights")
# Modules the helper adding new rules is writing now (RWKV, Mamba-1, DeltaProduct, log-linear,
# the DPLR frame); their owner adds them here once their guards are in.
NEW_RULE_MODULES = ("deltaproduct", "family", "log_linear", "more_rules", "rule_inputs", "rwkv",
                    "selective_ssm")
EXCLUDED_MODULES = OTHER_OWNERS + NEW_RULE_MODULES + (
    "validation",  # the checks themselves: each raises by design (tests/sim/test_sim_validation.py)
)
# Unchecked kernels, documented as such: `step` and `run` check their inputs once and call these
# per token, so checking inside them would double the cost of an animation frame (see the two
# speeds in sim/validation.py).
KERNELS = {
    "features": ("apply_feature_map",),
    "linear_attention": ("rank_one", "linear_write", "linear_read"),
    "decayed_attention": ("decay_state", "decayed_write"),
    "delta_rule": ("delta_write",),
    "softmax_attention": ("softmax_read",),
    "parallel": ("forward_substitution",),  # inside run_chunkwise and run_parallel, per chunk
}
# Returned NaN that is documented: entries of pairs not yet written.
DOCUMENTED_NAN = {"recall_after_each_write"}

A32 = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]])  # (3, 2): T = 3 tokens, d = 2
GOOD: dict[str, Any] = {
    "rule": "linear", "q": A32, "k": A32, "v": A32, "x": A32, "X": A32, "K": A32,
    "keys": A32, "values": A32 + 1, "retrieved": A32, "target": A32 + 1,
    "log_a": -0.1 * np.ones((3, 2)), "W": np.ones((4, 2)), "chunk_size": 2,
    "T": 3, "C": 2, "d": 2, "d_k": 2, "d_v": 2, "n": 3, "m": 4, "n_pairs": 2, "seed": 0,
    "vocab_size": 2, "key_index": 0, "every": 2, "alpha": 0.9, "beta": 0.5, "rho": 0.5,
    "kind": "random", "eps": 1e-12, "ms": [2, 4], "seeds": [0, 1], "scale": None,
    "orthogonal": True, "ns": [1, 2], "t": 3, "with_z": False, "a": [1.0, 2.0],
    "given": {"attention": 1, "kv_heads": 1, "head_dim": 8, "recurrent": 1, "heads": 1, "d": 4},
}
BAD = st.sampled_from([
    float("nan"), float("inf"), -float("inf"), 1j, np.complex128(2 + 1j), "abc", "0.5", None,
    True, 10**30, 2**62, -3, 0, -0.5, 1e308, [], [[1, "a"]], np.ones((2, 3, 4)),
    np.full((3, 2), np.nan), A32 * 1j, A32 * 1e200, np.ones((0, 2)), {"a": 1}, object(),
])


def _public_functions() -> list[tuple[str, str, Any]]:
    found = []
    for info in pkgutil.iter_modules(sim.__path__):
        if info.name in EXCLUDED_MODULES:
            continue
        module = importlib.import_module(f"sim.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(obj):
                continue  # classes are records (State, Trace, ...): they do no work
            if obj.__module__ != module.__name__ or name in KERNELS.get(info.name, ()):
                continue
            found.append((info.name, name, obj))
    return found


FUNCTIONS = _public_functions()


def test_the_enumeration_covers_the_modules() -> None:
    modules = {m for m, _, _ in FUNCTIONS}
    assert {"rules", "chunkwise", "parallel", "cost", "recall", "random_features", "scenarios",
            "features", "exercises"} <= modules
    assert len(FUNCTIONS) >= 40


def _finite(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, float):
        return np.isfinite(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(_finite(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


@pytest.mark.parametrize("module, name, function", FUNCTIONS,
                         ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bad_values_are_refused_by_name(module: str, name: str, function: Any, data) -> None:
    params = [p for p in inspect.signature(function).parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not params:
        return
    target = data.draw(st.sampled_from(params), label="argument")
    bad = data.draw(BAD, label="bad value")
    args = {p.name: GOOD.get(p.name, p.default) for p in params}
    args[target.name] = bad
    if name == "running_sum_stream" and target.name != "exercise":
        return
    args.setdefault("exercise", sim.exercises.running_sum(0))
    if args.get("exercise") is inspect.Parameter.empty:
        args["exercise"] = sim.exercises.running_sum(0)
    if "rng" in args and args["rng"] is inspect.Parameter.empty:
        args["rng"] = np.random.default_rng(0)
    args = {k: v for k, v in args.items() if k in {p.name for p in params}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning (or any warning) fails
        try:
            result = function(**args)
        except (ValueError, TypeError) as error:
            message = str(error)
            # the argument's name, or the option it stands for (feature_map's `name`)
            names = {p.name for p in params} | {"feature_map"}
            head = message.split(":")[0]
            assert any(n in head.replace(" ", "").split(",") or head.startswith(n) for n in names), (
                f"{module}.{name}({target.name}={bad!r}): {type(error).__name__}: {message}")
            assert "\n" not in message and len(message) < 400, message
            return
    if name not in DOCUMENTED_NAN:
        assert _finite(result), f"{module}.{name}({target.name}={bad!r}) returned non-finite"
