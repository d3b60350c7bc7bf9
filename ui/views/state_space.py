"""The state-space page's readout texts, one per t (ui/pages/state_space.py composes them)."""

from __future__ import annotations

import numpy as np

from ui.fmt import num, sub

STATE_TITLES = {"mamba": "Mamba: state h (d_inner × N)", "s4d": "S4D: state h",
                "mamba2": "Mamba-2: state h"}
NAMES = {"mamba": "Mamba", "s4d": "S4D", "mamba2": "Mamba-2"}
TABLE_CSS = ".lab-ssm td, .lab-ssm th {padding: 2px 12px 2px 0; text-align: left}"
LARGE = 0.5  # Δ above this: most of the state gives way to the input (exp(−Δ) < 0.61)


def caption(r: dict, t: int) -> str:
    """What Mamba's channel 1 did at token t: its Δ, what it kept, what it took, its output."""
    if t == 0:
        return ("<b>t = 0</b>: every state is empty. Press <b>Step</b>: a large Δ takes the "
                "input in, a small Δ keeps the state.")
    i = t - 1
    u, delta = r["u"][i, 0], r["x"]["delta_mamba"][i, 0]
    kept = r["decay"]["mamba"][i, 0]  # (N,) exp(Δ A[0, n])
    y, D = r["y"]["mamba"][i, 0], r["D"]
    read = y - D * u  # Cᵀh
    size = ("large: the state gives way to the input" if delta > LARGE else
            "small: the state keeps what it had")
    return (f"<b>t = {t}</b>: channel 1 gets u = {num(u)}; Mamba's Δ{sub(1)} = {num(delta)} "
            f"({size}); it keeps exp(Δ A) = {num(kept[0])} … {num(kept[-1])} of h and adds "
            f"Δ B u; y{sub(1)} = Cᵀh + D u = {num(read)} {'−' if D * u < 0 else '+'} "
            f"{num(abs(D * u))} = {num(y)}.")


def models_text(r: dict, t: int) -> str:
    """The three models at token t, channel 1: Δ, what they keep, ‖h‖ and y."""
    rows = []
    for m in ("mamba", "s4d", "mamba2"):
        if t == 0:
            cells = ["–"] * 4
        else:
            i = t - 1
            kept = r["decay"][m][i, 0]
            cells = [num(r["x"][f"delta_{m}"][i, 0]), f"{num(kept[0])} … {num(kept[-1])}"
                     if len(kept) > 1 and kept[0] != kept[-1] else num(kept[0]),
                     num(np.linalg.norm(r["h"][m][i])), num(r["y"][m][i, 0])]
        how = {"mamba": "Δ per channel and token; B, C from the token",
               "s4d": "fixed Δ, B, C: the same filter at every token",
               "mamba2": "one Δ per token for the head; A = −1, one scalar"}[m]
        rows.append(f"<tr><td>{NAMES[m]}</td><td>{how}</td><td>" + "</td><td>".join(cells)
                    + "</td></tr>")
    return ("<table class='lab-ssm'><thead><tr><th>model</th><th>how Δ, B, C are set</th><th>Δ (channel 1)</th>"
            "<th>exp(Δ A) kept</th><th>‖h‖</th><th>y (channel 1)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")
