"""Hybrid's dtype boxes follow the link from the first paint (issue 20, "No dead ends"), with
Python held back for good (conftest's hold_python): the page built ahead of time hides a dtype
that the link's models do not size, as the live page does (tests/e2e/test_hybrid_dtype_link.py).
Two Llama-3-8B (all attention, no fixed state) had shown "State dtype (the ideal)" until Python
took over, then hidden it. Which models hold what is Python's (Page.applies_by_link, written
into the page's link contract); the shell keeps no list of its own. Watched on every animation
frame from the page's first script on: the box is never on screen.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import hold_python, painted, shot, wait_ready, watch

pytestmark = pytest.mark.e2e

# On every frame: is a text of these words on screen (its element laid out, with a size)?
WATCH_JS = """(words) => {
  window.__seen = {};
  const look = () => {
    if (window.lab && window.lab.player && window.lab.player.doc) {
      for (const m of window.lab.player.doc.all_models) {
        if (typeof m.text !== 'string' || !words.includes(m.text.trim())) continue;
        const v = window.lab.viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
        const on = !!(r && r.width > 0 && r.height > 0);
        window.__seen[m.text.trim()] = (window.__seen[m.text.trim()] || false) || on;
      }
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""
STATE, KV = "State dtype (the ideal)", "KV cache dtype"


@pytest.mark.parametrize(("query", "hidden", "shown"), [
    ("model_a=llama-3-8b&model_b=llama-3-8b&state_dtype=bf16", STATE, KV),
    ("model_a=llama-3-8b&model_b=none", STATE, KV),
    ("model_a=mamba-2-2.7b&model_b=none", KV, STATE),
])
def test_a_dtype_the_links_models_do_not_size_is_never_shown_before_python(browser, server, query, hidden, shown):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1366, "height": 768})
    ctx.add_init_script(f"document.addEventListener('DOMContentLoaded', () => ({WATCH_JS})({[STATE, KV]!r}))")
    page = ctx.new_page()
    visit = watch(page)
    hold_python(page)
    page.goto(f"{server.url}hybrid.html?{query}")
    wait_ready(page)
    painted(page)
    page.get_by_text(shown, exact=True).first.scroll_into_view_if_needed()
    painted(page)
    seen = page.evaluate("window.__seen")
    shot(page, f"hybrid-first-paint-{hidden.split()[0].lower()}-hidden")
    assert seen.get(hidden) is False, (query, seen)  # drawn in no frame
    assert seen.get(shown) is True, (query, seen)
    assert query.split("&")[0] in page.evaluate("location.search")  # the link is kept
    assert visit.problems() == []
    ctx.close()


def test_the_default_models_show_both_dtypes_before_python(browser, server):
    """Jamba against Llama-3-8B (the defaults) sizes both: both boxes are shown."""
    ctx = browser.new_context(service_workers="block", viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    hold_python(page)
    page.goto(f"{server.url}hybrid.html?model_b=jamba-v0.1")
    wait_ready(page)
    painted(page)
    for words in (STATE, KV):
        assert page.get_by_text(words, exact=True).first.is_visible(), words
    ctx.close()
