"""Page 7, "State space models: from S4 to Mamba to Mamba-2": one small input stream through
three state space models, token by token.

``compute()`` runs Mamba-1's selective scan (``sim.selective_scan``: a step size Δ per channel
and token, B and C per token), the time-invariant S4D (one fixed Δ, fixed B and C) and Mamba-2
(one Δ per token for the whole head, one scalar A) on the same input u, all with A[d, n] =
−(n + 1) (S4D-real) but Mamba-2's A = −1, and keeps every h_t, the decay exp(Δ_t A), Δ_t and
the outputs y_t = C_tᵀ h_t + D u_t. The views (ui/views/state_space.py) show token t of it.
"Your turn" (``exercise``, link key ``ex``): one token of the scan by hand
(``sim.exercises.state_space``).
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param

import sim
from ui.contract import mark, role
from ui.exercises import exercise_setting
from ui.page import Page, Run
from ui.theme import heading
from ui.views import Heatmap, LinePlot, Readout
from ui.views import state_space as sv

MODELS = ("mamba", "s4d", "mamba2")
PULSE_EVERY = 6  # the pulse stream: a strong token every 6, small noise between
NOISE = 0.1  # the size of the quiet tokens' input


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def inverse_softplus(y: float) -> float:
    return float(y + np.log(-np.expm1(-y)))  # log(e^y − 1), stable for small y


class StateSpacePage(Page):
    link_keys = {"exercise": "ex"}
    named_views = {"mamba": "Mamba's selective scan", "compare": "S4D and Mamba-2 beside it",
                   "time": "Over time"}
    subject = "mamba"  # on the first screen (ui/page.py Page.subject)
    stops = (("start", "stop_start"), ("the first pulse", "stop_pulse"),
             ("the second pulse", "stop_pulse2"))

    stream = param.Selector(default="pulses", label="Input stream", objects={
        "a pulse every 6 tokens": "pulses", "random": "random"})
    channels = param.Integer(4, bounds=(1, 8), label="Channels d_inner")
    state_size = param.Integer(4, bounds=(1, 8), label="State size N per channel")
    tokens = param.Integer(24, bounds=(4, 128), label="Tokens T")
    step = param.Number(0.1, bounds=(0.01, 2.0), step=0.01, label="Typical step size Δ",
                        doc="Δ of a quiet token (Mamba initialises Δ in [0.001, 0.1]); S4D's fixed Δ")
    selectivity = param.Number(3.0, bounds=(0.0, 6.0), step=0.1,
                               label="Selectivity: how much Δ follows the input",
                               doc="Δ_t = softplus(b + s·|u_t|): 0 makes Mamba time-invariant in Δ")
    skip = param.Number(1.0, bounds=(0.0, 2.0), step=0.05, label="Skip D",
                        doc="y = Cᵀh + D u: the input passed straight to the output")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed")
    exercise = exercise_setting()  # "Your turn": one token of the selective scan by hand

    # The run ---------------------------------------------------------------------------------
    def inputs(self) -> dict[str, np.ndarray]:
        """u (T, d_inner); the projections B_t, C_t = W u_t (T, N) of Mamba and Mamba-2 and the
        fixed B, C (N,) of S4D, from the seed; Δ of each model (T, d_inner)."""
        T, d, N = self.tokens, self.channels, self.state_size
        rng = np.random.default_rng([self.seed, 7])
        if self.stream == "pulses":
            u = NOISE * rng.standard_normal((T, d))
            u[::PULSE_EVERY] = rng.choice([-1.0, 1.0], size=(len(u[::PULSE_EVERY]), d))
        else:
            u = rng.standard_normal((T, d))
        W_B, W_C = rng.standard_normal((2, N, d)) / np.sqrt(d)
        B0, C0 = rng.standard_normal((2, N))
        bias = inverse_softplus(self.step)
        return {"u": u, "B": u @ W_B.T, "C": u @ W_C.T, "B0": np.tile(B0, (T, 1)),
                "C0": np.tile(C0, (T, 1)),
                "delta_mamba": softplus(bias + self.selectivity * np.abs(u)),
                "delta_s4d": np.full((T, d), self.step),
                "delta_mamba2": np.repeat(softplus(bias + self.selectivity * np.abs(u).mean(
                    axis=1, keepdims=True)), d, axis=1)}

    def compute(self) -> Run:
        T, d, N = self.tokens, self.channels, self.state_size
        x = self.inputs()
        u, D = x["u"], np.full(d, self.skip)
        A = {"mamba": -np.tile(np.arange(1.0, N + 1), (d, 1)),
             "s4d": -np.tile(np.arange(1.0, N + 1), (d, 1)), "mamba2": -np.ones((d, N))}
        BC = {"mamba": (x["B"], x["C"]), "s4d": (x["B0"], x["C0"]), "mamba2": (x["B"], x["C"])}
        y, h, decay = {}, {}, {}
        for m in MODELS:
            delta = x[f"delta_{m}"]
            y[m], h[m] = sim.selective_scan(u, delta, A[m], *BC[m], D)  # (T, d), (T, d, N)
            decay[m] = np.exp(delta[:, :, None] * A[m][None])  # (T, d, N)

        def frames(a):  # t = 0 … T: nothing before the first token
            return np.concatenate([np.zeros((1, *a.shape[1:])), a])

        h_limit = max(float(np.abs(h[m]).max()) for m in MODELS)
        data = {"x": np.arange(1, T + 1), "mark": np.arange(T + 1), "stop_start": 0,
                "stop_pulse": 1 if self.stream == "pulses" else -1,
                "stop_pulse2": PULSE_EVERY + 1 if self.stream == "pulses" and T > PULSE_EVERY
                else -1, "u_frames": frames(u), "delta": frames(x["delta_mamba"]),
                "delta_limit": float(x["delta_mamba"].max()), "decay": frames(decay["mamba"]),
                "decay_limit": 1.0, "u1": u[:, 0]}
        for m in MODELS:
            data[f"h_{m}"], data[f"h_{m}_limit"] = frames(h[m]), h_limit
            data[f"y_{m}"], data[f"delta1_{m}"] = y[m][:, 0], x[f"delta_{m}"][:, 0]
        r = {"u": u, "y": y, "h": h, "x": x, "decay": decay, "C": BC, "D": self.skip,
             "step": self.step}
        for key, text in (("caption", sv.caption), ("models_text", sv.models_text)):
            data[key] = [text(r, t) for t in range(T + 1)]
        table = {"t": [], "model": [], "channel": [], "u": [], "delta": [], "y": []}
        for t in range(T):
            for m in MODELS:
                for c in range(d):
                    for key, value in (("t", t + 1), ("model", m), ("channel", c + 1),
                                       ("u", u[t, c]), ("delta", x[f"delta_{m}"][t, c]),
                                       ("y", y[m][t, c])):
                        table[key].append(float(value) if key in ("u", "delta", "y") else value)
        return Run(t_max=T, data=data, table=table)

    # The views -------------------------------------------------------------------------------
    def make_views(self) -> list:
        cells = {"row_label": "channel d", "col_label": "state index n", "row_symbol": "d",
                 "col_symbol": "n", "width": 280, "height": 250}
        self.delta = Heatmap("delta", "Step Δₜ", row_label="channel d",
                             col_label="Mamba", row_symbol="d", width=150, height=250,
                             value_name="Δ", colorbar=False)
        self.decay = Heatmap("decay", "Mamba's decay exp(Δₜ A)", value_name="kept", **cells)
        self.h = {m: Heatmap(f"h_{m}", sv.STATE_TITLES[m], value_name="h[d, n]", **cells)
                  for m in MODELS}
        line = {"x": "x", "x_label": "token t", "marker": "mark", "width": 420, "height": 260}
        self.delta_plot = LinePlot("Step size Δ of channel 1", {
            "Mamba (per channel)": "delta1_mamba", "S4D (fixed)": "delta1_s4d",
            "Mamba-2 (one per head)": "delta1_mamba2"}, y_label="Δ", **line)
        self.y_plot = LinePlot("Output y of channel 1 (with the skip D u)", {
            "Mamba": "y_mamba", "S4D": "y_s4d", "Mamba-2": "y_mamba2", "input u": "u1"},
            y_label="y", dashed=("input u",), **line)
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(4, 10),
                               styles={"font-size": "15px"}, css_classes=[role("caption")])
        self.models_text = Readout("models_text", sizing_mode="stretch_width",
                                   css_classes=[mark("readout")], stylesheets=[sv.TABLE_CSS])
        return [self.delta, self.decay, *self.h.values(), self.delta_plot, self.y_plot,
                self.caption, self.models_text]

    def body(self) -> pn.viewable.Viewable:
        w = {"width": 240}
        controls = pn.FlexBox(
            self.widget("stream", pn.widgets.Select, **w),
            *(self.widget(n, pn.widgets.IntSlider, **w) for n in ("channels", "state_size",
                                                                  "tokens")),
            *(self.widget(n, pn.widgets.FloatSlider, **w) for n in ("step", "selectivity",
                                                                    "skip")),
            self.widget("seed", pn.widgets.IntInput, width=120),
            sizing_mode="stretch_width", align_items="end", css_classes=[role("controls")])
        fig = pn.pane.Bokeh

        mamba = pn.Column(
            self.caption.panel(), heading("Mamba: the step size chooses, token by token"),
            pn.FlexBox(fig(self.delta.fig), fig(self.decay.fig), fig(self.h["mamba"].fig),
                       sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=[role("main_view"), self.view_class("mamba")])
        others = pn.Column(
            heading("Beside it: S4D (nothing depends on the input) and Mamba-2 (one Δ and one A "
                    "per head)"),
            pn.FlexBox(fig(self.h["s4d"].fig), fig(self.h["mamba2"].fig),
                       sizing_mode="stretch_width"), self.models_text.panel(),
            sizing_mode="stretch_width", css_classes=[role("secondary"), self.view_class("compare")])
        lines = pn.Column(heading("Over time"), pn.FlexBox(
            fig(self.delta_plot.fig), fig(self.y_plot.fig), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=[role("secondary"), self.view_class("time")])
        return pn.Column(controls, mamba, others, lines, sizing_mode="stretch_width")
