"""The transport bar every page shares: Step, Back, Play/Pause, Reset, speed, seed, timeline."""

from __future__ import annotations

import contextlib
import sys

import panel as pn

from ui.state import PageState
from ui.theme import style_widget

IN_BROWSER = sys.platform == "emscripten"
TIMELINE_PERIOD_MS = 100  # while playing, the timeline moves at most this often


class Deferred:
    """In the browser: run ``fn`` once, ``ms`` milliseconds after the first ``request`` since it
    last ran. Used to follow a playing page at a few updates a second with what nobody reads at
    30 frames a second (the link, the timeline's number); ``flush`` runs it now."""

    def __init__(self, fn, ms: float):
        import js  # noqa: PLC0415 — Pyodide only
        from pyodide.ffi import create_proxy  # noqa: PLC0415

        self.js, self.fn, self.ms = js, fn, ms
        self.handle = None
        self._run = create_proxy(self.flush)

    def request(self) -> None:
        if self.handle is None:
            self.handle = self.js.setTimeout(self._run, self.ms)

    def flush(self, *_args) -> None:
        if self.handle is not None:
            self.js.clearTimeout(self.handle)
            self.handle = None
        self.fn()


class _FramePlayer:
    """Play in the browser: one step per painted frame, at most ``speed`` steps a second.

    A step runs in its own task just after a frame has been painted: the animation-frame
    callback that follows BokehJS's repaint (queued after it, so it runs after it) only posts
    the next step as a message to itself. So the browser lays out and paints each step before
    the next one starts, and no frame is skipped waiting: when a step and its repaint take
    longer than a frame, the next frame simply comes late. (Panel's periodic callback, by
    contrast, runs overrunning steps back to back with nothing painted, and an asyncio loop
    that sleeps and then awaits a frame loses a whole frame per step.)
    """

    def __init__(self, state: PageState, do):
        import js  # noqa: PLC0415 — Pyodide only
        from pyodide.ffi import create_proxy  # noqa: PLC0415

        self.js, self.state, self.do = js, state, do
        self.running = False
        self.pending = False  # a callback of the loop is queued (never more than one)
        self.last = -1e9
        self._tick = create_proxy(self.tick)
        # A message to ourselves runs as soon as the frame is painted (a zero timeout may wait
        # several milliseconds more for the timer queue).
        self._channel = js.MessageChannel.new()
        self._channel.port1.onmessage = self._tick
        self._after_frame = create_proxy(lambda *_: self._channel.port2.postMessage(None))

    def start(self) -> None:
        self.running = True
        self._queue(0)

    def stop(self) -> None:
        self.running = False  # the callback already queued finds this and ends the loop

    def _queue(self, wait_ms: float) -> None:
        if not self.pending:
            self.pending = True
            self.js.setTimeout(self._tick, wait_ms)

    def tick(self, *_args) -> None:
        self.pending = False
        if not (self.running and self.state.playing):
            self.running = False
            return
        wait = self.last + 1000.0 / self.state.speed - self.js.performance.now()
        if wait > 1.0:  # slower than the frame rate: come back when the step is due
            self._queue(wait)
            return
        self.last = self.js.performance.now()
        try:
            self.do(self.state.step)
        except Exception as error:  # noqa: BLE001 — say so on the page, keep what it shows
            self.running = False
            self.state.notice = f"Play stopped: {type(error).__name__}: {error}"
            self.state.playing = False
            return
        if self.state.playing:
            self.pending = True
            self.js.requestAnimationFrame(self._after_frame)
        else:
            self.running = False


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
        self._timeline_later: Deferred | None = None

    @property
    def widgets(self) -> list:
        return [self.back, self.step, self.play, self.reset, self.speed, self.seed, self.timeline]

    def _do(self, action) -> None:
        with self.batch():
            action()

    def _on_seed(self, event) -> None:
        if event.new is not None and event.new != self.state.seed:
            self.state.seed = int(event.new)

    def _sync_timeline(self) -> None:
        s = self.state
        if (self.timeline.end, self.timeline.value) != (s.t_max, s.t):
            self.timeline.param.update(end=s.t_max, value=s.t)

    def _sync(self, *events) -> None:
        s = self.state
        if IN_BROWSER and s.playing and self.timeline.end == s.t_max:
            # While playing, the timeline follows at TIMELINE_PERIOD_MS: moving the slider and
            # its number costs ~2.5 ms a step (Panel and BokehJS), on a budget of 33.
            if self._timeline_later is None:
                self._timeline_later = Deferred(self._sync_timeline, TIMELINE_PERIOD_MS)
            self._timeline_later.request()
        elif self._timeline_later is not None:
            self._timeline_later.flush()
        else:
            self._sync_timeline()
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
        if IN_BROWSER:
            if self._timer is None:
                self._timer = _FramePlayer(self.state, self._do)
            if self.state.playing:
                self._timer.start()
            else:
                self._timer.stop()
            return
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
