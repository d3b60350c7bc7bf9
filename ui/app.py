"""A Page (state + layout + figures) and ``launch``, which runs it in Pyodide or under
``panel serve``.

In the browser the page runs on the main thread: the HTML shell (built by build.py) loads
Pyodide and the wheels, then runs the entry script, which calls ``launch``. The shell talks to
the page through ``window.labPy`` (keys, CSV, theme, presenter view) and shows ``state.notice``.
"""

from __future__ import annotations

import asyncio
import sys

import panel as pn

from ui.controls import Transport
from ui.state import PageState
from ui.theme import style_figure
from ui.urlstate import apply_query, to_query, url_params

IN_BROWSER = sys.platform == "emscripten"
TARGET = "lab-app"  # the id of the element the shell reserves for the simulator

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
        self.secondary: list[pn.viewable.Viewable] = []  # hidden in the presenter view
        self.transport = Transport(state)
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

    def key(self, action: str) -> None:
        """A keyboard action from the shell: step, back, play, reset."""
        actions = {"step": self.state.step, "back": self.state.back,
                   "play": self.state.toggle_play, "reset": self.state.reset}
        if action in actions:
            actions[action]()

    def query(self) -> str:
        return to_query(self.state, {"embed": self.embed, "present": self.present})

    def csv(self) -> str:
        return self.state.csv()


def launch(make_page) -> None:
    """Run a page: in Pyodide render it into the shell; under ``panel serve`` make it servable."""
    global READY
    if IN_BROWSER:
        READY = asyncio.ensure_future(_launch_in_browser(make_page))
    else:
        page = make_page()
        query = pn.state.location.search if pn.state.location else ""
        notices, flags = apply_query(page.state, query or "")
        page.state.notice = " ".join(notices)
        page.set_view(present=flags["present"])
        page.layout.servable(title=page.title)


def _replace_html_sanitizer() -> None:
    """Panel sanitises ReactiveHTML strings (FlexBox's CSS values, for one) with nh3, a compiled
    package with no Pyodide build we can ship. In the browser, escape markup instead: the strings
    it sees are our own CSS keywords, and anything holding markup is shown as text, never run.
    """
    import html  # noqa: PLC0415

    from panel.util import HTML_SANITIZER  # noqa: PLC0415

    HTML_SANITIZER._sanitize = lambda text: html.escape(text, quote=False) if "<" in text else text


async def _launch_in_browser(make_page) -> Page:
    import js  # noqa: PLC0415 — only exists in Pyodide
    from panel.io.pyodide import write  # noqa: PLC0415
    from pyodide.ffi import create_proxy, to_js  # noqa: PLC0415

    _replace_html_sanitizer()
    page = make_page()
    notices, flags = apply_query(page.state, str(js.window.location.search))
    page.embed = flags["embed"]
    page.set_view(theme=str(js.window.labShell.theme()), present=flags["present"])
    page.state.notice = " ".join(notices)

    def replace_url(*_events) -> None:
        js.window.labShell.setQuery(page.query())

    page.state.param.watch(replace_url, url_params(page.state))
    hooks = {
        "key": create_proxy(page.key),
        "csv": create_proxy(page.csv),
        "theme": create_proxy(lambda name: page.set_view(theme=str(name))),
        "present": create_proxy(lambda on: (page.set_view(present=bool(on)), replace_url())),
        "query": create_proxy(page.query),
    }
    js.window.labPy = to_js(hooks, dict_converter=js.Object.fromEntries)
    await write(TARGET, page.layout)
    replace_url()
    return page
