"""The hybrid-models page without a browser: a run per setting, frame t shown as the player does,
every byte from sim.cache, and nothing a user writes ever read as markup."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from bokeh.models import HoverTool
from helpers import columns, same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lanes import examples

from sim import cache, engines, gpus, weights
from sim.presets import PRESET_HF_CONFIGS
from ui.pages.hybrid import DEFAULT_CUSTOM, JAMBA_DICT, HybridPage, read_model
from ui.urlstate import apply_query, link_contract, to_query
from ui.views.hybrid import CONTEXTS, CURVE_TOKENS, KIND_LABELS, format_model_json

GiB = 2**30
H100_BYTES = 81_559 * 2**20  # as the device reports it (sim.gpus.GPU_MIB)
ROOT = Path(__file__).resolve().parents[2]
XSS = '<img src=x onerror="window.__xss=1">'
ESCAPED = "&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;"


def weights_of(key: str, dtype: str) -> int:
    return weights.weight_bytes(weights.parameter_count(PRESET_HF_CONFIGS[key]), dtype)


def snapshot(page: HybridPage) -> dict:
    """Everything the page shows right now: every plot's data, markers, ranges, titles, texts."""
    out = columns({"memory": page.memory.source, "now": page.memory.now,
                   **{f"strip_{k}": v.source for k, v in page.strips.items()},
                   **{f"bars_{k}": v.source for k, v in page.bars.items()}})
    out["marker"] = page.memory.marker.location
    out["y"] = (page.memory.fig.y_range.start, page.memory.fig.y_range.end)
    out["texts"] = [page.readout.div.text, page.caption.div.text, page.sources.div.text,
                    page.verdict.div.text, page.lines.div.text]
    out["gpu"] = list(page.memory.gpu.data["y"])
    out["figs"] = [(v.fig.title.text, v.fig.visible, v.fig.y_range.end)
                   for v in (*page.strips.values(), *page.bars.values())]
    out["alt"] = [page.alt.get(v.fig.id) for v in (page.memory, *page.strips.values(),
                                                    *page.bars.values())]
    return out


@pytest.fixture
def page(build) -> HybridPage:
    return build(HybridPage)


def shown(page) -> str:
    """The readout's text at t (without its invisible sizer)."""
    return page.run.data["readout"][page.t]


def test_defaults_and_the_context_grid(page):
    assert (page.model_a, page.model_b, page.kv_dtype, page.state_dtype, page.sequences) == (
        "jamba-v0.1", "llama-3-8b", "bf16", "fp32", 1)
    assert CONTEXTS[0] == 1024 and CONTEXTS[-1] == 2**20 and page.run.t_max == 10
    assert "1,024 tokens" in shown(page)
    assert "seed" not in page.settings()  # the Seed box changed nothing: gone
    assert [n for n, _ in page.named_stops()] == ["A's cache passes its state", "4K", "128K", "1M"]


