"""The chunkwise-parallel form: masked matrices inside a chunk, the state carried between chunks.

The T tokens are cut into chunks of C tokens (the last chunk may be shorter). Chunk c covers
tokens [t_c, t_{c+1}) and starts from the carried state S_[c], the state after token t_c − 1
(S_[0] = S₀, the initial state). Inside a chunk every output is the sum of two parts,

    inter  (Γ ∘ Q_c) S_[c]       the carried state, decayed up to each token, read by its query
    intra  (M ∘ A_c) X_c         the chunk's own tokens, in masked-matrix form (as sim.parallel)

and the state is carried over the chunk in one matrix product:

    S_[c+1] = diag(Γ_last) S_[c] + (R ∘ K_c)ᵀ X_c

X_c is V_c for linear attention and the decay rules, and the written values U_c for the delta
rules (below). With C = 1 this is the recurrence of `sim.run`; with C = T it is the parallel
form of `sim.parallel`; in between, T / C sequential steps of C × C matrices.

Glossary (code name → symbol), per chunk of n ≤ C tokens, local index t, s = 0 … n−1:
    Q, K, V   (n, d_k), (n, d_k), (n, d_v)   the chunk's queries, keys (φ(q), φ(k) for linear
                                             attention with a feature map) and values
    log_a     (n, d_k)   log α_tc, the decay of every token and key channel (zeros: no decay)
    b         (n, d_k)   b_t = Σ_{r≤t} log α_r, decay since the chunk began, in logs
    G         (n, d_k)   Γ_t = exp(b_t): how much of S_[c] is left when token t reads
    R         (n, d_k)   R_s = exp(b_last − b_s) = Π_{s<r<n} α_r: how much of token s's write is
                         left at the chunk's end (summed from the end, never as a ratio)
    A         (n, n)     A_ts = Σ_c Q_tc K_sc exp(b_tc − b_sc) for s ≤ t, else 0 (mask M built in)
    beta      (n,)       β_t, the delta rules' write strength
    L         (n, n)     L_ts = β_t Σ_c K_tc K_sc exp(b_tc − b_sc) for s < t, else 0
    T_ut      (n, n)     the UT transform  (I + L)⁻¹ diag(β)
    w, u      (n, d_k), (n, d_v)   the WY representation  w = T_ut (Γ ∘ K),  u = T_ut V
    written   (n, d_v)   the values the delta rule really writes, u − w S_[c]; row t equals
                         β_t (v_t − (decayed S_{t−1})ᵀ k_t) of the recurrence

Delta rules (DeltaNet, Gated DeltaNet, KDA). Each token writes u_t = β_t (v_t − (D_t S_{t−1})ᵀ k_t),
and D_t S_{t−1} = diag(Γ_t) S_[c] + Σ_{s<t} diag(exp(b_t − b_s)) k_s u_sᵀ inside the chunk, so the
chunk's written values solve one unit lower-triangular system,

    (I + L) U = diag(β) (V − (Γ ∘ K) S_[c])   ⇒   U = u − w S_[c]    (the UT / WY form),

as in flash-linear-attention's chunk_delta_rule reference; then o = (Γ ∘ Q) S_[c] + A U and
S_[c+1] = diag(Γ_last) S_[c] + (R ∘ K)ᵀ U. `w` and `u` depend only on the chunk's own tokens,
which is what lets every chunk build them in parallel.

Linear attention with normalize=True carries z as well: z_[c+1] = z_[c] + Σ_s φ(k_s), and each
output is divided by φ(q_t)·z_t = φ(q_t)·z_[c] + Σ_{s≤t} A_ts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import validation as check
from .decayed_attention import decayed_write
from .delta_rule import delta_write
from .features import FEATURE_MAPS, apply_feature_map
from .linear_attention import linear_read, linear_write
from .parallel import decayed_scores_unchecked, forward_substitution
from .registry import RULE_INFO, RULES, rules_of
from .rule_inputs import run_decays

Array = np.ndarray

CHUNKWISE_RULES: tuple[str, ...] = (
    "linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda",
)
_DELTA_RULES = rules_of("delta", RULES)


@dataclass(frozen=True, eq=False)
class ChunkTrace:
    """A chunkwise run of T tokens in chunks of `chunk_size`; n_chunks = ⌈T / C⌉.

    rule:            the rule's name.
    chunk_size:      C.
    starts:          (n_chunks + 1,) first token of every chunk, then T: chunk c is
                     tokens starts[c] … starts[c+1] − 1.
    outputs:         (T, d_v) o_t, the same as `sim.run(...).outputs`.
    inter:           (T, d_v) the part read from the carried state, (Γ ∘ Q) S_[c].
    intra:           (T, d_v) the part from the chunk's own tokens, A X.
                     outputs = inter + intra (divided by `normalizers` when normalised).
    boundary_states: (n_chunks + 1, d_k, d_v) S_[c], the state entering chunk c; the last is the
                     final state. boundary_states[c] = sim.run(...).states[starts[c] − 1].
    scores:          n_chunks arrays (n_c, n_c), each chunk's masked decayed score matrix A.
    boundary_z:      (n_chunks + 1, d_k) z_[c], linear attention only (else None).
    normalizers:     (T,) φ(q_t)·z_t, linear attention with normalize=True only (else None).
    w, u:            (T, d_k), (T, d_v) the WY representation of each chunk, delta rules only.
    written:         (T, d_v) u − w S_[c], the values written (β_t times `sim.run`'s errors).
    transforms:      n_chunks arrays (n_c, n_c), the UT transform (I + L)⁻¹ diag(β), delta only.
    """

    rule: str
    chunk_size: int
    starts: Array
    outputs: Array
    inter: Array
    intra: Array
    boundary_states: Array
    scores: tuple[Array, ...]
    boundary_z: Array | None = None
    normalizers: Array | None = None
    w: Array | None = None
    u: Array | None = None
    written: Array | None = None
    transforms: tuple[Array, ...] | None = None

    @property
    def n_chunks(self) -> int:
        return len(self.starts) - 1

    @property
    def final_state(self) -> Array:
        """(d_k, d_v) S_T."""
        return self.boundary_states[-1]

    def chunk(self, c: int) -> slice:
        """The tokens of chunk c, as a slice into the (T, ...) arrays."""
        return slice(int(self.starts[c]), int(self.starts[c + 1]))


def _log_decays(rule: str, decays: list[Any], T: int, d_k: int) -> Array:
    """log α (T, d_k) for every rule from the per-token decays `sim.run` uses (float, (d_k,)
    row or None): zeros where the rule does not decay."""
    if rule in ("linear", "deltanet"):
        return np.zeros((T, d_k))
    if RULE_INFO[rule].alpha_shape == "channel":
        return np.log(np.array(decays))  # (T, d_k)
    return np.repeat(np.log(np.array(decays, dtype=float))[:, None], d_k, axis=1)


def _chunk_decays(log_a: Array) -> tuple[Array, Array]:
    """G = exp(b) (n, d_k), decay since the chunk began, and R (n, d_k), decay from each token
    to the chunk's end, R_s = exp(Σ_{s<r<n} log α_r), summed from the end so no ratio of two
    small products is ever formed."""
    G = np.exp(np.cumsum(log_a, axis=0))
    after = np.zeros_like(log_a)  # after[s] = Σ_{r>s} log α_r
    after[:-1] = np.cumsum(log_a[:0:-1], axis=0)[::-1]
    return G, np.exp(after)


def _replay(rule: str, t0: int, t1: int, S: Array, z: Array, Q: Array, K: Array, V: Array,
            decays: list[Any], beta: Array | None, normalize: bool) -> None:
    """Tokens t0 … t1 − 1 by the recurrence, with `sim.run`'s own kernels and checks, from the
    carried S_[c] (and z_[c]): raises the DivergenceError (or ValueError) `sim.run` raises
    there, naming the same token. Q, K are already feature-mapped."""
    for t in range(t0, t1):
        if rule == "linear":
            S, z = linear_write(S, z, K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)
            linear_read(S, z, Q[t], normalize, t)
        elif beta is not None:
            S = delta_write(S, decays[t], K[t], V[t], float(beta[t]))[0]
            if not check.state_norm_ok(S):
                raise check.divergence(t, S, K[t], float(beta[t]))
        else:
            S = decayed_write(S, decays[t], K[t], V[t])
            if not check.state_norm_ok(S):
                raise check.divergence(t, S)


def _sound(pieces: list[Array], S_next: Array, normalizers: Array | None) -> bool:
    """A chunk's pieces (the last two its inter and intra parts) all finite, its carried state
    within the divergence bound, and its normalised outputs (when normalised) defined."""
    ok = all(np.isfinite(p).all() for p in pieces) and check.state_norm_ok(S_next)
    if ok and normalizers is not None:
        ok = bool(np.all(normalizers != 0.0) and np.isfinite(normalizers).all()
                  and np.isfinite((pieces[-2] + pieces[-1]) / normalizers[:, None]).all())
    return ok


def run_chunkwise(rule: str, q: Any, k: Any, v: Any, *, chunk_size: int,
                  **params: Any) -> ChunkTrace:
    """Run `rule` chunk by chunk: q, k (T, d_k), v (T, d_v), chunks of `chunk_size` tokens.

    Same rules, gates and options as `sim.run` (softmax attention excepted: it keeps no state to
    carry): linear (feature_map, normalize, initial_z), retnet (gamma), mamba2 (alpha (T,)),
    gla (alpha (T, d_k)), deltanet (beta (T,)), gated_deltanet (alpha (T,), beta (T,)),
    kda (alpha (T, d_k), beta (T,)); initial_state (d_k, d_v) for all; keep_states is accepted
    and ignored (only the chunk boundaries are kept). Any C ≥ 1 works, including C ≥ T (one
    chunk) and C not dividing T (a shorter last chunk). Returns a `ChunkTrace`.

    Held to `sim.run`: the same checks on the inputs (ValueError naming the argument), the same
    outputs at every β‖k‖² (the delta rules' written values come from a forward substitution of
    (I + L) U = diag(β)(V − (Γ ∘ K) S_[c]) row by row, the order of the recurrence, which stays
    accurate where a transition I − β k kᵀ expands, β‖k‖² > 2; the UT transform formed first and
    applied to V and Γ ∘ K separately loses every digit there at C = 64), and the same
    DivergenceError naming the same token: a chunk whose state might pass 1e150 at any of its
    tokens (bounded by ‖S_[c]‖ + Σ_s ‖k_s‖‖x_s‖) is replayed token by token with `sim.run`'s own
    kernels. Sizes: min(C, T)²·d_k numbers per chunk's decay products and the (⌈T/C⌉ + 1) boundary
    states at most 2^27 numbers.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked, not warned
        return _run_chunkwise(rule, q, k, v, chunk_size, params)


def _run_chunkwise(rule: str, q: Any, k: Any, v: Any, chunk_size: Any,
                   params: dict[str, Any]) -> ChunkTrace:
    check.check_choice("rule", rule, CHUNKWISE_RULES)
    info = RULE_INFO[rule]
    check.check_params(rule, params, info.options, info.gates)
    C = check.check_positive_int("chunk_size", chunk_size)
    Q = check.check_array("q", q, (None, None), "(T, d_k)")
    T, d_k = Q.shape
    K = check.check_array("k", k, (T, d_k), "(T, d_k)")
    V = check.check_array("v", v, (T, None), "(T, d_v)")
    d_v = V.shape[1]
    check.check_input_sizes(Q, K, V)
    n = min(C, T)
    check.check_run_size(T, d_k, d_v, keep_states=False)
    check.check_budget("chunk_size", n * n * d_k, check.MAX_NUMBERS,
                       f"one chunk's decay products (min(C, T)² · d_k = {n:,}² · {d_k:,})")
    check.check_budget("chunk_size", n * n * (d_k + d_v) * -(-T // n), check.MAX_WORK,
                       "the multiply-adds of the chunks' matrices")
    check.check_budget("chunk_size", (-(-T // C) + 1) * d_k * d_v, check.MAX_NUMBERS,
                       "the numbers of the boundary states ((⌈T/C⌉ + 1) · d_k · d_v)")
    S = np.zeros((d_k, d_v))
    if params.get("initial_state") is not None:
        S = check.check_start("initial_state", check.check_array(
            "initial_state", params["initial_state"], (d_k, d_v), "(d_k, d_v)"),
            check.DIVERGENCE_NORM)

    linear = rule == "linear"
    delta = rule in _DELTA_RULES
    normalize = False
    z = np.zeros(d_k)
    if linear:
        name = check.check_choice("feature_map", params.get("feature_map", "identity"),
                                  FEATURE_MAPS)
        normalize = params.get("normalize", False)
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"normalize: expected True or False, got {check.describe(normalize)}")
        normalize = bool(normalize)
        if params.get("initial_z") is not None:
            z = check.check_start("initial_z", check.check_array(
                "initial_z", params["initial_z"], (d_k,), "(d_k,)"), check.DIVERGENCE_NORM)
        Q, K = apply_feature_map(name, Q), apply_feature_map(name, K)
    decays = run_decays(rule, info, params, T, d_k)  # per token, as sim.run takes them
    log_a = _log_decays(rule, decays, T, d_k)  # (T, d_k)
    beta = check.check_beta("beta", params["beta"], (T,), "(T,)") if delta else None

    starts = np.append(np.arange(0, T, C), T)  # (n_chunks + 1,)
    n_chunks = len(starts) - 1
    states = np.empty((n_chunks + 1, d_k, d_v))
    states[0] = S
    zs = np.empty((n_chunks + 1, d_k)) if linear else None
    inter, intra = np.empty((T, d_v)), np.empty((T, d_v))
    normalizers = np.empty(T) if normalize else None
    w, u, written = (np.empty((T, d_k)), np.empty((T, d_v)), np.empty((T, d_v))) if delta else (
        None, None, None)
    scores: list[Array] = []
    transforms: list[Array] = []
    if zs is not None:
        zs[0] = z
    key_norms = np.linalg.norm(K, axis=1)  # (T,) for the bound on every token's state

    for c in range(n_chunks):
        t0, t1 = int(starts[c]), int(starts[c + 1])
        Qc, Kc, Vc, la = Q[t0:t1], K[t0:t1], V[t0:t1], log_a[t0:t1]  # (n, ·)
        G, R = _chunk_decays(la)  # (n, d_k) each
        A = decayed_scores_unchecked(Qc, Kc, la)  # (n, n), lower with diagonal
        X = Vc  # (n, d_v) what the chunk writes
        pieces = [A]
        if delta:
            assert beta is not None and w is not None and u is not None and written is not None
            bc = beta[t0:t1]  # (n,)
            # (n, n) strictly lower
            L = bc[:, None] * np.tril(decayed_scores_unchecked(Kc, Kc, la), k=-1)
            T_ut = forward_substitution(L, np.diag(bc))  # (n, n) UT transform (I + L)⁻¹ diag(β)
            w[t0:t1] = T_ut @ (G * Kc)  # (n, d_k)
            u[t0:t1] = T_ut @ Vc  # (n, d_v)
            # The written values from the right-hand side itself, row by row: u − w S_[c] in
            # exact arithmetic, without the cancellation of two large products.
            X = written[t0:t1] = forward_substitution(L, bc[:, None] * (Vc - (G * Kc) @ S))
            transforms.append(T_ut)
            pieces += [T_ut, w[t0:t1], u[t0:t1], X]
        inter[t0:t1] = (G * Qc) @ S
        intra[t0:t1] = A @ X
        pieces += [inter[t0:t1], intra[t0:t1]]
        if normalizers is not None:
            normalizers[t0:t1] = Qc @ z + A.sum(axis=1)
        S_next = G[-1][:, None] * S + (R * Kc).T @ X  # (d_k, d_v)
        # ‖S_t‖ ≤ ‖S_[c]‖ + Σ_{s≤t} ‖k_s‖‖x_s‖ for every token of the chunk (decays are ≤ 1)
        bound = float(np.sqrt(np.sum(S * S))) + float(key_norms[t0:t1] @ np.linalg.norm(X, axis=1))
        norm_c = normalizers[t0:t1] if normalizers is not None else None
        if not (bound <= check.DIVERGENCE_NORM and _sound(pieces, S_next, norm_c)):
            # near the limit: the recurrence decides, token by token, as sim.run would
            _replay(rule, t0, t1, S, z, Q, K, V, decays, beta, normalize)
            if not _sound(pieces, S_next, norm_c):
                raise check.DivergenceError(
                    f"chunk_size: the chunkwise form overflowed at token t={t0} (chunk {c}, "
                    f"tokens {t0}–{t1 - 1}): its in-chunk matrices leave float64 though the "
                    "recurrence stays finite; use a smaller chunk_size", t0)
        S = S_next
        states[c + 1] = S
        if zs is not None:
            z = z + Kc.sum(axis=0)
            zs[c + 1] = z
        scores.append(A)

    outputs = inter + intra
    if normalizers is not None:
        outputs = outputs / normalizers[:, None]
    return ChunkTrace(rule, C, starts, outputs, inter, intra, states, tuple(scores),
                      boundary_z=zs, normalizers=normalizers, w=w, u=u, written=written,
                      transforms=tuple(transforms) if delta else None)


# ---------------------------------------------------------------------------------------------
# Work and memory of the three forms.

@dataclass(frozen=True)
class FormCosts:
    """Work (operations), memory (numbers held at once) and sequential steps of the three forms.

    Every field broadcasts over the T and C given to `chunkwise_cost`: exact at every accepted
    size, Python ints for plain numbers, int64 arrays where every count is below 2^63 and
    arrays of Python ints (dtype object) beyond.
    """

    n_chunks: Any
    recurrent_ops: Any
    parallel_ops: Any
    chunkwise_ops: Any
    recurrent_numbers: Any
    parallel_numbers: Any
    chunkwise_numbers: Any
    recurrent_steps: Any
    parallel_steps: Any
    chunkwise_steps: Any


MAX_COST_SIZE = 2**31  # T, C, d_k, d_v: the counts reach 2^96 (exact as Python ints)
MAX_COST_ENTRIES = 2**20  # entries of a broadcast result (each field), a bounded amount of work


def _whole(name: str, x: Any) -> Array:
    """Sizes: whole numbers from 1 to 2³¹ (ints, or floats with no fraction), as int64."""
    kind = np.asarray(x).dtype.kind if not isinstance(x, (str, bytes)) else "U"
    if kind not in "iuf" or isinstance(x, bool):
        raise ValueError(f"{name}: expected whole numbers from 1 to 2³¹, got {check.describe(x)}")
    a = check.as_float_array(name, x)
    if a.size == 0 or np.any(~np.isfinite(a) | (a < 1) | (a != np.round(a))) or a.max() > MAX_COST_SIZE:
        raise ValueError(f"{name}: expected whole numbers from 1 to 2³¹, got {check.describe(x)}")
    return a.astype(np.int64)


def chunkwise_cost(T: Any, C: Any, d_k: Any, d_v: Any = None) -> FormCosts:
    """Work and memory of linear attention's three forms over T tokens, chunks of C; broadcasts.

    T, C, d_k, d_v: whole numbers from 1 to 2³¹ (a broadcast result of at most 2^20 entries);
    the counts are exact integers (see `FormCosts`), up to 2^96 at T = C = d = 2³¹.

    Operations count a multiply-add as two (as `sim.cost`); the score matrices are computed as
    full squares and then masked, as the masked-matrix forms do. Numbers held at once count the
    working memory beyond the inputs and outputs. n = ⌈T / C⌉ chunks, of sizes n_c; with
    T = a·C + r (0 ≤ r < C), Σ n_c² = a·C² + r².

        recurrent   ops 4·T·d_k·d_v          (write k vᵀ and read Sᵀq, per token)
                    numbers d_k·d_v          (the state)       steps T
        parallel    ops 2·T²·(d_k + d_v)     (Q Kᵀ, then (M ∘ Q Kᵀ) V)
                    numbers T²               (the T × T score matrix)     steps 1
        chunkwise   ops Σ_c [2·n_c²·(d_k + d_v)  +  4·n_c·d_k·d_v]
                        = 2·(d_k + d_v)·(a·C² + r²) + 4·T·d_k·d_v
                        (intra: Q_c K_cᵀ and A V_c; inter: Q_c S and the carry S + K_cᵀ V_c)
                    numbers min(C, T)² + d_k·d_v   (one chunk's score matrix and the state)
                    steps n = ⌈T / C⌉

    C = 1 gives 2·T·(d_k + d_v) more than the recurrence (each 1 × 1 "matrix" q·k times v);
    C ≥ T gives the parallel form plus 4·T·d_k·d_v for reading the (zero) initial state and
    carrying the final one. When C divides T the chunkwise work is 2·T·C·(d_k + d_v) +
    4·T·d_k·d_v, linear in T for a fixed C. Skipping the masked half of each square (only s ≤ t)
    would turn n² into n(n + 1)/2; the parallel form then matches
    `sim.cost.cumulative_attention_ops(T, d)` for d_k = d_v = d. Decay gates add lower-order
    terms; the delta rule's UT transform adds about 2·n_c²·(d_k + d_v) more per chunk (not
    counted here). GPU kernels that run every chunk at once keep all n boundary states
    (n·d_k·d_v numbers) instead of one.
    """
    scalar = all(np.ndim(x) == 0 for x in (T, C, d_k, d_v))
    sizes = (_whole("T", T), _whole("C", C), _whole("d_k", d_k),
             _whole("d_k", d_k) if d_v is None else _whole("d_v", d_v))
    shape = np.broadcast_shapes(*(a.shape for a in sizes))
    check.check_budget("T, C, d_k, d_v", math.prod(shape), MAX_COST_ENTRIES,
                       f"the entries of the broadcast result (shape {shape})")
    if scalar:  # Python ints: exact at every accepted size (up to 2^96)
        Ti, Ci, dk, dv = (int(a) for a in sizes)
    else:
        Ti, Ci, dk, dv = np.broadcast_arrays(*sizes)
        # int64 while the largest count, parallel_ops + recurrent_ops ≥ every field, fits;
        # beyond, the same arithmetic on Python ints (object arrays), exact as the scalars.
        t, d1, d2 = int(Ti.max()), int(dk.max()), int(dv.max())
        if 2 * t * t * (d1 + d2) + 4 * t * d1 * d2 >= 2**63:
            Ti, Ci, dk, dv = (a.astype(object) for a in (Ti, Ci, dk, dv))
    full, rest = Ti // Ci, Ti % Ci
    n = full + (rest > 0)
    square_sum = full * Ci * Ci + rest * rest  # Σ_c n_c²
    state = dk * dv
    fields = dict(
        n_chunks=n,
        recurrent_ops=4 * Ti * state,
        parallel_ops=2 * Ti * Ti * (dk + dv),
        chunkwise_ops=2 * (dk + dv) * square_sum + 4 * Ti * state,
        recurrent_numbers=state,
        parallel_numbers=Ti * Ti,
        chunkwise_numbers=(Ci if Ci < Ti else Ti) ** 2 + state if scalar
        else np.minimum(Ci, Ti) ** 2 + state,
        recurrent_steps=Ti,
        parallel_steps=1 if scalar else np.ones_like(Ti),
        chunkwise_steps=n,
    )
    if scalar:
        return FormCosts(**{key: int(value) for key, value in fields.items()})
    return FormCosts(**{key: np.array(value) for key, value in fields.items()})
