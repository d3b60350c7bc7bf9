"""Keyboard and screen readers, and the figures' colours in both themes (issue 20, items 5 and 6),
on the pages built ahead of time (the shell's doing alone: Python held back): the hybrid page's
tabs are a real tab set, a heatmap's zero is the theme's neutral (not white on a dark page), and
the memory figures are in one unit. The checks each page gets (every control and group has a
plain-text name, one live region announces each step with its caption, no plot canvas is a tab
stop) and axe-core in both themes run in test_site.py's test_the_life_of_a_page, on its one visit
of the page."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.conftest import (
    open_built,
    painted,
    shot,
    snap,
)

pytestmark = pytest.mark.e2e


def built(context, server, slug: str, query: str = ""):
    """A page built ahead of time (Python held back), every part joined and painted."""
    return open_built(context, f"{server.url}{slug}.html{query}", join=True).page


# The hybrid page's two tabs (the model's JSON, a config.json), as the shell marks them.
TABS_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const list of root.querySelectorAll('[role=tablist]')) out.push({
      tabs: [...list.querySelectorAll('[role=tab]')].map((t) => ({text: t.textContent.trim(),
        selected: t.getAttribute('aria-selected'), tabindex: t.tabIndex, id: t.id,
        controls: t.getAttribute('aria-controls'), focused: root.activeElement === t})),
      panels: [...root.querySelectorAll('[role=tabpanel]')].map((p) => ({labelledby: p.getAttribute('aria-labelledby'),
        id: p.id, shown: getComputedStyle(p).visibility !== 'hidden'}))});
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return out;
}"""


def tab_set(page) -> dict:
    sets = page.evaluate(TABS_JS)
    assert len(sets) == 1, sets
    return sets[0]


def test_the_hybrid_tabs_are_a_real_tab_set(context, server):
    """Guards the tab set (assets/js/tabs.js): role tablist / tab / tabpanel, aria-selected, one
    tab stop, arrows and Home / End move the focus, Enter and Space select. Without it the
    headers were focusable divs that Enter, Space and the arrows did nothing to."""
    page = built(context, server, "hybrid")
    s = tab_set(page)
    assert [t["text"] for t in s["tabs"]] == ["Model as JSON", "Hugging Face config.json"]
    assert [(t["selected"], t["tabindex"]) for t in s["tabs"]] == [("true", 0), ("false", -1)]
    ids = {t["id"]: t["controls"] for t in s["tabs"]}
    assert sorted(p["labelledby"] for p in s["panels"]) == sorted(ids)
    assert all(ids[p["labelledby"]] == p["id"] for p in s["panels"])
    first = page.get_by_role("tab", name="Model as JSON")
    first.focus()
    t = page.evaluate("lab.player.t")
    page.keyboard.press("ArrowRight")  # moves the focus, selects nothing, steps nothing
    s = tab_set(page)
    assert [(t_["focused"], t_["selected"]) for t_ in s["tabs"]] == [(False, "true"), (True, "false")]
    assert page.evaluate("lab.player.t") == t
    page.keyboard.press("Enter")
    s = tab_set(page)
    assert [(t_["selected"], t_["tabindex"]) for t_ in s["tabs"]] == [("false", -1), ("true", 0)]
    shown = {p["labelledby"]: p["shown"] for p in s["panels"]}
    assert shown[s["tabs"][1]["id"]] and not shown[s["tabs"][0]["id"]]
    painted(page)
    page.get_by_role("tab", name="Hugging Face config.json").scroll_into_view_if_needed()
    snap(page, "hybrid-tabs.png")  # the tabs on screen, the second chosen
    page.keyboard.press("Home")
    assert [t_["focused"] for t_ in tab_set(page)["tabs"]] == [True, False]
    page.keyboard.press("ArrowLeft")  # round to the last
    assert [t_["focused"] for t_ in tab_set(page)["tabs"]] == [False, True]
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")  # round to the first
    page.keyboard.press(" ")
    s = tab_set(page)
    assert [(t_["focused"], t_["selected"]) for t_ in s["tabs"]] == [(True, "true"), (False, "false")]
    assert page.evaluate("lab.player.playing") is False  # Space was the tab's, not Play's
    page.keyboard.press("Tab")  # one tab stop: out of the tab set, into the panel
    assert page.evaluate(TABS_JS)[0]["tabs"][1]["focused"] is False