def test_memory_curves_are_sims(page):
    """The lines are what vLLM allocates (sim.engines), the ideal total (sim.cache) beside them,
    and weights + 2 GiB overhead + the allocation against the GPU's 0.92 × 80 GiB."""
    data = page.memory.source.data
    assert list(data["x"]) == list(CURVE_TOKENS)
    assert CURVE_TOKENS[0] == 1024 and CURVE_TOKENS[-1] == 2**20
    run = engines.prepare("jamba-v0.1", "vllm", family="jamba", kv_dtype="bf16")
    vllm = [run(int(x), 1) for x in CURVE_TOKENS]
    np.testing.assert_array_equal(data["a_kv_cache_bytes"], [a.kv_bytes for a in vllm])
    np.testing.assert_array_equal(data["a_state_bytes"], [a.state_bytes for a in vllm])
    np.testing.assert_array_equal(data["a_total_bytes"], [a.total_bytes for a in vllm])
    weights = weights_of("jamba-v0.1", "bf16")
    np.testing.assert_array_equal(data["a_gpu_bytes"],
                                  [a.total_bytes + weights + 2 * GiB for a in vllm])
    jamba = cache.memory_curve("jamba-v0.1", CURVE_TOKENS)
    np.testing.assert_array_equal(data["a_ideal_bytes"], jamba["total_bytes"])
    llama = cache.memory_curve("llama-3-8b", CURVE_TOKENS)
    blocks = -(-CURVE_TOKENS // 16) * 16  # Llama under vLLM: whole blocks of 16 tokens
    np.testing.assert_array_equal(data["b_kv_cache_bytes"], blocks * 32 * 2 * 8 * 128 * 2)
    assert np.all(data["b_kv_cache_bytes"] >= llama["kv_cache_bytes"])
    assert np.all(np.isnan(data["b_state_bytes"]))  # Llama keeps no state: no line on a log axis
    # Jamba's state under vLLM: 28 layers · 2 pages (prefix caching) · one 80-token page each
    assert data["a_state_bytes"][0] == data["a_state_bytes"][-1] == 28 * 2 * 80 * 4096
    assert page.memory.gpu.data["y"] == [-(-H100_BYTES * 92 // 100)] * 2  # the GPU line
    page.engine = "ideal"  # the ideal is the allocation itself: no second line
    np.testing.assert_array_equal(page.memory.source.data["a_total_bytes"], jamba["total_bytes"])
    assert np.all(np.isnan(page.memory.source.data["a_ideal_bytes"]))
    assert page.memory.gpu.data["y"] == [H100_BYTES] * 2


def test_stepping_sweeps_the_context_jamba_4_gib_at_256k(page):
    before = snapshot(page)
    page.show(8)
    assert CONTEXTS[8] == 262144
    assert not same(before, snapshot(page))
    assert page.memory.marker.location == 262144
    kv = page.bars["a"].source.data["kv"]
    assert [i for i, b in enumerate(kv) if b] == [4, 12, 20, 28]  # i mod 8 = 4
    assert kv[4] == GiB and sum(kv) == 4 * GiB == cache.kv_cache_bytes("jamba-v0.1", 262144)
    assert page.bars["a"].source.data["state"][0] == 622592  # (8192·16 + 8192·3)·4 bytes
    assert page.bars["a"].fig.title.text == "A: bytes per layer at 256K"
    assert page.bars["a"].fig.y_range.end == pytest.approx(GiB * 1.05)
    assert page.strips["a"].source.data["stores"][4] == "1 GiB of KV cache"
    assert page.strips["a"].source.data["stores"][0] == "608 KiB of fixed state"
    text = shown(page)
    assert "262,144 tokens" in text and "256K" in text
    assert "0.125×" in text and "32 GiB if all attention" in text
    assert text in page.readout.div.text
    vllm = engines.allocate("jamba-v0.1", 262144, 1, "vllm", family="jamba")
    assert vllm.kv_bytes in page.memory.now.data["y"]
    assert vllm.total_bytes in page.memory.now.data["y"]
    assert page.caption.div.text.startswith(
        "<div style='display:grid'><div style='grid-area:1/1;min-width:0'><b>At 256K tokens</b>: "
        "A: KV cache 4 GiB (+2 GiB), state 16.62 MiB; the cache is 246.4× the state.")


def test_show_is_a_pure_function_of_t(page, build):
    other = build(HybridPage)
    for t in range(7):
        page.show(t)
    other.show(6)
    assert same(snapshot(page), snapshot(other))
    page.show(99)  # clamped to the last context: 1M
    assert page.t == 10 and page.memory.marker.location == 2**20


def test_every_figure_has_a_text_alternative_per_step(page):
    page.show(8)
    figs = [page.memory.fig, *(v.fig for v in (*page.strips.values(), *page.bars.values()))]
    assert all(page.alt[f.id] for f in figs)
    assert ("At 262,144 tokens: A on the GPU 102.1 GiB (KV cache 4 GiB, state 17.5 MiB as "
            "allocated; ideal total 4.016 GiB); B on the GPU 48.96 GiB (KV cache 32 GiB as "
            "allocated; ideal total 32 GiB).") in page.alt[page.memory.fig.id]
    assert "with the 73.28 GiB of GPU memory the engine may use" in page.alt[page.memory.fig.id]
    assert "4 full attention, 28 linear / SSM" in page.alt[page.strips["a"].fig.id]
    assert "KV cache 4 GiB in 4 layers" in page.alt[page.bars["a"].fig.id]


SETTING_VALUES = {"model_a": "qwen3-next-80b-a3b", "model_b": "kimi-linear-48b-a3b",
                  "custom": {"name": "tiny", "layers": [{"kind": "mlp"}]}, "kv_dtype": "fp8",
                  "state_dtype": "bf16", "sequences": 16, "kv_block": 1000,
                  "custom_config": PRESET_HF_CONFIGS["jamba-v0.1"], "engine": "llama.cpp",
                  "weight_dtype": "int4", "gpu": "MI300X-192GB", "gpu_gib": 24.5,
                  "overhead_gib": 10.5, "prefix_caching": False, "speculative_tokens": 3,
                  "custom_b": {"name": "tiny", "layers": [{"kind": "mlp"}]},
                  "custom_config_b": PRESET_HF_CONFIGS["jamba-v0.1"]}
# each custom model shows in its own slot (issue 38: B's is no longer A's)
SETTING_BUILDS = {"custom": {"model_a": "custom"}, "gpu_gib": {"gpu": "custom"},
                  "custom_config": {"model_a": "custom", "custom": JAMBA_DICT},
                  "custom_b": {"model_b": "custom"},
                  "custom_config_b": {"model_b": "custom", "custom_b": JAMBA_DICT}}


@pytest.mark.parametrize("name", [n for n in HybridPage.settings() if n not in HybridPage.no_recompute])
def test_every_setting_changes_the_picture(build, name):
    page = build(HybridPage, **SETTING_BUILDS.get(name, {}))
    page.show(5)
    before = snapshot(page)
    setattr(page, name, SETTING_VALUES[name])
    assert getattr(page, name) == SETTING_VALUES[name] and page.notice == ""
    assert not same(before, snapshot(page))


def test_the_custom_model_when_shown(page):
    page.model_a = "custom"
    page.custom = {"name": "tiny", "layers": [{"kind": "attention", "kv_heads": 1, "head_dim": 64}]}
    assert page.strips["a"].fig.title.text == "A: tiny, 1 layers"
    assert list(page.bars["a"].source.data["kv"]) == [2 * 64 * 2 * 1024]
    assert "custom model, edited on this page" in page.sources.div.text


def test_dtypes_and_batch_scale_as_sim_says(page):
    page.show(4)
    page.param.update(kv_dtype="fp8", state_dtype="bf16", sequences=8)
    report = cache.cache_report("jamba-v0.1", CONTEXTS[4], 8, "fp8", "bf16")
    assert sum(page.bars["a"].source.data["kv"]) == report["kv_cache_bytes"]
    assert sum(page.bars["a"].source.data["state"]) == report["state_bytes"]
    assert cache.format_bytes(report["total_bytes"]) in shown(page)
    page.engine = "sglang"  # page size 1: the KV cache exactly as the ideal's
    curve = cache.memory_curve("llama-3-8b", CURVE_TOKENS, 8, "fp8", "bf16")
    np.testing.assert_array_equal(page.memory.source.data["b_kv_cache_bytes"],
                                  curve["kv_cache_bytes"])


def test_model_b_none_hides_its_views(page):
    page.model_b = "none"
    assert not page.strips["b"].fig.visible and not page.bars["b"].fig.visible
    assert all(not r.visible for r in page.memory.renderers["b"])
    assert np.all(np.isnan(page.memory.source.data["b_total_bytes"]))
    assert "B:" not in shown(page)
    page.model_b = "mamba-2-2.7b"
    assert page.strips["b"].fig.visible
    assert "none (no attention layer)" in shown(page)


def test_layer_strip_kinds_parallel_and_windows(page):
    page.model_b = "falcon-h1-7b"
    strip = page.strips["b"].source.data
    assert len(strip["layer"]) == 88 and max(strip["layer"]) == 43
    assert list(strip["row"][:2]) == [0, 1] and list(strip["layer"][:2]) == [0, 0]
    assert set(strip["kind"]) == {"full", "recurrent"}
    bars = page.bars["b"].source.data
    assert bars["kv"][0] > 0 and bars["state"][0] > 0  # one bar holds both
    page.model_a = "recurrentgemma-2b"
    assert list(page.strips["a"].source.data["kind"][:3]) == ["recurrent", "recurrent", "window"]
    assert KIND_LABELS["window"] in [i.label.value for i in page.strips["a"].legend.items]
    page.show(10)  # the window caps the cache: 2048 tokens held at 1M
    assert page.bars["a"].source.data["kv"][2] == 2 * 1 * 256 * 2048 * 2
    page.model_a = "nemotron-h-8b"
    assert "mlp" in page.strips["a"].source.data["kind"]
    page.model_a = "kimi-linear-48b-a3b"
    kinds = page.strips["a"].source.data["kind"]
    assert [i for i, k in enumerate(kinds) if k == "mla"] == [3, 7, 11, 15, 19, 23, 26]


def test_csv_has_a_header_and_the_right_rows(page):
    rows = list(csv.DictReader(io.StringIO(page.csv())))
    assert list(rows[0]) == ["section", "slot", "model", "context_tokens", "layer", "kind",
                             "label", "kv_cache_bytes", "state_bytes", "total_bytes"]
    context = [r for r in rows if r["section"] == "context"]
    layers = [r for r in rows if r["section"] == "layer"]
    assert len(context) == 2 * len(CONTEXTS)
    assert len(layers) == (32 + 32) * len(CONTEXTS)  # every layer at every context
    jamba_256k = next(r for r in context if r["slot"] == "A" and r["context_tokens"] == "262144")
    assert int(jamba_256k["kv_cache_bytes"]) == 4 * GiB
    assert int(jamba_256k["total_bytes"]) == cache.cache_report("jamba-v0.1", 262144)["total_bytes"]
    layer4 = next(r for r in layers if r["slot"] == "A" and r["layer"] == "4"
                  and r["context_tokens"] == "262144")
    assert layer4["kind"] == "full attention" and int(layer4["kv_cache_bytes"]) == GiB
    page.model_b = "none"
    assert {r["slot"] for r in csv.DictReader(io.StringIO(page.csv()))} == {"A"}


def test_sources_are_plain_text_without_a_scheme(page):
    for model in cache.PRESETS:
        page.model_a = model
        assert cache.PRESETS[model].source.split(":")[0][:30] in page.sources.div.text
        assert "http" not in page.sources.div.text and "<a " not in page.sources.div.text
    page.custom = DEFAULT_CUSTOM | {"source": "https://example.org/paper"}
    page.model_a = "custom"
    assert "example.org/paper" in page.sources.div.text and "https://" not in page.sources.div.text
    text = (ROOT / "assets" / "texts" / "hybrid.html").read_text()
    assert "http://" not in text and "https://" not in text


def test_memory_axis_covers_every_line(page):
    for setting in ({"model_a": "minimax-text-01", "sequences": 256, "kv_dtype": "fp32"},
                    {"model_a": "mamba-2-2.7b", "model_b": "none", "sequences": 1}):
        page.param.update(**setting)
        data = page.memory.source.data
        values = np.concatenate([np.asarray(v, float) for k, v in data.items()
                                 if k.endswith("bytes")])
        values = values[np.isfinite(values)]
        y = page.memory.fig.y_range
        assert y.start <= values.min() and values.max() <= y.end


# The JSON box ------------------------------------------------------------------------------------

def test_bad_custom_text_keeps_the_last_good_model(page):
    page.model_a = "custom"
    before = snapshot(page)
    assert page.apply_text("{ not json") is False  # no exception
    assert "Custom model not applied" in page.notice and "line 1" in page.notice
    assert page.editor_message.visible and page.editor_message.text == page.notice
    assert page.custom == DEFAULT_CUSTOM and same(before, snapshot(page))
    bad = {"name": "x", "layers": [{"kind": "recurrent", "state_shape": [4, -1]}]}
    assert page.apply_text(json.dumps(bad)) is False
    assert "layers[0].state_shape[1]" in page.notice
    assert page.custom == DEFAULT_CUSTOM and same(before, snapshot(page))
    page.editor.value = format_model_json({"name": "ok", "layers": [{"kind": "mlp"}]})
    assert not page.editor_message.visible and page.notice == ""
    assert page.custom == {"name": "ok", "layers": [{"kind": "mlp"}]}
    assert list(page.strips["a"].source.data["kind"]) == ["mlp"]


def _model(**entry) -> str:
    return json.dumps({"name": "m", "layers": [{"kind": "attention", "kv_heads": 8,
                                                 "head_dim": 128} | entry]})


@pytest.mark.parametrize("text, says", [
    ("{ not json", "line 1"),
    (json.dumps({"name": "m", "layers": [{"kind": "magic"}]}), "layers[0].kind"),
    (_model(count=10**30), "layers[0].count"),
    ("[" * 100_000 + "]" * 100_000, "config: the text is longer than 65,536 bytes"),
    ("[" * 30_000 + "]" * 30_000, "nested more than 32 levels deep"),
    (_model(head_dim=1).replace('"head_dim": 1', '"head_dim": ' + "9" * 5000), "head_dim"),
    (_model(head_dim=2**70), "layers[0].head_dim"),
    (_model(head_dim=2**40), "layers[0].head_dim"),
    (_model(kv_heads=2**20, head_dim=2**20), "2^53"),  # loads, but 1M tokens pass 2^53 bytes
], ids=["bad JSON", "unknown kind", "count 10^30", "100,000 deep", "30,000 deep", "5,000 digits",
        "head_dim 2^70", "head_dim 2^40", "2^53 bytes at 1M"])
def test_hostile_json_gives_one_line_and_keeps_the_model(page, text, says):
    page.model_a = "custom"
    before = snapshot(page)
    assert page.apply_text(text) is False
    assert says in page.notice and "\n" not in page.notice and len(page.notice) < 600
    assert page.custom == DEFAULT_CUSTOM and same(before, snapshot(page))
    assert not np.any(page.memory.source.data["a_total_bytes"] < 0)  # nothing wrapped


def test_the_error_message_shows_markup_as_text(page):
    """An unknown kind that is markup used to run through the error message."""
    assert page.apply_text(json.dumps({"name": "m", "layers": [{"kind": XSS}]})) is False
    assert page.editor_message.render_as_text  # the box sets it as text, never as HTML
    assert "<img" in page.notice  # plain text: the shell shows notices with textContent
    assert page.info.text == ""


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=300), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["name", "layers", "kind", "count", "kv_heads", "head_dim", "window",
                         "state_shape", "latent_dim", "label", "parallel", "x"]), inner,
        max_size=5), max_leaves=30).map(json.dumps)))
