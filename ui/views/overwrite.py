"""The delta rules' overwrite in phases, for the gates page's animated step (assets/js/ease.js).

A delta-type rule's step is S_t = D S_{t−1} − erased + written (``gates.taken_apart``: erased =
β k (Sᵀk)ᵀ, written = β k vᵀ; D the rule's decay, diag(e^g) of ``sim.frame_parts``). The
browser shows that step in three phases on the rule's state heatmap:

- ``read``: the state decays to D S_{t−1}, and k reads back Sᵀk (the value it now returns);
- ``erase``: the part along k goes: D S_{t−1} − erased;
- ``write``: the new value is written: + written = S_t, the frame itself.

``phase_states`` gives, per compared delta rule, the state at the end of the first two phases
for every t (index t: on the way from t − 1 to t; t = 0 the empty state), as run data
``S{slot}@read`` and ``S{slot}@erase`` (ui/contract.py's FRAMES phase_sep); the heatmaps
turn them into frames (``ScaledHeatmap``). ``PhaseNote`` is the line above the states that
says which phase is on screen. Nothing here changes the rules' numbers: the phases are the
trace's own parts, and S_t is where the last phase ends.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ui.contract import FRAMES
from ui.fmt import cell, sub, vec
from ui.views import Readout

PHASES = ("read", "erase", "write")  # the names the player's tags carry, in order
SEP = FRAMES["phase_sep"]
TINY = 1e-9  # of the numbers' scale: below it a number is rounding residue (as the heatmaps')


def column(key: str, phase: str) -> str:
    """The run-data (and frame) key of ``key`` at the end of ``phase``: "S0@erase"."""
    return f"{key}{SEP}{phase}"


def decays(parts_of, rule: str, K, V, T: int) -> np.ndarray:
    """(T, d_k) the decay D of each token's step, diag(e^g) of the rule's first frame factor
    (``parts_of(rule, k, v, t)``: ``gates.frame_parts`` at token t)."""
    return np.stack([np.ravel(parts_of(rule, K[t], V[t], t)[0].decay) for t in range(T)])


def phase_states(states: np.ndarray, decay: np.ndarray, erased: np.ndarray) -> dict[str, np.ndarray]:
    """states (T, d_k, d_v) S_1 … S_T; decay (T, d_k); erased (T, d_k, d_v). Returns the state at
    the end of ``read`` (D S_{t−1}) and of ``erase`` (D S_{t−1} − erased), (T + 1, d_k, d_v) each,
    index 0 the empty state (no step leads to t = 0)."""
    before = np.concatenate([np.zeros((1, *states.shape[1:])), states[:-1]])  # S_{t−1}
    read = decay[:, :, None] * before
    empty = np.zeros((1, *states.shape[1:]))
    return {"read": np.concatenate([empty, read]), "erase": np.concatenate([empty, read - erased])}


def phase_texts(name: str, others: list[str], read_back, erased_norm, written_norm,
                decays: bool, T: int, small: bool, *, key: str = "k{s}",
                value: str = "v{s}") -> dict[str, list[str]]:
    """The note's text at rest and in each phase, per t (index t: the step to t; t = 0 has
    none). ``name``: the rule whose numbers are quoted (read_back (T, d_v), the erased and
    written parts' norms (T,)); ``others``: the other delta rules compared, named; ``key`` and
    ``value``: what that rule reads with and writes, ``{s}`` the token's subscript (Gated
    DeltaNet-2: "b ⊙ k{s}" and "w ⊙ v{s}")."""
    also = f" (and {', '.join(others)})" if others else ""
    rest = (f"<b>{name}</b>{also} overwrites in three phases: 1. read back, 2. erase, 3. write. "
            "<b>Step</b> shows them on its state.")
    out = {"text": [rest] * (T + 1), **{p: [rest] for p in PHASES}}
    tiny = TINY * max(float(np.abs(read_back).max(initial=0.0)), 1.0)  # rounding residue: "≈0"
    for t in range(1, T + 1):
        i, s = t - 1, sub(t)
        k, v = key.format(s=s), value.format(s=s)
        read = f"Sᵀk{s}" if k == f"k{s}" else f"({k})ᵀS"
        held = f" = {vec(read_back[i], tiny)}" if small else ""
        after = " after its decay" if decays else ""
        out["read"].append(f"1. <b>Read back</b>: {name}{also} reads its state{after} along "
                           f"{k}: {read}{held}, the value {k} returns now.")
        out["erase"].append(f"2. <b>Erase</b>: that value is taken out along k{s} "
                            f"(‖erased part‖ {equals(erased_norm[i], tiny)}).")
        out["write"].append(f"3. <b>Write</b>: the new value {v} goes in along k{s} "
                            f"(‖written part‖ {equals(written_norm[i], tiny)}).")
    return out


def equals(x: float, tiny: float) -> str:
    """"= 1.29", or "≈ 0" for rounding residue."""
    text = cell(x, tiny)
    return "≈ 0" if text == "≈0" else f"= {text}"


class PhaseNote(Readout):
    """The line above the states: ``run.data[key]`` at rest and ``run.data[column(key, p)]``
    in phase p, one text per t, all in one box of one size (one sizer: the longest of them)."""

    def frames(self, run) -> dict[str, list]:
        keys = [self.key, *(column(self.key, p) for p in PHASES if column(self.key, p) in run.data)]
        texts = [list(run.data[k]) for k in keys]
        boxed = super().frames(SimpleNamespace(data={self.key: [h for ts in texts for h in ts]}))
        n = len(texts[0])
        return {"text" + key[len(self.key):]: boxed["text"][j * n:(j + 1) * n]
                for j, key in enumerate(keys)}


FOCUS_COLOUR = "#E69F00"  # Okabe-Ito orange: apart from the heatmap's reds and blues
FOCUS_WIDTH = 3  # px


def add_focus(fig):
    """An outline round each row of a state heatmap, as strong as the row's share of the token's
    key (|kᵢ| / max |k|): where the read, the erase and the write act. Invisible at rest (alpha
    0); returns its data source (x, y, w, alpha per row), to bind ``data.alpha``."""
    from bokeh.models import ColumnDataSource  # noqa: PLC0415

    source = ColumnDataSource({"x": [], "y": [], "w": [], "alpha": []})
    fig.rect("x", "y", width="w", height=0.94, source=source, fill_alpha=0,
             line_color=FOCUS_COLOUR, line_width=FOCUS_WIDTH, line_alpha="alpha", level="overlay")
    return source


def focus_rows(source, rows: int, cols: int) -> None:
    """The outline's rows for a state of this shape (alpha 0 until a step's phases)."""
    if len(source.data["y"]) != rows or (rows and source.data["w"][0] != cols):
        source.data = {"x": [(cols - 1) / 2] * rows, "y": list(range(rows)), "w": [cols] * rows,
                       "alpha": [0.0] * rows}


def focus_frames(run, key: str, rows: int) -> dict[str, list]:
    """The outline's alpha: 0 at rest; in the read and erase phases the key's weights
    ``run.data[key + "_focus"]`` (T + 1, rows), fading out as the write ends the step."""
    n = run.t_max + 1
    out = {"focus": [[0.0] * rows] * n}
    weights = run.data.get(key + "_focus")
    if weights is not None:
        for phase in PHASES[:2]:
            out[column("focus", phase)] = np.asarray(weights, dtype=float).tolist()
    return out


def key_weights(K: np.ndarray) -> np.ndarray:
    """(T + 1, d_k) |kᵢ| / max |k| of each token's own key (DeltaProduct's: its last pair),
    t = 0 none."""
    k = np.abs(K[:, -1] if K.ndim == 3 else K)
    w = k / np.maximum(k.max(axis=1, keepdims=True), 1e-300)
    return np.concatenate([np.zeros((1, k.shape[1])), w])
