"""The hybrid-models page without a browser: its state drives the plots, and every byte is sim's."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import columns, same, sizers_over_a_run

from sim import cache
from ui.pages.hybrid import (
    CONTEXTS,
    CURVE_TOKENS,
    DEFAULT_CUSTOM,
    KIND_LABELS,
    HybridPage,
    HybridState,
    format_model_json,
)
from ui.urlstate import apply_query, to_query

GiB = 2**30
ROOT = Path(__file__).resolve().parents[2]


def cds(page: HybridPage) -> dict:
    """Everything the page's plots and readouts hold right now, as plain lists."""
    out = columns({"memory": page.memory.source, "now": page.memory.now,
                   **{f"strip_{k}": v.source for k, v in page.strips.items()},
                   **{f"bars_{k}": v.source for k, v in page.bars.items()}})
    out["marker"] = page.memory.marker.location
    out["readout"] = page.readout.object
    out["sources"] = page.sources.object
    out["visible"] = {k: card.visible for k, card in page.model_cards.items()}
    out["titles"] = [v.fig.title.text for v in (*page.strips.values(), *page.bars.values())]
    return out


@pytest.fixture
def page(build) -> HybridPage:
    return build(HybridPage)


def test_defaults_and_the_context_grid(page):
    s = page.state
    assert (s.model_a, s.model_b, s.kv_dtype, s.state_dtype, s.batch) == (
        "jamba-v0.1", "llama-3-8b", "bf16", "fp32", 1)
    assert CONTEXTS[0] == 1024 and CONTEXTS[-1] == 2**20 and s.t_max == len(CONTEXTS) - 1 == 10
    assert s.tokens == 1024
    assert "1,024 tokens" in page.readout.object


def test_memory_curves_are_sims(page):
    data = page.memory.source.data
    assert list(data["x"]) == list(CURVE_TOKENS)
    assert CURVE_TOKENS[0] == 1024 and CURVE_TOKENS[-1] == 2**20
    jamba = cache.memory_curve("jamba-v0.1", CURVE_TOKENS)
    llama = cache.memory_curve("llama-3-8b", CURVE_TOKENS)
    np.testing.assert_array_equal(data["a_kv_cache_bytes"], jamba["kv_cache_bytes"])
    np.testing.assert_array_equal(data["a_state_bytes"], jamba["state_bytes"])
    np.testing.assert_array_equal(data["a_total_bytes"], jamba["total_bytes"])
    np.testing.assert_array_equal(data["b_kv_cache_bytes"], llama["kv_cache_bytes"])
    assert np.all(np.isnan(data["b_state_bytes"]))  # Llama keeps no state: no line on a log axis
    assert data["a_state_bytes"][0] == data["a_state_bytes"][-1] == 17432576  # flat


def test_stepping_sweeps_the_context_jamba_4_gib_at_256k(page):
    s = page.state
    before = cds(page)
    for _ in range(8):
        s.step()
    assert s.t == 8 and s.tokens == 262144
    after = cds(page)
    assert not same(before, after)
    assert page.memory.marker.location == 262144
    kv = page.bars["a"].source.data["kv"]
    assert [i for i, b in enumerate(kv) if b] == [4, 12, 20, 28]  # i mod 8 = 4
    assert kv[4] == GiB and sum(kv) == 4 * GiB == cache.kv_cache_bytes("jamba-v0.1", 262144)
    assert page.bars["a"].source.data["state"][0] == 622592  # (8192·16 + 8192·3)·4 bytes
    assert page.strips["a"].stores(8)[4] == "1 GiB of KV cache"
    assert page.memory.marker.location == 262144  # the strip's hover reads the context there
    assert "262,144 tokens" in page.readout.object and "256K" in page.readout.object
    assert "0.125×" in page.readout.object and "32 GiB if all attention" in page.readout.object
    # the current points on the memory plot are sim's report at 256K
    report = cache.cache_report("jamba-v0.1", 262144)
    assert report["kv_cache_bytes"] in page.memory.now.data["y"]
    assert report["total_bytes"] in page.memory.now.data["y"]


def test_jump_equals_stepping(page, build):
    other = build(HybridPage)
    for _ in range(6):
        page.state.step()
    other.state.jump(6)
    assert same(cds(page), cds(other))
    page.state.back()
    other.state.jump(5)
    assert same(cds(page), cds(other))


def test_play_stops_at_one_million(page):
    s = page.state
    s.jump(s.t_max)
    assert s.tokens == 2**20
    s.playing = True
    s.step()
    assert s.t == s.t_max and not s.playing


@pytest.mark.parametrize("knob, value", [
    ("model_a", "qwen3-next-80b-a3b"), ("model_b", "kimi-linear-48b-a3b"), ("model_b", "none"),
    ("kv_dtype", "fp8"), ("state_dtype", "bf16"), ("batch", 16), ("t", 3)])
def test_every_control_changes_the_picture(page, knob, value):
    before = cds(page)
    setattr(page.state, knob, value)
    assert not same(before, cds(page))


