"""Page 3, "Gates that decide what to keep": one token stream through 2 to 4 update rules.

The state precomputes, with sim, every chosen rule over the whole stream (states S_t, the
read-out of an old and of the newest value, and for one delta rule every `sim.step` with its
read-back, error, erased and written parts); the views show token t of it. Nothing here updates
a state: every S, every read-out and every part of an update comes from sim.
"""

from __future__ import annotations

import io

import numpy as np
import panel as pn
import param
from bokeh.models import HoverTool

import sim
from sim import scenarios
from ui.app import Page
from ui.state import PageState
from ui.theme import LINES
from ui.views import Heatmap, LinePlot, Readout

# The rules this page compares (softmax keeps a cache, not a state: it has no heatmap here).
GATED_RULES = ("linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda")
DELTA_RULES = ("deltanet", "gated_deltanet", "kda")
LABELS = {name: sim.RULE_INFO[name].label for name in GATED_RULES}
MIN_RULES, MAX_RULES = 2, 4

REWRITE_EVERY = 3  # the overwrite stream rewrites its key every 3 tokens (sim's default)
VOCABULARY_SIZE = 4


class GatesState(PageState):
    """Every knob of the gates page; ``result`` holds the runs for the current settings."""

    rules = param.ListSelector(
        default=["linear", "retnet", "deltanet", "gated_deltanet"],
        objects={LABELS[n]: n for n in GATED_RULES},
        doc="The 2 to 4 rules that read the same token stream, side by side")
    scenario = param.Selector(
        default="overwrite",
        objects={"overwrite one key": "overwrite", "random": "random",
                 "vocabulary with repeats": "vocabulary"},
        doc="The token stream: one key rewritten with new values, random Gaussian tokens, "
            "or keys drawn with repeats from a small vocabulary")
    d = param.Integer(4, bounds=(2, 16), doc="Size d = d_k = d_v of keys, values and the state")
    tokens = param.Integer(24, bounds=(4, 256), doc="Tokens T in the stream")
    gamma = param.Number(0.9, bounds=(0.5, 1.0), step=0.01,
                         doc="RetNet's decay γ: a fixed share of the state kept at every token")
    alpha = param.Number(0.9, bounds=(0.5, 1.0), step=0.01,
                         doc="The decay gate α of Mamba-2, GLA, Gated DeltaNet and KDA")
    beta = param.Number(1.0, bounds=(0.0, 2.0), step=0.05,
                        doc="Write strength β of the delta rules: how much of the error is written")
    normalize_keys = param.Boolean(True, doc="Divide every key by its length (L2) before any rule "
                                             "sees it; the delta rules expect unit keys")
    data_dependent_gates = param.Boolean(
        False, doc="Draw α and β per token around the chosen values (from the seed); "
                   "off: every token gets the same gates")
    inspect = param.Selector(
        default="auto",
        objects={"first delta rule shown": "auto", **{LABELS[n]: n for n in DELTA_RULES}},
        doc="Which delta rule the update panel takes apart")

    revision = param.Integer(0, precedence=-1, doc="Bumped whenever a new run is in `result`")
    url_exclude = (*PageState.url_exclude, "revision")

    def __init__(self, **params):
        super().__init__(**params)
        self.result: dict | None = None
        self._warnings: list[str] = []
        # Runs after every other watcher of the notice (the page's Alert among them), so that
        # the Alert's last word is the notice with the warnings put back.
        self.param.watch(self._keep_warnings, "notice", precedence=100)
        self.recompute()
        if self.result is None:  # bad settings from the start: show the defaults' picture
            self.result = GatesState().result
            self.set_t_max(self.result["T"])

    # ---------------------------------------------------------------------------------------
    def inspected_rule(self, rules: list[str] | None = None) -> str:
        rules = list(self.rules) if rules is None else rules
        if self.inspect != "auto":
            return self.inspect
        return next((r for r in rules if r in DELTA_RULES), "deltanet")

    def _stream(self) -> scenarios.Stream:
        T, d, seed = self.tokens, self.d, self.seed
        if self.scenario == "overwrite":
            return scenarios.overwrite(T, d, d, seed=seed, every=REWRITE_EVERY)
        if self.scenario == "vocabulary":
            return scenarios.vocabulary(T, d, d, vocab_size=min(VOCABULARY_SIZE, d), seed=seed)
        return scenarios.gaussian(T, d, d, seed=seed)

    def _gates(self, T: int) -> dict[str, np.ndarray]:
        """Per-token gates: constant unless data-dependent (RetNet's γ is fixed by design)."""
        if self.data_dependent_gates:
            return scenarios.draw_gates(T, self.d, self.alpha, self.beta, self.seed)
        return {"alpha": np.full(T, self.alpha), "alpha_channel": np.full((T, self.d), self.alpha),
                "beta": np.full(T, self.beta)}

    @staticmethod
    def rule_gates(rule: str, gates: dict[str, np.ndarray], gamma: float) -> dict:
        """The keyword arguments sim.run takes for `rule`, every gate given per token."""
        if rule == "retnet":
            return {"gamma": gamma}
        kwargs = {}
        if sim.RULE_INFO[rule].alpha_shape == "scalar":
            kwargs["alpha"] = gates["alpha"]
        elif sim.RULE_INFO[rule].alpha_shape == "channel":
            kwargs["alpha"] = gates["alpha_channel"]
        if rule in DELTA_RULES:
            kwargs["beta"] = gates["beta"]
        return kwargs

    @param.depends("rules", "scenario", "d", "tokens", "gamma", "alpha", "beta", "normalize_keys",
                   "data_dependent_gates", "inspect", "seed", watch=True)
    def recompute(self) -> None:
        """Run every chosen rule on the stream; on bad settings keep the previous picture."""
        rules = list(self.rules)
        warnings, result = [], None
        if self.beta > 1:  # the update panel always shows a delta rule
            warnings.append(f"Write strength β = {self.beta:g} > 1 overshoots: each write "
                            "over-corrects, so the stored value swings past the new one.")
        if not self.normalize_keys:
            step_size = self._largest_step()
            if step_size > 1:
                warnings.append(
                    f"Keys are not normalised: β‖k‖² reaches {step_size:.3g}, so the delta rules "
                    "over-correct" + (" and their state grows without bound (β‖k‖² > 2)."
                                      if step_size > 2 else "."))
        if not MIN_RULES <= len(rules) <= MAX_RULES:
            warnings.append(f"Choose 2 to 4 rules to compare (now {len(rules)}); "
                            "the picture shows the previous choice.")
        else:
            try:
                result = self._compute(rules)
            except sim.DivergenceError as err:
                rule = getattr(err, "rule", "")
                warnings.append(
                    f"{LABELS.get(rule, 'A rule')} diverged at token t = {err.token + 1}: its "
                    "state grew past 10¹⁵⁰ because each write over-corrected by more than it "
                    "fixed. Showing the previous picture; lower β or normalise the keys.")
            except ValueError as err:
                warnings.append(f"These settings are not accepted: {err}. "
                                "Showing the previous picture.")
        self._warnings = warnings
        self.notice = " ".join(warnings)
        if result is None:
            return
        self.result = result
        with param.parameterized.batch_call_watchers(self):
            self.set_t_max(result["T"])
            self.revision += 1

    def _keep_warnings(self, *_events) -> None:
        """Whoever rewrites the notice (e.g. a link's notices at start-up), the warnings about
        the current settings stay in it."""
        missing = [w for w in getattr(self, "_warnings", []) if w not in self.notice]
        if missing:
            self.notice = " ".join([self.notice, *missing]).strip()

    def _largest_step(self) -> float:
        """max over tokens of β_t ‖k_t‖²: how far one delta write moves along k (1 = exactly)."""
        k = self._stream().k
        return float(np.max(self._gates(len(k))["beta"] * np.sum(k * k, axis=1)))

    def _compute(self, rules: list[str]) -> dict:
        stream = self._stream()
        T = stream.T
        k = sim.l2_normalize(stream.k) if self.normalize_keys else stream.k  # (T, d_k)
        v = stream.v  # (T, d_v)
        gates = self._gates(T)
        # Two read-outs per rule: the old value (the first pair, queried with its key k_1) and the
        # newest one (overwrite: the rewritten key's latest value; otherwise the pair just written).
        old_q, old_target = np.repeat(k[:1], T, axis=0), np.repeat(v[:1], T, axis=0)
        if self.scenario == "overwrite":
            new_q, new_target = stream.q, stream.targets
        else:
            new_q, new_target = k, v
        inspected = self.inspected_rule(rules)
        runs = {}
        for rule in dict.fromkeys([*rules, inspected]):
            kwargs = self.rule_gates(rule, gates, self.gamma)
            try:
                newest = sim.run(rule, new_q, k, v, **kwargs)
                old = sim.run(rule, old_q, k, v, keep_states=False, **kwargs)
            except sim.DivergenceError as err:
                err.rule = rule
                raise
            runs[rule] = {
                "states": newest.states,  # (T, d_k, d_v)
                "norm": np.linalg.norm(newest.states, axis=(1, 2)),  # (T,) ‖S_t‖_F
                "error_newest": sim.recall.relative_error(newest.outputs, new_target),  # (T,)
                "error_old": sim.recall.relative_error(old.outputs, old_target),  # (T,)
                "gates": kwargs,
            }
        steps = self._steps(inspected, new_q, k, v, runs[inspected]["gates"])
        # Colour limits per token: the largest entry seen so far (a running maximum), shared by
        # every rule. Colours keep their meaning as t grows (a fading state pales), and early
        # tokens stay readable when a later state grows large.
        S_limit = np.max([np.abs(runs[r]["states"]).max(axis=(1, 2)) for r in rules], axis=0)
        vec_limit = np.max([np.abs(np.concatenate([v[t], s.read_back, s.error]))
                            for t, s in enumerate(steps)], axis=1)
        part_limit = np.array([max(np.abs(s.write).max(), np.abs(s.erased).max()) for s in steps])
        return {"T": T, "rules": rules, "stream": stream, "k": k, "v": v, "runs": runs,
                "inspected": inspected, "steps": steps,
                "S_limit": np.maximum.accumulate(S_limit),  # (T,)
                "vec_limit": np.maximum.accumulate(vec_limit),  # (T,)
                "part_limit": np.maximum.accumulate(part_limit)}  # (T,)

    @staticmethod
    def _steps(rule: str, q: np.ndarray, k: np.ndarray, v: np.ndarray, kwargs: dict) -> list:
        """Every token's `sim.Step` of one delta rule: read-back, error, erased and write."""
        T, d_k = k.shape
        state = sim.init_state(rule, d_k, v.shape[1])
        steps = []
        for t in range(T):
            gates = {name: (g[t] if isinstance(g, np.ndarray) else g) for name, g in kwargs.items()}
            step = sim.step(rule, state, q[t], k[t], v[t], **gates)
            steps.append(step)
            state = step.state
        return steps

    # ---------------------------------------------------------------------------------------
    def token_gates(self, rule: str, t: int) -> dict[str, float | np.ndarray]:
        """The gates `rule` used at token index t (0-based)."""
        kwargs = self.result["runs"][rule]["gates"]
        return {name: (g[t] if isinstance(g, np.ndarray) else g) for name, g in kwargs.items()}

    def csv(self) -> str:
        """Per token (t = 1..T) and rule: ‖S_t‖, both recall errors and the gates used."""
        out = io.StringIO()
        out.write("t,rule,state_norm,recall_error_newest,recall_error_old,gamma,alpha,beta\n")
        if self.result is None:
            return out.getvalue()
        for t in range(self.result["T"]):
            for rule in self.result["rules"]:
                run = self.result["runs"][rule]
                g = self.token_gates(rule, t)
                alpha = g.get("alpha", "")
                if isinstance(alpha, np.ndarray):  # per channel: the d_k values, space-separated
                    alpha = " ".join(f"{a:.6g}" for a in alpha)
                elif alpha != "":
                    alpha = f"{alpha:.6g}"
                cells = [str(t + 1), rule, f"{run['norm'][t]:.9g}",
                         f"{run['error_newest'][t]:.9g}", f"{run['error_old'][t]:.9g}",
                         f"{g['gamma']:.6g}" if "gamma" in g else "", alpha,
                         f"{g['beta']:.6g}" if "beta" in g else ""]
                out.write(",".join(cells) + "\n")
        return out.getvalue()


