"""Page 1, "Running sum: attention without the softmax".

Linear attention folds every key and value into one fixed-size state, S ← S + φ(k) vᵀ and
z ← z + φ(k), and reads the same answer a scan over the whole cache would give. The page steps a
small stream token by token and shows: the tokens (k, v, q), the state S with the write added at
this step and the key total z, the current output computed both ways (over the stored pairs with
`sim.parallel.run_parallel`, and from the state alone with `sim.step`), the KV cache against the
fixed state in memory, and the work per token on log axes (`sim.cost`).

Every number comes from `sim`; this module only arranges and draws them.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxAnnotation,
    CDSView,
    ColorBar,
    ColumnDataSource,
    HoverTool,
    IndexFilter,
    Label,
    LinearColorMapper,
    Span,
)
from bokeh.plotting import figure

import sim
from sim import cost, scenarios
from sim.cache import DTYPE_BYTES
from sim.parallel import run_parallel
from ui.app import Page
from ui.state import PageState
from ui.theme import DIVERGING, LINES, THEMES
from ui.views import TOOLS, Heatmap, LinePlot, Readout

RANDOM = "random tokens"
WORKED = "worked example"
PRESETS = (RANDOM, WORKED)

FP32_BYTES = DTYPE_BYTES["fp32"]  # memory is counted in fp32, as in the lesson
COST_T_MAX = 100_000  # the cost plot's right edge: a long context, where the gap is obvious

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _sub(n: int) -> str:
    """An index as Unicode subscript digits (titles cannot render TeX)."""
    return str(n).translate(_SUB)


def _num(x: float) -> str:
    """A readout number: short, exact where it is a small integer or simple decimal."""
    x = float(x)
    if x == 0:
        return "0"
    if not np.isfinite(x):
        return str(x)
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.3e}"
    return f"{x:.4g}"


def _vec(a) -> str:
    return "(" + ", ".join(_num(x) for x in np.ravel(a)) + ")"


def _count(n: float) -> str:
    return f"{int(round(float(n))):,}"


def _ratio(x: float) -> str:
    """A ratio with thousands separators and at most two decimals (781.25, 25,000)."""
    return f"{float(x):,.2f}".rstrip("0").rstrip(".")




# ---------------------------------------------------------------------------------------------
# State

class RunningSumRun:
    """Everything the page draws for one setting of the knobs, for every t (0 … T).

    Arrays index tokens from 0; the page's t counts tokens processed, so token t is row t − 1.
    """

    def __init__(self, stream: scenarios.Stream, d: int, feature_map: str, normalize: bool):
        Q, K, V = stream.q, stream.k, stream.v  # (T, d)
        T = stream.T
        self.stream, self.d, self.T = stream, d, T
        self.feature_map, self.normalize = feature_map, normalize
        options = {"feature_map": feature_map}

        # State form, one sim.step per token: S_t, z_t, the write φ(k_t) v_tᵀ, and o_t.
        self.S = np.zeros((T + 1, d, d))  # S[t] after t tokens, S[0] = 0
        self.z = np.zeros((T + 1, d))
        self.writes = np.zeros((T + 1, d, d))  # writes[t] added by token t
        self.out_state = np.zeros((T, d))
        state = sim.init_state("linear", d, d)
        for i in range(T):
            step = sim.step("linear", state, Q[i], K[i], V[i], normalize=normalize, **options)
            state = step.state
            self.S[i + 1], self.z[i + 1] = state.S, state.z
            self.writes[i + 1] = step.write
            self.out_state[i] = step.output
        self.phi_q = sim.feature_map(feature_map, Q)
        self.phi_k = sim.feature_map(feature_map, K)
        # Its two parts: φ(q)ᵀS (the unnormalised read) and φ(q)·z (the state read with every
        # value 1, since then S = z 1ᵀ).
        self.read_state = sim.run("linear", Q, K, V, **options).outputs  # (T, d)
        self.divisor_state = sim.run("linear", Q, K, np.ones((T, 1)), **options).outputs[:, 0]

        # Direct form over every stored pair, in sim's masked-matrix (parallel) form: the scores
        # φ(q_t)·φ(k_i) are the outputs when value i is the unit vector e_i; the blend Σ score v;
        # the total score is the blend of values that are all 1.
        self.scores = run_parallel("linear", Q, K, np.eye(T), **options)  # (T, T), row t: i ≤ t
        self.blend = run_parallel("linear", Q, K, V, **options)  # (T, d)
        self.total_score = run_parallel("linear", Q, K, np.ones((T, 1)), **options)[:, 0]
        self.out_direct = run_parallel("linear", Q, K, V, normalize=normalize, **options)

        # Memory and work (sim.cost), for t = 0 … T.
        ts = np.arange(T + 1)
        self.kv_numbers = cost.kv_cache_numbers(ts, d)
        self.state_numbers = cost.state_numbers(d, d, with_z=True)
        self.memory_crossover = cost.memory_crossover(d, d)
        self.work_crossover = cost.work_crossover(d)

        # Whether both forms give the same output for each token, and the largest gap.
        self.gaps = np.max(np.abs(self.out_direct - self.out_state), axis=1)  # (T,)
        self.agrees = np.all(np.isclose(self.out_direct, self.out_state, rtol=1e-6, atol=1e-9),
                             axis=1)

    def agree(self, i: int) -> tuple[bool, float]:
        """Whether both forms give the same output for token row i, and the largest gap."""
        return bool(self.agrees[i]), float(self.gaps[i])


class RunningSumState(PageState):
    """Knobs of the running-sum page; `run` holds the whole computed run for them."""

    preset = param.Selector(default=RANDOM, objects=list(PRESETS), label="Token stream",
                            doc="Random Gaussian tokens, or the lesson's worked example "
                                "(two tokens, d = 2, query (1, 2))")
    d = param.Integer(4, bounds=(2, 16), label="Size d (d_k = d_v)",
                      doc="Entries in every key, query and value of the random stream")
    tokens = param.Integer(12, bounds=(4, 64), label="Tokens T",
                           doc="Length of the random stream")
    feature_map = param.Selector(default="elu+1", objects=list(sim.FEATURE_MAPS),
                                 label="Feature map φ",
                                 doc="φ applied to keys and queries: identity, or elu + 1 "
                                     "(always positive)")
    normalize = param.Boolean(True, label="Divide by φ(q)·z",
                              doc="Normalise the output by the total score φ(q)·z")
    run = param.Parameter(None, precedence=-1, doc="The computed run for these settings")

    url_exclude = (*PageState.url_exclude, "run")
    _knobs = ("preset", "d", "tokens", "feature_map", "normalize", "seed")

    def __init__(self, **params):
        super().__init__(**params)
        self._good: dict | None = None
        self._restoring = False
        self._own_notice = ""
        self._recompute()

    def stream(self) -> scenarios.Stream:
        if self.preset == WORKED:
            return scenarios.worked_example()
        return scenarios.gaussian(self.tokens, self.d, self.d, seed=self.seed)

    @param.depends("preset", watch=True)
    def _lesson_settings(self) -> None:
        # The worked example is the lesson's: identity features, divided by the total score.
        if self.preset == WORKED and not self._restoring:
            self.param.update(feature_map="identity", normalize=True)

    @param.depends("d", "tokens", "feature_map", "normalize", "seed", "preset", watch=True)
    def _recompute(self) -> None:
        settings = {k: getattr(self, k) for k in self._knobs}
        try:
            stream = self.stream()
            run = RunningSumRun(stream, stream.q.shape[1], self.feature_map, self.normalize)
        except ValueError as err:  # includes sim.DivergenceError
            self._own_notice = f"These settings cannot run ({err}); kept the previous ones."
            self.notice = self._own_notice
            if self._good is not None and not self._restoring:
                self._restoring = True
                try:
                    self.param.update(**self._good)
                finally:
                    self._restoring = False
            return
        self._good = settings
        if self._own_notice and not self._restoring and self.notice == self._own_notice:
            self.notice = ""
            self._own_notice = ""
        with param.parameterized.batch_call_watchers(self):
            self.set_t_max(run.T)
            self.run = run

    @property
    def fragile_division(self) -> bool:
        """Identity features with normalisation on a random stream: φ(q)·z may be near 0."""
        return self.preset == RANDOM and self.feature_map == "identity" and self.normalize

    def csv(self) -> str:
        run = self.run
        d = run.d
        head = ["t"]
        for name in ("k", "v", "q", "o_direct", "o_state"):
            head += [f"{name}_{j + 1}" for j in range(d)]
        rows = [",".join(head)]
        s = run.stream
        for i in range(run.T):
            cols = [str(i + 1)]
            for arr in (s.k[i], s.v[i], s.q[i], run.out_direct[i], run.out_state[i]):
                cols += [repr(float(x)) for x in arr]
            rows.append(",".join(cols))
        return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------------------------
# Views built for this page (the shared ones are ui.views.Heatmap and LinePlot)

class TokenStrip:
    """k, v and q of every token as three bands of coloured cells (tokens along x); the current
    token is boxed and the tokens still to come are veiled."""

    def __init__(self, width: int = 360, height: int = 290):
        self.mapper = LinearColorMapper(palette=DIVERGING, low=-1.0, high=1.0)
        self.source = ColumnDataSource({"x": [], "y": [], "value": [], "what": []})
        self.fig = figure(title="Tokens: key k, value v, query q", width=width, height=height,
                          tools=TOOLS, toolbar_location="above", x_range=(0.5, 1.5),
                          y_range=(1.0, -0.5))
        self.fig.toolbar.logo = None
        cells = self.fig.rect("x", "y", 1, 1, source=self.source, line_color="#ffffff",
                              line_alpha=0.4, fill_color={"field": "value", "transform": self.mapper})
        self.fig.add_tools(HoverTool(renderers=[cells], tooltips=[
            ("token", "@x"), ("entry", "@what"), ("value", "@value{0.000000}")]))
        # The veil and the box are annotations on the overlay layer: moving them repaints that
        # layer alone (not the cells, axes and colour bar), and sends two numbers each.
        self.veil = BoxAnnotation(left=0.5, right=0.5, top=-0.5, bottom=1.0, level="overlay",
                                  fill_color="#ffffff", fill_alpha=0.72, line_alpha=0.0)
        self.box = BoxAnnotation(left=0.5, right=1.5, top=-0.5, bottom=1.0, level="overlay",
                                 fill_alpha=0.0, line_color=THEMES["light"]["accent"],
                                 line_alpha=1.0, line_width=3)
        self.fig.add_layout(self.veil)
        self.fig.add_layout(self.box)
        self.fig.xaxis.axis_label = "token t"
        self.fig.yaxis.axis_label = "entry of k, v, q"
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        self.fig.add_layout(ColorBar(color_mapper=self.mapper, width=10, label_standoff=6,
                                     padding=4), "right")
        self.T, self.bottom = 1, 1.0

    def set_stream(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
        T, d = k.shape
        xs, ys, values, what = [], [], [], []
        for band, (name, arr) in enumerate((("k", k), ("v", v), ("q", q))):
            top = band * (d + 1)  # one empty row between bands
            for i in range(T):
                for j in range(d):
                    xs.append(i + 1)
                    ys.append(top + j)
                    values.append(float(arr[i, j]))
                    what.append(f"{name}[{j + 1}]")
        self.source.data = {"x": xs, "y": ys, "value": values, "what": what}
        self.T, self.bottom = T, 3 * d + 1.5
        self.fig.x_range.update(start=0.5, end=T + 0.5)
        self.fig.y_range.update(start=self.bottom, end=-0.5)
        self.fig.yaxis.ticker = [(d - 1) / 2, d + 1 + (d - 1) / 2, 2 * (d + 1) + (d - 1) / 2]
        self.fig.yaxis.major_label_overrides = {
            (d - 1) / 2: "k", d + 1 + (d - 1) / 2: "v", 2 * (d + 1) + (d - 1) / 2: "q"}
        step = max(1, int(np.ceil(T / 12)))
        self.fig.xaxis.ticker = list(range(1, T + 1, step))
        limit = float(np.max(np.abs(np.concatenate((q, k, v))))) or 1.0
        self.mapper.update(low=-limit, high=limit)
        for box in (self.veil, self.box):
            box.bottom = self.bottom

    def show(self, t: int) -> None:
        self.box.update(visible=t >= 1, left=t - 0.5, right=t + 0.5)
        self.veil.update(left=t + 0.5, right=self.T + 0.5)

    def restyle(self, theme: str) -> None:
        c = THEMES.get(theme, THEMES["light"])
        self.veil.fill_color = c["background"]
        self.box.line_color = c["accent"]


class MemoryStack:
    """The KV cache as a stack of stored (k, v) rows, one per token, against the fixed block of
    the state (S, d × d, plus the key total z, one row), drawn cell for cell to the same scale."""

    GAP = 2  # columns between the cache and the state

    def __init__(self, width: int = 360, height: int = 300):
        self.rows = ColumnDataSource({"left": [], "right": [], "bottom": [], "top": [],
                                      "color": [], "what": []})
        self.block = ColumnDataSource({"left": [], "right": [], "bottom": [], "top": [],
                                       "color": [], "what": []})
        self.fig = figure(title="Memory: KV cache against the state", width=width,
                          height=height, tools=TOOLS, toolbar_location="above",
                          x_range=(0, 1), y_range=(0, 1))
        self.fig.toolbar.logo = None
        kw = {"left": "left", "right": "right", "bottom": "bottom", "top": "top",
              "fill_color": "color", "line_color": "#ffffff", "line_width": 1}
        # Every row the cache can reach is drawn once per setting; a step only changes which
        # of them the filter lets through (the first 2t), instead of resending rows and text.
        self.filter = IndexFilter(indices=[])
        cache = self.fig.quad(source=self.rows, view=CDSView(filter=self.filter), fill_alpha=0.85,
                              **kw)
        block = self.fig.quad(source=self.block, fill_alpha=0.85, **kw)
        self.fig.add_tools(HoverTool(renderers=[cache, block], tooltips=[("", "@what")]))
        # The crossover runs across the cache column only: it is a height of the stack.
        self.crossover = self.fig.segment(x0=[0], x1=[1], y0=[0], y1=[0], line_color=LINES[2],
                                          line_dash="dashed", line_width=2.5)
        self.crossover_label = Label(x=0, y=0, text="", text_font_size="11px",
                                     text_color="#1f2328", y_offset=4, x_offset=2,
                                     background_fill_color="#ffffff", background_fill_alpha=0.8)
        self.fig.add_layout(self.crossover_label)
        self.cache_label = Label(x=0, y=0, text="KV cache", text_font_size="12px", y_offset=4)
        # What a step changes (the rows shown, the cache's label), and what is drawn over it,
        # live on the overlay layer: a step repaints that layer, not the axes and the state.
        for item in (cache, self.crossover, self.crossover_label, self.cache_label):
            item.level = "overlay"
        self.state_label = Label(x=0, y=0, text="state S + z", text_font_size="12px", y_offset=4)
        self.fig.add_layout(self.cache_label)
        self.fig.add_layout(self.state_label)
        self.fig.xaxis.visible = False
        self.fig.yaxis.axis_label = "tokens stored t"
        self.fig.xgrid.visible = self.fig.ygrid.visible = False
        self.d = 1

    def set_size(self, d: int, T: int, crossover: float) -> None:
        self.d = d
        x0 = 2 * d + self.GAP  # left edge of the state block
        top = max(T, d + 1) * 1.12 + 1
        self.fig.x_range.update(start=-0.5, end=x0 + d + 0.5)
        self.fig.y_range.update(start=0, end=top)
        self.block.data = {
            "left": [x0, x0], "right": [x0 + d, x0 + d], "bottom": [0, d], "top": [d, d + 1],
            "color": [LINES[3], LINES[4]],
            "what": [f"state S: {d} × {d} numbers, always", f"key total z: {d} numbers, always"]}
        self.crossover.data_source.data = {"x0": [-0.3], "x1": [2 * d + 0.3],
                                           "y0": [float(crossover)], "y1": [float(crossover)]}
        self.crossover_label.update(x=0, y=float(crossover),
                                    text=f"crossover t ≈ d/2 = {_num(crossover)}")
        self.cache_label.update(x=0, y=0)
        self.state_label.update(x=x0, y=d + 1)

        # Every row the cache can reach, k and v interleaved, so step t shows the first 2t.
        ts = np.repeat(np.arange(T, dtype=float), 2)
        self.filter.indices = []
        self.rows.data = {
            "left": np.tile([0.0, d], T), "right": np.tile([d, 2.0 * d], T),
            "bottom": ts, "top": ts + 1, "color": [LINES[0], LINES[1]] * T,
            "what": [f"{name} of token {i + 1}: {d} numbers"
                     for i in range(T) for name in ("k", "v")]}

    def restyle(self, theme: str) -> None:
        c = THEMES.get(theme, THEMES["light"])
        self.crossover_label.update(text_color=c["text"], background_fill_color=c["background"])
        for label in (self.cache_label, self.state_label):
            label.text_color = c["text"]

    def show(self, t: int) -> None:
        """Show the first t tokens' rows (k and v of each)."""
        shown = list(range(2 * t))
        if list(self.filter.indices) != shown:
            self.filter.indices = shown
        self.cache_label.y = float(t)


