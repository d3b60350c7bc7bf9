"""sim.rule_inputs, the checks of the rules beyond sim.RULES: the caller's side (the argument's
name, the shape, the bounds) is checked first, so a message is never garbled or a TypeError."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sim
from sim import rule_inputs

X = np.full((3, 2), 0.5)


@pytest.mark.parametrize("call, message", [
    # a format string met NaN ("unsupported format string passed to type.__format__") before
    (lambda: rule_inputs.rate(float("nan"), X, (3, 2), "(T, d_k)", 1.0),
     r"^name: expected the argument's name \(text\), got nan$"),
    # "nan: expected shape <class 'inspect._empty'> = ..." before
    (lambda: rule_inputs.unit_rows(float("nan"), X, (3, 2), "(T, d_k)"), r"^name: expected"),
    (lambda: rule_inputs.decay("", X, (3, 2), "(T, d_k)"), r"^name: expected"),
    (lambda: rule_inputs.rate("beta", X, (3, 2), "(T, d_k)", "abc"),
     r"^high: expected a number in \(0, 1e150\], got 'abc'"),
    (lambda: rule_inputs.rate("beta", X, (3, 2), "(T, d_k)", None), r"^high: expected a number"),
    (lambda: rule_inputs.weights("w", X, np.ones((2, 3)), "(T, L)"),
     r"^shape: expected a tuple of sizes, got an array of shape \(2, 3\)"),
    (lambda: rule_inputs.bounded("u", X, (3, 0), "(T, d_k)"), r"^shape: expected a positive"),
    (lambda: rule_inputs.decay("alpha", X, (2**14, 2**14), "(T, d_k)"),
     r"^shape: the numbers of shape \(16384, 16384\) would be 268,435,456"),
    (lambda: rule_inputs.decay("alpha", X, (3, 2), None), r"^labels: expected the shape"),
    (lambda: rule_inputs.token(X[0], X[0], X[0], np.ones((2, 3)), 2, 0),
     r"^d_k: expected a positive integer"),
    (lambda: rule_inputs.initial_state({}, float("nan"), 2), r"^d_k: expected a positive integer"),
    (lambda: rule_inputs.keep_states(float("nan")), r"^params: expected a dict of keyword"),
    (lambda: rule_inputs.params_for("rwkv7", {}, "alpha", ()), r"^accepted: expected a tuple"),
    (lambda: rule_inputs.params_for("rwkv7", {}, ("alpha",), [[1, "a"]]), r"^required: expected"),
    (lambda: rule_inputs.state_matrix(np.ones((2, 3)), None), r"^rule: expected a rule name"),
    (lambda: rule_inputs.normalized_rows("abc"), r"^K: expected an array of real numbers"),
    (lambda: rule_inputs.normalized_rows(float("nan")), r"^K: expected finite numbers"),
    (lambda: rule_inputs.normalized_rows(np.full((2, 2), 1e200)), r"^K: expected every entry at "
                                                                   r"most 1e150 in size"),
])
def test_the_callers_side_is_refused_by_name(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_a_key_too_long_to_measure_is_reported_so() -> None:
    # its length overflowed to inf (a RuntimeWarning) before; now "above 1e150"
    with pytest.raises(ValueError, match=r"^removal_key: expected unit vectors \(length 1, or 0\), "
                                         r"got length above 1e150 at index 0"):
        rule_inputs.unit_rows("removal_key", np.full((3, 2), 1e200), (3, 2), "(T, d_k)")
    with pytest.raises(ValueError, match=r"got length 1.41421 at index 1"):
        rule_inputs.unit_rows("removal_key", [[0.6, 0.8], [1.0, 1.0]], (2, 2), "(T, d_k)")


def test_good_values_pass_unchanged() -> None:
    np.testing.assert_array_equal(rule_inputs.rate("beta", 0.5, (2,), "(d_k,)", 1.0), [0.5, 0.5])
    np.testing.assert_array_equal(rule_inputs.normalized_rows(np.array([[3.0, 4.0], [0.0, 0.0]])),
                                  [[0.6, 0.8], [0.0, 0.0]])
    assert rule_inputs.keep_states({"keep_states": False}) is False
    rule_inputs.params_for("rwkv7", {"alpha": 0.9, "beta": 0.5}, ("alpha", "beta"), ("alpha",))
    state = sim.init_state("rwkv7", 2, 2)
    assert rule_inputs.state_matrix("rwkv7", state) is state.S
