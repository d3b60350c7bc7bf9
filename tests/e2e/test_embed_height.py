"""An embedded page reports its final height once per change of what it shows, never a
transient one (issue 20, "Every screen").

The embed (?embed=1 in an iframe) posts {type: "lab-height", height} to its host, which sizes
the frame (assets/js/embeds.js). It used to post while its parts joined, one a frame
(running-sum 551 → 897 → 876 → 819 px; gates a dozen heights), and again when Python took
over: the host's page jumped each time. Guarded here with a host page that records every
message: with Python held back, every page sends exactly one height, the frame's final one, and
none more when the host scrolls through it (figures out of view are painted when they come
near); live, the takeover sends none, and a setting that changes the layout sends one.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import LIVE_TIMEOUT_MS, PAGE_SLUGS, hold_python, joined, painted

pytestmark = pytest.mark.e2e

HOST = """<!doctype html><title>A course page</title><h1>A course page</h1>
<p>Some text before the simulator.</p>
<iframe src="{src}" title="Linear Attention Lab" style="width: 100%; border: 0" height="600"></iframe>
<p style="height: 1500px">Some text after it.</p>
<script>
window.heights = [];
addEventListener("message", function (e) {{
  var d = e.data;
  if (!d || d.type !== "lab-height") return;
  window.heights.push(d.height);
  document.querySelector("iframe").style.height = Math.ceil(d.height) + "px";
}});
</script>"""
MAIN_H = "Math.ceil(document.querySelector('.lab-main').getBoundingClientRect().height)"
FRAMES_JS = """(n) => new Promise((resolve) => { let i = 0;
  const next = () => requestAnimationFrame(() => (++i >= n ? resolve() : next())); next(); })"""


def host_page(context, server, slug: str, query: str = ""):
    """(host page, the embed's frame), the embed's parts all joined and painted."""
    src = f"{server.url}{slug}.html?embed=1{query}"
    context.route(f"{server.url}host-{slug}.html", lambda r: r.fulfill(
        content_type="text/html", body=HOST.format(src=src)))
    host = context.new_page()
    host.goto(f"{server.url}host-{slug}.html")
    host.wait_for_function("window.heights.length > 0", timeout=60_000)
    inner = host.frames[1]
    joined(inner)
    return host, inner


def settle(host, inner) -> None:
    """Painted, and thirty frames more in both (nothing left to report)."""
    painted(inner)
    inner.evaluate(FRAMES_JS, 30)
    host.evaluate(FRAMES_JS, 2)


def scroll_through(host, inner) -> None:
    """The host scrolled down through the frame and back: its figures come near the view."""
    for y in (400, 900, 1400, 2000, 2800, 0):
        host.evaluate("(y) => scrollTo(0, y)", y)
        settle(host, inner)


# The shell's embed mechanism, measured in the gate on the shortest page and the one with most
# style sheets (hybrid: Panel's widgets link their own); every page in the slow lane.
@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if slug in ("running-sum", "hybrid")
                                               else [pytest.mark.slow]) for slug in PAGE_SLUGS])
def test_an_embed_reports_one_final_height(context, server, slug):
    hold_python(context)  # the page built ahead of time: its parts join, one a frame
    host, inner = host_page(context, server, slug)
    settle(host, inner)
    scroll_through(host, inner)
    heights = host.evaluate("window.heights")
    final = inner.evaluate(MAIN_H)
    assert heights == [final], (heights, final)
    frame = host.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
    assert abs(frame - final) <= 1, (frame, final)


def test_the_takeover_sends_no_height_and_a_new_layout_sends_one(context, server):
    host, inner = host_page(context, server, "running-sum")
    inner.locator("#lab-app .noUi-handle").first.focus()  # a reader reaches a setting: the embed starts Python (wanted.js)
    inner.wait_for_function("window.lab.state.live === true || !!window.lab.state.failed",
                            timeout=LIVE_TIMEOUT_MS)
    assert inner.evaluate("window.lab.state.failed") is None
    settle(host, inner)
    scroll_through(host, inner)
    final = inner.evaluate(MAIN_H)
    assert host.evaluate("window.heights") == [final]  # one, from before Python; none since
    # a larger state (d = 8: 8 × 8 heatmaps) is a taller page: one height, the new one
    inner.evaluate("window.lab.py.apply('d=8')")
    inner.wait_for_function(f"(h) => {MAIN_H} > h", arg=final, timeout=60_000)
    settle(host, inner)
    taller = inner.evaluate(MAIN_H)
    assert taller > final
    assert host.evaluate("window.heights") == [final, taller]
