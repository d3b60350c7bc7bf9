"""The presenter view's scenes (issue 20, item 2) and Share's view picker (item 4), on the built
site in Chromium at 1280×720 (a projector), with Python held back: scenes are the shell's.

Each page names its views and its scenes once, in Python (Page.named_views, Page.scenes); keys
1-9 pick a scene in the presenter view, 0 the overview, and every scene fits the screen with no
clipped title or axis label and the numbers in its heatmaps' cells at 16 px or more (they scale
with the cells; they had stayed 10-11 px), one size in all of a scene's heatmaps (gates' states
had two). ``&view=`` works in the presenter view too
(``?present=1&view=cost`` had shown an empty stage), ``p`` leaves it with no Settings button
behind, ``l`` shows the lesson text there, and Share makes a link to a named view."""

from __future__ import annotations

import json

import pytest

from bench.scenes import PRESS_JS, QUIET_JS
from tests.e2e.conftest import at_rest, hold_python, painted, shot, wait_ready, watch
from tests.e2e.test_screens import fitted_after
from ui.pages import PAGES, page_class

pytestmark = pytest.mark.e2e

SCREEN = {"width": 1280, "height": 720}
SCENES = {info.slug: page_class(info).scene_names() for info in PAGES}
MIN_CELL_PX = 16  # readable from the back of a room at 1280×720

# What the screen shows: each shown figure (in view?), every title or axis label longer than
# its figure (measured in the canvas's own font: it is cut off), every axis label under 14 px
# whose plot area has room for it at 14 (shrunk for nothing), the type size of the numbers
# shown in heatmap cells, how far the shown parts reach, and whether the page scrolls.
SCENE_JS = """() => {
  const inView = (r) => r.top >= -1 && r.left >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1;
  const ruler = document.createElement('canvas').getContext('2d');
  const font = getComputedStyle(document.documentElement).getPropertyValue('--font').trim() || 'sans-serif';
  const width = (text, size, bold) => { ruler.font = `${bold ? 'bold ' : ''}${parseFloat(size)}px ${font}`; return ruler.measureText(text).width; };
  const column = (data, key) => (data instanceof Map ? data.get(key) : data[key]) || [];
  const figs = [], clipped = [], cells = [], small = [], SMALL_PX = 14;
  let parts = 0;
  for (const m of lab.player.doc.all_models) {
    if (!m.visible || !('sizing_mode' in m) || 'children' in m) continue;
    const v = lab.viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
    if (!r || r.width <= 0 || r.height <= 0) continue;
    parts += 1;
    if (!('renderers' in m && 'toolbar' in m)) continue;
    const title = (m.title && m.title.text) || '';
    figs.push({title, inView: inView(r)});
    const left = v.frame && v.frame.bbox ? v.frame.bbox.left : 0;  // a title starts where the frame does
    if (title && width(title, m.title.text_font_size, true) > r.width - left) clipped.push(`title "${title}"`);
    for (const [side, room] of [['left', r.height], ['right', r.height], ['below', r.width], ['above', r.width]]) {
      for (const a of m[side] || []) {
        if (a && a.visible !== false && a.axis_label && width(a.axis_label, a.axis_label_text_font_size) > room) clipped.push(`axis label "${a.axis_label}" of "${title}"`);
        const area = v.frame && v.frame.bbox ? (side === 'left' || side === 'right' ? v.frame.bbox.height : v.frame.bbox.width) : 0;
        if (a && a.visible !== false && a.axis_label && parseFloat(a.axis_label_text_font_size) < SMALL_PX
            && width(a.axis_label, `${SMALL_PX}px`) <= 0.9 * area) small.push(`axis label "${a.axis_label}" of "${title}" at ${a.axis_label_text_font_size}`);
      }
    }
    if (!m.renderers.some((g) => g.glyph && g.glyph.type === 'Image')) continue;
    for (const g of m.renderers) {
      if (!g.visible || !g.glyph || g.glyph.type !== 'Text' || !g.glyph.text || !g.glyph.text.field) continue;
      if (column(g.data_source.data, g.glyph.text.field).some((s) => s != null && s !== '')) cells.push([title, parseFloat(g.glyph.text_font_size.value)]);
    }
  }
  // a part wider or taller than the layout that holds it is cut off by it
  const rect = (m) => { const v = lab.viewOf(m); return v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null; };
  for (const m of lab.player.doc.all_models) {
    const outer = 'children' in m && m.visible ? rect(m) : null;
    if (!outer || outer.width <= 0) continue;
    for (const k of lab.partsOf(m)) {
      const inner = k.visible ? rect(k) : null;
      if (inner && inner.width > 0 && (inner.right > outer.right + 1 || inner.bottom > outer.bottom + 1)) {
        clipped.push(`${k.type} "${(k.title && k.title.text) || ''}" cut off by its ${m.type}`);
      }
    }
  }
  return {figs, clipped, small, cells, parts, view: lab.state.view, scale: lab.state.scale,
          scrollH: document.documentElement.scrollHeight, scrollW: document.documentElement.scrollWidth};
}"""


