"""Page 5, "How these train fast: the chunkwise-parallel form".

The T tokens are cut into chunks of C. Inside a chunk the outputs come from the masked matrix
form, between chunks one state is carried (`sim.chunkwise.run_chunkwise`); the page holds every
output to the recurrence (`sim.run`) and shows, token by token, the output split into its
carried-state part and its in-chunk part, the chunk's masked score matrix, the state carried into
it and, for the delta rules, the chunk's UT transform. The work, memory and sequential steps of
the three forms are `sim.chunkwise.chunkwise_cost`'s. "Your turn" (``exercise``, link key ``ex``):
which state a token's carried part reads, or a row of a chunk's masked scores
(``sim.exercises.chunkwise``).
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param

import sim
from sim import registry, scenarios
from ui.contract import role
from ui.exercises import exercise_setting
from ui.page import Page, Run
from ui.theme import heading
from ui.views import PHONE_MIN_WIDTH, Heatmap, LinePlot, Readout, crossover, fluid
from ui.views import chunkwise as cv

RULES = {"linear attention": "linear", "decay gate: RetNet (fixed γ)": "retnet",
         "decay gate: Mamba-2 (α per token)": "mamba2", "DeltaNet (delta rule)": "deltanet",
         "Gated DeltaNet": "gated_deltanet"}
DECAY_RULES = tuple(r for r in RULES.values()  # the page's rules with a decay gate (γ or α)
                    if {"gamma", "alpha"} & set(registry.RULE_INFO[r].gates))
DELTA_RULES = registry.rules_of("delta", tuple(RULES.values()))
COST_T_MAX = 100_000  # the cost plots' right edge: a long context, where the forms part ways
NAMED_CHUNKS = 8  # named stops at the first token of chunks 1 … 8 (more would crowd the timeline)
PARTS = ("carried-state part", "in-chunk part", "chunkwise output", "recurrent output",
         "difference")


class ChunkwisePage(Page):
    link_keys = {"exercise": "ex"}
    named_views = {"chunks": "Tokens in chunks, each output in two parts",
                   "chunk": "Inside the current chunk", "forms": "Work and memory of the three forms"}
    subject = "chunks"  # on the first screen (ui/page.py Page.subject)
    stops = (("start", "stop_start"),
             *((f"chunk {c} begins", f"stop_chunk{c}") for c in range(1, NAMED_CHUNKS + 1)),
             ("last token", "stop_end"))
    only_with = {"decay": {"rule": "mamba2"}, "write_strength": {"rule": "deltanet"}}

    rule = param.Selector(default="linear", objects=RULES, label="Rule",
                          doc="The update rule computed both ways")
    tokens = param.Integer(16, bounds=(2, 64), label="Tokens T")
    chunk_size = param.Integer(4, bounds=(1, 32), label="Chunk size C")
    d = param.Integer(4, bounds=(2, 8), label="Size d (d_k = d_v)")
    decay = param.Number(0.9, bounds=(0.5, 1.0), step=0.01, label="Decay γ or α",
                         doc="RetNet's fixed γ; Mamba-2 and Gated DeltaNet draw α per token "
                             "around it")
    write_strength = param.Number(1.0, bounds=(0.0, 2.0), step=0.05, label="Write strength β",
                                  doc="How much of the error the delta rules write")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed")
    exercise = exercise_setting()  # "Your turn": the carried state, or a chunk's masked scores

    def play_exercise(self, exercise) -> tuple[int, ...]:
        """"Show it on the plots": the exercise's T and C (the carried state: its token), or
        its chunk size and rule on the page's own tokens (the masked scores: the row asked for
        in chunk 2). Returns the t each step of the working is about."""
        g = exercise.given
        if g["variant"] == "state":
            self.param.update(tokens=g["T"], chunk_size=g["C"])
            return (g["t"],) * len(exercise.steps)
        self.param.update(rule=g["rule"], chunk_size=g["C"], tokens=max(self.tokens, 2 * g["C"]),
                          **({"decay": g["gamma"]} if g["gamma"] else {}))
        return (g["C"] + g["row"],) * len(exercise.steps)

    def gates(self, T: int) -> dict:
        """sim's keyword arguments for the rule: per-token α drawn around the decay (Mamba-2 and
        Gated DeltaNet are data-dependent), RetNet's fixed γ, a constant β."""
        drawn = scenarios.draw_gates(T, self.d, self.decay, self.write_strength, self.seed)
        out = {"retnet": {"gamma": self.decay}, "mamba2": {"alpha": drawn["alpha"]},
               "gated_deltanet": {"alpha": drawn["alpha"]}}.get(self.rule, {})
        return out | ({"beta": np.full(T, self.write_strength)} if self.rule in DELTA_RULES else {})

    def compute(self) -> Run:
        T, C, d, rule = self.tokens, self.chunk_size, self.d, self.rule
        s = scenarios.gaussian(T, d, d, seed=self.seed)
        q, k, v = s.q, sim.l2_normalize(s.k), s.v  # (T, d) each; unit keys, as the delta rules want
        gates = self.gates(T)
        tr = sim.run_chunkwise(rule, q, k, v, chunk_size=C, **gates)
        rec = sim.run(rule, q, k, v, **gates).outputs  # (T, d) the recurrence, token by token
        diff = tr.outputs - rec
        starts, n = tr.starts, tr.n_chunks
        chunk_of = np.concatenate([[0], np.arange(T) // C])  # (T + 1,) chunk read at t
        row = np.concatenate([[-1], np.arange(T) % C])  # the current token's row in its chunk
        width = min(C, T)  # every chunk's matrix drawn as width × width

        def padded(mats, lower) -> np.ndarray:  # (T + 1, width, width), NaN where nothing is
            out = np.full((T + 1, width, width), np.nan)
            for t in range(T + 1):
                m = mats[chunk_of[t]]
                out[t, : len(m), : len(m)] = np.where(lower[: len(m), : len(m)], m, np.nan)
            return out

        causal = np.tril(np.ones((width, width), dtype=bool))
        parts = np.zeros((T + 1, len(PARTS), d))
        parts[1:] = np.stack([tr.inter, tr.intra, tr.outputs, rec, diff], axis=1)
        x = np.unique(np.round(np.logspace(0, np.log10(COST_T_MAX), 200))).astype(np.int64)
        costs = sim.chunkwise_cost(x, C, d)
        ts = np.arange(T + 1)
        data = {"starts": starts, "C": C, "chunk_of": chunk_of, "row": row,
                "scores": padded(tr.scores, causal),
                "ut": padded(tr.transforms or [np.zeros((1, 1))] * n, causal),
                "states": tr.boundary_states[chunk_of], "parts": parts, "x": x,
                "mark": np.maximum(ts, 1), "stop_start": 0, "stop_end": T, "delta": rule in DELTA_RULES,
                **{f"{form}_{what}": getattr(costs, f"{form}_{what}")
                   for form in ("recurrent", "parallel", "chunkwise") for what in ("ops", "numbers", "steps")}}
        for c in range(min(n, NAMED_CHUNKS)):
            data[f"stop_chunk{c + 1}"] = int(starts[c]) + 1
        scale = float(np.max(np.abs(parts)))
        r = {"T": T, "C": C, "d": d, "starts": starts, "chunk_of": chunk_of, "inter": tr.inter,
             "intra": tr.intra, "out": tr.outputs, "rec": rec, "gap": np.max(np.abs(diff), axis=1),
             "scale": scale, "delta": rule in DELTA_RULES,
             "cost_at": lambda tokens: sim.chunkwise_cost(tokens, C, d)}
        for key, text in (("caption", cv.caption), ("state_text", cv.state_text),
                          ("cost_text", cv.cost_text)):
            data[key] = [text(r, int(t)) for t in ts]
        table = {"t": list(range(1, T + 1)), "chunk": (chunk_of[1:] + 1).tolist()}
        for name, arr in (("inter", tr.inter), ("intra", tr.intra), ("o_chunkwise", tr.outputs),
                          ("o_recurrent", rec), ("difference", diff)):
            table |= {f"{name}_{j + 1}": arr[:, j].tolist() for j in range(d)}
        info = (f"C = {C} ≥ T = {T}: one chunk, which is the parallel form." if C >= T else
                "C = 1: every chunk is one token, which is the recurrence." if C == 1 else "")
        return Run(t_max=T, data=data, table=table, info=info)

    def make_views(self) -> list:
        self.strip = cv.ChunkStrip()
        chunk = {"row_label": "query: token t of the chunk", "col_label": "key: token s of the chunk",
                 "row_symbol": "t", "col_symbol": "s", "width": 310, "height": 300}
        # Short titles: the presenter's type is larger, and a 310 px figure cut "Masked scores
        # of this chun"; the heading above them says "Inside the current chunk".
        self.scores = cv.MaskedHeatmap("scores", "Masked scores A",
                                       value_name="score", **chunk)
        self.ut = cv.MaskedHeatmap("ut", "UT transform", value_name="T[t, s]",
                                   **chunk)
        self.state = Heatmap("states", "Carried state S", row_label="key entry i",
                             col_label="value entry j", value_name="S[i, j]", width=300, height=300)
        self.parts = cv.PartsHeatmap("parts", "Output of token t, both ways", row_label="",
                             col_label="value entry j", row_symbol="row", value_name="o[j]",
                             width=420, height=240, colorbar=False)
        self.parts.fig.yaxis.major_label_overrides = dict(enumerate(PARTS))
        log = {"x": "x", "x_label": "tokens T", "x_axis_type": "log", "y_axis_type": "log",
               "marker": "mark", "width": 380, "height": 300}
        self.work = LinePlot("Work: operations for T tokens", {
            "recurrent": "recurrent_ops", "parallel": "parallel_ops", "chunkwise": "chunkwise_ops"},
            y_label="operations", **log)
        self.memory = LinePlot("Memory: numbers held at once", {
            "recurrent": "recurrent_numbers", "parallel": "parallel_numbers",
            "chunkwise": "chunkwise_numbers"}, y_label="numbers", **log)
        self.steps = LinePlot("Sequential steps for T tokens", {
            "recurrent": "recurrent_steps", "parallel": "parallel_steps",
            "chunkwise": "chunkwise_steps"}, y_label="steps one after another", **log)
        self.crossings = [crossover(p.fig, "T = C") for p in (self.work, self.memory, self.steps)]
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(4, 10),
                               styles={"font-size": "15px"},
                               css_classes=[role("caption")])  # read out after each step
        self.state_text = Readout("state_text", sizing_mode="stretch_width", margin=(0, 10))
        self.cost_text = Readout("cost_text", width=360, margin=(4, 10), stylesheets=[cv.TABLE_CSS],
                                 css_classes=[role("present_drop")])  # out first: the figures fit
        return [self.strip, self.scores, self.ut, self.state, self.parts, self.work, self.memory,
                self.steps, self.caption, self.state_text, self.cost_text]

    def _apply(self, run: Run) -> None:
        for span, label in self.crossings:
            span.location = label.x = float(run.data["C"])
        self.ut.fig.visible = bool(run.data["delta"])
        super()._apply(run)

    def body(self) -> pn.viewable.Viewable:
        w = {"width": 260}
        decay = self.widget("decay", pn.widgets.FloatSlider, **w)
        beta = self.widget("write_strength", pn.widgets.FloatSlider, **w)

        def shown(*_events) -> None:  # a gate's slider only where the rule has that gate
            decay.visible, beta.visible = self.rule in DECAY_RULES, self.rule in DELTA_RULES

        shown()
        self.param.watch(shown, "rule")
        controls = pn.Column(
            self.widget("rule", pn.widgets.Select, **w),
            *(self.widget(n, pn.widgets.IntSlider, **w) for n in ("tokens", "chunk_size", "d")),
            decay, beta, self.widget("seed", pn.widgets.IntInput, width=120), width=300,
            css_classes=[role("controls")])
        # The wide figures and the table shrink to a phone's width (at most their own width).
        for model in (self.strip.fig, self.parts.fig, self.work.fig, self.memory.fig,
                      self.steps.fig, self.cost_text.div):
            fluid(model)
        fig = pn.pane.Bokeh
        top = pn.Column(self.caption.panel(), fig(self.strip.fig), fig(self.parts.fig),
                        sizing_mode="stretch_width", min_width=PHONE_MIN_WIDTH,
                        styles={"flex": "1 1 640px"},
                        css_classes=[role("main_view"), self.view_class("chunks")])
        inside = pn.FlexBox(fig(self.scores.fig), fig(self.state.fig), fig(self.ut.fig),
                            sizing_mode="stretch_width", css_classes=[role("main_view")])
        forms = pn.FlexBox(fig(self.work.fig), fig(self.memory.fig), fig(self.steps.fig),
                           self.cost_text.panel(),
                           sizing_mode="stretch_width", css_classes=[role("secondary")])

        # The current chunk shares the first row when there is room (the presenter view, whose
        # settings are folded away); otherwise it wraps onto a row of its own.
        chunk = pn.Column(heading("Inside the current chunk"), self.state_text.panel(), inside,
                          sizing_mode="stretch_width", styles={"flex": "1 1 560px"},
                          css_classes=[self.view_class("chunk")])
        return pn.Column(pn.FlexBox(controls, top, chunk, sizing_mode="stretch_width"),
                         pn.Column(heading("Work and memory of the three forms"), forms,
                                   sizing_mode="stretch_width", css_classes=[self.view_class("forms")]),
                         sizing_mode="stretch_width")
