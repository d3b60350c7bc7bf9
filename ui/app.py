"""Running a page: built ahead of time (``prerender``), live in Pyodide (``launch``), or under
``panel serve``.

The browser sees a page twice. build.py renders each page's default run in CPython into a
Bokeh document that ships inside the HTML: the shell shows it at first paint and its player
steps through it with no Python. Pyodide starts in a worker (assets/py-worker.js); there
``launch`` builds the same page live (with the link's settings) and links it to the document
on screen by messages (``ui.worker``; both make their documents with ``ui.document``): the same
page, model for model, is adopted; another is rendered out of sight and swapped in by the player in one frame, at the same t, theme and
view. From then on Python runs in the worker when a setting changes; stepping stays on the
page's own thread, which Python never blocks.
"""

from __future__ import annotations

import asyncio

from ui.ahead import ahead_runs, choices
from ui.contract import contract
from ui.document import IN_BROWSER, build_ahead, embed_json, ids_digest
from ui.urlstate import apply_query, link_contract

READY: asyncio.Future | None = None  # resolved once the page is live in the browser


def prerender(page_class) -> dict:
    """The page with its default settings, as build.py embeds it: the document (settings
    controls shown waiting for Python), the settings' query, the CSV and what t can reach; the
    runs of the links it offers itself, as patches of that document (``ui.ahead``), and which
    run each choice of a setting answered ahead of time is.

    The ids and Panel's names count from the same base in any process
    (``ui.document.fresh_ids``), and no model the page shows is made on import, so the same page
    is the same document whatever else the process made: the memory snapshot makes every page in one process
    (``ui.worker.premake``) and keeps those with this one's ids (``ids_digest``)."""
    page, pydoc = build_ahead(page_class)
    ahead = {"doc": embed_json(pydoc), "ids": ids_digest(pydoc), "link": link_contract(page),
             "contract": contract(), "csv": page.csv(), "t_max": page.run.t_max}
    runs = ahead_runs(page_class, page, pydoc)
    listed = [{k: v for k, v in run.items() if k != "values"} for run in runs]  # (values: for choices)
    return {**ahead, "runs": listed, "choices": choices(page, runs)}


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
