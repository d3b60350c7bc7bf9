"""The gates page's run (ui/pages/gates.py ``GatesPage.compute``): the gates per token, each
rule's inputs and ``sim.run`` call, its state's size and recall errors, and which settings
apply. The update of an erasing rule taken apart and the phases of its animated step are
ui/pages/gates_update.py's; the views that show them are in ui/views/gates.py.
"""

from __future__ import annotations

import numpy as np

from sim import registry
from ui.fmt import num

OWN_SETTINGS = {"retnet_decay": ("retnet",), "rwkv_decay": ("rwkv7", "rwkv6"),
                "learning_rate": ("rwkv7",),
                "bonus": ("rwkv6",), "householder_steps": ("deltaproduct",),
                "level_ratio": ("log_linear",), "erase_gate": ("gdn2",),
                "write_gate": ("gdn2",)}  # setting -> the rules that read it
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


def run_rules(page, rules: list[str], stream, k: np.ndarray, v: np.ndarray, gates: dict,
              labels: dict) -> tuple[dict, ...]:
    """Every rule of ``rules`` on the page's stream (k, v (T, d)): per rule, its inputs (keys,
    values) and ``sim.run`` keyword arguments (``rule_run``), its trace read with the newest
    value's queries, ‖S_t‖_F (T,), and the recall errors (T,) of the newest value (overwrite:
    the rewritten key's latest value; else the pair just written) and of the old one (the
    first pair, queried with its key k_1)."""
    import sim  # noqa: PLC0415

    T = len(k)
    old_q, old_target = np.repeat(k[:1], T, axis=0), np.repeat(v[:1], T, axis=0)
    new_q, new_target = (stream.q, stream.targets) if page.stream == "overwrite" else (k, v)
    kwargs, traces, norms, errors, errors_old, inputs = {}, {}, {}, {}, {}, {}
    for rule in rules:
        *inputs[rule], kwargs[rule] = rule_run(page, rule, k, v, gates)
        traces[rule] = run_named(labels[rule], rule, new_q, *inputs[rule], **kwargs[rule])
        old = run_named(labels[rule], rule, old_q, *inputs[rule], keep_states=False, **kwargs[rule])
        norms[rule] = np.linalg.norm(traces[rule].states, axis=(1, 2))  # (T,) ‖S_t‖_F
        errors[rule] = sim.recall.relative_error(traces[rule].outputs, new_target)  # (T,)
        errors_old[rule] = sim.recall.relative_error(old.outputs, old_target)  # (T,)
    return kwargs, traces, norms, errors, errors_old, inputs


def with_empty_first(a: np.ndarray) -> np.ndarray:
    """Frames t = 0 … T of a per-token array (T, …): nothing before the first token."""
    return np.concatenate([np.zeros((1, *a.shape[1:])), a])


def running_limits(a: np.ndarray, first: float) -> np.ndarray:
    """(T + 1,) a colour scale per t: ``first``, then the running max of |a| (T, rows, cols)."""
    return np.concatenate([[first], np.maximum.accumulate(np.abs(a).max(axis=(1, 2)))])



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


# The new rules' inputs ------------------------------------------------------------------

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
