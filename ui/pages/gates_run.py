"""The gates page's run (ui/pages/gates.py ``GatesPage.compute``): the gates per token, each
rule's inputs and ``sim.run`` call, the update of an erasing rule taken apart and the phases of
its animated step, and which settings apply. Numbers and the page's words; the views that show
them are in ui/views/gates.py.
"""

from __future__ import annotations

import numpy as np

from sim import registry
from ui.fmt import num
from ui.views import overwrite
from ui.views.gates import frame_parts, token_gates

OWN_SETTINGS = {"retnet_decay": ("retnet",), "rwkv_decay": ("rwkv7", "rwkv6"),
                "learning_rate": ("rwkv7",),
                "bonus": ("rwkv6",), "householder_steps": ("deltaproduct",),
                "level_ratio": ("log_linear",), "erase_gate": ("gdn2",),
                "write_gate": ("gdn2",)}  # setting -> the rules that read it
PART_TITLES = {  # erased, written, read-back
    "deltanet": ("Erased: β k (Sᵀk)ᵀ", "Written: β k vᵀ", "Sᵀk"),
    "rwkv7": ("Erased: (a ⊙ κ̂)(κ̂ᵀS)ᵀ", "Written: (a ⊙ k) vᵀ", "κ̂ᵀS"),
    "deltaproduct": ("Erased: Σⱼ βⱼ kⱼ (Sᵀkⱼ)ᵀ", "Written: Σⱼ βⱼ kⱼ vⱼᵀ", "Sᵀk"),
    # Gated DeltaNet-2 reads with the gated key b ⊙ k and writes w ⊙ v (its 4th: the value row)
    "gdn2": ("Erased: k ((b ⊙ k)ᵀS)ᵀ", "Written: k (w ⊙ v)ᵀ", "(b ⊙ k)ᵀS", "w ⊙ v"),
}
PHASE_SYMBOLS = {"gdn2": {"key": "b ⊙ k{s}", "value": "w ⊙ v{s}"}}  # ui/views/overwrite.py phase_texts
RATE_SPREAD = 0.1  # RWKV-7's in-context rate a (and GDN-2's gates), per token and channel: a + 0.1 ε in [0, 1]
DELTA_GATED = registry.rules_of("delta", registry.RULES)  # sim.RULES that take β
DELTA_RULES = registry.rules_of("delta")  # they erase: one update can be taken apart
ALPHA_MORE = tuple(r for r in registry.MORE_RULES  # sim.MORE_RULES that take the page's α
                   if registry.MORE_RULE_INFO[r].alpha_shape  # (RWKV's decay is its own w)
                   and r not in OWN_SETTINGS["rwkv_decay"])


def inspected_rule(page) -> str:
    """The delta rule whose update is taken apart: the chosen one, else the first compared
    (DeltaNet, run on the side, when none is)."""
    return (page.inspect if page.inspect != "auto"
            else next((r for r in page.rules if r in DELTA_RULES), "deltanet"))


def applies(page, name: str) -> bool:
    """Whether setting ``name`` changes the picture now (it is hidden otherwise): a rule's own
    setting while the rule is compared; the decay gate α while a rule that reads it is compared
    or taken apart (``rule_run``: sim's α-shaped rules and ALPHA_MORE; not linear attention,
    RetNet's fixed γ, DeltaNet or RWKV's own w)."""
    import sim  # noqa: PLC0415

    if name in OWN_SETTINGS:
        return bool(set(OWN_SETTINGS[name]) & set(page.rules))
    if name == "decay":
        return any(r in ALPHA_MORE or (r in sim.RULE_INFO and sim.RULE_INFO[r].alpha_shape)
                   for r in (*page.rules, inspected_rule(page)))
    return True


