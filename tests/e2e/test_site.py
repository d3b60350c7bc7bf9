"""The built site: every page goes live offline-clean, steps and plays, and computes what CPython
computes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sim
from tests.e2e.conftest import PAGE_SLUGS, Server, open_page, shot, snapshot, watch

pytestmark = pytest.mark.e2e


def test_index_links_every_page(context, server):
    page = context.new_page()
    visit = watch(page)
    page.goto(server.url)
    hrefs = page.eval_on_selector_all("a.card", "els => els.map(e => e.getAttribute('href'))")
    assert hrefs == [f"{slug}.html" for slug in PAGE_SLUGS]
    shot(page, "index")
    assert visit.problems() == []


@pytest.mark.parametrize("slug", PAGE_SLUGS)
def test_page_goes_live_steps_and_plays(context, server, slug):
    visit = open_page(context, f"{server.url}{slug}.html")
    page = visit.page
    assert page.evaluate("document.body.classList.contains('pn-loading')") is False
    # the explanation's formulas are typeset (KaTeX, offline)
    assert page.locator(".lab-text .katex").count() > 0
    assert "\\(" not in page.locator(".lab-text").inner_text()
    shot(page, f"{slug}-t0")
    before = snapshot(page)
    assert before, "the page holds no plot data"

    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("location.search.includes('t=1')")
    after_step = snapshot(page)
    assert after_step != before, "Step changed no plot"

    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function("+new URLSearchParams(location.search).get('t') >= 3", timeout=30_000)
    pause = page.get_by_role("button", name="Pause", exact=True)
    if page.evaluate("window.labPyodide.runPython('import ui.app; ui.app.READY.result().state.playing')"):
        pause.click(timeout=10_000)
    t_paused = page.evaluate("new URLSearchParams(location.search).get('t')")
    assert snapshot(page) != after_step, "Play changed no plot"
    page.wait_for_timeout(600)
    assert page.evaluate("new URLSearchParams(location.search).get('t')") == t_paused, "Pause did not stop"
    shot(page, slug)
    assert visit.problems() == []


def test_numpy_in_the_browser_matches_cpython(context, server):
    visit = open_page(context, f"{server.url}{PAGE_SLUGS[0]}.html")
    code = """
