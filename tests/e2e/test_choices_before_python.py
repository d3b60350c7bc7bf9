"""Settings the build answered ahead of time, in the built site with Python held back: each of
running-sum's presets and of hybrid's models, chosen before Python, shows its run within a frame or two (a patch of the
page on screen: ui/ahead.py, assets/js/ahead.js) and steps; the link and the CSV follow; the
page's own settings link does the same in place; Python, once let go, takes that very page over
(adopted: one document) with the chosen settings. Every page's named views step with Python held; a link with an exercise of its own steps the
default run at once, its exercise waiting for Python."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.conftest import PAGE_SLUGS, hold_python, release_python, wait_live, wait_ready, watch

PRESETS = {"worked example": ("runs/running-sum-1.json", 2), "your turn": ("runs/running-sum-2.json", 3),
           "random tokens": (None, 12)}


def preset(page, label: str):
    return page.locator(".bk-btn-group button", has_text=label).first


def run_on_screen(page) -> list:
    return page.evaluate("[lab.state.prebuilt && lab.state.prebuilt.file, lab.player.t, lab.player.tMax]")


def test_each_preset_responds_with_python_held_and_python_takes_the_choice_over(context, server, site):
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.goto(f"{server.url}running-sum.html?t=3")
    wait_ready(page)
    page.evaluate("window.stillThisPage = true")  # no page load on the way
    csv = {}
    for label in ("worked example", "your turn", "random tokens", "worked example"):
        preset(page, label).click()
        file, t_max = PRESETS[label]
        page.wait_for_function(f"(lab.state.prebuilt && lab.state.prebuilt.file) === {json.dumps(file)}")
        assert run_on_screen(page) == [file, 0, t_max], label
        assert page.evaluate("Object.keys(lab.timings.choice)") == ["load", "patch", "show"]  # (ahead.js's patch)
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function("lab.player.t === 1")
        assert ("preset=" in page.url) == (file is not None) and "t=1" in page.url
        csv[label] = page.evaluate("lab.state.prebuilt ? lab.state.prebuilt.csv : null")
    assert page.evaluate("window.stillThisPage") is True
    worked = json.loads((site / PRESETS["worked example"][0]).read_text())["csv"]
    assert csv["worked example"] == worked and worked.startswith("t,") and csv["random tokens"] is None
    assert not page.evaluate("document.body.classList.contains('lab-waiting')")
    # back to the default run, then the page's own link to the worked example: in place too
    preset(page, "random tokens").click()
    page.wait_for_function("lab.state.prebuilt === null")
    page.get_by_role("link", name=re.compile("worked example")).click()
    page.wait_for_function("lab.state.prebuilt && lab.state.prebuilt.file.endsWith('-1.json')")
    assert page.evaluate("window.stillThisPage") is True and "preset=worked+example" in page.url
    # Python takes this page over as it is: the same document, adopted, with the preset chosen
    release_python(page, held)
    wait_live(page)
    assert page.evaluate("[lab.state.adopted, Bokeh.documents.length, lab.player.tMax]") == [True, 1, 2]
    assert "preset=worked+example" in page.evaluate("lab.state.settingsQuery")
    # and a choice once live is Python's: its run as the build made it
    preset(page, "your turn").click()
    page.wait_for_function("lab.player.tMax === 3 && lab.state.settingsQuery.includes('preset=your+turn')")
    assert visit.problems() == []


# The worker's first "render" held back on the page's side until the test lets it go: Python has
# made its page from the page's first description by then.
HOLD_FIRST_RENDER_JS = """
const Real = window.Worker;
window.Worker = class extends Real {
  set onmessage(fn) {
    super.onmessage = (event) => {
      if (event.data && event.data.type === "render") window.renders = (window.renders || 0) + 1;
      if (event.data && event.data.type === "render" && !window.renderHeld) {
        window.renderHeld = () => fn(event);
        return;
      }
      fn(event);
    };
  }
};
"""


def first_render_held(context, server, slug: str):
    """The page, once Python has made its page from the first description and that render is
    held (window.renderHeld lets it go), and its Visit."""
    page = context.new_page()
    visit = watch(page)
    page.add_init_script(HOLD_FIRST_RENDER_JS)
    page.goto(f"{server.url}{slug}.html")
    wait_ready(page)
    page.wait_for_function("typeof window.renderHeld === 'function'", timeout=120_000)
    return page, visit


def test_a_choice_made_as_python_starts_is_the_page_python_takes_over(context, server):
    """A preset chosen after Python made its page from the page's first description, before the
    page took it: that render is dropped, Python makes the page again from the choice, and
    takes it over (adopted, one document)."""
    page, visit = first_render_held(context, server, "running-sum")
    preset(page, "your turn").click()
    page.wait_for_function("(lab.state.prebuilt && lab.state.prebuilt.file) === 'runs/running-sum-2.json'")
    page.evaluate("window.renderHeld()")  # the render of the defaults: dropped
    wait_live(page)
    page.wait_for_function("lab.state.settingsQuery.includes('preset=your+turn')")
    assert page.evaluate("[lab.player.tMax, lab.state.adopted, Bokeh.documents.length, window.renders]") == [3, True, 1, 2]
    assert "preset=your+turn" in page.url
    # the page made again is the one linked: a change once live is computed and comes back
    preset(page, "random tokens").click()
    page.wait_for_function("lab.player.tMax === 12 && lab.state.settingsQuery.includes('preset=random+tokens')")
    assert visit.problems() == []


STRIP_TITLES_JS = """[...Bokeh.documents[0].all_models].filter((m) => m.type === "Title" && /^[AB]: .*layers$/.test(m.text))
  .map((m) => m.text).sort()"""


def test_hybrids_models_respond_with_python_held_and_a_pair_is_pythons(context, server):
    """Hybrid's model A and model B, each chosen with the other at its default, respond before
    Python (runs/ patches); both changed together have no run: the link and the menus keep the
    pair, the page says the simulator works it out, and Python, once let go, renders it."""
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.goto(f"{server.url}hybrid.html")
    wait_ready(page)
    page.evaluate("window.stillThisPage = true")
    model_a, model_b = page.get_by_label("Model A", exact=True), page.get_by_label("Model B (to compare)", exact=True)
    assert model_a.is_enabled() and model_b.is_enabled() and not page.get_by_label("Engine", exact=True).is_enabled()
    model_a.select_option(label="Mamba-2-2.7B")
    page.wait_for_function("(lab.state.prebuilt && lab.state.prebuilt.file || '').startsWith('runs/hybrid-')")
    assert page.evaluate(STRIP_TITLES_JS) == ["A: Mamba-2-2.7B, 64 layers", "B: Llama-3-8B, 32 layers"]
    assert run_on_screen(page)[1:] == [0, 10]
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("lab.player.t === 1")
    assert "model_a=mamba-2-2.7b" in page.url and "t=1" in page.url
    # B changed too: a pair, no run of its own; the page on screen stays and steps
    model_b.select_option(label="none")
    page.wait_for_function("lab.state.ownSettings === true")
    assert "model_a=mamba-2-2.7b&model_b=none" in page.url
    assert "changed together are worked out by the simulator" in page.locator("#lab-notice-text").text_content()
    assert page.locator("#btn-csv").is_disabled()
    assert page.evaluate(STRIP_TITLES_JS) == ["A: Mamba-2-2.7B, 64 layers", "B: Llama-3-8B, 32 layers"]
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("lab.player.t === 2")
    # B back: the run on screen is the choice again; B alone: its own run
    model_b.select_option(label="Llama-3-8B")
    page.wait_for_function("lab.state.ownSettings === false")
    assert page.locator("#lab-notice-text").text_content() == "" and not page.locator("#btn-csv").is_disabled()
    model_a.select_option(label="Jamba-v0.1")
    page.wait_for_function("lab.state.prebuilt === null")
    model_b.select_option(label="none")
    page.wait_for_function("(lab.state.prebuilt && lab.state.prebuilt.file || '').startsWith('runs/hybrid-')")
    assert page.evaluate(STRIP_TITLES_JS) == ["A: Jamba-v0.1, 32 layers", "B: Llama-3-8B, 32 layers"]  # (B's strip hidden, its title kept)
    assert not page.locator("#lab-notice-text").is_visible()
    # a pair again, then Python: it renders the pair and swaps it in, one document left
    model_a.select_option(label="Falcon-H1-7B")
    page.wait_for_function("lab.state.ownSettings === true")
    release_python(page, held)
    wait_live(page)
    query = page.evaluate("lab.state.settingsQuery")
    assert "model_a=falcon-h1-7b" in query and "model_b=none" in query
    assert page.evaluate("[lab.state.adopted, Bokeh.documents.length, window.stillThisPage]") == [False, 1, True]
    assert page.evaluate(STRIP_TITLES_JS)[0] == "A: Falcon-H1-7B, 44 layers"
    assert visit.problems() == []


def test_a_choice_whose_run_cannot_be_had_is_kept_and_pythons(context, server):
    """A model's run file that does not come (a broken copy; offline before it was kept): the
    menu keeps the choice, the link says it, the page says why the plots wait, and Python,
    once let go, renders that model."""
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.route("**/runs/hybrid-*.json", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(f"{server.url}hybrid.html")
    wait_ready(page)
    page.get_by_label("Model A", exact=True).select_option(label="Nemotron-H-8B")
    page.wait_for_function("lab.state.ownSettings === true")
    assert page.evaluate("lab.state.prebuilt") is None and "model_a=nemotron-h-8b" in page.url
    assert page.get_by_label("Model A", exact=True).input_value() == "Nemotron-H-8B"  # (the menu kept it)
    assert "could not be loaded ahead of time (answered 404)" in page.locator("#lab-notice-text").text_content()
    page.get_by_role("button", name="Step", exact=True).click()  # the run on screen steps meanwhile
    page.wait_for_function("lab.player.t === 1")
    release_python(page, held)
    wait_live(page)
    assert "model_a=nemotron-h-8b" in page.evaluate("lab.state.settingsQuery")
    assert page.evaluate(STRIP_TITLES_JS)[0] == "A: Nemotron-H-8B, 52 layers"
    assert [p for p in visit.problems() if "404" not in p] == []


def test_a_pair_of_models_chosen_as_python_starts_is_rendered_by_python(context, server):
    """Model A, then B, chosen after Python made its page from the first description: the renders
    of the defaults and of model A alone are dropped, and Python renders the pair and swaps it in
    (one document); a change once live is Python's."""
    page, visit = first_render_held(context, server, "hybrid")
    page.get_by_label("Model A", exact=True).select_option(label="Mamba-2-2.7B")
    page.wait_for_function("lab.state.prebuilt !== null")
    page.get_by_label("Model B (to compare)", exact=True).select_option(label="none")
    page.wait_for_function("lab.state.ownSettings === true")
    page.evaluate("window.renderHeld()")  # the render of the defaults: dropped
    wait_live(page)
    assert page.evaluate("[lab.state.adopted, Bokeh.documents.length]") == [False, 1]
    assert "model_a=mamba-2-2.7b&model_b=none" in page.evaluate("lab.state.settingsQuery")
    page.get_by_label("Model B (to compare)", exact=True).select_option(label="Zamba2-2.7B")
    page.wait_for_function(f"JSON.stringify({STRIP_TITLES_JS}) === "
                           "JSON.stringify(['A: Mamba-2-2.7B, 64 layers', 'B: Zamba2-2.7B, 54 layers'])")
    assert "model_b=zamba2-2.7b" in page.evaluate("lab.state.settingsQuery")
    assert visit.problems() == []


