"""Every public function of sim (all modules but the command line and the checks themselves),
thrown bad values at each argument:
it returns finite results or raises ValueError/TypeError with a message naming the argument;
never MemoryError, OverflowError, a numpy RuntimeWarning (warnings are errors here) or a hang
(the good values are tiny and every bad size is refused before any work)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lanes import examples

import sim
import sim.engines
import sim.family
import sim.gpus
import sim.hf_config
import sim.hf_parts
import sim.log_linear
import sim.more_rules
import sim.weights

EXCLUDED_MODULES = (
    "__main__",  # the command line: it parses text and exits; tests/sim/test_sim_cli.py drives it
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
    # inside run_chunkwise and run_parallel, per chunk
    "parallel": ("forward_substitution", "decayed_scores_unchecked"),
    # the recurrences of the rules beyond sim.RULES ("kernels: one token, no checks" in each
    # module): their step_* and run_* check once and call these per token (and per chunk)
    "deltaproduct": ("deltaproduct_write",),
    "rwkv": ("rwkv7_write", "rwkv6_token"),
    "gated_deltanet2": ("gdn2_write",),
    "selective_ssm": ("elementwise_write",),
    "log_linear": ("cascade", "log_linear_token"),
    # not a kernel but a step of run's: the per-token decays of a rule `sim.rules.run` or
    # `sim.chunkwise.run_chunkwise` has checked and looked up (its RuleInfo) before the call
    "rule_inputs": ("run_decays",),
}
# Returned NaN that is documented: entries of pairs not yet written.
DOCUMENTED_NAN = {"recall_after_each_write"}
# Returned −∞ that is documented: the log decay above the diagonal (a mask, exp(−∞) = 0).
DOCUMENTED_INFINITE = {"segment_log_decay"}

A32 = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]])  # (3, 2): T = 3 tokens, d = 2
HF_CONFIG = json.loads((Path(__file__).parent / "hf_configs" / "llama-3-8b.json").read_text())
MODEL = "llama-3-8b"  # a preset id; the config-reading modules take an id, a Model or a dict
GiB = 2**30
GOOD: dict[str, Any] = {
    "rule": "linear", "q": A32, "k": A32, "v": A32, "x": A32, "X": A32, "K": A32,
    "keys": A32, "values": A32 + 1, "retrieved": A32, "target": A32 + 1,
    "log_a": -0.1 * np.ones((3, 2)), "W": np.ones((4, 2)), "chunk_size": 2,
    "T": 3, "C": 2, "d": 2, "d_k": 2, "d_v": 2, "n": 3, "m": 4, "n_pairs": 2, "seed": 0,
    "vocab_size": 2, "key_index": 0, "every": 2, "alpha": 0.9, "beta": 0.5, "rho": 0.5,
    "kind": "random", "eps": 1e-12, "ms": [2, 4], "seeds": [0, 1], "scale": None,
    "orthogonal": True, "ns": [1, 2], "t": 3, "with_z": False, "a": [1.0, 2.0],
    "given": {"attention": 1, "kv_heads": 1, "head_dim": 8, "recurrent": 1, "heads": 1, "d": 4},
    # the config-reading modules (cache, hf_config, engines, gpus, weights, user_input)
    "config": HF_CONFIG, "model": MODEL, "text": sim.cache.model_to_json(sim.cache.get_model(MODEL)),
    "mixer": sim.cache.get_model(MODEL).groups[0].mixer, "tokens": 1024,
    "allocation": sim.engines.allocate(MODEL, 1024),
    "verdict": sim.gpus.gpu_verdict(MODEL, 1024, gpu=next(iter(sim.gpus.GPUS))),
    "report": sim.hf_config.from_hf_config(HF_CONFIG)[1],
    "count": sim.weights.parameter_count(HF_CONFIG), "engine": "vllm",
    "memory_bytes": 80 * GiB, "weight_bytes": 16 * GiB, "overhead_bytes": 2 * GiB,
    "path": "layers[0]", "key": "heads", "value": 8, "low": 1, "high": 64, "limit": 100,
}
D2 = np.array([[0.6, 0.8], [1.0, 0.0]])  # (n_h, d) = (2, 2): DeltaProduct's two keys a token
# Good arguments that differ by function (the rule a module runs, the shapes it takes) and the
# keyword gates of the functions taking **gates / **params: those are thrown bad values too.
CALLS: dict[str, dict[str, Any]] = {
    "more_rules.init_state": {"rule": "mamba1"},
    "more_rules.step": {"rule": "mamba1", "state": sim.more_rules.init_state("mamba1", 2, 2),
                        "q": A32[0], "k": A32[0], "v": A32[0], "alpha": 0.9},
    "more_rules.run": {"rule": "mamba1", "alpha": 0.9},
    "selective_ssm.step_mamba1": {"state": sim.more_rules.init_state("mamba1", 2, 2),
                                  "q": A32[0], "k": A32[0], "v": A32[0], "alpha": 0.9},
    "selective_ssm.run_mamba1": {"alpha": 0.9},
    "selective_ssm.selective_scan": {"u": A32, "delta": np.full((3, 2), 0.5),
                                     "A": -np.ones((2, 2)), "B": A32, "C": A32},
    "rwkv.step_rwkv7": {"state": sim.more_rules.init_state("rwkv7", 2, 2), "q": A32[0],
                        "k": A32[0], "v": A32[0], "alpha": 0.9, "beta": 0.5,
                        "removal_key": A32[0]},
    "rwkv.run_rwkv7": {"alpha": 0.9, "beta": 0.5, "removal_key": A32},
    "rwkv.step_rwkv6": {"state": sim.more_rules.init_state("rwkv6", 2, 2), "q": A32[0],
                        "k": A32[0], "v": A32[0], "alpha": 0.9, "bonus": 0.5},
    "rwkv.run_rwkv6": {"alpha": 0.9, "bonus": 0.5},
    "gated_deltanet2.step_gdn2": {"state": sim.more_rules.init_state("gdn2", 2, 2), "q": A32[0],
                                  "k": A32[0], "v": A32[0], "alpha": 0.9, "erase": 0.5, "write": 0.5},
    "gated_deltanet2.run_gdn2": {"alpha": 0.9, "erase": 0.5, "write": 0.5},
    "deltaproduct.step_deltaproduct": {
        "state": sim.more_rules.init_state("deltaproduct", 2, 2), "q": A32[0], "k": D2,
        "v": D2 + 1, "alpha": 0.9, "beta": [0.5, 0.5]},
    "deltaproduct.run_deltaproduct": {"k": np.stack([D2] * 3), "v": np.stack([D2 + 1] * 3),
                                      "alpha": 0.9, "beta": 0.5},
    "deltaproduct.interleave": {"k": np.stack([D2] * 3), "v": np.stack([D2 + 1] * 3)},
    "deltaproduct.run_chunkwise": {"k": np.stack([D2] * 3), "v": np.stack([D2 + 1] * 3)},
    "log_linear.step_log_linear": {"state": sim.log_linear.init_state(2, 2), "q": A32[0],
                                   "k": A32[0], "v": A32[0], "alpha": 0.9,
                                   "level_weights": [1.0, 0.5]},
    "log_linear.run_log_linear": {"alpha": 0.9, "level_weights": np.ones((3, 3))},
    "log_linear.run_parallel": {"level_weights": np.ones((3, 3))},
    "log_linear.run_chunkwise": {"level_weights": np.ones((3, 3))},
    "family.frame_parts": {"rule": "gated_deltanet", "k": A32[0], "v": A32[0], "alpha": 0.9,
                           "beta": 0.5},
    "family.apply_frame": {"parts": sim.family.frame_parts("linear", A32[0], A32[0]),
                           "S": np.ones((2, 2))},
    "rule_inputs.token": {"q": A32[0], "k": A32[0], "v": A32[0], "t": 0},
    "rule_inputs.keep_states": {"params": {"keep_states": False}},
    "rule_inputs.initial_state": {"params": {"initial_state": np.ones((2, 2))}},
    "rule_inputs.state_matrix": {"rule": "mamba1",
                                 "state": sim.more_rules.init_state("mamba1", 2, 2)},
    "rule_inputs.params_for": {"rule": "rwkv7", "params": {"alpha": 0.9, "beta": 0.5},
                               "accepted": ("alpha", "beta"), "required": ("alpha",)},
    "user_input.check_text": {"value": "abc"},
    "cache.load_model": {"config": json.loads(GOOD["text"])},  # a model, not a config.json
    "cache.model_to_dict": {"model": sim.cache.get_model(MODEL)},
    "cache.model_to_json": {"model": sim.cache.get_model(MODEL)},
    "presets.layers_from_pattern": {"pattern": "AAB", "mixers": {
        "A": {"kind": "attention", "kv_heads": 1, "head_dim": 8}, "B": {"kind": "mlp"}}},
    "gpus.gpu_memory_bytes": {"gpu": next(iter(sim.gpus.GPUS))},
    "hf_config.model_name": {"config": HF_CONFIG, "family": "llama"},
    "hf_config.pasted_name": {"config": HF_CONFIG, "family": "llama"},
    "hf_parts.read_parts": {"config": HF_CONFIG, "family": "llama", "reader": None},
    "hf_parts.cache_entries": {"parts": sim.hf_parts.read_parts(HF_CONFIG, "llama")},
    "weights.describe_shipped": {"rows": {"bf16": [8, 16]}},
    "gpus.gpu_verdict": {"gpu": next(iter(sim.gpus.GPUS))},
    "gpus.gpu_verdicts": {"gpu": next(iter(sim.gpus.GPUS)), "contexts": [0, 1024]},
    # of the first modules: the values these take differ from the names' usual ones
    "rules.step": {"state": sim.init_state("linear", 2, 2), "q": A32[0], "k": A32[0],
                   "v": A32[0]},
    "registry.rules_of": {"family": "delta"},
    "dispatch.step": {"state": sim.init_state("linear", 2, 2), "q": A32[0], "k": A32[0],
                      "v": A32[0]},
    "exercises.number_text": {"x": 2.5},
    "exercises.mat": {"m": A32},
    "features.feature_map": {"name": "elu+1"},
    "random_features.softmax_weights_exact": {"q": A32[0]},
    "random_features.softmax_weights_favor": {"q": A32[0]},
    "random_features.elu1_weights": {"q": A32[0]},
    "random_features.approximation_error": {"q": A32[0]},
}
for _check in ("decay", "rate", "weights", "bounded", "unit_rows"):
    CALLS[f"rule_inputs.{_check}"] = {"name": "alpha", "x": A32 if _check == "unit_rows"
                                      else np.full((3, 2), 0.5), "shape": (3, 2),
                                      "labels": "(T, d_k)", "high": 1.0}
# Arguments that are the label a message uses for the value they come with (rule_inputs' `name`,
# user_input's `path` and `what`, as sim.validation's `name`): such a message names that label.
LABELS = ("name", "path", "what")
# The one rule for messages naming a config field rather than the parameter: only for these
# arguments of the config-reading modules, a message may start with what the config calls the
# value ('config', 'model', 'model_type', the text it came from) or with the path of the field at
# fault, and that field must be one of the keys of the dict given (e.g. {"a": 1} → "a: unknown
# field").
CONFIG_MODULES = ("cache", "hf_config", "hf_reader", "hf_parts", "user_input", "engines", "gpus",
                  "weights", "presets")
CONFIG_ARGUMENTS = ("config", "model", "text")
CONFIG_HEADS = ("config", "model", "model_type", "text")
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
    every = {info.name for info in pkgutil.iter_modules(sim.__path__)} - set(EXCLUDED_MODULES)
    without_functions = {"state"}  # records only: nothing to call
    assert every - without_functions - set(KERNELS) <= modules  # the rest: kernels only, or some
    assert len(FUNCTIONS) >= 120


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


def _names_a_config_field(module: str, target: str, head: str, bad: Any) -> bool:
    """The one rule above: a config/model/text argument of a config-reading module."""
    if module not in CONFIG_MODULES or target not in CONFIG_ARGUMENTS:
        return False
    if head in CONFIG_HEADS:
        return True
    field = re.split(r"[.\[]", head, maxsplit=1)[0]
    return isinstance(bad, dict) and field in {str(key) for key in bad}


def _good_arguments(module: str, name: str, function: Any) -> dict[str, Any]:
    """Every argument of `function` at a good value (GOOD, then CALLS), with the keyword gates
    of a function taking **gates / **params."""
    signature = inspect.signature(function).parameters.values()
    takes_keywords = any(p.kind is p.VAR_KEYWORD for p in signature)
    args = {p.name: GOOD.get(p.name, p.default) for p in signature
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    for key, value in CALLS.get(f"{module}.{name}", {}).items():
        if key in args or takes_keywords:
            args[key] = value
    if "exercise" in args and args["exercise"] is inspect.Parameter.empty:
        args["exercise"] = sim.exercises.running_sum(0)
    if "rng" in args and args["rng"] is inspect.Parameter.empty:
        args["rng"] = np.random.default_rng(0)
    return args


@pytest.mark.parametrize("module, name, function", FUNCTIONS,
                         ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS])
def test_the_good_values_are_accepted(module: str, name: str, function: Any) -> None:
    """Each function runs on its good values, so a refusal below is the bad value's doing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _finite(function(**_good_arguments(module, name, function))) or (
            name in DOCUMENTED_NAN | DOCUMENTED_INFINITE)


