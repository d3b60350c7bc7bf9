"""Presenters and course pages: links, embed mode, the keyboard, presenter view, themes, Share,
CSV, notices that never run markup, start-up progress, failure messages and offline use, on the
built site in Chromium."""

from __future__ import annotations

import re
import shutil
from urllib.parse import quote

import pytest

from tests.e2e.conftest import (
    SITE,
    Server,
    at_rest,
    deep_count,
    deep_text,
    hold_python,
    open_built,
    open_page,
    painted,
    release_python,
    shared_heap,
    shot,
    snapshot,
    t_of,
    wait_live,
    wait_ready,
    watch,
)
from tests.e2e.test_screens import BOXES_JS, fitted_after

pytestmark = pytest.mark.e2e

XSS = '<img src="x" onerror="window.__xss=1"><svg onload="window.__xss=2"></svg>'


def test_a_link_reproduces_the_view(browser, server):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900})
    visit = open_page(ctx, f"{server.url}running-sum.html?d=5&feature_map=identity")
    page = visit.page
    for _ in range(5):
        page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("new URLSearchParams(location.search).get('t') === '5'")
    link, data = page.url, snapshot(page)
    query = dict(re.findall(r"([^?&=]+)=([^&]*)", link))
    assert query["d"] == "5" and query["feature_map"] == "identity" and query["t"] == "5"
    assert {"preset", "tokens", "normalize", "seed"} <= set(query)  # every setting
    ctx.close()

    fresh = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900})
    again = open_page(fresh, link)
    assert t_of(again.page) == 5 and snapshot(again.page) == data
    assert visit.problems() == [] and again.problems() == []
    fresh.close()


# Each page's Python side of a link is checked for markup in tests/ui/test_every_page.py; the
# browser's side (the shell's notice, Share) is one for every page: two pages here, one with
# a seed box and sliders, one with radio groups and a model menu.
@pytest.mark.parametrize("slug", ["running-sum", "hybrid"])
def test_markup_in_a_link_is_shown_as_text_and_never_runs(context, server, slug):
    page = context.new_page()
    visit = watch(page)
    page.goto(f"{server.url}{slug}.html?{quote(XSS)}=1&seed={quote(XSS)}&t={quote(XSS)}")
    wait_live(page)
    notice = page.locator("#lab-notice-text").inner_text()
    assert XSS[:38] in notice  # shown as the text it is (shortened to 40 characters)
    painted(page)
    assert page.evaluate("window.__xss") is None
    assert deep_count(page, "img[onerror], svg[onload]") == 0
    page.locator("#btn-share").click()
    snippet = page.locator("#share-embed").input_value()
    assert "<img" not in snippet.replace("&lt;img", "")
    assert visit.outside == []
    assert page.evaluate("window.__xss") is None


def test_bad_link_values_are_named_and_the_rest_applies(context, server):
    visit = open_page(context, f"{server.url}running-sum.html?d=99&tokens=abc&seed=3&t=4&bogus=1")
    page = visit.page
    notice = page.locator("#lab-notice-text").inner_text()
    assert "d=99" in notice and "2 to 16" in notice
    assert "tokens=abc" in notice and "bogus" in notice
    assert t_of(page) == 4 and "seed=3" in page.url
    shot(page, "running-sum-bad-link")
    assert visit.problems() == []


def test_keys_do_one_thing_each(context, server):
    """→ steps once; on a focused slider it moves the slider only; Space on a focused button
    presses that button only; after dragging the timeline → advances t by exactly 1."""
    visit = open_page(context, f"{server.url}running-sum.html")
    page = visit.page
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    assert t_of(page) == 1
    page.keyboard.press("n")
    assert t_of(page) == 2
    page.keyboard.press("ArrowLeft")
    assert t_of(page) == 1
    # the timeline, dragged and then stepped with → while it has focus: one token a press
    timeline = page.locator("#tp-t")
    box = timeline.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] / 2)
    t = t_of(page)
    page.keyboard.press("ArrowRight")
    assert t_of(page) == t + 1
    # → on a focused settings slider changes the setting, not t
    t = t_of(page)
    d_before = page.evaluate("location.search.match(/[?&]d=(\\d+)/)[1]")
    page.locator("#lab-app .noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(d) => location.search.match(/[?&]d=(\\d+)/)[1] !== d", arg=d_before)
    assert t_of(page) == t
    # Space on a focused Step button presses Step, and does not start Play
    page.get_by_role("button", name="Step", exact=True).focus()
    t = t_of(page)
    page.keyboard.press(" ")
    page.wait_for_function("(t) => window.lab?.player.t === t", arg=t + 1)
    painted(page)
    assert t_of(page) == t + 1 and page.evaluate("window.lab.player.playing") is False
    # typing in a field never steps
    seed = page.locator("#lab-app input.bk-input").first
    seed.click()
    t = t_of(page)
    seed.press("ArrowRight")
    seed.press("n")
    painted(page)
    assert t_of(page) == t
    assert visit.problems() == []


