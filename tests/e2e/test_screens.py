"""Every screen: the presenter view fits one screen, a phone keeps the transport and the stepped
figure in view together, an embed sizes its frame through its host, print shows no controls,
(axe-core's accessibility check runs on every live page in test_site.py, on the page that
already went live there: a Python start costs seconds of both cores.)"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    PAGE_SLUGS,
    TAKE_SHOTS,
    assert_subject_on_first_screen,
    at_rest,
    hold_python,
    open_built,
    painted,
    shot,
    snap,
    wait_ready,
    watch,
)

pytestmark = pytest.mark.e2e

# Where each shown part of the page's main view ends, and whether the page scrolls.
LAYOUT_JS = """() => {
  const inView = (r) => r.top >= -1 && r.left >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1;
  const figs = [];
  for (const m of lab.player.doc.all_models) {
    if (!("renderers" in m && "toolbar" in m) || !m.visible) continue;
    const v = lab.viewOf(m);
    if (!v || !v.el || !v.el.isConnected) continue;
    const r = v.el.getBoundingClientRect();
    if (r.width > 0) figs.push({title: m.title && m.title.text, inView: inView(r), bottom: r.bottom,
                                area: r.width * r.height});
  }
  let shownBottom = 0;  // where the lowest shown figure or text ends
  for (const m of lab.player.doc.all_models) {
    if (!m.visible || !("sizing_mode" in m) || "children" in m) continue;
    const v = lab.viewOf(m);
    const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
    if (r && r.height > 0) shownBottom = Math.max(shownBottom, r.bottom);
  }
  const bar = document.querySelector('.lab-transport').getBoundingClientRect();
  return {figs, shownBottom, transport: inView(bar), scrollH: document.documentElement.scrollHeight,
          scrollW: document.documentElement.scrollWidth, h: innerHeight, w: innerWidth};
}"""


PRESENTER_SIZES = [(1280, 720), (1366, 768), (1920, 1080)]  # a projector, a laptop, a big screen

def layout_at_rest(page) -> dict:
    """LAYOUT_JS of the presenter view as the presenter sees it (conftest.at_rest)."""
    return at_rest(page, LAYOUT_JS)

# Each shown figure's box, for the takeover: the same figures at the same size before and after.
BOXES_JS = """() => [...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m && m.visible)
  .map((m) => { const v = lab.viewOf(m); const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
                return r && r.width > 0 ? [m.title && m.title.text, Math.round(r.width), Math.round(r.height)] : null; })
  .filter(Boolean)"""
# A figure's toolbar never covers its title: it sits inside the plot frame and shows on hover.
TOOLBARS_JS = """() => [...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m)
  .filter((m) => m.toolbar_location != null && !(m.toolbar_inner && m.toolbar.autohide))
  .map((m) => m.title && m.title.text)"""


def fitted_after(page, count: int) -> None:
    page.wait_for_function(f"(window.lab?.state.fitted || 0) > {count} && !window.lab.state.rehearsing"
                           " && !document.documentElement.classList.contains('fitting')", timeout=60_000)


# The gate fits every page on a projector with the shipped font, running-sum and gates (the most
# and the tallest figures) at every size, and running-sum with the font blocked on a projector;
# the slow lane the rest of the matrix, every page × every size × both fonts.
EVERY_SIZE = ("running-sum", "gates")
FITS = [pytest.param(slug, font, sizes, id=f"{slug}-{font}-{sizes}",
                     marks=[] if (slug in EVERY_SIZE and font == "shipped" and sizes == "every-size")
                     or (font, sizes) == ("shipped", "projector")
                     or (slug, font, sizes) == ("running-sum", "blocked", "projector") else [pytest.mark.slow])
        for slug in PAGE_SLUGS for font in ("shipped", "blocked")
        for sizes in (("every-size",) if slug in EVERY_SIZE and font == "shipped" else ("projector", "every-size"))]


@pytest.mark.parametrize(("slug", "font", "sizes"), FITS)
def test_presenter_view_fits_one_screen_at_every_size(browser, server, slug, font, sizes):
    """At 1280×720, 1366×768 and 1920×1080 the main figures and the transport are on screen,
    the page does not scroll and the figures fill it, at a readable scale (never a thumbnail),
    with the site's own font and with it blocked (the system's fonts: the fit measures what is
    drawn). The fit is the shell's: Python is held back (its takeover, which adopts the page on
    screen, moves nothing: test_presenter.py). ``sizes``: every size, or the projector's alone."""
    screens = PRESENTER_SIZES if sizes == "every-size" else PRESENTER_SIZES[:1]
    w0, h0 = PRESENTER_SIZES[0]
    ctx = browser.new_context(service_workers="block", viewport={"width": w0, "height": h0})
    page = ctx.new_page()
    visit = watch(page)
    hold_python(page)
    if font == "blocked":
        page.route("**/static/fonts/*", lambda route: route.abort("aborted"))
    page.goto(f"{server.url}{slug}.html?present=1")
    wait_ready(page)
    fitted_after(page, 0)
    assert page.evaluate(TOOLBARS_JS) == []
    for i, (w, h) in enumerate(screens):
        if i:
            count = page.evaluate("window.lab.state.fitted")
            page.set_viewport_size({"width": w, "height": h})
            fitted_after(page, count)
        page.get_by_role("button", name="Step", exact=True).click()
        layout = layout_at_rest(page)
        where = (w, h, layout)
        assert layout["scrollH"] <= layout["h"] and layout["scrollW"] <= layout["w"], where
        assert layout["transport"], where
        assert layout["figs"] and all(f["inView"] for f in layout["figs"]), where
        # filled: the figures (or a readout beside them) reach into the last fifth of the screen,
        # and the figures cover a good part of it
        assert max(layout["shownBottom"], *(f["bottom"] for f in layout["figs"])) > 0.8 * h, where
        assert sum(f["area"] for f in layout["figs"]) > 0.3 * w * h, where
        # readable: the figures at least at the fit's smallest scale (their type does not shrink)
        assert page.evaluate("window.lab.state.scale") >= 0.75, where
        loaded = page.evaluate("[...document.fonts].some((f) => f.family.includes('Lab Sans') && f.status === 'loaded')")
        assert loaded is (font == "shipped"), where
        # the header is one row and the settings are folded away behind one button
        assert page.locator(".lab-header").bounding_box()["height"] < 60
        assert page.locator("#tp-settings").is_visible()
        shot(page, f"{slug}-present-{w}x{h}-{font}-font")
    # the folded settings unfold beside the main views, and fold again
    controls = "[...lab.player.doc.all_models].filter((m) => (m.css_classes || []).includes('lab-controls')).map((m) => m.visible)"
    assert page.evaluate(controls) == [False]
    settings = page.locator("#tp-settings")
    settings.click()
    page.wait_for_function(f"{controls}.every(Boolean)", timeout=5_000)
    assert page.locator("#lab-app .noUi-handle").first.is_visible()
    assert settings.inner_text() == "Hide settings"
    count = page.evaluate("window.lab.state.fitted")
    settings.click()
    fitted_after(page, count)
    assert page.evaluate(controls) == [False]
    page.keyboard.press("t")  # the dark theme: the same layout, dark figures
    page.wait_for_function("document.documentElement.dataset.theme === 'dark'")
    assert layout_at_rest(page)["scrollH"] <= screens[-1][1]
    shot(page, f"{slug}-present-dark-{screens[-1][0]}x{screens[-1][1]}")
    assert visit.problems() == []  # a blocked font too: no error (lab.js drops the family)
    ctx.close()


