"""Page 2, "What a fixed state can't hold": write n key → value pairs into a d × d state, then
query the keys written earlier.

The state precomputes, whenever a setting that changes the numbers moves, everything the views
show for every t (the recall of every pair after each write, for linear attention, the delta rule
and softmax attention, and the recall curves); a step only slices those arrays. Every number comes
from `sim.recall`.
"""

from __future__ import annotations

import io

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, Label, Span
from bokeh.plotting import figure

from sim import recall as sim_recall
from ui.app import Page
from ui.state import PageState
from ui.theme import LINES, scale_widgets, style_widget
from ui.views import TOOLS, LinePlot, Readout

# The rules the page compares, in the order of their colours (LINES[0], LINES[1], LINES[2]).
RULE_LABELS = {"linear": "linear attention", "deltanet": "delta rule (β = 1)",
               "softmax": "softmax attention"}
CURVE_RULES = ("linear", "deltanet", "softmax")
SHORT_LABELS = {"linear": "linear", "deltanet": "delta rule", "softmax": "softmax"}
RULE_COLOURS = {rule: LINES[i] for i, rule in enumerate(CURVE_RULES)}
TRUE_COLOUR = "#8c959f"  # the true value: a neutral grey beside the rule's colour
DELTA_BETA = 1.0  # the lesson's delta rule: β = 1 overwrites what a unit key held, exactly
MAX_D = 32
MAX_PAIRS = 4 * MAX_D
# Log-ish steps for the softmax scale: its effect is multiplicative (weights go as e^{s·cos}).
SCALE_STEPS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0)


def _rule_params(rule: str, scale: float) -> dict:
    if rule == "deltanet":
        return {"beta": DELTA_BETA}
    if rule == "softmax":
        return {"scale": scale}
    return {}