import json, numpy as np, sim
rng = np.random.default_rng(7)
T, dk, dv = 24, 8, 6
q, k, v = rng.normal(size=(T, dk)), sim.l2_normalize(rng.normal(size=(T, dk))), rng.normal(size=(T, dv))
a, b = rng.uniform(0.8, 1.0, size=T), rng.uniform(0.2, 1.0, size=T)
out = {
  "gated_deltanet": sim.run("gated_deltanet", q, k, v, alpha=a, beta=b).outputs.tolist(),
  "softmax": sim.run("softmax", q, k, v).outputs.tolist(),
  "linear_elu": sim.run("linear", q, k, v, feature_map="elu+1", normalize=True).outputs.tolist(),
  "svd": np.linalg.svd(q, compute_uv=False).tolist(),
}
json.dumps(out)
"""
    browser_result = json.loads(visit.page.evaluate("code => window.labPyodide.runPython(code)", code))
    namespace: dict = {}
    exec(code.replace("json.dumps(out)", "result = json.dumps(out)"), namespace)
    cpython_result = json.loads(namespace["result"])
    for key, value in cpython_result.items():
        np.testing.assert_allclose(np.array(browser_result[key]), np.array(value), rtol=1e-12, atol=0,
                                   err_msg=key)
    assert visit.problems() == []


def test_site_works_under_a_sub_path(context, site):
    server = Server(site, prefix="/courses/attention/lab/")
    try:
        visit = open_page(context, f"{server.url}{PAGE_SLUGS[1]}.html")
        assert visit.page.evaluate("location.pathname").startswith("/courses/attention/lab/")
        assert visit.problems() == []
        nav = visit.page.eval_on_selector("a.brand", "a => a.href")
        assert nav == f"{server.url}index.html"
    finally:
        server.close()


def test_python_side_reports_versions(context, server):
    visit = open_page(context, f"{server.url}{PAGE_SLUGS[0]}.html")
    versions = visit.page.evaluate(
        "window.labPyodide.runPython('import sys, numpy, panel, bokeh; "
        "\",\".join([sys.version.split()[0], numpy.__version__, panel.__version__, bokeh.__version__])')")
    assert versions == "3.12.7,2.0.2,1.9.4,3.9.2"
    assert sim.RULES  # the same package, imported here for the comparison above


# The BokehJS view of the model with this id (a figure's, here).
VIEW_JS = """const view = (id) => {
  for (const root of Bokeh.index) {
    const model = root.model.document.get_model_by_id(id);
    if (model != null) return root.owner.find_one(model);
  }
  return null;
};"""
# Its frame's box on the page: left, top, width, height.
FRAME_BOX_JS = f"""(id) => {{ {VIEW_JS}
  const v = view(id), r = v.el.getBoundingClientRect(), f = v.frame.bbox;
  return [r.left + f.left, r.top + f.top, f.width, f.height];
}}"""


def test_hybrid_strip_hover_follows_the_context(context, server):
    """The layer strip's hover picks what a layer stores at the current context in the browser
    (nothing is sent to the strip on a step): Jamba's layer 4 holds 1 GiB of KV cache at 256K
    tokens in bf16, 2 GiB at 512K."""
    visit = open_page(context, f"{server.url}hybrid.html?t=8")
    page = visit.page
    fig_id = page.evaluate(
        "window.labPyodide.runPython('import ui.app; ui.app.READY.result().strips[\"a\"].fig.id')")
    for t, expected in ((8, "1 GiB of KV cache"), (9, "2 GiB of KV cache")):
        if t == 9:
            page.get_by_role("button", name="Step", exact=True).click()
            page.wait_for_function("window.labPy.t() === 9")
        page.mouse.move(0, 0)
        x0, y0, width, height = page.evaluate(FRAME_BOX_JS, fig_id)
        page.mouse.move(x0 + width * 4.5 / 32, y0 + height / 2)  # layer 4 of 32 (attention)
        page.get_by_text(expected, exact=True).wait_for(timeout=5_000)
    assert visit.problems() == []


# Per figure id: whether it holds its repaints, and how many times it has painted.
FIGURE_STATE_JS = f"""(ids) => {{ {VIEW_JS}
  return ids.map((id) => [view(id).model.hold_render, view(id)._render_count]);
}}"""


def test_figures_out_of_view_hold_their_repaints_and_repaint_when_seen(context, server):
    """A figure scrolled out of view is not repainted on a step (BokehJS would repaint every
    changed figure); scrolled into view it is repainted at once, at the current t."""
    visit = open_page(context, f"{server.url}running-sum.html")
    page = visit.page
    page.set_viewport_size({"width": 1000, "height": 600})
    ids = page.evaluate("Array.from(window.labPy.figures())")  # tokens first, memory in bytes last
    page.wait_for_function(f"({FIGURE_STATE_JS})({ids!r})[{len(ids) - 1}][0] === true")
    (top_held, _), (_, bottom_paints) = (
        page.evaluate(FIGURE_STATE_JS, ids)[i] for i in (0, len(ids) - 1))
    assert top_held is False
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function("window.labPy.t() === 1")
    page.wait_for_timeout(300)
    assert page.evaluate(FIGURE_STATE_JS, ids)[-1] == [True, bottom_paints]  # not repainted
    page.evaluate(f"(id) => {{ {VIEW_JS} view(id).el.scrollIntoView(); }}", ids[-1])
    page.wait_for_function(f"({FIGURE_STATE_JS})({ids!r})[{len(ids) - 1}][0] === false")
    page.wait_for_function(f"({FIGURE_STATE_JS})({ids!r})[{len(ids) - 1}][1] > {bottom_paints}")
    assert page.evaluate(FIGURE_STATE_JS, ids)[0][0] is True  # the top is out of view now
    assert visit.problems() == []