# The fits the shell remembered (localStorage's lab-fit:* entries: assets/js/fit-memory.js) in
# this test worker's earlier rehearsed visits, keyed as the shell keys them (page, build,
# screen, view, room, settings). A rehearsed visit starts with them, as a presenter who opened
# the page before does: its first fit is one layout and its rehearsal finds every fit known (a
# page's fits searched once a worker, not once a test: 5-8 s of both cores a visit). The search
# itself is the first visit's in each worker, and every visit's with ``rehearsed=False``, in
# test_screens.py (every page at every size) and test_scene_switch.py (a key whose fit is unknown).
REMEMBERED: dict[str, str] = {}
REMEMBERED_JS = "Object.entries(localStorage).filter(([k]) => k.startsWith('lab-fit:'))"


def presenter(browser, server, slug: str, query: str = "", *, rehearsed: bool = True):
    """The page in the presenter view at 1280×720, Python held back, fitted; ``rehearsed``: and
    every scene's fit measured ahead of time (the shell does it in idle time after the first
    fit, with the stage out of sight behind a still: a test that looked at the page meanwhile
    saw a scene being tried), or remembered from this worker's earlier visits (REMEMBERED);
    not rehearsed: a first visit, nothing remembered."""
    ctx = browser.new_context(service_workers="block", viewport=SCREEN)
    if rehearsed and REMEMBERED:
        ctx.add_init_script(f"(() => {{ try {{ for (const [k, v] of Object.entries({json.dumps(REMEMBERED)})) "
                            "if (localStorage.getItem(k) === null) localStorage.setItem(k, v); } catch (e) {} })()")
    page = ctx.new_page()
    visit = watch(page)
    visit.held = hold_python(page)  # (release_python(page, visit.held) lets Python start)
    page.goto(f"{server.url}{slug}.html?present=1{query}")
    wait_ready(page)
    fitted_after(page, 0)
    if rehearsed:
        page.wait_for_function("lab.state.rehearsed && !lab.state.rehearsing", timeout=120_000)
        REMEMBERED.update(dict(page.evaluate(REMEMBERED_JS)))
    return ctx, page, visit


def assert_scene_fits(page, scene: str, where: str) -> dict:
    """The scene is shown, fits the screen, cuts no text and its cell numbers read from afar."""
    page.get_by_role("button", name="Step", exact=True).click()  # numbers in the cells
    seen = at_rest(page, SCENE_JS)
    info = (where, seen)
    assert seen["view"] == scene and seen["parts"] > 0, info
    assert seen["scrollH"] <= SCREEN["height"] and seen["scrollW"] <= SCREEN["width"], info
    assert all(f["inView"] for f in seen["figs"]), info
    assert seen["clipped"] == [], info
    assert seen["small"] == [], info  # an axis label shrunk though its plot area has room (hybrid's: 9 px)
    assert all(px >= MIN_CELL_PX for _, px in seen["cells"]), info
    assert len({px for _, px in seen["cells"]}) <= 1, info  # one size in every heatmap of a scene
    return seen


TOP_MARGIN_PX = 16  # from the stage area's top to the first text or figure of a scene