def draw_page_gates(page, T: int) -> dict[str, np.ndarray]:
    """The page's gates per token: alpha (T,), alpha_channel (T, d), beta (T,) (constant, or
    ``scenarios.draw_gates`` when data-dependent), RWKV's w and a, and Gated DeltaNet-2's erase
    and write gates, (T, d) each (w drawn as α is, the same draws around w; a, erase and write
    around the chosen values, each its own draws)."""
    from sim import scenarios  # noqa: PLC0415

    a, b, d, seed = page.decay, page.write_strength, page.d, page.seed
    if page.data_dependent_gates:
        out = scenarios.draw_gates(T, d, a, b, seed)
        w = scenarios.draw_gates(T, d, page.rwkv_decay, b, seed)["alpha_channel"]
        eps = np.random.default_rng([seed, 21]).standard_normal((3, T, d))
        rate, erase, write = (np.clip(x + RATE_SPREAD * e, 0.0, 1.0) for x, e in
                              zip((page.learning_rate, page.erase_gate, page.write_gate), eps))
    else:
        out = {"alpha": np.full(T, a), "alpha_channel": np.full((T, d), a), "beta": np.full(T, b)}
        w, rate = np.full((T, d), page.rwkv_decay), np.full((T, d), page.learning_rate)
        erase, write = np.full((T, d), page.erase_gate), np.full((T, d), page.write_gate)
    return out | {"w": w, "rate": rate, "erase": erase, "write": write}


def rule_run(page, rule: str, k: np.ndarray, v: np.ndarray, gates: dict) -> tuple:
    """(keys, values, keyword arguments) with which ``sim.run`` runs ``rule`` on the page's
    stream (k, v (T, d)), every gate per token (RWKV-6's bonus u per run). The stream's keys and
    values, except RWKV-7's written key a ⊙ k (RWKV's k_a = 1; removal key κ̂ = k / ‖k‖) and
    DeltaProduct's n_h pairs a token (T, n_h, d): the n_h − 1 pairs before the token again
    (a zero key before the first token), then its own, each with the token's β."""
    import sim  # noqa: PLC0415

    T, d = k.shape
    if rule == "retnet":
        return k, v, {"gamma": page.retnet_decay}
    if rule == "rwkv7":
        return gates["rate"] * k, v, {"alpha": gates["w"], "beta": gates["rate"],
                                      "removal_key": sim.l2_normalize(k)}
    if rule == "rwkv6":
        return k, v, {"alpha": gates["w"], "bonus": np.full(d, page.bonus)}
    if rule == "deltaproduct":
        n_h = page.householder_steps
        return householder_pairs(k, n_h), householder_pairs(v, n_h), {
            "alpha": gates["alpha"], "beta": np.repeat(gates["beta"][:, None], n_h, axis=1)}
    if rule == "log_linear":
        levels = page.level_ratio ** np.arange(sim.log_linear.n_levels(T))
        return k, v, {"alpha": gates["alpha"], "level_weights": np.tile(levels, (T, 1))}
    if rule == "mamba1":
        return k, v, {"alpha": mamba1_decay(gates["alpha_channel"])}
    if rule == "gdn2":
        return k, v, {"alpha": gates["alpha_channel"], "erase": gates["erase"], "write": gates["write"]}
    shape = sim.RULE_INFO[rule].alpha_shape
    kwargs = {"alpha": gates["alpha" if shape == "scalar" else "alpha_channel"]} if shape else {}
    return k, v, kwargs | ({"beta": gates["beta"]} if rule in DELTA_GATED else {})


def run_named(label: str, rule: str, q, k, v, **kwargs):
    """``sim.run``; a run that diverges says which rule, at which token, and what to change."""
    import sim  # noqa: PLC0415

    try:
        return sim.run(rule, q, k, v, **kwargs)
    except sim.DivergenceError as err:
        raise sim.DivergenceError(
            f"{label} diverged at token t = {err.token + 1}: its state grew past "
            "10¹⁵⁰ because each write over-corrected by more than it fixed; lower β or "
            "normalise the keys", err.token) from err


def with_empty_first(a: np.ndarray) -> np.ndarray:
    """Frames t = 0 … T of a per-token array (T, …): nothing before the first token."""
    return np.concatenate([np.zeros((1, *a.shape[1:])), a])


def running_limits(a: np.ndarray, first: float) -> np.ndarray:
    """(T + 1,) a colour scale per t: ``first``, then the running max of |a| (T, rows, cols)."""
    return np.concatenate([[first], np.maximum.accumulate(np.abs(a).max(axis=(1, 2)))])


def name_the_parts(page, rule: str) -> None:
    """The update's heatmaps named after the rule taken apart (DeltaNet's names by default)."""
    titles = PART_TITLES.get(rule, PART_TITLES["deltanet"])
    for view, title in zip((page.erased, page.written), titles[:2]):
        if view.title != title:
            view.title = view.fig.title.text = title
    value = titles[3] if len(titles) > 3 else "v"  # the value the rule writes
    rows = {0: value, 1: titles[2], 2: f"{value} − {titles[2]}"}
    axis = page.vectors.fig.yaxis[0]
    if axis.major_label_overrides != rows:
        axis.major_label_overrides = rows