# Roles whose element must have a name; a <details> is a group Chromium names from nothing.
NAMED = {"button", "checkbox", "combobox", "textbox", "searchbox", "slider", "spinbutton", "tab",
         "radio", "switch", "listbox", "menuitem", "link", "group", "radiogroup", "toolbar", "img"}
AX_NAMES_JS = "function () { return this.tagName + ' ' + this.outerHTML.slice(0, 160); }"


def unnamed_and_marked_up(page) -> tuple[list, list, dict]:
    """(elements with no name, names with markup in them, role -> names) of the page's
    accessibility tree as Chromium computes it."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
        unnamed, marked, names = [], [], {}
        for n in nodes:
            role = n.get("role", {}).get("value")
            if n.get("ignored") or role not in NAMED:
                continue
            name = str(n.get("name", {}).get("value", "")).strip()
            names.setdefault(role, []).append(name)
            if re.search(r"<[a-z/][^>]*>|&[a-z]+;|^null$|^undefined$", name):
                marked.append((role, name))
            if not name and "backendDOMNodeId" in n:
                obj = cdp.send("DOM.resolveNode", {"backendNodeId": n["backendDOMNodeId"]})["object"]
                what = cdp.send("Runtime.callFunctionOn", {"objectId": obj["objectId"], "functionDeclaration": AX_NAMES_JS,
                                                           "returnByValue": True})["result"]["value"]
                if not what.startswith("DETAILS"):
                    unnamed.append((role, what))
        return unnamed, marked, names
    finally:
        cdp.detach()


def every_control_and_group_has_a_plain_text_name(page, slug):
    """Guards the names (assets/js/readers.js, the pages' labels): every control, group, tab and
    figure in the accessibility tree has a name, and none is read with markup or as "null"
    (a group was read "<label>Rule (step-by-step view)</label>", gates' rule picker had no name
    and its text box was "null", the hybrid page's file button had none)."""
    unnamed, marked, names = unnamed_and_marked_up(page)
    if slug == "hybrid":  # the config.json tab's controls too
        page.get_by_role("tab", name="Hugging Face config.json").click()
        painted(page)
        more = unnamed_and_marked_up(page)
        unnamed, marked = unnamed + more[0], marked + more[1]
        assert any("config.json" in n for n in more[2].get("button", [])), more[2].get("button")
        page.get_by_role("tab", name="Model as JSON").click()  # the page as it was
        painted(page)
    assert (unnamed, marked) == ([], [])
    if slug == "gates":
        assert "Rules to compare (2 to 4)" in names["combobox"]
        assert "Add a rule to compare" in names.get("searchbox", []) + names.get("textbox", [])
    if slug == "running-sum":
        assert "Token stream" in names["group"]  # the presets


FOCUSABLE_CANVAS_JS = """() => {
  let stops = 0, layers = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('.bk-layer.bk-events')) { layers++; if (el.tabIndex >= 0) stops++; }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return {stops, layers};
}"""


def no_plot_canvas_is_a_tab_stop(page):
    """Guards readers.js's canvases out of the tab order: BokehJS makes every figure's events
    layer a tab stop (for tools that take keys; no figure here has one), so the keyboard
    passed through eight empty canvases on running-sum with a faint ring on each."""
    found = page.evaluate(FOCUSABLE_CANVAS_JS)
    assert found["layers"] > 0 and found["stops"] == 0, found
    page.locator("#btn-present").click()  # the presenter view re-renders figures
    page.wait_for_function("document.documentElement.classList.contains('present')")
    painted(page)
    # the relabelling after a refresh (120 ms after it): waited for as a state, not a time
    try:
        page.wait_for_function(f"({FOCUSABLE_CANVAS_JS})().stops === 0", timeout=5_000)
    finally:
        assert page.evaluate(FOCUSABLE_CANVAS_JS)["stops"] == 0


# Every element the browser would read out on a change of its text: aria-live (not off),
# the live roles, and <output> (whose role, status, is live).
LIVE_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('[aria-live], [role=status], [role=alert], [role=log], [role=marquee], [role=timer], output')) {
      if (el.getAttribute('aria-live') === 'off') continue;
      out.push([el.id || el.tagName, el.textContent.trim()]);
    }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return out;
}"""


def one_live_region_announces_each_step_with_its_caption(page):
    """Guards one announcement a step: only #lab-say changes its text when t changes (the t
    readout, an <output>, was a second live region reading "1 / 16" on every step), and what
    it says is t and the page's caption on one line, at each step (chunkwise and random
    features said only "t = 1 of 16.")."""
    t_max = page.evaluate("lab.player.tMax")
    for t in (1, 2):
        before = dict(page.evaluate(LIVE_JS))
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function("(t) => document.getElementById('lab-say').textContent.startsWith(`t = ${t} of`)", arg=t)
        after = dict(page.evaluate(LIVE_JS))
        # (#lab-status tells the start's progress as it goes, whatever t is: not a step's)
        changed = sorted(k for k in after if after[k] != before.get(k) and k != "lab-status")
        assert changed == ["lab-say"], (changed, after)
        assert f"t = {t}" not in after.get("lab-status", "")
        said = after["lab-say"]
        head = f"t = {t} of {t_max}."
        assert said.startswith(head) and len(said) > len(head) + 10, said  # a caption follows
        assert "\n" not in said and "<" not in said, said


def luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# Each diverging scale's colour at zero (its middle), the background, the cells' inks and lines.
ZERO_JS = """() => {
  const figs = [...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m);
  const mappers = [...lab.player.doc.all_models].filter((m) => m.type === 'LinearColorMapper' && m.low === -m.high);
  const glyph = (type, prop) => [...lab.player.doc.all_models].filter((m) => m.type === type).map((m) => m[prop] && m[prop].value);
  return {background: figs[0].background_fill_color, zero: mappers.map((m) => m.palette[(m.palette.length - 1) / 2]),
          ends: mappers.map((m) => [m.palette[0], m.palette[m.palette.length - 1]]),
          inks: glyph('Text', 'text_color'), borders: glyph('Segment', 'line_color')};
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_heatmaps_zero_is_the_themes_neutral(context, server, theme):
    """Guards the theme-aware scale (ui/theme.py HEATMAP, restyle.js): in a dark embed zero
    cells were white (#f7f7f7 on #161b22), the brightest thing on the page. In each theme zero
    is within a shade of the background and the ends stand out from it; the numbers in the
    cells are legible on their cells and the lines between cells are not white in the dark."""
    page = built(context, server, "gates", f"?embed=1&theme={theme}")
    c = page.evaluate(ZERO_JS)
    assert c["zero"] and len(c["zero"]) == len(c["ends"]), c
    for zero, (low, high) in zip(c["zero"], c["ends"]):
        assert contrast(zero, c["background"]) < 1.3, (theme, zero, c["background"])
        assert min(contrast(low, c["background"]), contrast(high, c["background"])) > 4, (theme, low, high)
    zero = c["zero"][0]
    near_zero_ink = [i for i in c["inks"] if contrast(i, zero) > 7]
    assert near_zero_ink, (theme, c["inks"], zero)  # the numbers on cells near zero
    if theme == "dark":
        assert all(b.lower() != "#ffffff" for b in c["borders"]), c["borders"]
    shot(page, f"gates-embed-{theme}")


def test_the_memory_figures_are_in_one_unit(context, server):
    """Guards one unit per figure on running-sum: the memory bar chart's axis said "tokens
    stored t" while the memory plot beside it is in bytes; both say bytes now."""
    page = built(context, server, "running-sum")
    labels = page.evaluate("""() => [...lab.player.doc.all_models].filter((m) => 'renderers' in m && 'toolbar' in m
      && m.title && /^Memory/.test(m.title.text)).map((m) => [m.title.text, m.left
      .filter((a) => a.visible && 'axis_label' in a).map((a) => a.axis_label || '')])""")
    assert len(labels) == 2, labels  # the bar chart and the plot beside it
    assert all(axis and all("bytes" in a for a in axis) for _, axis in labels), json.dumps(labels)
