"""The transport bar every page shares: Step, Back, Play/Pause, Reset, speed, seed, timeline."""

from __future__ import annotations

import contextlib

import panel as pn

from ui.state import PageState


class Transport:
    """Widgets bound both ways to a PageState, and the Play timer."""

    def __init__(self, state: PageState, batch=contextlib.nullcontext):
        self.state = state
        self.batch = batch  # a context manager: the changes of one action reach the page together
        self.back = pn.widgets.Button(name="Back", button_type="default", width=80)
        self.step = pn.widgets.Button(name="Step", button_type="primary", width=80)
        self.play = pn.widgets.Button(name="Play", button_type="success", width=80)
        self.reset = pn.widgets.Button(name="Reset", button_type="default", width=80)
        self.speed = pn.widgets.FloatSlider(name="Speed (steps/s)", start=0.5, end=60.0, step=0.5,
                                            value=state.speed, width=170)
        self.seed = pn.widgets.IntInput(name="Seed", start=0, end=2**31 - 1, value=state.seed, width=110)
        self.timeline = pn.widgets.IntSlider(name="Token t", start=0, end=state.t_max,
                                             value=state.t, sizing_mode="stretch_width", min_width=200)
        self.back.on_click(lambda _: self._do(state.back))
        self.step.on_click(lambda _: self._do(state.step))
        self.play.on_click(lambda _: self._do(state.toggle_play))
        self.reset.on_click(lambda _: self._do(state.reset))
        self.speed.param.watch(lambda e: setattr(state, "speed", e.new), "value")
        self.seed.param.watch(self._on_seed, "value")
        self.timeline.param.watch(lambda e: state.jump(e.new), "value")
        state.param.watch(self._sync, ["t", "t_max", "playing", "speed", "seed"])
        self._timer = None

    def _do(self, action) -> None:
        with self.batch():
            action()

    def _on_seed(self, event) -> None:
        if event.new is not None and event.new != self.state.seed:
            self.state.seed = int(event.new)

    def _sync(self, *events) -> None:
        s = self.state
        self.timeline.param.update(end=s.t_max, value=s.t)
        self.speed.value = s.speed
        if self.seed.value != s.seed:
            self.seed.value = s.seed
        self.play.name = "Pause" if s.playing else "Play"
        self.play.button_type = "warning" if s.playing else "success"
        if any(e.name in ("playing", "speed") for e in events):
            self._restart_timer()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.state.playing:
            period = max(10, int(1000 / self.state.speed))
            self._timer = pn.state.add_periodic_callback(lambda: self._do(self.state.step), period=period)

    def panel(self) -> pn.viewable.Viewable:
        buttons = pn.Row(self.back, self.step, self.play, self.reset, margin=0,
                         styles={"flex-wrap": "wrap"})
        return pn.FlexBox(buttons, self.timeline, self.speed, self.seed, align_items="end",
                          sizing_mode="stretch_width", css_classes=["lab-transport"])
