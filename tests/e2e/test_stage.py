"""The presenter's stage never goes dark (issue 39, item 1): from the first frame it shows the
page until 3 s after Python has taken over, and across a setting change, no frame shows the
stage transparent (a fit in progress) without a still of what was fitted in its place
(assets/js/still.js). The first fit had left it blank for 1.6 s, while Python took over."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import PAGE_SLUGS, wait_live
from tests.e2e.test_scene_speed import assert_fast

# Every frame: the time, whether the stage area is transparent (fitting) and whether a still
# covers it, whether the page built ahead of time is on screen yet, and whether it is live.
SAMPLER = """
window.__frames = [];
const tick = () => {
  const area = document.getElementById('lab-stage-area'), L = window.lab;
  if (area && L) window.__frames.push({ t: performance.now(), dark: getComputedStyle(area).opacity === '0',
    still: !!document.querySelector('.lab-still'), shown: !!L.timings.firstPlot, live: !!L.state.live });
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"""


def dark_frames(page, since: float = 0.0) -> list[float]:
    frames = page.evaluate("window.__frames")
    assert len(frames) > 20, "too few frames sampled: the check would prove nothing"
    return [round(f["t"]) for f in frames if f["shown"] and f["t"] >= since and f["dark"] and not f["still"]]


# Running-sum in the gate (its fit waits for its parts, and it takes a setting change); the
# other pages repeat the path in the slow lane.
@pytest.mark.parametrize("slug", [s if s == "running-sum" else pytest.param(s, marks=pytest.mark.slow)
                                  for s in PAGE_SLUGS])
def test_the_presenters_stage_never_goes_dark(browser, server, slug):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 720})
    try:
        page = ctx.new_page()
        page.add_init_script(SAMPLER)
        page.goto(f"{server.url}{slug}.html?present=1")
        wait_live(page)
        page.wait_for_timeout(3000)  # what the issue asks: 3 s after live
        assert dark_frames(page) == []
        if slug == "running-sum":
            # live, every scene key paints its scene at once with the fits measured ahead of
            # time (test_scene_speed.py's check, there for every page in the slow lane)
            page.wait_for_function("lab.state.rehearsed && !lab.state.rehearsing"
                                   " && !document.documentElement.classList.contains('fitting')", timeout=120_000)
            assert_fast(page, slug, f"{slug}, live")
        if slug == "running-sum":  # and across a setting change (a new run, refitted)
            since = page.evaluate("performance.now()")
            page.evaluate("window.lab.py.apply('d=6')")
            page.wait_for_function("window.lab.player.doc && location.search.includes('d=6')", timeout=30_000)
            page.wait_for_timeout(1500)
            assert dark_frames(page, since) == []
    finally:
        ctx.close()
