"""The built site in real Chromium (Playwright for Python, Debian's chromium).

Every request is routed: anything not addressed to 127.0.0.1 is aborted and fails the test, and
Chromium resolves every outside host to nothing. Screenshots are taken with LAB_SHOTS=1 (they
assert nothing, and each repaints every figure for print) and land in screenshots/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("LAB_SITE", ROOT / "dist" / "site"))
SHOTS = ROOT / "screenshots"
TAKE_SHOTS = os.environ.get("LAB_SHOTS") == "1"
sys.path.insert(0, str(ROOT))

from build import content_security_policy  # noqa: E402
from serve import make_server  # noqa: E402
from ui.pages import PAGES  # noqa: E402

LIVE_TIMEOUT_MS = 120_000  # two cores, cold Pyodide: start-up is measured in bench/, not here
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("LAB_CHROMIUM"), shutil.which("chromium"),
                      shutil.which("chromium-browser"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return None  # Playwright's own browser, if one was installed with `playwright install`


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").exists():
        subprocess.run([sys.executable, str(ROOT / "build.py")], check=True)
    return SITE


def shared_heap(site: Path = SITE) -> list[str]:
    """The file names of the shared heap's parts (sitebuild/snapshot.py), in order."""
    info = json.loads((site / "build-info.json").read_text())["snapshot"]
    return [path.rsplit("/", 1)[1] for path in info["heap"]]


class Server:
    def __init__(self, directory: Path, prefix: str = "/", policy: bool = True):
        self.httpd = make_server(directory, 0, prefix, policy=policy)
        self.prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.prefix}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def server(site):
    s = Server(site)
    yield s
    s.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@dataclass
class Visit:
    page: object
    console_errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    held: list = field(default_factory=list)  # open_built: the Python runtime's held requests

    def problems(self) -> list[str]:
        return ([f"console: {e}" for e in self.console_errors] + [f"outside: {u}" for u in self.outside]
                + [f"HTTP error: {u}" for u in self.failed])


# Every Content-Security-Policy violation in any frame of a watched page becomes a console error,
# which fails the test like any other (Visit.problems).
CSP_WATCH = """document.addEventListener("securitypolicyviolation", (e) => console.error(
  `CSP violation: ${e.effectiveDirective} refused ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`), true);"""
CSP_META_JS = "(document.querySelector('meta[http-equiv=Content-Security-Policy]') || {}).content || ''"


def watch(page, *, route: bool = True) -> Visit:
    visit = Visit(page)
    page.add_init_script(CSP_WATCH)

    def on_console(msg):
        if msg.type == "error":
            visit.console_errors.append(msg.text[:500])

    page.on("console", on_console)
    page.on("pageerror", lambda e: visit.console_errors.append(f"pageerror: {e}"[:500]))
    page.on("response", lambda r: visit.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: visit.failed.append(f"failed {r.url}")
            if r.url.startswith("http://127.0.0.1") and "net::ERR_ABORTED" not in (r.failure or "") else None)
    if route:
        def handle(r):
            url = r.request.url
            if url.startswith(("http://127.0.0.1", "data:", "blob:")):
                r.continue_()
            else:
                visit.outside.append(url)
                r.abort()
        page.context.route("**/*", handle)
    return visit


def wait_ready(page, timeout: int = 60_000) -> None:
    """The page built ahead of time is on screen and steps (Python may still be loading)."""
    page.wait_for_function("window.lab?.state.prerendered === true || !!window.lab?.state.failed", timeout=timeout)


PYTHON_FILES = "**/pyodide/**"  # every file of the runtime
PYTHON_WASM = "**/pyodide/pyodide.asm.wasm"  # its wasm alone: the rest downloads, and says so


class Held(list):
    """The requests ``hold_python`` holds back, and the pattern it holds them by."""

    pattern = PYTHON_FILES


def hold_python(target, pattern: str = PYTHON_FILES) -> Held:
    """Hold back the Python runtime's download for a page (or a whole context: its iframes too);
    returns the held requests (``release_python`` lets Python start). A test of what the page
    built ahead of time does alone holds it for good: a Python start costs seconds of both cores.
    Every file by default (held at the wasm alone, the worker still fetched and unzipped the heap
    and the packages: a CPU-second a page for nothing); ``PYTHON_WASM`` for a test of what the
    page says while the rest downloads."""
    held = Held()
    held.pattern = pattern
    target.route(pattern, lambda route: held.append(route))
    return held


