"""Input checks shared by every public entry point of `sim`.

Every check raises `ValueError` whose message names the argument, says what was given and what
is accepted, e.g. ``alpha: expected every value in (0, 1], got 1.5 at index 3``. A run whose
state blows up raises `DivergenceError` (a `ValueError`) naming the token where it happened.

The checks are split in two speeds: the array checks here are used once per call of `run`
(vectorised over all T tokens); `step` uses the cheap per-token checks at the bottom so that one
animation frame stays close to the cost of the arithmetic itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

Array = np.ndarray

# ‖S‖_F above this counts as divergence: far beyond any meaningful value, and still inside
# float64's range once squared (1e300 < 1.8e308), which is what the cheap check computes.
DIVERGENCE_NORM = 1e150
# Every entry of q, k, v at most this in size, in `run` and `step` alike: products of two such
# numbers (1e300) and of one with a bounded state stay finite, so every output is finite.
MAX_INPUT = 1e150


class DivergenceError(ValueError):
    """A computation overflowed at token `token` (0-based): the state became non-finite or
    ‖S‖_F exceeded 1e150, a softmax score or a normalised read-out left float64's range."""

    def __init__(self, message: str, token: int) -> None:
        super().__init__(message)
        self.token = token


def describe(x: Any) -> str:
    """A short description of a value for error messages: shape for arrays, repr otherwise
    (strings cut before repr, huge integers by their size: never a long or multi-line text)."""
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        try:
            return f"a {type(x).__name__} of shape {np.shape(x)}"
        except (ValueError, RecursionError):
            return f"a ragged {type(x).__name__}"
    if isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > 128:
        return f"an integer of about {int(x.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(x, str) and len(x) > 60:
        x = x[:60]
    if isinstance(x, dict):
        return f"a dict of {len(x)} items"
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001 — a broken __repr__ must not replace the real message
        text = f"a {type(x).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def check_choice(name: str, value: Any, accepted: Iterable[str]) -> str:
    """`value` must be one of `accepted` (strings)."""
    accepted = tuple(accepted)
    if not isinstance(value, str) or value not in accepted:
        raise ValueError(f"{name}: unknown value {describe(value)}; accepted: {', '.join(accepted)}")
    return value


def check_positive_int(name: str, value: Any) -> int:
    """A count or size: an int (not bool) ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer (1, 2, ...), got {describe(value)}")
    return int(value)


def check_nonnegative_int(name: str, value: Any) -> int:
    """An index or offset: an int (not bool) ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}: expected an integer ≥ 0, got {describe(value)}")
    return int(value)


def check_float(name: str, value: Any, low: float, high: float, *, low_open: bool,
                accepted: str) -> float:
    """A finite real number within [low, high] (or (low, high] when `low_open`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number in {accepted}, got {describe(value)}")
    x = float(value)
    below = x <= low if low_open else x < low
    if not math.isfinite(x) or below or x > high:
        raise ValueError(f"{name}: expected a number in {accepted}, got {x!r}")
    return x


def as_float_array(name: str, x: Any) -> Array:
    """Convert to a float64 array or explain why it cannot be one."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an array of real numbers, got {describe(x)}") from None
    return a


def check_finite(name: str, a: Array) -> Array:
    """Reject NaN and ±inf, pointing at the first offending entry."""
    bad = ~np.isfinite(a)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise ValueError(f"{name}: expected finite numbers, got {float(a[index])!r} at index {where}")
    return a


def check_array(name: str, x: Any, shape: tuple[int | None, ...], labels: str) -> Array:
    """A finite float64 array of the given shape (None matches any positive size).

    `labels` spells the expected shape in symbols for the message, e.g. "(T, d_k)".
    """
    a = as_float_array(name, x)
    ok = a.ndim == len(shape) and all(
        (want is None and got > 0) or got == want for got, want in zip(a.shape, shape)
    )
    if not ok:
        wanted = tuple("any" if s is None else s for s in shape)
        raise ValueError(f"{name}: expected shape {labels} = {wanted}, got shape {a.shape}")
    return check_finite(name, a)


def check_gate_array(name: str, x: Any, shape: tuple[int, ...], labels: str, *,
                     low: float, high: float, low_open: bool, accepted: str) -> Array:
    """A gate per token (and per channel): a float broadcasts to `shape`; values in range."""
    a = as_float_array(name, x)
    if a.ndim == 0:
        a = np.full(shape, float(a))
    elif a.shape != shape:
        raise ValueError(
            f"{name}: expected a float or an array of shape {labels} = {shape}, got shape {a.shape}"
        )
    below = a <= low if low_open else a < low
    bad = below | (a > high) | ~np.isfinite(a)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise ValueError(f"{name}: expected every value in {accepted}, got {float(a[index])!r} at index {where}")
    return a


