""""Your turn" exercises: small integer numbers from a seed, the answer, the usual wrong
answers with what each one did, and the working step by step.

    ex = running_sum(0)     # the lesson's own: a third token joins the worked example
    ex.answer               # (1.5, 2.5)
    ex.mistakes             # (((2.0, 3.333…), "left z alone: …"), …)

One generator per lesson page (GENERATORS, by the page's slug). Every generator is a pure
function of its seed (numpy's default_rng, the same in CPython and Pyodide) and redraws until
the answer and every named mistake differ, so a wrong answer that matches a mistake names
exactly one. Conventions are the lesson's (see sim.rules): S is d_k × d_v, a token writes
k vᵀ, a query reads Sᵀq. Text is plain Unicode; the page escapes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .scenarios import Stream
from .validation import as_float_array, check_positive_int, check_seed, describe

Array = np.ndarray
KIND_VECTOR, KIND_NUMBER, KIND_BYTES = "vector", "number", "bytes"
MAX_DRAWS = 1000  # redraws until the numbers are friendly (a few are enough in practice)
BF16, FP32 = 2, 4  # bytes per number: the hybrid page's defaults (KV bf16, state fp32)
BLOCK_TOKENS = 16  # the hybrid page's default KV block


@dataclass(frozen=True)
class Exercise:
    """One question with one answer.

    kind: "vector" (answer has one entry per component), "number" (one entry) or "bytes" (one
    entry, a size in bytes; typed with a unit). tolerance: absolute per entry for vectors and
    numbers, relative for bytes. mistakes: (wrong answer, what it did, in words).
    """

    page: str
    seed: int
    prompt: str
    answer: tuple[float, ...]
    kind: str = KIND_VECTOR
    tolerance: float = 0.01
    unit: str = ""
    mistakes: tuple[tuple[tuple[float, ...], str], ...] = ()
    steps: tuple[str, ...] = ()
    given: dict[str, Any] = field(default_factory=dict)

    @property
    def answer_text(self) -> str:
        if self.kind == KIND_BYTES:
            return f"{number_text(self.answer[0])} bytes"
        if self.kind == KIND_NUMBER:
            return number_text(self.answer[0])
        return vec(self.answer)


def number_text(x: float) -> str:
    """Integers without a decimal point, others to at most 4 decimals (10/3 → 3.3333); NaN and
    ±inf as "nan", "inf", "-inf"."""
    if isinstance(x, (str, bytes, complex, np.complexfloating)) or x is None:
        raise ValueError(f"x: expected a real number, got {describe(x)}")
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"x: expected a real number, got {describe(x)}") from None
    if not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}" if abs(x) >= 10_000 else str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


def vec(a) -> str:
    """A vector as "(1, 0.5, -2)"; a: real numbers."""
    return "(" + ", ".join(number_text(x) for x in np.ravel(_real("a", a))) + ")"


def _real(name: str, a: Any) -> Array:
    try:
        return as_float_array(name, a)
    except ValueError as error:
        raise ValueError(str(error)) from None


def mat(m) -> str:
    if np.ndim(m) != 2 or isinstance(m, (str, bytes)):
        raise ValueError(f"m: expected a matrix (rows of numbers), got {describe(m)}")
    m = _real("m", m)
    return "[" + ", ".join("[" + ", ".join(number_text(x) for x in row) + "]" for row in m) + "]"


def _tuple(a) -> tuple[float, ...]:
    return tuple(float(x) for x in np.ravel(a))


def _distinct(*answers, atol: float = 0.05, rtol: float = 0.0) -> bool:
    """No two answers within the tolerances of each other in every entry."""
    arrs = [np.asarray(a, dtype=float) for a in answers]
    return all(not np.allclose(a, b, atol=atol, rtol=rtol)
               for i, a in enumerate(arrs) for b in arrs[i + 1:])


def _draw(seed: int, make: Callable[[np.random.Generator], Exercise | None]) -> Exercise:
    rng = np.random.default_rng(check_seed("seed", seed))
    for _ in range(MAX_DRAWS):
        ex = make(rng)
        if ex is not None:
            return ex
    raise RuntimeError(f"no friendly numbers for seed {seed}")  # pragma: no cover


# Page 1: running sum ------------------------------------------------------------------------

def _running_sum_from(seed: int, k: Array, v: Array, q: Array) -> Exercise | None:
    """Two tokens fold into S and z, a third joins, q reads (identity φ, divided)."""
    S2, z2 = k[0:1].T @ v[0:1] + k[1:2].T @ v[1:2], k[0] + k[1]
    S3, z3 = S2 + np.outer(k[2], v[2]), z2 + k[2]
    read, div, div_old = q @ S3, float(q @ z3), float(q @ z2)
    if div <= 0 or div_old <= 0:
        return None
    answer = read / div
    transposed = q @ (S2 + np.outer(v[2], k[2])) / div
    mistakes = ((read / div_old, f"left z alone: divided by q·z of the two earlier tokens "
                                 f"({number_text(div_old)}) instead of q·z after the third "
                                 f"({number_text(div)})"),
                (transposed, "added v kᵀ in place of k vᵀ: the new token's write is transposed "
                             "(its key picks the row, its value fills it)"),
                (read, f"skipped the divide: qᵀS = {vec(read)} still has to be divided by "
                       f"q·z = {number_text(div)}"))
    if not _distinct(answer, *(m for m, _ in mistakes)):
        return None
    ks, vs = [vec(x) for x in k], [vec(x) for x in v]
    prompt = (f"Two tokens have been read: keys {ks[0]} and {ks[1]}, values {vs[0]} and "
              f"{vs[1]} (no feature map, divided by the total score). A third token with key "
              f"{ks[2]} and value {vs[2]} joins the state. What does query {vec(q)} read?")
    steps = (f"The state after the two tokens: S = k₁v₁ᵀ + k₂v₂ᵀ = {mat(S2)}, "
             f"z = k₁ + k₂ = {vec(z2)}.",
             f"The third token adds k₃v₃ᵀ = {mat(np.outer(k[2], v[2]))} to S and k₃ to z: "
             f"S = {mat(S3)}, z = {vec(z3)}.",
             f"Read with the query: qᵀS = {vec(read)}.",
             f"Divide by q·z = {number_text(div)}: o = {vec(read)} / {number_text(div)} = "
             f"{vec(answer)}.")
    return Exercise("running-sum", seed, prompt, _tuple(answer), mistakes=tuple(
        (_tuple(m), why) for m, why in mistakes), steps=steps,
        given={"k": k.tolist(), "v": v.tolist(), "q": q.tolist()})


def running_sum(seed: int) -> Exercise:
    """Seed 0 is the lesson's: keys (1, 0), (1, 1), values (2, 0), (0, 4), then key (0, 1)
    with value (4, 2); query (1, 1) reads (1.5, 2.5)."""
    seed = check_seed("seed", seed)
    if seed == 0:
        k, v = np.array([[1, 0], [1, 1], [0, 1]]), np.array([[2, 0], [0, 4], [4, 2]])
        ex = _running_sum_from(0, k, v, np.array([1, 1]))
        assert ex is not None
        return ex

    def make(rng):
        k = rng.integers(0, 3, (3, 2))
        if np.any(k.sum(axis=1) == 0):
            return None
        q = rng.integers(1, 3, 2)
        if float(q @ k.sum(axis=0)) not in (2, 4, 5, 8, 10):  # a divisor with short decimals
            return None
        return _running_sum_from(seed, k, rng.integers(0, 5, (3, 2)), q)

    return _draw(seed, make)


def running_sum_stream(exercise: Exercise) -> Stream:
    """A running-sum exercise's three tokens as a stream, each with the exercise's query, so
    the third output is the answer (for playing the exercise on the page's plots)."""
    if not isinstance(exercise, Exercise) or exercise.page != "running-sum":
        raise ValueError(f"exercise: expected a running-sum Exercise, got {describe(exercise)}")
    k, v, q = (np.array(exercise.given[n], dtype=float) for n in ("k", "v", "q"))
    return Stream(np.tile(q, (3, 1)), k, v, ("k1 → v1", "k2 → v2", "the new token"),
                  "Your turn: two tokens, then the exercise's third; every token reads with its "
                  "query.")


# Page 2: fixed state -------------------------------------------------------------------------

def fixed_state(seed: int) -> Exercise:
    """Linear attention, d_k = 3, d_v = 2, three pairs: one key orthogonal to the others (its
    pair comes back exactly), one unit key that a later key overlaps, and that later key, which
    is not a unit vector. Even seeds ask which pair is exact, odd ones for an error Sᵀk − v."""

    def make(rng):
        a, b, c = rng.permutation(3)
        keys = np.zeros((3, 3), dtype=int)
        keys[0, a] = 1  # exact: orthogonal to both others
        keys[1, b] = 1  # overlapped by the next
        keys[2, b] = keys[2, c] = 1  # k·k = 2
        order = rng.permutation(3)  # where each of the three sits in the writing order
        k = keys[np.argsort(order)]
        v = rng.integers(-3, 4, (3, 2))
        if np.any(np.all(v == 0, axis=1)) or len({tuple(x) for x in v}) < 3:
            return None
        S = k.T @ v  # (3, 2): Σ k vᵀ
        reads = k @ S  # row p: Sᵀk_p = Σ_i (k_i·k_p) v_i
        exact, over, late = (int(order[i]) for i in range(3))
        pos = {"exact": exact, "over": over, "late": late}
        setup = ("Linear attention writes three pairs into a 3 × 2 state S (S ← S + k vᵀ): "
                 + "; ".join(f"pair {p + 1}: key {vec(k[p])}, value {vec(v[p])}"
                             for p in range(3)) + ".")
        gram = k @ k.T
        dots = [f"Sᵀk{_sub(p + 1)} = " + " + ".join(f"{gram[i, p]}·v{_sub(i + 1)}"
                                                       for i in range(3) if gram[i, p])
                + f" = {vec(reads[p])}" for p in range(3)]
        steps = (f"S = k₁v₁ᵀ + k₂v₂ᵀ + k₃v₃ᵀ = {mat(S)} (3 × 2).",
                 "Reading with key k gives Sᵀk = Σᵢ (kᵢ·k) vᵢ: every stored value, weighted by "
                 "how much its key overlaps k.",
                 "; ".join(dots) + ".")
        if seed % 2 == 0:
            mistakes = ((float(over + 1), f"took pair {over + 1} for exact: its key is a unit vector, but key "
                         f"{late + 1} overlaps it (their dot product is 1), so v{_sub(late + 1)} "
                         "is added to what it reads"),
                        (float(late + 1), f"took pair {late + 1} for exact: its key overlaps key "
                         f"{over + 1}, and k·k = 2, not 1: it reads 2 v plus another value"))
            return Exercise("fixed-state", seed, setup + " Which pair (1, 2 or 3) comes back "
                            "exactly when you read the state with its own key?",
                            (float(exact + 1),), kind=KIND_NUMBER, tolerance=0.0,
                            mistakes=tuple(((m,), why) for m, why in mistakes),
                            steps=(*steps, f"Only key {exact + 1} is orthogonal to the other two "
                                           f"keys and has k·k = 1: pair {exact + 1} comes back "
                                           "exactly."), given={"k": k.tolist(), "v": v.tolist()})
        p = over if rng.integers(2) == 0 else late
        error = reads[p] - v[p]
        mistakes = [(-error, "computed v − Sᵀk: the error here is what was read minus what was "
                             "stored, Sᵀk − v"),
                    (reads[p], "gave the read-back Sᵀk itself, not its difference from v")]
        if p == late:
            mistakes.append((error - v[p], f"took k·k = 1 for key {p + 1}, but k·k = 2: it "
                                           "reads its own value twice"))
        if not _distinct(error, *(m for m, _ in mistakes)) or not np.any(error):
            return None
        return Exercise("fixed-state", seed, setup + f" Read the state with key {p + 1}. How "
                        f"far off is it: what is the error Sᵀk{_sub(p + 1)} − v{_sub(p + 1)}?",
                        _tuple(error), mistakes=tuple((_tuple(m), why) for m, why in mistakes),
                        steps=(*steps, f"Error: {vec(reads[p])} − {vec(v[p])} = {vec(error)}."),
                        given={"k": k.tolist(), "v": v.tolist(), "pair": p + 1, **pos})

    return _draw(seed, make)


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


# Page 3: gates ---------------------------------------------------------------------------------

def gates(seed: int) -> Exercise:
    """d = 2 and a state S with small integers. Even seeds: one decayed write, S ← α S + k vᵀ
    with α = 0.5, then read with q. Odd seeds: one delta-rule write with a unit key and
    β = 0.5, S ← S + β k (v − Sᵀk)ᵀ, then read with the same key."""
    alpha = beta = 0.5

    def make(rng):
        S = rng.integers(-3, 4, (2, 2))
        v = rng.integers(-3, 4, 2)
        if seed % 2 == 0:
            k, q = rng.integers(0, 2, 2), rng.integers(0, 3, 2)
            if not k.any() or not q.any():
                return None
            new = alpha * S + np.outer(k, v)
            answer = q @ new
            mistakes = ((q @ (alpha * (S + np.outer(k, v))), "decayed after writing: α(S + k vᵀ) "
                         "also shrinks the new token's write; the gate acts first, S ← α S + k vᵀ"),
                        (q @ (S + np.outer(k, v)), "left out the decay: S + k vᵀ"),
                        (q @ (alpha * S + np.outer(v, k)), "added v kᵀ in place of k vᵀ"))
            prompt = (f"The state is S = {mat(S)} (rows are key entries). A token with key "
                      f"{vec(k)} and value {vec(v)} arrives through a decay gate α = 0.5 "
                      f"(S ← α S + k vᵀ, as in Mamba-2). What does query {vec(q)} read "
                      "afterwards (Sᵀq)?")
            steps = (f"Decay first: α S = {mat(alpha * S)}.",
                     f"Write: k vᵀ = {mat(np.outer(k, v))}, so S = {mat(new)}.",
                     f"Read: Sᵀq = {vec(answer)}.")
        else:
            i = int(rng.integers(2))
            k = np.eye(2, dtype=int)[i]
            read = S.T @ k  # row i of S
            err = v - read
            answer = read + beta * err
            mistakes = ((read + beta * v, "added β k vᵀ without erasing first: that is linear "
                         "attention's write; the delta rule writes β k (v − Sᵀk)ᵀ"),
                        (v.astype(float), "overwrote completely (β = 1): with β = 0.5 only half "
                         "of the error is written"),
                        (S @ k + beta * (v - S @ k), "read the column S k instead of Sᵀk (the "
                         "key picks a row of S)"))
            prompt = (f"The state is S = {mat(S)} (rows are key entries). The delta rule writes "
                      f"value {vec(v)} under the unit key {vec(k)} with write strength β = 0.5 "
                      "(S ← S + β k (v − Sᵀk)ᵀ). What does the same key read afterwards?")
            steps = (f"Read back first: Sᵀk = {vec(read)} (row {i + 1} of S).",
                     f"The error: v − Sᵀk = {vec(v)} − {vec(read)} = {vec(err)}.",
                     f"Write β k (v − Sᵀk)ᵀ: row {i + 1} of S becomes {vec(read)} + 0.5 · "
                     f"{vec(err)} = {vec(answer)}.",
                     f"Read again: Sᵀk = {vec(answer)}, halfway from the old read-back to v.")
        if not _distinct(answer, *(m for m, _ in mistakes)):
            return None
        return Exercise("gates", seed, prompt, _tuple(answer), mistakes=tuple(
            (_tuple(m), why) for m, why in mistakes), steps=steps,
            given={"S": S.tolist(), "k": k.tolist(), "v": v.tolist(),
                   **({"q": q.tolist()} if seed % 2 == 0 else {})})

    return _draw(seed, make)


# Page 4: hybrid ------------------------------------------------------------------------------

def hybrid_model(given: dict[str, int]) -> dict[str, Any]:
    """The exercise's model in sim.cache's JSON format (for the page and the tests): `given`
    holds positive integers attention, kv_heads, head_dim, recurrent, heads, d."""
    if not isinstance(given, dict):
        raise ValueError(f"given: expected a dict of the exercise's sizes, got {describe(given)}")
    for key in ("attention", "kv_heads", "head_dim", "recurrent", "heads", "d"):
        if key not in given:
            raise ValueError(f"given: expected the key {key!r} (an exercise's `given`)")
        check_positive_int(f"given[{key!r}]", given[key], 2**20)
    return {"name": "exercise hybrid", "layers": [
        {"kind": "attention", "count": given["attention"], "kv_heads": given["kv_heads"],
         "head_dim": given["head_dim"]},
        {"kind": "recurrent", "count": given["recurrent"],
         "state_shape": [given["heads"], given["d"], given["d"]]}]}


def hybrid(seed: int) -> Exercise:
    """A small hybrid: a attention layers (KV bf16) and r recurrent layers (state fp32), one
    sequence at t tokens. Seeds cycle through: the KV cache, the state, the KV cache in
    blocks of 16 tokens."""

    def make(rng):
        g = {"attention": int(rng.choice([1, 2, 4])), "kv_heads": int(rng.choice([1, 2, 4])),
             "head_dim": int(rng.choice([64, 128])), "recurrent": int(rng.choice([3, 6, 12])),
             "heads": int(rng.choice([2, 4, 8])), "d": int(rng.choice([32, 64])),
             "tokens": int(rng.choice([1000, 1500, 2500, 3000]))}
        if seed % 3 == 2:  # few tokens: a partly used last block is a visible share
            g["tokens"] = int(rng.choice([40, 100, 150, 200]))
        a, h, hd, t = g["attention"], g["kv_heads"], g["head_dim"], g["tokens"]
        per_token = a * 2 * h * hd * BF16
        blocks = -(-t // BLOCK_TOKENS)
        state = g["recurrent"] * g["heads"] * g["d"] ** 2 * FP32
        model = (f"A hybrid model has {a} attention layer{'s' * (a > 1)} ({h} KV "
                 f"head{'s' * (h > 1)} × head dim {hd}, KV cache in bf16: 2 bytes a number) and "
                 f"{g['recurrent']} recurrent layers (each a state of {g['heads']} heads × "
                 f"{g['d']} × {g['d']}, in fp32: 4 bytes a number). One sequence of "
                 f"{t:,} tokens.")
        kv_steps = (f"Each attention layer stores a key and a value per token: 2 × {h} head{'s' * (h > 1)} "
                    f"× {hd} = {2 * h * hd:,} numbers, {2 * h * hd * BF16:,} bytes in bf16.",
                    f"Over {a} attention layer{'s' * (a > 1)}: {per_token:,} bytes per token.")
        variant = seed % 3
        if variant == 0:
            answer = per_token * t
            mistakes = ((answer / 2, "counted the keys only: the cache holds a key and a value "
                                     "per token (× 2)"),
                        (answer * 2, "used 4 bytes a number (fp32); the KV cache here is bf16, "
                                     "2 bytes"),
                        (answer * (a + g["recurrent"]) / a, "gave every layer a KV cache; the "
                         "recurrent layers keep a fixed state instead"))
            ask, steps = "How many bytes is the KV cache?", (
                *kv_steps, f"× {t:,} tokens = {answer:,} bytes.")
        elif variant == 1:
            answer = state
            mistakes = ((state // 2, "used 2 bytes a number (bf16); the state here is fp32, "
                                     "4 bytes"),
                        (state * t, "let the state grow with the tokens: it has the same size "
                                    "at every t"),
                        (state // g["heads"], "counted one head; each layer has "
                                              f"{g['heads']} heads"))
            ask, steps = "How many bytes is the recurrent state (all recurrent layers)?", (
                f"One layer's state: {g['heads']} × {g['d']} × {g['d']} = "
                f"{g['heads'] * g['d'] ** 2:,} numbers, × 4 bytes = "
                f"{g['heads'] * g['d'] ** 2 * FP32:,} bytes.",
                f"× {g['recurrent']} recurrent layers = {state:,} bytes, whatever t is.")
        else:
            if t % BLOCK_TOKENS == 0:
                return None
            answer = per_token * blocks * BLOCK_TOKENS
            mistakes = ((per_token * t, "gave the exact figure; an engine allocates whole blocks, "
                                        "so the last block is full size even if partly used"),
                        (per_token * (t // BLOCK_TOKENS) * BLOCK_TOKENS, "rounded down: the "
                         "tokens past the last full block need one more block"),
                        (per_token * blocks, "counted blocks as if each held one token"))
            ask, steps = (f"An engine allocates the KV cache in blocks of {BLOCK_TOKENS} tokens. "
                          "How many bytes does it allocate?"), (
                *kv_steps, f"{t:,} tokens need ⌈{t:,} / {BLOCK_TOKENS}⌉ = {blocks} blocks = "
                f"{blocks * BLOCK_TOKENS:,} token slots.",
                f"{per_token:,} × {blocks * BLOCK_TOKENS:,} = {answer:,} bytes "
                f"(exactly {per_token * t:,} without blocks).")
        if not _distinct(answer, *(m for m, _ in mistakes), atol=0, rtol=0.02):
            return None
        return Exercise("hybrid", seed, f"{model} {ask}", (float(answer),), kind=KIND_BYTES,
                        tolerance=0.005, unit="bytes",
                        mistakes=tuple(((float(m),), why) for m, why in mistakes), steps=steps,
                        given=g | {"variant": variant})

    return _draw(seed, make)


# Page 5: chunkwise ---------------------------------------------------------------------------

CHUNK_DECAY = 0.5  # RetNet's γ in the masked-scores exercise: halves keep it by hand


def chunkwise(seed: int) -> Exercise:
    """The chunkwise-parallel form by hand. Even seeds: T tokens in chunks of C; token t's
    carried-state part reads the state carried into its chunk, S_[c−1], the state after token
    (c − 1)·C (c = ⌈t / C⌉); the answer is that token's number (0 for S₀). Odd seeds: one chunk
    of C = 4 tokens, d = 2, small integer queries and keys; a row r ∈ {2, 3} of the chunk's
    masked score matrix A (A_ts = q_t·k_s for s ≤ t, 0 above the diagonal), for linear
    attention, or for RetNet with γ = 0.5 (A_ts = γ^(t−s) q_t·k_s) when seed % 4 == 3.
    ``given``: variant "state" with T, C, t; variant "scores" with rule, C, chunk, row, q, k,
    gamma (None for linear attention)."""
    seed = check_seed("seed", seed)
    if seed % 2 == 0:
        return _draw(seed, lambda rng: _chunk_state(seed, rng))
    return _draw(seed, lambda rng: _chunk_scores(seed, rng))


def _chunk_state(seed: int, rng: np.random.Generator) -> Exercise | None:
    T, C = int(rng.choice([12, 16, 24, 32])), int(rng.choice([2, 3, 4, 6, 8]))
    t = int(rng.integers(C + 1, T + 1))  # past the first chunk: something is carried
    c = -(-t // C)  # ⌈t / C⌉, the chunk of token t (counted from 1)
    first, last = (c - 1) * C + 1, min(c * C, T)
    answer = (c - 1) * C
    mistakes = [((float(t - 1),), f"took the state after the previous token, {t - 1}, as the "
                 "recurrence reads: the chunkwise form carries the state only from chunk to "
                 f"chunk, and tokens {first}–{t - 1} come in through the in-chunk part"),
                ((float(last),), f"took the state at the end of token {t}'s own chunk (after "
                 f"token {last}): that state already holds token {t}"
                 + (" itself" if last == t else f" and the tokens after it up to {last}")
                 + ", and a token reads only what came before it")]
    if answer - C > 0:
        mistakes.append(((float(answer - C),), f"went one chunk too far back: chunk {c} starts "
                         f"from the state after the last token of chunk {c - 1}, token "
                         f"{answer}, not after chunk {c - 2}"))
    if not _distinct((answer,), *(m for m, _ in mistakes), atol=0.5):
        return None
    prompt = (f"T = {T} tokens are cut into chunks of C = {C}. The output of token t = {t} is "
              "its carried-state part plus its in-chunk part. Its carried-state part reads the "
              "state S after which token? (Type 0 for S₀, the state before any token.)")
    steps = (f"Token {t} is in chunk {c} = ⌈{t} / {C}⌉: tokens {first}–{last}.",
             f"Chunk {c} starts from the state carried into it, S_[{c - 1}]: the state after "
             f"the {'last token of chunk ' + str(c - 1) if c > 1 else 'no token'}, token "
             f"{answer} = ({c} − 1) · {C}.",
             f"So token {t}'s carried-state part reads S after token {answer}; tokens "
             f"{first}–{t} of its own chunk (itself included) come in through the masked "
             "in-chunk part.")
    return Exercise("chunkwise", seed, prompt, (float(answer),), kind=KIND_NUMBER,
                    tolerance=0.01, mistakes=tuple(mistakes), steps=steps,
                    given={"variant": "state", "T": T, "C": C, "t": t})


def _chunk_scores(seed: int, rng: np.random.Generator) -> Exercise | None:
    C, d, row = 4, 2, int(rng.choice([2, 3]))
    gamma = CHUNK_DECAY if seed % 4 == 3 else None
    q, k = rng.integers(-2, 3, (C, d)), rng.integers(-2, 3, (C, d))
    if not q[row - 1].any() or np.any(~k.any(axis=1)):
        return None
    dots = k @ q[row - 1]  # (C,) q_r·k_s for every s of the chunk
    decay = np.array([gamma ** (row - 1 - s) if gamma and s < row else 1.0
                      for s in range(C)])  # γ^(r−s)
    keep = np.arange(C) < row  # s ≤ r (0-based s < r)
    answer = np.where(keep, decay * dots, 0.0)
    column = np.array([q[s] @ k[row - 1] * (gamma ** (s - row + 1) if gamma else 1.0)
                       if s >= row - 1 else 0.0 for s in range(C)])  # A[s, r]: column r
    mistakes = [(decay * dots if not gamma else np.where(keep, decay, 1.0) * dots,
                 f"left out the causal mask: query {row} sees only keys s ≤ {row} of its "
                 "chunk; the cells above the diagonal (grey on the page) are 0"),
                (np.where(np.arange(C) < row - 1, decay * dots, 0.0),
                 f"masked the diagonal too: token {row}'s query sees its own key (s ≤ t, "
                 "not s < t)"),
                (column, f"read column {row} (query s against key {row}) in place of row "
                 f"{row} (query {row} against every key s)")]
    if gamma:
        mistakes.append((np.where(keep, dots, 0.0), "left out the decay: RetNet's score "
                         f"of key s for query t is γ^(t−s) q_t·k_s, here γ = {number_text(gamma)}"))
    if not _distinct(answer, *(m for m, _ in mistakes), atol=0.05):
        return None
    rule = "RetNet (decay γ = 0.5: A_ts = γ^(t−s) q_t·k_s)" if gamma else \
        "linear attention (A_ts = q_t·k_s)"
    qs = ", ".join(f"q{_sub(i + 1)} = {vec(x)}" for i, x in enumerate(q))
    ks = ", ".join(f"k{_sub(i + 1)} = {vec(x)}" for i, x in enumerate(k))
    prompt = (f"One chunk of C = {C} tokens (tokens 5–8, chunk 2 of a longer stream), {rule}. "
              f"Its queries are {qs}; its keys are {ks}. What is row {row} of the chunk's "
              f"masked score matrix A (its {C} entries, 0 where the mask hides a key)?")
    terms = []
    for s in range(row):
        g = f"{number_text(decay[s])} · " if gamma else ""
        products = " + ".join(f"({number_text(a)})({number_text(b)})"
                              for a, b in zip(q[row - 1], k[s]))
        terms.append(f"A[{row}, {s + 1}] = {g}q{_sub(row)}·k{_sub(s + 1)} = {g}({products}) = "
                     f"{number_text(answer[s])}")
    hidden = f"s = {row + 1}" if row + 1 == C else f"s = {row + 1}…{C}"
    steps = [f"Row {row} is query {row} against the chunk's keys; the causal mask keeps keys "
             f"s ≤ {row} and hides {hidden} (0)."]
    if gamma:
        steps.append(f"Each kept score is decayed by γ^({row}−s): "
                     + ", ".join(f"γ^{row - 1 - s} = {number_text(decay[s])}"
                                 for s in range(row)) + ".")
    steps += ["; ".join(terms) + ".", f"Row {row} = {vec(answer)}."]
    return Exercise("chunkwise", seed, prompt, _tuple(answer), mistakes=tuple(
        (_tuple(m), why) for m, why in mistakes), steps=tuple(steps),
        given={"variant": "scores", "rule": "retnet" if gamma else "linear", "C": C,
               "chunk": 2, "row": row, "q": q.tolist(), "k": k.tolist(), "gamma": gamma})


# Page 6: random features ---------------------------------------------------------------------

FEATURE_SPREADS = (0.5, 1.0, 1.5, 2.0)  # σ₁, one feature's relative standard deviation
FEATURE_COUNTS = (4, 16, 64, 100, 256)  # m with a whole √m


def random_features(seed: int) -> Exercise:
    """Performer's estimate of exp(q·k) by m independent positive features. Seeds 0, 4, 8 …:
    one feature strays by σ₁ (relative standard deviation, √(exp|q̃ + k̃|² − 1)); what is the
    spread with m features (σ₁ / √m)? Seeds 2, 6, …: how many features bring it to a target
    (m = (σ₁ / target)²)? Odd seeds, why positive features: one draw of trigonometric
    (sin, cos) features gave estimates of exp(s q·k_j) for three keys, one negative; what weight
    ê_j / Σ ê does key j get (outside 0 … 1, which positive features never give)?
    ``given``: variant "spread" (sigma1, m), "count" (sigma1, target) or "sign" (estimates, key)."""
    seed = check_seed("seed", seed)

    def make(rng):
        if seed % 2 == 0:
            sigma = float(rng.choice(FEATURE_SPREADS))
            m = int(rng.choice(FEATURE_COUNTS))
            root = math.isqrt(m)
            spread = sigma / root
            if seed % 4 == 0:
                answer = spread
                mistakes = (((sigma / m,), f"divided by m = {m}: the variance falls as 1/m, its "
                             f"square root, the spread, as 1/√m"),
                            ((sigma ** 2 / m,), f"gave the variance σ₁²/m = {number_text(sigma ** 2)}"
                             f" / {m}, not its square root (the spread)"),
                            ((sigma,), "left the spread alone: every feature strays as much, "
                             "but their average strays less"))
                prompt = (f"FAVOR+ estimates exp(q·k) with m independent positive features, "
                          f"φ(q)·φ(k) = the average of m one-feature estimates. For this q and "
                          f"k one feature alone strays by σ₁ = {number_text(sigma)} (relative "
                          f"standard deviation, √(exp|q̃ + k̃|² − 1)). What is the relative "
                          f"standard deviation of the estimate with m = {m} features?")
                steps = ("The m features are independent and each is an unbiased estimate: "
                         "their average is unbiased too, and its variance is σ₁² / m.",
                         f"Variance: {number_text(sigma)}² / {m} = "
                         f"{number_text(sigma ** 2 / m)}.",
                         f"Spread: its square root, σ₁ / √m = {number_text(sigma)} / {root} = "
                         f"{number_text(spread)}.")
                given = {"variant": "spread", "sigma1": sigma, "m": m}
            else:
                if spread not in (0.5, 0.25, 0.2, 0.125, 0.1, 0.0625, 0.05) or m == 1:
                    return None
                answer = float(m)
                mistakes = (((float(root),), f"took the spread's ratio σ₁ / target = {root} as "
                             "the number of features: the spread falls as 1/√m, so m is that "
                             "ratio squared"),
                            ((float(m * m),), "squared twice: m = (σ₁ / target)², not "
                             "(σ₁ / target)⁴"),
                            ((sigma ** 2 / spread,), "divided the variance σ₁² by the target "
                             "spread: compare spreads with spreads, σ₁ / √m = target"))
                prompt = (f"FAVOR+ estimates exp(q·k) with m independent positive features "
                          f"(the average of m one-feature estimates). For this q and k one "
                          f"feature alone strays by σ₁ = {number_text(sigma)} (relative standard "
                          f"deviation). How many features bring the estimate's relative "
                          f"standard deviation down to {number_text(spread)}?")
                steps = ("The average of m independent features strays by σ₁ / √m.",
                         f"σ₁ / √m = {number_text(spread)} ⇒ √m = {number_text(sigma)} / "
                         f"{number_text(spread)} = {root}.",
                         f"m = {root}² = {m}: halving the spread takes four times the features.")
                given = {"variant": "count", "sigma1": sigma, "target": spread}
            answer = (float(answer),)
            kind = KIND_NUMBER
        else:
            e = np.array([float(rng.choice([1.0, 1.5, 2.0, 2.5, 3.0])),
                          -float(rng.choice([0.5, 1.0, 1.5, 2.0, 2.5])),
                          float(rng.choice([0.5, 1.0, 1.5, 2.0]))])
            e = e[rng.permutation(3)]
            total = float(e.sum())
            if total not in (0.5, 1.0, 2.0, 2.5, 4.0, 5.0):
                return None
            j = int(rng.integers(3))
            answer = (e[j] / total,)
            kept = np.clip(e, 0, None)
            mistakes = (((abs(e[j]) / float(np.abs(e).sum()),), "took absolute values: "
                         "the weights divide the estimates as they are, signs included"),
                        ((kept[j] / float(kept.sum()),), "dropped the negative estimate: "
                         "nothing clips it; the normaliser is the plain sum"),
                        ((float(e[j]),), f"skipped the divide: the weight is ê_{j + 1} over the "
                         f"sum of the three, {number_text(total)}"))
            negative = int(np.flatnonzero(e < 0)[0])
            prompt = ("Random Fourier features use cos and sin, which can be negative. One draw "
                      "of such features estimated exp(s q·k_j) for three keys as ê = "
                      f"{vec(e)}. Attention divides the estimates by their sum, w_j = ê_j / Σ ê. "
                      f"What weight does key {j + 1} get?")
            steps = (f"The normaliser: Σ ê = {' + '.join(number_text(x) for x in e)} = "
                     f"{number_text(total)}.".replace("+ -", "− "),
                     f"w_{j + 1} = {number_text(e[j])} / {number_text(total)} = "
                     f"{number_text(answer[0])}.",
                     f"Key {negative + 1} gets a negative weight and the other two add up to "
                     "more than 1: not a probability, and the nearer Σ ê is to 0 the wilder. FAVOR+'s "
                     "positive features exp(ωᵀx − |x|²/2) make every estimate > 0, so every "
                     "weight is between 0 and 1 and they sum to 1.")
            given = {"variant": "sign", "estimates": e.tolist(), "key": j + 1}
            kind = KIND_NUMBER
        if not _distinct(answer, *(w for w, _ in mistakes), atol=0.01):
            return None
        return Exercise("random-features", seed, prompt, _tuple(answer), kind=kind,
                        tolerance=0.001, mistakes=tuple((_tuple(w), why) for w, why in mistakes),
                        steps=steps, given=given)

    return _draw(seed, make)


# Page 7: state space -------------------------------------------------------------------------

STATE_SPACE_STEPS = (0.5, 2.0)  # Δ: never 1, so "B u without Δ" is a different answer
STATE_SPACE_DECAYS = (0.5, 0.25)  # exp(Δ A[n]): halves and quarters keep it by hand


def _ln2(m: float) -> str:
    """A = −m ln 2 in words: "−ln 2", "−4 ln 2", "−0.5 ln 2"."""
    return "−ln 2" if m == 1 else f"−{number_text(m)} ln 2"


def state_space(seed: int) -> Exercise:
    """One token of Mamba's selective scan by hand, one channel (d_inner = 1), N = 2:
    h_t = exp(Δ A) ⊙ h_{t−1} + Δ B u, y_t = C·h_t + D u. Δ is 0.5 or 2 and A[n] = −m ln 2 with
    exp(Δ A[n]) = 1/2 or 1/4, said in the prompt; h_{t−1}, B, C, u, D small integers. Even
    seeds ask for y_t, odd ones for h_t. ``given`` holds delta, A, decay, h_prev, B, C, u, D."""
    seed = check_seed("seed", seed)

    def make(rng):
        delta = float(rng.choice(STATE_SPACE_STEPS))
        a = rng.choice(STATE_SPACE_DECAYS, 2)
        m = -np.log2(a) / delta  # A[n] = −m ln 2, so Δ A[n] = ln a[n]
        A = -m * np.log(2.0)
        h_prev, B, C = rng.integers(-3, 4, 2), rng.integers(-2, 3, 2), rng.integers(-2, 3, 2)
        u, D = int(rng.choice([-3, -2, -1, 1, 2, 3])), int(rng.integers(1, 3))
        if not h_prev.any() or not B.any() or not C.any():
            return None
        wrong_a = 2.0 ** -m  # exp(A), the decay without the step
        kept, written = a * h_prev, delta * B * u
        h = kept + written
        y = float(C @ h + D * u)
        ask_y = seed % 2 == 0
        if ask_y:
            answer = (y,)
            mistakes = (((float(C @ h),), f"left out the skip: y_t = C·h_t + D u_t, and D u_t = "
                                         f"{number_text(D * u)} is added to C·h_t"),
                        ((float(C @ (wrong_a * h_prev + written) + D * u),),
                         f"used exp(A) = {vec(wrong_a)} in place of exp(Δ A) = {vec(a)}: the "
                         "decay is taken over the step Δ"),
                        ((float(C @ (kept + B * u) + D * u),), "multiplied the input by B "
                         f"without Δ: the state takes in Δ B u, here with Δ = {number_text(delta)}"),
                        ((float(C @ h_prev + D * u),), "read the old state: y_t reads h_t, after "
                                                       "this token's update, not h_{t−1}"))
        else:
            answer = _tuple(h)
            mistakes = ((_tuple(wrong_a * h_prev + written), f"used exp(A) = {vec(wrong_a)} in "
                         f"place of exp(Δ A) = {vec(a)}: the decay is taken over the step Δ"),
                        (_tuple(kept + B * u), "multiplied the input by B without Δ: the state "
                         f"takes in Δ B u, here with Δ = {number_text(delta)}"),
                        (_tuple(h_prev + written), "left out the decay: the old state is kept "
                                                   "only in the share exp(Δ A)"),
                        (_tuple(a * (h_prev + written)), "decayed after writing: exp(Δ A) "
                         "shrinks the old state only, the new input term is added whole"))
        if not _distinct(answer, *(w for w, _ in mistakes)):
            return None
        A_text = "(" + ", ".join(_ln2(x) for x in m) + ")"
        prompt = (f"One token of Mamba's selective scan, one channel (d_inner = 1), state size "
                  f"N = 2: h_t = exp(Δ A) ⊙ h_{{t−1}} + Δ B u_t, y_t = C·h_t + D u_t. The step "
                  f"is Δ = {number_text(delta)} and A = {A_text}, so exp(Δ A) = {vec(a)}. The "
                  f"previous state is h_{{t−1}} = {vec(h_prev)}; B = {vec(B)}, C = {vec(C)}, "
                  f"D = {D}, and the input is u_t = {u}. "
                  + ("What is the output y_t?" if ask_y else
                     "What is the new state h_t (its two entries)?"))
        u_ = f"({u})" if u < 0 else str(u)  # a negative factor in brackets
        steps = [f"The decay: exp(Δ A) = exp({number_text(delta)} · {A_text}) = {vec(a)} "
                 f"(not exp(A) = {vec(wrong_a)}).",
                 f"Keep that share of the old state: exp(Δ A) ⊙ h_{{t−1}} = {vec(a)} ⊙ "
                 f"{vec(h_prev)} = {vec(kept)}.",
                 f"The input term: Δ B u_t = {number_text(delta)} · {vec(B)} · {u_} = "
                 f"{vec(written)}.",
                 f"The new state: h_t = {vec(kept)} + {vec(written)} = {vec(h)}."]
        if ask_y:
            steps += [f"Read it: C·h_t = {vec(C)}·{vec(h)} = {number_text(float(C @ h))}.",
                      f"Add the skip D u_t = {D} · {u_} = {number_text(D * u)}: y_t = "
                      f"{number_text(y)}."]
        return Exercise("state-space", seed, prompt, answer,
                        kind=KIND_NUMBER if ask_y else KIND_VECTOR,
                        mistakes=tuple((_tuple(w), why) for w, why in mistakes),
                        steps=tuple(steps),
                        given={"delta": delta, "A": A.tolist(), "decay": a.tolist(),
                               "h_prev": h_prev.tolist(), "B": B.tolist(), "C": C.tolist(),
                               "u": u, "D": D, "ask": "y" if ask_y else "h"})

    return _draw(seed, make)


GENERATORS: dict[str, Callable[[int], Exercise]] = {
    "running-sum": running_sum, "fixed-state": fixed_state, "gates": gates, "hybrid": hybrid,
    "chunkwise": chunkwise, "random-features": random_features, "state-space": state_space}
