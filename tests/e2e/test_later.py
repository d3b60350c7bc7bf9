"""On the whole page, the parts set aside at first paint (further main views and figures, the
exercise) wait while Python's worker restores its snapshot, so the two threads do not share the
two cores (assets/js/later.js): they join once the page is live, or at once when the reader
goes down the page. In the presenter view, an embed or a named view they join at once."""

from __future__ import annotations

import re

from sitebuild import ROOT
from tests.e2e.conftest import (
    UNBUILT_JS,
    hold_python,
    joined,
    open_built,
    painted,
    wait_live,
    wait_ready,
)

# assets/js/later.js: the parts join by then whatever happens (read from the module itself)
FALLBACK_MS = int(re.search(r"FALLBACK_MS = (\d+);", (ROOT / "assets/js/later.js").read_text()).group(1))


def test_the_rest_of_the_page_waits_until_the_reader_goes_down_to_it(context, server):
    page = context.new_page()
    hold_python(page)
    page.goto(f"{server.url}gates.html")
    wait_ready(page)
    painted(page)
    assert page.evaluate("window.lab.timings.joined") is None
    assert len(page.evaluate(UNBUILT_JS)) > 3, "nothing was set aside: the test would prove nothing"
    # the lesson text below waits out of sight: it does not jump down when the parts join
    assert not page.locator(".lab-text").is_visible()
    page.mouse.move(640, 400)
    page.mouse.wheel(0, 300)  # the reader goes down the page
    page.wait_for_function("window.lab?.timings.joined", timeout=10_000)
    painted(page)
    assert page.evaluate(UNBUILT_JS) == []
    assert page.locator(".lab-text").is_visible()
    assert page.evaluate("window.lab.state.live") is False


def test_the_rest_of_the_page_joins_once_the_page_is_live(context, server):
    page = context.new_page()
    page.goto(f"{server.url}running-sum.html")
    page.wait_for_function("window.lab?.timings.firstPlot || window.lab?.state.live", polling=20)
    waited = page.evaluate("window.lab.state.live || !window.lab.timings.joined")
    wait_live(page)
    page.wait_for_function("window.lab?.timings.joined", timeout=20_000)
    painted(page)
    assert page.evaluate(UNBUILT_JS) == []
    timings = page.evaluate("window.lab.timings")
    # no reader scrolled: they waited for the page to go live (or, on a machine so busy that
    # Python took longer, for later.js's fallback)
    assert waited and timings["joined"] >= min(timings["live"], timings["firstPlot"] + FALLBACK_MS), timings
    assert page.evaluate("window.scrollY") == 0


def test_the_presenter_view_and_an_embed_do_not_wait(context, server):
    for query in ("present=1", "embed=1"):
        visit = open_built(context, f"{server.url}running-sum.html?{query}")
        page = visit.page
        page.wait_for_function("window.lab?.timings.joined", timeout=20_000)  # no scroll, no Python
        assert page.evaluate("window.lab.state.live") is False, query
        page.close()


# The lesson text while it waits (lab.css): neither styled nor laid out, and out of sight.
TEXT_HELD_JS = """() => {
  const text = document.querySelector('.lab-text'), formula = text.querySelector('.katex-display');
  return getComputedStyle(text).contentVisibility === 'hidden' && !formula.checkVisibility();
}"""
# The display formulas wider than their box (formulas.js fits them once the text is shown).
OVERFLOWING_JS = """[...document.querySelectorAll('.lab-text .katex-display')]
    .filter((box) => box.scrollWidth > box.clientWidth + 1).length"""
FITTED_JS = """[...document.querySelectorAll('.lab-text .katex-display .katex')]
    .filter((tex) => tex.style.fontSize).length"""


def test_the_lesson_text_is_not_laid_out_before_the_plots_and_fits_once_shown(browser, server):
    context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 800})
    page = context.new_page()
    hold_python(page)
    bokeh = []  # BokehJS held back: the page as a slow link shows it before the plots
    page.route("**/static/bokeh/bokeh.min.js", lambda route: bokeh.append(route))
    page.goto(f"{server.url}gates.html", wait_until="commit")
    page.wait_for_function("document.readyState !== 'loading' && !!document.querySelector('.lab-footer')")
    assert page.evaluate(TEXT_HELD_JS)
    assert not page.locator(".lab-text").is_visible()
    page.unroute("**/static/bokeh/bokeh.min.js")
    for route in bokeh:
        route.continue_()
    wait_ready(page)
    painted(page)
    assert page.evaluate(TEXT_HELD_JS), "the parts set aside wait below: so does the text"
    joined(page)
    page.wait_for_function(f"{FITTED_JS} > 0", timeout=5_000)  # a phone's column: one is too wide
    assert not page.evaluate(TEXT_HELD_JS)
    assert page.locator(".lab-text").is_visible()
    assert page.evaluate(OVERFLOWING_JS) == 0
    context.close()


def test_the_lesson_text_shows_when_the_shell_never_runs(context, server):
    page = context.new_page()
    hold_python(page)
    page.route("**/assets/shell.js", lambda route: route.abort())
    page.goto(f"{server.url}gates.html")  # waits for the load event
    assert page.evaluate("window.lab") is None
    assert not page.evaluate(TEXT_HELD_JS)
    assert page.locator(".lab-text").is_visible()
