"""The gates page's own views and readout texts (ui/pages/gates.py composes them).

- ``ScaledHeatmap``: a ``Heatmap`` whose colour scale follows t (a running maximum, so early
  tokens stay readable when a later state grows large, and a fading state pales), with at most
  about 8 tick labels per axis; as a slot of the comparison it takes its rule's name and hides
  itself when the run compares fewer rules.
- ``RuleLines``: one curve per compared rule, coloured by the rule's place.
- ``Note``: HTML that is the same for every t of a run.
- The readout texts, one per t: the caption, the token, the update taken apart, the gates table.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import Div

from ui.fmt import cell, num, sub, vec
from ui.theme import LINES
from ui.views import Heatmap, LinePlot, Readout, View, overwrite

TINY = Heatmap.TINY  # of a number's scale (1 for the relative errors): below it, "≈0"
MAX_TICKS = 8  # tick labels per axis, so that d = 16 stays legible in a small figure


class ScaledHeatmap(Heatmap):
    """``run.data[limits]`` (T + 1,): the colour scale's limit at each t (``limits`` defaults to
    ``key + "_limits"``; views that share one scale share the key). ``slot``:
    the index of the compared rule shown (its name is the title), or None for a fixed title.
    ``max_cols_labelled``: beyond this many columns the numbers go to the hover only."""

    COLORBAR_LEVEL = "overlay"  # its scale moves with t: repainted with the cells, not measured

    def __init__(self, key: str, title: str, *, limits: str | None = None,
                 slot: int | None = None, max_cols_labelled: int = 16, **kwargs):
        super().__init__(key, title, **kwargs)
        self.limits = limits or key + "_limits"
        self.slot, self.max_cols_labelled = slot, max_cols_labelled
        self.fig.min_border_right = 64  # room for colour-bar labels that lengthen ("−1000")
        self.bindings = [*self.bindings, (self.mapper, "low", "low"), (self.mapper, "high", "high"),
                         (self.bar_mapper, "low", "low"), (self.bar_mapper, "high", "high")]
        self.focus = overwrite.add_focus(self.fig) if slot is not None else None  # a rule's state
        if self.focus is not None:
            self.bindings.append((self.focus, "data.alpha", "focus"))

    def labelled(self) -> bool:
        return super().labelled() and self.cols <= self.max_cols_labelled

    def setup(self, run) -> None:
        run.data.setdefault(self.key + "_limit", float(np.max(run.data[self.limits])))
        super().setup(run)
        if self.slot is not None:
            labels = run.data["labels"]
            self.fig.visible = self.slot < len(labels)
            self.title = labels[self.slot] if self.fig.visible else ""
            self.fig.title.text = self.title
        if self.focus is not None:
            overwrite.focus_rows(self.focus, self.rows, self.cols)
        for ticker, n in ((self.xticks, self.cols), (self.yticks, self.rows)):
            ticks = list(range(0, n, -(-n // MAX_TICKS)))
            if list(ticker.ticks) != ticks:  # in place: a new ticker would be a new model
                ticker.ticks = ticks

    def frames(self, run) -> dict[str, list]:
        m = self._matrices(run)  # (T + 1, rows, cols)
        limits = np.asarray(run.data[self.limits], dtype=float)  # (T + 1,)
        limits = np.where(np.isfinite(limits) & (limits > 0), limits, 1.0)
        out = self._frames_of(m, limits)
        if self.focus is not None:
            out |= overwrite.focus_frames(run, self.key, m.shape[1])
        for phase in overwrite.PHASES:  # a delta rule's state in the phases of its step
            key = overwrite.column(self.key, phase)
            if key in run.data:
                part = self._frames_of(np.asarray(run.data[key], dtype=float), limits)
                out |= {overwrite.column(name, phase): part[name]
                        for name in ("image", "light", "dark") if name in part}
        return out

    def _frames_of(self, m: np.ndarray, limits: np.ndarray) -> dict[str, list]:
        flat = m.reshape(len(m), -1)
        n = flat.shape[1]
        small = n <= self.MAX_LABELLED  # numbers in the cells and in the text alternative
        texts = ([[cell(x, TINY * lim) for x in row] for row, lim in zip(flat.tolist(), limits)]
                 if small else [None] * len(m))
        out = {"image": [[f] for f in m], "low": (-limits).tolist(), "high": limits.tolist(),
               "alt": [self.summary(f, tx, lim) for f, tx, lim in zip(m, texts, limits)]}
        if self.labelled():
            out |= self.inked(texts, self.strong(flat, limits[:, None]))
        else:
            out |= self.unlabelled(len(m))
        return out

    def summary(self, m: np.ndarray, texts: list[str] | None, limit: float) -> str:
        """The text alternative at one t: every number up to 64 cells, else the largest."""
        head = f"{self.title}, {m.shape[0]} × {m.shape[1]}, colour scale ±{cell(limit)}"
        if texts is not None:
            rows = "; ".join(f"row {i}: " + ", ".join(texts[i * m.shape[1]:(i + 1) * m.shape[1]])
                             for i in range(m.shape[0]))
            return f"{head}: {rows}"
        i, j = np.unravel_index(int(np.argmax(np.abs(m))), m.shape)
        zero = int(np.sum(np.abs(m) < TINY * limit))
        return (f"{head}: largest entry {cell(m[i, j], TINY * limit)} at row {i}, column {j}; "
                f"{zero} of {m.size} entries are 0 or ≈0")


class RuleLines(LinePlot):
    """``run.data[f"{key}{i}"]`` (T,) for the compared rule i over x = 1 … T; the marker at t."""

    def __init__(self, title: str, key: str, *, y_label: str, slots: int, log: bool = False,
                 **kwargs):
        series = {f"rule {i + 1}": f"{key}{i}" for i in range(slots)}
        super().__init__(title, series, x="x", x_label="token t", y_label=y_label, marker="ts",
                         y_axis_type="log" if log else "linear", **kwargs)
        self.fig.legend.visible = False  # one legend in HTML serves every plot
        self.hover = self.fig.tools[-1]
        self.log = log

    def setup(self, run) -> None:
        super().setup(run)
        labels = run.data["labels"]
        for i, line in enumerate(self.fig.renderers):
            line.visible = i < len(labels)
        self.hover.tooltips = [("t", "@x"), *[(name, f"@{{rule {i + 1}}}{{0.[000]}}")
                                              for i, name in enumerate(labels)]]
        if self.log:  # within two decades the major ticks are 1, 2, … 10: minor ticks between
            # them crowd into a solid bar near each 10, so there are none
            ys = np.concatenate([run.data[k] for k in list(self.series.values())[:len(labels)]])
            ys = ys[np.isfinite(ys) & (ys > 0)]
            decades = np.log10(ys.max() / ys.min()) if len(ys) else 0.0
            minor = 10 if decades >= 2 else 0
            for axis in self.fig.yaxis:
                if axis.ticker.num_minor_ticks != minor:
                    axis.ticker.num_minor_ticks = minor

    def frames(self, run) -> dict[str, list]:
        labels, keys = run.data["labels"], list(self.series.values())
        alt = [f"{self.title}: no token yet"]
        for t in range(1, run.t_max + 1):
            values = ", ".join(f"{name} {cell(run.data[key][t - 1], TINY)}"
                               for name, key in zip(labels, keys))
            alt.append(f"{self.title} at token t = {t}: {values}")
        return {"marker": np.arange(run.t_max + 1), "alt": alt}


class Note(View):
    """HTML that is the same for every t of a run: ``run.data[key]``."""

    def __init__(self, key: str, **div):
        self.key = key
        self.div = Div(text="", **div)

    def panel(self):
        return pn.pane.Bokeh(self.div)

    def setup(self, run) -> None:
        if self.div.text != run.data[self.key]:
            self.div.text = run.data[self.key]


def legend(labels: list[str]) -> str:
    return " ".join(
        f'<span style="white-space:nowrap;margin-right:1em"><span style="display:inline-block;'
        f'width:22px;height:4px;vertical-align:middle;background:{LINES[i % len(LINES)]}">'
        f"</span> {name}</span>" for i, name in enumerate(labels))


# Per run: the notes, the CSV table and a named stop ---------------------------------------

RULE_NOTES = {  # what a compared rule does differently, said under the plots
    "rwkv6": "<b>RWKV-6 reads before it writes</b>: its output at token t reads "
             "S<sub>t−1</sub>, the state before the token's write, plus the bonus "
             "(q · (u ⊙ k<sub>t</sub>)) v<sub>t</sub>; its heatmap shows S<sub>t</sub>, after it.",
    "rwkv7": "<b>RWKV-7</b> erases (a ⊙ κ̂)(κ̂ᵀS<sub>t−1</sub>)ᵀ from the old state, before its "
             "decay w, with the unit removal key κ̂ = k / ‖k‖, and writes the key a ⊙ k. With one w and "
             "one a in every channel, what κ̂ read is kept w − a times (less than 0 when a > w), "
             "not erased to 0.",
    "deltaproduct": "<b>DeltaProduct</b> takes n<sub>h</sub> delta steps a token: the "
                    "n<sub>h</sub> − 1 pairs before it again, then its own, after one decay α.",
    "log_linear": "<b>Log-linear attention</b> keeps one state per Fenwick level ℓ; its heatmap "
                  "shows their sum (which moves as Mamba-2's), its output reads level ℓ with "
                  "weight λ = r<sup>ℓ</sup>.",
    "gdn2": "<b>Gated DeltaNet-2</b> splits β in two gates: it erases along k what the gated key "
            "b ⊙ k finds in the decayed state (b per key channel), and writes w ⊙ v (w per value "
            "channel). With b = w = β in every channel it is KDA; with one α as well, Gated DeltaNet.",
    "mamba1": "<b>Mamba-1</b> decays each cell: exp(Δ A) = α<sup>i+1</sup> in key channel i "
              "(A = −(i + 1), Δ = −log α per value channel; data-dependent, each value channel "
              "its own Δ).",
}


def recall_note(stream: str, rules=()) -> str:
    newest = ("query the rewritten key k₁, compare with the latest value written under it"
              if stream == "overwrite" else
              "query the key just written, compare with its value")
    notes = "".join(f"<br>{RULE_NOTES[r]}" for r in rules if r in RULE_NOTES)
    return (f"Recall error ‖Sᵀk − v‖ / ‖v‖ (0 exact, 1 as bad as returning nothing). "
            f"<b>Newest</b>: {newest}. <b>Old</b>: query the first token's key k₁, compare "
            "with the first value v₁." + notes)


def csv_table(rules, token_gates, norms, errors, errors_old, T) -> dict[str, list]:
    """Per token (t = 1 … T) and rule: ‖S_t‖, both recall errors and the gates used (RWKV's w
    under alpha and its rate a under beta; bonus, level_weights and Gated DeltaNet-2's erase
    and write only where a rule has them)."""
    extra = [n for n in ("bonus", "level_weights", "erase", "write")
             if any(n in token_gates(r, 0) for r in rules)]
    names = ("t", "rule", "state_norm", "recall_error_newest", "recall_error_old", "gamma",
             "alpha", "beta", *extra)
    table: dict[str, list] = {n: [] for n in names}

    def value(x):  # per channel (or cell, or sub-step): the values, space-separated
        if np.ndim(x):
            return " ".join(repr(float(a)) for a in np.ravel(x))
        return float(x) if isinstance(x, np.floating) else x

    for t in range(T):
        for rule in rules:
            g = token_gates(rule, t)
            row = (t + 1, rule, float(norms[rule][t]), float(errors[rule][t]),
                   float(errors_old[rule][t]), *(g.get(n, "") for n in names[5:]))
            for n, x in zip(names, row):
                table[n].append(value(x))
    return table


def first_repeat(k: np.ndarray) -> int:
    """The first token t (1-based) whose key points where an earlier key did; -1 if none."""
    unit = k / np.linalg.norm(k, axis=1, keepdims=True)  # (T, d)
    same = np.tril(np.abs(unit @ unit.T) > 1 - 1e-9, -1)  # (T, T): i repeats j < i
    hits = np.flatnonzero(same.any(axis=1))
    return int(hits[0]) + 1 if len(hits) else -1


# Readout texts, one per t ----------------------------------------------------------------------

def gate_text(g) -> str:
    """A gate: one number, or the per-channel values when they differ."""
    if np.ndim(g) == 0:
        return num(g)
    return f"{num(g[0])} in every channel" if np.all(g == g[0]) else vec(g)


def caption(r: dict, t: int) -> str:
    """One line: what the inspected delta rule did at token t, and the newest-value errors."""
    if t == 0:
        return "<b>t = 0</b>: every state is empty. Press <b>Step</b> to write the first token."
    i, rule, other = t - 1, r["inspected"], r["other"]
    name = r["labels"][rule]
    held = r["held"][i]  # ‖Sᵀk‖: what k_t retrieved before the write
    strength = r["strength"][i]  # β‖k‖²: the share of it the write replaces
    share = "all" if abs(strength - 1) < TINY else num(strength)
    nothing = held < TINY * r["vec_limits"][t]
    if rule == "gdn2":
        w = gate_text(r["token_gates"](rule, i)["write"])
        did = (f"b ⊙ k{sub(t)} found nothing yet, so Gated DeltaNet-2 wrote w ⊙ v{sub(t)} (w = {w}), "
               "as a plain sum would" if nothing else
               f"Gated DeltaNet-2 erased {share} of what k{sub(t)} held (the gated key b ⊙ k{sub(t)} "
               f"found ‖(b ⊙ k)ᵀS‖ = {num(held)}) and wrote w ⊙ v{sub(t)} (w = {w})")
    elif rule == "rwkv7":
        did = (f"κ̂{sub(t)} read nothing in the old state, so RWKV-7 decayed it by w and wrote "
               f"(a ⊙ k{sub(t)}) v{sub(t)}ᵀ, as a plain sum would" if nothing else
               f"RWKV-7 erased {share} of what κ̂{sub(t)} read in the old state "
               f"(‖κ̂ᵀS‖ = {num(held)}), decayed it by w and wrote (a ⊙ k{sub(t)}) v{sub(t)}ᵀ")
    else:
        did = (f"k{sub(t)} held nothing yet, so {name} wrote {num(r['beta'][i])} × v{sub(t)}, "
               "as a plain sum would" if nothing else
               f"{name} erased {share} of what k{sub(t)} held (‖Sᵀk‖ = {num(held)}) and wrote "
               + (f"v{sub(t)} in its place" if share == "all" else f"{share} × v{sub(t)}"))
        if rule == "deltaproduct" and r["n_h"] > 1:
            did = f"in the last of its {r['n_h']} steps, {did}"
    errors = r["errors"]
    line = f"<b>t = {t}</b>: {did}; its newest-value error is {cell(errors[rule][i], TINY)}"
    if other is not None:
        line += f"; {r['labels'][other]}'s is {cell(errors[other][i], TINY)}"
    return line + "."


def token_text(r: dict, t: int) -> str:
    stream = r["stream"]
    if t == 0:  # the caption says t = 0; this says what comes (and keeps its box filled)
        first = f" ({stream.labels[0]})" if stream.labels else ""
        return (f"{stream.description} Next, token 1{first}: k = {vec(r['k'][0])}, "
                f"v = {vec(r['v'][0])}.")
    label = stream.labels[t - 1] if stream.labels else f"token {t}"
    norms = " · ".join(f"{r['labels'][rule]}: ‖S‖ = {num(r['norms'][rule][t - 1])}"
                       + (" (its output read S before this write)" if rule == "rwkv6" else "")
                       for rule in r["rules"])
    return f"<b>t = {t}</b> ({label}): k = {vec(r['k'][t - 1])}, v = {vec(r['v'][t - 1])}<br>{norms}"


def delta_text(r: dict, t: int) -> str:
    rule = r["inspected"]
    extra = (" (not among the rules compared above)" if rule not in r["rules"] else
             " (the first delta rule compared)" if r["auto"] else "")
    if t == 0:
        return f"<b>{r['labels'][rule]}</b>{extra}: no update yet."
    g = r["token_gates"](rule, t - 1)
    tiny = TINY * r["vec_limits"][t]  # as in the heatmap of the same numbers
    small = r["k"].shape[1] <= 8
    head = f"<b>{r['labels'][rule]}</b>{extra}, token t = {t}: {gate_words(rule, g, r['n_h'])}. "
    if rule == "rwkv7":
        parts = (f"The removal key κ̂ = k / ‖k‖ reads the old state: κ̂ᵀS = "
                 f"{vec(r['read_back'][t - 1], tiny)}, error v − κ̂ᵀS = "
                 f"{vec(r['error'][t - 1], tiny)}. " if small else "")
        return (head + parts + "New S = diag(w) S<sub>t−1</sub> − erased part + written part: "
                "it erases from the state before its decay.")
    if rule == "gdn2":
        parts = (f"The gated key b ⊙ k reads the decayed state: (b ⊙ k)ᵀS = "
                 f"{vec(r['read_back'][t - 1], tiny)}, error w ⊙ v − (b ⊙ k)ᵀS = "
                 f"{vec(r['error'][t - 1], tiny)}. " if small else "")
        return (head + parts + "New S = decayed S − k (what b ⊙ k read)ᵀ + k (w ⊙ v)ᵀ: "
                "erase and write each have their own gate.")
    parts = (f"Read back Sᵀk = {vec(r['read_back'][t - 1], tiny)}, error v − Sᵀk = "
             f"{vec(r['error'][t - 1], tiny)}" if small else "")
    if rule == "deltaproduct":
        parts = (parts and f"{parts} in its last step, the token's own pair. ")
        return (head + parts + "New S = decayed S − erased parts + written parts, summed over "
                "its steps (each step erases from the state the step before left).")
    decay = f"decay α = {gate_text(g['alpha'])}, " if "alpha" in g else ""
    return (f"<b>{r['labels'][rule]}</b>{extra}, token t = {t}: {decay}β = {num(g['beta'])}. "
            f"{parts and parts + '. '}New S = decayed S − erased part + written part.")


def gate_words(rule: str, g: dict, n_h: int = 1) -> str:
    """The gates ``rule`` used at one token, in words and numbers."""
    if rule == "rwkv7":
        return f"decay w = {gate_text(g['alpha'])}, in-context learning rate a = {gate_text(g['beta'])}"
    if rule == "rwkv6":
        return (f"decay w = {gate_text(g['alpha'])}, bonus u = {gate_text(g['bonus'])}; "
                "its output read S before this token's write")
    if rule == "deltaproduct":
        beta = g["beta"]
        b = (f"β = {num(beta[0])} in each of its {len(beta)} steps" if np.all(beta == beta[0])
             else f"β = {vec(beta)} in its {len(beta)} steps")
        return f"decay α = {num(g['alpha'])}, {b}"
    if rule == "gdn2":
        return (f"decay α = {gate_text(g['alpha'])}, erase gate b = {gate_text(g['erase'])}, "
                f"write gate w = {gate_text(g['write'])}")
    if rule == "log_linear":
        return f"decay α = {num(g['alpha'])}, level weights λ = {vec(g['level_weights'])}"
    if rule == "mamba1":
        a = g["alpha"]  # (d_k, d_v)
        same = np.all(a == a[:, :1])
        return ("decay exp(Δ A) = " + (f"{vec(a[:, 0])} per key channel, the same in every value "
                                       "channel" if same else
                                       f"{vec(a[:, 0])} in value channel 1, each its own Δ"))
    return ", ".join(f"{sym} = {gate_text(g[n])}" for n, sym in
                     (("gamma", "γ"), ("alpha", "α"), ("beta", "β")) if n in g) or "no gate"


def gates_table(r: dict, t: int) -> str:
    """Each rule's gates at token t and its errors; before the first token (t = 0), the gates
    token 1 will use, without errors (an empty box there read as a missing table)."""
    rows = []
    for rule in r["rules"]:
        g = r["token_gates"](rule, max(t - 1, 0))
        used = gate_words(rule, g, r["n_h"])
        new, old = ((cell(r["errors"][rule][t - 1], TINY), cell(r["errors_old"][rule][t - 1], TINY))
                    if t else ("–", "–"))
        rows.append(f"<tr><td>{r['labels'][rule]}</td><td>{used}</td><td>{new}</td>"
                    f"<td>{old}</td></tr>")
    when = "" if t else "<caption>before the first token: the gates token 1 will use</caption>"
    return (f"<table class='lab-gates'>{when}<thead><tr><th>rule</th><th>gates used</th>"
            "<th>error, newest</th><th>error, old</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")


# One frame for the family ----------------------------------------------------------------

# rule -> (decay e^g, b, a, written key) in symbols, for the first factor and any later one
# (DeltaProduct's steps 2 … n_h); None: the rule has no erase. "rate" is RWKV-7's in-context
# learning rate a, renamed here so as not to clash with the frame's own a.
FRAME_SYMBOLS = {
    "linear": ("1", None, None, "k"), "retnet": ("γ", None, None, "k"),
    "mamba2": ("α", None, None, "k"), "gla": ("α", None, None, "k"),
    "deltanet": ("1", "β k", "−k", "β k"), "gated_deltanet": ("α", "α β k", "−k", "β k"),
    "kda": ("α", "β k", "−α ⊙ k", "β k"), "rwkv7": ("w", "rate ⊙ κ̂", "−κ̂", "rate ⊙ k"),
    "deltaproduct": ("α", "α β k₁", "−k₁", "β k₁"), "rwkv6": ("w", None, None, "k"),
    "log_linear": ("α", None, None, "k"), "mamba1": ("α^(i+1)", None, None, "k"),
    "gdn2": ("α", "k", "−α ⊙ erase ⊙ k", "k"),  # erase: its gate b, renamed as RWKV-7's rate
}
FRAME_LATER = ("1", "β kⱼ", "−kⱼ", "β kⱼ")  # DeltaProduct's steps after the first
FRAME_NAMES = {"rwkv6": "its update (it reads S<sub>t−1</sub> first)",
               "log_linear": "the sum of its levels", "mamba1": "the same Δ in every value channel",
               "gdn2": "its written value w ⊙ v"}


def frame_parts(rule: str, k, v, gates: dict):
    """``sim.frame_parts`` of ``rule`` at one token, or of the rule its state update is (RWKV-6:
    GLA with decay w; log-linear: the levels' sum is Mamba-2's; Mamba-1 with one Δ for every
    value channel: GLA with the decay of each key row). None: outside the frame (Mamba-1 with
    a Δ per value channel decays each cell, not each row)."""
    import sim  # noqa: PLC0415 — loads sim.family on first use

    if rule in sim.FRAME_RULES:
        return sim.frame_parts(rule, k, v, **gates)
    if rule == "rwkv6":
        return sim.frame_parts("gla", k, v, alpha=gates["alpha"])
    if rule == "log_linear":
        return sim.frame_parts("mamba2", k, v, alpha=gates["alpha"])
    a = gates["alpha"]  # mamba1: (d_k, d_v)
    return sim.frame_parts("gla", k, v, alpha=a[:, 0]) if np.all(a == a[:, :1]) else None


def short(a, tiny: float) -> str:
    """A frame vector: one number when every entry is the same, else its entries (2 decimals)."""
    a = np.ravel(a)
    if np.all(a == a[0]):
        return cell(a[0], tiny)
    return "(" + ", ".join(cell(x, tiny) for x in a) + ")"


def along(sym: str, x: np.ndarray, k: np.ndarray, tiny: float) -> str:
    """A frame vector in a table cell: as a multiple of the token's key k where it is one
    ("β k = 0.9 k", "−k"), else its entries; ``sym`` is what the rule makes it of."""
    kk = float(k @ k)
    c = float(x @ k) / kk if kk > 0 else 0.0
    if kk > 0 and np.abs(x - c * k).max() <= tiny:
        m = "k" if abs(c - 1) <= tiny else "−k" if abs(c + 1) <= tiny else f"{cell(c, tiny)} k"
        return sym if m == sym else f"{sym} = {m}"
    return f"{sym} = {short(x, tiny)}"


class FrameTable(Readout):
    """The frame table, one per t. It keeps its rows at every t (t = 0 included), so its box
    keeps its size without the sizer copy a ``Readout`` carries in every frame (which would
    double this page's largest readout)."""

    def frames(self, run) -> dict[str, list]:
        return {"text": list(run.data[self.key])}


def frame_table(r: dict, t: int) -> str:
    """Every compared rule at token t as S_t = (diag(e^g) + b aᵀ) S_{t−1} + k vᵀ: its decay,
    its erase b aᵀ and its written key (numbers from sim.frame_parts, as multiples of the token's
    key k where they are one), and how far the frame applied to S_{t−1} lands from the rule's
    S_t (≈0: the frame is the rule). At t = 0 the same rows, without numbers."""
    import sim  # noqa: PLC0415

    rows = []
    for rule in r["rules"]:
        K, V = r["inputs"][rule]
        states = r["states"][rule]  # (T, d_k, d_v)
        i = max(t - 1, 0)
        parts = frame_parts(rule, K[i], V[i], r["token_gates"](rule, i))
        name = r["labels"][rule] + (f", {FRAME_NAMES[rule]}" if rule in FRAME_NAMES else "")
        if parts is None:
            rows.append(f"<tr><td>{r['labels'][rule]}</td><td colspan='5'>outside the frame: "
                        "a decay per cell of S (each value channel its own Δ), not per key "
                        "row</td></tr>")
            continue
        before = states[t - 2] if t > 1 else np.zeros_like(states[0])
        tiny = TINY * max(float(np.abs(states[i]).max()), 1.0)
        gap = float(np.abs(sim.apply_frame(parts, before) - states[i]).max())
        k = r["k"][i]
        for j, f in enumerate(parts):
            decay, b, a, key = FRAME_SYMBOLS[rule] if j == 0 else FRAME_LATER
            if t == 0:
                cells = [decay, b or "none", a or "", key, ""]
            else:
                cells = [decay if decay == "1" else f"{decay} = {short(f.decay, tiny)}",
                         along(b, f.b, k, tiny) if b else "none",
                         along(a, f.a, k, tiny) if a else "", along(key, f.key, k, tiny),
                         cell(gap, tiny) if j == len(parts) - 1 else ""]
            label = name if len(parts) == 1 else f"{name}, step {j + 1}"
            rows.append(f"<tr><td>{label}</td><td>" + "</td><td>".join(cells) + "</td></tr>")
    when = "before the first token" if t == 0 else f"token t = {t}, k = the token's key"
    return (f"<table class='lab-gates'><caption>{when}</caption><thead><tr><th>rule</th>"
            "<th>decay e<sup>g</sup></th><th>b (writes)</th><th>a (reads)</th>"
            "<th>written key</th><th>largest |frame − S<sub>t</sub>|</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


FRAME_HEADING = ("One frame for the family: S<sub>t</sub> = (diag(e<sup>g</sup>) + b aᵀ) "
                 "S<sub>t−1</sub> + k vᵀ")


def token_gates(kwargs: dict, rule: str, t: int) -> dict:
    """``rule``'s gates at token t (0-based) from its run's keyword arguments (RWKV-6's bonus u
    is one for the run)."""
    return {n: (g[t] if isinstance(g, np.ndarray) and n != "bonus" else g)
            for n, g in kwargs[rule].items()}
