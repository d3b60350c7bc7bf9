"""The chunkwise page's own views and readout texts (ui/pages/chunkwise.py composes them).

- ``ChunkStrip``: the T tokens as one row of cells coloured by chunk, the current chunk outlined
  (dashed), the current token boxed, the tokens still to come veiled.
- ``MaskedHeatmap``: a ``Heatmap`` of a chunk's C × C matrix in which NaN means "no number
  here" (the causal mask above the diagonal, or past the end of a shorter last chunk): such
  cells are grey and unlabelled; the current token's row is boxed.
- The readout texts, one per t: the caption, the carried state and the cost of the three forms.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import BoxAnnotation, ColumnDataSource, FixedTicker, HoverTool

from ui.contract import CELL_TEXT_NAME
from ui.fmt import count, num, vec
from ui.theme import HEATMAP, LINES
from ui.views import Heatmap, View, make_figure

INK = "#1f2328"  # the current token's outline: dark, to stand out on every chunk colour
MASKED = HEATMAP["light"]["masked"]  # grey: a cell with no number (masked, past the chunk's end)
LABELLED_TOKENS = 40  # beyond this many tokens the numbers in the strip do not fit
TABLE_CSS = ".lab-forms td, .lab-forms th {padding: 2px 12px 2px 0; text-align: right}"


class ChunkStrip(View):
    """Token t = 1 … T as cells, coloured by chunk; the current chunk and token outlined."""

    def __init__(self, width: int = 640):
        self.source = ColumnDataSource({"x": [], "color": [], "label": [], "chunk": []})
        self.names = ColumnDataSource({"x": [], "text": []})
        # (its plot area not lined up with the output's below it, whose row names take 130 px:
        # on a phone the strip kept a third of its width for tokens, their numbers ran together)
        self.fig = make_figure("Tokens in chunks of C", width=width, height=150,
                               x_range=(0.5, 1.5), y_range=(-0.1, 1.45), frame_align=False)
        cells = self.fig.rect("x", 0.45, 0.94, 0.8, source=self.source, fill_color="color",
                              fill_alpha=0.55, line_color="#ffffff")
        self.labels = self.fig.text("x", 0.45, text="label", source=self.source,
                                    text_align="center", text_baseline="middle",
                                    text_font_size="11px", name=CELL_TEXT_NAME)
        self.fig.text("x", 1.12, text="text", source=self.names, text_align="center",
                      text_baseline="middle", text_font_size="11px", text_color="#57606a",
                      name=CELL_TEXT_NAME)
        self.fig.add_tools(HoverTool(renderers=[cells], tooltips=[("token", "@x"),
                                                                  ("chunk", "@chunk")]))
        self.veil = BoxAnnotation(left=0.5, right=0.5, bottom=-0.1, top=1.45, level="overlay",
                                  fill_color="#ffffff", fill_alpha=0.7, line_alpha=0.0,
                                  name="lab-veil")
        self.chunk_box = BoxAnnotation(left=0.5, right=1.5, bottom=0.0, top=1.3, level="overlay",
                                       fill_alpha=0.0, line_color="#57606a", line_width=2,
                                       line_dash="dashed")
        self.box = BoxAnnotation(left=0.5, right=1.5, bottom=0.02, top=0.88, level="overlay",
                                 fill_alpha=0.0, line_color=INK, line_width=3)
        for annotation in (self.veil, self.chunk_box, self.box):
            self.fig.add_layout(annotation)
        self.fig.yaxis.visible = False
        self.fig.xaxis.axis_label = "token t"
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        self.fig.xaxis.ticker = self.ticker = FixedTicker(ticks=[1])
        self.bindings = [(self.box, "left", "box_left"), (self.box, "right", "box_right"),
                         (self.box, "visible", "on"), (self.chunk_box, "left", "chunk_left"),
                         (self.chunk_box, "right", "chunk_right"),
                         (self.chunk_box, "visible", "on"), (self.veil, "left", "veil_left"),
                         (self.fig, "@alt", "alt")]


    def setup(self, run) -> None:
        starts, T = run.data["starts"], run.t_max
        chunk = np.searchsorted(starts, np.arange(T), side="right")  # 1-based chunk of each token
        self.source.data = {"x": np.arange(1, T + 1), "chunk": chunk,
                            "color": [LINES[(c - 1) % len(LINES)] for c in chunk],
                            "label": [str(t) if T <= LABELLED_TOKENS else "" for t in range(1, T + 1)]}
        n = len(starts) - 1
        centres = (starts[:-1] + starts[1:] + 1) / 2  # (n,) middle of each chunk, in token units
        # "chunk c" over a chunk of four tokens or more, its number alone over a shorter one (the
        # last chunk of T = 17 at C = 4 holds one token: "chunk 5" ran off the figure's edge) and
        # over more than eight chunks (T = 64 at C = 4: "chunk 16" is wider than its chunk); the
        # shell fits them to their chunks (CELL_TEXT_NAME)
        sizes = np.diff(starts)
        names = [f"chunk {c}" if sizes[c - 1] >= 4 and n <= 8 else str(c)
                 for c in range(1, n + 1)] if n <= 24 else []
        self.names.data = {"x": centres[: len(names)], "text": names}
        self.fig.x_range.update(start=0.5, end=T + 0.5)
        self.ticker.ticks = list(range(1, T + 1, max(1, int(np.ceil(T / 16)))))
        self.veil.right = T + 0.5

    def frames(self, run) -> dict:
        starts, T = run.data["starts"], run.t_max
        t = np.arange(T + 1)
        c = run.data["chunk_of"]  # (T + 1,) 0-based chunk of token t (chunk 0 at t = 0)
        alt = [f"{T} tokens in {len(starts) - 1} chunks of up to {run.data['C']}"
               + (f"; token {i} (chunk {c[i] + 1}) is read now" if i else "; none read yet")
               for i in t]
        return {"box_left": t - 0.5, "box_right": t + 0.5, "on": [bool(i) for i in t],
                "chunk_left": starts[c] + 0.5, "chunk_right": starts[c + 1] + 0.5,
                "veil_left": t + 0.5, "alt": alt}


class MaskedHeatmap(Heatmap):
    """A chunk's matrix; NaN cells are masked (grey, no number). ``run.data[row]`` (T + 1,) is
    the row of the current token in its chunk (−1: none boxed)."""

    def __init__(self, key: str, title: str, *, row: str = "row", **kwargs):
        super().__init__(key, title, **kwargs)
        self.mapper.nan_color = MASKED
        self.row_key = row
        self.row_box = BoxAnnotation(left=-0.5, right=0.5, top=-0.5, bottom=0.5, level="overlay",
                                     fill_alpha=0.0, line_color=INK, line_width=3)
        self.fig.add_layout(self.row_box)
        self.bindings = [*self.bindings, (self.row_box, "top", "row_top"),
                         (self.row_box, "bottom", "row_bottom"),
                         (self.row_box, "visible", "row_on")]

    def setup(self, run) -> None:
        run.data.setdefault(self.key + "_limit", float(np.nanmax(np.abs(run.data[self.key]),
                                                                 initial=0.0)))
        super().setup(run)
        self.row_box.update(left=-0.5, right=self.cols - 0.5)
        # Tokens of the chunk counted from 1, as the strip counts them.
        self.fig.xaxis.major_label_overrides = {i: str(i + 1) for i in range(self.cols)}
        self.fig.yaxis.major_label_overrides = {i: str(i + 1) for i in range(self.rows)}

    def cell_labels(self, labels: list[list[str]]) -> list[list[str]]:
        return [["" if s == "nan" else s for s in row] for row in labels]

    def frames(self, run) -> dict[str, list]:
        out = super().frames(run)
        out["alt"] = [a.replace("nan", "masked") for a in out["alt"]]
        rows = np.asarray(run.data[self.row_key], dtype=float)
        out |= {"row_top": rows - 0.5, "row_bottom": rows + 0.5,
                "row_on": [bool(r >= 0) for r in rows]}
        return out


class PartsHeatmap(Heatmap):
    """The output of token t taken apart, one row per part; the last row is the difference of
    two ways of computing it, rounding residue whose last bits depend on the machine's
    arithmetic (CPython's BLAS or Pyodide's). It reads "≈0" for an exact zero too, so the page
    built ahead of time and the live page show the same picture at every t ≥ 1."""

    def cell_labels(self, labels: list[list[str]]) -> list[list[str]]:
        n = self.cols
        return [row if t == 0 else row[:-n] + [_approx(s) for s in row[-n:]]
                for t, row in enumerate(labels)]

    def frames(self, run) -> dict[str, list]:
        out = super().frames(run)
        out["alt"] = [a if t == 0 else _approx_last_row(a) for t, a in enumerate(out["alt"])]
        return out


def _approx(label: str) -> str:
    return "≈0" if label == "0" else label


def _approx_last_row(alt: str) -> str:
    head, sep, last = alt.rpartition("; row ")
    name, colon, cells = last.partition(": ")
    return head + sep + name + colon + ", ".join(_approx(c) for c in cells.split(", "))


# Readout texts, one per t ----------------------------------------------------------------------

def chunk_span(r: dict, c: int) -> str:
    first, last = int(r["starts"][c]) + 1, int(r["starts"][c + 1])
    return f"token {first}" if first == last else f"tokens {first}–{last}"


def caption(r: dict, t: int) -> str:
    n = len(r["starts"]) - 1
    if t == 0:
        return (f"<b>t = 0</b>: {r['T']} tokens in {n} chunk{'s' * (n > 1)} of up to "
                f"{r['C']}; chunk 1 ({chunk_span(r, 0)}) starts from the state S₀ = 0.")
    c, i, tiny = int(r["chunk_of"][t]), t - 1, 1e-9 * r["scale"]
    return (f"<b>t = {t}, chunk {c + 1} of {n}</b>: output = carried-state part "
            f"{vec(r['inter'][i], tiny)} + in-chunk part {vec(r['intra'][i], tiny)} = "
            f"{vec(r['out'][i], tiny)}; the recurrence gives {vec(r['rec'][i], tiny)}, "
            f"difference {num(r['gap'][i])}.")


def state_text(r: dict, t: int) -> str:
    c = int(r["chunk_of"][t])
    after = int(r["starts"][c])
    if after == 0:
        where = "S₀ = 0, the state before the first token, with nothing carried yet"
    else:
        where = (f"the state after token {after}, which the recurrence reaches in {after} steps "
                 f"and the chunkwise form in {c} matrix step{'s' * (c != 1)}, one per chunk "
                 "before this one")
    ut = ("" if not r["delta"] else
          " The UT transform (I + L)⁻¹ diag(β) of this chunk turns its keys and values into "
          "w and u, so the chunk writes u − w S without a step per token.")
    return (f"<p>Chunk {c + 1} ({chunk_span(r, c)}) starts from "
            f"S<sub>[{c}]</sub>: {where}. Its queries read it (the carried-state part); its own "
            f"tokens add the masked "
            f"scores of the row boxed (the in-chunk part).{ut}</p>")


def cost_text(r: dict, t: int) -> str:
    T, C, d = max(t, 1), r["C"], r["d"]
    f = r["cost_at"](T)
    rows = "".join(
        f"<tr><td>{name}</td><td>{count(getattr(f, key + '_ops'))}</td>"
        f"<td>{count(getattr(f, key + '_numbers'))}</td><td>{count(getattr(f, key + '_steps'))}</td></tr>"
        for name, key in (("recurrent", "recurrent"), ("parallel", "parallel"),
                          ("chunkwise", "chunkwise")))
    return (f"<p>The first T = {T} token{'s' * (T > 1)}, C = {C}, d<sub>k</sub> = d<sub>v</sub> = {d}:</p>"
            "<table class='lab-forms'><thead><tr><th>form</th><th>operations</th>"
            "<th>numbers held</th><th>sequential steps</th></tr></thead><tbody>"
            f"{rows}</tbody></table>")