def warnings(page, k: np.ndarray, beta: np.ndarray) -> str:
    """The remark above the plots: β > 1 overshoots; unnormalised keys over-correct."""
    out = []
    if page.write_strength > 1:  # the update panel always shows a delta rule
        out.append(f"Write strength β = {num(page.write_strength)} > 1 overshoots: each "
                   "write over-corrects, so the stored value swings past the new one.")
    if not page.normalize_keys:
        step = float(np.max(beta * np.sum(k * k, axis=1)))  # how far one write moves along k
        if step > 1:
            out.append(f"Keys are not normalised: β‖k‖² reaches {num(step)}, so the delta "
                       "rules over-correct" + (" and their state grows without bound "
                                               "(β‖k‖² > 2)." if step > 2 else "."))
    return " ".join(out)


def same_states(rules: list[str], states: dict, labels: dict) -> str:
    """Why rules compared look alike: those whose states S_t (T, d, d) are equal at every t here
    (RWKV-6 with w = 0.9 and log-linear with α = 0.9 hold RetNet's state exactly, with nothing
    saying why), named in one sentence; "" when every rule's state is its own."""
    groups: list[list[str]] = []
    for rule in rules:
        group = next((g for g in groups if np.allclose(states[g[0]], states[rule], rtol=1e-9, atol=1e-12)), None)
        group.append(rule) if group else groups.append([rule])
    out = []
    for group in (g for g in groups if len(g) > 1):
        names = [labels[r] for r in group]
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        out.append(f"{listed} hold the same state at every t here: with these settings their gates "
                   "are the same constants (none depends on the token), so their updates are one "
                   "and the same. They part where a gate follows the token.")
    return " ".join(out)


# The new rules' inputs and the update taken apart ------------------------------------------

def mamba1_decay(alpha: np.ndarray) -> np.ndarray:
    """Mamba-1's gate per cell of S from a decay per value channel j, alpha (T, d_v):
    exp(Δ_t[j] A[j, i]) with Δ_t[j] = −log α_t[j] and A[j, i] = −(i + 1) (S4D-real), i.e.
    α_t[j]^(i + 1): key channel i keeps less the larger i. Returns (T, d_k, d_v), d_k = d_v."""
    A = -np.arange(1, alpha.shape[1] + 1, dtype=float)  # (d_k,) the same for every channel j
    return np.exp(-np.log(alpha)[:, None, :] * A[None, :, None])


def householder_pairs(x: np.ndarray, n_h: int) -> np.ndarray:
    """(T, d) -> (T, n_h, d): sub-step j of token t takes row t − (n_h − 1 − j), zeros before
    the first token; the last sub-step is the token's own row."""
    T, d = x.shape
    out = np.zeros((T, n_h, d))
    for j in range(n_h):
        lag = n_h - 1 - j
        out[lag:, j] = x[: T - lag]
    return out


def taken_apart(rule: str, trace, k: np.ndarray, v: np.ndarray, kwargs: dict) -> tuple:
    """One erasing rule's update split as S_t = decayed S − erased + written, every token.

    Returns read_back (T, d_v) and error v − read_back (T, d_v) (DeltaProduct: its last
    sub-step, the token's own pair), erased and written (T, d_k, d_v) (DeltaProduct: summed over
    its sub-steps), and the write strength per token (T,) (RWKV-7: the rate a, (T, d_k); Gated
    DeltaNet-2: its erase gate b, (T, d_k)). RWKV-7 erases (a ⊙ κ̂)(κ̂ᵀS_{t−1})ᵀ from the old
    state, before its decay; the others from the decayed state (Gated DeltaNet-2: k ((b ⊙ k)ᵀ
    diag(α) S_{t−1})ᵀ, and it writes k (w ⊙ v)ᵀ; its read-back and error are the gated key's
    and w ⊙ v's)."""
    if rule == "rwkv7":
        read_back = trace.read_backs  # κ̂ᵀ S_{t−1}
        rate, kappa = kwargs["beta"], kwargs["removal_key"]  # (T, d_k) each
        erased = (rate * kappa)[:, :, None] * read_back[:, None, :]
        return read_back, v - read_back, erased, k[:, :, None] * v[:, None, :], rate
    if rule == "deltaproduct":
        beta, reads = kwargs["beta"], trace.read_backs  # (T, n_h), (T, n_h, d_v)
        erased = np.einsum("tj,tji,tjc->tic", beta, k, reads)
        written = np.einsum("tj,tji,tjc->tic", beta, k, v)
        return reads[:, -1], v[:, -1] - reads[:, -1], erased, written, beta[:, -1]
    if rule == "gdn2":
        read_back, value = trace.read_backs, kwargs["write"] * v  # (T, d_v) each
        return (read_back, value - read_back, k[:, :, None] * read_back[:, None, :],
                k[:, :, None] * value[:, None, :], kwargs["erase"])
    beta, read_back = kwargs["beta"], trace.read_backs  # (T,), (T, d_v)
    erased = k[:, :, None] * (beta[:, None] * read_back)[:, None, :]  # (T, d, d)
    written = k[:, :, None] * (beta[:, None] * v)[:, None, :]  # (T, d, d)
    return read_back, trace.errors, erased, written, beta