# The top of the first thing drawn in the stage area: a text node's box (its element shown,
# not a readout's invisible sizer) or a figure's canvas, shadow roots included.
FIRST_INK_JS = """() => {
  const area = document.getElementById('lab-stage-area'), top = area.getBoundingClientRect().top;
  let first = Infinity, what = '';
  const walk = (n) => {
    if (n.nodeType === 3 && n.textContent.trim() && n.parentElement) {
      const cs = getComputedStyle(n.parentElement);
      if (cs.visibility !== 'hidden' && cs.display !== 'none') {
        const range = document.createRange(); range.selectNodeContents(n);
        for (const r of range.getClientRects()) if (r.width > 0 && r.top < first) { first = r.top; what = n.textContent.trim().slice(0, 40); }
      }
    }
    if (n.tagName === 'CANVAS') { const r = n.getBoundingClientRect(); if (r.width > 0 && r.top < first) { first = r.top; what = 'canvas'; } }
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes || []) walk(c);
  };
  walk(document.getElementById('lab-app'));
  return {gap: first - top, what};
}"""


# The gate: the page with the most figures a scene (running-sum), the most scenes (gates) and
# the widest (hybrid); the other pages' scenes take the same keys and fit in the slow lane.
SCENES_IN_GATE = ("running-sum", "gates", "hybrid")
# A scene's figures, where a scene had shown the wrong ones: running-sum's outputs had been the
# readout alone (test_scene_room.py: by its link too, and at 1366×768)
SCENE_FIGURES = {("running-sum", "outputs"): ["Output oₜ, both ways"]}
# "switching paints the new scene within one or two frames" (issue 39, item 2): the frame the
# key's restyle is painted in, and one for BokehJS's render of it
FRAMES = 2


@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if slug in SCENES_IN_GATE else [pytest.mark.slow])
                                  for slug in SCENES])
def test_keys_pick_every_scene_and_each_fits_one_screen(browser, server, slug):
    """Keys 1-9 pick the page's scenes in order (the link follows: &view=), each painted at once
    with the fit measured ahead of time (no fit searched, within FRAMES frames: issue 39 item 2),
    each fits 1280×720 with nothing cut and cell numbers ≥ 16 px; 0 goes back to the overview of the main views;
    p leaves the presenter view for the whole page with no Settings button left behind."""
    ctx, page, visit = presenter(browser, server, slug)
    page.evaluate(f"window.lab.scenes = {SCENES[slug]!r}")  # (PRESS_JS names the scene a key wants)
    page.locator("body").click(position={"x": 5, "y": 2})
    for n, scene in enumerate(SCENES[slug], start=1):
        count = page.evaluate("window.lab.state.fitted")
        page.evaluate(QUIET_JS)
        pressed = page.evaluate(PRESS_JS, str(n))
        # every fit known (measured ahead of time): shown under its name, no fit searched, painted
        # within FRAMES frames of the key (test_scene_speed.py: the same once Python is live)
        assert pressed["shown"] and pressed["tries"] == 0 and pressed["frames"] <= FRAMES, (slug, scene, pressed)
        page.wait_for_function("(v) => window.lab.state.view === v", arg=scene)
        fitted_after(page, count)
        assert f"view={scene}" in page.url
        assert page.locator("#tp-scene").input_value() == scene
        seen = assert_scene_fits(page, scene, f"{slug} scene {n} {scene}")
        if (slug, scene) in SCENE_FIGURES:
            assert [f["title"] for f in seen["figs"]] == SCENE_FIGURES[slug, scene], seen
        if slug in ("gates", "running-sum"):  # no empty band above a scene's first text or figure (test_scene_room.py)
            first = page.evaluate(FIRST_INK_JS)
            assert 0 <= first["gap"] <= TOP_MARGIN_PX, (slug, scene, first)
        shot(page, f"{slug}-scene-{n}-{scene}-1280x720")
    page.keyboard.press(str(len(SCENES[slug]) + 1))  # no such scene: nothing changes
    assert page.evaluate("window.lab.state.view") == SCENES[slug][-1]
    page.keyboard.press("0")
    page.wait_for_function("window.lab.state.view === ''")
    assert "view=" not in page.url
    page.keyboard.press("p")
    page.wait_for_function("!document.documentElement.classList.contains('present')")
    assert not page.locator("#tp-settings").is_visible()
    assert not page.locator("#tp-scene").is_visible()
    assert visit.problems() == []
    ctx.close()