def test_the_custom_model_changes_the_picture_when_shown(page):
    s = page.state
    s.model_a = "custom"
    before = cds(page)
    s.custom = {"name": "tiny", "layers": [{"kind": "attention", "kv_heads": 1, "head_dim": 64}]}
    after = cds(page)
    assert not same(before, after)
    assert page.strips["a"].fig.title.text == "A: tiny, 1 layers"
    assert list(page.bars["a"].source.data["kv"]) == [2 * 64 * 2 * 1024]


def test_dtypes_and_batch_scale_as_sim_says(page):
    s = page.state
    s.jump(4)
    s.param.update(kv_dtype="fp8", state_dtype="bf16", batch=8)
    report = cache.cache_report("jamba-v0.1", s.tokens, 8, "fp8", "bf16")
    assert sum(page.bars["a"].source.data["kv"]) == report["kv_cache_bytes"]
    assert sum(page.bars["a"].source.data["state"]) == report["state_bytes"]
    assert cache.format_bytes(report["total_bytes"]) in page.readout.object
    curve = cache.memory_curve("llama-3-8b", CURVE_TOKENS, 8, "fp8", "bf16")
    np.testing.assert_array_equal(page.memory.source.data["b_kv_cache_bytes"],
                                  curve["kv_cache_bytes"])


def test_model_b_none_hides_its_views(page):
    page.state.model_b = "none"
    assert page.model_cards["b"].visible is False
    assert all(not r.visible for r in page.memory.renderers["b"])
    assert np.all(np.isnan(page.memory.source.data["b_total_bytes"]))
    assert "B:" not in page.readout.object
    page.state.model_b = "mamba-2-2.7b"
    assert page.model_cards["b"].visible is True
    assert "none (no attention layer)" in page.readout.object


def test_layer_strip_kinds_parallel_and_windows(page):
    s = page.state
    s.model_b = "falcon-h1-7b"
    strip = page.strips["b"].source.data
    assert len(strip["layer"]) == 88 and max(strip["layer"]) == 43
    assert strip["row"][:2] == [0, 1] and strip["layer"][:2] == [0, 0]  # stacked in layer 0
    assert set(strip["kind"]) == {"full", "recurrent"}
    bars = page.bars["b"].source.data
    assert bars["kv"][0] > 0 and bars["state"][0] > 0  # one bar holds both
    s.model_a = "recurrentgemma-2b"
    strip = page.strips["a"].source.data
    assert strip["kind"][:3] == ["recurrent", "recurrent", "window"]
    assert KIND_LABELS["window"] in [i.label.value for i in page.strips["a"].legend.items]
    s.jump(s.t_max)  # the window caps the cache: 2048 tokens held at 1M
    assert page.bars["a"].source.data["kv"][2] == 2 * 1 * 256 * 2048 * 2
    s.model_a = "nemotron-h-8b"
    assert "mlp" in page.strips["a"].source.data["kind"]
    s.model_a = "kimi-linear-48b-a3b"
    assert [i for i, k in enumerate(page.strips["a"].source.data["kind"]) if k == "mla"] == [
        3, 7, 11, 15, 19, 23, 26]


def test_url_round_trip(page, build):
    s = page.state
    s.param.update(model_a="custom", model_b="zamba2-2.7b", kv_dtype="fp16", state_dtype="bf16",
                   batch=32, custom={"name": "linked", "layers": [
                       {"kind": "recurrent", "count": 3, "state_shape": [8, 64, 64]},
                       {"kind": "attention", "kv_heads": 2, "head_dim": 128, "window": 4096}]})
    s.jump(7)
    query = to_query(s)
    assert "http" not in query
    fresh = build(HybridPage)
    notices, _ = apply_query(fresh.state, query)
    assert notices == []
    assert fresh.state.custom == s.custom and fresh.state.t == 7
    assert same(cds(page), cds(fresh))
    assert json.loads(fresh.editor.value) == s.custom  # the editor shows the linked model


def test_bad_link_values_give_notices(page):
    s = page.state
    before = cds(page)
    rejected = {"name": "bad", "layers": [{"kind": "attention", "kv_heads": 0, "head_dim": 8}]}
    good = HybridState()
    good.custom = rejected | {"layers": [{"kind": "mlp"}]}
    encoded = base64.urlsafe_b64encode(json.dumps(rejected).encode()).decode().rstrip("=")
    notices, _ = apply_query(s, to_query(good) + f"&batch=999&custom={encoded}"
                             "&model_a=gpt-9&kv_dtype=fp4")
    text = " ".join(notices)
    assert "batch=999" in text and "model_a=gpt-9" in text and "kv_dtype=fp4" in text
    assert "custom=" in text
    assert s.batch == 1 and s.model_a == "jamba-v0.1" and s.kv_dtype == "bf16"
    assert s.custom == good.custom  # the good model in the link applied, the rejected one not
    assert page.state.model_b == "llama-3-8b"
    assert same(before, cds(page))  # nothing shown changed: A and B are presets


