"""Two pasted config.json files on the hybrid page, side by side (issue 38): every published file
in tests/sim/hf_configs/published/ pasted as model A and, with the next one, as model B through
the page's own importer; each slot keeps its own model, named by the file; both travel in the
link; Nemotron-H's `Infinity` is read; what the fuzz and UX reports found (N1, N8, N9; UX 1, 2)
never comes back."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from sim import cache, gpus, hf_config, weights
from ui.pages.hybrid import CUSTOM, HybridPage
from ui.pages.hybrid_config import MAX_FILE_BYTES
from ui.urlstate import MAX_QUERY, apply_query, to_query
from ui.views.hybrid import CONTEXTS

PUBLISHED = Path(__file__).resolve().parents[1] / "sim" / "hf_configs" / "published"
FILES = sorted(PUBLISHED.glob("*.config.json"))
FIXTURES = PUBLISHED.parent


def paste(page: HybridPage, path: Path, slot: str) -> bool:
    """As a user does: the file's text into the box, "as model A/B", Read config.json."""
    page.importer.slot.value = slot
    page.importer.box.value = path.read_text()
    return page.importer.read(page.importer.box.value)


def sentence(verdict: str, slot: str) -> str:
    """Model ``slot``'s sentence of the verdict (one span each)."""
    return verdict.split(f"<b>{slot.upper()}</b> ", 1)[1].split("</span>", 1)[0]


def test_the_25_published_files_are_here():
    assert len(FILES) == 25


@pytest.mark.parametrize("i", range(len(FILES)), ids=[p.name.removesuffix(".config.json")
                                                      for p in FILES])
def test_each_published_file_as_a_and_the_next_as_b_side_by_side(build, i):
    a_path, b_path = FILES[i], FILES[(i + 1) % len(FILES)]  # every file once as A, once as B
    page = build(HybridPage)
    assert paste(page, a_path, "a"), page.importer.report.object
    assert paste(page, b_path, "b"), page.importer.report.object
    assert page.notice == "" and (page.model_a, page.model_b) == (CUSTOM, CUSTOM)
    page.show(5)  # 32K tokens
    for slot, path in (("a", a_path), ("b", b_path)):
        config = json.loads(path.read_text())  # Python reads NaN and Infinity too
        model, report = hf_config.from_hf_config(path.read_text())
        count = weights.parameter_count(path.read_bytes())
        # named by the file: its _name_or_path, else its architecture and size
        name = hf_config.model_name(config, report["family"], count.total)
        custom = page.custom if slot == "a" else page.custom_b
        assert custom["name"] == name and custom["layers"] == cache.model_to_dict(model)["layers"]
        assert (page.custom_config if slot == "a" else page.custom_config_b) == config
        ideal = cache.cache_report(model, CONTEXTS[5], 1, "bf16", "fp32", 16)
        shown = page.run.data["reports"][slot][5]
        assert shown["total_bytes"] == ideal["total_bytes"] and shown["kv_cache_bytes"] == (
            ideal["kv_cache_bytes"])
        served = page.run.data["served"][slot]
        assert served.weights == weights.weight_bytes(count, "shipped")  # as the file ships
        assert served.max_context == report["max_context"]
        said = sentence(page.run.data["verdict"][5], slot)
        assert html.escape(name[:40]) in said or said.startswith("vLLM 0.33.0 does not run")
        if not served.refusal:
            assert served.weights_dtype.startswith("as shipped in ")
            v = served.verdicts[5]
            assert (" fits:" in said) == bool(v["fits"]) and v["fits"] is not None
            assert served.weights_dtype in said or "alone pass" in said
        assert html.escape(name[:40]) in page.readout.div.text  # both columns side by side
    assert page.strips["a"].fig.title.text.startswith("A: ")
    assert page.strips["b"].fig.title.text.startswith("B: ")

    # both pasted models travel in the link and come back, weights and all
    query = to_query(page)
    assert len(query) < MAX_QUERY and "hf_b=" in query
    fresh = build(HybridPage)
    assert apply_query(fresh, query) == []
    assert fresh.settings_now() == page.settings_now()
    fresh.show(5)
    for slot in "ab":
        assert fresh.run.data["served"][slot].weights == page.run.data["served"][slot].weights
    assert fresh.run.data["verdict"][5] == page.run.data["verdict"][5]


def test_nemotron_h_with_its_infinity_is_read_and_shared(build):
    """UX 1: the published file's "time_step_limit": [0.0, Infinity] made the paste silently do
    nothing (LongNumber is not JSON serializable) and left Llama's report on screen."""
    path = PUBLISHED / "nemotron-h-56b-base-8k.config.json"
    assert "Infinity" in path.read_text()
    page = build(HybridPage)
    assert paste(page, FIXTURES / "llama-3-8b.json", "a")
    assert paste(page, path, "a"), page.importer.report.object
    report = page.importer.report.object
    assert "Read <b>NemotronHForCausalLM, " in report and "now model A" in report
    assert "llama" not in report.lower()
    assert page.custom_config["time_step_limit"] == [0.0, float("inf")]
    query = to_query(page)  # the link writes it as the file did
    fresh = build(HybridPage)
    assert apply_query(fresh, query) == []
    assert fresh.custom_config["time_step_limit"] == [0.0, float("inf")]
    assert fresh.custom == page.custom


def test_a_failed_read_clears_the_last_report_and_says_why(build):
    page = build(HybridPage)
    assert paste(page, FIXTURES / "llama-3-8b.json", "a")
    assert "Read <b>" in page.importer.report.object
    before = page.settings_now()
    assert not page.importer.read('{"model_type": "llama", "hidden_size": "big"}')
    report = page.importer.report.object
    assert "Read <b>" not in report and "config.json not read: " in report
    assert "The last good model is still shown" in report and page.settings_now() == before


