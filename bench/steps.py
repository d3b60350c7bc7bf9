"""Time one `sim.step` per rule against the floor of a bare rank-1 update, and whole runs.

    .venv/bin/python -m bench.steps [--repeat 7] [--number N]

For d = 16, 64, 128 it prints the median time of one step for each rule and its ratio to the
floor measured in the same run: `S += np.outer(k, v)` on a (d, d) array, the least any rule must
do. Goal at d = 128: no rule above 3× its floor. Then the time of `sim.run` over 4,096 tokens
at d = 64 for each rule (softmax attention, quadratic, included for scale).

BLAS is pinned to one thread (before numpy loads): one token's 128 × 128 product is far too
small to split across threads, waking them costs more than the work (badly so on a busy
machine), and the browser build runs single-threaded anyway. The floor is re-measured beside
each rule so that load changing during the run affects both alike; the minimum over repeats is
printed next to the median as the figure least disturbed by other processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script too
import sim  # noqa: E402


def seconds_per_call(call: Callable[[], Any], number: int, repeat: int) -> tuple[float, float]:
    """(median, minimum) over `repeat` batches of the mean time of one call in `number` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times), min(times)


def token_gates(rule: str, d: int, rng: np.random.Generator) -> dict[str, Any]:
    info = sim.RULE_INFO[rule]
    gates: dict[str, Any] = {}
    if "gamma" in info.gates:
        gates["gamma"] = 0.95
    if info.alpha_shape == "scalar":
        gates["alpha"] = 0.95
    if info.alpha_shape == "channel":
        gates["alpha"] = rng.uniform(0.9, 1.0, d)
    if "beta" in info.gates:
        gates["beta"] = 0.5
    return gates


def bench_steps(d: int, number: int, repeat: int, cache_tokens: int) -> None:
    rng = np.random.default_rng(0)
    q, v = rng.standard_normal(d), rng.standard_normal(d)
    k = sim.l2_normalize(rng.standard_normal(d))
    S = np.zeros((d, d))

    def floor() -> None:
        nonlocal S
        S += np.outer(k, v)

    print(f"\nd = {d}:{'median':>26} {'ratio':>7} {'min':>10} {'ratio':>7} {'floor':>9}")
    worst = 0.0
    for rule in sim.RULES:
        gates = token_gates(rule, d, rng)
        state = sim.init_state(rule, d, d)
        if rule == "softmax":  # a cache of `cache_tokens` tokens, like mid-animation
            for _ in range(cache_tokens):
                state = sim.step(rule, state, q, k, v).state
        else:
            state = sim.step(rule, state, q, k, v, **gates).state

        def one_step(state: sim.State = state, rule: str = rule,
                     gates: dict[str, Any] = gates) -> None:
            sim.step(rule, state, q, k, v, **gates)

        base, base_min = seconds_per_call(floor, number, repeat)
        seconds, seconds_min = seconds_per_call(one_step, number, repeat)
        ratio = seconds / base
        worst = max(worst, ratio) if rule != "softmax" else worst
        note = f"  (cache of {cache_tokens} tokens)" if rule == "softmax" else ""
        print(f"  {rule:<15} {seconds * 1e6:9.2f} µs {ratio:6.2f}x {seconds_min * 1e6:7.2f} µs "
              f"{seconds_min / base_min:6.2f}x {base * 1e6:6.2f} µs{note}")
    print(f"  worst recurrent rule (median): {worst:.2f}x its floor")


def bench_runs(T: int, d: int) -> None:
    rng = np.random.default_rng(1)
    q, v = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    k = sim.l2_normalize(rng.standard_normal((T, d)))
    print(f"\nsim.run over T = {T} tokens at d = {d}:")
    for rule in sim.RULES:
        info = sim.RULE_INFO[rule]
        params: dict[str, Any] = {}
        if "gamma" in info.gates:
            params["gamma"] = 0.95
        if info.alpha_shape == "scalar":
            params["alpha"] = rng.uniform(0.9, 1.0, T)
        if info.alpha_shape == "channel":
            params["alpha"] = rng.uniform(0.9, 1.0, (T, d))
        if "beta" in info.gates:
            params["beta"] = rng.uniform(0.0, 1.0, T)
        start = time.perf_counter()
        sim.run(rule, q, k, v, **params)
        keep = time.perf_counter() - start
        start = time.perf_counter()
        sim.run(rule, q, k, v, keep_states=False, **params)
        lean = time.perf_counter() - start
        print(f"  {rule:<15} {keep * 1e3:8.1f} ms   keep_states=False {lean * 1e3:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--cache-tokens", type=int, default=64)
    args = parser.parse_args()
    for d in (16, 64, 128):
        bench_steps(d, args.number, args.repeat, args.cache_tokens)
    bench_runs(4096, 64)


if __name__ == "__main__":
    main()
