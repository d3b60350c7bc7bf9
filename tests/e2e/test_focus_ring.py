"""Keyboard focus (issue 39, item 7): tabbing through each live page, every element that takes
the focus shows a ring of at least 2 px whose colour stands 3:1 or more against the page's
background (WCAG 2.2's non-text contrast); a number field is one tab stop (not three: its
"Increase" and "Decrease" buttons were two more, with the browser's thin ring); the hybrid
page's tabs come before their panel. Gates' rule chips and its "Add a rule" input had no ring,
hybrid's tabs a 1 px dotted grey one."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import open_page, painted, snap

pytestmark = pytest.mark.e2e

MAX_STOPS = 160  # more than any page has: the walk ends where it began, or fails here

# The element that has the focus now, through shadow roots: what it is and how its ring looks.
FOCUSED_JS = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const cs = getComputedStyle(el), r = el.getBoundingClientRect();
  const path = [];
  for (let n = el; n; n = n.parentNode || n.host) if (n.nodeType === 1) path.push(n.tagName + (n.id ? '#' + n.id : ''));
  return {what: `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${[...el.classList].join('.')}`
            + ` "${(el.getAttribute('aria-label') || el.textContent || el.value || '').trim().slice(0, 40)}"`,
          key: path.join('<') + '|' + (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 40),
          spin: el.matches('.bk-spin-btn-up, .bk-spin-btn-down'), tab: el.getAttribute('role') === 'tab',
          inPanel: !!el.closest('[role=tabpanel]') || (() => { for (let n = el; n; n = n.parentNode || n.host)
            if (n.nodeType === 1 && n.getAttribute('role') === 'tabpanel') return true; return false; })(),
          style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) || 0, colour: cs.outlineColor,
          shadow: cs.boxShadow, shown: r.width > 0 && r.height > 0,
          background: getComputedStyle(document.documentElement).backgroundColor};
}"""


def rgb(css: str) -> tuple[float, float, float] | None:
    m = re.match(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)", css or "")
    return tuple(float(x) for x in m.groups()) if m else None


def contrast(a: tuple, b: tuple) -> float:
    def lum(c):
        c = [x / 255 for x in c]
        c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ring(f: dict) -> tuple[float, float]:
    """(width in px, contrast against the page) of the focused element's ring: its outline, or
    else a box-shadow ring (its spread)."""
    background = rgb(f["background"])
    if f["style"] not in ("none", "hidden") and f["width"] > 0 and rgb(f["colour"]):
        return f["width"], contrast(rgb(f["colour"]), background)
    best = (0.0, 0.0)
    for colour, spread in re.findall(r"(rgba?\([^)]*\))\s+-?[\d.]+px\s+-?[\d.]+px\s+[\d.]+px\s+([\d.]+)px", f["shadow"] or ""):
        best = max(best, (float(spread), contrast(rgb(colour), background)))
    return best


def tab_through(page) -> list[dict]:
    """Every element Tab visits from the top of the page, once round."""
    # Tab goes on from where the focus (or the last click) was: from an element at the top of
    # the page (no stop itself), whatever was clicked before
    page.evaluate("""() => { const top = document.createElement('span'); top.id = 'tab-walk-start';
      top.tabIndex = -1; document.body.prepend(top); top.focus(); window.scrollTo(0, 0); }""")
    seen, stops = set(), []
    for _ in range(MAX_STOPS):
        page.keyboard.press("Tab")
        f = page.evaluate(FOCUSED_JS)
        if f is None:
            continue
        if f["key"] in seen:
            break
        seen.add(f["key"])
        stops.append(f)
    else:
        raise AssertionError(f"Tab did not come round in {MAX_STOPS} stops: {[s['what'] for s in stops[-5:]]}")
    page.evaluate("document.getElementById('tab-walk-start').remove()")
    return stops


def every_focusable_element_shows_a_ring(page, slug: str, theme: str) -> None:
    """On a live page (its settings respond: a disabled control takes no focus), Tab once
    round: every stop shows a ring, a number field is one stop, and the page's own cases."""
    painted(page)
    stops = tab_through(page)
    assert len(stops) >= 10, [s["what"] for s in stops]
    faint = [(s["what"], s["style"], s["width"], s["colour"], s["shadow"]) for s in stops
             if s["shown"] and not (ring(s)[0] >= 2 and ring(s)[1] >= 3)]
    assert faint == [], faint
    assert [s["what"] for s in stops if s["spin"]] == []  # a number field: one stop
    if slug == "gates":
        names = " ".join(s["what"] for s in stops)
        assert "Remove item" in names and "choices__input" in names, names  # the chips and "Add a rule"
    if slug == "hybrid":
        tabs = [i for i, s in enumerate(stops) if s["tab"]]
        in_panel = [i for i, s in enumerate(stops) if s["inPanel"]]
        assert tabs and in_panel and tabs[0] < in_panel[0], (tabs, in_panel)
        page.get_by_role("tab").first.focus()
        page.keyboard.press("ArrowRight")
        page.get_by_role("tab").nth(1).scroll_into_view_if_needed()
        snap(page, f"focus-hybrid-tab-{theme}.png")
    if slug == "gates":
        chip = page.get_by_role("button", name=re.compile("^Remove item")).first
        chip.focus()
        chip.scroll_into_view_if_needed()
        snap(page, f"focus-gates-chip-{theme}.png")


# Every page in the light theme is walked in test_site.py's test_the_life_of_a_page (one visit a
# page, gone live there); the two whose widgets had no ring in the dark theme, here.
@pytest.mark.parametrize("slug", ["gates", "hybrid"])
def test_every_focusable_element_shows_a_ring_in_the_dark_theme(context, server, slug):
    page = open_page(context, f"{server.url}{slug}.html?theme=dark").page
    every_focusable_element_shows_a_ring(page, slug, "dark")
