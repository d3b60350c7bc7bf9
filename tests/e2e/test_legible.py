"""Figures legible at every size the settings allow (issue 39, item 3), measured on the canvas:
every text a figure draws (fillText, recorded with the context's transform and the text's own
measured box) is taken as a box, and no two boxes of one heatmap overlap, none runs off its
canvas, and in the presenter view no plot area is under 120 px tall.

At d = 16 running-sum's output heatmap printed 16 × 2 numbers in 17 px cells, run together
into one band ("1.1.850.2075…"), and its x ticks read "10111213141 5"; random-features'
presenter view squashed the weights plot to 45 px and cut the error plot's y label
("mean |ŵⱼ − wⱼ| (key"). (d = 32, past running-sum's and gates' sliders, is held to the same rule
by tests/js/fit-text.test.js.) Also here: "Speed" stays beside its menu in an 800 px embed, and
Share's host snippet loads a file (no inline script) and says what a strict host does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import (
    PAGE_SLUGS,
    hold_python,
    open_built,
    open_page,
    painted,
    snap,
    wait_ready,
)

pytestmark = pytest.mark.e2e
ROOT_ASSETS = Path(__file__).resolve().parents[2] / "assets"

# Every fillText while window.__record is on: the text, its measured box about (x, y) and the
# context's transform, on which canvas.
RECORD_JS = """(() => {
  const texts = window.__texts = [];
  window.__record = false;
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
    if (window.__record && String(text).trim()) {
      const m = this.measureText(String(text)), t = this.getTransform();
      texts.push({canvas: this.canvas, text: String(text), x, y, left: m.actualBoundingBoxLeft,
        right: m.actualBoundingBoxRight, up: m.actualBoundingBoxAscent, down: m.actualBoundingBoxDescent,
        t: [t.a, t.b, t.c, t.d, t.e, t.f]});
    }
    return fill.call(this, text, x, y, ...rest);
  };
})();"""

# Per figure shown (its title): the boxes of what it drew, in CSS px of its canvas, the canvas's
# size, its plot area's height, and whether it is a heatmap.
BOXES_JS = """() => {
  const out = [];
  const canvases = (el) => { const found = []; const walk = (n) => { if (!n) return;
    if (n.tagName === 'CANVAS') found.push(n); if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.children || []) walk(c); }; walk(el); return found; };
  for (const m of lab.player.doc.all_models) {
    if (!('renderers' in m && 'toolbar' in m)) continue;
    const v = lab.viewOf(m);
    if (!v || !v.el || !v.el.isConnected) continue;
    const r = v.el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0) || !m.visible) continue;
    const own = new Set(canvases(v.el));
    const boxes = [];
    for (const s of window.__texts) {
      if (!own.has(s.canvas)) continue;
      const dpr = s.canvas.width / s.canvas.getBoundingClientRect().width || 1;
      const [a, b, c, d, e, f] = s.t;
      const pts = [[s.x - s.left, s.y - s.up], [s.x + s.right, s.y - s.up], [s.x - s.left, s.y + s.down], [s.x + s.right, s.y + s.down]]
        .map(([x, y]) => [(a * x + c * y + e) / dpr, (b * x + d * y + f) / dpr]);
      const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
      boxes.push({text: s.text, x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys)});
    }
    out.push({title: m.title && m.title.text, heatmap: m.renderers.some((g) => g.glyph && g.glyph.type === 'Image'),
              width: r.width, height: r.height, frame: v.frame ? v.frame.bbox.height : null, boxes});
  }
  return out;
}"""


def record_a_full_paint(page) -> list[dict]:
    """Every figure on screen painted whole (the theme turned and back: every colour changes)
    with its texts recorded; per figure its boxes (BOXES_JS)."""
    painted(page)
    page.evaluate("window.__texts.length = 0; window.__record = true")
    for _ in range(2):
        page.locator("#btn-theme").click()
        painted(page)
    page.evaluate("window.__record = false")
    return page.evaluate(BOXES_JS)


def overlaps(boxes: list[dict], slack: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of distinct texts whose boxes overlap by more than ``slack`` px both ways (one text
    painted twice, on two layers or in two paints, is one)."""
    seen, unique = set(), []
    for b in boxes:
        key = (b["text"], round(b["x0"]), round(b["y0"]))
        if key not in seen:
            seen.add(key)
            unique.append(b)
    out = []
    for i, p in enumerate(unique):
        for q in unique[i + 1:]:
            if (min(p["x1"], q["x1"]) - max(p["x0"], q["x0"]) > slack
                    and min(p["y1"], q["y1"]) - max(p["y0"], q["y0"]) > slack):
                out.append((p["text"], q["text"]))
    return out


