"""A Page (state + layout + figures) and ``launch``, which runs it in Pyodide or under
``panel serve``.

In the browser the page runs on the main thread: the HTML shell (built by build.py) loads
Pyodide and the wheels, then runs the entry script, which calls ``launch``. The shell talks to
the page through ``window.labPy`` (keys, CSV, theme, presenter view) and shows ``state.notice``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys

import panel as pn

from ui.controls import Deferred, Transport
from ui.state import PageState
from ui.theme import scale_widgets, style_figure
from ui.urlstate import apply_query, to_query, url_params

IN_BROWSER = sys.platform == "emscripten"
TARGET = "lab-app"  # the id of the element the shell reserves for the simulator

URL_PERIOD_MS = 250  # while playing, the link is rewritten at most this often
READY: asyncio.Future | None = None  # resolved once the page is live in the browser


class Page:
    """Base class of the lesson pages. Subclasses set ``title`` and build ``main``."""

    title = "Linear Attention Lab"
    slug = "page"

    def __init__(self, state: PageState):
        self.state = state
        self.theme = "light"
        self.present = False
        self.embed = False
        self.figures: list = []
        # Hidden in the presenter view. Add layouts (pn.Column), not bare Bokeh panes: a Bokeh
        # pane hidden and shown again does not come back.
        self.secondary: list[pn.viewable.Viewable] = []
        self.batch = contextlib.nullcontext  # replaced in the browser: one patch per action
        self.transport = Transport(state, batch=lambda: self.batch())
        self.notice = pn.pane.Alert("", alert_type="warning", visible=False,
                                    sizing_mode="stretch_width", css_classes=["lab-notice"])
        state.param.watch(self._show_notice, "notice")
        self._layout: pn.viewable.Viewable | None = None

    # Subclasses -----------------------------------------------------------------------------
    def main(self) -> pn.viewable.Viewable:
        raise NotImplementedError

    def add_figure(self, fig):
        self.figures.append(fig)
        style_figure(fig, self.theme, self.present)
        return fig

    # Shared -----------------------------------------------------------------------------------
    def _show_notice(self, event) -> None:
        self.notice.object = event.new
        self.notice.visible = bool(event.new)

    @property
    def layout(self) -> pn.viewable.Viewable:
        if self._layout is None:
            self._layout = pn.Column(self.notice, self.transport.panel(), self.main(),
                                     sizing_mode="stretch_width", css_classes=["lab-page"])
        return self._layout

    def set_view(self, *, theme: str | None = None, present: bool | None = None) -> None:
        """Restyle every figure for a theme and/or the presenter view."""
        if theme is not None:
            self.theme = theme
        if present is not None:
            self.present = present
            for item in self.secondary:
                item.visible = not present
        for fig in self.figures:
            style_figure(fig, self.theme, self.present)
        scale_widgets(self.transport.widgets, self.present)

    def key(self, action: str) -> None:
        """A keyboard action from the shell: step, back, play, reset."""
        actions = {"step": self.state.step, "back": self.state.back,
                   "play": self.state.toggle_play, "reset": self.state.reset}
        if action in actions:
            with self.batch():
                actions[action]()

    def query(self) -> str:
        return to_query(self.state, {"embed": self.embed, "present": self.present})

    def csv(self) -> str:
        return self.state.csv()


def _add_notices(state: PageState, notices: list[str]) -> None:
    """Show the link's notices before whatever the state already warns about."""
    if notices:
        state.notice = " ".join([*notices, state.notice]).strip()


def launch(make_page) -> None:
    """Run a page: in Pyodide render it into the shell; under ``panel serve`` make it servable."""
    global READY
    if IN_BROWSER:
        READY = asyncio.ensure_future(_launch_in_browser(make_page))
    else:
        page = make_page()
        query = pn.state.location.search if pn.state.location else ""
        notices, flags = apply_query(page.state, query or "")
        _add_notices(page.state, notices)
        layout = page.layout  # built first, so the presenter view can hide its secondary panels
        page.set_view(present=flags["present"])
        layout.servable(title=page.title)


