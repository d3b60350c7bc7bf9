"""A scene key paints its scene at once (issue 39, item 2), on the built site in Chromium at
1280×720: with Python held back (the page built ahead of time) and once Python has taken over.

Scenes are views of the run already in the browser. Once the shell has measured every scene's
fit in idle time after the first fit (lab.state.rehearsed), a key restyles the page once with
the scene's known fit: no Python, no fit searched (no layout tried: lab.state.fitTries stays),
and the scene is painted, under its own name, within FRAMES animation frames of the key (it had
taken 1.1-2.6 s, 0.2-0.6 s with the fit remembered). The milliseconds are bench/scenes.py's to
measure against the 100 ms goal, printed here: no timing is asserted on a shared machine."""

from __future__ import annotations

import statistics

import pytest

from bench.scenes import PRESS_JS, QUIET_JS
from tests.e2e.conftest import release_python, wait_live
from tests.e2e.test_scenes import FRAMES, SCENES, presenter

pytestmark = pytest.mark.e2e

SCENE_PAGES = [slug for slug, names in SCENES.items() if names]


def press_round(page, slug: str) -> list[dict]:
    """Keys 1 … n and 0 once each, from a quiet frame: per key, ms to the painted frame, the
    fit's layouts it took, and the view it left on screen."""
    keys = [str(n) for n in range(1, len(SCENES[slug]) + 1)] + ["0"]
    presses = []
    for key in keys:
        page.evaluate(QUIET_JS)
        got = page.evaluate(PRESS_JS, key)
        got["key"], got["view"] = key, page.evaluate("lab.state.view")
        got["want"] = "" if key == "0" else SCENES[slug][int(key) - 1]
        presses.append(got)
    return presses


def assert_fast(page, slug: str, where: str) -> None:
    """Every press shows its scene under its own name, with no fit searched, painted within
    FRAMES animation frames of the key (the time each took is printed: bench/scenes.py measures
    it against the 100 ms goal; a test asserts no timing on a shared machine)."""
    page.evaluate(f"window.lab.scenes = {SCENES[slug]!r}")
    page.locator("body").click(position={"x": 5, "y": 2})
    presses = press_round(page, slug)
    seen = [(p["key"], p["frames"], round(p["ms"]), p["tries"]) for p in presses]
    info = (where, "key, frames, ms, fit layouts tried", seen)
    assert all(p["shown"] and p["view"] == p["want"] for p in presses), info
    assert all(p["tries"] == 0 for p in presses), info  # no fit searched on a key
    assert max(p["frames"] for p in presses) <= FRAMES, info
    print(f"{where}: key to painted frame, median {statistics.median(p['ms'] for p in presses):.0f} ms, "
          f"frames {[p['frames'] for p in presses]}")


# The gate presses every scene key of running-sum, gates and hybrid this way with Python held
# back (test_scenes.py's test_keys_pick_every_scene_and_each_fits_one_screen): here in the slow
# lane for every page, with the milliseconds printed.
@pytest.mark.slow
@pytest.mark.parametrize("slug", SCENE_PAGES)
def test_a_scene_key_paints_its_scene_at_once_before_python(browser, server, slug):
    ctx, page, visit = presenter(browser, server, slug)
    assert_fast(page, slug, f"{slug}, Python held back")
    assert visit.problems() == []
    ctx.close()


# The gate checks running-sum's live in test_stage.py (its presenter view, gone live).
@pytest.mark.slow
@pytest.mark.parametrize("slug", SCENE_PAGES)
def test_a_scene_key_paints_its_scene_at_once_once_python_is_live(browser, server, slug):
    """The same once Python has taken the page over (its document adopted or swapped in): the
    fits measured before Python still hold (same page, settings and screen)."""
    ctx, page, visit = presenter(browser, server, slug)
    release_python(page, visit.held)
    wait_live(page)
    page.wait_for_function("lab.state.rehearsed && !lab.state.rehearsing"
                           " && !document.documentElement.classList.contains('fitting')", timeout=120_000)
    assert_fast(page, slug, f"{slug}, live")
    assert visit.problems() == []
    ctx.close()
