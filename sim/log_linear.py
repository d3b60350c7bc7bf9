"""Log-linear attention (Guo, Yang, Goel, Xing, Dao, Kim; arXiv:2506.04761), Mamba-2 flavour:
O(log T) states over a Fenwick partition of the past, each read with its own weight.

Glossary (code name → symbol), 0-indexed tokens t, s:
    q, k           (d_k,)   query, key;  v (d_v,) value
    alpha          float    decay a_t ∈ (0, 1] per token (Mamba-2's exp(Δ_t A); FLA takes log a)
    level_weights  (L,)     λ_t^{(ℓ)} ≥ 0 for query t and level ℓ = 0..L−1 (FLA's level_scales)
    L              ⌈log₂ T⌉ + 1 = bit_length(T − 1) + 1 levels for T tokens
    level ℓ(t, s)  bit_length(t XOR s): 0 when s = t, else the Fenwick bucket of t holding s
    levels         S^{(ℓ)} (d_k, d_v) each, with token counts; their sum is the Mamba-2 state

Parallel form:
    o_t = Σ_{s≤t} λ_t^{(ℓ(t,s))} (Π_{s<r≤t} a_r) (q_t · k_s) v_s
Recurrent form (HanGuo97/log-linear-attention hattention/recurrent.py), per token t:
    1. for ℓ = 0, 1, …: if level ℓ holds 2^ℓ tokens, add it into level ℓ+1 and empty it;
       stop at the first level that is not full (a binary carry)
    2. multiply every level by a_t
    3. set level 0 to k_t v_tᵀ
    4. o_t = Σ_ℓ λ_t^{(ℓ)} S^{(ℓ)ᵀ} q_t
After token t, levels 0..bit_length(t) exist; level ℓ ≥ 1 holds the 2^{ℓ−1} tokens s with
ℓ(t, s) = ℓ, or nothing. The levels' sum evolves exactly like Mamba-2's S_t = a_t S_{t−1} +
k_t v_tᵀ, so λ = 1 everywhere gives Mamba-2 back. There is no initial state (a state before
token 0 belongs to no Fenwick bucket).
Chunkwise form (`run_chunkwise`, chunks of C = 2^c tokens, aligned): for s in an earlier chunk,
ℓ(t, s) = c + bit_length(chunk(t) XOR chunk(s)), the same for every t of a chunk, so the past
chunks live in chunk-level Fenwick states (the recurrence above with chunks as tokens) and each
chunk adds its own tokens in masked-matrix form.
References: fla-org/flash-linear-attention fla/ops/log_linear_attn/naive.py (level masks,
H = Σ_ℓ exp(segsum(g)) ⊙ mask_ℓ, o = (H ⊙ QKᵀ) V) and chunk.py (`chunk_log_linear_attn`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import rule_inputs as inputs
from . import validation as check
from .linear_attention import rank_one
from .parallel import causal_mask, segment_log_decay
from .registry import REGISTRY
from .state import State, Step, Trace

Array = np.ndarray

LOG_LINEAR_OPTIONS = REGISTRY["log_linear"].info.options


def _frozen(a: Array) -> Array:
    a.flags.writeable = False
    return a


def n_levels(T: int) -> int:
    """L = ⌈log₂ T⌉ + 1 = bit_length(T − 1) + 1 levels for T ≥ 1 tokens."""
    return (check.check_positive_int("T", T) - 1).bit_length() + 1


def fenwick_levels(T: int) -> Array:
    """ℓ (T, T) int: ℓ[t, s] = bit_length(t XOR s) for s ≤ t, −1 above the diagonal."""
    T = check.check_positive_int("T", T)
    check.check_budget("T", T * T, check.MAX_NUMBERS, f"the (T, T) levels of T = {T:,} tokens")
    t = np.arange(T)
    x = t[:, None] ^ t[None, :]
    level = np.zeros((T, T), dtype=np.int64)
    while x.any():  # bit_length, one bit at a time (exact for any size)
        level += x > 0
        x = x >> 1
    return np.where(causal_mask(T), level, -1)


@dataclass(frozen=True)
class LevelState(State):
    """The log-linear memory after t tokens: levels S^{(0..)} (each (d_k, d_v)) and their token
    counts; S (d_k, d_v) is their sum (the Mamba-2 state). `numbers` counts every level."""

    levels: tuple[Array, ...] = ()
    counts: tuple[int, ...] = ()

    @property
    def numbers(self) -> int:
        return sum(a.size for a in self.levels)


@dataclass(frozen=True, eq=False)
class LevelTrace(Trace):
    """A log-linear run. states (T, d_k, d_v) is the levels' sum after each token;
    levels (T, L, d_k, d_v) and counts (T, L) the Fenwick levels after each token (zeros where a
    level does not exist yet); None with keep_states=False."""

    levels: Array | None = None
    counts: Array | None = None


# ---------------------------------------------------------------------------------------------
# the recurrence: one token, no checks; run and step both call it, so they agree bit for bit.

def cascade(levels: list[Array], counts: list[int]) -> None:
    """Step 1, in place: carry every full level (2^ℓ tokens) into the next, from level 0 up."""
    ell = 0
    while ell < len(levels) and counts[ell] == 1 << ell:
        if ell + 1 == len(levels):
            levels.append(np.zeros_like(levels[ell]))
            counts.append(0)
        levels[ell + 1] = levels[ell + 1] + levels[ell]
        counts[ell + 1] += counts[ell]
        levels[ell] = np.zeros_like(levels[ell])
        counts[ell] = 0
        ell += 1


def log_linear_token(levels: list[Array], counts: list[int], alpha: float, q: Array, k: Array,
                     v: Array, weights: Array) -> tuple[list[Array], Array, Array]:
    """Steps 1-4 for one token. `levels`, `counts` are updated (counts in place). Returns
    (new levels, the levels' sum S (d_k, d_v), o (d_v,)); weights has ≥ len(new levels) entries."""
    cascade(levels, counts)
    levels = [alpha * S for S in levels]  # step 2, new arrays
    if not levels:
        levels.append(np.zeros((k.shape[0], v.shape[0])))
        counts.append(0)
    levels[0] = rank_one(k, v)  # step 3
    counts[0] = 1
    total = levels[0].copy()
    output = weights[0] * (levels[0].T @ q)
    for ell in range(1, len(levels)):
        total += levels[ell]
        output += weights[ell] * (levels[ell].T @ q)
    return levels, total, output


def _diverged(levels: list[Array], total: Array) -> bool:
    """‖S‖ above 1e150 (or non-finite) for the levels' sum or any level."""
    return not (check.state_norm_ok(total) and all(check.state_norm_ok(S) for S in levels))


def init_state(d_k: int, d_v: int) -> LevelState:
    """No levels yet; S = 0 (d_k, d_v)."""
    d_k, d_v = check.check_state_dims(d_k, d_v)
    return LevelState(S=_frozen(np.zeros((d_k, d_v))))


def _step_weights(x: Any, needed: int) -> Array:
    if x is None:
        return np.ones(needed)
    a = check.as_float_array("level_weights", x)
    if a.ndim == 0:
        a = np.full(needed, float(a))
    if a.ndim != 1 or a.shape[0] < needed:
        raise ValueError(f"level_weights: expected a float or an array of shape (L,) with at "
                         f"least {needed} levels at this token, got shape {a.shape}")
    return inputs.weights("level_weights", a, a.shape, "(L,)")


def step_log_linear(state: LevelState, q: Any, k: Any, v: Any, **gates: Any) -> Step:
    """One token: q, k (d_k,), v (d_v,), alpha a float in (0, 1], level_weights (L,) ≥ 0 with at
    least bit_length(t) + 1 entries at token t (more are allowed and unused; default all 1).
    Returns a `Step` whose state is a `LevelState`."""
    inputs.params_for("log_linear", gates, ("alpha", "level_weights"), ("alpha",))
    if not isinstance(state, LevelState):
        raise ValueError("state: expected a LevelState (from sim.init_state('log_linear', d_k, "
                         f"d_v)), got {check.describe(state)}")
    d_k, d_v = state.S.shape
    q, k, v = inputs.token(q, k, v, d_k, d_v, state.t)
    alpha = check.step_scalar_gate("alpha", gates["alpha"], True, 1.0)
    weights = _step_weights(gates.get("level_weights"), state.t.bit_length() + 1)
    counts = list(state.counts)
    with np.errstate(over="ignore", invalid="ignore"):
        levels, total, output = log_linear_token(list(state.levels), counts, alpha, q, k, v,
                                                 weights)
        if _diverged(levels, total) or not np.isfinite(output).all():
            raise check.divergence(state.t, total)
    new = LevelState(S=_frozen(total), t=state.t + 1,
                     levels=tuple(_frozen(S) for S in levels), counts=tuple(counts))
    return Step(new, output, decay=alpha, _key=k, _write_values=v)


def _run_weights(x: Any, T: int) -> Array:
    L = n_levels(T)
    if x is None:
        return np.ones((T, L))
    return inputs.weights("level_weights", x, (T, L), f"(T, L) with L = ⌈log₂ T⌉ + 1 = {L}")


def run_log_linear(q: Any, k: Any, v: Any, **params: Any) -> LevelTrace:
    """Log-linear attention over a stream: q, k (T, d_k), v (T, d_v), alpha (T,) in (0, 1] (a
    float broadcasts), level_weights (T, L) ≥ 0 with L = ⌈log₂ T⌉ + 1 (default all 1: Mamba-2);
    keep_states. Returns a `LevelTrace`."""
    inputs.params_for("log_linear", params, LOG_LINEAR_OPTIONS, ("alpha",))
    Q, K, V = inputs.stream(q, k, v)
    (T, d_k), d_v = K.shape, V.shape[1]
    keep = inputs.keep_states(params)
    L = n_levels(T)
    # every token reads L levels; keep_states holds the L levels and their sum for every token
    check.check_run_size(T, d_k, d_v, keep, work=T * L * d_k * d_v, kept=T * (L + 1) * d_k * d_v)
    alphas = check.check_unit_interval_gate("alpha", params["alpha"], (T,), "(T,)").tolist()
    weights = _run_weights(params.get("level_weights"), T)
    states = np.empty((T, d_k, d_v)) if keep else None
    all_levels = np.zeros((T, L, d_k, d_v)) if keep else None
    all_counts = np.zeros((T, L), dtype=np.int64) if keep else None
    outputs = np.empty((T, d_v))
    levels: list[Array] = []
    counts: list[int] = []
    total = np.zeros((d_k, d_v))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            levels, total, outputs[t] = log_linear_token(levels, counts, alphas[t], Q[t], K[t],
                                                         V[t], weights[t])
            if _diverged(levels, total) or not np.isfinite(outputs[t]).all():
                raise check.divergence(t, total)
            if states is not None and all_levels is not None and all_counts is not None:
                states[t] = total
                all_levels[t, : len(levels)] = levels
                all_counts[t, : len(counts)] = counts
    return LevelTrace("log_linear", outputs, states, total, levels=all_levels, counts=all_counts)


# ---------------------------------------------------------------------------------------------
# the parallel form (the oracle) and the chunkwise form

def _masked_scores(Q: Array, K: Array, log_a: Array, weights: Array) -> Array:
    """(T, T): λ_t^{(ℓ(t,s))} (Π_{s<r≤t} a_r) (q_t · k_s) for s ≤ t, else 0."""
    T = Q.shape[0]
    level = fenwick_levels(T)
    decay = np.exp(segment_log_decay(log_a[:, None])[:, :, 0])  # (T, T), 0 above the diagonal
    lam = np.where(level >= 0, np.take_along_axis(weights, np.maximum(level, 0), axis=1), 0.0)
    return lam * decay * (Q @ K.T)


def run_parallel(q: Any, k: Any, v: Any, *, alpha: Any, level_weights: Any = None) -> Array:
    """O (T, d_v) = (H ∘ Q Kᵀ) V with H_ts = λ_t^{(ℓ(t,s))} Π_{s<r≤t} a_r (s ≤ t), no loop
    over tokens. Same inputs as `run_log_linear`."""
    Q, K, V = inputs.stream(q, k, v)
    T = Q.shape[0]
    alpha_ = check.check_unit_interval_gate("alpha", alpha, (T,), "(T,)")
    weights = _run_weights(level_weights, T)
    return _masked_scores(Q, K, np.log(alpha_), weights) @ V


@dataclass(frozen=True, eq=False)
class LogLinearChunkTrace:
    """A chunkwise log-linear run in chunks of `chunk_size` = 2^c tokens.

    outputs (T, d_v) = inter + intra; inter (T, d_v) what token t reads from the chunk-level
    states of earlier chunks, Σ_{m≥1} λ_t^{(c+m)} Γ_t Z^{(m)ᵀ} q_t (Γ_t = Π of a from the chunk's
    start to t); intra (T, d_v) its own chunk, in masked-matrix form; starts (n_chunks + 1,);
    boundary_levels: for every chunk, the chunk-level states Z^{(1..)} it reads (each
    (d_k, d_v); Z^{(m)} sums the chunks at chunk distance bit_length = m, decayed to its start).
    """

    chunk_size: int
    starts: Array
    outputs: Array
    inter: Array
    intra: Array
    boundary_levels: tuple[tuple[Array, ...], ...]


def run_chunkwise(q: Any, k: Any, v: Any, *, alpha: Any, chunk_size: int,
                  level_weights: Any = None) -> LogLinearChunkTrace:
    """Log-linear attention chunk by chunk; chunk_size a power of two (1, 2, 4, …), so every
    chunk is one Fenwick bucket; the last chunk may be shorter. Same inputs as `run_log_linear`.
    """
    C = check.check_positive_int("chunk_size", chunk_size)
    if C & (C - 1):
        raise ValueError(f"chunk_size: expected a power of two (1, 2, 4, 8, …), got {C}")
    Q, K, V = inputs.stream(q, k, v)
    (T, d_k), d_v = K.shape, V.shape[1]
    L, n_chunks = n_levels(T), -(-T // C)
    # each token reads the past chunks' levels (at most L of them) and the min(C, T) tokens of
    # its own chunk; every chunk boundary keeps a copy of the levels
    check.check_run_size(T, d_k, d_v, keep_states=False,
                         work=T * L * d_k * d_v + T * min(C, T) * (d_k + d_v))
    check.check_budget("chunk_size", n_chunks * L * d_k * d_v, check.MAX_NUMBERS,
                       f"the boundary levels kept for {n_chunks:,} chunks of T = {T:,} tokens")
    log_a = np.log(check.check_unit_interval_gate("alpha", alpha, (T,), "(T,)"))
    weights = _run_weights(level_weights, T)
    c = C.bit_length() - 1
    starts = np.append(np.arange(0, T, C), T)
    inter, intra = np.zeros((T, d_v)), np.empty((T, d_v))
    chunk_levels: list[Array] = []  # Z^{(0)} = the previous chunk, Z^{(m)}: chunk distance m
    chunk_counts: list[int] = []
    boundary: list[tuple[Array, ...]] = []
    for j in range(len(starts) - 1):
        t0, t1 = int(starts[j]), int(starts[j + 1])
        la = log_a[t0:t1]
        cascade(chunk_levels, chunk_counts)
        boundary.append(tuple(S.copy() for S in chunk_levels[1:]))
        G = np.exp(np.cumsum(la))  # (n,) Γ_t, decay from the chunk's start through token t
        for m in range(1, len(chunk_levels)):
            inter[t0:t1] += (weights[t0:t1, c + m] * G)[:, None] * (Q[t0:t1] @ chunk_levels[m])
        intra[t0:t1] = _masked_scores(Q[t0:t1], K[t0:t1], la, weights[t0:t1]) @ V[t0:t1]
        # what the chunk leaves: Σ_s (Π_{s<r<t1} a_r) k_s v_sᵀ, summed from the end (no ratio)
        after = np.zeros(t1 - t0)
        after[:-1] = np.cumsum(la[:0:-1])[::-1]
        written = (np.exp(after)[:, None] * K[t0:t1]).T @ V[t0:t1]  # (d_k, d_v)
        chunk_levels = [G[-1] * S for S in chunk_levels]
        if not chunk_levels:
            chunk_levels.append(np.zeros((d_k, d_v)))
            chunk_counts.append(0)
        chunk_levels[0] = written
        chunk_counts[0] = 1
    return LogLinearChunkTrace(C, starts, inter + intra, inter, intra, tuple(boundary))