# ---------------------------------------------------------------------------------------------
def _thin_ticks(view: Heatmap) -> None:
    """At most about 8 tick labels per axis, so that d = 16 stays legible in a small figure."""
    for axis, n in ((view.fig.xaxis, view.cols), (view.fig.yaxis, view.rows)):
        every = 1 if n <= 8 else 2 if n <= 12 else 4
        ticks = list(range(0, n, every))
        if list(getattr(axis[0].ticker, "ticks", [])) != ticks:  # a new ticker costs a model
            axis.ticker = ticks


def _gate(g: float | np.ndarray) -> str:
    """A gate for the readouts: one number, or the per-channel values when they differ."""
    if not isinstance(g, np.ndarray):
        return _fmt(g)
    if np.all(g == g[0]):
        return f"{_fmt(g[0])} in every channel"
    return _vector(g)


def _fmt(x: float) -> str:
    return f"{x:.3g}"






GATE_TABLE_CSS = ".lab-gates td, .lab-gates th {padding: 2px 12px 2px 0; text-align: left}"


def _vector(x: np.ndarray) -> str:
    # round first, then add 0.0, so that −0.001 prints as 0.00 and not as −0.00
    return "(" + ", ".join(f"{round(float(a), 2) + 0.0:.2f}" for a in x) + ")"