def test_named_stops_and_hiding_the_lesson_text(context, server):
    visit = open_built(context, f"{server.url}running-sum.html", join=True)  # the lesson text shown
    page = visit.page
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("]")
    assert t_of(page) == 4  # t = d
    page.keyboard.press("]")
    assert t_of(page) == 5  # t = d + 1
    page.keyboard.press("[")
    assert t_of(page) == 4
    assert page.locator(".lab-text").is_visible()
    page.keyboard.press("l")
    assert not page.locator(".lab-text").is_visible()
    assert visit.problems() == []


def test_embed_mode_shows_only_the_simulator_and_keys_work(context, server):
    visit = open_built(context, f"{server.url}running-sum.html?embed=1")
    page = visit.page
    assert not page.locator(".lab-header").is_visible()
    assert not page.locator(".lab-text").is_visible()
    assert page.locator("#lab-app").is_visible()
    page.locator("body").click(position={"x": 5, "y": 5})
    before = snapshot(page)
    page.keyboard.press("ArrowRight")
    assert t_of(page) == 1 and snapshot(page) != before
    assert "embed=1" in page.url
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
    # Python held back: the keys are the shell's; while Python imports, the frame's main thread
    # is busy for seconds at a time (Play's frames wait for it: flaky on a loaded machine)
    hold_python(page)
    page.goto(f"{course.url}course.html")
    frame = page.frames[1]
    frame.wait_for_function("window.lab?.state.prerendered === true", timeout=60_000)
    frame.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    frame.wait_for_function("window.lab?.player.t === 1")
    page.keyboard.press(" ")
    frame.wait_for_function("window.lab?.player.t >= 3", timeout=30_000)
    page.keyboard.press(" ")
    course.close()
    assert visit.problems() == []


def test_share_gives_link_and_iframe_snippet(context, server):
    visit = open_built(context, f"{server.url}hybrid.html")
    page = visit.page
    page.get_by_role("button", name="Step", exact=True).click()
    page.locator("#btn-share").click()
    link = page.locator("#share-link").input_value()
    snippet = page.locator("#share-embed").input_value()
    assert "t=1" in link and "embed" not in link
    assert snippet.startswith("<iframe") and 'allow="fullscreen"' in snippet and "embed=1" in snippet
    shot(page, "hybrid-share")
    page.keyboard.press("Escape")
    assert visit.problems() == []


FIGURE_BACKGROUND_JS = """() => {
  for (const root of Bokeh.index) {
    if (!document.getElementById('lab-app').contains(root.el)) continue;
    for (const m of root.model.document.all_models) if ('renderers' in m && 'toolbar' in m) return [m.background_fill_color, m.width];
  }
}"""


def test_presenter_view_and_dark_theme_before_and_after_python(context, server):
    """Presenter view and dark theme from the link, fitted before Python; Python's takeover
    keeps both and moves no figure."""
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.goto(f"{server.url}running-sum.html?present=1&theme=dark")
    wait_ready(page)
    fitted_after(page, 0)
    before = at_rest(page, BOXES_JS)
    assert page.evaluate("document.documentElement.classList.contains('present')")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    colour, width = page.evaluate(FIGURE_BACKGROUND_JS)
    assert colour == "#161b22"  # styled before Python
    release_python(page, held)
    wait_live(page)
    # the takeover did not resize a figure (measured at rest: the scenes' fits, measured in idle
    # time, lay other scenes out behind a still; one had been caught, once, on a loaded machine)
    assert at_rest(page, BOXES_JS) == before
    assert page.evaluate(FIGURE_BACKGROUND_JS)[0] == colour  # still dark after the takeover
    width = page.evaluate(FIGURE_BACKGROUND_JS)[1]
    assert not page.locator(".lab-text").is_visible()
    shot(page, "running-sum-present-dark")
    page.locator("#btn-theme").click()
    assert page.evaluate(FIGURE_BACKGROUND_JS)[0] == "#ffffff"
    page.locator("#btn-present").click()
    assert "present" not in page.url
    assert page.evaluate(FIGURE_BACKGROUND_JS)[1] < width
    assert visit.problems() == []


def test_csv_download(context, server):
    visit = open_page(context, f"{server.url}running-sum.html")
    page = visit.page
    with page.expect_download() as info:
        page.locator("#btn-csv").click()
    lines = open(info.value.path()).read().strip().splitlines()
    assert lines[0].startswith("t,") and len(lines) > 2
    assert visit.problems() == []