def release_python(target, held: Held) -> None:
    """Let the runtime held back by ``hold_python`` load: nothing more is held, then what was
    held goes on (in that order: a request made in between is neither held nor lost)."""
    target.unroute(held.pattern)
    for route in held:
        route.continue_()


DEEP_TEXT_JS = """(selector) => {
  const out = [];
  const walk = (node) => {
    if (node.nodeType === 3) out.push(node.textContent);
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.childNodes || []) walk(child);
  };
  walk(document.querySelector(selector));
  return out.join(" ");
}"""
DEEP_COUNT_JS = """(css) => {
  let n = 0;
  const walk = (root) => {
    n += root.querySelectorAll(css).length;
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return n;
}"""


def deep_text(page, selector: str = "#lab-app") -> str:
    """The text of an element and of every shadow root inside it (Panel renders into them)."""
    return page.evaluate(DEEP_TEXT_JS, selector)


def deep_count(page, css: str) -> int:
    """How many elements match ``css`` in the page, shadow roots included."""
    return page.evaluate(DEEP_COUNT_JS, css)


PAINTED_JS = """() => new Promise((resolve) => {
  // a figure held out of view (hold_render) never finishes: those are not waited for
  const figure = (v) => v.model && 'renderers' in v.model && 'toolbar' in v.model;
  // a step still easing (assets/js/ease.js) is not painted yet either
  const busy = () => !!window.lab?.player.easing || !!window.Bokeh && [...Bokeh.index].some((root) =>
    [...(root.owner ? root.owner.query((v) => figure(v) && v.model.hold_render === false) : [])]
      .some((v) => v.has_finished && !v.has_finished()));
  let frames = 0;
  const check = () => requestAnimationFrame(() => requestAnimationFrame(() =>
    (!busy() || ++frames > 60 ? resolve(frames) : check())));
  check();
})"""


def painted(page) -> None:
    """Wait for a state, not a time: no step is easing, every BokehJS view on screen has
    finished rendering and two frames have been painted since (what a step, a theme or a media change asked for is
    on screen); at most about two seconds of frames, so a view that never settles cannot hang
    the test (what the test then asserts says what is wrong)."""
    page.evaluate(PAINTED_JS)


# The presenter view at rest: no fit searched, no scene measured ahead of time (its trials lay
# the page out at other scales behind a still), no still on screen (true outside it).
AT_REST_JS = ("!(window.lab && window.lab.state.rehearsing) && !document.documentElement.classList.contains('fitting')"
              " && !document.querySelector('.lab-still')")


def at_rest(page, js: str, arg=None):
    """``js`` (a function) evaluated on the presenter view as the presenter sees it: painted at
    rest, the check in the same task as the measure (a click's pointerup restarts the measuring
    ahead of time 1.2 s later: a slow machine's measure had caught one of its trials, gates 1017
    px tall at 1280 x 720)."""
    for _ in range(30):
        page.wait_for_function(AT_REST_JS, timeout=60_000)
        painted(page)
        rest, got = page.evaluate(f"(arg) => [{AT_REST_JS}, ({js})(arg)]", arg)
        if rest:
            return got
    raise AssertionError("the presenter view never came to rest")


def t_of(page) -> int:
    return int(page.evaluate("window.lab.player.t"))


def wait_live(page, timeout: int = LIVE_TIMEOUT_MS) -> None:
    page.wait_for_function("window.lab?.state.live === true || !!window.lab?.state.failed", timeout=timeout)
    failed = page.evaluate("window.lab.state.failed || ''")
    if failed:
        detail = page.evaluate("(document.querySelector('#lab-error pre') || {}).textContent || ''")
        raise AssertionError(f"page failed to start: {failed}\n{detail[-2000:]}")


# Every context blocks service workers, but the offline test's: the site's worker, registered
# once a page is live, downloads and keeps the whole site (36 MB) in the background, which
# cost every live test seconds of both cores.
@pytest.fixture
def context(browser):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900})
    yield ctx
    ctx.close()


