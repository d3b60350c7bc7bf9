"""Running a page: built ahead of time (``prerender``), live in Pyodide (``launch``), or under
``panel serve``.

The browser sees a page twice. build.py renders each page's default run in CPython into a
Bokeh document that ships inside the HTML: the shell shows it at first paint and its player
(assets/js/player.js) steps through it with no Python. Once Pyodide has started, ``launch`` builds
the same page live (with the link's settings), renders it out of sight, links it to Python and
asks the player to take over: the player carries t, the theme and the presenter view across and
swaps the two in one frame. From then on Python runs when a setting changes; stepping stays in
the browser. The shell talks to the page through ``window.lab.py`` (CSV, the settings' query).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys

from ui.contract import contract
from ui.urlstate import apply_query, link_contract, to_query

IN_BROWSER = sys.platform == "emscripten"
TARGET = "lab-app"  # the element the shell reserves for the page built ahead of time
LIVE_TARGET = "lab-app-live"  # where the live page renders, out of sight, before it takes over
READY: asyncio.Future | None = None  # resolved once the page is live in the browser
# Bokeh numbers its models p1000, p1001, … in the order they are made. The page built ahead of
# time and the live page start from the same number, so the same page built the same way has
# the same ids in both places, and Python can take over the document on screen (``_adopt``)
# instead of rendering the page again. High enough that no model made earlier (while importing)
# can share an id with one of the page's.
ID_BASE = 10**6


def fresh_ids() -> None:
    """The next Bokeh model made is p<ID_BASE + 1>."""
    import bokeh.util.serialization as serialization  # noqa: PLC0415

    serialization._simple_id = ID_BASE


def document_json(layout, target: str) -> str:
    """``layout`` as the JSON that ``Bokeh.embed.embed_item`` renders into element ``target``."""
    from bokeh.document import Document  # noqa: PLC0415
    from bokeh.embed.util import standalone_docs_json_and_render_items  # noqa: PLC0415
    from panel import __version__  # noqa: PLC0415

    doc = Document()
    doc.hold()
    layout.server_doc(doc=doc)
    root = doc.roots[0]
    docs_json, _ = standalone_docs_json_and_render_items([root], suppress_callback_warning=True)
    text = json.dumps({"target_id": target, "root_id": root.id,
                       "doc": list(docs_json.values())[0], "version": __version__})
    if not IN_BROWSER:  # built ahead of time: Panel's stylesheets from the site's own copy
        from panel.io.resources import CDN_DIST, JS_VERSION  # noqa: PLC0415

        text = text.replace(CDN_DIST, f"static/panel/{JS_VERSION}/dist/")
    return text


def prerender(page_class) -> dict:
    """The page with its default settings, as build.py embeds it: the document (settings
    controls shown waiting for Python), the settings' query, the CSV and what t can reach.

    Run it in a fresh process, as the browser builds the live page: Panel keeps some models
    (its stylesheets) from one page to the next within a process, and a second page built in
    the same process would not have the ids the live one will have (``ID_BASE``)."""
    fresh_ids()
    page = page_class()
    page.controls_ready = False
    page.show(0)
    # "contract" is its own key of lab-config once the build passes it; until then it rides in
    # "link", which the build passes whole (assets/js/config.js reads either)
    return {"doc": document_json(page.layout, TARGET), "link": {**link_contract(page), "contract": contract()},
            "contract": contract(), "csv": page.csv(), "t_max": page.run.t_max}


def launch(page_class) -> None:
    """Run a page: in Pyodide take over from the page built ahead of time; under
    ``panel serve`` make it servable (the player then steps it from the same frames)."""
    global READY
    if IN_BROWSER:
        READY = asyncio.ensure_future(_launch_in_browser(page_class))
        return
    import panel as pn  # noqa: PLC0415

    page = page_class()
    query = pn.state.location.search if pn.state.location else ""
    page.notice = " ".join(apply_query(page, query or ""))
    page.layout.servable(title=page.title)


def _replace_html_sanitizer() -> None:
    """Panel sanitises ReactiveHTML strings (FlexBox's CSS values, for one) with nh3, a compiled
    package with no Pyodide build we can ship. In the browser, escape markup instead: the strings
    it sees are our own CSS keywords, and anything holding markup is shown as text, never run.
    """
    import html  # noqa: PLC0415

    from panel.util import HTML_SANITIZER  # noqa: PLC0415

    HTML_SANITIZER._sanitize = lambda s: html.escape(s, quote=False) if "<" in s else s


async def _render(layout, target: str, adopt=None):
    """Render ``layout`` into element ``target`` and link it to Python, like Panel's
    ``panel.io.pyodide.write``, with three differences:
    - ``adopt``: a BokehJS document already on screen (the page built ahead of time) that is
      this layout's document, model for model: it is linked instead of rendering a new one (if
      its models' ids differ, nothing is linked and None is returned);
    - the changes made inside ``batch()`` go to BokehJS as one patch (Panel sends each model
      change as its own);
    - changes the player makes in the browser (frame t of a run, the timeline) are not sent
      back to Python: the player's guard (assets/js/player.js) filters them before Panel's link.
    Returns (batch, the BokehJS document, whether it was adopted), or None (see ``adopt``).
    """
    import js  # noqa: PLC0415
    import panel.io.pyodide as pnpy  # noqa: PLC0415
    import pyodide.ffi  # noqa: PLC0415

    pydoc, model_json = pnpy._model_json(layout, target)
    ids = {m.id for m in pydoc.models} | {m.id for m in pydoc.config.references()}
    adopted = adopt is not None and ids == set(js.window.lab.player.ids(adopt).to_py())
    if adopt is not None and not adopted:
        return None
    if adopted:
        jsdoc = adopt
    else:
        views = await js.window.Bokeh.embed.embed_item(js.JSON.parse(model_json))
        jsdoc = list(views.roots)[0].model.document
    js.window.lab.player.guard(jsdoc)
    pnpy._link_docs(pydoc, jsdoc)
    pydoc.unhold()
    panel_sync = [cb for cb in pydoc.callbacks._change_callbacks
                  if getattr(cb, "__name__", "") == "pysync"]
    if len(panel_sync) != 1:  # Panel changed: keep its own sync, unbatched
        return contextlib.nullcontext, jsdoc, adopted
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

    return batch, jsdoc, adopted


async def _launch_in_browser(page_class):
    import js  # noqa: PLC0415 — only exists in Pyodide
    import panel as pn  # noqa: PLC0415
    from pyodide.ffi import create_proxy, to_js  # noqa: PLC0415

    _replace_html_sanitizer()
    shell = js.window.lab.shell
    current: list = []

    def report(error: Exception) -> None:
        # A failure inside a callback must not leave the page silently stuck: say so on the
        # page; the settings and the picture the user had stay as they were.
        js.console.error(f"{type(error).__name__}: {error}")
        if current:
            current[0].notice = f"That change could not be applied ({type(error).__name__}: {error})."

    pn.config.exception_handler = report

    def make_page(id_base: int):
        import bokeh.util.serialization as serialization  # noqa: PLC0415

        serialization._simple_id = id_base
        page = page_class()
        notices = apply_query(page, str(js.window.location.search))
        page.after_apply = lambda: js.window.lab.player.refresh()
        page.before_apply = lambda: js.window.lab.player.prepare()
        page.seek_player = lambda t: js.window.lab.player.seek(int(t))  # "Show it on the plots"
        return page, notices

    # The page on screen was built ahead of time from these very settings: built the same
    # way, from the same first id, the live page is the same document, and takes it over.
    on_screen = shell.prerendered()
    page, notices = make_page(ID_BASE if on_screen else 3 * ID_BASE)
    adopt = on_screen if on_screen and to_query(page) == str(shell.defaultSettings()) else None
    if adopt is not None:
        page.controls_ready = False  # as built ahead of time; ready once linked
        page.show(int(js.window.lab.player.t))
    rendered = await _render(page.layout, LIVE_TARGET, adopt)
    if rendered is None:  # built otherwise after all: render it anew, with ids that cannot meet
        js.console.warn("The live page differs from the one built ahead of time: rendered anew.")
        page, notices = make_page(3 * ID_BASE)  # the page on screen's
        rendered = await _render(page.layout, LIVE_TARGET)
    current[:] = [page]
    page.batch, jsdoc, adopted = rendered
    if adopted:
        with page.batch():
            page.ready_controls()
    page.param.watch(lambda e: shell.notice(e.new), "notice")
    page.param.watch(lambda *_: shell.setSettings(to_query(page)), page.settings())
    def apply(query) -> str:  # a page's own link to its settings (the shell's lab-settings-link)
        with page.batch():
            notes = apply_query(page, str(query))
        js.window.lab.player.refresh()
        return " ".join(notes)

    hooks = {"csv": create_proxy(page.csv), "query": create_proxy(lambda: to_query(page)),
             "apply": create_proxy(apply)}
    js.window.lab.py = to_js(hooks, dict_converter=js.Object.fromEntries)
    shell.setSettings(to_query(page))
    shell.takeover(jsdoc, adopted)
    shell.notice(" ".join([*notices, page.notice]).strip())
    return page
