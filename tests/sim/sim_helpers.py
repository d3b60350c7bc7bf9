"""Random inputs and gates for every rule, shared by the tests."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import numpy as np
import pytest

import sim
from sim.__main__ import main

GATED = {"retnet", "mamba2", "gla", "gated_deltanet", "kda"}


def make_inputs(T: int, d_k: int, d_v: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((T, d_k))
    k = sim.l2_normalize(rng.standard_normal((T, d_k)))  # unit keys: delta rules stay bounded
    v = rng.standard_normal((T, d_v))
    return q, k, v


def make_params(rule: str, T: int, d_k: int, seed: int, low: float = 0.2,
                beta_high: float = 2.0) -> dict[str, Any]:
    """Gates of the right shape for `rule`: decays in [low, 1], β in [0, beta_high]."""
    rng = np.random.default_rng(seed + 1000)
    info = sim.RULE_INFO[rule]
    params: dict[str, Any] = {}
    if "gamma" in info.gates:
        params["gamma"] = float(rng.uniform(low, 1.0))
    if info.alpha_shape == "scalar":
        params["alpha"] = rng.uniform(low, 1.0, T)
    if info.alpha_shape == "channel":
        params["alpha"] = rng.uniform(low, 1.0, (T, d_k))
    if "beta" in info.gates:
        params["beta"] = rng.uniform(0.0, beta_high, T)
    return params


def token_gates(params: dict[str, Any], t: int) -> dict[str, Any]:
    """The gates of token t, as `sim.step` takes them."""
    return {name: (value if np.ndim(value) == 0 or isinstance(value, str) else value[t])
            for name, value in params.items()}


def step_through(rule: str, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                 params: dict[str, Any]) -> list[sim.Step]:
    state = sim.init_state(rule, q.shape[1], v.shape[1])
    steps = []
    for t in range(q.shape[0]):
        s = sim.step(rule, state, q[t], k[t], v[t], **token_gates(params, t))
        steps.append(s)
        state = s.state
    return steps


class Run(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def sim_cli(capsys):
    """`python -m sim ARGS` in-process: its exit status, stdout and stderr (a test module takes
    it as ``sim_cli = sim_helpers.sim_cli``)."""
    def run(*args: str) -> Run:
        capsys.readouterr()  # only this call's output
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse refuses with SystemExit(2)
            code = exit_.code
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)  # as the interpreter would
                code = 1
        captured = capsys.readouterr()
        return Run(0 if code is None else code, captured.out, captured.err)
    return run
