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
from ui.views import Heatmap, LinePlot, View

TINY = Heatmap.TINY  # of a number's scale (1 for the relative errors): below it, "≈0"
MAX_TICKS = 8  # tick labels per axis, so that d = 16 stays legible in a small figure


class ScaledHeatmap(Heatmap):
    """``run.data[limits]`` (T + 1,): the colour scale's limit at each t (``limits`` defaults to
    ``key + "_limits"``; views that share one scale share the key). ``slot``:
    the index of the compared rule shown (its name is the title), or None for a fixed title.
    ``max_cols_labelled``: beyond this many columns the numbers go to the hover only."""

    def __init__(self, key: str, title: str, *, limits: str | None = None,
                 slot: int | None = None, max_cols_labelled: int = 16, **kwargs):
        super().__init__(key, title, **kwargs)
        self.limits = limits or key + "_limits"
        self.slot, self.max_cols_labelled = slot, max_cols_labelled
        self.fig.min_border_right = 64  # room for colour-bar labels that lengthen ("−1000")
        self.bindings = [*self.bindings, (self.mapper, "low", "low"), (self.mapper, "high", "high"),
                         (self.bar_mapper, "low", "low"), (self.bar_mapper, "high", "high")]

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
        for ticker, n in ((self.xticks, self.cols), (self.yticks, self.rows)):
            ticks = list(range(0, n, -(-n // MAX_TICKS)))
            if list(ticker.ticks) != ticks:  # in place: a new ticker would be a new model
                ticker.ticks = ticks

    def frames(self, run) -> dict[str, list]:
        m = self._matrices(run)  # (T + 1, rows, cols)
        limits = np.asarray(run.data[self.limits], dtype=float)  # (T + 1,)
        limits = np.where(np.isfinite(limits) & (limits > 0), limits, 1.0)
        flat = m.reshape(len(m), -1)
        n = flat.shape[1]
        small = n <= self.MAX_LABELLED  # numbers in the cells and in the text alternative
        texts = ([[cell(x, TINY * lim) for x in row] for row, lim in zip(flat.tolist(), limits)]
                 if small else [None] * len(m))
        out = {"image": [[f] for f in m], "low": (-limits).tolist(), "high": limits.tolist(),
               "alt": [self.summary(f, tx, lim) for f, tx, lim in zip(m, texts, limits)]}
        if self.labelled():
            out |= self.inked(texts, np.abs(flat) > self.DARK * limits[:, None])
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

def recall_note(stream: str) -> str:
    newest = ("query the rewritten key k₁, compare with the latest value written under it"
              if stream == "overwrite" else
              "query the key just written, compare with its value")
    return (f"Recall error ‖Sᵀk − v‖ / ‖v‖ (0 exact, 1 as bad as returning nothing). "
            f"<b>Newest</b>: {newest}. <b>Old</b>: query the first token's key k₁, compare "
            "with the first value v₁.")


def csv_table(rules, token_gates, norms, errors, errors_old, T) -> dict[str, list]:
    """Per token (t = 1 … T) and rule: ‖S_t‖, both recall errors and the gates used."""
    names = ("t", "rule", "state_norm", "recall_error_newest", "recall_error_old", "gamma",
             "alpha", "beta")
    table: dict[str, list] = {n: [] for n in names}
    for t in range(T):
        for rule in rules:
            g = token_gates(rule, t)
            alpha = g.get("alpha", "")
            if np.ndim(alpha):  # per channel: the d_k values, space-separated
                alpha = " ".join(repr(float(a)) for a in alpha)
            row = (t + 1, rule, float(norms[rule][t]), float(errors[rule][t]),
                   float(errors_old[rule][t]), g.get("gamma", ""), alpha, g.get("beta", ""))
            for n, value in zip(names, row):
                table[n].append(float(value) if isinstance(value, np.floating) else value)
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
    i, name, other = t - 1, r["labels"][r["inspected"]], r["other"]
    held = r["held"][i]  # ‖Sᵀk‖: what k_t retrieved before the write
    strength = r["strength"][i]  # β‖k‖²: the share of it the write replaces
    share = "all" if abs(strength - 1) < TINY else num(strength)
    did = (f"k{sub(t)} held nothing yet, so {name} wrote {num(r['beta'][i])} × v{sub(t)}, "
           "as a plain sum would" if held < TINY * r["vec_limits"][t] else
           f"{name} erased {share} of what k{sub(t)} held (‖Sᵀk‖ = {num(held)}) and wrote "
           + (f"v{sub(t)} in its place" if share == "all" else f"{share} × v{sub(t)}"))
    errors = r["errors"]
    line = f"<b>t = {t}</b>: {did}; its newest-value error is {cell(errors[r['inspected']][i], TINY)}"
    if other is not None:
        line += f"; {r['labels'][other]}'s is {cell(errors[other][i], TINY)}"
    return line + "."


def token_text(r: dict, t: int) -> str:
    stream = r["stream"]
    if t == 0:
        return f"<b>t = 0</b>: no token yet. {stream.description}"
    label = stream.labels[t - 1] if stream.labels else f"token {t}"
    norms = " · ".join(f"{r['labels'][rule]}: ‖S‖ = {num(r['norms'][rule][t - 1])}"
                       for rule in r["rules"])
    return f"<b>t = {t}</b> ({label}): k = {vec(r['k'][t - 1])}, v = {vec(r['v'][t - 1])}<br>{norms}"


def delta_text(r: dict, t: int) -> str:
    rule = r["inspected"]
    extra = (" (not among the rules compared above)" if rule not in r["rules"] else
             " (the first delta rule compared)" if r["auto"] else "")
    if t == 0:
        return f"<b>{r['labels'][rule]}</b>{extra}: no update yet."
    g = r["token_gates"](rule, t - 1)
    decay = f"decay α = {gate_text(g['alpha'])}, " if "alpha" in g else ""
    tiny = TINY * r["vec_limits"][t]  # as in the heatmap of the same numbers
    parts = (f"Read back Sᵀk = {vec(r['read_back'][t - 1], tiny)}, error v − Sᵀk = "
             f"{vec(r['error'][t - 1], tiny)}. " if r["k"].shape[1] <= 8 else "")
    return (f"<b>{r['labels'][rule]}</b>{extra}, token t = {t}: {decay}β = {num(g['beta'])}. "
            f"{parts}New S = decayed S − erased part + written part.")


def gates_table(r: dict, t: int) -> str:
    if t == 0:
        return "<p>No token yet.</p>"
    rows = []
    for rule in r["rules"]:
        g = r["token_gates"](rule, t - 1)
        used = ", ".join(f"{sym} = {gate_text(g[n])}" for n, sym in
                         (("gamma", "γ"), ("alpha", "α"), ("beta", "β")) if n in g)
        rows.append(f"<tr><td>{r['labels'][rule]}</td><td>{used or 'no gate'}</td>"
                    f"<td>{cell(r['errors'][rule][t - 1], TINY)}</td>"
                    f"<td>{cell(r['errors_old'][rule][t - 1], TINY)}</td></tr>")
    return ("<table class='lab-gates'><thead><tr><th>rule</th><th>gates used</th>"
            "<th>error, newest</th><th>error, old</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")
