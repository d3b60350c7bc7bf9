"""Presenters and course pages: links, embed mode, keyboard, presenter view, themes, start-up
progress, failure messages and offline use, on the built site in Chromium."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.conftest import (
    SITE,
    Server,
    open_page,
    shot,
    snapshot,
    wait_live,
    watch,
)

pytestmark = pytest.mark.e2e


def t_of(page) -> int:
    return int(page.evaluate("new URLSearchParams(location.search).get('t')"))


def test_a_link_reproduces_the_view(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    visit = open_page(ctx, f"{server.url}gates.html?d=5&beta=0.7")
    page = visit.page
    for _ in range(5):
        page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '5'")
    link, data = page.url, snapshot(page)
    query = dict(re.findall(r"([^?&=]+)=([^&]*)", link))
    assert query["d"] == "5" and query["beta"] == "0.7" and query["t"] == "5"
    assert {"rules", "scenario", "gamma", "alpha", "seed", "speed"} <= set(query)  # every knob
    ctx.close()

    fresh = browser.new_context(viewport={"width": 1280, "height": 900})
    again = open_page(fresh, link)
    assert snapshot(again.page) == data
    assert visit.problems() == [] and again.problems() == []
    fresh.close()


def test_bad_link_values_are_named_and_the_rest_applies(context, server):
    visit = open_page(context, f"{server.url}gates.html?d=99&beta=abc&alpha=0.8&t=4&bogus=1")
    page = visit.page
    shown = page.get_by_text(re.compile(r"Ignored d=99"))
    assert shown.is_visible()
    notice = shown.inner_text()
    assert "d=99" in notice and "2 to 16" in notice
    assert "beta=abc" in notice and "bogus" in notice
    assert t_of(page) == 4 and "alpha=0.8" in page.url
    shot(page, "gates-bad-link")
    assert visit.problems() == []


def test_embed_mode_shows_only_the_simulator_and_keys_work(context, server):
    visit = open_page(context, f"{server.url}running-sum.html?embed=1")
    page = visit.page
    assert not page.locator(".lab-header").is_visible()
    assert not page.locator(".lab-text").is_visible()
    assert page.locator("#lab-app").is_visible()
    page.locator("body").click(position={"x": 5, "y": 5})
    before = snapshot(page)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '1'")
    page.keyboard.press("n")
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '2'")
    assert snapshot(page) != before
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '1'")
    assert "embed=1" in page.url
    # typing in a field never steps
    seed = page.locator("input.bk-input").first
    seed.click()
    seed.press("ArrowRight")
    seed.press("n")
    page.wait_for_timeout(400)
    assert t_of(page) == 1
    shot(page, "running-sum-embed")
    assert visit.problems() == []


def test_keys_work_inside_an_iframe(context, server, tmp_path):
    # a course page on another origin (no policy of its own) embeds the page: the site's
    # frame-ancestors header lets it
    (tmp_path / "course.html").write_text(
        f'<!doctype html><link rel="icon" href="data:,"><iframe src="{server.url}fixed-state.html?embed=1" width="1000" height="800"'
        ' allow="fullscreen"></iframe>')
    course = Server(tmp_path, policy=False)
    page = context.new_page()
    visit = watch(page)
    page.goto(f"{course.url}course.html")
    frame = page.frames[1]
    frame.wait_for_function("window.labLive === true", timeout=120_000)
    frame.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    frame.wait_for_function("new URLSearchParams(location.search).get('t') === '1'")
    page.keyboard.press(" ")
    frame.wait_for_function("+new URLSearchParams(location.search).get('t') >= 3", timeout=30_000)
    page.keyboard.press(" ")
    course.close()
    assert visit.problems() == []


def test_share_gives_link_and_iframe_snippet(context, server):
    visit = open_page(context, f"{server.url}hybrid.html")
    page = visit.page
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '1'")
    page.locator("#btn-share").click()
    link = page.locator("#share-link").input_value()
    snippet = page.locator("#share-embed").input_value()
    assert "t=1" in link and "embed" not in link
    assert snippet.startswith("<iframe") and 'allow="fullscreen"' in snippet and "embed=1" in snippet
    shot(page, "hybrid-share")
    page.keyboard.press("Escape")
    assert visit.problems() == []


def test_presenter_view_and_dark_theme(context, server):
    visit = open_page(context, f"{server.url}running-sum.html?present=1")
    page = visit.page
    assert page.evaluate("document.documentElement.classList.contains('present')")
    assert not page.locator(".lab-text").is_visible()
    assert page.evaluate("window.labPyodide.runPython('import ui.app; ui.app.READY.result().present')")
    shot(page, "running-sum-present")
    light = page.evaluate("window.labPyodide.runPython('import ui.app; ui.app.READY.result().figures[0].background_fill_color')")
    page.locator("#btn-theme").click()
    theme = page.evaluate("document.documentElement.dataset.theme")
    dark = page.evaluate("window.labPyodide.runPython('import ui.app; ui.app.READY.result().figures[0].background_fill_color')")
    assert theme in ("dark", "light") and dark != light
    shot(page, f"running-sum-present-{theme}")
    page.locator("#btn-present").click()
    assert "present" not in page.url
    assert visit.problems() == []


def test_csv_download(context, server):
    visit = open_page(context, f"{server.url}running-sum.html")
    page = visit.page
    with page.expect_download() as info:
        page.locator("#btn-csv").click()
    text = open(info.value.path()).read()
    lines = text.strip().splitlines()
    assert lines[0].startswith("t,") and len(lines) > 2
    assert visit.problems() == []


def test_progress_stages_appear_during_start_up(context, server):
    page = context.new_page()
    page.add_init_script("""
      window.labStages = [];
      document.addEventListener('DOMContentLoaded', () => {
        const el = document.getElementById('lab-stage'), fig = document.getElementById('lab-figures');
        const note = () => window.labStages.push(el.textContent + ' ' + fig.textContent);
        new MutationObserver(note).observe(fig, {childList: true, characterData: true, subtree: true});
        new MutationObserver(note).observe(el, {childList: true, characterData: true, subtree: true});
      });
    """)
    visit = watch(page)
    page.goto(f"{server.url}fixed-state.html")
    wait_live(page)
    stages = page.evaluate("window.labStages")
    assert any(re.match(r"Downloading Python runtime \d+\.\d / \d+\.\d MB", s) for s in stages), stages[:5]
    assert any(re.match(r"Installing packages \d+ / \d+", s) for s in stages), stages
    assert any(s.startswith("Starting the simulator") for s in stages)
    assert not page.locator("#lab-status").is_visible()
    assert visit.problems() == []


def test_a_broken_build_says_what_went_wrong(context, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(SITE, broken)
    wheel = next((broken / "pyodide").glob("param-*.whl"))
    wheel.unlink()
    server = Server(broken)
    try:
        page = context.new_page()
        page.goto(f"{server.url}running-sum.html")
        page.wait_for_function("!!window.labFailed", timeout=120_000)
        box = page.locator("#lab-error")
        assert box.is_visible()
        assert "Could not download" in box.inner_text() and wheel.name in box.inner_text()
        assert not page.locator("#lab-status").is_visible()
        assert page.locator(".lab-text .katex").count() > 0  # the lesson text still reads well
        shot(page, "broken-build")
    finally:
        server.close()


def test_opened_from_a_file_explains_what_to_do(context):
    page = context.new_page()
    page.goto((SITE / "running-sum.html").as_uri())
    page.wait_for_function("!!window.labFailed", timeout=30_000)
    assert "make serve" in page.locator("#lab-error").inner_text()


def test_offline_after_the_first_visit(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    visit = open_page(ctx, f"{server.url}gates.html", route=False)
    page = visit.page
    # The service worker caches the whole site, then takes control of the page.
    page.wait_for_function("!!navigator.serviceWorker.controller", timeout=120_000)
    ctx.set_offline(True)
    page.reload()
    wait_live(page)
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '1'")
    other = ctx.new_page()
    other.goto(f"{server.url}hybrid.html")  # never opened, but the whole site was kept
    wait_live(other)
    ctx.close()
