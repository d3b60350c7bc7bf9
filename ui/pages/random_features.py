"""Page 6, "Random features that approximate softmax" (Performer's FAVOR+).

One query attends over n keys. Softmax's weights exp(s q·k_j) / Σ exp(s q·k_l) are estimated by
m positive random features, φ(q)·φ(k_j) / Σ φ(q)·φ(k_l) (`sim.random_features`); t steps m
through 1, 2, 4, … up to the chosen largest m, each larger m adding features to the same draw.
The page shows the three sets of weights (exact, FAVOR+ with m features, elu + 1), the error
against m averaged over seeds (`sim.approximation_error`) and, for one key, that the estimate
of exp(s q·k) is unbiased at every m: the mean over many draws stays put while the spread falls.
"Your turn" (``exercise``, link key ``ex``): the spread at m features, or why the features are
positive (``sim.exercises.random_features``).
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
import param

import sim
from sim import scenarios
from ui.contract import role
from ui.exercises import exercise_setting
from ui.page import Page, Run
from ui.theme import heading
from ui.views import PHONE_MIN_WIDTH, Readout, fluid
from ui.views import random_features as rv

# 16 … 2048: t steps through m = 1, 2, 4, … m_max. Names, so a link carries them as they are.
MAX_FEATURES = [str(2**i) for i in range(4, 12)]
N_SEEDS = 16  # seeds the error curve averages over: its band is their middle 80 %
CHECK_ROWS = 2**15  # features in all in the unbiasedness check (cut into draws of m each)
DATA_SEED = 0  # the query and keys are fixed; the seed setting draws the features
BAND = (10, 90)  # percentiles of the seeds' errors shaded around the mean
# The error plot's curves, named short: its legend's two columns fit a 390 px phone.
MEAN, THIS_SEED, ELU = f"FAVOR+, {N_SEEDS} seeds", "FAVOR+, this seed", "elu + 1"


class RandomFeaturesPage(Page):
    link_keys = {"exercise": "ex"}
    named_views = {"weights": "Attention weights over the keys", "error": "The error against m"}
    subject = "weights"  # on the first screen (ui/page.py Page.subject)
    stops = (("m = 1", "stop_start"), ("m ≥ d: one full orthogonal block", "stop_d"),
             ("FAVOR+ beats elu + 1 (mean over seeds)", "stop_beats"))

    max_features = param.Selector(default="512", objects=MAX_FEATURES, label="Features m, up to",
                                  doc="Play doubles m from 1 up to this")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed of the features",
                         doc="Which random projection; the query and keys stay the same")
    keys = param.Integer(8, bounds=(2, 32), label="Keys n")
    d = param.Integer(8, bounds=(2, 16), label="Size d of q and k")
    scale = param.Number(1.0, bounds=(0.25, 3.0), step=0.05, label="Score scale s (× 1/√d)",
                         doc="Softmax's s = 1/√d times this: larger makes softmax sharper and "
                             "the estimate harder")
    orthogonal = param.Boolean(True, label="Orthogonal features (ORF)",
                               doc="Blocks of d orthogonal directions instead of independent ones")
    exercise = exercise_setting()  # "Your turn": the spread at m features, or why positive

    def compute(self) -> Run:
        d, n, seed = self.d, self.keys, self.seed
        stream = scenarios.gaussian(n, d, d, seed=DATA_SEED)
        q, K = stream.q[0], stream.k  # (d,), (n, d)
        s = self.scale / math.sqrt(d)
        t_max = int(math.log2(int(self.max_features)))
        ms = 2 ** np.arange(t_max + 1)  # (t_max + 1,) m = 1, 2, 4, …
        orth = self.orthogonal
        favor = np.stack([sim.softmax_weights_favor(q, K, int(m), seed, scale=s, orthogonal=orth)
                          for m in ms])  # (t_max + 1, n)
        err = sim.approximation_error(q, K, ms, np.arange(seed, seed + N_SEEDS), scale=s,
                                      orthogonal=orth)
        low, high = np.percentile(err.per_seed_mean_abs, BAND, axis=1)  # (t_max + 1,) each
        gap = np.abs(favor - err.exact)  # (t_max + 1, n) this seed's error per key
        beats = np.flatnonzero(err.mean_abs < err.elu1_mean_abs)
        data = {"ms": ms, "exact": err.exact, "elu1": err.elu1, "favor": favor,
                "err_mean": err.mean_abs, "err_seed": gap.mean(axis=1),
                "err_elu": np.full(len(ms), err.elu1_mean_abs), "band_low": low, "band_high": high,
                "stop_start": 0, "stop_d": min(math.ceil(math.log2(d)), t_max)}
        if beats.size:
            data["stop_beats"] = int(beats[0])
        # One feature's relative spread is √(exp|q̃ + k̃|² − 1) (q̃ = √s q): the check uses the
        # key where it is smallest, so that CHECK_ROWS features pin the mean down; the key softmax
        # weighs most has the largest q·k and the widest spread.
        spread = np.sqrt(np.expm1(s * np.sum((q + K) ** 2, axis=1)))  # (n,)
        j, top = int(np.argmin(spread)), int(np.argmax(err.exact))
        r = {"ms": ms, "exact": err.exact, "seed": seed, "n_seeds": N_SEEDS, "key": j,
             "top": top, "spread": spread, "err_seed": data["err_seed"],
             "max_seed": gap.max(axis=1), "err_mean": err.mean_abs, "elu": err.elu1_mean_abs,
             "kernel": math.exp(s * float(q @ K[j])), "rows": CHECK_ROWS,
             "unbiased": self.unbiased(q, K[j], s, ms)}
        data["caption"] = [rv.caption(r, t) for t in range(t_max + 1)]
        data["unbiased_text"] = [rv.unbiased_text(r, t) for t in range(t_max + 1)]
        table = {"m": ms.tolist(), "error_this_seed": data["err_seed"].tolist(),
                 "error_mean_over_seeds": err.mean_abs.tolist(),
                 "max_error_mean_over_seeds": err.max_abs.tolist(),
                 "error_elu1": data["err_elu"].tolist(),
                 "kernel_mean_over_draws": [u["mean"] for u in r["unbiased"]],
                 "kernel_exact": [r["kernel"]] * len(ms)}
        table |= {f"w_favor_{i + 1}": favor[:, i].tolist() for i in range(n)}
        info = ("Without orthogonal features every row of the projection is drawn on its own: "
                "the estimate stays unbiased but spreads more at the same m."
                if not orth else "")
        return Run(t_max=t_max, data=data, table=table, info=info)

    def unbiased(self, q: np.ndarray, k: np.ndarray, s: float, ms: np.ndarray) -> list[dict]:
        """For each m: estimates of exp(s q·k) by draws of m features. One long draw of
        CHECK_ROWS rows (the seed's; draws nest, so its first m rows are the seed's own draw of
        m, the one the bars use) is cut into CHECK_ROWS / m draws of m rows each."""
        x = math.sqrt(s) * np.stack([q, k])  # (2, d) q̃ and k̃
        W = sim.draw_projection(CHECK_ROWS, self.d, self.seed, self.orthogonal)  # (R, d)
        phi = sim.favor_features(x, W)  # (2, R), each feature divided by √R
        terms = CHECK_ROWS * phi[0] * phi[1]  # (R,) one feature's estimate each
        out = []
        for m in ms:
            est = terms.reshape(-1, m).mean(axis=1)  # (R / m,) one estimate per draw of m
            out.append({"one": float(est[0]), "draws": len(est), "mean": float(est.mean()),
                        "spread": float(est.std(ddof=1)) if len(est) > 1 else float("nan"),
                        "stderr": float(terms.std(ddof=1) / math.sqrt(CHECK_ROWS))})
        return out

    def make_views(self) -> list:
        self.bars = rv.WeightBars()
        self.error = rv.ErrorPlot(
            "Error of the weights against m", {
                MEAN: "err_mean", THIS_SEED: "err_seed", ELU: "err_elu"},
            x="ms", x_label="features m", y_label="mean |ŵⱼ − wⱼ| (keys)",
            marker="ms", x_axis_type="log", y_axis_type="log", width=480, height=400,
            legend="bottom_left", dashed=(THIS_SEED, ELU),
            low="band_low", high="band_high", band_name="middle 80 %")
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(4, 10),
                               styles={"font-size": "15px"},
                               css_classes=[role("caption")])  # read out after each step
        self.unbiased_text = Readout("unbiased_text", width=380, margin=(4, 10),
                                     css_classes=[role("present_drop")])  # out first: the error fits
        return [self.bars, self.error, self.caption, self.unbiased_text]

    def body(self) -> pn.viewable.Viewable:
        w = {"width": 260}
        controls = pn.Column(
            self.widget("max_features", pn.widgets.DiscreteSlider, **w),
            self.widget("seed", pn.widgets.IntInput, width=120),
            *(self.widget(n, pn.widgets.IntSlider, **w) for n in ("keys", "d")),
            self.widget("scale", pn.widgets.FloatSlider, **w),
            self.widget("orthogonal", pn.widgets.Checkbox, **w), width=300,
            css_classes=[role("controls")])
        for model in (self.bars.fig, self.error.fig, self.unbiased_text.div):
            fluid(model)  # a phone's width at the least, their own at the most
        fig = pn.pane.Bokeh
        top = pn.Column(self.caption.panel(), fig(self.bars.fig), sizing_mode="stretch_width",
                        min_width=PHONE_MIN_WIDTH, styles={"flex": "1 1 560px"},
                        css_classes=[role("main_view"), self.view_class("weights")])
        below = pn.FlexBox(pn.Column(fig(self.error.fig), css_classes=[role("main_view")]),
                           self.unbiased_text.panel(),
                           sizing_mode="stretch_width")
        # Beside the weights when there is room (the presenter view, whose settings and texts
        # are folded away: at 1280 x 720 the two had stood one above the other at the smallest
        # readable scale, the right half of the screen empty); otherwise on a row of its own.
        closer = pn.Column(heading("Closer with more features"),
                           below, sizing_mode="stretch_width", styles={"flex": "1 1 560px"},
                           css_classes=[self.view_class("error")])
        return pn.Column(pn.FlexBox(controls, top, closer, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width")
