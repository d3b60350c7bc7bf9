"""The transport bar every page shares: Step, Back, Play/Pause, Reset, speed, seed, timeline."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import panel as pn

from ui.state import PageState
from ui.theme import style_widget

IN_BROWSER = sys.platform == "emscripten"


async def _next_frame() -> None:
    """Resolve after the browser's next animation frame (the step before it gets painted)."""
    import js  # noqa: PLC0415 — Pyodide only
    from pyodide.ffi import create_once_callable  # noqa: PLC0415

    done = asyncio.get_event_loop().create_future()
    js.requestAnimationFrame(create_once_callable(lambda *_: done.done() or done.set_result(None)))
    await done


class Transport:
    """Widgets bound both ways to a PageState, and the Play timer."""

    def __init__(self, state: PageState, batch=contextlib.nullcontext):
        self.state = state
        self.batch = batch  # a context manager: the changes of one action reach the page together
        self.back = pn.widgets.Button(label="Back", color="default", width=80)
        self.step = pn.widgets.Button(label="Step", color="primary", width=80)
        self.play = pn.widgets.Button(label="Play", color="success", width=80)
        self.reset = pn.widgets.Button(label="Reset", color="default", width=80)
        self.speed = pn.widgets.FloatSlider(label="Speed (steps/s)", start=0.5, end=60.0, step=0.5,
                                            value=state.speed, width=170)
        self.seed = pn.widgets.IntInput(label="Seed", start=0, end=2**31 - 1, value=state.seed, width=110)
        self.timeline = pn.widgets.IntSlider(label="Token t", start=0, end=state.t_max,
                                             value=state.t, sizing_mode="stretch_width", min_width=200)
        for widget in self.widgets:
            style_widget(widget)
        self.back.on_click(lambda _: self._do(state.back))
        self.step.on_click(lambda _: self._do(state.step))
        self.play.on_click(lambda _: self._do(state.toggle_play))
        self.reset.on_click(lambda _: self._do(state.reset))
        self.speed.param.watch(lambda e: setattr(state, "speed", e.new), "value")
        self.seed.param.watch(self._on_seed, "value")
        self.timeline.param.watch(lambda e: state.jump(e.new), "value")
        state.param.watch(self._sync, ["t", "t_max", "playing", "speed", "seed"])
        self._timer = None

    @property
    def widgets(self) -> list:
        return [self.back, self.step, self.play, self.reset, self.speed, self.seed, self.timeline]

    def _do(self, action) -> None:
        with self.batch():
            action()

    def _on_seed(self, event) -> None:
        if event.new is not None and event.new != self.state.seed:
            self.state.seed = int(event.new)

    def _sync(self, *events) -> None:
        s = self.state
        if (self.timeline.end, self.timeline.value) != (s.t_max, s.t):
            self.timeline.param.update(end=s.t_max, value=s.t)
        if self.speed.value != s.speed:
            self.speed.value = s.speed
        if self.seed.value != s.seed:
            self.seed.value = s.seed
        label = "Pause" if s.playing else "Play"
        if self.play.label != label:
            self.play.param.update(label=label, color="warning" if s.playing else "success")
        if any(e.name in ("playing", "speed") for e in events):
            self._restart_timer()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            if IN_BROWSER:
                self._timer.cancel()
            else:
                self._timer.stop()
            self._timer = None
        if not self.state.playing:
            return
        if IN_BROWSER:
            self._timer = asyncio.ensure_future(self._play_in_browser())
        else:
            period = max(10, int(1000 / self.state.speed))
            self._timer = pn.state.add_periodic_callback(lambda: self._do(self.state.step), period=period)

    async def _play_in_browser(self) -> None:
        """Step at the chosen speed, but never faster than the browser paints.

        Panel's periodic callback starts the next step at once when a step overruns its period,
        so a play at full speed would run to the end in one block with nothing painted. Here
        every step waits for the next animation frame, so each one is seen.
        """
        while self.state.playing:
            started = time.perf_counter()
            self._do(self.state.step)
            await asyncio.sleep(max(1 / self.state.speed - (time.perf_counter() - started), 0))
            await _next_frame()

    def panel(self) -> pn.viewable.Viewable:
        buttons = pn.Row(self.back, self.step, self.play, self.reset, margin=0,
                         styles={"flex-wrap": "wrap"})
        return pn.FlexBox(buttons, self.timeline, self.speed, self.seed, align_items="end",
                          sizing_mode="stretch_width", css_classes=["lab-transport"])
