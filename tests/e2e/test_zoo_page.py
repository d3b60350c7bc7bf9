"""The zoo (zoo.html) in Chromium: live at first paint with Python, BokehJS and Panel blocked;
sorting and filtering; a row's link opens the hybrid page on that model with the same figures;
embedded, in the presenter view and on a phone (no sideways scroll); kept by the service
worker; a config.json of the reader's own joins the table (Python then, and only then).
Screenshots with LAB_SHOTS=1: zoo-1366, zoo-phone, zoo-present, zoo-yours-1366, zoo-yours-phone."""

from __future__ import annotations

import json
import re

import pytest

from sim import cache, engines, hf_config, weights
from tests.e2e.conftest import ROOT, SITE, deep_text, shot, wait_live, watch

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


SAY = "document.getElementById('zoo-config-say').textContent"
PUBLISHED = ROOT / "tests" / "sim" / "hf_configs" / "published"


def _said(page, before: str) -> str:
    """The status line once it answers (it changes from ``before`` and is not a progress line)."""
    page.wait_for_function(f"(b) => {SAY} !== b && !{SAY}.endsWith('…')", arg=before, timeout=120_000)
    return page.inner_text("#zoo-config-say")


def test_a_config_json_of_your_own_joins_the_table(context, server):
    """One visit: text that is not JSON is refused before Python starts; a file Python cannot read
    is named in one line and the table stays; a published config.json pasted joins as a row of
    yours with sim's own numbers, and one chosen as a file (with a byte-order mark) too; the
    rows sort and filter with the rest; Python is Pyodide, numpy and the project's wheel only."""
    page = context.new_page()
    page.set_viewport_size({"width": 1366, "height": 768})
    visit = watch(page)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url.rsplit("/", 1)[-1]) if "/pyodide/" in r.url else None)
    page.goto(f"{server.url}zoo.html")
    page.wait_for_function("window.lab && window.lab.zoo")
    box = page.locator("#zoo-config")
    box.fill('{"model_type": "qwen3",')
    page.click("#zoo-config-add")
    assert page.inner_text("#zoo-config-say").startswith("Not added: config.json: not valid JSON (")
    assert asked == [] and box.get_attribute("aria-invalid") == "true"  # no Python for that
    box.fill('{"model_type": "qwen3", "hidden_size": 1024}')
    page.route("**/pyodide/pyodide.js", lambda route: route.abort())  # Python cannot start: said
    page.click("#zoo-config-add")
    said = _said(page, page.inner_text("#zoo-config-say"))
    assert said.startswith("Python could not start, so nothing was added: ") and said.endswith("try again."), said
    page.unroute("**/pyodide/pyodide.js")
    visit.failed.clear()  # the file held back above
    page.click("#zoo-config-add")  # again: a new worker
    said = _said(page, said)
    assert said == "Not added: num_hidden_layers: missing; this architecture needs it", said
    assert page.locator("#zoo-table tbody tr").count() == 35 and box.input_value().endswith("1024}")
    # a published file pasted: its row is sim's, as the build's row of that file is
    path = PUBLISHED / "qwen3-30b-a3b.config.json"
    box.fill(path.read_text())
    page.click("#zoo-config-add")
    said = _said(page, said)
    config = json.loads(path.read_text())
    model, report = hf_config.from_hf_config(config)
    count = weights.parameter_count(config)
    name = f"Qwen3MoeForCausalLM, {count.total / 1e9:,.1f}B parameters"
    assert said == f"Added {name} to the table as a row of yours.", said
    row = page.locator("tr[data-source=yours]").first
    got = {c: row.locator(f"[data-col={c}]").get_attribute("data-v") for c in ("state", "kv32K", "kv1M", "weights")}
    assert got == {"state": str(cache.state_bytes(model, 1, "fp32")),
                   "kv32K": str(cache.kv_cache_bytes(model, 2**15, 1, "bf16")),
                   "kv1M": str(cache.kv_cache_bytes(model, 2**20, 1, "bf16")), "weights": str(count.shipped_bytes)}
    vllm = engines.allocate(model, 2**17, 1, "vllm", family=report["family"], kv_dtype="bf16").kv_bytes
    assert row.locator("[data-col=vllm128K]").get_attribute("value") == str(vllm)
    built = {r["id"]: r for r in json.loads((SITE / "zoo" / "zoo.json").read_text())}["qwen3-30b-a3b"]
    assert row.locator("a.zoo-open").get_attribute("href") == built["link"]  # the hybrid page, as A
    assert row.locator(".zoo-src").inner_text().startswith("your config.json")
    assert page.inner_text("#zoo-count") == "36 models (1 of yours)"
    # a file chosen, with a byte-order mark: named by the file; the same text again is one row
    page.set_input_files("#zoo-file", files=[{"name": "gpt-oss-120b.config.json", "mimeType": "application/json",
                                             "buffer": b"\xef\xbb\xbf" + (PUBLISHED / "gpt-oss-120b.config.json").read_bytes()}])
    said = _said(page, said)
    assert said == "Added gpt-oss-120b to the table as a row of yours.", said
    box.fill(path.read_text())
    page.click("#zoo-config-add")
    assert "in the table already, as " + name in page.inner_text("#zoo-config-say")
    # sorted and filtered with the rest
    page.locator("thead th[data-col=kv1M] button").click()
    values = [int(v) for v in page.evaluate(VISIBLE_JS, "kv1M")]
    assert len(values) == 37 and values == sorted(values, reverse=True)
    page.fill("#zoo-q", "gpt-oss")
    assert sorted(page.evaluate(VISIBLE_JS, "name")) == ["gpt-oss-120b", "gpt-oss-120b"]
    assert page.inner_text("#zoo-count") == "2 of 37 models shown (2 of yours)"
    page.fill("#zoo-q", "")
    # Python was the runtime, numpy and the project's wheel: no Bokeh, Panel or param
    assert {f for f in asked if f.endswith(".whl")} == {
        "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl", json.loads(page.evaluate(
            "document.getElementById('lab-config').textContent"))["worker"]["wheel"]}
    row.scroll_into_view_if_needed()
    shot(page, "zoo-yours-1366")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    row.scroll_into_view_if_needed()
    shot(page, "zoo-yours-phone")
    assert visit.problems() == []