def test_weights_that_cannot_be_counted_never_fit(build):
    """Fuzz N1: Jamba without vocab_size read for the cache but counted 0 bytes of weights, and
    the H100 'fit' 4,691,200 tokens; it is 'cannot judge', saying why."""
    config = json.loads((FIXTURES / "jamba-v0.1.json").read_text())
    del config["vocab_size"]
    page = build(HybridPage, model_b="none", gpu="H100-80GB")
    assert page.importer.read(json.dumps(config))
    served = page.run.data["served"]["a"]
    assert served.weights is None and "vocab_size" in served.weights_text
    assert "its weights could not be counted (vocab_size" in page.importer.report.object
    for t in range(len(CONTEXTS)):
        said = sentence(page.run.data["verdict"][t], "a")
        assert said.startswith("Cannot judge whether JambaForCausalLM fits, because its "
                               "weights were not counted (vocab_size: missing")
        assert " fits: " not in said and served.verdicts[t]["fits"] is None
    assert "not judged: the weights were not counted" in page.readout.div.text
    assert "cannot judge: the weights were not counted" in page.lines.div.text
    assert "weights not counted" in page.alt[page.memory.fig.id]
    # nothing is drawn for what sits on the GPU: no line, no point
    assert all(v != v for v in page.memory.source.data["a_gpu_bytes"])  # NaN
    # the same file counted (vocab_size back): it does not fit at all
    page.importer.read((FIXTURES / "jamba-v0.1.json").read_text())
    assert sentence(page.run.data["verdict"][0], "a").startswith("JambaForCausalLM, 51.6B "
                                                                 "parameters does not fit")
    # vocab_size 1e30 gave "fits, 8,369,120 tokens" on an H200
    page.gpu = "H200-141GB"
    assert page.importer.read(json.dumps(config | {"vocab_size": 1e30}))
    assert sentence(page.run.data["verdict"][0], "a").startswith("Cannot judge")
    v = gpus.gpu_verdict(page.load(CUSTOM), 1024, gpu="H200-141GB", weight_bytes=None,
                         family="jamba")
    assert v["fits"] is None and v["max_tokens"] is None


def test_a_model_written_by_hand_says_its_weights_are_taken_as_0(build):
    page = build(HybridPage, model_a=CUSTOM, model_b="none", engine="ideal")
    said = sentence(page.run.data["verdict"][0], "a")
    assert "its weights taken as 0 bytes (not counted: no config.json)" in said


def test_a_paste_past_the_limit_names_the_limit_not_a_json_error(build):
    """Fuzz N8: the box cut a paste at 64 KiB without a word, and the cut text read as broken
    JSON. The box now holds sim's 8 MiB and one character more, so a longer paste is named."""
    page = build(HybridPage)
    assert page.importer.box.max_length == MAX_FILE_BYTES + 1 == 8 * 2**20 + 1
    big = (PUBLISHED / "qwen3.6-27b-nvfp4.config.json").read_text()  # 88.6 kB: read whole
    assert len(big) > 64 * 1024 and page.importer.read(big)
    cut = ('{"model_type": "llama", "pad": "' + "x" * MAX_FILE_BYTES)[:MAX_FILE_BYTES + 1]
    assert not page.importer.read(cut)  # what the browser hands over of a 10 MB paste
    report = page.importer.report.object
    assert "Not read: the pasted text is more than 8 MiB; a config.json of at most 8 MiB" in report
    assert "JSON" not in report.replace("config.json", "")


def test_a_byte_order_mark_is_read_pasted_as_from_a_file(build):
    """Fuzz N9: a BOM was refused pasted ('Unexpected UTF-8 BOM') but read from a file."""
    text = (FIXTURES / "jamba-v0.1.json").read_text()
    pasted, dropped = build(HybridPage), build(HybridPage)
    assert pasted.importer.read("\ufeff" + text), pasted.importer.report.object
    dropped.importer.file.param.update(filename="jamba.json",
                                       value=b"\xef\xbb\xbf" + text.encode())
    assert dropped.model_a == CUSTOM and pasted.settings_now() == dropped.settings_now()
    assert pasted.importer.report.object == dropped.importer.report.object


def test_b_no_longer_replaces_a(build):
    """UX 2: 'as model B' also replaced model A (one custom slot); both showed qwen3_next."""
    page = build(HybridPage)
    assert paste(page, FIXTURES / "zamba2-2.7b.json", "a")
    a = page.custom
    assert paste(page, FIXTURES / "qwen3-next-80b-a3b.json", "b")
    assert page.custom == a and page.custom_b["name"] != a["name"]
    names = [page.strips[s].fig.title.text for s in "ab"]
    assert names[0].startswith("A: Zamba2ForCausalLM, 2.7B parameters")
    assert names[1].startswith("B: Qwen3NextForCausalLM, 79.7B parameters")
    # the model box edits A's model; B keeps its own, weights and all
    page.apply_text(json.dumps({**a, "name": "renamed"}))
    assert page.custom_config and page.run.data["served"]["a"].weights  # a name changes no byte
    assert page.custom_b["name"].startswith("Qwen3Next") and page.model_b == CUSTOM


def test_a_link_from_before_b_had_its_own_model_still_shows_it_as_b(build):
    old = {"name": "shared", "layers": [{"kind": "attention", "kv_heads": 2, "head_dim": 64}]}
    page = build(HybridPage)
    query = to_query(build(HybridPage, model_a=CUSTOM, model_b=CUSTOM, custom=old))
    legacy = "&".join(kv for kv in query.split("&")
                      if not kv.startswith(("custom_b=", "hf_b=")))
    assert apply_query(page, legacy) == []
    assert page.custom == page.custom_b == old
