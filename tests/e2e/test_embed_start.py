"""An embed starts Python only when it is wanted, and never out of view (issue 37, item 3).

A course page with three embeds used to download ~93 MB and hold over 1 GB before anyone touched
anything: every embed started Python's worker at once. Now an embed (?embed=1) steps through the
page built ahead of time alone and starts Python on a sign of intent (assets/js/wanted.js): a
pointer, focus or key inside its settings, a link to its own settings, the Settings button, or a
link with settings of its own; never while its frame is out of the host's view. Guarded here
with host pages that frame the embeds, every request under ``pyodide/`` recorded (the worker's
too: a route sees them): untouched, an embed fetches nothing and still steps; touched, it starts
and goes live at the t it was stepped to; out of view it fetches nothing, even with settings of
its own, until it is scrolled into view; of three, only the one touched starts.
"""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import (
    LIVE_TIMEOUT_MS,
    axe_findings,
    hold_python,
    painted,
    shared_heap,
    t_of,
    wait_live,
    wait_ready,
    watch,
)

pytestmark = pytest.mark.e2e

UNTOUCHED_S = 4  # "a few seconds": early.js used to start the worker within the first second
COLD = "The settings start when you use them."
STAGE_JS = "document.getElementById('lab-stage').textContent"
HOST = """<!doctype html><title>A course page</title><link rel="icon" href="data:,">
<h1>A course page</h1>
{body}"""
FRAME = '<p>Try it:</p>\n<iframe src="{src}" title="{slug}" style="width: 100%; border: 0" height="{height}"></iframe>'


def course(context, server, name: str, body: str) -> tuple:
    """(host page, its Visit, the URLs requested under pyodide/): a host page made of ``body``."""
    fetched: list[str] = []

    def record(route):
        fetched.append(route.request.url)
        route.fallback()

    host = context.new_page()
    visit = watch(host)
    context.route(f"{server.url}{name}.html", lambda r: r.fulfill(content_type="text/html", body=HOST.format(body=body)))
    context.route("**/pyodide/**", record)  # registered last: it sees each request first, the worker's too
    host.goto(f"{server.url}{name}.html")
    return host, visit, fetched


def frame_of(host, slug: str):
    return next(f for f in host.frames if f"/{slug}.html" in f.url)


def embed(server, slug: str, query: str = "", height: int = 700) -> str:
    return FRAME.format(src=f"{server.url}{slug}.html?embed=1{query}", slug=slug, height=height)


def touch_slider(host, inner) -> None:
    """A pointer pressed and let go on the first slider's handle, as a reader does with a mouse."""
    handle = inner.locator("#lab-app .noUi-handle").first
    handle.hover()
    host.mouse.down()
    host.mouse.up()


def status(inner) -> tuple:
    """What the status line shows and how it is announced."""
    return tuple(inner.evaluate("""() => { const s = document.getElementById('lab-status');
      return [s.hidden, s.getAttribute('role'), s.getAttribute('aria-live'), s.innerText.trim(),
              getComputedStyle(s.querySelector('.bar')).display]; }"""))


