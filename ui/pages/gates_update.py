"""The gates page's update taken apart (ui/pages/gates.py ``GatesPage.compute``): one erasing
rule's step split as S_t = decayed S − erased + written, the value it writes, the share it
erases, the phases of its animated step (ui/views/overwrite.py) and the update's heatmaps named
after it. Each rule that erases otherwise than β k (Sᵀk)ᵀ has its branch here; the rules'
inputs and ``sim.run`` calls are ui/pages/gates_run.py's.
"""

from __future__ import annotations

import numpy as np

from ui.views import overwrite
from ui.views.gates import frame_parts, token_gates

PART_TITLES = {  # erased, written, read-back
    "deltanet": ("Erased: β k (Sᵀk)ᵀ", "Written: β k vᵀ", "Sᵀk"),
    "rwkv7": ("Erased: (a ⊙ κ̂)(κ̂ᵀS)ᵀ", "Written: (a ⊙ k) vᵀ", "κ̂ᵀS"),
    "deltaproduct": ("Erased: Σⱼ βⱼ kⱼ (Sᵀkⱼ)ᵀ", "Written: Σⱼ βⱼ kⱼ vⱼᵀ", "Sᵀk"),
    # Gated DeltaNet-2 reads with the gated key b ⊙ k and writes w ⊙ v (its 4th: the value row)
    "gdn2": ("Erased: k ((b ⊙ k)ᵀS)ᵀ", "Written: k (w ⊙ v)ᵀ", "(b ⊙ k)ᵀS", "w ⊙ v"),
}
PHASE_SYMBOLS = {"gdn2": {"key": "b ⊙ k{s}", "value": "w ⊙ v{s}"}}  # ui/views/overwrite.py phase_texts


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