@pytest.mark.parametrize("query, width", [("running-sum.html?d=16&t=5", 1366), ("running-sum.html?d=16&t=5", 390),
                                          ("gates.html?d=16&t=5", 1366)])
def test_no_text_of_a_heatmap_runs_into_another_at_d_16(browser, server, query, width):
    ctx = browser.new_context(service_workers="block", viewport={"width": width, "height": 900})
    try:
        ctx.add_init_script(RECORD_JS)
        page = open_page(ctx, f"{server.url}{query}").page
        page.set_viewport_size({"width": width, "height": 3000})  # every figure in view: painted
        figures = record_a_full_paint(page)
        heatmaps = [f for f in figures if f["heatmap"]]
        drawn = [f["title"] for f in heatmaps if f["boxes"]]  # (a long phone page: those in view)
        assert drawn and (query.startswith("gates") or "Output oₜ, both ways" in drawn), drawn
        bad = {f["title"]: overlaps(f["boxes"])[:6] for f in heatmaps if overlaps(f["boxes"])}
        assert bad == {}, bad
        if query.startswith("running-sum"):
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate("""() => lab.viewOf([...lab.player.doc.all_models].find((m) => m.title
              && m.title.text === 'Output oₜ, both ways')).el.scrollIntoView({block: 'center'})""")
            painted(page)
            snap(page, f"legible-running-sum-d16-{width}.png")
    finally:
        ctx.close()


def test_random_features_presenter_view_has_no_squashed_plot_or_cut_label(browser, server):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 720})
    try:
        ctx.add_init_script(RECORD_JS)
        page = open_page(ctx, f"{server.url}random-features.html?present=1&t=3").page
        page.wait_for_function("lab.state.fitted > 0 && !document.documentElement.classList.contains('fitting')",
                               timeout=60_000)
        figures = record_a_full_paint(page)
        page.wait_for_function("!document.documentElement.classList.contains('fitting')", timeout=60_000)
        painted(page)
        assert len(figures) == 2, [f["title"] for f in figures]
        assert all(f["frame"] >= 120 for f in figures), [(f["title"], f["frame"]) for f in figures]
        # side by side, the screen's width used (they had stood one above the other at the
        # smallest readable scale, the right half of the screen empty)
        boxes = page.evaluate(FIGURE_BOXES_JS)
        assert len(boxes) == 2 and boxes[1]["top"] < boxes[0]["bottom"] and boxes[1]["right"] > 0.75 * 1280, boxes
        assert page.evaluate("lab.state.scale") >= 1, boxes
        cut = [(f["title"], b["text"], round(b["x0"]), round(b["y0"]), round(b["x1"]), round(b["y1"]))
               for f in figures for b in f["boxes"]
               if b["x0"] < -1 or b["y0"] < -1 or b["x1"] > f["width"] + 1 or b["y1"] > f["height"] + 1]
        assert cut == [], (cut, [(f["title"], f["width"], f["height"]) for f in figures])
        bad = {f["title"]: overlaps(f["boxes"])[:6] for f in figures if overlaps(f["boxes"])}
        assert bad == {}, bad
        snap(page, "legible-random-features-present.png")
    finally:
        ctx.close()


def test_an_800_px_embed_keeps_speed_beside_its_menu_and_share_says_what_a_strict_host_does(browser, server):
    ctx = browser.new_context(service_workers="block", viewport={"width": 800, "height": 900})
    try:
        page = open_built(ctx, f"{server.url}running-sum.html?embed=1&view=state").page
        label = page.locator("label[for=tp-speed]").bounding_box()
        menu = page.locator("#tp-speed").bounding_box()
        assert abs((label["y"] + label["height"] / 2) - (menu["y"] + menu["height"] / 2)) < 4, (label, menu)
        assert 0 <= menu["x"] - (label["x"] + label["width"]) < 20, (label, menu)
        snap(page, "embed-800-speed.png")
    finally:
        ctx.close()
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900})
    try:
        hold_python(ctx)
        page = ctx.new_page()
        page.goto(f"{server.url}running-sum.html")
        wait_ready(page)
        page.locator("#btn-share").click()
        snippet = page.locator("#share-host").input_value()
        assert snippet == f'<script src="{server.url}assets/lab-embed-host.js" defer></script>', snippet
        assert "script-src 'self'" in page.locator("#share-host-csp").inner_text()
        assert page.locator("#share-host-file").get_attribute("href").endswith("assets/lab-embed-host.js")
        snap(page, "share-dialog.png")
        # a host page that runs only its own scripts: the snippet, pointing at its copy, sizes the frame
        frame_html = page.locator("#share-embed").input_value()
        host_js = (ROOT_ASSETS / "lab-embed-host.js").read_text()
        ctx.route(f"{server.url}course/host.js", lambda r: r.fulfill(content_type="text/javascript", body=host_js))
        ctx.route(f"{server.url}course/page.html", lambda r: r.fulfill(
            content_type="text/html", headers={"Content-Security-Policy": "script-src 'self'"},
            body=f"<!doctype html><h1>A course page</h1>{frame_html}"
                 f"{snippet.replace(server.url + 'assets/lab-embed-host.js', '/course/host.js')}<p>after</p>"))
        host = ctx.new_page()
        host.goto(f"{server.url}course/page.html")
        for _ in range(600):  # (the host's policy refuses wait_for_function's eval)
            if host.evaluate("document.querySelector('iframe').style.height") != "":
                break
            host.wait_for_timeout(100)
        assert host.evaluate("document.querySelector('iframe').style.height").endswith("px")
    finally:
        ctx.close()