# ---------------------------------------------------------------------------------------------
# Page



class RunningSumPage(Page):
    title = "Running sum: attention without the softmax"
    slug = "running-sum"

    def __init__(self, state: RunningSumState | None = None):
        super().__init__(state or RunningSumState())
        s = self.state
        self.tokens = TokenStrip()
        self.S_map = Heatmap("State S (after token t)", 4, 4, row_label="key entry i", col_label="value entry j",
                             width=300, height=290, value_name="S[i, j]")
        self.write_map = Heatmap("Added at this step", 4, 4, row_label="key entry i",
                                 col_label="value entry j", width=300, height=290,
                                 value_name="φ(k)v[i, j]")
        self.z_map = Heatmap("Key total z", 4, 1, row_label="key entry i", col_label="",
                             width=150, height=290, colorbar=False, value_name="z[i]")
        self.z_map.fig.xaxis.visible = False
        self.memory = MemoryStack()
        self.work = LinePlot("Work per token (operations)", ["attention 4·t·d", "state 4·d²"],
                             x_label="token t", y_label="operations", width=360, height=300,
                             x_axis_type="log", y_axis_type="log", legend="top_left")
        self.total = LinePlot("Total work for the first t tokens", ["attention", "state"],
                              x_label="token t", y_label="operations", width=360, height=300,
                              x_axis_type="log", y_axis_type="log", legend="top_left")
        self.bytes = LinePlot("Memory after t tokens (bytes, fp32)", ["KV cache", "state S + z"],
                              x_label="token t", y_label="bytes", width=360, height=300,
                              legend="top_left")
        self.work_cross = self._crossover_span(self.work.fig, "t = d")
        self.total_cross = self._crossover_span(self.total.fig, "t = d")
        self.bytes_cross = self._crossover_span(self.bytes.fig, "t ≈ d/2")
        for fig in (self.tokens.fig, self.S_map.fig, self.write_map.fig, self.z_map.fig,
                    self.memory.fig, self.work.fig, self.total.fig, self.bytes.fig):
            self.add_figure(fig)

        md = {"margin": (4, 10)}
        # The step's formula, in HTML rather than in the figures' titles: a title that changes
        # its text re-lays-out the figure on every step; this line has a fixed height.
        self.state_readout = Readout(sizing_mode="stretch_width", height=26, margin=(0, 10),
                                     styles={"font-size": "15px", "overflow": "hidden"})
        self.token_readout = Readout(sizing_mode="stretch_width", **md)
        self.outputs = Readout(sizing_mode="stretch_width", **md)
        self.warning = pn.pane.Alert("", alert_type="info", visible=False,
                                     sizing_mode="stretch_width")
        self.memory_readout = Readout(width=340, **md)
        self.cost_readout = Readout(width=340, **md)
        self.readouts = {self.token_readout: self._token_html, self.outputs: self._outputs_html,
                         self.memory_readout: self._memory_html,
                         self.cost_readout: self._cost_html}

        s.param.watch(self._new_run, "run")
        s.param.watch(self._show_t, "t")
        self._new_run()

    @staticmethod
    def _crossover_span(fig, text: str) -> tuple[Span, Label]:
        """A dashed vertical line where the two curves cross, with its name at the bottom."""
        span = Span(location=1, dimension="height", line_color=LINES[2], line_dash="dashed",
                    line_width=2)
        label = Label(x=1, y=0, y_units="screen", text=text, text_font_size="11px",
                      text_color=LINES[2], x_offset=4, y_offset=4)
        fig.add_layout(span)
        fig.add_layout(label)
        return span, label

    # Updates ----------------------------------------------------------------------------------
    def _new_run(self, *_events) -> None:
        run: RunningSumRun = self.state.run
        d, T = run.d, run.T
        self.tokens.set_stream(run.stream.q, run.stream.k, run.stream.v)
        self.S_map.set_range(float(np.max(np.abs(run.S))))
        self.write_map.set_range(float(np.max(np.abs(run.writes))))
        self.z_map.set_range(float(np.max(np.abs(run.z))))
        self.memory.set_size(d, T, run.memory_crossover)

        # Work on log axes up to t = 100,000; the same curves for every t, only d moves them.
        x = np.unique(np.round(np.logspace(0, np.log10(COST_T_MAX), 240)))
        self.work.update(x, **{"attention 4·t·d": cost.attention_ops(x, d),
                               "state 4·d²": np.full(x.shape, float(cost.state_ops(d)))})
        self.total.update(x, attention=cost.cumulative_attention_ops(x, d),
                          state=cost.cumulative_state_ops(x, d))
        ts = np.arange(T + 1)
        self.bytes.update(ts, **{"KV cache": run.kv_numbers * FP32_BYTES,
                                 "state S + z": np.full(ts.shape, run.state_numbers * FP32_BYTES)})
        for span, label in (self.work_cross, self.total_cross):
            span.location = label.x = float(run.work_crossover)
        span, label = self.bytes_cross
        span.location = label.x = float(run.memory_crossover)
        self.warning.object = (
            "With the identity feature map the divisor φ(q)·z can be close to zero or negative "
            "for random tokens, so the divided outputs can be huge or flip sign. elu + 1 keeps "
            "every score positive.")
        self.warning.visible = self.state.fragile_division
        for readout, html in self.readouts.items():  # room for the longest text of this run
            readout.fit(html(run, t) for t in range(T + 1))
        self._show_t()

    def _show_t(self, *_events) -> None:
        run: RunningSumRun = self.state.run
        t = min(self.state.t, run.T)
        self.tokens.show(t)
        self.S_map.update(run.S[t])
        self.write_map.update(run.writes[t])
        self.z_map.update(run.z[t])
        self.state_readout.show(self._state_html(run, t))
        self._accent_write(t)
        self.memory.show(t)
        mark = max(t, 1)  # a log axis has no 0
        self.work.mark(mark)
        self.total.mark(mark)
        self.bytes.mark(t)
        for readout in self.readouts:
            readout.show_at(t)  # the texts of this run, made once by fit()

    def _accent_write(self, t: int) -> None:
        c = THEMES.get(self.theme, THEMES["light"])
        fig = self.write_map.fig
        fig.outline_line_color = c["accent"] if t >= 1 else c["grid"]
        fig.outline_line_width = 4 if t >= 1 else 1
        fig.title.text_color = c["accent"] if t >= 1 else c["text"]

    def set_view(self, *, theme: str | None = None, present: bool | None = None) -> None:
        super().set_view(theme=theme, present=present)
        self.tokens.restyle(self.theme)
        self.memory.restyle(self.theme)
        self._accent_write(min(self.state.t, self.state.run.T))

    # Readouts ---------------------------------------------------------------------------------
    @staticmethod
    def _state_html(run: RunningSumRun, t: int) -> str:
        if t == 0:
            return "<b>t = 0</b>: S₀ = 0 and z₀ = 0; nothing added yet."
        phi = ("φ(k{0}) v{0}ᵀ" if run.feature_map != "identity" else "k{0} v{0}ᵀ").format(_sub(t))
        fk = ("φ(k{0})" if run.feature_map != "identity" else "k{0}").format(_sub(t))
        return (f"<b>t = {t}</b>: S{_sub(t)} = S{_sub(t - 1)} + {phi}, the write "
                "outlined beside it; "
                f"z{_sub(t)} = z{_sub(t - 1)} + {fk}.")

    @staticmethod
    def _token_html(run: RunningSumRun, t: int) -> str:
        if t == 0:
            return "<p class='rs-note'>No token yet: press <b>Step</b> to read the first one.</p>"
        i = t - 1
        s = run.stream
        label = f" ({s.labels[i]})" if s.labels else ""
        lines = [f"<b>Token t = {t}</b>{label}",
                 f"k = {_vec(s.k[i])}", f"v = {_vec(s.v[i])}", f"q = {_vec(s.q[i])}"]
        if run.feature_map != "identity":
            lines += [f"φ(k) = {_vec(run.phi_k[i])}", f"φ(q) = {_vec(run.phi_q[i])}"]
        return "<div class='rs-token'>" + "<br>".join(lines) + "</div>"

    @staticmethod
    def _outputs_html(run: RunningSumRun, t: int) -> str:
        if t == 0:
            return "<p>The output appears once a token has been read.</p>"
        i = t - 1
        fq = "φ(q)" if run.feature_map != "identity" else "q"
        fk = "φ(k" if run.feature_map != "identity" else "k"
        scores = run.scores[i, :t]
        shown = ", ".join(_num(x) for x in scores[:8]) + (", …" if t > 8 else "")
        a = [f"<h4>Over every stored pair ({t} key{'s' if t > 1 else ''} and values)</h4>",
             f"scores {fq}·{fk}<sub>i</sub>{')' if fk.startswith('φ') else ''} = ({shown})",
             f"blend Σ score<sub>i</sub> v<sub>i</sub> = {_vec(run.blend[i])}"]
        b = ["<h4>From the state alone (S and z)</h4>",
             f"{fq}ᵀ S<sub>{t}</sub> = {_vec(run.read_state[i])}"]
        if run.normalize:
            a.append(f"divide by Σ score<sub>i</sub> = {_num(run.total_score[i])}")
            b.append(f"divide by {fq}·z<sub>{t}</sub> = {_num(run.divisor_state[i])}")
        else:
            a.append("no division (normalisation off)")
            b.append("no division (normalisation off)")
        a.append(f"<b>o<sub>{t}</sub> = {_vec(run.out_direct[i])}</b>")
        b.append(f"<b>o<sub>{t}</sub> = {_vec(run.out_state[i])}</b>")
        same, gap = run.agree(i)
        verdict = (f"<p class='rs-agree'>✔ Both ways agree (largest difference {_num(gap)}).</p>"
                   if same else
                   f"<p class='rs-disagree'>✘ The two ways differ by up to {_num(gap)} "
                   "(rounding in a near-zero divisor).</p>")
        card = ("<div style='flex:1 1 260px;min-width:0;border:1px solid #8884;border-radius:6px;"
                "padding:4px 10px;overflow-wrap:anywhere'>")
        def body(lines: list[str]) -> str:
            return card + lines[0] + "<br>".join(lines[1:]) + "</div>"

        return ("<div style='display:flex;flex-wrap:wrap;gap:10px'>" + body(a) + body(b)
                + "</div>" + verdict)

    @staticmethod
    def _memory_html(run: RunningSumRun, t: int) -> str:
        kv = run.kv_numbers[t]
        st = run.state_numbers
        bigger = ("the cache is larger" if kv > st else
                  "the state is larger" if kv < st else "they are equal")
        return (f"<p>After t = {t} tokens: <b>KV cache</b> {_count(kv)} numbers = "
                f"{_count(kv * FP32_BYTES)} bytes; <b>state</b> S + z {_count(st)} numbers = "
                f"{_count(st * FP32_BYTES)} bytes, at every t (fp32). Now {bigger}; "
                f"they cross near t = d/2 = {_num(run.memory_crossover)}.</p>")

    @staticmethod
    def _cost_html(run: RunningSumRun, t: int) -> str:
        d = run.d
        tt = max(t, 1)
        return (f"<p>Token t = {tt}, d = {d}: attention {_count(cost.attention_ops(tt, d))} "
                f"operations, state {_count(cost.state_ops(d))}; attention ÷ state = "
                f"{_ratio(cost.work_ratio(tt, d))}. They cross at t = d = {d}. At t = 100,000 "
                f"attention does {_ratio(cost.work_ratio(COST_T_MAX, d))}× the state's work.</p>")

    # Layout -----------------------------------------------------------------------------------
    def main(self) -> pn.viewable.Viewable:
        s = self.state
        preset = pn.widgets.RadioButtonGroup.from_param(s.param.preset, label="Token stream",
                                                        color="default")
        d = pn.widgets.IntSlider.from_param(s.param.d, label="Size d (d_k = d_v)", width=220)
        tokens = pn.widgets.IntSlider.from_param(s.param.tokens, label="Tokens T", width=220)
        fmap = pn.widgets.RadioButtonGroup.from_param(s.param.feature_map, label="Feature map φ",
                                                      color="default")
        norm = pn.widgets.Checkbox.from_param(s.param.normalize,
                                              label="Divide by φ(q)·z (normalise)")

        fixed = pn.pane.HTML("<i>The worked example has d = 2 and two tokens.</i>",
                             margin=(0, 10))

        def lock(*_events) -> None:  # the worked example has its own d and T
            d.visible = tokens.visible = s.preset != WORKED
            fixed.visible = s.preset == WORKED

        s.param.watch(lock, "preset")
        lock()
        controls = pn.Column(
            pn.pane.HTML("<b>Token stream</b>", margin=(4, 10, 0, 10)), preset, d, tokens, fixed,
            pn.pane.HTML("<b>Feature map φ</b>", margin=(4, 10, 0, 10)), fmap, norm,
            self.token_readout.pane, width=300, css_classes=["lab-controls"])

        fig = pn.pane.Bokeh
        both = pn.Column(pn.pane.HTML("<h3>The output, computed both ways</h3>",
                                      margin=(0, 10)),
                         self.warning, self.outputs.pane, sizing_mode="stretch_width", min_width=330,
                         styles={"flex": "1 1 420px"})
        top = pn.FlexBox(controls, fig(self.tokens.fig), both, sizing_mode="stretch_width")
        memory = pn.Column(fig(self.memory.fig), self.memory_readout.pane, width=370)
        state = pn.Column(self.state_readout.pane,
                          pn.FlexBox(fig(self.S_map.fig), fig(self.write_map.fig),
                                     fig(self.z_map.fig), memory, sizing_mode="stretch_width"),
                          sizing_mode="stretch_width")
        total = pn.Column(fig(self.total.fig), self.cost_readout.pane, width=370)
        # Wrapped in a Column: toggling `visible` on a bare Bokeh pane does not come back on.
        self.secondary += [total, pn.Column(fig(self.bytes.fig), width=370)]
        work = pn.FlexBox(fig(self.work.fig), *self.secondary, sizing_mode="stretch_width")
        return pn.Column(top, state, work, sizing_mode="stretch_width")
