"""sim.registry: one row per rule, read by sim.init_state/step/run, the families and the pages."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from sim_helpers import make_inputs, make_params

import sim
from sim import registry


def test_the_table_is_the_public_lists() -> None:
    assert sim.RULES + sim.MORE_RULES == tuple(registry.REGISTRY)
    assert sim.RULE_INFO == {n: registry.REGISTRY[n].info for n in sim.RULES}
    assert sim.MORE_RULE_INFO == {n: registry.REGISTRY[n].info for n in sim.MORE_RULES}
    for name, entry in registry.REGISTRY.items():
        assert entry.info.name == name and entry.family in registry.FAMILIES
    # every rule in exactly one family, the families in registry order
    assert sorted(sum((registry.rules_of(f) for f in registry.FAMILIES), ())) == sorted(
        registry.REGISTRY)
    assert registry.rules_of("delta") == (
        "deltanet", "gated_deltanet", "kda", "rwkv7", "deltaproduct", "gdn2")
    assert registry.rules_of("delta", sim.RULES) == ("deltanet", "gated_deltanet", "kda")


@pytest.mark.parametrize("rule", registry.REGISTRY)
def test_the_row_names_the_module_that_runs_it(rule: str) -> None:
    """sim.init_state goes to the module in the row: the same state as that module's own."""
    module = importlib.import_module(registry.module_of(rule))
    mine, theirs = sim.init_state(rule, 3, 2), module.init_state(rule, 3, 2)
    assert type(mine) is type(theirs) and mine.t == theirs.t == 0
    other = {"sim.rules": "sim.more_rules", "sim.more_rules": "sim.rules"}[module.__name__]
    with pytest.raises(ValueError, match="rule: unknown value"):
        importlib.import_module(other).init_state(rule, 3, 2)


@pytest.mark.parametrize("rule", sim.RULES)
def test_the_delta_family_is_the_rules_that_erase(rule: str) -> None:
    """A delta rule's run reports what it read back and its error; no other rule's does."""
    q, k, v = make_inputs(5, 3, 2, seed=1)
    trace = sim.run(rule, q, k, v, **make_params(rule, 5, 3, seed=1))
    erases = registry.REGISTRY[rule].family == "delta"
    assert (trace.read_backs is not None) == erases and (trace.errors is not None) == erases
    if erases:
        assert np.abs(trace.read_backs).max() > 0


def test_an_unknown_rule_is_refused_with_the_eight() -> None:
    q, k, v = make_inputs(2, 2, 2, seed=0)
    for call in (lambda: sim.run("rwkv8", q, k, v), lambda: sim.init_state("rwkv8", 2, 2),
                 lambda: sim.run(["linear"], q, k, v)):
        with pytest.raises(ValueError, match="accepted: softmax, linear, retnet"):
            call()