def written_value(rule: str, v: np.ndarray, kwargs: dict) -> np.ndarray:
    """(T, d_v) the value ``rule`` writes at each token, the first row of the update's vectors:
    Gated DeltaNet-2's w ⊙ v, every other rule's v."""
    return kwargs["write"] * v if rule == "gdn2" else v


def erase_share(rule: str, beta: np.ndarray, k: np.ndarray, kwargs: dict) -> np.ndarray:
    """(T,) the share of what the erasing key read that the write removes along it: β‖k‖²
    (RWKV-7: Σᵢ aᵢ κ̂ᵢ², its unit removal key weighed by the rate per channel; Gated
    DeltaNet-2: Σᵢ bᵢ kᵢ², its erase gate b per key channel, which is b‖k‖² when b is one
    number)."""
    if rule == "rwkv7":
        return np.sum(beta * kwargs["removal_key"] ** 2, axis=1)
    if rule == "gdn2":
        return np.sum(beta * k * k, axis=1)
    return beta * np.sum(k * k, axis=1)


def overwrite_phases(slots: list[str], erasing, labels: dict, traces, inputs, kwargs, *,
                     key: str = "overwrite_text") -> dict:
    """Run data for the animated step's phases (ui/views/overwrite.py): the state of each
    compared delta rule (``slots``: the compared rules, in slot order; those in ``erasing`` get
    phases) at the end of ``read`` and ``erase``, under ``S{slot}@read`` / ``S{slot}@erase``,
    and the note's texts under ``key`` (+ ``@phase``), its numbers from the first of them."""
    delta = [(i, r) for i, r in enumerate(slots) if r in erasing]
    T = len(traces[slots[0]].states)
    if not delta:
        return {key: ["None of the rules compared erases before it writes: add DeltaNet or "
                      "Gated DeltaNet to see an overwrite in its phases."] * (T + 1)}
    out, first = {}, None
    for i, rule in delta:
        K, V = inputs[rule]
        read_back, _, erased, written, _ = taken_apart(rule, traces[rule], K, V, kwargs[rule])
        decay = overwrite.decays(lambda r, k, v, t: frame_parts(r, k, v, token_gates(kwargs, r, t)),
                                 rule, K, V, T)
        for phase, states in overwrite.phase_states(traces[rule].states, decay, erased).items():
            out[overwrite.column(f"S{i}", phase)] = states
        out[f"S{i}_focus"] = overwrite.key_weights(K)
        if first is None:
            first = (rule, read_back, np.linalg.norm(erased, axis=(1, 2)),
                     np.linalg.norm(written, axis=(1, 2)), bool(np.any(decay != 1)))
    rule, read_back, erased_norm, written_norm, decays = first
    others = [labels[r] for _, r in delta if r != rule]
    symbols = PHASE_SYMBOLS.get(rule, {})  # what it reads with and writes, if not k and v
    texts = overwrite.phase_texts(labels[rule], others, read_back, erased_norm, written_norm,
                                  decays, T, small=read_back.shape[1] <= 8, **symbols)
    return out | {key: texts["text"], **{overwrite.column(key, p): texts[p] for p in overwrite.PHASES}}