class FixedStateState(PageState):
    """Knobs of the fixed-state page; t is the number of pairs written so far."""

    d = param.Integer(8, bounds=(4, MAX_D), label="State size d (the state is d × d)",
                      doc="d = d_k = d_v: the state holds d × d numbers")
    pairs = param.Integer(32, bounds=(1, 4 * 8), label="Pairs written n",
                          doc="How many key → value pairs the timeline writes (up to 4·d)")
    rule = param.Selector(objects={RULE_LABELS["linear"]: "linear",
                                   RULE_LABELS["deltanet"]: "deltanet"},
                          default="linear", label="Rule (step-by-step view)",
                          doc="Which rule writes the state in the step-by-step view")
    keys = param.Selector(objects=list(sim_recall.KEY_KINDS), default="orthonormal",
                          label="Key set", doc="orthonormal (the first d keys), random unit keys, "
                          "or correlated unit keys with mean cosine ρ")
    rho = param.Number(0.5, bounds=(0.0, 0.95), step=0.05, label="Key correlation ρ",
                       doc="Mean cosine between correlated keys")
    scale = param.Number(6.0, bounds=(0.5, 30.0), label="Softmax scale s",
                         doc="Softmax attention's score scale: weights ∝ exp(s · q·k)")
    probe = param.Integer(1, bounds=(1, 4 * 8), label="Probe: pair number",
                          doc="Which stored pair to query (1 = the first pair written)")

    def __init__(self, **params):
        super().__init__(**params)
        self._own_notice = ""
        self.keys_arr = np.zeros((0, self.d))  # (4d, d) every key the timeline can write
        self.values_arr = np.zeros((0, self.d))  # (4d, d)
        # per rule: errors (4d, 4d), row t−1 = relative error of pair i after t writes (NaN for
        # i ≥ t); retrieved (4d, 4d, d), row t−1 = ŷ_i = what querying key i returns after t writes
        self.errors: dict[str, np.ndarray] = {}
        self.retrieved: dict[str, np.ndarray] = {}
        self.curve: dict[str, np.ndarray] = {}  # "n" (4d,) and a mean error (4d,) per rule
        self._recompute_all()
        self._fit_bounds()
        self.param.watch(self._on_settings, ["d", "keys", "rho", "seed"])
        self.param.watch(self._on_scale, ["scale"])
        self.param.watch(self._on_pairs, ["pairs"])

    # Recomputation (only when the numbers change; steps slice) ---------------------------------
    def _set_notice(self, text: str) -> None:
        if text:
            self._own_notice = text
            self.notice = text
        elif self._own_notice and self.notice == self._own_notice:
            self._own_notice = ""
            self.notice = ""

    def _compute(self, rules: tuple[str, ...]) -> tuple[dict, dict, dict, np.ndarray, np.ndarray]:
        d = self.d
        n = 4 * d  # the curve's range; the timeline's n is a prefix of it
        keys = sim_recall.make_keys(self.keys, n, d, self.rho, self.seed)
        values = sim_recall.make_values(n, d, self.seed)
        errors, retrieved, curve = {}, {}, {}
        for rule in rules:
            errors[rule], retrieved[rule] = sim_recall.recall_after_each_write(
                rule, keys, values, **_rule_params(rule, self.scale))
            c = sim_recall.recall_curve(rule, self.keys, d, rho=self.rho, seed=self.seed,
                                        **_rule_params(rule, self.scale))
            curve[rule] = c["mean_error"]
            curve["n"] = c["n"]
        return errors, retrieved, curve, keys, values

    def _recompute_all(self) -> bool:
        try:
            errors, retrieved, curve, keys, values = self._compute(CURVE_RULES)
        except ValueError as err:  # sim.DivergenceError is a ValueError too
            self._set_notice(f"Could not compute these settings: {err}")
            return False
        self.errors, self.retrieved, self.curve = errors, retrieved, curve
        self.keys_arr, self.values_arr = keys, values
        self._set_notice("")
        return True

    def _fit_bounds(self) -> None:
        """n ≤ 4·d and probe ≤ n; a knob at its old maximum follows the new one."""
        with param.parameterized.batch_call_watchers(self):
            top = 4 * self.d
            old_top = self.param.pairs.bounds[1]
            self.param.pairs.bounds = (1, top)
            if self.pairs > top or self.pairs == old_top:
                self.pairs = top
            self.param.probe.bounds = (1, self.pairs)
            if self.probe > self.pairs:
                self.probe = self.pairs
        self.set_t_max(self.pairs)

    def _on_settings(self, *events) -> None:
        if self._recompute_all():
            self._fit_bounds()
            self.param.trigger("t")  # views redraw from the new arrays

    def _on_scale(self, *events) -> None:
        try:
            errors, retrieved, curve, _, _ = self._compute(("softmax",))
        except ValueError as err:
            self._set_notice(f"Could not compute softmax attention at scale {self.scale}: {err}")
            return
        self.errors["softmax"], self.retrieved["softmax"] = errors["softmax"], retrieved["softmax"]
        self.curve["softmax"] = curve["softmax"]
        self._set_notice("")
        self.param.trigger("t")

    def _on_pairs(self, *events) -> None:
        self._fit_bounds()

    # What the views read ---------------------------------------------------------------------
    def pair_errors(self, rule: str | None = None) -> np.ndarray:
        """(n,) relative error of each pair after t writes (NaN for pairs not written yet)."""
        rule = rule or self.rule
        if self.t == 0:
            return np.full(self.pairs, np.nan)
        return self.errors[rule][self.t - 1, : self.pairs]

    def probe_readout(self, rule: str | None = None) -> tuple[np.ndarray, np.ndarray, float]:
        """(true v (d,), retrieved ŷ (d,), relative error) for the probed pair after t writes.

        Before the probed pair is written, ŷ is NaN: the state holds nothing under that key yet.
        """
        rule = rule or self.rule
        i = self.probe - 1
        true = self.values_arr[i]
        if self.t <= i:
            return true, np.full(self.d, np.nan), float("nan")
        return true, self.retrieved[rule][self.t - 1, i], float(self.errors[rule][self.t - 1, i])

    def probe_over_t(self, rule: str) -> np.ndarray:
        """(n,) the probed pair's relative error after t = 1..n writes (NaN before it is written)."""
        return self.errors[rule][: self.pairs, self.probe - 1]

    def mean_error(self, rule: str | None = None) -> float:
        """Mean relative error over the t pairs written so far (NaN at t = 0)."""
        errors = self.pair_errors(rule)
        return float(np.nanmean(errors)) if self.t > 0 else float("nan")

    def csv(self) -> str:
        out = io.StringIO()
        names = [RULE_LABELS[r] for r in CURVE_RULES]
        out.write("# recall curve: mean relative error ‖ŷ−v‖/‖v‖ after writing n pairs "
                  f"(d={self.d}, keys={self.keys}, rho={self.rho}, softmax scale={self.scale}, "
                  f"seed={self.seed})\n")
        out.write("n," + ",".join(names) + "\n")
        for j, n in enumerate(self.curve["n"]):
            out.write(f"{int(n)}," + ",".join(repr(float(self.curve[r][j])) for r in CURVE_RULES) + "\n")
        out.write(f"\n# per-pair relative error after t={self.t} writes\n")
        out.write("pair," + ",".join(names) + "\n")
        for i in range(self.t):
            out.write(f"{i + 1}," + ",".join(repr(float(self.pair_errors(r)[i]))
                                             for r in CURVE_RULES) + "\n")
        return out.getvalue()