def test_bad_custom_text_keeps_the_last_good_model(page):
    s = page.state
    s.model_a = "custom"
    before = cds(page)
    assert s.apply_custom_text("{ not json") is False  # no exception
    assert "Not valid JSON" in s.custom_error and "line 1, column 3" in s.custom_error
    assert page.editor_message.visible and "Not valid JSON" in page.editor_message.object
    assert s.notice.startswith("Custom model not applied")
    assert s.custom == DEFAULT_CUSTOM and same(before, cds(page))
    bad = {"name": "x", "layers": [{"kind": "recurrent", "state_shape": [4, -1]}]}
    assert s.apply_custom_text(json.dumps(bad)) is False
    assert "layers[0].state_shape[1]" in s.custom_error
    assert s.custom == DEFAULT_CUSTOM and same(before, cds(page))
    page.editor.value = format_model_json({"name": "ok", "layers": [{"kind": "mlp"}]})
    assert s.custom_error == "" and not page.editor_message.visible and s.notice == ""
    assert s.custom == {"name": "ok", "layers": [{"kind": "mlp"}]}
    assert page.strips["a"].source.data["kind"] == ["mlp"]


def test_apply_button_shows_the_custom_model_as_a(page):
    s = page.state
    page.editor.value = format_model_json(DEFAULT_CUSTOM)
    page._apply_and_show()
    assert s.model_a == "custom"
    assert page.strips["a"].fig.title.text == "A: my hybrid, 72 layers"
    assert "custom model, edited on this page" in page.sources.object


def test_csv_has_a_header_and_the_right_rows(page):
    s = page.state
    s.jump(8)
    rows = list(csv.DictReader(io.StringIO(s.csv())))
    assert list(rows[0]) == ["section", "slot", "model", "context_tokens", "layer", "kind",
                             "label", "kv_cache_bytes", "state_bytes", "total_bytes"]
    context = [r for r in rows if r["section"] == "context"]
    layers = [r for r in rows if r["section"] == "layer"]
    assert len(context) == 2 * len(CONTEXTS)
    assert len(layers) == 32 + 32
    jamba_256k = next(r for r in context if r["slot"] == "A" and r["context_tokens"] == "262144")
    assert int(jamba_256k["kv_cache_bytes"]) == 4 * GiB
    assert int(jamba_256k["total_bytes"]) == cache.cache_report("jamba-v0.1", 262144)["total_bytes"]
    layer4 = next(r for r in layers if r["slot"] == "A" and r["layer"] == "4")
    assert layer4["kind"] == "full attention" and int(layer4["kv_cache_bytes"]) == GiB
    assert {r["context_tokens"] for r in layers} == {"262144"}
    s.model_b = "none"
    assert {r["slot"] for r in csv.DictReader(io.StringIO(s.csv()))} == {"A"}


def test_sources_are_plain_text_without_a_scheme(page):
    s = page.state
    for model in cache.PRESETS:
        s.model_a = model
        assert cache.PRESETS[model].source.split(":")[0] in page.sources.object
        assert "http" not in page.sources.object and "<a " not in page.sources.object
    s.custom = DEFAULT_CUSTOM | {"source": "https://example.org/paper"}
    s.model_a = "custom"
    assert "example.org/paper" in page.sources.object and "https://" not in page.sources.object
    text = (ROOT / "assets" / "texts" / "hybrid.html").read_text()
    assert "http://" not in text and "https://" not in text


def test_presenter_view_hides_the_editor_and_sources():
    p = HybridPage()
    p.set_view(present=True)  # as launch() does, before the layout is built
    p.layout  # noqa: B018
    assert len(p.secondary) == 2 and not any(item.visible for item in p.secondary)
    p.set_view(present=False)
    assert all(item.visible for item in p.secondary)


def test_memory_axis_covers_every_line(page):
    s = page.state
    for settings in ({"model_a": "minimax-text-01", "batch": 256, "kv_dtype": "fp32"},
                     {"model_a": "mamba-2-2.7b", "model_b": "none", "batch": 1}):
        s.param.update(**settings)
        data = page.memory.source.data
        values = np.concatenate([np.asarray(v, float) for k, v in data.items()
                                 if k.endswith("bytes")])
        values = values[np.isfinite(values)]
        y = page.memory.fig.y_range
        assert y.start <= values.min() and values.max() <= y.end


def test_a_step_keeps_the_readouts_size(page):
    (sizer,) = sizers_over_a_run(page, page.readout)  # one for the whole run
    assert "tokens" in sizer


def test_bars_axis_follows_the_tallest_bar_and_a_step_resends_only_the_cache(page):
    bars = page.bars["a"]
    state_before = bars.source.data["state"]
    page.state.step()
    data = bars.source.data
    assert data["state"] is state_before  # a step sends the KV columns only
    tallest = max(k + s for k, s in zip(data["kv"], data["state"]))
    assert bars.fig.y_range.start == 0 and bars.fig.y_range.end == pytest.approx(tallest * 1.05)
    page.state.kv_dtype = "fp32"  # a new setting resends everything and rescales
    assert bars.fig.y_range.end == pytest.approx(2 * tallest * 1.05, rel=0.01)