def test_scene_keys_leave_the_page_alone_outside_the_presenter_view(browser, server):
    ctx = browser.new_context(service_workers="block", viewport=SCREEN)
    page = ctx.new_page()
    hold_python(page)
    page.goto(f"{server.url}running-sum.html")
    wait_ready(page)
    page.locator("body").click(position={"x": 5, "y": 2})
    page.keyboard.press("2")
    painted(page)
    assert page.evaluate("window.lab.state.view") == "" and "view=" not in page.url
    ctx.close()


# One page's in the gate: the link's view takes the path the scene keys take (test_keys_pick_…);
# the other pages' in the slow lane.
@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if i == 0 else [pytest.mark.slow])
                                  for i, slug in enumerate(SCENES)])
def test_a_view_in_the_link_opens_that_scene_in_the_presenter_view(browser, server, slug):
    """&view=<name> in the presenter view shows that scene, fitted (running-sum's cost, a part
    the overview leaves out, had shown an empty stage); leaving with p shows the whole page."""
    scene = SCENES[slug][-1]
    ctx, page, visit = presenter(browser, server, slug, f"&view={scene}")
    seen = assert_scene_fits(page, scene, f"{slug} ?view={scene}")
    assert seen["figs"], seen
    assert page.locator("#tp-scene").input_value() == scene
    page.locator("body").click(position={"x": 5, "y": 2})
    page.keyboard.press("p")
    page.wait_for_function("window.lab.state.view === ''")
    assert "view=" not in page.url and "present" not in page.url
    assert not page.locator("#tp-settings").is_visible()
    controls = "[...lab.player.doc.all_models].filter((m) => (m.css_classes || []).includes('lab-controls')).map((m) => m.visible)"
    assert page.evaluate(controls) and all(page.evaluate(controls))  # the whole page, settings shown
    assert visit.problems() == []
    ctx.close()


# With the lesson text open: its box, every figure's box on screen, and the page's scroll size.
LESSON_JS = """() => {
  const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height});
  const text = box(document.querySelector('.lab-text').getBoundingClientRect()), figs = [];
  for (const m of lab.player.doc.all_models) {
    if (!m.visible || !('renderers' in m && 'toolbar' in m)) continue;
    const v = lab.viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
    if (r && r.width > 0 && r.height > 0) figs.push(Object.assign(box(r), {title: (m.title && m.title.text) || ''}));
  }
  const stageTop = document.getElementById('lab-stage-area').getBoundingClientRect().top;
  const transport = box(document.querySelector('.lab-transport').getBoundingClientRect());
  // a display formula that scrolls sideways in its column (the widest had, cut at its right)
  const scrolls = [...document.querySelectorAll('.lab-text .katex-display')]
    .filter((d) => d.clientWidth > 0 && d.scrollWidth > d.clientWidth + 1).map((d) => d.textContent.slice(0, 30));
  return {text, figs, stageTop, transport, scrolls,
          scrollW: document.documentElement.scrollWidth, scrollH: document.documentElement.scrollHeight};
}"""
MIN_FIGURE_PX = 120  # issue 39: no figure under 120 px tall


def assert_beside_the_lesson(page, screen: dict, where: str) -> dict:
    """The lesson is open at the side (below on a phone), no figure under it or under 120 px
    tall, and the page does not scroll sideways (nor down, but on a phone)."""
    seen = at_rest(page, LESSON_JS)
    info = (where, seen)
    text, figs = seen["text"], seen["figs"]
    assert figs and text["height"] > 0, info
    assert all(f["height"] >= MIN_FIGURE_PX for f in figs), info
    if screen["width"] > 700:
        overlap = lambda f: f["right"] > text["left"] + 1  # noqa: E731
        # a column at the side, from the stage's top to the screen's foot: the header, title and
        # transport keep the screen's width (beside it the transport had wrapped, the links cut)
        assert text["left"] > screen["width"] / 2 and text["bottom"] >= screen["height"] - 1, info
        assert abs(text["top"] - seen["stageTop"]) <= 1 and seen["transport"]["right"] > text["left"], info
        assert seen["scrollW"] <= screen["width"] and seen["scrollH"] <= screen["height"], info
    else:  # a sheet below, and every figure can be scrolled up above it
        overlap = lambda f: f["bottom"] > seen["scrollH"] - text["height"] + 1  # noqa: E731
        assert text["top"] > screen["height"] / 3 and text["width"] >= screen["width"] - 1, info
    assert not [f["title"] for f in figs if overlap(f)], info
    assert seen["scrolls"] == [], info  # each display formula breaks, or shrinks, to fit its column
    return seen


