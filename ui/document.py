"""How a page's Bokeh document is made the same way in every process: the build (CPython,
``ui.app.prerender``), the memory snapshot and the browser's worker (Pyodide, ``ui.worker``).

The ids count from one base (``fresh_ids``), so the page built ahead of time and the live page
have the same ids and the worker can adopt the document on screen; ``ids_digest`` is what the
build compares them by. ``embed_json`` and ``document_json`` are a document as BokehJS embeds
it; ``replace_html_sanitizer`` is the one change Panel needs to run in Pyodide.
"""

from __future__ import annotations

import sys

IN_BROWSER = sys.platform == "emscripten"
TARGET = "lab-app"  # the element the shell reserves for the page built ahead of time
LIVE_TARGET = "lab-app-live"  # where the live page renders, out of sight, before it takes over
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


def build_ahead(page_class, query: str = ""):
    """(page, document): the page with its default settings (or those of ``query``, which it
    must take whole) as the browser first shows it, its ids counted from ``ID_BASE`` (settings
    controls shown waiting for Python, t = 0)."""
    from ui import panel_private  # noqa: PLC0415
    from ui.urlstate import apply_query  # noqa: PLC0415

    fresh_ids()
    page = page_class()
    page.controls_ready = False
    notices = apply_query(page, query) if query else []
    if notices:
        raise ValueError(f"{page_class.slug}: the link {query!r} is not one the page takes: {' '.join(notices)}")
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


def replace_html_sanitizer() -> None:
    """Panel sanitises ReactiveHTML strings (FlexBox's CSS values, for one) with nh3, a compiled
    package with no Pyodide build we can ship. In the browser, escape markup instead: the strings
    it sees are our own CSS keywords, and anything holding markup is shown as text, never run.
    """
    import html  # noqa: PLC0415

    from ui.panel_private import replace_sanitizer  # noqa: PLC0415

    replace_sanitizer(lambda s: html.escape(s, quote=False) if "<" in s else s)
