"""A Hugging Face config.json on the hybrid page, and the KV cache in blocks of B tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cache import PRESETS, cache_report
from ui.pages.hybrid import CUSTOM, HybridPage
from ui.pages.hybrid_config import MAX_FILE_BYTES
from ui.views.hybrid import CONTEXTS

FIXTURES = Path(__file__).resolve().parents[1] / "sim" / "hf_configs"


@pytest.mark.parametrize("key", list(PRESETS))
def test_each_presets_config_json_gives_the_presets_figures(build, key):
    page = build(HybridPage)
    text = (FIXTURES / f"{key}.json").read_text()
    assert page.importer.read(text) and page.notice == ""
    assert page.model_a == CUSTOM
    for t in (0, 5, len(CONTEXTS) - 1):
        ours = page.run.data["reports"]["a"][t]
        theirs = cache_report(PRESETS[key], CONTEXTS[t], 1, "bf16", "fp32", 16)
        for field in ("kv_cache_bytes", "kv_cache_bytes_in_blocks", "state_bytes", "total_bytes",
                      "kv_bytes_per_token"):
            assert ours[field] == theirs[field], (key, field)
    report = page.importer.report.object
    assert "Used" in report and "Ignored" in report and "now model A" in report
    assert "JSON" not in page.editor_message.text  # the model box shows the model, no error
    assert json.loads(page.editor.value)["layers"]  # the model box holds the model it became


def test_a_field_it_cannot_interpret_is_named_and_the_last_model_stays(build):
    page = build(HybridPage)
    config = json.loads((FIXTURES / "jamba-v0.1.json").read_text()) | {"sliding_window": 4096}
    before = page.settings_now()
    assert not page.importer.read(json.dumps(config))
    assert "sliding_window" in page.importer.report.object
    assert page.settings_now() == before
    assert not page.importer.read('{"model_type": "gpt2"}')
    assert "unknown architecture" in page.importer.report.object
    assert not page.importer.read("{not json")
    assert not page.importer.read(" " * (MAX_FILE_BYTES + 1))
    assert "the pasted text is more than 8 MiB; a config.json of at most 8 MiB" in (
        page.importer.report.object)


def test_the_report_shows_a_files_names_as_text(build):
    page = build(HybridPage)
    config = json.loads((FIXTURES / "llama-3-8b.json").read_text())
    config |= {"_name_or_path": "<img src=x onerror=alert(1)>", "<b>extra</b>": 1}
    assert page.importer.read(json.dumps(config))
    report = page.importer.report.object
    assert "<img" not in report and "<b>extra" not in report and "&lt;b&gt;extra" in report


def test_a_dropped_file_is_read_like_a_pasted_one(build):
    page = build(HybridPage)
    page.importer.file.param.update(filename="config.json",
                                    value=(FIXTURES / "qwen3-next-80b-a3b.json").read_bytes())
    assert page.model_a == CUSTOM and "qwen3_next" in page.importer.report.object
    assert page.importer.box.value.startswith("{")
    page.importer.file.param.update(filename="big.json", value=b" " * (MAX_FILE_BYTES + 1))
    assert "Not read: big.json is 8.1 MiB; a config.json of at most 8 MiB is read" in (
        page.importer.report.object)
    page.importer.file.param.update(filename="x.json", value=b"\xff\xfe{")
    assert "Not read: x.json is not UTF-8 text" in page.importer.report.object
    # (fuzz P13) an empty file is said, under its own name
    page.importer.file.param.update(filename="empty.json", value=b"")
    assert "the file is empty" in page.importer.report.object


def test_kv_blocks_beside_the_exact_figure(build):
    page = build(HybridPage, model_b="none")
    readout = page.run.data["readout"][0]
    assert "KV cache in blocks of 16 tokens" in readout and "the same: whole blocks" in readout
    page.kv_block = 1000  # 1,024 tokens take 2 blocks of 1,000
    exact = cache_report(PRESETS["jamba-v0.1"], 1024)["kv_cache_bytes"]
    report = page.run.data["reports"]["a"][0]
    assert report["kv_cache_bytes_in_blocks"] == exact * 2000 // 1024
    assert "KV cache in blocks of 1000 tokens" in page.run.data["readout"][0]
    page.kv_block = 0
    assert "in blocks" not in page.run.data["readout"][0]