def test_any_text_gives_a_model_or_one_line(page, text):
    good = page.custom
    if page.apply_text(text):
        assert page.custom == read_model(text) and page.notice == ""
    else:
        assert page.notice.startswith(("Custom model not applied", "Kept the previous"))
        assert "\n" not in page.notice and page.custom == good


# Markup in a model's name and labels ------------------------------------------------------------

def test_a_models_name_and_labels_are_escaped_everywhere(page):
    page.model_a = "custom"
    page.custom = {"name": XSS, "source": XSS, "layers": [
        {"kind": "attention", "kv_heads": 1, "head_dim": 64, "label": XSS},
        {"kind": "recurrent", "state_shape": [2, 2], "label": "=HYPERLINK(\"x\")"}]}
    page.show(3)
    for html_text in (page.readout.div.text, page.sources.div.text, page.caption.div.text,
                      *page.run.data["readout"], *page.run.data["sources"]):
        assert "<img" not in html_text
    assert ESCAPED in page.readout.div.text and ESCAPED in page.sources.div.text
    # canvas text and hover fields are text (BokehJS escapes @fields): plain, never doubled
    assert page.strips["a"].fig.title.text.startswith("A: <img src=x")
    assert f"full attention ({XSS})" in page.strips["a"].source.data["kind_label"]
    rows = list(csv.reader(io.StringIO(page.csv())))
    assert ["'=HYPERLINK(\"x\")"] == [c for r in rows for c in r if "HYPERLINK" in c][:1]