@pytest.mark.parametrize("start", ["snapshot", "normal"])
def test_progress_stages_appear_during_start_up(context, server, start):
    page = context.new_page()
    if start == "normal":  # no snapshot: Pyodide starts anew and installs the packages
        page.route("**/pyodide/lab-snapshot*.bin.zst", lambda route: route.fulfill(status=404, body="none"))
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
    assert any(re.search(r"downloading the Python runtime \d+\.\d / \d+\.\d MB", s) for s in stages), stages[:5]
    installing = any(re.search(r"installing packages \d+ / \d+", s) for s in stages)
    assert installing == (start == "normal"), stages  # a snapshot holds the packages installed
    assert any("starting the simulator" in s for s in stages)
    assert page.evaluate("window.lab.timings.snapshot") == (start == "snapshot")
    assert not page.locator("#lab-status").is_visible()
    assert [p for p in visit.problems() if "lab-snapshot" not in p] == []


def test_a_broken_build_says_what_went_wrong(context, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(SITE, broken)
    wheel = next((broken / "pyodide").glob("param-*.whl"))
    wheel.unlink()
    for heap in (broken / "pyodide").glob("lab-snapshot*.bin.zst"):
        heap.unlink()  # else Python starts from it, wheels unused
    server = Server(broken)
    try:
        page = context.new_page()
        page.goto(f"{server.url}running-sum.html")
        page.wait_for_function("!!window.lab?.state.failed", timeout=120_000)
        box = page.locator("#lab-error")
        assert box.is_visible()
        assert "Could not download" in box.inner_text() and wheel.name in box.inner_text()
        assert "What still works" in box.inner_text()
        assert not page.locator("#lab-status").is_visible()
        page.wait_for_selector(".lab-text .katex", timeout=10_000)  # the lesson text still reads well
        shot(page, "broken-build")
    finally:
        server.close()


def test_opened_from_a_file_explains_what_to_do(context):
    page = context.new_page()
    page.goto((SITE / "running-sum.html").as_uri())
    page.wait_for_function("!!window.lab?.state.failed", timeout=30_000)
    assert "make serve" in page.locator("#lab-error").inner_text()


def cut_heap_site(tmp_path, slug: str):
    """The built site as links to its files, but `slug`'s changes to the shared heap cut to their first half: a deploy
    caught mid-copy, or a proxy that cuts a response and still answers 200 (fuzz N4)."""
    copy = tmp_path / "cut-site"
    copy.mkdir()
    for path in sorted(SITE.rglob("*")):
        target = copy / path.relative_to(SITE)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.name == f"lab-snapshot-{slug}.bin.zst":
            target.write_bytes(path.read_bytes()[:path.stat().st_size // 2])
        else:
            target.symlink_to(path)
    return copy


def test_offline_after_the_first_visit(browser, tmp_path):
    server = Server(cut_heap_site(tmp_path, "hybrid"))
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        offline_after_the_first_visit(ctx, server)
    finally:
        ctx.close()
        server.close()


def offline_after_the_first_visit(ctx, server):
    visit = open_page(ctx, f"{server.url}gates.html", route=False)
    page = visit.page
    # The service worker caches the whole site, then takes control of the page; the page says
    # when it is safe to unplug, in the quiet line, the footer and the help.
    page.wait_for_function("!!navigator.serviceWorker.controller", timeout=120_000)
    page.wait_for_function("window.lab?.state.offline === true", timeout=120_000)
    assert page.locator("#lab-offline").inner_text() == "Saved for offline use"
    assert "Saved for offline use" in page.locator("#lab-offline-state").inner_text()
    ctx.set_offline(True)
    page.reload()
    wait_live(page)
    # a visit from the offline copy asks the worker, which has it all
    page.wait_for_function("window.lab?.state.offline === true", timeout=30_000)
    page.get_by_role("button", name="Step", exact=True).click()
    assert t_of(page) == 1
    # of the memory snapshot the worker keeps the shared heap and the visited page's changes to it
    # only (1.2 MB a page); another page starts Python from the kept wheels (Playwright's offline mode does not reach the page's
    # Python worker's own fetches, so the cache is read here instead)
    kept = page.evaluate("""async () => {
        const cache = await caches.open((await caches.keys()).find((k) => k.startsWith('lab-')));
        return (await cache.keys()).map((r) => r.url.split('/').pop()).filter((n) => n.startsWith('lab-snapshot')).sort();
    }""")
    assert kept == ["lab-snapshot-gates.bin.zst", *shared_heap()], kept
    other = ctx.new_page()
    warnings = []
    other.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    other.goto(f"{server.url}hybrid.html")  # never opened, but the whole site was kept
    wait_live(other)
    # its changes to the heap came cut short (answered 200): Python started the normal way, and
    # the service worker kept them neither as they passed nor when the page asked it to
    assert any("snapshot could not be restored" in w for w in warnings), warnings
    kept = other.evaluate("""async () => {
        const heap = new URL('pyodide/lab-snapshot-hybrid.bin.zst', location.href).href;
        const answer = new Promise((resolve) => navigator.serviceWorker.addEventListener('message',
          (e) => { if (e.data && e.data.type === 'lab-kept' && e.data.url === heap) resolve(e.data.kept); }));
        navigator.serviceWorker.controller.postMessage({ type: 'lab-keep', url: heap });
        const cache = await caches.open((await caches.keys()).find((k) => k.startsWith('lab-')));
        return [await answer, (await cache.keys()).map((r) => r.url.split('/').pop()).filter((n) => n.startsWith('lab-snapshot')).sort()];
    }""")
    assert kept == [False, ["lab-snapshot-gates.bin.zst", *shared_heap()]], kept


def test_a_model_from_a_link_shows_its_markup_as_text_everywhere(context, server):
    """A custom model whose name and labels are markup: the readout, caption, sources, the
    strip's hover, the figures' titles and the CSV show it as text; nothing runs."""
    import base64  # noqa: PLC0415
    import json  # noqa: PLC0415

    name = '=HYPERLINK("x")<img src="x" onerror="window.__xss=1">'
    model = {"name": name, "layers": [
        {"kind": "attention", "count": 2, "kv_heads": 2, "head_dim": 64,
         "label": '<svg onload="window.__xss=2">'},
        {"kind": "recurrent", "count": 2, "state_shape": [2, 8, 8]}]}
    raw = base64.urlsafe_b64encode(json.dumps(model).encode()).decode().rstrip("=")
    page = context.new_page()
    visit = watch(page)
    page.goto(f"{server.url}hybrid.html?model_a=custom&custom={raw}")
    wait_live(page)
    assert page.locator("#lab-notice-text").inner_text() == ""
    text = deep_text(page)
    assert '<img src="x" onerror="window.__xss=1">' in text  # shown as the text it is
    page.mouse.move(0, 0)
    for box in page.locator("#lab-app canvas").all()[:6]:  # hover over the strip and plots
        b = box.bounding_box()
        if b:
            page.mouse.move(b["x"] + b["width"] * 0.2, b["y"] + b["height"] * 0.5)
            painted(page)
    with page.expect_download() as info:
        page.locator("#btn-csv").click()
    csv_text = open(info.value.path()).read()
    assert "'=HYPERLINK" in csv_text and ",=HYPERLINK" not in csv_text
    assert page.evaluate("window.__xss") is None
    assert deep_count(page, "img[src='x'], svg[onload], img[onerror]") == 0
    assert page.title().endswith("Linear Attention Lab") and "<" not in page.title()
    shot(page, "hybrid-markup-model")
    assert visit.problems() == []


# Bad models typed into the hybrid page's JSON box, and the field each one's notice names.
BAD_MODELS = [
    ('{"name": "x", "layers": [{"kind": "attention", "count": 1' + "0" * 30 + ', "kv_heads": 8, "head_dim": 128}]}',
     "layers[0].count"),
    ("[" * 20000 + "]" * 20000, "nest"),
    ('{"name": "x", "layers": [{"kind": "<img src=x onerror=window.__xss=7>"}]}', "kind"),
    ('{"name": "x", "layers": [{"kind": "attention", "kv_heads": 8, "head_dim": ' + "9" * 5000 + "}]}",
     "head_dim"),
]


def test_the_json_box_answers_bad_models_at_once_with_one_line(context, server):
    """One after another on one live page (each answered within seconds, not a frozen tab): a
    one-line notice naming the field, the last good model kept, the page still responsive."""
    visit = open_page(context, f"{server.url}hybrid.html")
    page = visit.page
    before = snapshot(page)
    box = page.locator("#lab-app textarea").first
    notice = ""
    for typed, expected in BAD_MODELS:
        box.fill(typed)
        page.get_by_role("button", name="Apply and show as model A").click()
        page.wait_for_function("([before, word]) => { const t = document.getElementById('lab-notice-text').textContent;"
                               " return t !== before && t.includes(word); }", arg=[notice, expected], timeout=5_000)
        notice = page.locator("#lab-notice-text").inner_text()
        assert "\n" not in notice and len(notice) < 400, (expected, notice)
        assert snapshot(page) == before, expected  # the last good model stays
    page.get_by_role("button", name="Step", exact=True).click()
    assert t_of(page) == 1  # still responsive
    assert page.evaluate("window.__xss") is None
    assert visit.problems() == []