def _throttled(widget, state: param.Parameterized, name: str, *, state_to_widget: bool = True):
    """Bind a slider to ``state.<name>`` both ways, acting on release (``value_throttled``)."""
    def to_state(event) -> None:
        if event.new is not None and event.new != getattr(state, name):
            setattr(state, name, event.new)

    def to_widget(event) -> None:
        if widget.value != event.new:
            widget.value = event.new

    widget.param.watch(to_state, "value_throttled")
    if state_to_widget:
        state.param.watch(to_widget, name)
    return widget


class FixedStatePage(Page):
    title = "What a fixed state can't hold"
    slug = "fixed-state"

    def __init__(self, state: FixedStateState | None = None):
        super().__init__(state or FixedStateState())
        self._curve_key: tuple | None = None
        self._build_views()
        self._build_panes()
        self.state.param.watch(self._refresh, ["t", "rule", "probe", "pairs"])
        self.state.param.watch(self._refresh_curve, ["d", "keys", "rho", "seed", "scale"])
        self._refresh_curve()
        self._refresh()

    # Figures -------------------------------------------------------------------------------------
    def _build_views(self) -> None:
        s = self.state
        # (a) the probed pair: true value against what the state returns, per component
        self.value_source = ColumnDataSource({"j": [], "x_true": [], "x_read": [], "true": [],
                                              "read": []})
        f = figure(title="Query the probed key", width=380, height=260, tools=TOOLS,
                   toolbar_location="above", x_range=(0.5, s.d + 0.5))
        f.toolbar.logo = None
        true_bars = f.vbar(x="x_true", top="true", width=0.4, source=self.value_source,
                           color=TRUE_COLOUR, legend_label="true value v")
        self.read_bars = f.vbar(x="x_read", top="read", width=0.4, source=self.value_source,
                                color=RULE_COLOURS[s.rule], legend_label="retrieved ŷ = Sᵀk")
        f.add_tools(HoverTool(renderers=[true_bars, self.read_bars],
                              tooltips=[("j", "@j"), ("v_j", "@true{0.0000}"),
                                        ("ŷ_j", "@read{0.0000}")]))
        f.xaxis.axis_label = "value component j"
        f.yaxis.axis_label = "v_j, ŷ_j"
        f.legend.location = "top_left"
        f.legend.orientation = "horizontal"
        f.legend.label_text_font_size = "11px"
        f.add_layout(f.legend[0], "below")
        f.xgrid.visible = False
        self.value_fig = self.add_figure(f)

        # (a) every stored pair's error at the current t
        self.pair_source = ColumnDataSource({"i": [], "error": [], "alpha": []})
        f = figure(title="Error of each stored pair", width=380, height=260, tools=TOOLS,
                   toolbar_location="above", x_range=(0.5, s.pairs + 0.5), y_range=(0, 1.05))
        f.toolbar.logo = None
        self.pair_bars = f.vbar(x="i", top="error", width=0.8, source=self.pair_source,
                                color=RULE_COLOURS[s.rule], fill_alpha="alpha", line_alpha="alpha")
        bars = self.pair_bars
        # a dot on every written pair: an exact recall (error 0) has no bar but still shows
        f.scatter(x="i", y="error", source=self.pair_source, size=5, color=RULE_COLOURS[s.rule],
                  fill_alpha="alpha", line_alpha="alpha")
        self.pair_dots = f.renderers[-1]
        f.add_tools(HoverTool(renderers=[bars], tooltips=[("pair i", "@i"),
                                                          ("‖ŷ−v‖/‖v‖", "@error{0.0000}")]))
        f.xaxis.axis_label = "pair i (in the order written)"
        f.yaxis.axis_label = "‖ŷᵢ − vᵢ‖ / ‖vᵢ‖"
        f.xgrid.visible = False
        self.pair_capacity = Span(location=s.d + 0.5, dimension="height", line_color="#6e7781",
                                  line_dash="dashed", line_width=1.5)
        f.add_layout(self.pair_capacity)
        self.pair_fig = self.add_figure(f)

        # (a) the probed pair's error as the writes go on, for all three rules
        names = [RULE_LABELS[r] for r in CURVE_RULES]
        self.probe_plot = LinePlot("Probed pair's error over t", names,
                                   x_label="pairs written t", y_label="‖ŷ − v‖ / ‖v‖",
                                   width=380, height=300)
        self.probe_capacity = self._capacity_span(self.probe_plot.fig, s.d)
        self._legend_below(self.probe_plot.fig)
        self.add_figure(self.probe_plot.fig)

        # (b) the recall curve
        self.curve_plot = LinePlot("Recall error against n", names,
                                   x_label="pairs stored n", y_label="mean ‖ŷ − v‖ / ‖v‖",
                                   width=380, height=320)
        self.curve_capacity = self._capacity_span(self.curve_plot.fig, s.d)
        self.curve_label = Label(x=s.d, y=1.0, x_offset=4, text="capacity n = d",
                                 text_baseline="top", text_font_size="11px", text_color="#57606a")
        self.curve_plot.fig.add_layout(self.curve_label)
        self._legend_below(self.curve_plot.fig)
        self.curve_plot.fig.sizing_mode = "stretch_width"
        self.curve_plot.fig.min_width, self.curve_plot.fig.max_width = 300, 600
        self.add_figure(self.curve_plot.fig)

        for fig in (self.value_fig, self.pair_fig, self.probe_plot.fig, self.curve_plot.fig):
            fig.xaxis.ticker.min_interval = 1  # x counts components, pairs or writes: whole numbers

        # The same size at every t (room for the longest text of these settings): a step only
        # swaps the text, it never lays the page out again.
        self.readout = Readout(sizing_mode="stretch_width", margin=(0, 10),
                               css_classes=["lab-readout"])
        self._readout_key: tuple | None = None

    @staticmethod
    def _legend_below(fig) -> None:
        legend = fig.legend[0]
        legend.orientation = "horizontal"
        # short names so the three fit one row of the narrowest figure (hover keeps the full ones)
        for item, short in zip(legend.items, SHORT_LABELS.values()):
            item.label = {"value": short}
        legend.label_text_font_size = "11px"
        legend.glyph_width = 18
        legend.spacing = 10
        legend.margin = 4
        legend.padding = 4
        fig.add_layout(legend, "below")

    @staticmethod
    def _capacity_span(fig, d: int) -> Span:
        span = Span(location=d, dimension="height", line_color="#6e7781", line_dash="dashed",
                    line_width=1.5)
        fig.add_layout(span)
        return span

    # Updates (in place) ------------------------------------------------------------------------
    def _refresh_curve(self, *events) -> None:
        s = self.state
        n = s.curve["n"]
        self.curve_plot.update(n, **{RULE_LABELS[r]: s.curve[r] for r in CURVE_RULES})
        self.curve_plot.fig.x_range.start = 0.5
        self.curve_plot.fig.x_range.end = float(n[-1]) + 0.5
        for span in (self.curve_capacity, self.probe_capacity):
            span.location = s.d
        self.curve_label.x = s.d
        top = 1.08 * max(1.0, max(float(np.nanmax(s.curve[r])) for r in CURVE_RULES))
        self.curve_plot.fig.y_range.update(start=0.0, end=top)
        self.curve_label.y = top
        self.pair_capacity.location = s.d + 0.5
        self.value_fig.x_range.end = s.d + 0.5

    def _refresh(self, *events) -> None:
        s = self.state
        rule_colour = RULE_COLOURS[s.rule]
        # probed pair: true value against retrieved
        true, read, _ = s.probe_readout()
        j = np.arange(1, s.d + 1)
        self.value_source.data = {"j": j, "x_true": j - 0.2, "x_read": j + 0.2,
                                  "true": true.tolist(), "read": np.array(read, dtype=float)}
        self.read_bars.glyph.update(fill_color=rule_colour, line_color=rule_colour)
        # every stored pair at t
        errors = s.pair_errors()
        # the probed pair in full colour, the others paler
        alpha = [1.0 if i == s.probe - 1 else 0.45 for i in range(s.pairs)]
        self.pair_source.data = {"i": np.arange(1, s.pairs + 1), "error": np.array(errors, dtype=float),
                                 "alpha": alpha}
        for r in (self.pair_bars, self.pair_dots):
            r.glyph.update(fill_color=rule_colour, line_color=rule_colour)
        self.pair_fig.x_range.end = s.pairs + 0.5
        finite = errors[np.isfinite(errors)]
        top = max(1.0, float(finite.max()) if finite.size else 0.0)
        self.pair_fig.y_range.end = 1.05 * top
        self.probe_plot.mark(s.t)
        self.curve_plot.mark(s.t)
        # New settings or a new run (its arrays kept and compared by identity, as below): room
        # for the longest text they can show.
        readout_key = ((s.rule, s.probe, s.pairs, s.d, s.scale), [s.errors[r] for r in CURVE_RULES])
        old = self._readout_key
        if old is None or old[0] != readout_key[0] or any(
                a is not b for a, b in zip(old[1], readout_key[1])):
            self._readout_key = readout_key
            self.readout.fit(self._readout_html(t) for t in range(s.pairs + 1))
        self.readout.show(self._readout_html(s.t))
        # The probed pair's curve over t depends on the run, the probe and n, not on t: a step
        # sends nothing for it. (The run's arrays themselves are kept, compared by identity.)
        curve_key = (s.probe, s.pairs, *(s.errors[r] for r in CURVE_RULES))
        if self._curve_key is not None and len(curve_key) == len(self._curve_key) and all(
                a is b for a, b in zip(curve_key, self._curve_key)):
            return
        self._curve_key = curve_key
        # probed pair over t
        t_axis = np.arange(1, s.pairs + 1)
        self.probe_plot.update(t_axis, **{RULE_LABELS[r]: np.array(s.probe_over_t(r), dtype=float)
                                          for r in CURVE_RULES})
        self.probe_plot.fig.x_range.start = 0.5
        self.probe_plot.fig.x_range.end = s.pairs + 0.5
        # the probed pair's own worst error, so its curve fills the plot (fixed while stepping)
        worst = max(np.nanmax(np.append(s.probe_over_t(r), 0.0)) for r in CURVE_RULES)
        self.probe_plot.fig.y_range.update(start=0.0, end=1.08 * max(1.0, float(worst)))

    def _readout_html(self, t: int) -> str:
        """The readout after t writes (any t of the current settings, not only the shown one)."""
        s = self.state
        if t == 0:
            return ("<p>t = 0: nothing written yet. Press <b>Step</b> to write the first "
                    "key → value pair.</p>")
        room = ("no more pairs than it has dimensions" if t <= s.d
                else f"{t - s.d} more pairs than its {s.d} dimensions")
        head = (f"<p>After <b>t = {t}</b> writes into a {s.d} × {s.d} state "
                f"({s.d * s.d} numbers): {room}.</p>")
        if t < s.probe:
            probe = f"<p>Pair #{s.probe} is not written yet (it is written at t = {s.probe}).</p>"
        else:
            err = float(s.errors[s.rule][t - 1, s.probe - 1])  # as s.probe_readout() at t
            probe = (f"<p>Querying key #{s.probe} with {RULE_LABELS[s.rule]}: relative error "
                     f"<b>{err:.4f}</b>.</p>")
        # as s.mean_error(r) at t: the mean over the t pairs written so far
        means = ", ".join(
            f"{RULE_LABELS[r]} <b>{float(np.nanmean(s.errors[r][t - 1, : s.pairs])):.4f}</b>"
            for r in CURVE_RULES)
        return head + probe + f"<p>Mean error over the {t} stored pairs: {means} (scale {s.scale:g}).</p>"

    # Layout ------------------------------------------------------------------------------------
    def _controls(self) -> pn.viewable.Viewable:
        s = self.state
        # d and ρ redo every run (up to a few hundred ms in Pyodide at d = 32): they act when the
        # slider is released, not on every pixel of a drag.
        d = _throttled(pn.widgets.IntSlider(label="State size d (d × d)", start=4, end=MAX_D,
                                            value=s.d, width=200), s, "d")
        pairs = pn.widgets.IntSlider.from_param(s.param.pairs, label="Pairs written n", width=200)
        rule = pn.widgets.RadioButtonGroup.from_param(s.param.rule, label="Rule (step-by-step)",
                                                      color="primary", variant="outline")
        keys = pn.widgets.RadioButtonGroup.from_param(s.param.keys, label="Key set",
                                                      color="primary", variant="outline")
        rho = _throttled(pn.widgets.FloatSlider(label="Key correlation ρ (correlated keys)",
                                                start=0.0, end=0.95, step=0.05, value=s.rho,
                                                width=250, disabled=s.keys != "correlated"), s, "rho")
        scale = pn.widgets.DiscreteSlider(label="Softmax scale s", options=self._scale_options(),
                                          value=s.scale, width=220)
        probe = pn.widgets.IntSlider.from_param(s.param.probe, label="Probe: pair number (1 = first written)",
                                                width=240)

        def on_keys(event) -> None:
            rho.disabled = event.new != "correlated"

        def on_scale_state(event) -> None:
            if scale.value != event.new:
                scale.options = self._scale_options()
                scale.value = event.new

        s.param.watch(on_keys, "keys")
        _throttled(scale, s, "scale", state_to_widget=False)
        s.param.watch(on_scale_state, "scale")
        labelled_rule = pn.Column(pn.pane.HTML("<label>Rule (step-by-step view)</label>", margin=(5, 10, 0, 10)),
                                  rule, margin=0)
        labelled_keys = pn.Column(pn.pane.HTML("<label>Key set</label>", margin=(5, 10, 0, 10)),
                                  keys, margin=0)
        self.widgets = {"d": d, "pairs": pairs, "rule": rule, "keys": keys, "rho": rho,
                        "scale": scale, "probe": probe}
        for widget in self.widgets.values():
            style_widget(widget)
        scale_widgets(self._sized_widgets(), self.present)
        return pn.FlexBox(d, pairs, labelled_rule, labelled_keys, rho, scale, probe,
                          align_items="end", sizing_mode="stretch_width",
                          css_classes=["lab-controls"])

    def _sized_widgets(self) -> list:
        return [w for w in getattr(self, "widgets", {}).values() if w.width is not None]

    def set_view(self, *, theme: str | None = None, present: bool | None = None) -> None:
        super().set_view(theme=theme, present=present)
        scale_widgets(self._sized_widgets(), self.present)  # larger type needs wider sliders

    def _scale_options(self) -> list[float]:
        return sorted({*SCALE_STEPS, float(self.state.scale)})

    def _build_panes(self) -> None:
        """The figures' panes. Built with the page, not in main(): ``launch`` applies the
        presenter view (which hides ``self.secondary``) before the layout exists."""
        self.value_pane = pn.pane.Bokeh(self.value_fig, margin=(5, 5))
        self.pair_pane = pn.pane.Bokeh(self.pair_fig, margin=(5, 5))
        # the lesson's main picture: as wide as the screen allows, up to 600 px
        self.curve_pane = pn.pane.Bokeh(self.curve_plot.fig, margin=(5, 5),
                                        sizing_mode="stretch_width", min_width=300, max_width=600)
        # Wrapped: a Bokeh pane hidden once cannot be shown again (Panel 1.9.4 ties its
        # visibility to the figure's), a Column can.
        self.probe_pane = pn.Column(pn.pane.Bokeh(self.probe_plot.fig, margin=(5, 5)), margin=0)
        self.secondary.append(self.probe_pane)

    def main(self) -> pn.viewable.Viewable:
        step_view = pn.FlexBox(self.value_pane, self.pair_pane, sizing_mode="stretch_width")
        plots = pn.FlexBox(step_view, self.curve_pane, self.probe_pane,
                           sizing_mode="stretch_width")
        return pn.Column(self._controls(), self.readout.pane, plots, sizing_mode="stretch_width")


__all__ = ["FixedStatePage", "FixedStateState"]
