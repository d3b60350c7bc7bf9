"""Nothing moves when Python takes over (issue 20, "Every screen").

The start-up line ("Getting the settings ready…") once stood in the page's flow above the
transport and was hidden at the takeover: the transport jumped about 41 px up, and a click
aimed at Step a moment before landed on whatever had moved under the pointer. It now lies over
the screen's bottom edge (assets/lab.css) and takes no room. Guarded here: on every page the
transport's box and the Step button's are the same before and after the takeover (within
1 px), a click at Step's place from before the takeover steps, and the line says in plain words
what is waited for.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import PAGE_SLUGS, open_built, shot, t_of, wait_live

pytestmark = pytest.mark.e2e

BOXES_JS = """() => Object.fromEntries(['.lab-transport', '#tp-step', '#tp-play'].map((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [sel, [r.left, r.top, r.width, r.height].map((x) => Math.round(x * 10) / 10)];
}))"""


def close(a: list[float], b: list[float]) -> bool:
    return all(abs(x - y) <= 1 for x, y in zip(a, b))


@pytest.mark.parametrize("slug", PAGE_SLUGS)
def test_the_transport_stays_put_when_python_takes_over(context, server, slug):
    visit = open_built(context, f"{server.url}{slug}.html", join=True)
    page, held = visit.page, visit.held
    status = page.locator("#lab-status")
    assert status.is_visible()
    said = page.locator("#lab-stage").inner_text()
    before = page.evaluate(BOXES_JS)
    shot(page, f"{slug}-takeover-before")
    for route in held:
        route.continue_()
    page.unroute("**/pyodide/pyodide.asm.wasm")
    wait_live(page)
    assert not status.is_visible()
    after = page.evaluate(BOXES_JS)
    assert all(close(before[k], after[k]) for k in before), (before, after)
    # a click where Step was before the takeover is a click on Step
    x, y, w, h = before["#tp-step"]
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).id", [x + w / 2, y + h / 2])
    assert hit == "tp-step", hit
    t0 = t_of(page)
    page.mouse.click(x + w / 2, y + h / 2)
    page.wait_for_function("(t) => window.lab.player.t === t + 1", arg=t0, timeout=5_000)
    shot(page, f"{slug}-takeover-after")
    assert said == "Getting the settings ready…", said
    assert visit.problems() == []