def check_unit_interval_gate(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """Decay gates α, γ: every value in (0, 1]."""
    return check_gate_array(name, x, shape, labels, low=0.0, high=1.0, low_open=True,
                            accepted="(0, 1]")


def check_beta(name: str, x: Any, shape: tuple[int, ...], labels: str) -> Array:
    """Write strength β: every value in [0, 2]."""
    return check_gate_array(name, x, shape, labels, low=0.0, high=2.0, low_open=False,
                            accepted="[0, 2]")


def check_params(rule: str, params: dict[str, Any], accepted: Iterable[str],
                 required: Iterable[str] = ()) -> None:
    """Unknown keyword arguments are mistakes (a gate passed to the wrong rule): name them."""
    accepted = tuple(accepted)
    for key in params:
        if key not in accepted:
            allowed = ", ".join(accepted) if accepted else "none"
            raise ValueError(f"{key}: not a parameter of rule {rule!r}; accepted: {allowed}")
    for key in required:
        if key not in params or params[key] is None:
            raise ValueError(f"{key}: rule {rule!r} needs {key} (accepted: {', '.join(accepted)})")


# ---------------------------------------------------------------------------------------------
# Cheap per-token checks for `step` (one animation frame): a few Python comparisons and dots.

def step_vector(name: str, x: Any, length: int) -> Array:
    """One token's q, k or v: float64 of shape (length,). Finiteness is checked by the caller."""
    a = x if type(x) is np.ndarray and x.dtype == np.float64 else as_float_array(name, x)
    if a.shape != (length,):
        raise ValueError(f"{name}: expected shape ({length},), got shape {a.shape}")
    return a


def _too_large(token: int, vectors: dict[str, Array]) -> ValueError:
    """The error for the first entry above MAX_INPUT at `token` (vectors in order q, k, v)."""
    for name, a in vectors.items():
        size = np.abs(a)
        if size.max() > MAX_INPUT:
            j = int(np.argmax(size > MAX_INPUT))
            return ValueError(
                f"{name}: expected every entry at most 1e150 in size, got {float(a[j]):.3g} at "
                f"token t={token}, index {j}; rescale q, k, v (larger inputs overflow float64)")
    return ValueError(f"q, k, v: an entry above 1e150 in size at token t={token}")


def step_finite(q: Array, k: Array, v: Array, token: int = 0) -> None:
    """One token's q, k, v: finite, every entry at most MAX_INPUT in size (the rule `run`
    applies to every token). Fast path: three dot products; their sum ≤ 1e299 proves every
    entry < 1e150 and NaN fails the test. Call inside np.errstate(over="ignore")."""
    if float(q @ q) + float(k @ k) + float(v @ v) <= 1e299:
        return
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_finite(name, a)
    if max(np.abs(q).max(), np.abs(k).max(), np.abs(v).max()) > MAX_INPUT:
        raise _too_large(token, {"q": q, "k": k, "v": v})


def check_input_sizes(Q: Array, K: Array, V: Array) -> None:
    """`run`'s form of `step_finite`'s size rule (exact: a maximum, no rounding), so a run and
    its steps refuse the same token: Q, K (T, d_k), V (T, d_v), already finite."""
    bad = ((np.abs(Q).max(axis=1) > MAX_INPUT) | (np.abs(K).max(axis=1) > MAX_INPUT)
           | (np.abs(V).max(axis=1) > MAX_INPUT))
    if bad.any():
        t = int(np.argmax(bad))
        raise _too_large(t, {"q": Q[t], "k": K[t], "v": V[t]})


def check_start(name: str, a: Array, limit: float) -> Array:
    """An initial state or z: already finite; ‖a‖ at most `limit` (state) so that the first
    write cannot overflow."""
    with np.errstate(over="ignore"):
        norm = float(np.sqrt(np.sum(np.square(a))))
    if not norm <= limit:
        raise ValueError(f"{name}: expected a norm at most {limit:.0e}, got {norm:.3g} "
                         "(a larger start overflows float64)".replace("e+", "e"))
    return a


def step_scalar_gate(name: str, x: Any, low_open: bool, high: float) -> float:
    """One token's scalar gate: a real number in (0, 1] (α, γ) or [0, 2] (β)."""
    try:
        g = float(x)
    except (TypeError, ValueError):
        g = math.nan
    ok = (0.0 < g if low_open else 0.0 <= g) and g <= high
    if not ok or isinstance(x, bool):
        accepted = "(0, 1]" if low_open else f"[0, {high:g}]"
        raise ValueError(f"{name}: expected a number in {accepted}, got {describe(x)}")
    return g


def step_channel_gate(name: str, x: Any, length: int) -> float | Array:
    """One token's decay α: a float, or an array of shape (d_k,) with values in (0, 1]."""
    if isinstance(x, (float, int, np.floating, np.integer)) and not isinstance(x, bool):
        return step_scalar_gate(name, x, True, 1.0)
    a = step_vector(name, x, length)
    lo, hi = a.min(), a.max()  # NaN makes both comparisons false
    if not (lo > 0.0 and hi <= 1.0):
        check_unit_interval_gate(name, a, (length,), "(d_k,)")
    return a


def state_norm_ok(S: Array) -> bool:
    """True while ‖S‖_F is finite and at most 1e150: one dot product, NaN fails the test."""
    flat = S.reshape(-1)
    return bool(flat @ flat <= DIVERGENCE_NORM * DIVERGENCE_NORM)


def divergence(token: int, S: Array, k: Array | None = None, beta: float | None = None
               ) -> DivergenceError:
    """Build the error for a state that blew up at `token`, with the likely cause."""
    with np.errstate(over="ignore", invalid="ignore"):
        norm = float(np.sqrt(np.sum(np.square(S))))
    message = f"run diverged at token t={token}: ‖S‖ = {norm:.3g}"
    if beta is not None and k is not None:
        k2 = float(k @ k)
        message += (
            f" (β={beta:g} with unnormalised keys overshoots: β‖k‖² = {beta * k2:.3g} > 2 makes "
            "each write grow the state; normalise keys (sim.l2_normalize) or keep β ≤ 1)"
        )
    else:
        message += " (inputs too large for float64; rescale q, k, v)"
    return DivergenceError(message, token)
