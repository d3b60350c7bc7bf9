"""A scene key paints its scene at once (issue 39, item 2), on the built site in Chromium at
1280×720: with Python held back (the page built ahead of time) and once Python has taken over.

Scenes are views of the run already in the browser. Once the shell has measured every scene's
fit in idle time after the first fit (lab.state.rehearsed), a key restyles the page once with
the scene's known fit: no Python, no fit searched (no layout tried: lab.state.fitTries stays),
and the scene is painted, under its own name, within GOAL_MS of the key (the median of every
key pressed twice; it had taken 1.1-2.6 s, 0.2-0.6 s with the fit remembered:
bench/scenes.py prints both)."""

from __future__ import annotations

import statistics

import pytest

from bench.scenes import PRESS_JS, QUIET_JS
from tests.e2e.conftest import release_python, wait_live
from tests.e2e.test_scenes import SCENES, presenter

pytestmark = pytest.mark.e2e

GOAL_MS = 100.0  # issue 39: "a scene key paints its scene within 100 ms"
SCENE_PAGES = [slug for slug, names in SCENES.items() if names]


def press_every_scene(page, slug: str, rounds: int = 2) -> list[dict]:
    page.evaluate(f"window.lab.scenes = {SCENES[slug]!r}")
    page.locator("body").click(position={"x": 5, "y": 2})
    keys = [str(n) for n in range(1, len(SCENES[slug]) + 1)] + ["0"]
    presses = []
    for _ in range(rounds):
        for key in keys:
            page.evaluate(QUIET_JS)
            got = page.evaluate(PRESS_JS, key)
            got["key"] = key
            got["view"] = page.evaluate("lab.state.view")
            presses.append(got)
    return presses


def assert_fast(presses: list[dict], where: str) -> None:
    info = (where, [(p["key"], round(p["ms"]), p["tries"]) for p in presses])
    assert all(p["shown"] for p in presses), info
    assert all(p["tries"] == 0 for p in presses), info  # no fit searched on a key
    assert statistics.median(p["ms"] for p in presses) <= GOAL_MS, info


@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if slug in ("running-sum", "gates") else [pytest.mark.slow])
                                  for slug in SCENE_PAGES])
def test_a_scene_key_paints_its_scene_within_100_ms_before_python(browser, server, slug):
    ctx, page, visit = presenter(browser, server, slug)
    assert_fast(press_every_scene(page, slug), f"{slug}, Python held back")
    assert visit.problems() == []
    ctx.close()


@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if slug == "running-sum" else [pytest.mark.slow])
                                  for slug in SCENE_PAGES])
def test_a_scene_key_paints_its_scene_within_100_ms_once_python_is_live(browser, server, slug):
    """The same once Python has taken the page over (its document adopted or swapped in): the
    fits measured before Python still hold (same page, settings and screen)."""
    ctx, page, visit = presenter(browser, server, slug)
    release_python(page, visit.held)
    wait_live(page)
    page.wait_for_function("lab.state.rehearsed && !lab.state.rehearsing"
                           " && !document.documentElement.classList.contains('fitting')", timeout=120_000)
    assert_fast(press_every_scene(page, slug), f"{slug}, live")
    assert visit.problems() == []
    ctx.close()
