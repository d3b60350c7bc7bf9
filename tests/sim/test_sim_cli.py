"""The command line, called in-process as `sim.__main__.main(argv)`, and the import boundary.

Three tests still start a fresh interpreter, for what only a separate process can check: that
importing sim loads no UI library, and the two inputs that once read or grew without end
(/dev/zero, a count of 10^30), where only a killable process with a timeout keeps a
regression from hanging or exhausting the test run; those two also see the exit status as the
shell does, through `sys.exit(main())`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sim_helpers

ROOT = Path(__file__).resolve().parents[2]


sim_cli = sim_helpers.sim_cli  # `python -m sim ARGS` in-process


def test_sim_imports_no_ui_library() -> None:
    # a fresh interpreter: in this one pytest and other tests may have imported anything
    code = ("import sim, sim.cache, sim.recall, sim.parallel, sim.cost, sim.scenarios, sys; "
            "bad = [m for m in sys.modules if m.split('.')[0] in {'panel', 'bokeh', 'param'}]; "
            "assert not bad, bad")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_cache_json(sim_cli) -> None:
    result = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "262144", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["kv_cache_bytes"] == 4 * 2**30
    assert report["total_bytes"] == report["kv_cache_bytes"] + report["state_bytes"]
    assert len(report["per_layer"]) == 32 and report["per_layer"][4]["kv_bytes"] == 2**30


def test_cache_table_and_config_file(tmp_path: Path, sim_cli) -> None:
    config = tmp_path / "model.json"
    config.write_text(json.dumps({"name": "tiny", "layers": [
        {"kind": "attention", "kv_heads": 1, "head_dim": 4},
        {"kind": "recurrent", "state_shape": [2, 4, 4]}]}))
    result = sim_cli("cache", "--config", str(config), "--tokens", "8", "--batch", "2",
                     "--kv-dtype", "fp32", "--state-dtype", "fp16")
    assert result.returncode == 0, result.stderr
    assert "tiny" in result.stdout and "KV cache" in result.stdout
    assert "(512 bytes)" in result.stdout  # 2·1·4·8 tokens·2 batch·4 bytes


def test_models_lists_presets_with_sources(sim_cli) -> None:
    result = sim_cli("models")
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
def test_bad_input_one_line_exit_2(args, message: str, sim_cli) -> None:
    result = sim_cli(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_config_file_names_the_field(tmp_path: Path, sim_cli) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"name": "x", "layers": [{"kind": "attention", "kv_heads": 2}]}))
    result = sim_cli("cache", "--config", str(config), "--tokens", "5")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("error: layers[0].head_dim: missing; kind 'attention' "
                                     "needs kv_heads, head_dim")


def _one_error_line(result: sim_helpers.Run | subprocess.CompletedProcess, start: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), lines
    return lines[0]


def test_tokens_1e30_is_one_line_not_a_traceback(sim_cli) -> None:
    # before: OverflowError with a traceback
    result = sim_cli("cache", "--model", "recurrentgemma-2b", "--tokens", str(10**30))
    line = _one_error_line(result, "error: tokens: 1000000000000000000000000000000 is too large")
    assert line.endswith("accepted: 0 to 1,099,511,627,776")
    result = sim_cli("cache", "--model", "llama-3-8b", "--tokens", "9" * 5000)
    _one_error_line(result, "error: argument --tokens: expected an integer, got 5,000 characters")
    result = sim_cli("cache", "--model", "llama-3-8b", "--tokens", str(2**40), "--batch", "1")
    _one_error_line(result, "error: tokens, batch: the KV cache would take 144,115,188,075,855,872")


def test_config_with_count_1e30_answers_quickly(tmp_path: Path) -> None:
    # a subprocess: a regression must be killed by the timeout, not hang or fill memory here
    config = tmp_path / "huge.json"
    config.write_text('{"name": "x", "layers": [{"kind": "mlp"}, {"kind": "attention", '
                      '"count": 1000000000000000000000000000000, "kv_heads": 1, "head_dim": 8}]}')
    result = subprocess.run([sys.executable, "-m", "sim", "cache", "--config", str(config),
                             "--tokens", "5"], cwd=ROOT, capture_output=True, text=True,
                            timeout=20)  # before: grew past 1 GB without answering
    _one_error_line(result, "error: layers[1].count: 1000000000000000000000000000000 is too large")


def test_dev_zero_reads_at_most_the_limit() -> None:
    # a subprocess: a regression (reading /dev/zero without end) must be killed by the timeout
    result = subprocess.run([sys.executable, "-m", "sim", "cache", "--config", "/dev/zero",
                             "--tokens", "5"], cwd=ROOT, capture_output=True, text=True,
                            timeout=20)  # before: read without end
    _one_error_line(result, "error: --config: '/dev/zero' is larger than 65,536 bytes")


@pytest.mark.parametrize("text, start", [
    ("[" * 30_000 + "]" * 30_000, "error: config: nested more than 32 levels deep"),
    ('{"name": "x", "layers": [{"kind": "mlp", "count": ' + "7" * 5000 + "}]}",
     "error: layers[0].count: a number written with 5,000 characters"),
    ('{"name": "x", "layers": [{"kind": "attention", "kv_heads": 1, "head_dim": '
     + str(2**70) + "}]}",
     "error: layers[0].head_dim: 1180591620717411303424 is too large"),
], ids=["nested-30000", "count-5000-digits", "head_dim-2^70"])
def test_bad_config_texts_are_one_line(tmp_path: Path, text: str, start: str, sim_cli) -> None:
    config = tmp_path / "bad.json"
    config.write_text(text)
    _one_error_line(sim_cli("cache", "--config", str(config), "--tokens", "5"), start)


def test_names_with_escapes_cannot_drive_the_terminal(tmp_path: Path, sim_cli) -> None:
    config = tmp_path / "evil.json"
    config.write_text(json.dumps({"name": "evil\x1b]0;owned\x07\x1b[2J", "layers": [
        {"kind": "mlp", "label": "red\x1b[31m\u202eA\nB"}]}))
    result = sim_cli("cache", "--config", str(config), "--tokens", "5")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "evil\\x1b]0;owned\\x07\\x1b[2J: 1 layers" in result.stdout  # shown, escaped
    assert "red\\x1b[31m\\u202eA\\nB" in result.stdout
    result = sim_cli("cache", "--model", "gpt\x1b[2J", "--tokens", "5")
    line = _one_error_line(result, "error: --model: unknown preset 'gpt[2J'")
    assert "\x1b" not in line


@pytest.mark.parametrize("error", [MemoryError(), RecursionError("deep"), OverflowError("big"),
                                   OSError(5, "I/O error"), RuntimeError("bug\nline two"),
                                   UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")],
                         ids=lambda error: type(error).__name__)
def test_every_error_class_is_one_line(monkeypatch, capsys, error: BaseException) -> None:
    from sim import __main__ as cli

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli, "cache_report", fail)
    assert cli.main(["cache", "--model", "llama-3-8b", "--tokens", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines


# --- weights, engines and the GPU verdict (issue 22) -------------------------------------------

ENGINE_KEYS = ("params_total", "params_active", "weight_bytes", "engine", "allocated_bytes",
               "engine_block_tokens", "fits", "max_tokens", "max_sequences")


def test_cache_json_with_weights_engine_and_gpu(sim_cli) -> None:
    result = sim_cli("cache", "--model", "qwen3-next-80b-a3b", "--tokens", "32768", "--weights",
                     "fp8", "--engine", "vllm", "--gpu", "H200-141GB", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert all(key in report for key in ENGINE_KEYS)
    assert report["params_total"] == 79_674_391_296 and report["weight_bytes"] == 79_674_391_296
    # 12 layers per group · 576-token pages of 2,048 bytes · (57 attention + 9 state blocks)
    assert report["allocated_bytes"] == 12 * 576 * 2048 * 66 and report["engine_block_tokens"] == 576
    budget = -(-143_771 * 2**20 * 92 // 100) - 79_674_391_296 - 2 * 2**30  # H200: 143,771 MiB
    assert report["budget_bytes"] == budget and report["fits"] is True
    assert report["max_sequences"] == budget // (12 * 576 * 2048 * 66)
    off = json.loads(sim_cli("cache", "--model", "qwen3-next-80b-a3b", "--tokens", "32768",
                             "--engine", "vllm", "--no-prefix-caching", "--json").stdout)
    assert off["allocated_bytes"] == 855_638_016 and off["params_total"] is None
    assert off["fits"] is None and off["engine_block_tokens"] == 544


def test_cache_llama_cpp_engine_and_table(tmp_path: Path, sim_cli) -> None:
    result = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "1000", "--engine", "llama.cpp",
                     "--json")
    report = json.loads(result.stdout)
    assert report["allocated_bytes"] == 4 * 2 * 8 * 128 * 2 * 1024 + report["state_bytes"]
    table = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "300000", "--weights",
                    "--gpu-memory", "200")
    assert table.returncode == 0, table.stderr
    assert "parameters: 51,570,323,328 total" in table.stdout
    assert "beyond the model's own maximum of 262,144" in table.stdout
    assert "longest context for 1 sequence: " in table.stdout


@pytest.mark.parametrize("args, message", [
    (("--gpu-memory", "0"), "error: --gpu-memory: expected a size above 0"),
    (("--gpu", "H100"), "error: --gpu: unknown GPU 'H100'"),
    (("--batch", "-1", "--engine", "vllm"), "error: batch: expected a positive integer, got -1"),
    (("--engine", "tgi"), "error: argument --engine: invalid choice: 'tgi'"),
    (("--weights", "int3"), "error: --weights: unknown dtype 'int3'"),
    (("--speculative-tokens", "-2", "--engine", "vllm"), "error: speculative_tokens: expected"),
    (("--overhead", "nan", "--gpu", "L4-24GB"), "error: --overhead: expected 0 to 16,384 GiB"),
])
def test_engine_options_refused_with_one_line(args: tuple[str, ...], message: str, sim_cli) -> None:
    result = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "100", *args)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(message)


def test_weights_of_a_layer_description_are_refused(tmp_path: Path, sim_cli) -> None:
    config = tmp_path / "model.json"
    config.write_text(json.dumps({"name": "t", "layers": [
        {"kind": "attention", "kv_heads": 1, "head_dim": 4}]}))
    result = sim_cli("cache", "--config", str(config), "--tokens", "8", "--weights")
    assert result.returncode == 2
    assert result.stderr.startswith("error: --weights: needs --model or --hf-config")


def test_gpus_lists_the_gpus(sim_cli) -> None:
    result = sim_cli("gpus")
    assert result.returncode == 0 and "H100-80GB        80 GB" in result.stdout