def test_the_presenter_fit_is_remembered_for_the_next_visit(browser, server):
    """A fit is a search of up to a dozen layouts; the same page and screen fit again in one."""
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 720})
    seen = []
    for _ in range(2):
        page = ctx.new_page()
        hold_python(page)  # the fit happens before Python, on the page built ahead of time
        page.goto(f"{server.url}gates.html?present=1")
        wait_ready(page)
        fitted_after(page, 0)
        seen.append((page.evaluate("window.lab.state.fitTries"), page.evaluate("window.lab.state.scale"),
                     page.evaluate(BOXES_JS)))
        page.close()
    (tries0, scale0, boxes0), (tries1, scale1, boxes1) = seen
    assert tries0 > 3 and tries1 == 1, seen
    assert (scale1, boxes1) == (scale0, boxes0)
    ctx.close()


PHONE = {"width": 390, "height": 844}  # a phone held upright (CSS px)


def phone_page(browser, server, slug: str):
    """(context, page): a page on a phone held upright, built ahead of time (the shell's layout
    alone, Python held back), every part joined, one step taken."""
    ctx = browser.new_context(service_workers="block", viewport=PHONE, is_mobile=True, has_touch=True)
    page = open_built(ctx, f"{server.url}{slug}.html", join=True).page
    page.get_by_role("button", name="Step", exact=True).click()
    return ctx, page


