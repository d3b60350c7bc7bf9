"""The fixed-state page's own views: the probed pair's value against what the state returns,
every stored pair's error, and curves over pairs with the state's capacity n = d marked.

Each reads columns of the page's Run (ui.pages.fixed_state): per setting in ``setup``, per t in
``frames`` (with a text alternative per t, bound to the figure's "@alt").
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, Range1d

from ui.fmt import cell, vec
from ui.views import LinePlot, View, crossover, legend_outside, make_figure

TRUE_COLOUR = "#8c959f"  # the true value: a neutral grey beside the rule's colour
CAPACITY_COLOUR = "#6e7781"  # the dashed n = d line: grey, apart from the three rules' colours
OTHER_ALPHA = 0.45  # pairs other than the probed one are drawn paler
EXACT = 1e-9  # a relative error below this is rounding residue: the recall is exact


def _legend_below(fig, labels: list[str] | None = None) -> None:
    """The legend in one row under the plot (it would cover the curves inside it)."""
    legend = legend_outside(fig, "below", orientation="horizontal", label_text_font_size="11px",
                            glyph_width=18, spacing=10, margin=4, padding=4, location="center")
    for item, label in zip(legend.items, labels or []):
        item.label = {"value": label}


def _capacity(fig, text: str):
    """The dashed line where the pairs outnumber the state's d dimensions, named at the top
    (at the bottom the name would sit on the curves, all near 0 there)."""
    span, label = crossover(fig, text, CAPACITY_COLOUR)
    label.update(y_units="data", y=1.0, y_offset=-2, text_baseline="top", level="overlay",
                 background_fill_color="#ffffff", background_fill_alpha=0.8)  # over the t marker
    return span, label


class ProbeBars(View):
    """The probed pair's true value v beside what the state returns for its key, ŷ = Sᵀk,
    entry by entry. ŷ is missing (no bar) until the pair is written."""

    def __init__(self):
        self.source = ColumnDataSource({"j": [], "x_true": [], "x_read": [], "true": [],
                                        "read": []})
        self.fig = make_figure("Query the probed key", width=380, height=290,
                               x_range=(0.5, 1.5), y_range=(-1.0, 1.0))
        true = self.fig.vbar(x="x_true", top="true", width=0.4, source=self.source,
                             color=TRUE_COLOUR)
        self.read = self.fig.vbar(x="x_read", top="read", width=0.4, source=self.source)
        # the legend's swatches: zero-height bars at x = 0, out of sight, in a source no step
        # changes (with the bars' own, BokehJS rebuilt the legend on every step)
        self.swatches = [self.fig.vbar(x=[0], top=[0], width=0.4, color=colour, legend_label=name)
                         for colour, name in ((TRUE_COLOUR, "true value v"),
                                              (TRUE_COLOUR, "retrieved ŷ = Sᵀk"))]
        self.fig.add_tools(HoverTool(renderers=[true, self.read], tooltips=[
            ("entry j", "@j"), ("true vⱼ", "@true{0.0000}"), ("retrieved ŷⱼ", "@read{0.0000}")]))
        self.fig.xaxis.axis_label = "value entry j"
        self.fig.yaxis.axis_label = "true vⱼ and retrieved ŷⱼ"
        self.fig.xgrid.visible = False
        self.fig.xaxis.ticker.min_interval = 1
        _legend_below(self.fig)
        self.bindings = [(self.source, "data.read", "read"), (self.fig, "@alt", "alt")]

    def panel(self):
        return pn.pane.Bokeh(self.fig, margin=(5, 5))

    def setup(self, run) -> None:
        v, read = run.data["probe_value"], run.data["probe_read"]  # (d,), (T + 1, d)
        d = len(v)
        j = np.arange(1, d + 1)
        self.source.data = {"j": j, "x_true": j - 0.2, "x_read": j + 0.2, "true": v,
                            "read": np.full(d, np.nan)}
        for glyph in (self.read.glyph, self.swatches[1].glyph):
            glyph.update(fill_color=run.data["colour"], line_color=run.data["colour"])
        self.fig.title.text = f"Query pair {run.data['probe']}'s key ({run.data['rule_short']})"
        self.fig.x_range.update(start=0.5, end=d + 0.5)
        top = 1.1 * float(np.nanmax(np.abs(np.concatenate([v[None], read])), initial=1.0))
        self.fig.y_range.update(start=-top, end=top)  # the same for every t: bars compare

    def frames(self, run) -> dict[str, list]:
        v, read, p = run.data["probe_value"], run.data["probe_read"], run.data["probe"]
        head = f"{self.fig.title.text}: true value v = {vec(v)}"
        alt = [f"{head}; pair {p} is not written yet after {t} writes" if np.isnan(r).all()
               else f"{head}; after {t} writes the state returns ŷ = {vec(r)}"
               for t, r in enumerate(read)]
        return {"read": list(read), "alt": alt}


class PairErrors(View):
    """The recall error of every pair written so far, at t: one bar (and a dot, so an exact
    recall still shows) per pair, the probed pair in full colour, capacity d dashed."""

    def __init__(self):
        self.source = ColumnDataSource({"i": [], "error": [], "alpha": []})
        self.fig = make_figure("Error of each stored pair", width=380, height=290,
                               x_range=(0.5, 1.5), y_range=(0.0, 1.05))
        kw = {"source": self.source, "fill_alpha": "alpha", "line_alpha": "alpha"}
        self.bars = self.fig.vbar(x="i", top="error", width=0.8, **kw)
        self.dots = self.fig.scatter(x="i", y="error", size=5, **kw)
        # the legend's swatches: what full and pale bars mean
        # (one zero-height bar at x = 0, out of sight: a legend draws no swatch for no data)
        self.swatches = [self.fig.vbar(x=[0], top=[0], width=0.8, fill_alpha=a, line_alpha=a,
                                       legend_label=name)
                         for a, name in ((1.0, "probed pair"), (OTHER_ALPHA, "other pairs"))]
        self.fig.add_tools(HoverTool(renderers=[self.bars], tooltips=[
            ("pair i", "@i"), ("‖ŷᵢ − vᵢ‖ / ‖vᵢ‖", "@error{0.0000}")]))
        self.fig.xaxis.axis_label = "pair i (in the order written)"
        self.fig.yaxis.axis_label = "‖ŷᵢ − vᵢ‖ / ‖vᵢ‖"
        self.fig.xgrid.visible = False
        self.fig.xaxis.ticker.min_interval = 1
        self.capacity = _capacity(self.fig, "capacity d")
        _legend_below(self.fig)
        self.bindings = [(self.source, "data.error", "error"), (self.fig, "@alt", "alt")]

    def panel(self):
        return pn.pane.Bokeh(self.fig, margin=(5, 5))

    def setup(self, run) -> None:
        errors = run.data["pair_errors"]  # (T + 1, n), NaN where a pair is not written yet
        n, probe, colour = errors.shape[1], run.data["probe"], run.data["colour"]
        self.source.data = {"i": np.arange(1, n + 1), "error": np.full(n, np.nan),
                            "alpha": np.where(np.arange(1, n + 1) == probe, 1.0, OTHER_ALPHA)}
        for r in (self.bars, self.dots, *self.swatches):
            r.glyph.update(fill_color=colour, line_color=colour)
        self.fig.title.text = f"Each pair's error ({run.data['rule_short']})"
        self.fig.x_range.update(start=0.5, end=n + 0.5)
        self.fig.y_range.end = 1.05 * max(1.0, float(np.nanmax(errors, initial=0.0)))
        span, label = self.capacity
        span.location = label.x = run.data["d"] + 0.5
        label.update(y=self.fig.y_range.end, text=f"capacity d = {run.data['d']}")

    def frames(self, run) -> dict[str, list]:
        errors = run.data["pair_errors"]
        alt = []
        for t, row in enumerate(errors):
            shown = ", ".join(f"pair {i + 1} {cell(e, EXACT)}" for i, e in enumerate(row[:t]))
            alt.append(f"{self.fig.title.text} after {t} writes: "
                       + (shown or "nothing written yet"))
        return {"error": list(errors), "alt": alt}


class RuleLines(LinePlot):
    """The three rules' curves over a count of pairs (legend below, short names), the capacity
    n = d dashed, the current t dotted; axes fixed per setting."""

    def __init__(self, title: str, series: dict[str, str], short: list[str], **kwargs):
        super().__init__(title, series, **kwargs)
        # Fixed ranges set per setting: BokehJS keeps a DataRange1d's first start and end.
        self.fig.x_range, self.fig.y_range = Range1d(0.5, 1.5), Range1d(0.0, 1.0)
        self.fig.xaxis.ticker.min_interval = 1  # whole numbers of pairs
        self.capacity = _capacity(self.fig, "capacity n = d")
        _legend_below(self.fig, short)

    def setup(self, run) -> None:
        super().setup(run)
        xs = np.asarray(run.data[self.x], dtype=float)
        ys = np.concatenate([np.asarray(run.data[k], dtype=float) for k in self.series.values()])
        self.fig.x_range.update(start=0.5, end=float(xs[-1]) + 0.5)
        top = 1.08 * max(1.0, float(np.nanmax(ys, initial=0.0)))
        self.fig.y_range.update(start=0.0, end=top)
        span, label = self.capacity
        span.location = label.x = run.data["d"]
        label.y = top

    def frames(self, run) -> dict[str, list]:
        xs = np.asarray(run.data[self.x])
        alt = []
        for t in range(run.t_max + 1):
            at = np.flatnonzero(xs == t)
            values = ", ".join(
                f"{name} " + ("not written yet" if np.isnan(y := run.data[key][at[0]]) else cell(y, EXACT))
                for name, key in self.series.items()) if at.size else ""
            alt.append(f"{self.fig.title.text}: t = {t}" + (f": {values}" if values else
                                                            ", nothing written yet"))
        return {"marker": np.arange(run.t_max + 1, dtype=float), "alt": alt}
