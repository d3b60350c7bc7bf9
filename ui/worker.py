"""A page's Python in the browser's worker (assets/py-worker.js), linked to the page by messages.

The main thread keeps BokehJS, the player and the shell; this side keeps Pyodide, ``sim``,
``ui`` and the page's Python Bokeh document. The two documents are one document: the same
models with the same ids (``ui.document.ID_BASE``), the page built ahead of time adopted where
the live page is that page model for model, rendered anew otherwise. Changes go as Bokeh
JSON patches both ways, as in Panel's worker mode (its ``pyodide_worker`` template and
``panel.io.pyodide._link_docs_worker``; the private parts of Panel used here are fenced in
``ui.panel_private``), with three differences:

- all that one message from the page sets off (a setting's new run: the player lets go of the
  old run, the new frames, the player shows them) goes back as ONE message, so the page swaps
  the new run in within one task, one frame;
- changes the player makes (frame t, the timeline) never come here: the main thread filters
  them before they are sent (assets/js/guard.js);
- the page sends the next change only once this side says ``idle``, and keeps only the latest
  value of each setting meanwhile: a setting changed again supersedes the one in flight.

The messages both ways are stated once, in ``ui.contract.WORKER_MESSAGES``, and written into
the page's config (its ``contract``): the worker's JavaScript and the shell take their names
from there.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ui import panel_private as pnp
from ui.contract import WORKER_MESSAGES
from ui.document import (
    ID_BASE,
    LIVE_TARGET,
    build_ahead,
    fresh_ids,
    ids_digest,
    replace_html_sanitizer,
)
from ui.urlstate import apply_query, to_query

# Python's environment in the worker (frozen into the snapshot: nothing here may depend on
# where the site is hosted; Panel's stylesheets are found relative to the page).
WORKER_ENV = {"PANEL_CDN_ROOT": "static/panel/", "BOKEH_RESOURCES": "cdn", "HOME": "/home/pyodide"}


def worker_contract(snapshot: dict | None = None) -> dict:
    """What the page's config says of the worker (its messages are in ``ui.contract``):
    Python's environment and the memory snapshot to start from (None: the normal way)."""
    return {"env": WORKER_ENV, "snapshot": snapshot}


PAGE = None  # the live page, once made
_link: Any = None
# Pages made in the build's memory snapshot (``premake``), slug -> (page, document): the worker
# of a page whose link asks for its default settings takes its own instead of making it (about
# two seconds of Pyodide's time on two cores: bench/boot.py --breakdown).
PREMADE: dict[str, tuple] = {}


def premake(expected: dict[str, str]) -> dict[str, str]:
    """In the build's snapshot process (sitebuild/snapshot.py): make each page of ``expected``
    (slug -> ``ui.document.ids_digest`` of the document the build embeds, made in CPython) as the
    build made it, and keep it where its models have those ids. Returns slug -> the digest
    found here (the build names any page that differs; its worker makes it).

    Nothing is serialised here: a document's JSON would leave megabytes of text behind in the
    heap, in every visitor's download."""
    import gc  # noqa: PLC0415

    import ui.pages  # noqa: PLC0415

    replace_html_sanitizer()
    pnp.remember_defaults()
    found = {}
    for info in ui.pages.PAGES:
        if info.slug not in expected:
            continue
        page, pydoc = build_ahead(ui.pages.page_class(info))
        found[info.slug] = ids_digest(pydoc)
        if found[info.slug] == expected[info.slug]:
            PREMADE[info.slug] = (page, pydoc)
    gc.collect()
    return found


