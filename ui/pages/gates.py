"""Page 3, "Gates that decide what to keep": one token stream through 2 to 4 update rules
(sim.RULES' seven and RWKV-7, RWKV-6, DeltaProduct, log-linear attention, Mamba-1, Gated
DeltaNet-2). ``compute()`` runs each with ``sim.run`` (ui/pages/gates_run.py), takes one erasing
rule's update apart (read-back, error, erased and written parts: ui/pages/gates_update.py) and
writes every rule in the one frame of ``sim.frame_parts``; the views (ui/views/gates.py) show
token t of it. Nothing here updates a state.
"""

from __future__ import annotations

import functools

import numpy as np
import panel as pn
import param

import sim
from sim import scenarios
from ui.contract import mark, role
from ui.exercises import exercise_setting
from ui.page import Page, Run
from ui.pages import gates_run as gr
from ui.pages import gates_update as gu
from ui.theme import heading
from ui.views import Readout
from ui.views import gates as gv

# The rules this page compares (softmax keeps a cache, not a state: it has no heatmap here);
# then sim.MORE_RULES, which take other shapes (n_h keys a token, a gate per cell, levels).
GATED_RULES = ("linear", "retnet", "mamba2", "gla", "deltanet", "gated_deltanet", "kda")
MORE_RULES = ("rwkv7", "rwkv6", "deltaproduct", "log_linear", "mamba1", "gdn2")
ALL_RULES = GATED_RULES + MORE_RULES
LABELS = {**{name: sim.RULE_INFO[name].label for name in GATED_RULES},
          **{name: sim.MORE_RULE_INFO[name].label for name in MORE_RULES},
          "log_linear": "Log-linear attention", "mamba1": "Mamba-1"}  # short: a heatmap's title
MIN_RULES, MAX_RULES = 2, 4
REWRITE_EVERY = 3  # the overwrite stream rewrites its key every 3 tokens (sim's default)
VOCABULARY_SIZE = 4
GATE_TABLE_CSS = ".lab-gates td, .lab-gates th {padding: 2px 12px 2px 0; text-align: left}"


