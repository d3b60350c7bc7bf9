"""Seeded, deterministic token streams for the pages and the tests.

Every generator takes a `seed` and draws from `numpy.random.default_rng(seed)`, so the same
arguments give the same stream in CPython and in Pyodide. Keys are unit-norm unless said
otherwise (the delta rules expect normalised keys); values are standard Gaussian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import (
    MAX_BASIS,
    MAX_NUMBERS,
    check_budget,
    check_float,
    check_nonnegative_int,
    check_positive_int,
    check_seed,
)

Array = np.ndarray


@dataclass(frozen=True, eq=False)
class Stream:
    """A token stream: q, k (T, d_k), v (T, d_v).

    labels:      one short text per token for the page ("write k2", "query k2"), or None.
    description: one sentence on what the stream shows.
    targets:     (T, d_v) what an exact memory would return for each query, where meaningful.
    """

    q: Array
    k: Array
    v: Array
    labels: tuple[str, ...] | None = None
    description: str = ""
    targets: Array | None = None

    @property
    def T(self) -> int:
        return self.q.shape[0]


def _seed(seed: int) -> int:
    return check_seed("seed", seed)


def _sizes(T: int, d_k: int, d_v: int, basis: bool = False) -> tuple[int, int, int]:
    """T, d_k, d_v of a stream: positive, T·(2 d_k + d_v) numbers at most 2^27, and d_k at
    most 2,048 where the keys come from a d_k × d_k orthonormal basis (a QR, O(d_k³))."""
    T, d_k, d_v = (check_positive_int(n, x, MAX_NUMBERS)
                   for n, x in (("T", T), ("d_k", d_k), ("d_v", d_v)))
    check_budget("T, d_k, d_v", T * (2 * d_k + d_v), MAX_NUMBERS,
                 f"the stream's numbers (T · (2 d_k + d_v), T = {T:,})")
    if basis:
        check_positive_int("d_k", d_k, MAX_BASIS)
    return T, d_k, d_v


def orthonormal_basis(d: int, rng: np.random.Generator) -> Array:
    """(d, d) random orthonormal rows, from the QR decomposition of a Gaussian matrix.
    d from 1 to 2,048 (the QR is O(d³)); rng a numpy Generator."""
    d = check_positive_int("d", d, MAX_BASIS)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got "
                         f"{type(rng).__name__}")
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return (Q * np.sign(np.diag(R))).T  # sign fix: a unique, uniformly random basis


def gaussian(T: int, d_k: int, d_v: int, seed: int = 0) -> Stream:
    """q, k, v all standard Gaussian; keys NOT normalised (call sim.l2_normalize for delta rules)."""
    T, d_k, d_v = _sizes(T, d_k, d_v)
    rng = np.random.default_rng(_seed(seed))
    q = rng.standard_normal((T, d_k))
    k = rng.standard_normal((T, d_k))
    v = rng.standard_normal((T, d_v))
    return Stream(q, k, v, description="Random Gaussian queries, keys and values.")


def orthonormal(T: int, d_k: int, d_v: int, seed: int = 0) -> Stream:
    """Keys cycle through one orthonormal basis: token t uses basis row t mod d_k, so keys
    repeat after d_k tokens. Each token queries its own key (q_t = k_t)."""
    T, d_k, d_v = _sizes(T, d_k, d_v, basis=True)
    rng = np.random.default_rng(_seed(seed))
    basis = orthonormal_basis(d_k, rng)  # (d_k, d_k)
    index = np.arange(T) % d_k
    k = basis[index]  # (T, d_k)
    v = rng.standard_normal((T, d_v))
    labels = tuple(f"k{i + 1}" for i in index)
    return Stream(k.copy(), k, v, labels,
                  f"Orthonormal keys; after {d_k} tokens the keys repeat.")


def _distinct_unit_keys(n: int, d_k: int, rng: np.random.Generator) -> np.ndarray:
    """n unit keys (n, d_k): orthonormal while n ≤ d_k, random unit vectors beyond."""
    if n <= d_k:
        return orthonormal_basis(d_k, rng)[:n]
    keys = rng.standard_normal((n, d_k))
    return keys / np.linalg.norm(keys, axis=1, keepdims=True)


def vocabulary(T: int, d_k: int, d_v: int, vocab_size: int = 4, seed: int = 0) -> Stream:
    """Keys drawn with repeats from a small vocabulary of unit keys (orthonormal when
    vocab_size ≤ d_k, else random unit vectors); each word keeps one value; q_t = k_t."""
    T, d_k, d_v = _sizes(T, d_k, d_v, basis=True)
    vocab_size = check_positive_int("vocab_size", vocab_size, MAX_NUMBERS)
    check_budget("vocab_size, d_k", vocab_size * (d_k + d_v), MAX_NUMBERS, "the words' numbers")
    rng = np.random.default_rng(_seed(seed))
    words = _distinct_unit_keys(vocab_size, d_k, rng)  # (vocab_size, d_k)
    meanings = rng.standard_normal((vocab_size, d_v))  # one value per word
    index = rng.integers(0, vocab_size, size=T)
    k = words[index]
    return Stream(k.copy(), k, meanings[index].copy(), tuple(f"w{i + 1}" for i in index),
                  f"Keys from a vocabulary of {vocab_size} words, repeating.",
                  targets=meanings[index].copy())


def associative_recall(n_pairs: int, d_k: int, d_v: int, seed: int = 0) -> Stream:
    """T = 2·n_pairs tokens: first write pair i (key k_i, value v_i, q = k_i) for every i, then
    query every key in order (q = k_i, with k = 0 and v = 0 so a query writes nothing; decays
    still apply). Keys are orthonormal while n_pairs ≤ d_k, random unit vectors beyond.
    `targets` holds v_i at the query tokens (and at the write tokens)."""
    n = check_positive_int("n_pairs", n_pairs, MAX_NUMBERS)
    _, d_k, d_v = _sizes(2 * n, d_k, d_v)
    if n <= d_k:  # the keys are rows of a d_k × d_k orthonormal basis
        check_positive_int("d_k", d_k, MAX_BASIS)
    rng = np.random.default_rng(_seed(seed))
    keys = _distinct_unit_keys(n, d_k, rng)  # (n, d_k)
    values = rng.standard_normal((n, d_v))
    q = np.concatenate((keys, keys))
    k = np.concatenate((keys, np.zeros((n, d_k))))
    v = np.concatenate((values, np.zeros((n, d_v))))
    labels = tuple(f"write k{i + 1}" for i in range(n)) + tuple(f"query k{i + 1}" for i in range(n))
    return Stream(q, k, v, labels, f"Write {n} key→value pairs, then query every key.",
                  targets=np.concatenate((values, values)))


def overwrite(T: int = 12, d_k: int = 4, d_v: int = 4, seed: int = 0, key_index: int = 0,
              every: int = 3) -> Stream:
    """One key rewritten with new values among other orthogonal keys.

    Keys come from one orthonormal basis. Tokens 0, every, 2·every, ... write basis key
    `key_index` with a fresh Gaussian value each time; the other tokens cycle through the other
    basis keys. Every token queries the rewritten key, and `targets[t]` is the latest value
    written under it by token t: what the delta rule with β = 1 returns, while linear
    attention returns the sum of all of them.
    """
    T, d_k, d_v = _sizes(T, d_k, d_v, basis=True)
    if d_k < 2:
        raise ValueError(f"d_k: expected at least 2 (one rewritten key and others), got {d_k}")
    every = check_positive_int("every", every, MAX_NUMBERS)
    key_index = check_nonnegative_int("key_index", key_index)
    if key_index >= d_k:
        raise ValueError(f"key_index: expected an index in 0..{d_k - 1}, got {key_index}")
    rng = np.random.default_rng(_seed(seed))
    basis = orthonormal_basis(d_k, rng)
    others = [i for i in range(d_k) if i != key_index]
    rewrite = np.arange(T) % every == 0
    index = np.empty(T, dtype=int)
    index[rewrite] = key_index
    index[~rewrite] = [others[j % len(others)] for j in range(int((~rewrite).sum()))]
    k = basis[index]
    v = rng.standard_normal((T, d_v))
    latest = np.maximum.accumulate(np.where(rewrite, np.arange(T), 0))  # last rewrite so far
    q = np.repeat(basis[key_index][None, :], T, axis=0)
    labels = tuple(f"{'rewrite' if r else 'write'} k{i + 1}" for r, i in zip(rewrite, index))
    return Stream(q, k, v, labels,
                  f"Key k{key_index + 1} is rewritten every {every} tokens; every token queries it.",
                  targets=v[latest])


def worked_example() -> Stream:
    """The lesson's example: keys (1, 0), (1, 1); values (2, 0), (0, 4); query (1, 2) at both
    tokens. Linear attention with normalize=True gives (2, 0) then (0.5, 3):
    (1·(2, 0) + 3·(0, 4)) / 4 = (0.5, 3), the same as S = [[2, 4], [0, 4]], z = (2, 1),
    qᵀS = (2, 12), q·z = 4."""
    q = np.array([[1.0, 2.0], [1.0, 2.0]])
    k = np.array([[1.0, 0.0], [1.0, 1.0]])
    v = np.array([[2.0, 0.0], [0.0, 4.0]])
    return Stream(q, k, v, ("k1 → v1", "k2 → v2"),
                  "Two keys, two values, one query: divide by the total score.",
                  targets=np.array([[2.0, 0.0], [0.5, 3.0]]))


# Spread of data-dependent gates around their chosen value: wide enough that the per-token
# variation shows, narrow enough that the chosen value stays the typical gate.
ALPHA_SPREAD = 0.1
BETA_SPREAD = 0.25
ALPHA_FLOOR = 0.01  # decay gates stay in (0, 1]
BETA_MAX = 2.0  # write strengths stay in [0, 2]


def draw_gates(T: int, d_k: int, alpha: float, beta: float, seed: int = 0) -> dict[str, Array]:
    """Per-token gates drawn around chosen values from the seed, kept inside their ranges.

    α_t = clip(α + 0.1 ε, 0.01, 1) and β_t = clip(β + 0.25 ε, 0, 2), ε standard normal. Returns
    alpha (T,) for scalar-gated rules, alpha_channel (T, d_k) for per-channel decay (GLA, KDA),
    beta (T,). Drawn from a generator of its own ([seed, 7]), so the token streams of the same
    seed are unchanged. alpha in (0, 1] and beta in [0, 2] (NaN and text are refused by name).
    """
    T, d_k = check_positive_int("T", T, MAX_NUMBERS), check_positive_int("d_k", d_k, MAX_NUMBERS)
    check_budget("T, d_k", T * (d_k + 2), MAX_NUMBERS, f"the gates' numbers (T · (d_k + 2), T = {T:,})")
    alpha = check_float("alpha", alpha, 0.0, 1.0, low_open=True, accepted="(0, 1]")
    beta = check_float("beta", beta, 0.0, BETA_MAX, low_open=False, accepted="[0, 2]")
    rng = np.random.default_rng([_seed(seed), 7])
    return {
        "alpha": np.clip(alpha + ALPHA_SPREAD * rng.standard_normal(T), ALPHA_FLOOR, 1.0),
        "alpha_channel": np.clip(alpha + ALPHA_SPREAD * rng.standard_normal((T, d_k)),
                                 ALPHA_FLOOR, 1.0),
        "beta": np.clip(beta + BETA_SPREAD * rng.standard_normal(T), 0.0, BETA_MAX),
    }