def test_an_untouched_embed_fetches_nothing_of_python_and_steps(context, server):
    host, visit, fetched = course(context, server, "course-one", embed(server, "running-sum"))
    inner = frame_of(host, "running-sum")
    wait_ready(inner)
    time.sleep(UNTOUCHED_S)
    assert fetched == []
    assert inner.evaluate("[window.lab.state.python, window.lab.state.live]") == ["waiting", False]
    hidden, role, live, text, bar = status(inner)
    assert (hidden, role, live, bar) == (False, "status", "polite", "none"), status(inner)
    assert text.startswith(COLD) and "Step, Back and Play work now." in text, text
    # stepping is the page built ahead of time's own: no sign of wanting Python
    inner.get_by_role("button", name="Step", exact=True).click()
    assert t_of(inner) == 1
    host.keyboard.press("ArrowRight")
    inner.wait_for_function("window.lab.player.t === 2")
    inner.get_by_role("button", name="Back", exact=True).click()
    inner.wait_for_function("window.lab.player.t === 1")
    inner.locator("#tp-t").focus()  # the timeline: its own keys move it
    host.keyboard.press("End")
    inner.wait_for_function("window.lab.player.t === window.lab.player.tMax && window.lab.player.t > 1")
    painted(inner)
    time.sleep(1)
    assert fetched == []
    assert inner.evaluate("window.lab.state.python") == "waiting"
    assert inner.evaluate(STAGE_JS) == COLD
    # once read it fades from over the frame's foot (lab.css lab-step-aside; finished here, not
    # waited for): after seconds enough to read it, to nothing
    faded = inner.evaluate("""() => { const s = document.getElementById('lab-status'), [a] = s.getAnimations();
      const delay = a ? a.effect.getTiming().delay : 0; if (a) a.finish();
      return [delay, getComputedStyle(s).opacity]; }""")
    assert faded[0] >= 5000 and faded[1] == "0", faded
    assert visit.problems() == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_waiting_line_is_read_out_and_passes_axe(context, server, theme):
    # an embed opened on its own (its root is the viewport: in view), untouched
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)  # were it to start, nothing would load
    page.goto(f"{server.url}gates.html?embed=1&theme={theme}")
    wait_ready(page)
    painted(page)
    assert status(page)[:3] == (False, "status", "polite") and status(page)[3].startswith(COLD)
    # the line lies over the frame's bottom edge for good: a pointer goes through it
    assert page.evaluate("getComputedStyle(document.getElementById('lab-status')).pointerEvents") == "none"
    # an embed shows no level-one heading (its host page has one): that whole-document rule aside
    findings = [f for f in axe_findings(page) if "page-has-heading-one" not in f]
    assert (theme, findings) == (theme, [])
    assert held == [] and page.evaluate("window.lab.state.python") == "waiting"
    assert visit.problems() == []


def test_touching_its_settings_starts_python_and_it_goes_live_where_it_was(context, server):
    host, visit, fetched = course(context, server, "course-touch", embed(server, "running-sum"))
    inner = frame_of(host, "running-sum")
    wait_ready(inner)
    inner.get_by_role("button", name="Step", exact=True).click()
    inner.get_by_role("button", name="Step", exact=True).click()
    assert t_of(inner) == 2 and fetched == []
    touch_slider(host, inner)
    inner.wait_for_function("window.lab.state.python === 'started'", timeout=5_000)
    # the usual progress, in plain words, and stepping goes on meanwhile
    inner.wait_for_function(f"window.lab.state.live || {STAGE_JS}.startsWith('Getting the settings ready')", timeout=5_000)
    stepped_to = 2
    if not inner.evaluate("window.lab.state.live"):
        inner.get_by_role("button", name="Step", exact=True).click()
        stepped_to = 3
        assert t_of(inner) == 3
    wait_live(inner)
    assert any("/pyodide/" in u for u in fetched), fetched
    assert any(u.endswith("lab-snapshot-running-sum.bin.zst") for u in fetched), fetched
    assert any(u.endswith("lab-snapshot.1.bin.zst") for u in fetched), fetched
    assert t_of(inner) == stepped_to
    assert inner.evaluate("[window.lab.state.adopted, document.getElementById('lab-status').hidden]") == [True, True]
    # live: a setting responds
    inner.evaluate("window.lab.py.apply('d=8')")
    inner.wait_for_function("(window.lab.state.settingsQuery || '').includes('d=8')", timeout=60_000)
    assert visit.problems() == []


