"""The zoo (zoo.html) in Chromium: live at first paint with Python, BokehJS and Panel blocked;
sorting and filtering; a row's link opens the hybrid page on that model with the same figures;
embedded, in the presenter view and on a phone (no sideways scroll); kept by the service
worker. Screenshots with LAB_SHOTS=1: zoo-1366, zoo-phone, zoo-present."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.conftest import SITE, deep_text, shot, wait_live, watch

pytestmark = pytest.mark.e2e

HEAVY = re.compile(r"/(pyodide/|static/bokeh/|static/panel/|assets/py-worker\.js)")
VISIBLE_JS = """(col) => [...document.querySelectorAll('#zoo-table tbody tr')].filter((r) => !r.hidden)
  .map((r) => { const c = r.querySelector(`[data-col="${col}"]`);
                return c ? (c.getAttribute('data-v') ?? c.getAttribute('value') ?? c.textContent) : null; })"""


def open_zoo(context, server, query: str = "", *, size=(1366, 768)):
    page = context.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    visit = watch(page)
    heavy: list[str] = []

    def block(route):
        heavy.append(route.request.url)
        route.abort()
    page.route(HEAVY, block)
    page.goto(f"{server.url}zoo.html{query}")
    page.wait_for_function("window.lab && window.lab.zoo")
    return page, visit, heavy


def test_live_at_first_paint_with_python_blocked(context, server):
    page, visit, heavy = open_zoo(context, server)
    rows = json.loads((SITE / "zoo" / "zoo.json").read_text())
    assert page.locator("#zoo-table tbody tr").count() == len(rows) == 35
    assert heavy == []  # nothing of Python, BokehJS or Panel was even asked for
    assert page.evaluate("typeof Bokeh") == "undefined"
    page.locator("thead th[data-col=state] button").click()  # it answers without Python
    assert page.locator("thead th[data-col=state]").get_attribute("aria-sort") == "descending"
    widths = page.evaluate("[...document.querySelectorAll('.zoo-bar i.ideal')].map((i) => parseFloat(i.style.width))")
    assert max(widths) == 100 and min(widths) >= 0
    assert visit.problems() == []


def test_sorting_and_filtering(context, server):
    page, visit, _ = open_zoo(context, server)
    page.locator("thead th[data-col=kv1M] button").click()
    values = [int(v) for v in page.evaluate(VISIBLE_JS, "kv1M")]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    page.locator("thead th[data-col=kv1M] button").click()  # again: the other way
    assert [int(v) for v in page.evaluate(VISIBLE_JS, "kv1M")] == sorted(values)
    page.select_option("#zoo-sort", "vllm128K")
    vllm = page.evaluate(VISIBLE_JS, "vllm128K")  # vLLM runs neither RecurrentGemma nor MiniMax-01
    numbers = [int(v) for v in vllm if v is not None]
    assert numbers == sorted(numbers) and vllm[len(numbers):] == [None, None]
    page.fill("#zoo-q", "qwen")
    names = page.evaluate(VISIBLE_JS, "name")
    rows = json.loads((SITE / "zoo" / "zoo.json").read_text())
    qwen = [r for r in rows if "qwen" in f"{r['name']} {r['family']}".lower()]  # 8: a preset, 7 published
    assert len(names) == len(qwen) == 8 and all("qwen" in n for n in names)
    assert page.locator("#zoo-count").inner_text() == "8 of 35 models shown"
    page.fill("#zoo-q", "")
    for kind in ("full", "window", "mla"):
        page.locator(f"input[name=kind][value={kind}]").uncheck()
    kinds = page.evaluate("[...document.querySelectorAll('#zoo-table tbody tr')].filter((r) => !r.hidden).map((r) => r.dataset.kinds)")
    assert kinds and all("linear" in k.split() for k in kinds) and len(kinds) < 35
    page.locator("input[name=kind][value=full]").check()
    page.select_option("#zoo-col", "kv1M")
    page.select_option("#zoo-op", "max")
    page.fill("#zoo-val", "8 GiB")
    small = [int(v) for v in page.evaluate(VISIBLE_JS, "kv1M")]
    assert small and all(v <= 8 * 2**30 for v in small)
    assert "where=kv1M:max:8" in page.evaluate("location.search")
    assert visit.problems() == []


@pytest.mark.parametrize("model", ["jamba-v0.1", "gpt-oss-120b"])
def test_a_rows_link_opens_the_hybrid_page_with_the_same_figures(context, server, model):
    page, _, _ = open_zoo(context, server)
    escaped = model.replace(".", "\\.")  # a CSS id selector with a dot in it
    row = page.locator(f"#m-{escaped}")
    shown = {col: row.locator(f"[data-col={col}]").inner_text() for col in ("kv1M", "weights")}
    ideal = row.locator("[data-col=kv1M] .ideal").inner_text()
    href = row.locator("a.zoo-open").get_attribute("href")
    assert "t=10" in href and ("model_a=jamba-v0.1" in href if model == "jamba-v0.1" else "hf=" in href)
    page.unroute(HEAVY)
    hybrid = context.new_page()
    visit = watch(hybrid)
    hybrid.goto(f"{server.url}{href}")
    wait_live(hybrid)
    text = deep_text(hybrid)
    assert "Ignored" not in hybrid.locator("body").inner_text()
    assert ideal in text, (ideal, text[:2000])
    assert shown["weights"] in text, (shown, text[:2000])
    assert visit.problems() == []


def test_embedded_presenter_and_phone(context, server):
    page, visit, _ = open_zoo(context, server, "?embed=1")
    assert not page.locator(".lab-header").is_visible() and page.locator("#zoo-table").is_visible()
    page, visit, _ = open_zoo(context, server, "?present=1")
    assert page.evaluate("document.documentElement.dataset.scene") == "kind"
    assert not page.locator("thead th[data-col=family]").is_visible()
    shot(page, "zoo-present")
    page.keyboard.press("2")
    assert page.evaluate("document.documentElement.dataset.scene") == "cache"
    first = page.evaluate(VISIBLE_JS, "name")[0]
    assert first in ("deepseek-v3.2", "glm-5", "llama-3.3-nemotron-super-49b-v1", "zamba2-2.7b")
    assert visit.problems() == []
    page, visit, _ = open_zoo(context, server, size=(1366, 768))
    shot(page, "zoo-1366")
    page, visit, _ = open_zoo(context, server, size=(390, 844))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "zoo-phone")
    assert visit.problems() == []


def test_the_service_worker_keeps_the_zoo():
    sw = (SITE / "sw.js").read_text()
    for name in ("zoo.html", "zoo/zoo.json", "zoo/gpt-oss-120b.config.json", "assets/zoo.js",
                 "assets/js/zoo-table.js", "assets/zoo.css"):
        assert f'"{name}"' in sw, name
    assert 'href="zoo.html"' in (SITE / "index.html").read_text()
    assert 'href="zoo.html"' in (SITE / "gates.html").read_text()  # the footer
