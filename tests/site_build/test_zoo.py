"""sitebuild.zoo: every row of the zoo holds sim's figures for its model, worked out here again
by sim's own functions (not the zoo's); the page written is those rows; each row's link opens
the hybrid page on that model with the same figures (the hybrid page in CPython: the browser
test tests/e2e/test_zoo_page.py opens two of them)."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from sim import cache, engines, gpus, hf_config, weights
from sim.presets import PRESET_HF_CONFIGS
from sitebuild import ROOT, zoo
from ui import zoo as ui_zoo

PUBLISHED = sorted((ROOT / "tests" / "sim" / "hf_configs" / "published").glob("*.config.json"))


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    return {r["id"]: r for r in zoo.rows()}


def expected(model, config) -> dict:
    """A row's figures from sim directly: exact KV in bf16, state in fp32, vLLM with the hybrid
    page's options, weights as the file ships them, the H100 verdict."""
    report = hf_config.from_hf_config(config)[1] if config else {"family": None, "max_context": None}
    family, limit = report["family"], report["max_context"]
    out = {"state": cache.state_bytes(model, 1, "fp32"),
           "kv": {n: cache.kv_cache_bytes(model, t, 1, "bf16") for n, t in ui_zoo.LENGTHS.items()},
           "weights": weights.parameter_count(config).shipped_bytes if config else None}
    options = {"family": family, "kv_dtype": "bf16"}
    try:
        out["vllm"] = {n: engines.allocate(model, t, 1, "vllm", **options).kv_bytes
                       for n, t in ui_zoo.LENGTHS.items()}
    except ValueError:
        out["vllm"], out["max_tokens"] = None, None
        return out
    out["max_tokens"] = gpus.gpu_verdict(model, 1024, 1, "vllm", gpu="H100-80GB", weight_bytes=out["weights"],
                                         max_context=limit, **options)["max_tokens"]
    return out


def test_one_row_per_preset_and_per_published_file(rows):
    assert len(PUBLISHED) == 25
    assert list(rows) == [*cache.PRESETS, *(p.name.removesuffix(".config.json") for p in PUBLISHED)]


@pytest.mark.parametrize("key", list(cache.PRESETS))
def test_a_presets_row_is_sims(rows, key):
    _same(rows[key], expected(cache.PRESETS[key], PRESET_HF_CONFIGS[key]))


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name.removesuffix(".config.json"))
def test_a_published_files_row_is_sims(rows, path):
    model, _ = hf_config.from_hf_config(path.read_bytes())
    _same(rows[path.name.removesuffix(".config.json")], expected(model, path.read_bytes()))


def _same(row: dict, want: dict) -> None:
    assert row["state"] == want["state"]
    assert {n: f["kv"] for n, f in row["ideal"].items()} == want["kv"]
    assert row["ideal"]["1M"]["total"] == want["kv"]["1M"] + want["state"]
    assert row["weights"] == want["weights"]
    assert (row["vllm"] and {n: f["kv"] for n, f in row["vllm"].items()}) == want["vllm"]
    assert row["max_tokens"] == want["max_tokens"]


def test_figures_worked_by_hand(rows):
    # Llama-3-8B: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 128 KiB a token
    assert rows["llama-3-8b"]["ideal"]["32K"]["kv"] == 32 * 8 * 128 * 2 * 2 * 2**15 == 4 * 2**30
    assert rows["llama-3-8b"]["state"] == 0 and rows["mamba-2-2.7b"]["ideal"]["1M"]["kv"] == 0
    # gpt-oss-120b: 18 full layers and 18 of a 128-token window, 8 KV heads × 64, bf16
    per_token = 8 * 64 * 2 * 2
    assert rows["gpt-oss-120b"]["ideal"]["1M"]["kv"] == 18 * per_token * (2**20 + 128)
    assert sorted((p["kind"], p["window"] or 0, p["count"]) for p in rows["gpt-oss-120b"]["layers"]) == [
        ("full", 0, 18), ("window", 128, 18)]
    assert rows["qwen3.5-35b-a3b"]["class"] == "Hybrid: linear + attention"
    assert {p["rule"] for p in rows["qwen3.5-35b-a3b"]["layers"]} == {None, "gated_deltanet"}
    assert rows["recurrentgemma-2b"]["vllm"] is None and "recurrent_gemma" in rows["recurrentgemma-2b"]["refusal"]