class Link:
    """The page's document here, and the messages to and from the one on the main thread."""

    def __init__(self, page, pydoc, post) -> None:
        self.page, self.pydoc, self.post = page, pydoc, post
        self.queue: list | None = None  # events batched while handling one message
        self.flags: dict[str, Any] = {}  # prepare / refresh / seek, for the page's player

    # ---- out: this document's changes -------------------------------------------------------
    def patch(self, events: list) -> dict:
        """``events`` as one patch of this document: {"patch", "buffers"}."""
        patch, buffers = pnp.patch_of(self.pydoc, events)
        return {"patch": patch, "buffers": buffers}

    def send(self, events: list) -> None:
        self.post("patch", **self.patch(events), **self.flags)
        self.flags = {}

    def sync(self, event) -> None:
        if getattr(event, "setter", None) == "js":  # the page's own change, come back
            return
        if self.queue is None:
            self.send([event])
        else:
            self.queue.append(event)

    @contextlib.contextmanager
    def batch(self):
        """Everything changed inside goes as one patch, with the player's flags."""
        if self.queue is not None:  # already batching: the outer batch sends
            yield
            return
        self.queue = []
        try:
            yield
        finally:
            events, self.queue = self.queue, None
            if events or self.flags:
                self.send(events)

    @contextlib.contextmanager
    def collect(self):
        """Everything changed inside, kept as one patch (``patch``, ``buffers``) in the list
        yielded, instead of sent: for a message of its own."""
        kept: list = []
        self.queue = []
        try:
            yield kept
        finally:
            events, self.queue = self.queue, None
            if events:
                kept.append(self.patch(events))

    # ---- in: the page's changes -------------------------------------------------------------
    def receive(self, patch) -> None:
        """A patch of the page's (a setting, a click), applied here; what it sets off goes
        back as one message; then ``idle``, so the page may send the next."""
        try:
            with self.batch():
                self.pydoc.apply_json_patch(pnp.convert_patch(patch), setter="js")
        finally:
            self.post("idle")


def _reseed() -> None:
    """The random state was frozen into the snapshot: each visit draws its own (the pages'
    runs use their own seeded generators and do not change)."""
    import random  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    random.seed()
    np.random.seed()


def _post_to(host):
    """post(kind, **fields): a message to the page, JS objects made of Python ones."""
    from pyodide.ffi import to_js  # noqa: PLC0415

    def post(kind: str, **fields) -> None:
        if kind not in WORKER_MESSAGES:
            raise ValueError(f"no worker message {kind!r}: expected one of {', '.join(WORKER_MESSAGES)}")
        message = {"type": kind, **fields}
        host.post(to_js(message, dict_converter=pnp.dict_converter()))

    return post


async def launch(page_class, host) -> None:
    """Make the page from the link, link it to the document on the main thread, go live.

    ``host`` is the worker's JavaScript (assets/py-worker.js): ``host.start`` what the page
    sent last (the link's query, the ids of the document on screen if Python may adopt it, the
    settings it was built with, its t, the description's version), ``host.post(message)``,
    ``host.since()`` (ms since the entry script started).
    """
    global _launched
    _launched = (page_class, host)
    make_live(page_class, host)


_launched: tuple | None = None  # (page_class, host) of launch


def relaunch() -> None:
    """The page on screen changed before it took this one (a choice answered ahead of time,
    assets/js/ahead.js): the live page made again from what the page says now. The page drops
    the "render" of the older description (its version)."""
    make_live(*_launched)


