"""Running a page: built ahead of time (``prerender``), live in Pyodide (``launch``), or under
``panel serve``.

The browser sees a page twice. build.py renders each page's default run in CPython into a
Bokeh document that ships inside the HTML: the shell shows it at first paint and its player
steps through it with no Python. Pyodide starts in a worker (assets/py-worker.js); there
``launch`` builds the same page live (with the link's settings) and links it to the document
on screen by messages (``ui.worker``): the same page, model for model, is adopted; another is
rendered out of sight and swapped in by the player in one frame, at the same t, theme and
view. From then on Python runs in the worker when a setting changes; stepping stays on the
page's own thread, which Python never blocks.
"""

from __future__ import annotations

import asyncio
import sys

from ui.contract import contract
from ui.urlstate import apply_query, link_contract

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


def fresh_ids(first: int = ID_BASE) -> None:
    """The next Bokeh model made is p<first + 1>."""
    from ui.panel_private import set_next_id  # noqa: PLC0415

    set_next_id(first)


def document_json(layout, target: str) -> str:
    """``layout`` as the JSON that ``Bokeh.embed.embed_item`` renders into element ``target``."""
    from ui import panel_private  # noqa: PLC0415

    return embed_json(panel_private.make_document(layout), target)


def build_ahead(page_class):
    """(page, document): the page with its default settings as the browser first shows it,
    its ids counted from ``ID_BASE`` (settings controls shown waiting for Python, t = 0)."""
    from ui import panel_private  # noqa: PLC0415

    fresh_ids()
    page = page_class()
    page.controls_ready = False
    page.show(0)
    return page, panel_private.make_document(page.layout)


def embed_json(pydoc, target: str = TARGET) -> str:
    """A document built ahead of time as the page embeds it: Panel's stylesheets from the
    site's own copy (in the worker, PANEL_CDN_ROOT already points there)."""
    from ui import panel_private  # noqa: PLC0415

    text = panel_private.document_json(pydoc, target)
    if not IN_BROWSER:
        from panel.io.resources import CDN_DIST, JS_VERSION  # noqa: PLC0415

        text = text.replace(CDN_DIST, f"static/panel/{JS_VERSION}/dist/")
    return text


def ids_digest(pydoc) -> str:
    """What the build compares a page's document by (the one embedded, made in CPython, and
    the one the memory snapshot holds, made in Pyodide): its models' ids, which is what the
    worker's adoption asks of them (``ui.worker.launch``). The rest is the same code in both;
    only the last bits of some floats differ (numpy's wasm build against the native one)."""
    import hashlib  # noqa: PLC0415

    from ui import panel_private  # noqa: PLC0415

    return hashlib.sha256(" ".join(sorted(panel_private.ids_of(pydoc))).encode()).hexdigest()


def prerender(page_class) -> dict:
    """The page with its default settings, as build.py embeds it: the document (settings
    controls shown waiting for Python), the settings' query, the CSV and what t can reach.

    The ids and Panel's names count from the same base in any process (``fresh_ids``), and no
    model the page shows is made on import, so the same page is the same document whatever
    else the process made: the memory snapshot makes every page in one process
    (``ui.worker.premake``) and keeps those with this one's ids (``ids_digest``)."""
    page, pydoc = build_ahead(page_class)
    return {"doc": embed_json(pydoc), "ids": ids_digest(pydoc), "link": link_contract(page),
            "contract": contract(), "csv": page.csv(), "t_max": page.run.t_max}


def launch(page_class) -> None:
    """Run a page: in Pyodide take over from the page built ahead of time; under
    ``panel serve`` make it servable (the player then steps it from the same frames)."""
    global READY
    if IN_BROWSER:
        READY = asyncio.ensure_future(_launch_in_worker(page_class))
        return
    import panel as pn  # noqa: PLC0415

    page = page_class()
    query = pn.state.location.search if pn.state.location else ""
    page.notice = " ".join(apply_query(page, query or ""))
    page.layout.servable(title=page.title)


async def _launch_in_worker(page_class) -> None:
    import lab_host  # noqa: PLC0415 — the worker's JavaScript (assets/py-worker.js)

    from ui import worker  # noqa: PLC0415

    await worker.launch(page_class, lab_host)


def replace_html_sanitizer() -> None:
    """Panel sanitises ReactiveHTML strings (FlexBox's CSS values, for one) with nh3, a compiled
    package with no Pyodide build we can ship. In the browser, escape markup instead: the strings
    it sees are our own CSS keywords, and anything holding markup is shown as text, never run.
    """
    import html  # noqa: PLC0415

    from ui.panel_private import replace_sanitizer  # noqa: PLC0415

    replace_sanitizer(lambda s: html.escape(s, quote=False) if "<" in s else s)
