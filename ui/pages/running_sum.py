"""Page 1, "Running sum: attention without the softmax".

Linear attention folds every key and value into one fixed-size state, S ← S + φ(k) vᵀ and
z ← z + φ(k), and reads the same answer a scan over the whole cache would give. The page shows
the tokens, the state S with this step's write and the key total z, the output computed both
ways (over the stored pairs with `sim.parallel.run_parallel`, and from the state alone with
`sim.step`), the KV cache against the state in memory, and the work per token (`sim.cost`).
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param

import sim
from sim import cost, scenarios
from sim.exercises import running_sum, running_sum_stream
from sim.parallel import run_parallel
from ui.contract import role
from ui.exercises import exercise_setting
from ui.fmt import num, sub, vec
from ui.page import Page, Run
from ui.theme import TIGHT_BUTTONS_CSS, group_label, heading
from ui.views import Heatmap, LinePlot, Readout, crossover
from ui.views import running_sum as texts
from ui.views.running_sum import COST_T_MAX, FP32, MemoryStack, TokenStrip

RANDOM, WORKED, YOUR_TURN = "random tokens", "worked example", "your turn"


class RunningSumPage(Page):
    link_keys = {"exercise": "ex"}
    stops = (("start", "stop_start"), ("t = d", "stop_d"), ("t = d + 1", "stop_d1"))
    named_views = {"tokens": "The tokens k, v, q", "state": "The state S and the write", "memory":
                   "KV cache against the state", "outputs": "The output, computed both ways",
                   "cost": "Work and memory against T"}
    subject = "state"  # on the first screen (ui/page.py Page.subject)
    offered = ("preset=worked+example", "preset=your+turn")  # the settings link, the presets

    preset = param.Selector(default=RANDOM, objects=[RANDOM, WORKED, YOUR_TURN],
                            label="Token stream", doc="Random Gaussian tokens, the lesson's "
                            "worked example, or the tokens of the exercise below")
    d = param.Integer(4, bounds=(2, 16), label="Size d (d_k = d_v)")
    tokens = param.Integer(12, bounds=(4, 64), label="Tokens T")
    feature_map = param.Selector(default="elu+1", objects=list(sim.FEATURE_MAPS),
                                 label="Feature map φ")
    normalize = param.Boolean(True, label="Divide by φ(q)·z (normalise)")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed")
    exercise = exercise_setting()

    @param.depends("preset", watch=True)
    def _lesson_settings(self) -> None:  # the worked example is the lesson's: identity, divided
        if self.preset != RANDOM and not self._reverting:
            self.param.update(feature_map="identity", normalize=True)

    def play_exercise(self, _exercise) -> tuple[int, ...]:  # "Show it on the plots": its
        self.preset = YOUR_TURN  # tokens, and the t each step of the working is about
        return (2, 3, 3, 3)

    @param.depends("exercise", watch=True)
    def _exercise_tokens(self) -> None:  # the plots play the exercise's own tokens
        if self.preset == YOUR_TURN and not self._reverting:
            self._changed()

    def compute(self) -> Run:
        s = (scenarios.worked_example() if self.preset == WORKED else
             running_sum_stream(running_sum(self.exercise)) if self.preset == YOUR_TURN
             else scenarios.gaussian(self.tokens, self.d, self.d, seed=self.seed))
        Q, K, V, T, d = s.q, s.k, s.v, s.T, s.q.shape[1]
        fm, norm = self.feature_map, self.normalize
        # State form, one sim.step per token: S_t, z_t, this step's write and o_t.
        S, z, writes = np.zeros((T + 1, d, d)), np.zeros((T + 1, d)), np.zeros((T + 1, d, d))
        out_state, state = np.zeros((T, d)), sim.init_state("linear", d, d)
        for i in range(T):
            step = sim.step("linear", state, Q[i], K[i], V[i], normalize=norm, feature_map=fm)
            state = step.state
            S[i + 1], z[i + 1], writes[i + 1], out_state[i] = state.S, state.z, step.write, step.output
        read_state = sim.run("linear", Q, K, V, feature_map=fm).outputs  # φ(q)ᵀS
        divisor = sim.run("linear", Q, K, np.ones((T, 1)), feature_map=fm).outputs[:, 0]  # φ(q)·z
        # Direct form over every stored pair (sim's masked-matrix form): the scores are the
        # outputs for values e_i, the total score the blend of values that are all 1.
        scores = run_parallel("linear", Q, K, np.eye(T), feature_map=fm)
        blend = run_parallel("linear", Q, K, V, feature_map=fm)
        total = run_parallel("linear", Q, K, np.ones((T, 1)), feature_map=fm)[:, 0]
        out_direct = run_parallel("linear", Q, K, V, normalize=norm, feature_map=fm)
        gaps = np.max(np.abs(out_direct - out_state), axis=1)
        agrees = np.all(np.isclose(out_direct, out_state, rtol=1e-6, atol=1e-9), axis=1)
        ts = np.arange(T + 1)
        kv, st = cost.kv_cache_numbers(ts, d), cost.state_numbers(d, d, with_z=True)
        x = np.unique(np.round(np.logspace(0, np.log10(COST_T_MAX), 240)))
        phi = {"phi_q": sim.feature_map(fm, Q), "phi_k": sim.feature_map(fm, K)}
        both = np.zeros((T + 1, 2, d))  # o_t over every stored pair (row 0), from the state (1)
        both[1:, 0], both[1:, 1] = out_direct, out_state
        data = dict(q=Q, k=K, v=V, d=d, S=S, writes=writes, z=z, ts=ts, x=x, **phi, both=both,
                    memory_crossover=st / cost.kv_cache_numbers(1, d),  # 2·t·d = d² + d
                    kv_bytes=kv * FP32, state_bytes=np.full(T + 1, st * FP32),
                    att_ops=cost.attention_ops(x, d), st_ops=np.full(x.shape, float(cost.state_ops(d))),
                    att_total=cost.cumulative_attention_ops(x, d), st_total=cost.cumulative_state_ops(x, d),
                    mark=np.maximum(ts, 1), stop_start=0, stop_d=min(d, T), stop_d1=min(d + 1, T))
        r = dict(s=s, fm=fm, norm=norm, d=d, scores=scores, blend=blend, total=total,
                 read=read_state, divisor=divisor, out_d=out_direct, out_s=out_state,
                 gaps=gaps, agrees=agrees, kv=kv, st=st, cross=data["memory_crossover"])
        data |= {"state_text": [_state_text(fm, r, writes, t) for t in ts],
                 "token_text": [texts.token_text(r, phi, t) for t in ts],
                 "outputs_text": [_outputs_text(r, t) for t in ts],
                 "memory_text": [texts.memory_text(r, t) for t in ts],
                 "cost_text": [texts.cost_text(d, t) for t in ts]}
        table = {"t": list(range(1, T + 1))}
        for name, arr in (("k", K), ("v", V), ("q", Q), ("o_direct", out_direct), ("o_state", out_state)):
            table |= {f"{name}_{j + 1}": arr[:, j].tolist() for j in range(d)}
        info = ("With the identity feature map the divisor φ(q)·z can be close to zero or "
                "negative for random tokens, so the divided outputs can be huge or flip sign. "
                "elu + 1 keeps every score positive."
                if self.preset == RANDOM and fm == "identity" and norm else "")
        return Run(t_max=T, data=data, table=table, info=info)

    def make_views(self) -> list:
        heat = {"row_label": "key entry i", "col_label": "value entry j", "width": 300, "height": 290}
        self.tokens_view = TokenStrip()
        self.S_map = Heatmap("S", "State S (after token t)", value_name="S[i, j]", **heat)
        self.write_map = Heatmap("writes", "Added at this step", value_name="φ(k)v[i, j]", **heat)
        self.z_map = Heatmap("z", "Key total z", row_label="key entry i", col_label="",
                             width=150, height=290, colorbar=False, value_name="z[i]")
        self.z_map.fig.xaxis.visible = False
        self.o_map = Heatmap("both", "Output oₜ, both ways", value_name="o[j]",
                             row_label="", col_label="entry j of o", width=330, height=150)
        self.o_map.fig.yaxis.major_label_overrides = {0: "every pair", 1: "state S, z"}
        self.memory = MemoryStack()
        log = {"x": "x", "x_label": "token t", "y_label": "operations", "width": 360,
               "height": 300, "x_axis_type": "log", "y_axis_type": "log", "marker": "mark"}
        self.work = LinePlot("Work per token (operations)", {"attention 4·t·d": "att_ops",
                             "state 4·d²": "st_ops"}, **log)
        self.total = LinePlot("Total work for the first t tokens", {"attention": "att_total",
                              "state": "st_total"}, **log)
        self.bytes = LinePlot("Memory after t tokens (bytes, fp32)", {"KV cache": "kv_bytes",
                              "state S + z": "state_bytes"}, x="ts", x_label="token t",
                              y_label="bytes", width=360, height=300, marker="ts")
        self.crossings = [crossover(self.work.fig, "t = d"), crossover(self.total.fig, "t = d"),
                          crossover(self.bytes.fig, "same size")]
        md = {"sizing_mode": "stretch_width", "margin": (4, 10)}
        self.state_text = Readout("state_text", sizing_mode="stretch_width", margin=(0, 10),
                                  styles={"font-size": "15px"}, css_classes=[role("caption")])
        drop = {"css_classes": [role("present_drop")]}  # out of a scene if need be (l at 1280 x 720: scale 0.45)
        self.token_text, self.outputs_text = Readout("token_text", **md), Readout("outputs_text", **md, **drop)
        self.memory_text, self.cost_text = Readout("memory_text", width=340, margin=(4, 10)), Readout("cost_text", width=340, margin=(4, 10), **drop)
        return [self.tokens_view, self.S_map, self.write_map, self.z_map, self.o_map, self.memory, self.work,
                self.total, self.bytes, self.state_text, self.token_text, self.outputs_text, self.memory_text, self.cost_text]

    def _apply(self, run: Run) -> None:
        places = (run.data["d"], run.data["d"], run.data["memory_crossover"])
        for (span, label), x in zip(self.crossings, places):
            span.location = label.x = float(x)
        super()._apply(run)

    def body(self) -> pn.viewable.Viewable:
        worked = self.preset != RANDOM
        d = self.widget("d", pn.widgets.IntSlider, width=220, visible=not worked)
        tokens = self.widget("tokens", pn.widgets.IntSlider, width=220, visible=not worked)
        seed = self.widget("seed", pn.widgets.IntInput, width=120, visible=not worked)
        fixed = pn.pane.HTML("<i>The lesson's own tokens: d = 2.</i>", margin=(0, 10), visible=worked)
        start = pn.pane.HTML(f"<a class='{role('settings_link')}' href='?preset=worked+example' style='"
                             "font-weight:600'>Start here: the worked example, two tokens by hand "
                             "→</a>", margin=(0, 10), visible=not worked,
                             css_classes=[role("no_print")])

        def lock(*_events) -> None:  # the worked example and the exercise have their own d, T
            for w in (d, tokens, seed):  # (the sliders: a later `tokens`, the tokens plot's
                w.visible = self.preset == RANDOM  # column, once hid the plot instead)
            fixed.visible, start.visible = self.preset != RANDOM, self.preset == RANDOM

        self.param.watch(lock, "preset")
        tight = {"color": "default", "stylesheets": [TIGHT_BUTTONS_CSS]}
        controls = pn.Column(
            group_label(self.label("preset")),
            self.widget("preset", pn.widgets.RadioButtonGroup, **tight), d, tokens, seed,
            fixed, group_label(self.label("feature_map")),
            self.widget("feature_map", pn.widgets.RadioButtonGroup, color="default"),
            self.widget("normalize", pn.widgets.Checkbox), self.token_text.panel(), width=340,
            css_classes=[role("controls")])  # wide enough for the three presets' buttons
        both = pn.Column(heading("The output, computed both ways",
                                 css_classes=[role("secondary")]),  # the presenter's room: figures
                         pn.pane.Bokeh(self.o_map.fig), self.outputs_text.panel(),
                         sizing_mode="stretch_width", min_width=330,
                         styles={"flex": "1 1 420px"},  # first out of the overview if too small
                         css_classes=[role("main_view"), role("present_drop"), self.view_class("outputs")])
        fig = pn.pane.Bokeh
        # The page's subject first, beside the settings: the state S with this step's write and
        # the key total z (it had come below the tokens and the output, at y = 730 of a 768 px
        # laptop screen and below a phone's first screen); the tokens that feed it, the output
        # read from it and the memory it saves come next, in one row where there is room.
        state = pn.Column(self.state_text.panel(), pn.FlexBox(
            fig(self.S_map.fig), fig(self.write_map.fig), fig(self.z_map.fig), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", styles={"flex": "1 1 750px"},
            css_classes=[role("main_view"), self.view_class("state")])
        memory = pn.Column(fig(self.memory.fig), self.memory_text.panel(), width=370,
                           css_classes=[role("secondary"), self.view_class("memory")])
        work = pn.FlexBox(fig(self.work.fig),
                          pn.Column(fig(self.total.fig), self.cost_text.panel(), width=370),
                          pn.Column(fig(self.bytes.fig), width=370), sizing_mode="stretch_width",
                          css_classes=[role("secondary"), self.view_class("cost")])
        strip = pn.Column(fig(self.tokens_view.fig), css_classes=[role("main_view"), self.view_class("tokens")])
        return pn.Column(start, pn.FlexBox(controls, state, sizing_mode="stretch_width"),
                         pn.FlexBox(strip, both, memory, sizing_mode="stretch_width"),
                         work, sizing_mode="stretch_width")


# Readout texts, one per t ----------------------------------------------------------------------

def _state_text(fm: str, r: dict, writes: np.ndarray, t: int) -> str:
    """What changed at step t, in one line: the update, its largest cell and the new output."""
    if t == 0:
        return "<b>t = 0</b>: S₀ = 0 and z₀ = 0; nothing added yet."
    k = "φ(k{0})" if fm != "identity" else "k{0}"
    i, j = np.unravel_index(np.argmax(np.abs(writes[t])), writes[t].shape)
    same = ("the same from the state alone" if r["agrees"][t - 1]
            else f"from the state alone it differs by {num(r['gaps'][t - 1])}")
    return (f"<b>t = {t}</b>: S{sub(t)} = S{sub(t - 1)} + {k.format(sub(t))} v{sub(t)}ᵀ "
            f"(biggest change S[{i}, {j}]: {num(writes[t][i, j])}), "
            f"z{sub(t)} = z{sub(t - 1)} + {k.format(sub(t))}; "
            f"o{sub(t)} = {vec(r['out_d'][t - 1])}, {same}.")


def _outputs_text(r: dict, t: int) -> str:
    if t == 0:
        return "<p>The output appears once a token has been read.</p>"
    i, ident = t - 1, r["fm"] == "identity"
    fq, fk = ("q", "k<sub>i</sub>") if ident else ("φ(q)", "φ(k<sub>i</sub>)")
    shown = ", ".join(num(x) for x in r["scores"][i, :t][:8]) + (", …" if t > 8 else "")
    plural = "s" if t > 1 else ""
    a = [f"<h4>Over every stored pair ({t} key{plural} and value{plural})</h4>",
         f"scores {fq}·{fk} = ({shown})", f"blend Σ score<sub>i</sub> v<sub>i</sub> = {vec(r['blend'][i])}"]
    b = ["<h4>From the state alone (S and z)</h4>", f"{fq}ᵀ S<sub>{t}</sub> = {vec(r['read'][i])}"]
    if r["norm"]:
        a.append(f"divide by Σ score<sub>i</sub> = {num(r['total'][i])}")
        b.append(f"divide by {fq}·z<sub>{t}</sub> = {num(r['divisor'][i])}")
    else:
        a.append("no division (normalisation off)")
        b.append("no division (normalisation off)")
    a.append(f"<b>o<sub>{t}</sub> = {vec(r['out_d'][i])}</b>")
    b.append(f"<b>o<sub>{t}</sub> = {vec(r['out_s'][i])}</b>")
    gap = num(r["gaps"][i])
    verdict = (f"<p class='rs-agree'>✔ Both ways agree (largest difference {gap}).</p>"
               if r["agrees"][i] else
               f"<p class='rs-disagree'>✘ The two ways differ by up to {gap} "
               "(rounding in a near-zero divisor).</p>")
    card = ("<div style='flex:1 1 260px;min-width:0;border:1px solid #8884;border-radius:6px;"
            "padding:4px 10px;overflow-wrap:anywhere'>{}</div>")
    cards = "".join(card.format(lines[0] + "<br>".join(lines[1:])) for lines in (a, b))
    return f"<div style='display:flex;flex-wrap:wrap;gap:10px'>{cards}</div>{verdict}"