# A reader going down the page: on the whole page, the parts set aside at first paint wait for
# the page to go live, or for this (assets/js/later.js).
READER_SCROLLS_JS = "window.dispatchEvent(new Event('scroll'))"
# The layouts and figures of the page built ahead of time that are not on the page (yet): the
# parts set aside at first paint that have not joined (assets/js/later.js).
UNBUILT_JS = """[...lab.player.doc.all_models]
    .filter((m) => 'sizing_mode' in m && (Array.isArray(m.children) || 'renderers' in m))
    .filter((m) => { const v = lab.viewOf(m); return !(v && v.el && v.el.isConnected); })
    .map((m) => m.type)"""


def joined(page) -> None:
    """Every part of the page built ahead of time is joined (the shell's timings say so) and
    painted; before the page is live, as when a reader scrolls down to them."""
    page.evaluate(READER_SCROLLS_JS)
    page.wait_for_function("window.lab?.timings.joined", timeout=20_000)
    painted(page)


def open_built(context, url: str, *, join: bool = False) -> Visit:
    """A page built ahead of time, with Python held back for good: for what the shell does alone
    (keys, stops, embed, share), which the live page keeps (test_site.py steps each page both
    ways); a Python start costs seconds of both cores. ``join``: and every part joined and
    painted (``joined``). The held requests are ``Visit.held`` (continue them to let Python
    start)."""
    page = context.new_page()
    visit = watch(page)
    visit.held = hold_python(page)
    page.goto(url)
    wait_ready(page)
    assert page.evaluate("window.lab.state.live") is False
    assert page.evaluate(CSP_META_JS) == content_security_policy()
    if join:
        joined(page)
    return visit


def open_page(context, url: str, *, route: bool = True) -> Visit:
    page = context.new_page()
    visit = watch(page, route=route)
    page.goto(url)
    wait_live(page)
    # the page went live under the site's policy (and watch() reports any violation)
    assert page.evaluate(CSP_META_JS) == content_security_policy()
    return visit


# The data of every ColumnDataSource the page shows (the frames aside), keyed by the source's
# position in the document (ids differ between visits), as one comparable structure.
SNAPSHOT_JS = """() => {
  const out = [];
  const docs = new Set([...Bokeh.index].filter((v) => document.getElementById('lab-app').contains(v.el))
    .map((v) => v.model.document));
  for (const doc of docs) {
    for (const m of doc.all_models) {
      if (m.name === 'lab-frames') continue;
      if (m.data === undefined || m.selected === undefined) continue;
      const cols = {};
      const data = m.data instanceof Map ? Object.fromEntries(m.data) : m.data;
      for (const key of Object.keys(data).sort()) {
        const v = data[key];
        // rounded: the page built ahead of time (CPython's numpy) and the live one (Pyodide's)
        // may differ in the last bits of a float
        const round = (x) => (typeof x === 'number' ? Math.round(x * 1e9) / 1e9 :
          (ArrayBuffer.isView(x) || Array.isArray(x) ? Array.from(x, round) : x));
        cols[key] = round(v);
      }
      out.push(JSON.stringify(cols));
    }
  }
  return out.sort();
}"""


def snapshot(page) -> list[str]:
    page.wait_for_function("!window.lab?.player.easing")  # a step's easing ends on its frame
    return page.evaluate(SNAPSHOT_JS)


def shot(page, name: str) -> Path:
    """A full-page screenshot as screenshots/<name>.png, with LAB_SHOTS=1 (else nothing)."""
    path = SHOTS / f"{name}.png"
    if not TAKE_SHOTS:
        return path
    SHOTS.mkdir(exist_ok=True)
    # Figures scrolled out of view are paused (not repainted); printing repaints them all, and
    # a full-page picture needs them as printed.
    page.evaluate("""() => new Promise((resolve) => {
      window.dispatchEvent(new Event("beforeprint"));
      requestAnimationFrame(() => requestAnimationFrame(resolve));
    })""")
    page.screenshot(path=str(path), full_page=True)
    return path


def snap(target, name: str) -> None:
    """A screenshot of what is on screen (a page's viewport or one element), with LAB_SHOTS=1."""
    if TAKE_SHOTS:
        SHOTS.mkdir(exist_ok=True)
        target.screenshot(path=str(SHOTS / name))


PAGE_SLUGS = [p.slug for p in PAGES]

# The first screen: where the page's subject (ui/page.py Page.subject, a named view) is on the
# screen as it opens (its box, and the viewport's height).
SUBJECT_JS = """(cls) => {
  const m = [...lab.player.doc.all_models].find((m) => (m.css_classes || []).includes(cls));
  const v = m && lab.viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
  return r && {top: r.top, bottom: r.bottom, height: innerHeight, scrollY};
}"""
SUBJECT_SHOWN_PX = 150  # at least this much of the subject (or all of it) on the first screen