def make_live(page_class, host) -> None:
    """``launch``'s work: the page made (or the one premade in the snapshot taken), linked,
    and "render" posted."""
    global PAGE, _link
    import panel as pn  # noqa: PLC0415

    clock = [time.perf_counter()]
    took: dict[str, float] = {}  # ms per step of going live (bench/boot.py --breakdown)
    took["entry"] = round(float(host.since()), 1)  # from the entry script's start to here: its imports

    def lap(name: str) -> None:
        now = time.perf_counter()
        took[name] = round((now - clock[0]) * 1000, 1)
        clock[0] = now

    replace_html_sanitizer()
    pnp.remember_defaults()  # the page object and its document in about two thirds of the time
    _reseed()
    start = host.start.to_py()
    post = _post_to(host)

    def report(error: Exception) -> None:
        # A failure inside a callback must not leave the page silently stuck: say so on the
        # page; the settings and the picture the user had stay as they were.
        post("log", level="error", text=f"{type(error).__name__}: {error}")
        if PAGE is not None:
            PAGE.notice = f"That change could not be applied ({type(error).__name__}: {error})."

    pn.config.exception_handler = report

    def make_page(first_id: int):
        fresh_ids(first_id)
        page = page_class()
        notices = apply_query(page, start["search"])
        return page, notices

    on_screen = start.get("ids")
    lap("setup")

    premade = PREMADE.pop(page_class.slug, None) if on_screen else None
    PREMADE.clear()  # any other page's (each page's heap holds only its own)
    if premade is not None:  # built ahead of time in this very heap: the link's settings on it,
        page, pydoc = premade  # as a change (what the build's patches of a run are: ui.ahead)
        notices = apply_query(page, start["search"])
    else:
        page, notices = make_page(ID_BASE if on_screen else 3 * ID_BASE)
    lap("page object" if premade is None else "premade")
    # The page on screen is one this page is, model for model, when it sent its ids: the
    # default page, or a run built ahead of time (the build checks each against the page made
    # with its link: ui.ahead); a link with settings of its own sends none
    adopt = bool(on_screen)
    if adopt:
        page.controls_ready = False  # as built ahead of time; ready once linked
        page.show(int(start.get("t", 0)))
    if premade is None:
        pydoc = pnp.make_document(page.layout)
        lap("document")
    if adopt and pnp.ids_of(pydoc) != set(on_screen):  # built otherwise after all: anew,
        post("log", level="warn",  # with ids that cannot meet the page on screen's
             text="The live page differs from the one built ahead of time: rendered anew.")
        adopt = False
        page, notices = make_page(3 * ID_BASE)
        pydoc = pnp.make_document(page.layout)
    if adopt:
        pnp.known_to_browser(pydoc)
        doc_json = None
    else:
        doc_json = pnp.document_json(pydoc, LIVE_TARGET)
    lap("json" if doc_json else "adopt")
    link = Link(page, pydoc, post)
    page.batch = link.batch
    page.before_apply = lambda: link.flags.update(prepare=True)
    page.after_apply = lambda: link.flags.update(refresh=True)
    page.seek_player = lambda t: link.flags.update(seek=int(t))  # "Show it on the plots"
    PAGE, _link = page, link
    pnp.link_document(pydoc, link.sync)
    page.param.watch(lambda e: post("notice", text=e.new), "notice")
    page.param.watch(lambda *_: post("settings", query=to_query(page)), page.settings())
    lap("link")
    # The page renders the document (or adopts its own) and takes over. Adopted, the controls
    # on screen are still disabled (as built ahead of time): the patch that enables them comes
    # in the same message, so the page enables them as it takes over, in one task with one
    # layout (a patch of its own had been a second long task, after "live").
    ready = []
    if adopt:
        with link.collect() as ready:
            page.ready_controls()
    lap("ready")
    post("render", adopted=adopt, doc=doc_json, query=to_query(page), timings=took, version=start.get("version"),
         notice=" ".join([*notices, page.notice]).strip(), ready=ready[0] if ready else None)


# ---- what the page calls (assets/py-worker.js: the "patch" and "call" messages) -------------
def receive(patch) -> None:
    _link.receive(patch)


def call(name: str, argument: str = "") -> str:
    """csv: the current run's table; query: the settings' query; apply: a page's own link to
    its settings (the shell's lab-settings-link), returning the notices; run: the value of
    Python code as text (the page's own scripts only: same origin)."""
    page = PAGE
    if name == "csv":
        return page.csv()
    if name == "query":
        return to_query(page)
    if name == "run":  # diagnostics and the browser tests: Python's value of the code, as text
        from pyodide.code import eval_code  # noqa: PLC0415

        return str(eval_code(str(argument), {}))
    if name == "apply":
        with _link.batch():
            notes = apply_query(page, str(argument))
            _link.flags.update(refresh=True)
        return " ".join(notes)
    raise ValueError(f"unknown call {name!r}: expected csv, query, apply or run")