class GatesPage(Page):
    title = "Gates that decide what to keep"
    slug = "gates"

    HEAT = 250  # px: four small multiples fit a laptop row and one fits a phone
    LINE_W, LINE_H = 360, 250

    def __init__(self, state: GatesState | None = None):
        super().__init__(state or GatesState())
        s = self.state
        d = s.d
        cells = {"row_label": "key channel i", "col_label": "value channel j",
                 "width": self.HEAT, "height": self.HEAT}
        self.heatmaps = [Heatmap(f"S{i}", d, d, value_name="S_ij", **cells)
                         for i in range(MAX_RULES)]
        self.vectors = Heatmap("Read back and error", 3, d, row_label="",
                                       col_label="value channel j", col_symbol="j",
                                       row_symbol="row", width=330, height=180, value_name="value")
        self.vectors.fig.yaxis.major_label_overrides = {0: "v", 1: "Sᵀk", 2: "v − Sᵀk"}
        self.erased = Heatmap("Erased: β k (Sᵀk)ᵀ", d, d, value_name="erased_ij", **cells)
        self.write = Heatmap("Written: β k vᵀ", d, d, value_name="write_ij", **cells)
        names = [LABELS[r] for r in GATED_RULES]
        # Log scale: decay, overwrite and runaway growth all read as slopes.
        self.norm_plot = LinePlot("Size of the state ‖S‖", names, x_label="token t",
                                  y_label="‖S_t‖ (Frobenius, log scale)", width=self.LINE_W,
                                  height=self.LINE_H, y_axis_type="log")
        self.newest_plot = LinePlot("Recall error: newest value", names, x_label="token t",
                                    y_label="‖Sᵀk − v‖ / ‖v‖", width=self.LINE_W,
                                    height=self.LINE_H)
        self.old_plot = LinePlot("Recall error: first value (old)", names, x_label="token t",
                                 y_label="‖Sᵀk₁ − v₁‖ / ‖v₁‖", width=self.LINE_W,
                                 height=self.LINE_H)
        self.line_plots = [self.norm_plot, self.newest_plot, self.old_plot]
        for view in [*self.heatmaps, self.vectors, self.erased, self.write]:
            # room for colour-bar labels that lengthen as the range grows (e.g. "−1000")
            view.fig.min_border_right = 64
            self.add_figure(view.fig)
        for plot in self.line_plots:
            plot.fig.legend.visible = False  # one legend in HTML serves all three plots
            self.add_figure(plot.fig)
        self.legend = pn.pane.HTML("", sizing_mode="stretch_width")
        self.recall_note = pn.pane.HTML("", sizing_mode="stretch_width")
        self.token_info = Readout(sizing_mode="stretch_width", css_classes=["lab-readout"])
        self.delta_info = Readout(sizing_mode="stretch_width", css_classes=["lab-readout"])
        self.gate_table = Readout(sizing_mode="stretch_width", css_classes=["lab-readout"],
                                  stylesheets=[GATE_TABLE_CSS])
        self.readouts = {self.token_info: self._token_html, self.delta_info: self._delta_html,
                         self.gate_table: self._gates_html}
        self.heat_panes = [pn.pane.Bokeh(h.fig) for h in self.heatmaps]
        s.param.watch(self._on_run, "revision")
        s.param.watch(self._on_t, "t")
        self._on_run()

    # Controls ----------------------------------------------------------------------------------
    def controls(self) -> pn.viewable.Viewable:
        p = self.state.param
        w = 220
        widgets = [
            pn.widgets.MultiChoice.from_param(p.rules, label="Rules to compare (2 to 4)",
                                              max_items=MAX_RULES, sizing_mode="stretch_width",
                                              min_width=w, max_width=2 * w + 10),
            pn.widgets.Select.from_param(p.scenario, label="Token stream", width=w),
            pn.widgets.IntSlider.from_param(p.d, label="Size d = d_k = d_v", width=w),
            pn.widgets.IntSlider.from_param(p.tokens, label="Tokens T", width=w),
            pn.widgets.FloatSlider.from_param(p.gamma, label="RetNet decay γ", width=w),
            pn.widgets.FloatSlider.from_param(p.alpha, label="Decay gate α", width=w),
            pn.widgets.FloatSlider.from_param(p.beta, label="Write strength β", width=w),
            pn.widgets.Checkbox.from_param(p.normalize_keys, label="Normalise keys (L2)", width=w),
            pn.widgets.Checkbox.from_param(p.data_dependent_gates,
                                           label="Data-dependent gates (per token)", width=w),
        ]
        return pn.FlexBox(*widgets, sizing_mode="stretch_width", align_items="end",
                          css_classes=["lab-controls"])

    def main(self) -> pn.viewable.Viewable:
        inspect = pn.widgets.Select.from_param(self.state.param.inspect,
                                               label="Take apart the update of", width=220)
        states = pn.FlexBox(*self.heat_panes, sizing_mode="stretch_width")
        delta = pn.FlexBox(pn.pane.Bokeh(self.vectors.fig), pn.pane.Bokeh(self.erased.fig),
                           pn.pane.Bokeh(self.write.fig), sizing_mode="stretch_width")
        over_time = pn.FlexBox(*(pn.pane.Bokeh(p.fig) for p in self.line_plots),
                               sizing_mode="stretch_width")
        gates = pn.Column(pn.pane.Markdown("#### Gates at this token"), self.gate_table.pane,
                          sizing_mode="stretch_width")
        self.secondary.append(gates)
        return pn.Column(
            self.controls(),
            self.token_info.pane,
            pn.pane.Markdown("#### The state S of each rule (one colour scale)"),
            states,
            pn.pane.Markdown("#### One update taken apart"),
            inspect,
            self.delta_info.pane,
            delta,
            pn.pane.Markdown("#### Over time"),
            self.legend,
            over_time,
            self.recall_note,
            gates,
            sizing_mode="stretch_width",
        )

    # Updates -----------------------------------------------------------------------------------
    def _on_run(self, *_events) -> None:
        """New settings: relabel, rescale and refill the over-time plots, then show step t."""
        s, res = self.state, self.state.result
        rules = res["rules"]
        d = res["k"].shape[1]
        for i, (heat, pane) in enumerate(zip(self.heatmaps, self.heat_panes)):
            pane.visible = i < len(rules)
            if i < len(rules):
                heat.fig.title.text = LABELS[rules[i]]
            else:  # hidden: cleared, so that the page holds the same data however it got here
                heat.fig.title.text = ""
                heat.update(np.zeros((d, d)))
        x = np.arange(1, res["T"] + 1)
        nan = np.full(res["T"], np.nan)
        for plot, key in zip(self.line_plots, ("norm", "error_newest", "error_old")):
            cols = {LABELS[r]: (res["runs"][r][key] if r in rules else nan) for r in GATED_RULES}
            plot.update(x, **cols)
            self._show_series(plot, rules)
        self.legend.object = " ".join(
            f'<span style="white-space:nowrap;margin-right:1em"><span style="display:inline-block;'
            f'width:22px;height:4px;vertical-align:middle;background:{LINES[i % len(LINES)]}">'
            f"</span> {LABELS[r]}</span>" for i, r in enumerate(rules))
        newest = ("query the rewritten key k₁, compare with the latest value written under it"
                  if s.scenario == "overwrite" else
                  "query the key just written, compare with its value")
        self.recall_note.object = (
            f"Recall error ‖Sᵀk − v‖ / ‖v‖ (0 exact, 1 as bad as returning nothing). "
            f"<b>Newest</b>: {newest}. <b>Old</b>: query the first token's key k₁, compare "
            "with the first value v₁.")
        for readout, html in self.readouts.items():  # room for the longest text of this run
            readout.fit(html(t) for t in range(res["T"] + 1))
        self._on_t()

    def _show_series(self, plot: LinePlot, rules: list[str]) -> None:
        """Show only the chosen rules, coloured by their place (the same in every plot)."""
        lines = plot.fig.renderers
        shown = []
        for name, renderer, item in zip(GATED_RULES, lines, plot.fig.legend[0].items):
            on = name in rules
            renderer.visible = item.visible = on
            if on:
                renderer.glyph.line_color = LINES[rules.index(name) % len(LINES)]
                shown.append(renderer)
        for hover in plot.fig.select(type=HoverTool):
            hover.renderers = shown[:1]
            hover.tooltips = [("t", "@x")] + [
                (LABELS[r], f"@{{{LABELS[r]}}}{{0.[000]}}") for r in rules]

    def _on_t(self, *_events) -> None:
        s, res = self.state, self.state.result
        t = min(s.t, res["T"])
        d = res["k"].shape[1]
        zero = np.zeros((d, d))
        limit = res["S_limit"][max(t, 1) - 1]
        for i, heat in enumerate(self.heatmaps):
            heat.set_range(limit)
            if i < len(res["rules"]):
                heat.update(res["runs"][res["rules"][i]]["states"][t - 1] if t > 0 else zero)
                _thin_ticks(heat)
        for plot in self.line_plots:
            plot.mark(t)
        self._show_delta(t)
        for readout, html in self.readouts.items():
            readout.show(html(t))

    def _token_html(self, t: int) -> str:
        res = self.state.result
        stream = res["stream"]
        if t == 0:
            return (f"<b>t = 0</b>: no token yet. {stream.description} "
                    "Press <b>Step</b> to write the first one.")
        label = stream.labels[t - 1] if stream.labels else f"token {t}"
        cells = " · ".join(
            f"{LABELS[r]}: ‖S‖ = {_fmt(res['runs'][r]['norm'][t - 1])}" for r in res["rules"])
        return (f"<b>t = {t}</b> ({label}): k = {_vector(res['k'][t - 1])}, "
                f"v = {_vector(res['v'][t - 1])}<br>{cells}")

    def _show_delta(self, t: int) -> None:
        res = self.state.result
        d = res["k"].shape[1]
        if t == 0:
            for view, zeros in ((self.vectors, np.zeros((3, d))), (self.erased, np.zeros((d, d))),
                                (self.write, np.zeros((d, d)))):
                view.set_range(1.0)
                view.update(zeros)
                _thin_ticks(view)
            return
        step = res["steps"][t - 1]
        v = res["v"][t - 1]
        self.vectors.set_range(res["vec_limit"][t - 1])
        self.erased.set_range(res["part_limit"][t - 1])
        self.write.set_range(res["part_limit"][t - 1])
        self.vectors.update(np.stack([v, step.read_back, step.error]))  # (3, d_v)
        self.erased.update(step.erased)
        self.write.update(step.write)
        for view in (self.vectors, self.erased, self.write):
            _thin_ticks(view)
        self.vectors.labels.visible = d <= 6  # wider vectors: hover gives the values

    def _delta_html(self, t: int) -> str:
        res = self.state.result
        rule = res["inspected"]
        d = res["k"].shape[1]
        extra = "" if rule in res["rules"] else " (not among the rules compared above)"
        if t == 0:
            return f"{LABELS[rule]}{extra}: no update yet."
        step = res["steps"][t - 1]
        g = self.state.token_gates(rule, t - 1)
        decay = g.get("alpha")
        decay_text = "" if decay is None else f"decay α = {_gate(decay)}, "
        return (
            f"<b>{LABELS[rule]}</b>{extra}, token t = {t}: {decay_text}β = {_fmt(g['beta'])}. "
            + (f"Read back Sᵀk = {_vector(step.read_back)}, error v − Sᵀk = {_vector(step.error)}. "
               if d <= 8 else "")
            + "New S = decayed S − erased part + written part.")

    def _gates_html(self, t: int) -> str:
        res = self.state.result
        if t == 0:
            return "<p>No token yet.</p>"
        rows = []
        for rule in res["rules"]:
            g = self.state.token_gates(rule, t - 1)
            parts = []
            for name, symbol in (("gamma", "γ"), ("alpha", "α"), ("beta", "β")):
                if name in g:
                    val = g[name]
                    parts.append(f"{symbol} = {_gate(val)}")
            run = res["runs"][rule]
            rows.append(f"<tr><td>{LABELS[rule]}</td><td>{', '.join(parts) or 'no gate'}</td>"
                        f"<td>{_fmt(run['error_newest'][t - 1])}</td>"
                        f"<td>{_fmt(run['error_old'][t - 1])}</td></tr>")
        return ("<table class='lab-gates'><thead><tr><th>rule</th><th>gates used</th>"
                "<th>error, newest</th><th>error, old</th></tr></thead><tbody>" + "".join(rows)
                + "</tbody></table>")