@pytest.mark.parametrize("slug", PAGE_SLUGS)
def test_every_named_view_steps_with_python_held(context, server, slug):
    page = context.new_page()
    hold_python(page)
    page.goto(f"{server.url}{slug}.html")
    wait_ready(page)
    views = page.evaluate("JSON.parse(document.getElementById('lab-config').textContent).link.views")
    assert views, slug
    for view in views:
        page.goto(f"{server.url}{slug}.html?view={view}&t=1")
        wait_ready(page)
        assert page.evaluate("[lab.state.view, lab.player.t, document.body.classList.contains('lab-waiting')]") == [view, 1, False]
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function("lab.player.t === 2")


def test_a_link_with_its_own_exercise_steps_at_once_and_python_brings_the_exercise(context, server):
    """gates?ex=3 (a course's link to one exercise): the exercise number changes no run, so the
    default run steps with Python held; the default exercise's box is not shown (its numbers would
    be another exercise's); Python then shows exercise 3, at the t stepped to."""
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.goto(f"{server.url}gates.html?ex=3&t=2")
    wait_ready(page)
    assert page.evaluate("[lab.state.ownSettings, lab.state.sameRun, lab.player.t, "
                         "document.body.classList.contains('lab-waiting')]") == [False, True, 2, False]
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("lab.player.t === 3")
    hidden = "(cls) => [...lab.player.doc.all_models].filter((m) => m.css_classes && m.css_classes.includes(cls)).map((m) => m.visible)"
    roles = page.evaluate("JSON.parse(document.getElementById('lab-config').textContent).contract.roles")
    assert page.evaluate(hidden, roles["exercise"]) == [False]
    release_python(page, held)
    wait_live(page)
    assert page.evaluate("[lab.player.t, Bokeh.documents.length, lab.state.adopted]") == [3, 1, False]
    assert "ex=3" in page.evaluate("lab.state.settingsQuery") and "ex=3" in page.url
    assert page.evaluate(hidden, roles["exercise"]) == [True]
    assert visit.problems() == []