class GatesPage(Page):
    link_keys = {"stream": "scenario", "retnet_decay": "gamma", "decay": "alpha",
                 "write_strength": "beta", "exercise": "ex",  # the names older links use
                 "rwkv_decay": "w", "learning_rate": "a", "bonus": "u",
                 "householder_steps": "nh", "level_ratio": "r", "erase_gate": "erase",
                 "write_gate": "write"}
    stops = (("start", "stop_start"), ("a key written again", "stop_rewrite"),
             ("t = d: as many keys as channels", "stop_d"))
    named_views = {"states": "The state S of each rule", "update": "One update taken apart: read back, "
                   "erase, write", "time": "Over time: the state's size and the recall error"}
    subject = "states"  # on the first screen (ui/page.py Page.subject)
    phases = gv.overwrite.PHASES  # a delta rule's step: read back, erase, write (animated)
    # a rule's own setting changes the picture only where the rule is compared
    only_with = {name: {"rules": ["linear", *rules]} for name, rules in gr.OWN_SETTINGS.items()}

    rules = param.ListSelector(default=["linear", "retnet", "deltanet", "gated_deltanet"],
                               objects={LABELS[n]: n for n in ALL_RULES},
                               label="Rules to compare (2 to 4)",
                               doc="The rules that read the same token stream, side by side")
    stream = param.Selector(default="overwrite", label="Token stream", objects={
        "overwrite one key": "overwrite", "random": "random", "vocabulary with repeats": "vocabulary"})
    d = param.Integer(4, bounds=(2, 16), label="Size d = d_k = d_v")
    tokens = param.Integer(24, bounds=(4, 256), label="Tokens T")
    retnet_decay = param.Number(0.9, bounds=(0.5, 1.0), step=0.01, label="RetNet decay γ",
                                doc="A fixed share of the state kept at every token")
    decay = param.Number(0.9, bounds=(0.5, 1.0), step=0.01, label="Decay gate α",
                         doc="The decay of Mamba-2, GLA, Gated DeltaNet and KDA")
    write_strength = param.Number(1.0, bounds=(0.0, 2.0), step=0.05, label="Write strength β",
                                  doc="How much of the error the delta rules write")
    normalize_keys = param.Boolean(True, label="Normalise keys (L2)")
    data_dependent_gates = param.Boolean(False, label="Data-dependent gates (per token)",
                                         doc="α and β drawn per token around the chosen values")
    # the new rules' own settings (shown while a rule that reads them is compared)
    rwkv_decay = param.Number(0.9, bounds=(0.55, 1.0), step=0.01, label="RWKV decay w",
                              doc="RWKV-7's and RWKV-6's decay per channel (theirs: 0.545 to 1)")
    learning_rate = param.Number(1.0, bounds=(0.0, 1.0), step=0.05, label="In-context learning rate a (RWKV-7)",
                                 doc="The share of what κ̂ reads that RWKV-7 erases; it writes a ⊙ k")
    bonus = param.Number(1.0, bounds=(-1.0, 2.0), step=0.05, label="Bonus u (RWKV-6)",
                         doc="RWKV-6's weight of the token, which its state does not hold yet")
    householder_steps = param.Integer(2, bounds=(1, 4), doc="The n_h − 1 pairs before, then its own",
                                      label="Householder steps per token n_h (DeltaProduct)")
    level_ratio = param.Number(0.5, bounds=(0.0, 2.0), step=0.05, doc="r = 1 is Mamba-2",
                               label="Level weights λ = r^ℓ (log-linear)")
    # Gated DeltaNet-2's two gates in place of β: b = w = β is KDA (so the defaults differ from
    # β = 1, or the two rules would look the same): erase all of the old value, write half the new
    erase_gate = param.Number(1.0, bounds=(0.0, 1.0), step=0.05, label="Erase gate b (GDN-2)",
                              doc="The share of what the key finds that Gated DeltaNet-2 erases, per key channel")
    write_gate = param.Number(0.5, bounds=(0.0, 1.0), step=0.05, label="Write gate w (GDN-2)",
                              doc="The share of the new value Gated DeltaNet-2 writes, per value channel")
    inspect = param.Selector(default="auto", label="Take apart the update of", objects={
        "first delta rule shown": "auto", **{LABELS[n]: n for n in gr.DELTA_RULES if n in LABELS}})
    seed = param.Integer(0, bounds=(0, 2**31 - 1), label="Seed")
    exercise = exercise_setting()

    # The run ---------------------------------------------------------------------------------
    def token_stream(self) -> scenarios.Stream:
        T, d, seed = self.tokens, self.d, self.seed
        if self.stream == "overwrite":
            return scenarios.overwrite(T, d, d, seed=seed, every=REWRITE_EVERY)
        if self.stream == "vocabulary":
            return scenarios.vocabulary(T, d, d, vocab_size=min(VOCABULARY_SIZE, d), seed=seed)
        return scenarios.gaussian(T, d, d, seed=seed)

    def gates(self, T: int) -> dict[str, np.ndarray]:
        """Per-token gates: constant unless data-dependent (RetNet's γ is fixed by design)."""
        return gr.draw_page_gates(self, T)

    def check_rules(self) -> list[str]:
        rules = list(self.rules)
        twice = [LABELS.get(r, r) for r in dict.fromkeys(rules) if rules.count(r) > 1]
        if twice:
            raise ValueError(f"{', '.join(twice)} is chosen more than once; choose different rules")
        if not MIN_RULES <= len(rules) <= MAX_RULES:
            raise ValueError(f"choose {MIN_RULES} to {MAX_RULES} rules to compare (now {len(rules)})")
        return rules

    def compute(self) -> Run:
        rules = self.check_rules()
        stream = self.token_stream()
        T, d = stream.T, self.d
        k = sim.l2_normalize(stream.k) if self.normalize_keys else stream.k  # (T, d)
        v, gates = stream.v, self.gates(T)  # v (T, d)
        inspected = gr.inspected_rule(self)
        kwargs, traces, norms, errors, errors_old, inputs = gr.run_rules(
            self, list(dict.fromkeys([*rules, inspected])), stream, k, v, gates, LABELS)
        # The delta rule's update taken apart, from its trace (the same numbers as sim.step's).
        read_back, error, erased, written, beta = gu.taken_apart(
            inspected, traces[inspected], *inputs[inspected], kwargs[inspected])
        value = gu.written_value(inspected, v, kwargs[inspected])  # (T, d): v, or GDN-2's w ⊙ v
        vectors = np.stack([value, read_back, error], axis=1)  # (T, 3, d)

        frames, limits = gr.with_empty_first, gr.running_limits  # t = 0: the first token's scale
        S_limits = limits(np.abs([traces[r].states for r in rules]).max(axis=0), 0.0)
        S_limits[0] = S_limits[1]
        part_limits = limits(np.maximum(np.abs(erased), np.abs(written)), 1.0)
        labels = [LABELS[r] for r in rules]
        data = {"rules": rules, "labels": labels, "inspected": inspected, "x": np.arange(1, T + 1),
                "ts": np.arange(T + 1), "S_limits": S_limits, "vectors": frames(vectors),
                "vectors_limits": limits(vectors, 1.0), "erased": frames(erased),
                "erased_limits": part_limits, "written": frames(written),
                "written_limits": part_limits, "legend": gv.legend(labels),
                "recall_note": gv.recall_note(self.stream, rules), "stop_start": 0,
                "stop_d": min(d, T), "stop_rewrite": gv.first_repeat(stream.k),
                **gu.overwrite_phases(rules, gr.DELTA_RULES, LABELS, traces, inputs, kwargs)}
        for i in range(MAX_RULES):  # unused slots: zeros, hidden by their views
            r = rules[i] if i < len(rules) else None
            data[f"S{i}"] = frames(traces[r].states) if r else np.zeros((T + 1, d, d))
            for key, values in (("norm", norms), ("new", errors), ("old", errors_old)):
                data[f"{key}{i}"] = values[r] if r else np.full(T, np.nan)

        token_gates = functools.partial(gv.token_gates, kwargs)
        others = [x for x in rules if x != inspected]
        r = {"rules": rules, "labels": LABELS, "inspected": inspected, "stream": stream, "k": k,
             "v": v, "norms": norms, "errors": errors, "errors_old": errors_old, "beta": beta,
             "read_back": read_back, "error": error, "vec_limits": data["vectors_limits"],
             "held": np.linalg.norm(read_back, axis=1), "inputs": inputs,
             "strength": gu.erase_share(inspected, beta, k, kwargs[inspected]),
             "n_h": self.householder_steps, "states": {x: traces[x].states for x in rules},
             "other": others[0] if others else None, "token_gates": token_gates,
             "auto": self.inspect == "auto"}
        for key, text in (("caption", gv.caption), ("token_text", gv.token_text), ("delta_text", gv.delta_text),
                          ("gates_text", gv.gates_table), ("frame_text", gv.frame_table)):
            data[key] = [text(r, t) for t in range(T + 1)]
        table = gv.csv_table(rules, token_gates, norms, errors, errors_old, T)
        info = (gr.warnings(self, stream.k, gates["beta"]), gr.same_states(rules, r["states"], LABELS))
        return Run(t_max=T, data=data, table=table, info=" ".join(filter(None, info)))

    def _apply(self, run: Run) -> None:  # the update's parts named after the rule taken apart
        gu.name_the_parts(self, run.data["inspected"]), super()._apply(run)

    # The views -------------------------------------------------------------------------------
    def make_views(self) -> list:
        cells = {"row_label": "key channel i", "col_label": "value channel j", "width": 290,
                 "height": 250}  # 290: room for "Kimi Delta Attention" beside the save button
        self.heatmaps = [gv.ScaledHeatmap(f"S{i}", "", limits="S_limits", slot=i,  # one scale
                                          value_name="S[i, j]", **cells) for i in range(MAX_RULES)]
        self.vectors = gv.ScaledHeatmap("vectors", "Read back and error", row_label="",
                                        col_label="value channel j", row_symbol="row",
                                        width=330, height=180, max_cols_labelled=6)
        self.erased = gv.ScaledHeatmap("erased", "Erased: β k (Sᵀk)ᵀ", value_name="erased[i, j]",
                                       **cells)
        self.written = gv.ScaledHeatmap("written", "Written: β k vᵀ", value_name="written[i, j]",
                                        **cells)
        line = {"slots": MAX_RULES, "width": 360, "height": 250}
        # Log scale: decay, overwrite and runaway growth all read as slopes.
        self.norm_plot = gv.RuleLines("Size of the state ‖S‖", "norm", log=True,
                                      y_label="‖Sₜ‖ (log scale)", **line)
        self.newest_plot = gv.RuleLines("Recall error: newest value", "new",
                                        y_label="‖Sᵀk − v‖ / ‖v‖", **line)
        self.old_plot = gv.RuleLines("Recall error: first value (old)", "old",
                                     y_label="‖Sᵀk₁ − v₁‖ / ‖v₁‖", **line)
        wide = {"sizing_mode": "stretch_width", "css_classes": [mark("readout")]}
        self.caption = Readout("caption", sizing_mode="stretch_width", margin=(4, 10),
                               styles={"font-size": "15px"}, css_classes=[role("caption")])
        self.token_info, self.delta_info = Readout("token_text", **wide), Readout("delta_text", **wide)
        self.gate_table = Readout("gates_text", stylesheets=[GATE_TABLE_CSS], **wide)
        self.frame_table = gv.FrameTable("frame_text", stylesheets=[GATE_TABLE_CSS], **wide)
        self.legend = gv.Note("legend", sizing_mode="stretch_width")
        self.phase_note = gv.overwrite.PhaseNote("overwrite_text", margin=(0, 10), **wide)
        self.recall = gv.Note("recall_note", sizing_mode="stretch_width")
        return [*self.heatmaps, self.vectors, self.erased, self.written, self.norm_plot,
                self.newest_plot, self.old_plot, self.caption, self.token_info, self.delta_info,
                self.gate_table, self.legend, self.recall, self.frame_table, self.phase_note]

    def body(self) -> pn.viewable.Viewable:
        w = {"width": 220}
        # A rule's own setting shows only while that rule is compared (RetNet's γ by default),
        # α only while a rule reads it (gr.applies).
        own = {n: self.widget(n, pn.widgets.IntSlider if n == "householder_steps" else
                              pn.widgets.FloatSlider, **w) for n in (*gr.OWN_SETTINGS, "decay")}

        def shown(*_events) -> None:
            for name, widget in own.items():
                widget.visible = gr.applies(self, name)

        shown(), self.param.watch(shown, ["rules", "inspect"])
        controls = pn.FlexBox(
            self.widget("rules", pn.widgets.MultiChoice, max_items=MAX_RULES,
                        placeholder="Add a rule to compare",  # its text box's name too (was "null")
                        sizing_mode="stretch_width", min_width=220, max_width=450),
            self.widget("stream", pn.widgets.Select, **w),
            self.widget("d", pn.widgets.IntSlider, **w),
            self.widget("tokens", pn.widgets.IntSlider, **w),
            own["retnet_decay"],
            own["decay"], self.widget("write_strength", pn.widgets.FloatSlider, **w),
            *(widget for name, widget in own.items() if name not in ("retnet_decay", "decay")),
            self.widget("normalize_keys", pn.widgets.Checkbox, **w),
            self.widget("data_dependent_gates", pn.widgets.Checkbox, **w),
            self.widget("seed", pn.widgets.IntInput, width=120),
            sizing_mode="stretch_width", align_items="end", css_classes=[role("controls")])

        row = lambda *views: pn.FlexBox(*(v.panel() for v in views), sizing_mode="stretch_width")  # noqa: E731
        part = lambda name, *parts, main=False: pn.Column(  # noqa: E731  (a named view)
            *parts, sizing_mode="stretch_width", css_classes=[role("main_view")] * main + [self.view_class(name)])

        gates, frame = (pn.Column(heading(title), view.panel(), sizing_mode="stretch_width",
                                  css_classes=[role("secondary")]) for title, view in (
            ("Gates at this token", self.gate_table), (gv.FRAME_HEADING, self.frame_table)))
        return pn.Column(
            controls, self.token_info.panel(),
            part("states", self.caption.panel(), heading("The state S of each rule (one colour scale)"),
                 row(*self.heatmaps), self.phase_note.panel(), main=True),  # (the states whole on a 1366 x 768 first screen)
            part("update", heading("One update taken apart"), self.widget("inspect", pn.widgets.Select, **w),
                 self.delta_info.panel(), row(self.vectors, self.erased, self.written)),
            part("time", heading("Over time"), self.legend.panel(),
                 row(self.norm_plot, self.newest_plot, self.old_plot), self.recall.panel()),
            gates, frame, sizing_mode="stretch_width")
