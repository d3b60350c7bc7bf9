"""Page 2, "What a fixed state can't hold": write n key → value pairs into a d × d state, then
query the keys written so far.

compute() runs, per setting, the recall of every pair after each write for linear attention,
the delta rule (β = 1) and softmax attention (`sim.recall.recall_after_each_write`, one pass
over the writes), and the mean error against n = 1 … 4d (`sim.recall.recall_curve`); t counts
the pairs written, and every view shows frame t of that run. Every number comes from sim.recall.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param

from sim import recall as sim_recall
from ui.contract import mark, role
from ui.exercises import exercise_setting
from ui.fmt import cell, num, sub
from ui.page import Page, Run
from ui.theme import LINES, group_label
from ui.views import Readout
from ui.views.fixed_state import EXACT, PairErrors, ProbeBars, RuleLines

# The rules the page compares, in the order of their colours (LINES[0], LINES[1], LINES[2]).
RULE_LABELS = {"linear": "linear attention", "deltanet": "delta rule (β = 1)",
               "softmax": "softmax attention"}
CURVE_RULES = tuple(RULE_LABELS)
SHORT_LABELS = ["linear", "delta rule", "softmax"]  # legends: three fit one row of a plot
DELTA_BETA = 1.0  # the lesson's delta rule: β = 1 overwrites what a unit key held, exactly
MAX_D = 32  # at 4·d = 128 pairs a run takes a fraction of a second in Pyodide
# Steps of the softmax scale's slider: its effect is multiplicative (weights go as e^{s·cos}).
SCALE_STEPS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0)


def rule_params(rule: str, scale: float) -> dict:
    return {"beta": DELTA_BETA} if rule == "deltanet" else (
        {"scale": scale} if rule == "softmax" else {})


class FixedStatePage(Page):
    only_with = {"rho": {"keys": "correlated"}}  # ρ shapes correlated keys only
    link_keys = {"exercise": "ex"}
    stops = (("t = 0", "stop_0"), ("t = d", "stop_d"), ("t = d + 1", "stop_d1"))
    named_views = {"step": "One write and its recall", "recall": "Recall error against the pairs written"}
    subject = "step"  # on the first screen (ui/page.py Page.subject)

    # The link keys are the names the old links used: they still work.
    d = param.Integer(8, bounds=(4, MAX_D), label="State size d (the state is d × d)",
                      doc="d = d_k = d_v: the state holds d × d numbers")
    pairs = param.Integer(32, bounds=(1, 4 * MAX_D), label="Pairs written n",
                          doc="How many key → value pairs the timeline writes (up to 4·d)")
    rule = param.Selector(objects={RULE_LABELS["linear"]: "linear",
                                   RULE_LABELS["deltanet"]: "deltanet"}, default="linear",
                          label="Rule (step-by-step view)",
                          doc="Which rule writes the state in the step-by-step plots")
    keys = param.Selector(objects=list(sim_recall.KEY_KINDS), default="orthonormal",
                          label="Key set", doc="orthonormal (the first d keys), random unit keys, "
                          "or correlated unit keys with mean cosine ρ")
    rho = param.Number(0.5, bounds=(0.0, 0.95), step=0.05, label="Key correlation ρ",
                       doc="Mean cosine between correlated keys")
    scale = param.Number(6.0, bounds=(0.5, 30.0), label="Softmax scale s",
                         doc="Softmax attention's score scale: weights ∝ exp(s · q·k)")
    probe = param.Integer(1, bounds=(1, 4 * MAX_D), label="Probe: pair number",
                          doc="Which stored pair to query (1 = the first pair written)")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed",
                         doc="Seed of the keys and values")
    exercise = exercise_setting()

    # n ≤ 4·d and probe ≤ n: a smaller d pulls them down, and n at its old maximum follows d.
    @param.depends("d", watch=True)
    def _fit_pairs(self) -> None:
        if not self._reverting and (self.pairs > 4 * self.d or self.pairs == 4 * self._good["d"]):
            self._quietly(pairs=4 * self.d, probe=min(self.probe, 4 * self.d))

    @param.depends("pairs", watch=True)
    def _fit_probe(self) -> None:
        if not self._reverting and self.probe > self.pairs:
            self._quietly(probe=self.pairs)

    def _quietly(self, **fit) -> None:
        self._reverting = True  # the change that called this recomputes, once, with these
        try:
            self.param.update(**fit)
        finally:
            self._reverting = False

    def compute(self) -> Run:
        d, n, N, p = self.d, self.pairs, 4 * self.d, self.probe
        if n > N:
            raise ValueError(f"pairs: a {d} × {d} state takes at most 4·d = {N} pairs, got {n}")
        if p > n:
            raise ValueError(f"probe: pair {p} is not among the {n} pairs written")
        keys = sim_recall.make_keys(self.keys, N, d, self.rho, self.seed)  # (4d, d)
        values = sim_recall.make_values(N, d, self.seed)  # (4d, d)
        errors, retrieved, curve = {}, {}, {}
        for r in CURVE_RULES:  # errors (4d, 4d), retrieved (4d, 4d, d): row t − 1 after t writes
            kw = rule_params(r, self.scale)
            errors[r], retrieved[r] = sim_recall.recall_after_each_write(r, keys, values, **kw)
            curve[r] = sim_recall.recall_curve(r, self.keys, d, rho=self.rho, seed=self.seed,
                                               **kw)["mean_error"]  # (4d,)
        none = np.full((1, N), np.nan)  # t = 0: nothing written
        per_t = {r: np.concatenate([none, errors[r][:n]])[:, :n] for r in CURVE_RULES}  # (n+1, n)
        read = np.concatenate([np.full((1, d), np.nan), retrieved[self.rule][:n, p - 1]])
        ts, shown = np.arange(n + 1), CURVE_RULES.index(self.rule)
        data = dict(d=d, probe=p, ns=np.arange(1, N + 1), ts=np.arange(1, n + 1),
                    rule_short=SHORT_LABELS[shown], colour=LINES[shown],
                    probe_value=values[p - 1], probe_read=read, pair_errors=per_t[self.rule],
                    stop_0=0, stop_d=d, stop_d1=d + 1, keys=keys, values=values)
        data |= {f"curve_{r}": curve[r] for r in CURVE_RULES}
        data |= {f"probe_{r}": errors[r][:n, p - 1] for r in CURVE_RULES}
        data |= {f"per_t_{r}": per_t[r] for r in CURVE_RULES}  # (n + 1, n) each
        texts = dict(d=d, p=p, rule=self.rule, scale=self.scale, per_t=per_t)
        data |= {"caption": [_caption(texts, t) for t in ts],
                 "readout": [_readout(texts, t) for t in ts]}
        table = {"pairs n": list(range(1, N + 1))}
        table |= {f"mean error, {RULE_LABELS[r]}": curve[r].tolist() for r in CURVE_RULES}
        for r in CURVE_RULES:  # blank before the probed pair is written and beyond the timeline
            e = [errors[r][i, p - 1] if p - 1 <= i < n else None for i in range(N)]
            table[f"pair {p}'s error after n writes, {RULE_LABELS[r]}"] = e
        return Run(t_max=n, data=data, table=table)

    def make_views(self) -> list:
        series = {RULE_LABELS[r]: f"probe_{r}" for r in CURVE_RULES}
        self.probe_plot = RuleLines("Probed pair's error over t", series, SHORT_LABELS, x="ts",
                                    x_label="pairs written t", y_label="‖ŷ − v‖ / ‖v‖",
                                    marker="ts", width=380, height=300)
        series = {RULE_LABELS[r]: f"curve_{r}" for r in CURVE_RULES}
        self.curve_plot = RuleLines("Recall error against n", series, SHORT_LABELS, x="ns",
                                    x_label="pairs stored n", y_label="mean ‖ŷ − v‖ / ‖v‖",
                                    marker="ns", width=420, height=320)
        self.value_view, self.pair_view = ProbeBars(), PairErrors()
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(0, 10),
                               styles={"font-size": "15px"}, css_classes=[role("caption")])
        self.readout = Readout("readout", sizing_mode="stretch_width", margin=(0, 10),
                               css_classes=[mark("readout")])
        return [self.caption, self.readout, self.value_view, self.pair_view, self.curve_plot,
                self.probe_plot]

    def body(self) -> pn.viewable.Viewable:
        w: dict = {}

        def fit(*_events) -> None:  # the sliders' ends follow n ≤ 4·d and probe ≤ n; a scale
            w["pairs"].end, w["probe"].end = 4 * self.d, self.pairs  # off the steps (a link's)
            w["scale"].options = sorted({*SCALE_STEPS, float(self.scale)})  # is one more step
            w["rho"].visible = self.keys == "correlated"  # ρ shapes correlated keys only

        self.param.watch(fit, ["d", "pairs", "keys", "scale"])  # before the widgets' own links
        # d and ρ redo the whole run: they act when the slider is released, not on every pixel.
        w["d"] = self.widget("d", pn.widgets.IntSlider, width=250, throttled=True)
        w["pairs"] = self.widget("pairs", pn.widgets.IntSlider, width=250, end=4 * self.d)
        w["rule"] = self.widget("rule", pn.widgets.RadioButtonGroup, color="default")
        w["keys"] = self.widget("keys", pn.widgets.RadioButtonGroup, color="default")
        w["rho"] = self.widget("rho", pn.widgets.FloatSlider, width=250, throttled=True)
        w["scale"] = self.widget("scale", pn.widgets.DiscreteSlider, width=250, throttled=True,
                                 options=[*SCALE_STEPS, float(self.scale)])
        w["probe"] = self.widget("probe", pn.widgets.IntSlider, width=250, end=self.pairs)
        w["seed"] = self.widget("seed", pn.widgets.IntInput, width=120)
        self.widgets_by_name = w
        fit()

        def labelled(name: str) -> pn.Column:  # a button group shows no label of its own
            return pn.Column(group_label(self.label(name)), w[name], margin=0)

        controls = pn.Column(w["d"], w["pairs"], labelled("rule"), labelled("keys"), w["rho"],
                             w["scale"], w["probe"], w["seed"], width=300,
                             css_classes=[role("controls")])
        fig = pn.pane.Bokeh
        step_view = pn.Column(self.caption.panel(), self.readout.panel(), pn.FlexBox(
            fig(self.value_view.fig), fig(self.pair_view.fig), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"flex": "1 1 600px"},
            css_classes=[role("main_view"), self.view_class("step")])
        curves = pn.FlexBox(pn.Column(fig(self.curve_plot.fig), css_classes=[self.view_class("recall")]),
                            pn.Column(fig(self.probe_plot.fig), css_classes=[role("secondary")]),
                            sizing_mode="stretch_width")
        return pn.Column(pn.FlexBox(controls, step_view, sizing_mode="stretch_width"), curves,
                         sizing_mode="stretch_width")


# Readout texts, one per t ----------------------------------------------------------------------

def _caption(r: dict, t: int) -> str:
    """What step t changed, in one line: the pair written, the earlier pair whose recall moved
    most, and the worst recall now."""
    name = RULE_LABELS[r["rule"]]
    if t == 0:
        return (f"<b>t = 0</b>, {name}: nothing written yet; Step writes pair 1 "
                f"(key k₁ → value v₁).")
    now, before = r["per_t"][r["rule"]][t, :t], r["per_t"][r["rule"]][t - 1, :t - 1]
    parts = [f"<b>t = {t}</b>, {name}: wrote pair {t} (key k{sub(t)} → value v{sub(t)})"]
    if t > 1:
        change = now[:-1] - before
        i = int(np.argmax(np.abs(change)))
        parts.append("no earlier pair's recall error changed" if abs(change[i]) < EXACT else
                     f"pair {i + 1}'s recall error {'rose' if change[i] > 0 else 'fell'} to "
                     f"{cell(now[i], EXACT)}")
    j = int(np.argmax(now))
    parts.append("every stored pair is recalled exactly" if now[j] < EXACT else
                 f"the largest error is pair {j + 1}'s {cell(now[j], EXACT)}")
    return "; ".join(parts)


def _readout(r: dict, t: int) -> str:
    d, p = r["d"], r["p"]
    if t == 0:
        return (f"<p>A {d} × {d} state ({d * d} numbers) holds nothing yet. Press <b>Step</b> "
                "to write the first key → value pair.</p>")
    room = ("no more pairs than it has dimensions" if t <= d
            else f"{t - d} more pairs than its {d} dimensions")
    head = f"<p>After <b>t = {t}</b> writes into a {d} × {d} state ({d * d} numbers): {room}.</p>"
    if t < p:
        probe = f"<p>Pair {p} is not written yet (it is written at t = {p}).</p>"
    else:
        err = r["per_t"][r["rule"]][t, p - 1]
        probe = (f"<p>Querying key {p} with {RULE_LABELS[r['rule']]}: relative error "
                 f"<b>{cell(err, EXACT)}</b>.</p>")
    means = ", ".join(f"{RULE_LABELS[x]} <b>{cell(np.mean(r['per_t'][x][t, :t]), EXACT)}</b>"
                      for x in CURVE_RULES)
    return head + probe + (f"<p>Mean error over the {t} stored pairs: {means} "
                           f"(softmax scale {num(r['scale'])}).</p>")