def test_an_embed_out_of_view_fetches_nothing_even_with_settings_of_its_own(context, server):
    # a link with settings of its own starts Python at once in view: out of view it must not
    body = '<p style="height: 2600px">A long lesson before the simulator.</p>\n' + embed(server, "running-sum", "&d=8")
    host, visit, fetched = course(context, server, "course-tall", body)
    inner = frame_of(host, "running-sum")
    inner.wait_for_function("window.lab?.state.python === 'waiting'", timeout=60_000)
    time.sleep(UNTOUCHED_S)
    assert fetched == []
    assert inner.evaluate("[window.lab.state.python, window.lab.state.ownSettings]") == ["waiting", True]
    # scrolled into view, it starts (it was the view that held it back)
    host.evaluate("document.querySelector('iframe').scrollIntoView()")
    inner.wait_for_function("window.lab.state.python === 'started'", timeout=10_000)
    deadline = time.monotonic() + 30
    while not fetched and time.monotonic() < deadline:
        host.wait_for_timeout(100)
    assert fetched, "scrolled into view, the embed with settings of its own fetched nothing of Python"
    assert inner.evaluate("window.lab.state.failed") is None
    assert visit.problems() == []


def test_of_three_embeds_touching_one_starts_only_that_one(browser, server):
    # all three in view at once (a tall window): out of view would hold them back anyway
    context = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 1500})
    try:
        slugs = ("running-sum", "gates", "hybrid")
        host, visit, fetched = course(context, server, "course-three",
                                      "\n".join(embed(server, s, height=400) for s in slugs))
        frames = {s: frame_of(host, s) for s in slugs}
        for inner in frames.values():
            wait_ready(inner)
        assert host.evaluate("[...document.querySelectorAll('iframe')].every((f) => f.getBoundingClientRect().bottom <= innerHeight)")
        time.sleep(UNTOUCHED_S)
        assert fetched == []
        touch_slider(host, frames["gates"])
        frames["gates"].wait_for_function("window.lab.state.live === true || !!window.lab.state.failed", timeout=LIVE_TIMEOUT_MS)
        wait_live(frames["gates"])
        assert [frames[s].evaluate("window.lab.state.python") for s in slugs] == ["waiting", "started", "waiting"]
        heaps = sorted({u.rsplit("/", 1)[1] for u in fetched if "lab-snapshot" in u})
        assert heaps[0] == "lab-snapshot-gates.bin.zst" and heaps[1:] == sorted(shared_heap()), heaps
        # one worker: the runtime's script was fetched once
        assert sum(u.endswith("/pyodide/pyodide.js") for u in fetched) == 1, fetched
        for s in ("running-sum", "hybrid"):
            assert frames[s].evaluate(STAGE_JS) == COLD
            frames[s].get_by_role("button", name="Step", exact=True).click()
            assert t_of(frames[s]) == 1
        assert visit.problems() == []
    finally:
        context.close()


# What Chromium says of a data saver (navigator.connection.saveData), set before the page's
# scripts run: the property lives on Navigator's prototype.
SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection',
  { configurable: true, get: () => ({ saveData: true, effectiveType: '4g', addEventListener() {} }) });"""


def test_a_page_opened_whole_on_a_data_saver_waits_until_wanted(context, server):
    """A page opened whole (not an embed) in a browser that asks to save data: the shell starts
    nothing (assets/js/wanted.js), the page steps, the line says why it waits and how much Python is; touching the
    settings starts Python and the page goes live where it was."""
    fetched: list[str] = []

    def record(route):
        fetched.append(route.request.url)
        route.fallback()

    context.add_init_script(SAVE_DATA)
    page = context.new_page()
    visit = watch(page)
    context.route("**/pyodide/**", record)
    page.goto(f"{server.url}gates.html")
    wait_ready(page)
    time.sleep(UNTOUCHED_S)
    assert fetched == [] and page.evaluate("window.lab.state.python") == "waiting"
    text = page.locator("#lab-status").inner_text()
    assert text.startswith(COLD) and "data saver or a slow link" in text and " MB) loads only then" in text, text
    page.get_by_role("button", name="Step", exact=True).click()
    assert t_of(page) == 1
    assert fetched == []
    touch_slider(page, page)
    wait_live(page)
    assert fetched and t_of(page) == 1
    assert visit.problems() == []