def _replace_html_sanitizer() -> None:
    """Panel sanitises ReactiveHTML strings (FlexBox's CSS values, for one) with nh3, a compiled
    package with no Pyodide build we can ship. In the browser, escape markup instead: the strings
    it sees are our own CSS keywords, and anything holding markup is shown as text, never run.
    """
    import html  # noqa: PLC0415

    from panel.util import HTML_SANITIZER  # noqa: PLC0415

    HTML_SANITIZER._sanitize = lambda text: html.escape(text, quote=False) if "<" in text else text


async def _render(layout):
    """Render ``layout`` into the shell, linked to BokehJS like ``panel.io.pyodide.write``, but
    with one difference: Panel sends each Python-side model change to BokehJS as its own patch
    (a dozen per step on a busy page); here the changes made inside ``batch()`` go as one.
    Returns ``batch``.
    """
    import js  # noqa: PLC0415
    import panel.io.pyodide as pnpy  # noqa: PLC0415
    import pyodide.ffi  # noqa: PLC0415

    pydoc, model_json = pnpy._model_json(layout, TARGET)
    views = await js.window.Bokeh.embed.embed_item(js.JSON.parse(model_json))
    jsdoc = list(views.roots)[0].model.document
    pnpy._link_docs(pydoc, jsdoc)
    pydoc.unhold()
    panel_sync = [cb for cb in pydoc.callbacks._change_callbacks
                  if getattr(cb, "__name__", "") == "pysync"]
    if len(panel_sync) != 1:  # Panel changed: keep its own sync, unbatched
        return contextlib.nullcontext
    pydoc.callbacks.remove_on_change(panel_sync[0])
    queue: list | None = None

    def send(events) -> None:
        json_patch, buffer_map = pnpy._process_document_events(pydoc, events)
        json_patch = pyodide.ffi.to_js(json_patch, dict_converter=pnpy._dict_converter)
        buffers = js.Map.new(js.Object.entries(pyodide.ffi.to_js(buffer_map)))
        pnpy._patching = True
        try:
            jsdoc.apply_json_patch(json_patch, buffers)
        finally:
            pnpy._patching = False

    def sync(event) -> None:
        if getattr(event, "setter", None) == "js":
            return
        if queue is None:
            send([event])
        else:
            queue.append(event)

    pydoc.on_change(sync)

    @contextlib.contextmanager
    def batch():
        nonlocal queue
        if queue is not None:  # already batching: the outer batch sends
            yield
            return
        queue = []
        try:
            yield
        finally:
            events, queue = queue, None
            if events:
                send(events)

    return batch


async def _launch_in_browser(make_page) -> Page:
    import js  # noqa: PLC0415 — only exists in Pyodide
    from pyodide.ffi import create_proxy, to_js  # noqa: PLC0415

    _replace_html_sanitizer()
    page = make_page()

    def report(error: Exception) -> None:
        # A failure inside a callback must not leave the page silently stuck: say so on the
        # page; the settings and the picture the user had stay as they were.
        js.console.error(f"{type(error).__name__}: {error}")
        page.state.notice = f"That change could not be applied ({type(error).__name__}: {error})."

    pn.config.exception_handler = report
    notices, flags = apply_query(page.state, str(js.window.location.search))
    page.embed = flags["embed"]
    layout = page.layout  # built first, so the presenter view can hide its secondary panels
    page.set_view(theme=str(js.window.labShell.theme()), present=flags["present"])
    _add_notices(page.state, notices)

    page.batch = await _render(layout)

    # The link follows every change; while playing, at most every URL_PERIOD_MS (a history
    # update costs about 2 ms, on a step budget of 33), and exactly when play stops.
    url_later = Deferred(lambda: js.window.labShell.setQuery(page.query()), URL_PERIOD_MS)
    flush_url = url_later.flush

    def replace_url(*_events) -> None:
        if page.state.playing:
            url_later.request()
        else:
            flush_url()

    page.state.param.watch(replace_url, [*url_params(page.state), "playing"])
    hooks = {
        "key": create_proxy(page.key),
        "csv": create_proxy(page.csv),
        "theme": create_proxy(lambda name: page.set_view(theme=str(name))),
        "present": create_proxy(lambda on: (page.set_view(present=bool(on)), flush_url())),
        "query": create_proxy(page.query),
        "t": create_proxy(lambda: page.state.t),
        "figures": create_proxy(lambda: to_js([fig.id for fig in page.figures])),
    }
    js.window.labPy = to_js(hooks, dict_converter=js.Object.fromEntries)
    flush_url()
    return page