def test_a_step_repaints_no_cell_of_the_layer_strips(page):
    """A strip looks the same at every context: what a step changes (the hover's "stores")
    is read by a renderer on the overlay level, which BokehJS repaints alone; the cells and
    the legend read a source a step leaves alone."""
    strip = page.strips["a"]
    cells = strip.cell_source.data
    before = {k: list(v) for k, v in cells.items()}
    page.show(2)
    stores = list(strip.source.data["stores"])
    page.show(9)
    assert list(strip.source.data["stores"]) != stores  # the hover's text moves with t
    assert {k: list(v) for k, v in strip.cell_source.data.items()} == before
    changed = [r for r in strip.fig.renderers if r.data_source is strip.source]
    assert changed and all(r.level == "overlay" for r in changed)


def test_hover_tooltips_show_fields_as_text(page):
    """BokehJS escapes an @field's value unless it is formatted {safe}; a tooltip's template
    itself is parsed as HTML, so no user text may be put into one."""
    page.custom = {"name": XSS, "layers": [{"kind": "mlp", "label": XSS}]}
    page.param.update(model_a="custom", model_b="custom")
    figs = [page.memory.fig, *(v.fig for v in (*page.strips.values(), *page.bars.values()))]
    for fig in figs:
        for tool in fig.select(type=HoverTool):
            assert isinstance(tool.tooltips, list) and not tool.formatters
            for label, template in tool.tooltips:
                assert "{safe}" not in template and "<" not in label + template


