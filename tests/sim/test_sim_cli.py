"""The command line and the import boundary, each in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_sim_imports_no_ui_library() -> None:
    code = ("import sim, sim.cache, sim.recall, sim.parallel, sim.cost, sim.scenarios, sys; "
            "bad = [m for m in sys.modules if m.split('.')[0] in {'panel', 'bokeh', 'param'}]; "
            "assert not bad, bad")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_cache_json() -> None:
    result = _sim("cache", "--model", "jamba-v0.1", "--tokens", "262144", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["kv_cache_bytes"] == 4 * 2**30
    assert report["total_bytes"] == report["kv_cache_bytes"] + report["state_bytes"]
    assert len(report["per_layer"]) == 32 and report["per_layer"][4]["kv_bytes"] == 2**30


def test_cache_table_and_config_file(tmp_path: Path) -> None:
    config = tmp_path / "model.json"
    config.write_text(json.dumps({"name": "tiny", "layers": [
        {"kind": "attention", "kv_heads": 1, "head_dim": 4},
        {"kind": "recurrent", "state_shape": [2, 4, 4]}]}))
    result = _sim("cache", "--config", str(config), "--tokens", "8", "--batch", "2",
                  "--kv-dtype", "fp32", "--state-dtype", "fp16")
    assert result.returncode == 0, result.stderr
    assert "tiny" in result.stdout and "KV cache" in result.stdout
    assert "(512 bytes)" in result.stdout  # 2·1·4·8 tokens·2 batch·4 bytes


def test_models_lists_presets_with_sources() -> None:
    result = _sim("models")
    assert result.returncode == 0
    assert "jamba-v0.1" in result.stdout and "huggingface.co/ai21labs/Jamba-v0.1" in result.stdout
    assert result.stdout.count("\n") == 20


@pytest.mark.parametrize("args, message", [
    (("cache", "--model", "gpt-9", "--tokens", "5"), "--model: unknown preset 'gpt-9'"),
    (("cache", "--model", "llama-3-8b", "--tokens", "-5"), "tokens: expected an integer ≥ 0"),
    (("cache", "--model", "llama-3-8b", "--tokens", "5", "--batch", "0"), "batch: expected"),
    (("cache", "--model", "llama-3-8b", "--tokens", "5", "--kv-dtype", "int4"), "kv_dtype"),
    (("cache", "--model", "llama-3-8b"), "--tokens"),
    (("cache", "--model", "llama-3-8b", "--tokens", "lots"), "invalid int value"),
    (("cache", "--config", "/nonexistent/model.json", "--tokens", "5"), "--config: cannot read"),
    (("cache", "--model", "llama-3-8b", "--config", "x.json", "--tokens", "5"), "not allowed"),
    (("explode",), "invalid choice"),
    ((), "required"),
])
def test_bad_input_one_line_exit_2(args, message: str) -> None:
    result = _sim(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_config_file_names_the_field(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"name": "x", "layers": [{"kind": "attention", "kv_heads": 2}]}))
    result = _sim("cache", "--config", str(config), "--tokens", "5")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("error: layers[0].head_dim: missing; kind 'attention' "
                                     "needs kv_heads, head_dim")