def test_phone_keeps_the_transport_and_the_stepped_figure_in_view(browser, server):
    ctx, page = phone_page(browser, server, "running-sum")
    layout = page.evaluate(LAYOUT_JS)
    assert layout["transport"] and layout["scrollW"] <= layout["w"], layout
    state = [f for f in layout["figs"] if f["title"] == "State S (after token t)"]
    assert state and state[0]["inView"], layout  # the page's subject, which every step changes
    shot_path = shot(page, "running-sum-phone")
    assert shot_path.exists() or not TAKE_SHOTS  # taken with LAB_SHOTS=1
    page.mouse.wheel(0, 700)  # scrolled down: the transport stays at the top
    page.wait_for_function("scrollY > 0")
    painted(page)
    assert page.evaluate(LAYOUT_JS)["transport"]
    snap(page, shot_path.with_name("running-sum-phone-scrolled.png").name)
    ctx.close()


def test_an_embed_reports_its_height_and_the_host_resizes_it(context, server):
    hold_python(context)  # the shell's doing, on the page built ahead of time (in the iframe too)
    page = context.new_page()
    page.goto(f"{server.url}running-sum.html")
    wait_ready(page)
    page.locator("#btn-share").click()
    frame_html = page.locator("#share-embed").input_value()
    host_js = page.locator("#share-host").input_value()
    assert 'height="' in frame_html and host_js.endswith('assets/lab-embed-host.js" defer></script>')
    page.close()
    context.route(f"{server.url}host.html", lambda r: r.fulfill(
        content_type="text/html", body=f"<!doctype html><h1>A course page</h1>{frame_html}{host_js}<p>after</p>"))
    host = context.new_page()
    host.goto(f"{server.url}host.html")
    frame = host.frame_locator("iframe")
    frame.locator("#tp-step").wait_for()
    host.wait_for_function("document.querySelector('iframe').style.height !== ''", timeout=60_000)
    inner = host.frames[1]
    inner.wait_for_function("window.lab?.state.prerendered === true")
    inner.wait_for_function("window.lab?.timings.joined", timeout=10_000)
    painted(inner)
    host.wait_for_function("""() => { const f = document.querySelector('iframe');
      const h = Math.ceil(f.contentDocument.querySelector('.lab-main').getBoundingClientRect().height);
      return Math.abs(f.getBoundingClientRect().height - h) <= 1; }""", timeout=10_000)
    want = inner.evaluate("Math.ceil(document.querySelector('.lab-main').getBoundingClientRect().height)")
    got = host.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
    assert abs(got - want) <= 2, (got, want)
    full = frame.locator("#lab-full")
    assert full.is_visible() and "embed" not in full.get_attribute("href")
    shot(host, "running-sum-embed-in-host")


def test_a_named_view_embeds_one_part(context, server):
    page = context.new_page()
    hold_python(page)  # the shell's doing, on the page built ahead of time
    page.goto(f"{server.url}running-sum.html?embed=1&view=state")
    wait_ready(page)
    # rendered alone first; the rest of the page joins after it, hidden
    page.wait_for_function("window.lab?.timings.joined", timeout=10_000)
    painted(page)
    titles = [f["title"] for f in page.evaluate(LAYOUT_JS)["figs"]]
    assert "State S (after token t)" in titles and not any(t and t.startswith("Tokens") for t in titles)
    built = page.evaluate("[...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m)"
                          ".map((m) => { const v = lab.viewOf(m); return !!(v && v.el && v.el.isConnected); })")
    assert len(built) == 9 and all(built), built  # every figure of the page, the outputs heatmap included
    assert page.locator("#tp-step").is_visible()
    shot(page, "running-sum-embed-view-state")
    # the settings unfold beside the view
    page.locator("#tp-settings").click()
    page.locator("#lab-app .noUi-handle").first.wait_for(state="visible", timeout=10_000)
    painted(page)
    titles = [f["title"] for f in page.evaluate(LAYOUT_JS)["figs"]]
    assert "State S (after token t)" in titles and not any(t and t.startswith("Tokens") for t in titles)