def _runtime(out) -> dict[str, int]:
    """A site's pyodide/ as the build leaves it, in small: the runtime's files, the packed
    standard library, numpy, the project's wheel and a lock naming them; returns each file's
    bytes."""
    from sitebuild import zstd  # noqa: PLC0415
    from sitebuild.pins import PINS  # noqa: PLC0415

    folder = out / "pyodide"
    folder.mkdir()
    files = {"pyodide.js": 10, "pyodide.asm.js": 20, "pyodide.asm.wasm": 30,
             "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl": 40,
             "linear_attention_lab-0.1.0-py3-none-any.whl": 50, "bokeh-3.9.2-py3-none-any.whl": 60}
    assert set(PINS["pyodide"]["files"]) == {*list(files)[:3], "python_stdlib.zip", "pyodide-lock.json"}
    for name, n in files.items():
        (folder / name).write_bytes(b"x" * n)
    (folder / "python_stdlib.zip.zst").write_bytes(zstd.compress(b"s" * 1000))
    lock = {"packages": {"numpy": {"file_name": list(files)[3], "depends": []},
                         "linear-attention-lab": {"file_name": list(files)[4], "depends": ["bokeh", "numpy"]},
                         "bokeh": {"file_name": list(files)[5], "depends": []}}}
    (folder / "pyodide-lock.json").write_text(json.dumps(lock))
    return {p.name: p.stat().st_size for p in folder.iterdir()}


def test_the_page_is_the_rows(tmp_path, rows):
    (tmp_path / "index.html").write_text("<ol class=cards><li>a</li></ol>")
    sizes = _runtime(tmp_path)
    assert zoo.write_zoo(tmp_path, "b1") == ["zoo.html"]
    page = (tmp_path / "zoo.html").read_text()
    config = json.loads(re.search(r'<script id="lab-config" type="application/json">(.*?)</script>', page).group(1))
    worker = config["worker"]
    # the zoo's Python: numpy by name, the project's wheel by its file (its lock entry would bring
    # Bokeh), the stdlib's length unzipped; the download is every one of those files and the lock
    assert (worker["packages"], worker["wheel"]) == (["numpy"], "linear_attention_lab-0.1.0-py3-none-any.whl")
    assert worker["packed"] == {"python_stdlib.zip": 1000}
    assert worker["download_bytes"] == sum(n for f, n in sizes.items() if not f.startswith("bokeh"))
    assert worker["max_bytes"] == 8 * 2**20 and worker["function"] == "pasted_row_json"
    assert callable(getattr(ui_zoo, worker["function"]))
    assert "{{" not in page and page.count("<tr id=\"m-") == len(rows)
    assert 'href="zoo.html"' in (tmp_path / "index.html").read_text()
    assert json.loads((tmp_path / "zoo" / "zoo.json").read_text())[0]["id"] == "llama-3-8b"
    assert len(list((tmp_path / "zoo").glob("*.config.json"))) == 25
    for key, row in rows.items():
        tr = re.search(rf'<tr id="m-{re.escape(key)}".*?</tr>', page).group(0)
        assert f'data-col="state" data-label="State / sequence" data-v="{row["state"]}"' in tr
        assert f'data-col="kv1M" data-label="KV at 1M" data-v="{row["ideal"]["1M"]["kv"]}"' in tr
        if row["vllm"]:
            assert f'<data hidden value="{row["vllm"]["128K"]["kv"]}" data-col="vllm128K">' in tr
        assert html.escape(row["link"]) in tr
    assert "<script>" not in page and "bokeh" not in page.lower().replace("bokehjs", "")


def _settings(link: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(link).query))


@pytest.mark.parametrize("key", ["jamba-v0.1", "gpt-oss-120b", "deepseek-v3.2", "qwen3.6-27b-nvfp4"])
def test_a_rows_link_opens_the_hybrid_page_with_the_same_figures(rows, key):
    from ui.pages.hybrid import HybridPage  # noqa: PLC0415
    from ui.urlstate import apply_query  # noqa: PLC0415

    row = rows[key]
    page = HybridPage()
    assert apply_query(page, urlsplit(row["link"]).query) == []
    assert _settings(row["link"])["t"] == "10"  # 1M: CONTEXTS[10]
    report = page.run.data["reports"]["a"][10]
    served = page.run.data["served"]["a"]
    assert report["kv_cache_bytes"] == row["ideal"]["1M"]["kv"] and report["state_bytes"] == row["state"]
    assert served.allocations[10].kv_bytes == row["vllm"]["1M"]["kv"]
    if row["link_note"]:  # the config.json is too long for a link: the layers only
        assert "hf" not in _settings(row["link"]) and served.weights == 0
        return
    assert served.weights == row["weights"] and served.verdicts[10]["max_tokens"] == row["max_tokens"]


def test_a_config_json_alone_in_a_link_is_the_custom_model_with_its_weights():
    """A config.json alone (hf=) in a link is the custom model, its weights counted from the file."""
    from ui.pages.hybrid import HybridPage  # noqa: PLC0415
    from ui.urlstate import apply_query  # noqa: PLC0415

    text = (ROOT / "tests" / "sim" / "hf_configs" / "published" / "qwen3-0.6b.config.json").read_bytes()
    hf = base64.urlsafe_b64encode(json.dumps(json.loads(text)).encode()).decode().rstrip("=")
    page = HybridPage()
    assert apply_query(page, f"model_a=custom&hf={hf}&weights=shipped") == []
    assert page.model_a == "custom" and page.custom["layers"][0]["count"] == 28
    assert page.run.data["served"]["a"].weights == weights.parameter_count(text).shipped_bytes
