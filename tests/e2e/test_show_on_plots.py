"""'Show it on the plots' brings the simulator into view and says what to press (issue 20, "No
dead ends").

The exercise's button sets the plots up for the exercise; it once changed them off screen
while the viewport stayed on the exercise at the bottom of the page. Guarded here, on the live
page (in the worker): after the click the transport and the plots the exercise is about are in
the viewport, at t = 0, and a line beside the transport says what to press; a Step follows it.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import open_page, painted, shot, snap, t_of

pytestmark = pytest.mark.e2e

# The figures wholly in the viewport, and where the first main view (the lesson's) starts.
IN_VIEW_JS = """() => {
  const figs = [...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m && m.visible)
    .map((m) => lab.viewOf(m)).filter((v) => v && v.el && v.el.isConnected)
    .map((v) => v.el.getBoundingClientRect()).filter((r) => r.width > 0);
  const model = [...lab.player.doc.all_models].find((m) => (m.css_classes || []).includes('lab-main-view') && m.visible);
  const main = model && lab.viewOf(model);
  return {whole: figs.filter((r) => r.top >= -1 && r.bottom <= innerHeight + 1).length,
          mainTop: main && main.el ? main.el.getBoundingClientRect().top : null, h: innerHeight};
}"""
BAR_JS = """() => { const r = document.querySelector('.lab-transport').getBoundingClientRect();
  return {inView: r.top >= -1 && r.bottom <= innerHeight + 1, top: r.top, y: scrollY}; }"""


@pytest.mark.parametrize("slug", ["running-sum", "chunkwise", "hybrid"])  # the pages that play it
def test_show_it_on_the_plots_brings_them_into_view(context, server, slug):
    page = open_page(context, f"{server.url}{slug}.html").page
    button = page.get_by_role("button", name="Show it on the plots")
    button.scroll_into_view_if_needed()
    painted(page)
    assert page.evaluate(BAR_JS)["inView"] is False  # the exercise is far below the simulator
    page.evaluate("window.lab.player.seek(3)")
    button.click()
    hint = page.locator("#lab-hint")
    hint.wait_for(state="visible", timeout=60_000)
    assert t_of(page) == 0
    # the smooth scroll has ended: the page has stood still for ten frames
    page.wait_for_function("""() => new Promise((resolve) => { const y = scrollY; let n = 0;
      const next = () => requestAnimationFrame(() => (scrollY !== y ? resolve(false) : ++n >= 10 ? resolve(true) : next()));
      next(); })""", timeout=10_000)
    painted(page)
    bar = page.evaluate(BAR_JS)
    assert bar["inView"], bar
    where = page.evaluate(IN_VIEW_JS)
    assert where["whole"] >= 1 and where["mainTop"] is not None, where
    assert 0 <= where["mainTop"] < where["h"] / 2, where
    assert "Step" in hint.inner_text(), hint.inner_text()
    shot_path = shot(page, f"{slug}-show-on-plots")
    snap(page, shot_path.with_name(f"{slug}-show-on-plots-viewport.png").name)
    t0 = t_of(page)
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("(t) => window.lab.player.t === t + 1", arg=t0)
    assert not hint.is_visible()  # said once; gone with the first step
