"""A step changes what the figures and readouts show, never the page's layout: what made
play fall short of 60 painted steps a second (bench/frames.py).

- No BokehJS view lays itself out again while stepping through a run, on any page. Hybrid's
  per-layer bars were laid out again (with the whole page, about 95 ms) whenever a step's new
  byte labels changed the axis' width: their labels are padded to one width in a monospaced
  font, which the shell's restyle had replaced by the UI font.
- A readout's new text keeps the nodes it shares with the last one (assets/js/morph.js): the
  step replaced the readout's whole content, about 160 nodes a step on running-sum, which the
  browser took out of its layout and put back.

Python is held back: the player steps the page built ahead of time as it steps the live one."""

from __future__ import annotations

from conftest import open_built, painted

# Counts every compute_layout of every BokehJS view of the page (roots, layouts, figures):
# BokehJS calls it when a view's size may have changed, and lays the figures out in it.
COUNT_LAYOUTS_JS = """() => {
  window.__layouts = [];
  const seen = new Set(), stack = [...window.Bokeh.index];
  while (stack.length) {
    const v = stack.pop();
    if (!v || seen.has(v)) continue;
    seen.add(v);
    if (typeof v.compute_layout === "function") {
      const own = v.compute_layout;
      v.compute_layout = function (...args) {
        window.__layouts.push(`${v.model.type} ${(v.model.title && v.model.title.text) || v.model.name || ""}`);
        return own.apply(this, args);
      };
    }
    for (const c of v.child_views || []) stack.push(c);
    if (v.renderer_views) for (const c of v.renderer_views.values()) stack.push(c);
  }
  return seen.size;
}"""

STEPS = 12  # hybrid's run is 10 steps (its contexts); the others step 12 of theirs


def steps_lay_out_nothing(page) -> None:
    """Each step of a run (t = 0 to 12, or to its end) puts its frame into the figures without
    BokehJS laying out any view: the figures keep their sizes and axes. On a page built ahead of
    time with every part joined (a layout when the last joins is not the steps'; hybrid's parts,
    joining a child at a time, were still joining when the count began). Run on every page by
    test_site.py's test_the_life_of_a_page (one visit a page for all it checks); the window is
    put back as it was."""
    size = page.viewport_size
    page.emulate_media(reduced_motion="reduce")  # a step jumps: its frame at once
    # every figure in view, so every one paints (one out of view holds its repaints)
    page.set_viewport_size({"width": 1280, "height": page.evaluate("document.documentElement.scrollHeight")})
    page.evaluate("window.lab.player.reset()")
    painted(page)
    views = page.evaluate(COUNT_LAYOUTS_JS)
    assert views > 5, "no BokehJS views found: the count would prove nothing"
    t_max = int(page.evaluate("window.lab.player.tMax"))
    for _ in range(min(STEPS, t_max)):
        page.evaluate("window.lab.player.step()")
        painted(page)
    assert int(page.evaluate("window.lab.player.t")) == min(STEPS, t_max)
    assert page.evaluate("window.__layouts") == []
    page.set_viewport_size(size)
    page.emulate_media(reduced_motion="no-preference")
    page.evaluate("window.lab.player.reset()")
    painted(page)


# The elements of the first readout (a Div whose text the frames set) and their text: the same
# element objects before and after a step, with the text changed in place.
READOUT_JS = """() => {
  const groups = window.lab.player.groups;
  const div = groups.map(([m, attrs]) => m).find((m) => m.type === "Div" && groups.find(([g]) => g === m)[1].some(([a]) => a === "text"));
  const view = [...window.Bokeh.index].map((r) => r.owner.find_one(div)).find(Boolean);
  window.__readout = window.__readout || [...view.markup_el.querySelectorAll("*")];
  const now = [...view.markup_el.querySelectorAll("*")];
  return { kept: now.length === window.__readout.length && now.every((e, i) => e === window.__readout[i]),
           elements: now.length, text: view.markup_el.textContent };
}"""


def test_a_step_changes_a_readout_in_place(context, server):
    """Running-sum's readout (its step's token and agreement) keeps every element across a step
    whose markup has the same shape; only the changed text differs."""
    visit = open_built(context, f"{server.url}running-sum.html", join=True)  # the readout is below
    page = visit.page
    page.emulate_media(reduced_motion="reduce")
    page.evaluate("window.lab.player.reset(); window.lab.player.step()")
    painted(page)
    before = page.evaluate(READOUT_JS)
    assert before["elements"] > 3, before
    page.evaluate("window.lab.player.step()")
    painted(page)
    after = page.evaluate(READOUT_JS)
    assert after["text"] != before["text"], "the step changed no readout: nothing was tested"
    assert after["kept"], "the readout's elements were replaced, not changed in place"
    assert visit.problems() == []