def test_print_shows_no_controls_and_the_link(context, server):
    page = context.new_page()
    hold_python(page)  # the shell's doing, on the page built ahead of time
    page.goto(f"{server.url}running-sum.html?theme=dark&t=3")
    wait_ready(page)
    page.emulate_media(media="print")
    page.locator(".lab-transport").wait_for(state="hidden")
    painted(page)
    for sel in (".lab-header", ".lab-transport"):
        assert not page.locator(sel).is_visible()
    controls = page.evaluate("[...lab.player.doc.all_models].filter((m) => (m.css_classes || [])"
                             ".includes('lab-controls')).map((m) => m.visible)")
    assert controls == [False]
    ref = page.locator("#lab-print-ref").inner_text()
    assert "t = 3" in ref and "running-sum.html" in ref
    bg = page.evaluate("[...lab.player.doc.all_models].find((m) => 'toolbar' in m).background_fill_color")
    assert bg == "#ffffff"  # light, though the screen is dark
    shot(page, "running-sum-print")
    page.emulate_media(media="screen")
    page.locator(".lab-transport").wait_for(state="visible")
    assert page.locator(".lab-transport").is_visible()


@pytest.mark.parametrize("slug", PAGE_SLUGS)
def test_every_page_fits_a_phone_without_sideways_scroll(browser, server, slug):
    """At 390 px nothing is wider than the screen: the document's width is the viewport's
    (a phone's browser widens its layout viewport to the widest content, so the width is
    checked against 390, not innerWidth), with every part of the page joined, the plots'
    readouts and the lesson text included (hybrid's config.json row, 461 px, now wraps); the
    page's subject starts on the first screen (ui/page.py Page.subject)."""
    ctx, page = phone_page(browser, server, slug)
    painted(page)
    assert_subject_on_first_screen(page, slug)  # and its first screen shows what it is about
    width = page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    shot(page, f"{slug}-phone")
    assert width <= PHONE["width"], (slug, width)
    ctx.close()


# Every toggle button of the page's settings: its box, its settings column's, and whether its
# label overflows it.
BUTTONS_JS = """() => { const out = [];
  const walk = (root, box) => { for (const el of root.querySelectorAll('*')) {
      let b = box;
      if (el.classList && el.classList.contains('lab-controls')) b = el.getBoundingClientRect();
      if (el.matches && el.matches('.bk-btn-group .bk-btn')) { const r = el.getBoundingClientRect();
        out.push({text: el.textContent.trim(), right: r.right, column: b ? b.right : null,
                  clipped: el.scrollWidth > el.clientWidth + 1}); }
      if (el.shadowRoot) walk(el.shadowRoot, b); } };
  walk(document, null); return out; }"""


@pytest.mark.parametrize("slug", ["running-sum", "fixed-state"])
def test_every_toggle_buttons_label_is_whole(context, server, slug):
    """The presets' third button read "your tur": cut by its settings column."""
    page = context.new_page()
    hold_python(page)  # the page's layout, the shell's alone
    page.goto(f"{server.url}{slug}.html")
    wait_ready(page)
    painted(page)
    buttons = page.evaluate(BUTTONS_JS)
    assert len(buttons) >= 4, buttons
    for b in buttons:
        assert not b["clipped"] and (b["column"] is None or b["right"] <= b["column"] + 1), b


SHOWN_JS = """() => [...lab.player.doc.all_models]
  .filter((m) => ('renderers' in m && 'toolbar' in m) || (m.type || '').includes('Slider'))
  .map((m) => { const v = lab.viewOf(m); const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
                return [(m.title && m.title.text) || m.title || m.type, !!(m.visible && r && r.width > 0)]; })"""


def test_the_worked_example_chosen_live_shows_what_its_link_shows(context, server):
    """Choosing "worked example" on the live page once hid the k/v/q tokens plot and left the
    Tokens T slider (a later variable in the layout's code shadowed the slider)."""
    from tests.e2e.conftest import open_page  # noqa: PLC0415

    page = open_page(context, f"{server.url}running-sum.html").page
    page.get_by_role("button", name="worked example", exact=True).click()
    page.wait_for_function("lab.player.tMax === 2", timeout=30_000)
    painted(page)
    chosen = dict(page.evaluate(SHOWN_JS))
    assert chosen["Tokens: key k, value v, query q"] and not chosen["Tokens T"], chosen
    # the first screen, while this tab is in front (a background tab paints no frame, and its
    # screenshot waited for one until it timed out)
    snap(page, "running-sum-worked-example-live.png")
    linked = open_page(context, f"{server.url}running-sum.html?preset=worked+example").page
    painted(linked)
    assert dict(linked.evaluate(SHOWN_JS)) == chosen