# Every figure shown: its title and box (page coordinates), in the document's order.
FIGURE_BOXES_JS = """() => [...lab.player.doc.all_models].filter((m) => m.visible && 'renderers' in m && 'toolbar' in m)
  .map((m) => { const v = lab.viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
    return r && r.width > 0 && r.height > 0 ? {title: (m.title && m.title.text) || '', left: r.left, right: r.right,
      top: r.top + scrollY, bottom: r.bottom + scrollY, width: r.width, height: r.height} : null; })
  .filter(Boolean)"""
# The header's and the transport's controls that reach past the screen's sides.
PAST_THE_SIDES_JS = """() => [...document.querySelectorAll('.lab-header a, .lab-header button, .lab-transport button,'
  + ' .lab-transport select, .lab-transport input, .lab-transport label')]
  .filter((el) => { const r = el.getBoundingClientRect(); return r.width > 0 && (r.right > innerWidth + 0.5 || r.left < -0.5); })
  .map((el) => el.id || el.textContent.trim().slice(0, 20))"""


# The gate: running-sum (the most figures); the slow lane every other page. Hybrid's overview
# puts its figure before the long cost table (it had come last, below the table), chunkwise's
# token strip uses its width (its plot area had lined up with the output's below, a third of it
# lost to row names) and its labels fit their cells (contract CELL_TEXT_NAME).
@pytest.mark.parametrize("slug", [pytest.param(slug, marks=[] if slug == "running-sum" else [pytest.mark.slow])
                                  for slug in PAGE_SLUGS])
def test_a_phones_presenter_view_stacks_its_figures_as_wide_as_the_screen(browser, server, slug):
    """On a 390 x 844 phone the presenter view scrolls down: its figures one below the other,
    each as wide as the screen (it had fitted them to the screen's height: three side by side at
    a third of its width, titles cut, at scale 0.45) and none taller than the screen, at a
    readable scale; no title or tick cut or run into another; the header's buttons and the
    transport wrap within the screen (one row each had run 300 px past its right edge)."""
    ctx = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844})
    try:
        ctx.add_init_script(RECORD_JS)
        page = open_built(ctx, f"{server.url}{slug}.html?present=1&t=3").page
        page.wait_for_function("lab.state.fitted > 0 && !lab.state.rehearsing"
                               " && !document.documentElement.classList.contains('fitting')", timeout=60_000)
        figures = record_a_full_paint(page)
        page.wait_for_function("!document.documentElement.classList.contains('fitting')", timeout=60_000)
        painted(page)
        boxes = page.evaluate(FIGURE_BOXES_JS)
        info = (page.evaluate("lab.state.scale"), boxes)
        assert len(boxes) >= (1 if slug == "hybrid" else 2), info  # (hybrid's overview: one figure)
        assert page.evaluate("lab.state.scale") >= 0.75, info
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, info
        assert page.evaluate(PAST_THE_SIDES_JS) == [], info
        ordered = sorted(boxes, key=lambda b: b["top"])
        for a, b in zip(ordered, ordered[1:]):  # one column: each below the one above it
            assert b["top"] >= a["bottom"] - 1, (a, b)
        assert all(b["width"] >= 0.8 * 370 and b["height"] <= 0.6 * 844 + 1 for b in boxes), info
        cut = [(f["title"], b["text"]) for f in figures for b in f["boxes"]
               if b["x0"] < -1 or b["y0"] < -1 or b["x1"] > f["width"] + 1 or b["y1"] > f["height"] + 1]
        assert cut == [], cut
        bad = {f["title"]: overlaps(f["boxes"])[:6] for f in figures if overlaps(f["boxes"])}
        assert bad == {}, bad
        snap(page, f"legible-{slug}-present-phone.png")
    finally:
        ctx.close()
