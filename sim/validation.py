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
# What one call may do, refused before any work (a ValueError naming the argument, never a
# MemoryError or a run of minutes). Numbers one call allocates: 2^27 float64 = 1 GiB, room for
# bench/steps.py's kept states (4,096 tokens × 128 × 128 = 2^26).
MAX_NUMBERS = 2**27
# Multiply-adds one call may do: about a few seconds of numpy on one core.
MAX_WORK = 2**32
# Tokens (or seeds, or sizes) one call walks through in a Python loop: a few seconds at most.
MAX_TOKENS = 2**20
# A d × d orthonormal basis comes from a QR decomposition, O(d³): d up to 2,048 (about a second).
MAX_BASIS = 2**11
# Seeds: numpy's generators take any integer ≥ 0; int64 is more than any page needs.
MAX_SEED = 2**63 - 1


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


def check_positive_int(name: str, value: Any, high: int | None = None) -> int:
    """A count or size: an int (not bool) ≥ 1, and at most `high` when given."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        upto = "" if high is None else f" up to {high:,}"
        raise ValueError(f"{name}: expected a positive integer (1, 2, ...){upto}, got "
                         f"{describe(value)}")
    if high is not None and value > high:
        raise ValueError(f"{name}: {describe(int(value))} is too large; accepted: 1 to {high:,}")
    return int(value)


def check_nonnegative_int(name: str, value: Any, high: int | None = None) -> int:
    """An index or offset: an int (not bool) ≥ 0, and at most `high` when given."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}: expected an integer ≥ 0, got {describe(value)}")
    if high is not None and value > high:
        raise ValueError(f"{name}: {describe(int(value))} is too large; accepted: 0 to {high:,}")
    return int(value)


def check_seed(name: str, value: Any) -> int:
    """A seed for numpy's default_rng: an integer from 0 to 2^63 − 1."""
    return check_nonnegative_int(name, value, MAX_SEED)


def check_budget(names: str, amount: int, limit: int, what: str) -> None:
    """Refuse, before any work, a call whose size `amount` (numbers it would hold, or
    multiply-adds it would do, as `what` says) is above `limit`. `names` are the arguments that
    set it, e.g. ``d_k, d_v: the state would hold 10^12 numbers; accepted: at most 2^27``."""
    if amount > limit:
        raise ValueError(f"{names}: {what} would be {amount:,}; accepted: at most {limit:,}")


def check_float(name: str, value: Any, low: float, high: float, *, low_open: bool,
                accepted: str) -> float:
    """A finite real number within [low, high] (or (low, high] when `low_open`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number in {accepted}, got {describe(value)}")
    try:
        x = float(value)
    except OverflowError:  # an int past float64's range
        raise ValueError(f"{name}: expected a number in {accepted}, got {describe(value)}") from None
    below = x <= low if low_open else x < low
    if not math.isfinite(x) or below or x > high:
        raise ValueError(f"{name}: expected a number in {accepted}, got {x!r}")
    return x


def check_state_dims(d_k: Any, d_v: Any) -> tuple[int, int]:
    """d_k, d_v of a d_k × d_v state: positive integers with d_k·d_v ≤ MAX_NUMBERS."""
    d_k = check_positive_int("d_k", d_k, MAX_NUMBERS)
    d_v = check_positive_int("d_v", d_v, MAX_NUMBERS)
    check_budget("d_k, d_v", d_k * d_v, MAX_NUMBERS, f"a {d_k:,} × {d_v:,} state's numbers")
    return d_k, d_v


def check_run_size(T: int, d_k: int, d_v: int, keep_states: bool, softmax: bool = False, *,
                   work: int | None = None, kept: int | None = None,
                   names: str = "q, k, v") -> None:
    """A run over T tokens, checked before any work: T ≤ MAX_TOKENS tokens (a Python loop),
    its multiply-adds ≤ MAX_WORK (T·d_k·d_v; softmax T²·(d_k + d_v)/2) and what it keeps
    ≤ MAX_NUMBERS (the (T, d_k, d_v) states; softmax's (T, T) weights).

    A rule that does more per token or keeps more passes its own `work` or `kept` (e.g.
    DeltaProduct's T·n_h·d_k·d_v multiply-adds, log-linear's T·(L + 1)·d_k·d_v kept levels);
    `names` are the arguments that set the work (Mamba's u, delta, A)."""
    check_budget(names.split(",")[0], T, MAX_TOKENS, "the number of tokens T")
    if work is None:
        work = T * (T + 1) // 2 * (d_k + d_v) if softmax else T * d_k * d_v
    check_budget(names, work, MAX_WORK, f"the multiply-adds of a run of T = {T:,} tokens")
    if keep_states:
        if kept is None:
            kept = T * T if softmax else T * d_k * d_v
        check_budget("keep_states", kept, MAX_NUMBERS,
                     f"the numbers kept over T = {T:,} tokens (pass keep_states=False to keep "
                     "only the final state)")


_NOT_REAL = {"c": "complex numbers", "b": "booleans", "U": "text", "S": "bytes",
             "V": "raw records", "M": "dates", "m": "time spans"}


def as_float_array(name: str, x: Any) -> Array:
    """Convert to a float64 array or explain why it cannot be one.

    Only real numbers are accepted: ints, floats (and arrays, lists of them). Complex values
    (which numpy would cast to their real part with only a warning), booleans, text ("0.5"
    would convert), bytes and None are refused by name. Infinities and NaN pass here; the
    callers that need finite numbers check them (`check_finite`)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x
    if isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name}: expected an array of real numbers, got {describe(x)}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ValueError(f"{name}: expected an array of real numbers, got {describe(x)}") from None
    kind = a.dtype.kind
    if kind in _NOT_REAL:
        raise ValueError(f"{name}: expected an array of real numbers, got {_NOT_REAL[kind]} "
                         f"({describe(x)})")
    if kind == "O":
        for item in a.flat:  # a list mixing numbers with other things, or ints past float64
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, float, np.integer,
                                                                           np.floating)):
                raise ValueError(f"{name}: expected an array of real numbers, got "
                                 f"{describe(item)} in {describe(x)}")
    try:
        with np.errstate(over="raise", invalid="raise"):
            return a.astype(np.float64)
    except (TypeError, ValueError, OverflowError, FloatingPointError):
        raise ValueError(f"{name}: expected an array of real numbers within float64's range "
                         f"(|x| < 1.8e308), got {describe(x)}") from None


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
    """One token's scalar gate: a real number in (0, 1] (α, γ) or [0, 2] (β). Text ("0.5"),
    booleans and complex numbers are refused (float() would take the first and numpy's
    complex scalars would lose their imaginary part with only a warning)."""
    if type(x) is float:  # the usual case, one comparison chain
        g = x
    elif isinstance(x, (int, np.integer, np.floating)) and not isinstance(x, bool):
        g = float(x)
    elif isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        g = float(x)
    else:
        g = math.nan
    ok = (0.0 < g if low_open else 0.0 <= g) and g <= high
    if not ok:
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
