"""The 25 published config.json files of issue 38 (tests/sim/hf_configs/published/, copied byte
for byte from ../shared/data/hf-configs/; SOURCES.md there gives where each comes from and the
published totals): every one read for the cache, the weights and a GPU verdict, through the
library and the CLI, and the totals held to the published figures (2 % where SOURCES.md marks
an exact [S] figure, 5 % where it is rounded or a name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sim_helpers

from sim.engines import allocate
from sim.gpus import gpu_verdict
from sim.hf_config import from_hf_config
from sim.hf_reader import parse_config, unwrap
from sim.weights import parameter_count

sim_cli = sim_helpers.sim_cli  # `python -m sim ARGS` in-process

PUBLISHED = Path(__file__).parent / "hf_configs" / "published"
FILES = sorted(PUBLISHED.glob("*.config.json"))
# (total, active) published, in parameters, and the tolerance: SOURCES.md's figures.
FIGURES = {
    "qwen3.5-35b-a3b": (35e9, 3e9, 0.05),  # "35B total/3B active" [S], rounded
    "qwen3.5-397b-a17b": (397e9, 17e9, 0.05),  # "397B total • 17B active" [S]
    "qwen3.6-35b-a3b-nvfp4": (35e9, 3e9, 0.05),  # "35B in total and 3B activated" [S]
    "nemotron-h-56b-base-8k": (56e9, None, 0.02),  # "56B model parameters" [S]
    "nemotron-3-super-120b-a12b-fp8": (120e9, 12e9, 0.05),  # [S], rounded
    "nemotron-3-ultra-550b-a55b": (550e9, 55e9, 0.05),  # [S], rounded
    "mimo-v2-flash": (309e9, 15e9, 0.05),  # [S], rounded
    "gpt-oss-120b": (116.83e9, 5.13e9, 0.02),  # "116.8B-parameter … 5.1B" [S]
    "gemma-4-26b-a4b": (25.2e9, 3.8e9, 0.02),  # "25.2B total … 3.8B active" [S]
    "kimi-k2-instruct": (1.04e12, 32e9, 0.05),  # "1.04 trillion", "32 billion activated" [S]
}


def _name(path: Path) -> str:
    return path.name.removesuffix(".config.json")


def test_the_published_files_are_the_shared_ones() -> None:
    assert len(FILES) == 25
    shared = Path(__file__).parents[3] / "shared" / "data" / "hf-configs"
    if shared.is_dir():  # beside the checkout: the copies are byte for byte
        for path in FILES:
            assert path.read_bytes() == (shared / path.name).read_bytes()


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_every_file_is_read_for_cache_weights_and_verdict(path: Path) -> None:
    text = path.read_bytes()
    model, report = from_hf_config(text)
    count = parameter_count(text)
    assert model.n_layers >= 28 and count.total > 5e8 and count.shipped_bytes > 0
    inner = unwrap(parse_config(text))[1]
    for engine in ("ideal", "vllm", "llama.cpp", "sglang"):
        a = allocate(model, 4096, 1, engine, family=report["family"],
                     **({"config": inner} if engine in ("vllm", "sglang") else {}))
        assert a.total_bytes > 0
    v = gpu_verdict(model, 4096, 1, "vllm", gpu="H200-141GB", weight_bytes=count.shipped_bytes,
                    max_context=report["max_context"], family=report["family"], config=inner)
    assert v["fits"] in (True, False)
    if v["max_tokens"] is not None and report["max_context"]:
        assert v["max_tokens"] <= report["max_context"]  # capped at the model's own maximum


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_totals_match_the_published_figures(name: str) -> None:
    total, active, tolerance = FIGURES[name]
    count = parameter_count((PUBLISHED / f"{name}.config.json").read_bytes())
    assert abs(count.total / total - 1) <= tolerance
    if active is not None:  # cards count the unembedding, not the embedding lookup; Gemma 4's
        # 3.8B counts its tied embedding matrix (it is the unembedding too)
        got = count.active if count.tied else count.active_without_input_embedding
        assert abs(got / active - 1) <= tolerance  # the 2 % / 5 %, as the totals


def test_gpt_oss_120b_fits_one_h100_under_vllm_at_its_default_context() -> None:
    text = (PUBLISHED / "gpt-oss-120b.config.json").read_bytes()
    model, report = from_hf_config(text)
    count = parameter_count(text)
    # MXFP4 experts: 4 bits + one 1-byte scale per 32 weights, the rest bf16 (about 65 GB)
    assert 60e9 < count.shipped_bytes < 70e9 and "MXFP4" in count.shipped_dtype
    v = gpu_verdict(model, report["max_context"], 1, "vllm", gpu="H100-80GB",
                    weight_bytes=count.shipped_bytes, max_context=report["max_context"],
                    family=report["family"])
    assert report["max_context"] == 131_072 and v["fits"] is True


def test_kimi_k3_is_in_the_published_range() -> None:
    count = parameter_count((PUBLISHED / "kimi-k3.config.json").read_bytes())
    assert 2.5e12 < count.total < 3.2e12  # "exceeds 2.5 trillion" (routed experts in 3,584)


def test_weights_that_cannot_be_counted_never_fit() -> None:
    verdict = gpu_verdict("jamba-v0.1", 1000, 1, "vllm", gpu="H200-141GB", weight_bytes=None)
    assert verdict["fits"] is None and "cannot judge" in verdict["lines"][-1]


def test_infinity_and_a_bom_are_read_and_written_back() -> None:
    text = (PUBLISHED / "nemotron-h-56b-base-8k.config.json").read_text()
    assert "Infinity" in text
    config = parse_config("\ufeff" + text)
    assert json.dumps(config["time_step_limit"]) == "[0.0, Infinity]"


def test_the_cli_reads_every_file(sim_cli) -> None:
    for path in FILES:
        run = sim_cli("cache", "--hf-config", str(path), "--tokens", "4096", "--engine", "vllm",
                      "--gpu", "H200-141GB", "--json")
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert out["weight_bytes"] > 0 and out["fits"] in (True, False) and out["weight_storage"]
    quantized = sim_cli("cache", "--hf-config", str(PUBLISHED / "gpt-oss-120b.config.json"),
                        "--tokens", "1000", "--engine", "llama.cpp", "--kv-dtype", "q4_0")
    assert quantized.returncode == 0 and "KV q4_0" in quantized.stdout  # N5
    refused = sim_cli("cache", "--model", "jamba-v0.1", "--tokens", "1000", "--overhead", "3")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1  # N11: one line