def assert_subject_on_first_screen(page, slug: str) -> None:
    """The page's subject starts within the first screen, with at least SUBJECT_SHOWN_PX of it
    (or the whole of it) above the screen's foot, the page not scrolled."""
    from ui.pages import page_class  # noqa: PLC0415

    cls = page_class(next(p for p in PAGES if p.slug == slug))
    box = page.evaluate(SUBJECT_JS, cls.view_class(cls.subject))
    assert box, f"{slug}: its subject {cls.subject!r} is not on the page at first paint"
    shown = min(box["bottom"], box["height"]) - box["top"]
    where = (slug, cls.subject, page.viewport_size, box)
    assert box["scrollY"] == 0 and 0 <= box["top"] < box["height"], where
    assert shown >= min(SUBJECT_SHOWN_PX, box["bottom"] - box["top"]), where


# Layout shifts as the page reports them (the Layout Instability API), for the life test's CLS:
# each shift's time and score, those just after an input (hadRecentInput) left out.
SHIFTS_INIT_JS = """window.__labShifts = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) if (!e.hadRecentInput)
  window.__labShifts.push([e.startTime, e.value]); }).observe({type: 'layout-shift', buffered: true});"""


def layout_shift_since_first_plot(page, skip: tuple[float, float] = (0, 0)) -> float:
    """The cumulative layout shift (CLS) from the first plot (the shell's timings) until now,
    less what shifted in skip (performance.now() from, to: while the test itself resized the
    window)."""
    return page.evaluate("""([a, b]) => { const from = window.lab.timings.firstPlot;
      return window.__labShifts.filter(([t]) => t >= from && !(t >= a && t <= b)).reduce((sum, [, v]) => sum + v, 0); }""",
                         list(skip))

# axe-core, a test-only tool (tests/e2e/node, installed by `make e2e`/`make test` with npm ci):
# evaluated in the page under test through the DevTools protocol (which the site's policy does
# not govern: a script tag would break it, and a same-origin copy may be fetched by the site's
# service worker, past Playwright's routes), never shipped with the site.
AXE = Path(__file__).parent / "node" / "node_modules" / "axe-core" / "axe.min.js"
AXE_JS = """() => axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations
  .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}) ${v.nodes[0].target.join(' ')}`))"""


def axe_findings(page) -> list[str]:
    """axe-core's findings at every impact level, minor included (issue 39), on the page as it
    is now."""
    assert AXE.exists(), "axe-core is not installed: npm ci --prefix tests/e2e/node (make test does it)"
    cdp = page.context.new_cdp_session(page)
    try:
        loaded = cdp.send("Runtime.evaluate", {"expression": AXE.read_text() + "\n;typeof axe"})
        assert loaded["result"].get("value") == "object", loaded
    finally:
        cdp.detach()
    return page.evaluate(AXE_JS)


def assert_accessible(page) -> None:
    """axe-core finds no problem at any impact level on a live page in either theme (the one
    on screen, then the other through the Theme button); every figure that changes with t says
    what it shows, in numbers; steps are announced politely."""
    page.get_by_role("button", name="Reset", exact=True).click()
    page.get_by_role("button", name="Step", exact=True).click()
    painted(page)
    first = page.evaluate("document.documentElement.dataset.theme")
    for theme in (first, "light" if first == "dark" else "dark"):
        if theme != first:
            page.locator("#btn-theme").click()
            page.wait_for_function("(t) => document.documentElement.dataset.theme === t", arg=theme)
            painted(page)
        assert (theme, axe_findings(page)) == (theme, [])
    alts = page.evaluate("""() => lab.player.groups
      .filter(([m, attrs]) => attrs.some(([a]) => a === '@alt'))
      .map(([m]) => { const el = lab.viewOf(m) && lab.viewOf(m).el;
                      return el ? [el.getAttribute('role'), el.getAttribute('aria-label') || ''] : null; })""")
    assert alts and all(a and a[0] == "img" and any(c.isdigit() for c in a[1]) for a in alts), alts
    assert page.locator("#lab-say").get_attribute("aria-live") == "polite"
    page.wait_for_function("document.getElementById('lab-say').textContent.startsWith('t = 1')")