@pytest.mark.parametrize("module, name, function", FUNCTIONS,
                         ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bad_values_are_refused_by_name(module: str, name: str, function: Any, data) -> None:
    args = _good_arguments(module, name, function)
    if not args:
        return
    target = data.draw(st.sampled_from(list(args)), label="argument")
    bad = data.draw(BAD, label="bad value")
    args[target] = bad
    if name == "running_sum_stream" and target != "exercise":
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning (or any warning) fails
        try:
            result = function(**args)
        except (ValueError, TypeError) as error:
            message = str(error)
            # the argument's name, or the option it stands for (feature_map's `name`), or the
            # label given with it (LABELS); the keywords inside rule_inputs' `params` (its
            # stand-in for **params) are arguments too
            keywords = set(args["params"]) if isinstance(args.get("params"), dict) else set()
            names = set(args) | keywords | {"feature_map"} | {
                args[label] for label in LABELS
                if label != target and isinstance(args.get(label), str) and args[label]}
            head = message.split(":")[0]
            assert (any(n in head.replace(" ", "").split(",") or head.startswith(n) for n in names)
                    or message.startswith(f"{name}: {target} ")  # "format_bytes: n must be"
                    or _names_a_config_field(module, target, head, bad)), (
                f"{module}.{name}({target}={bad!r}): {type(error).__name__}: {message}")
            assert "\n" not in message and len(message) < 400, message
            return
    if name not in DOCUMENTED_NAN:
        assert _finite(result), f"{module}.{name}({target}={bad!r}) returned non-finite"