# Links --------------------------------------------------------------------------------------------

def test_link_round_trip_with_a_custom_model(page, build):
    page.param.update(model_a="custom", model_b="zamba2-2.7b", kv_dtype="fp16",
                      state_dtype="bf16", sequences=32, custom={"name": "linked", "layers": [
                          {"kind": "recurrent", "count": 3, "state_shape": [8, 64, 64]},
                          {"kind": "attention", "kv_heads": 2, "head_dim": 128, "window": 4096}]})
    page.show(7)
    query = to_query(page)
    assert "batch=32" in query and "seed" not in query and "http" not in query
    fresh = build(HybridPage)
    assert apply_query(fresh, query) == []
    fresh.show(7)
    assert fresh.custom == page.custom
    assert same(snapshot(page), snapshot(fresh))
    assert json.loads(fresh.editor.value) == page.custom  # the box shows the linked model


def test_an_old_link_still_applies(page):
    old = {"name": "x", "layers": [{"kind": "mlp"}]}
    encoded = base64.urlsafe_b64encode(json.dumps(old).encode()).decode().rstrip("=")
    notices = apply_query(page, f"model_a=custom&model_b=none&custom={encoded}&kv_dtype=fp8"
                                "&state_dtype=bf16&batch=4&t=3")
    assert notices == []
    assert (page.model_a, page.model_b, page.kv_dtype, page.sequences) == ("custom", "none",
                                                                           "fp8", 4)
    assert page.custom == old


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize("raw, says", [
    (_b64(json.dumps({"name": "bad", "layers": [{"kind": "attention", "kv_heads": 0,
                                                  "head_dim": 8}]})), "layers[0].kv_heads"),
    (_b64("[" * 5000 + "]" * 5000), "nest"),
    (_b64(json.dumps({"name": "m", "layers": [{"kind": "mlp", "count": 10**30}]})), "count"),
    (_b64(json.dumps({"name": "m", "layers": [{"kind": XSS}]})), "layers[0].kind"),
    ("%%%not-base64", "custom"),
], ids=["kv_heads 0", "5,000 deep", "count 10^30", "markup kind", "not base64"])
def test_bad_link_values_give_notices_and_keep_the_rest(page, raw, says):
    before = snapshot(page)
    notices = apply_query(page, f"custom={raw}&batch=999&model_a=gpt-9&kv_dtype=fp4&"
                                "model_b=mamba-2-2.7b")
    text = " ".join(notices)
    assert says in text and "batch=999" in text and "model_a=gpt-9" in text
    assert "kv_dtype=fp4" in text
    assert page.custom == DEFAULT_CUSTOM and page.model_a == "jamba-v0.1"
    assert page.model_b == "mamba-2-2.7b"  # the good value in the link applied
    assert not same(before, snapshot(page))


def test_a_model_too_big_for_a_link_is_said_before_sharing(page):
    # a link deflates a long model (1,500 plain MLP layers take 1 KiB), so only one that does
    # not compress passes: 1,400 layers with random labels, 20,498 characters deflated
    rng = np.random.default_rng(0)
    layers = [{"kind": "mlp", "label": f"{int(x):016x}"} for x in rng.integers(0, 2**63, 1400)]
    assert page.apply_text(json.dumps({"name": "long", "layers": [{"kind": "mlp"}] * 1500}))
    assert not page.info.visible
    assert page.apply_text(json.dumps({"name": "long", "layers": layers}))
    assert ("The custom model A takes 20,2" in page.info.text and "Share's link will not bring "
            "it back" in page.info.text and page.info.visible)
    page.custom = DEFAULT_CUSTOM
    assert not page.info.visible


# Engines, weights and the GPU ------------------------------------------------------------------

