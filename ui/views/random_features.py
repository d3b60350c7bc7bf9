"""The random-features page's own views and readout texts (ui/pages/random_features.py
composes them).

- ``WeightBars``: the attention weights over the n keys as three bars per key: exact softmax,
  FAVOR+ with the current m (the bars that move with t) and elu + 1.
- ``ErrorPlot``: a ``LinePlot`` of the error against m with a band (the middle of the seeds).
- The readout texts, one per t: the caption and the unbiasedness check.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import BasicTickFormatter, ColumnDataSource, FixedTicker, HoverTool
from bokeh.transform import dodge

from ui.fmt import count, num
from ui.theme import LINES
from ui.views import LinePlot, View, legend_outside, make_figure

BAR = 0.27  # width of one bar and the offset between the three bars of a key
COLOURS = {"exact": LINES[0], "favor": LINES[1], "elu1": LINES[2]}
NAMES = {"exact": "softmax (exact)", "favor": "FAVOR+, current m", "elu1": "elu + 1"}


class WeightBars(View):
    """``run.data``: exact (n,), elu1 (n,), favor (T + 1, n) the FAVOR+ weights at each t."""

    def __init__(self, width: int = 640, height: int = 300):
        self.source = ColumnDataSource({"x": [], "exact": [], "favor": [], "elu1": []})
        self.fig = make_figure("Attention weights over the keys", width=width, height=height,
                               x_range=(0.5, 1.5), y_range=(0, 1))
        bars = []
        for i, key in enumerate(NAMES):
            bars.append(self.fig.vbar(x=dodge("x", (i - 1) * BAR),
                                      top=key, width=BAR * 0.95, source=self.source,
                                      fill_color=COLOURS[key], line_color=None,
                                      legend_label=NAMES[key]))
        self.fig.add_tools(HoverTool(renderers=bars[:1], tooltips=[
            ("key", "@x"), *[(NAMES[k], f"@{k}{{0.0000}}") for k in NAMES]]))
        # Inside, it covered the tallest bars; on the right, a phone's plot was 60 px wide.
        legend_outside(self.fig, "below", ncols=2)
        self.fig.xaxis.axis_label, self.fig.yaxis.axis_label = "key j", "weight wⱼ"
        self.fig.xgrid.visible = False
        self.fig.xaxis.ticker = self.ticker = FixedTicker(ticks=[1])
        self.bindings = [(self.source, "data.favor", "favor"), (self.fig, "@alt", "alt")]


    def setup(self, run) -> None:
        exact, elu1, favor = run.data["exact"], run.data["elu1"], run.data["favor"]
        n = len(exact)
        self.source.data = {"x": np.arange(1, n + 1), "exact": exact, "elu1": elu1,
                            "favor": favor[0]}
        self.fig.x_range.update(start=0.5, end=n + 0.5)
        top = max(float(np.max(favor)), float(np.max(exact)), float(np.max(elu1)))
        self.fig.y_range.update(start=0, end=top * 1.05)
        self.ticker.ticks = list(range(1, n + 1, max(1, int(np.ceil(n / 16)))))

    def frames(self, run) -> dict:
        favor, ms = run.data["favor"], run.data["ms"]
        exact = run.data["exact"]
        alt = [f"Attention weights over {len(exact)} keys, softmax (exact) against FAVOR+ with "
               f"m = {m} features: " + "; ".join(f"key {j + 1}: {num(e)} against {num(f)}"
                                                 for j, (e, f) in enumerate(zip(exact, fav)))
               for m, fav in zip(ms, favor)]
        return {"favor": list(favor), "alt": alt}


class ErrorPlot(LinePlot):
    """A LinePlot with a shaded band between ``run.data[low]`` and ``run.data[high]``."""

    def __init__(self, *args, low: str, high: str, band_name: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.low, self.high = low, high
        self.band = ColumnDataSource({"x": [], "low": [], "high": []})
        band = self.fig.varea("x", "low", "high", source=self.band, fill_color=LINES[1],
                              fill_alpha=0.18, legend_label=band_name)
        self.fig.renderers = [band, *self.fig.renderers[:-1]]  # under the curves
        legend_outside(self.fig, "below", ncols=2)  # inside, it hides the band's low end
        self.fig.xaxis.ticker = self.ticker = FixedTicker(ticks=[1])
        self.fig.xaxis.formatter = BasicTickFormatter(use_scientific=False)

    def setup(self, run) -> None:
        super().setup(run)
        self.band.data = {"x": np.asarray(run.data[self.x], dtype=float),
                          "low": run.data[self.low], "high": run.data[self.high]}
        ms = [int(m) for m in run.data[self.x]]
        self.ticker.ticks = ms[:: -(-len(ms) // 7)]  # m = 1, 2, 4, … or every other power


# Readout texts, one per t ----------------------------------------------------------------------

def caption(r: dict, t: int) -> str:
    m, n = int(r["ms"][t]), len(r["exact"])
    err, elu = r["err_seed"][t], r["elu"]
    closer = ("closer than elu + 1" if err < elu else "further off than elu + 1")
    return (f"<b>m = {m} feature{'s' * (m > 1)}</b> (seed {r['seed']}): FAVOR+ weights are off by "
            f"{num(err)} on average over the {n} keys (largest {num(r['max_seed'][t])}), "
            f"{closer}, which is off by {num(elu)} at any m. Over {r['n_seeds']} seeds the "
            f"average error is {num(r['err_mean'][t])}.")


def unbiased_text(r: dict, t: int) -> str:
    m, j, top = int(r["ms"][t]), r["key"], r["top"]
    u = r["unbiased"][t]
    return (f"<p><b>Unbiased at every m.</b> For key {j + 1}, exp(s q·k) = "
            f"<b>{num(r['kernel'])}</b>. One draw of m = {m} feature{'s' * (m > 1)} (seed "
            f"{r['seed']}) gives φ(q)·φ(k) = {num(u['one'])}; {count(u['draws'])} draws of {m} "
            f"average <b>{num(u['mean'])}</b> ± {num(u['stderr'])} (standard error; "
            f"{count(r['rows'])} features in all, at every m). What m changes is how far one "
            f"draw strays: standard deviation {num(u['spread'])} at m = {m}, falling as "
            f"1/√m.</p><p>One feature alone strays by √(exp|q̃ + k̃|² − 1) times the value "
            f"(q̃ = √s q): {num(r['spread'][j])} for key {j + 1}, the steadiest, but "
            f"{num(r['spread'][top])} for key {top + 1}, the one softmax weighs most. The "
            f"sharper softmax is, the more features it takes.</p>")