@pytest.mark.parametrize("screen", [SCREEN, pytest.param({"width": 1920, "height": 1080}, marks=pytest.mark.slow),
                                    pytest.param({"width": 390, "height": 844}, marks=pytest.mark.slow)],
                         ids=["1280x720", "1920x1080", "phone"])
def test_l_shows_the_lesson_text_beside_the_figures_in_the_presenter_view(browser, server, screen):
    """The key map says l shows / hides the lesson text: in the presenter view (which hides it)
    it comes in a column at the side (issue 39 item 4: it had lain over 45 % of the stage,
    hiding the timeline and two states) and the figures are fitted into what is left, in the
    overview and every scene, none under 120 px tall; on a phone a sheet below the figures. l
    again gives the stage its room back; p shows the page's own text in its place."""
    ctx, page, visit = presenter(browser, server, "gates", rehearsed=False)
    if screen != SCREEN:
        count = page.evaluate("lab.state.fitted")
        page.set_viewport_size(screen)
        fitted_after(page, count)
    text = page.locator(".lab-text")
    assert not text.is_visible()
    page.locator("body").click(position={"x": 5, "y": 2})
    widest = max(f["right"] for f in page.evaluate(LESSON_JS)["figs"])
    count = page.evaluate("lab.state.fitted")
    page.keyboard.press("l")
    fitted_after(page, count)
    assert text.is_visible()
    painted(page)
    assert_beside_the_lesson(page, screen, "overview")
    shot(page, f"gates-present-lesson-text-{screen['width']}x{screen['height']}")
    for n, scene in enumerate(SCENES["gates"], start=1):
        count = page.evaluate("lab.state.fitted")
        page.keyboard.press(str(n))
        fitted_after(page, count)
        painted(page)
        assert_beside_the_lesson(page, screen, scene)
        shot(page, f"gates-present-lesson-{scene}-{screen['width']}x{screen['height']}")
    page.keyboard.press("0")
    page.wait_for_function("window.lab.state.view === ''")
    count = page.evaluate("lab.state.fitted")
    page.keyboard.press("l")
    fitted_after(page, count)
    assert not text.is_visible()
    painted(page)
    again = max(f["right"] for f in page.evaluate(LESSON_JS)["figs"])
    assert abs(again - widest) <= 2, (widest, again)  # the room back, as before l
    page.keyboard.press("l")
    page.keyboard.press("p")  # the page's own text comes back in its place, not at the side
    assert text.is_visible() and text.bounding_box()["x"] < screen["width"] / 2
    assert visit.problems() == []
    ctx.close()


def test_share_picks_a_named_view_and_its_link_opens_it(browser, server):
    """Share's "Show" lists the page's named views (from the page's config); picking one, in
    the presenter view or not, makes the link and the embed code for that part, and the link
    opens it."""
    ctx = browser.new_context(service_workers="block", viewport=SCREEN)
    page = ctx.new_page()
    visit = watch(page)
    hold_python(page)
    page.goto(f"{server.url}running-sum.html")
    wait_ready(page)
    page.locator("#btn-share").click()
    pick = page.locator("#share-view")
    labels = pick.locator("option").all_inner_texts()
    names = page_class(PAGES[0]).named_views
    assert labels == ["The whole page", *names.values()]
    assert pick.input_value() == "" and "view=" not in page.locator("#share-link").input_value()
    pick.select_option("cost")
    page.locator("#share-present").check()
    link = page.locator("#share-link").input_value()
    embed = page.locator("#share-embed").input_value()
    assert "view=cost" in link and "present=1" in link and "embed" not in link
    assert "view=cost" in embed and "embed=1" in embed and "present" not in embed
    shot(page, "running-sum-share-view")
    page.locator("#share-present").uncheck()
    assert "present" not in page.locator("#share-link").input_value()
    page.locator("#share-present").check()
    page.keyboard.press("Escape")
    other = ctx.new_page()
    hold_python(other)
    other.goto(link)
    wait_ready(other)
    fitted_after(other, 0)
    assert other.evaluate("document.documentElement.classList.contains('present')")
    assert_scene_fits(other, "cost", "Share's link")
    assert visit.problems() == []
    ctx.close()