def test_jamba_under_vllm_at_256k_against_sim_and_by_hand(page):
    page.show(8)  # 262,144 tokens
    served = page.run.data["served"]["a"]
    vllm = engines.allocate("jamba-v0.1", 262144, 1, "vllm", family="jamba")
    assert served.allocations[8] == vllm
    # by hand: one attention token 2 · 8 heads · 128 · 2 bytes = 4,096; a Mamba state page
    # (3 · 8,192 conv + 8,192 · 16 ssm) · 2 bytes = 311,296 → blocks of 16 · ⌈311,296 / 65,536⌉
    # = 80 tokens, pages of 80 · 4,096 = 327,680 (the state padded by 16,384 bytes, 5.26%)
    assert vllm.block_tokens == 80 and vllm.detail["state_page_bytes"] == 311296
    kv = 4 * 327680 * -(-262144 // 80)  # 4 attention layers, 3,277 blocks each
    state = 28 * 2 * 327680  # 28 Mamba layers, 2 pages each with prefix caching
    assert (vllm.kv_bytes, vllm.state_bytes) == (kv, state) == (4295229440, 18350080)
    text = shown(page)
    # the weights as the config.json ships them (issue 38): Jamba's torch_dtype is bfloat16
    assert "weights as shipped" in text
    assert "96.06 GiB as shipped in bf16 (51.57 billion parameters" in text
    assert "12.11 billion active" in text
    assert "KV cache, vLLM 0.33.0" in text and "fixed state, vLLM 0.33.0" in text
    assert "+256 KiB (+0.0061%) against the exact 4 GiB, in whole blocks of 80 tokens" in text
    assert "each padded by 5.26% to fill a block" in text and "2 pages per layer" in text
    on_gpu = weights_of("jamba-v0.1", "bf16") + 2 * GiB + kv + state
    assert f"{cache.format_bytes(on_gpu)}</b> (139% of the 73.28 GiB it may use)" in text
    lines = page.run.data["lines"][8]
    assert "block size B = 16 · round up (311,296 / (16 · 4,096)) = 80 tokens" in lines
    assert "allocated = 1,310,720 · 3,291 · 1 sequence = 4,313,579,520 bytes" in lines
    assert "vLLM requests round up (0.92 × 85,520,809,984) = 78,679,145,186 bytes" in lines
    assert "KV cache, ideal (exact)" in text  # the ideal beside it


def test_the_verdict_in_one_sentence(page):
    page.show(8)
    verdict = page.run.data["verdict"][8]
    assert verdict.startswith("<b>On the H100 (80 GB)</b>, vLLM 0.33.0 may use 73.28 GiB:")
    assert ("Jamba-v0.1 does not fit: its weights (96.06 GiB as shipped in bf16) and 2 GiB of "
            "overhead alone pass 73.28 GiB.") in verdict
    # Llama-3-8B: 78,679,145,186 − 16,060,522,496 − 2 GiB = 60,471,139,042 bytes for the cache;
    # 2 MiB per 16-token block (32 layers · 64 KiB) → 28,834 blocks = 461,344 tokens, but the
    # longest context is capped at the model's own maximum of 8,192 (issue 38)
    budget = -(-H100_BYTES * 92 // 100) - weights_of("llama-3-8b", "bf16") - 2 * GiB
    assert budget // (32 * 16 * 4096) * 16 == 461344
    assert ("Llama-3-8B fits: 1 sequence of 256K tokens (past its own maximum of 8,192) takes "
            "48.96 GiB, its weights as shipped in bf16; the longest context for 1 sequence is "
            "8,192 tokens, the model&#x27;s own maximum (the memory alone would hold 461,344 "
            "tokens), and at 256K tokens at most 1 sequence fits.") in verdict
    page.weight_dtype = "fp8"  # Jamba's 51.57 billion parameters in 48.03 GiB: it fits now
    verdict = page.run.data["verdict"][8]
    v = gpus.gpu_verdict("jamba-v0.1", 262144, 1, "vllm", gpu="H100-80GB", family="jamba",
                         weight_bytes=weights_of("jamba-v0.1", "fp8"), max_context=262144)
    assert v["fits"] and "1 sequence of 256K tokens takes 54.05 GiB, its weights in fp8" in verdict
    assert (f"the longest context for 1 sequence is {v['max_tokens']:,} tokens, the model&#x27;s "
            f"own maximum (the memory alone would hold {v['max_tokens_memory']:,} tokens)"
            ) in verdict
    assert f"at 256K tokens at most {v['max_sequences']:,} sequences fit" in verdict
    page.show(10)  # 1M tokens: Llama's 128 GiB of KV cache does not fit
    verdict = page.run.data["verdict"][10]
    assert verdict in page.verdict.div.text
    assert ("Llama-3-8B does not fit with 1 sequence of 1M tokens (past its own maximum of "
            "8,192), which would take 137.5 GiB, its weights in fp8; the longest context for 1 "
            "sequence is 8,192 tokens, the model&#x27;s own maximum (the memory alone would hold "
            "522,624 tokens), and not one sequence of 1M tokens fits."
            ) in verdict


def test_each_engine_as_sim_engines_allocates(page):
    page.show(5)  # 32,768 tokens
    for engine in ("ideal", "llama.cpp", "sglang", "vllm"):
        page.engine = engine
        assert page.notice == ""
        for slot, key, family in (("a", "jamba-v0.1", "jamba"), ("b", "llama-3-8b", "llama")):
            ideal_state = {"ssm_dtype": "fp32"} if engine == "ideal" else {}
            expected = engines.allocate(key, 32768, 1, engine, family=family, kv_dtype="bf16",
                                        **ideal_state)
            assert page.run.data["served"][slot].allocations[5] == expected, (engine, slot)
    page.engine = "sglang"  # 3 state slots per sequence with the radix cache
    assert "3 slots per sequence (radix cache on)" in shown(page)
    page.engine = "llama.cpp"
    assert "fp32 (fixed in llama.cpp), one slot per sequence" in shown(page)


def test_an_engine_that_does_not_run_a_model_says_so(page):
    page.model_a = "minimax-text-01"
    assert page.notice == ""
    assert ("vLLM 0.33.0 does not run MiniMax-Text-01 (vllm does not run minimax (removed after "
            "vLLM 0.23.0)).") in page.run.data["verdict"][0]
    assert np.all(np.isnan(page.memory.source.data["a_total_bytes"]))
    assert "not run" in shown(page)
    page.engine = "llama.cpp"  # llama.cpp does run it
    assert "MiniMax-Text-01 does not fit" in page.run.data["verdict"][0]


def test_gpu_sequences_and_weights_move_the_budget(page):
    page.param.update(gpu="custom", gpu_gib=32.0, weight_dtype="int4", engine="llama.cpp",
                      model_b="none", sequences=2)
    assert page.notice == ""
    assert page.memory.gpu.data["y"] == [32 * GiB] * 2  # llama.cpp may use all of it
    page.show(5)
    v = gpus.gpu_verdict("jamba-v0.1", 32768, 2, "llama.cpp", memory_gib=32.0, family="jamba",
                         weight_bytes=weights_of("jamba-v0.1", "int4"), kv_dtype="bf16",
                         max_context=262144)
    verdict = page.verdict.div.text
    assert "On a GPU of 32 GiB</b>, llama.cpp (0c1e570) may use 32 GiB" in verdict
    assert "Jamba-v0.1 fits: 2 sequences of 32K tokens take" in verdict
    assert v["fits"] and 24 * GiB < weights_of("jamba-v0.1", "int4") < 25 * GiB
    assert f"the longest context for 2 sequences is {v['max_tokens']:,} tokens" in verdict
    assert v["lines"][0] in page.lines.div.text  # "GPU custom 24 GiB: …"


def test_bad_gpu_size_or_sequences_are_refused_by_name(page):
    page.param.update(gpu="custom", gpu_gib=40.0)
    before = snapshot(page)
    page.gpu_gib = 0
    assert page.gpu_gib == 40.0 and same(before, snapshot(page))  # nothing lost
    assert page.notice.startswith("Kept the previous settings: Custom GPU memory (GiB) = 0 "
                                  "cannot run here (memory_gib: expected a size above 0")
    page.notice = ""
    assert apply_query(page, "batch=-1") == ["Ignored batch=-1: expected a whole number from 1 "
                                             "to 256."]
    assert page.sequences == 1 and same(before, snapshot(page))
    notices = apply_query(page, "gib=0&weights=int4")
    assert notices == ["Ignored Custom GPU memory (GiB) = 0.0 from the link: memory_gib: "
                       "expected a size above 0 and at most 16,384 GiB, got 0.0"]
    assert page.weight_dtype == "int4" and page.gpu_gib == 40.0  # the good value applied
    page.param.update(engine="llama.cpp", kv_dtype="fp8")  # llama.cpp has no fp8 KV cache
    assert "llama.cpp has no fp8 KV cache" in page.notice and page.kv_dtype == "bf16"


def test_a_config_json_as_model_b_counts_its_weights(page):
    text = json.dumps(PRESET_HF_CONFIGS["qwen3-next-80b-a3b"])
    page.importer.slot.value = "b"
    assert page.importer.read(text) and page.notice == ""
    assert page.model_b == "custom" and page.model_a == "jamba-v0.1"
    assert "now model B (custom model B)" in page.importer.report.object
    served = page.run.data["served"]["b"]
    assert served.weights == weights_of("qwen3-next-80b-a3b", "bf16")
    assert "79.67 billion parameters" in shown(page)
    expected = engines.allocate(page.custom_b, 1024, 1, "vllm", family="qwen3_next")
    assert served.allocations[0] == expected and expected.block_tokens == 576
    page.model_a = "custom"  # model A's own custom model, written by hand: no weights to count
    page.apply_text(json.dumps({"name": "hand", "layers": [{"kind": "attention", "kv_heads": 1,
                                                            "head_dim": 64}]}))
    assert page.custom_config == {} and page.custom_config_b  # B keeps its file
    assert "a model written by hand has no config.json to count from" in shown(page)
    assert page.run.data["served"]["b"].weights == weights_of("qwen3-next-80b-a3b", "bf16")


def test_engine_settings_travel_in_the_link(page, build):
    page.importer.read(json.dumps(PRESET_HF_CONFIGS["falcon-h1-7b"]))
    page.param.update(engine="sglang", weight_dtype="fp8", gpu="custom", gpu_gib=48.5,
                      sequences=3)
    query = to_query(page)
    for key in ("engine=sglang", "weights=fp8", "gpu=custom", "gib=48.5", "batch=3", "hf="):
        assert key in query
    fresh = build(HybridPage)
    assert apply_query(fresh, query) == []
    assert fresh.settings_now() == page.settings_now()
    assert same(snapshot(fresh), snapshot(page))
    assert fresh.run.data["served"]["a"].weights == weights_of("falcon-h1-7b", "fp8")
    bad = base64.urlsafe_b64encode(b'{"model_type": "gpt2"}').decode()
    assert "Ignored hf from the link: model_type: unknown architecture" in apply_query(fresh, f"hf={bad}")[0]


def test_the_csv_has_the_engine_and_the_weights(page):
    rows = list(csv.DictReader(io.StringIO(page.csv())))
    engine = [r for r in rows if r["section"] == "engine" and r["slot"] == "A"]
    assert len(engine) == len(CONTEXTS) and engine[8]["context_tokens"] == "262144"
    assert int(engine[8]["total_bytes"]) == 4295229440 + 18350080
    assert engine[8]["label"] == "allocated by vLLM 0.33.0"
    weights_row = next(r for r in rows if r["section"] == "weights" and r["slot"] == "A")
    assert int(weights_row["total_bytes"]) == weights_of("jamba-v0.1", "bf16")


# The user-set overhead, prefix caching and speculative tokens ------------------------------------

def widget(page, name):
    return next(w for w in page.widgets if getattr(w, "name", None) == page.label(name))


def test_overhead_prefix_caching_and_speculative_tokens_reach_the_rules(page):
    page.param.update(model_b="none", overhead_gib=10.0)
    page.show(5)  # 32,768 tokens
    served = page.run.data["served"]["a"]
    assert served.overhead == 10 * GiB
    # the budget: ⌈0.92 · 80 GiB⌉ − Jamba's weights − 10 GiB, written as the minus sign says
    budget = -(-H100_BYTES * 92 // 100) - weights_of("jamba-v0.1", "bf16") - 10 * GiB
    assert budget < 0 and served.verdicts[5]["budget_bytes"] == budget
    assert f"= −{-budget:,} bytes" in page.lines.div.text
    assert "its weights (96.06 GiB as shipped in bf16) and 10 GiB of overhead alone pass 73.28 GiB" in (
        page.verdict.div.text)
    assert "10 GiB of overhead, KV cache and state" in shown(page)
    # the line of what is on the GPU: weights + 10 GiB + the allocation, at every curve point
    a = served.allocations[5]
    assert a == engines.allocate("jamba-v0.1", 32768, 1, "vllm", family="jamba")
    data = page.memory.source.data
    assert np.array_equal(np.asarray(data["a_gpu_bytes"]) - np.asarray(data["a_total_bytes"]),
                          np.full(len(CURVE_TOKENS), weights_of("jamba-v0.1", "bf16") + 10 * GiB))
    # prefix caching off: 1 state page per Mamba layer instead of 2 (by hand: 7 state groups
    # of 4 layers, blocks of 80 tokens, pages of 327,680 bytes)
    page.prefix_caching = False
    off = page.run.data["served"]["a"].allocations[5]
    assert off == engines.allocate("jamba-v0.1", 32768, 1, "vllm", family="jamba",
                                   prefix_caching=False)
    assert off.total_bytes == 4 * 327680 * (-(-32768 // 80) + 7 * 1) == 546_570_240
    assert "1 page per layer and sequence without prefix caching" in shown(page)
    # two speculative tokens: 1 + 2 state pages (Mamba-1 takes no extra conv rows)
    page.speculative_tokens = 2
    spec = page.run.data["served"]["a"].allocations[5]
    assert spec.total_bytes == 4 * 327680 * (-(-32768 // 80) + 7 * 3)
    assert "3 pages per layer and sequence without prefix caching and 2 speculative tokens" in (
        shown(page))
    assert "prefix caching off, 2 speculative tokens" in page.lines.div.text
    # SGLang reads them too: 1 slot with the radix cache off, speculative slots on top
    page.engine = "sglang"
    sg = page.run.data["served"]["a"].allocations[5]
    assert sg == engines.allocate("jamba-v0.1", 32768, 1, "sglang", family="jamba",
                                  kv_dtype="bf16", prefix_caching=False, speculative_tokens=2)
    assert "1 slot per sequence (radix cache off), and 2 speculative tokens add slots" in (
        shown(page))
    # llama.cpp and the ideal have neither switch: the allocation is the same either way
    for engine in ("llama.cpp", "ideal"):
        page.engine = engine
        first = page.run.data["served"]["a"].allocations[5]
        page.param.update(prefix_caching=True, speculative_tokens=0)
        assert page.run.data["served"]["a"].allocations[5] == first
        page.param.update(prefix_caching=False, speculative_tokens=2)


def test_the_switches_show_only_where_they_apply(page):
    overhead, prefix, spec = (widget(page, n) for n in ("overhead_gib", "prefix_caching",
                                                        "speculative_tokens"))
    assert overhead.visible and prefix.visible and spec.visible  # vLLM, the default
    for engine, on in (("llama.cpp", False), ("ideal", False), ("sglang", True), ("vllm", True)):
        page.engine = engine
        assert (prefix.visible, spec.visible) == (on, on), engine
        assert overhead.visible  # every engine's budget subtracts it
    page.gpu = "custom"
    assert widget(page, "gpu_gib").visible
    page.gpu = "H100-80GB"
    assert not widget(page, "gpu_gib").visible


def test_the_switches_travel_in_the_link_and_bad_values_are_named(page, build):
    page.param.update(overhead_gib=6.5, prefix_caching=False, speculative_tokens=4)
    query = to_query(page)
    for key in ("overhead=6.5", "prefix=0", "spec=4"):
        assert key in query
    fresh = build(HybridPage)
    assert apply_query(fresh, query) == []
    assert (fresh.overhead_gib, fresh.prefix_caching, fresh.speculative_tokens) == (6.5, False, 4)
    assert same(snapshot(fresh), snapshot(page))
    contract = link_contract(build(HybridPage))  # what the shell checks before Python starts
    assert {"overhead", "prefix", "spec"} <= set(contract["settings"])
    assert "overhead=2.0&prefix=1&spec=0" in contract["defaults"]
    notices = apply_query(fresh, "spec=65&overhead=-1")
    assert len(notices) == 2 and all(n.startswith("Ignored ") for n in notices)
    assert "spec=65" in notices[0] and "overhead=-1" in notices[1]
    assert (fresh.overhead_gib, fresh.speculative_tokens) == (6.5, 4)  # kept
