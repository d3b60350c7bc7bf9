"""Fuzz findings N10 and N11 (../shared/findings/fuzz-2026-12-03.md, issue 38), each from its
one-line reproduction. N10: a state dtype in the config that vLLM cannot take is a one-line
ValueError naming the field and the dtypes accepted (it was a bare "TypeError: unhashable type"),
and the config's own dtype reaches vLLM's allocation (the config path was dead code). N11: an
option the engine (library) or the command (CLI) does not read is refused in one line that names
it and where it is accepted, never taken without effect; what the line says is accepted is."""

from __future__ import annotations

import json

import pytest
import sim_helpers

from sim.cache import DTYPE_BYTES
from sim.engines import ENGINES, LLAMA_CPP_KV_TYPES, allocate, vllm_state_dtypes
from sim.presets import PRESET_HF_CONFIGS

sim_cli = sim_helpers.sim_cli  # `python -m sim ARGS` in-process
MODEL = "jamba-v0.1"
OWN_DTYPE = {"nemotron_h": "mamba_ssm_cache_dtype", "qwen3_5_text": "mamba_ssm_dtype"}


# N10 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", OWN_DTYPE)
@pytest.mark.parametrize("value", [["x"], {"dtype": "bf16"}, 32, "float8", ""])
def test_a_state_dtype_vllm_cannot_take_is_named_with_those_it_can(family, value) -> None:
    key = OWN_DTYPE[family]  # N10: vllm_state_dtypes("nemotron_h", {key: ["x"]})
    with pytest.raises(ValueError) as refused:
        vllm_state_dtypes(family, {key: value})
    message = str(refused.value)
    assert message.startswith(f"{key}: unknown dtype ") and "\n" not in message
    accepted = message.split("; accepted: ")[1].split(", ")
    assert len(accepted) >= 3
    for name in accepted:  # each dtype the message offers is taken, as fp32, bf16 or fp16
        assert vllm_state_dtypes(family, {key: name})[1] in ("fp32", "bf16", "fp16"), name


def test_the_configs_own_state_dtype_reaches_vllm(sim_cli, tmp_path) -> None:
    """Nemotron-H's ssm state is fp32 in vLLM unless its config.json's mamba_ssm_cache_dtype
    says otherwise: the config's bfloat16 allocates what an explicit ssm_dtype bf16 does, in the
    library and through --hf-config."""
    own = {"mamba_ssm_cache_dtype": "bfloat16"}
    default = allocate("nemotron-h-8b", 1000, 1, "vllm", family="nemotron_h")
    from_config = allocate("nemotron-h-8b", 1000, 1, "vllm", family="nemotron_h", config=own)
    explicit = allocate("nemotron-h-8b", 1000, 1, "vllm", family="nemotron_h", ssm_dtype="bf16")
    assert from_config.state_bytes == explicit.state_bytes < default.state_bytes
    path = tmp_path / "nemotron-h.json"
    path.write_text(json.dumps(PRESET_HF_CONFIGS["nemotron-h-8b"] | own))
    runs = [sim_cli("cache", "--hf-config", str(path), "--tokens", "1000", "--engine", "vllm",
                    "--json", *extra) for extra in ((), ("--state-dtype", "bf16"))]
    assert all(run.returncode == 0 for run in runs), runs
    config_says, option_says = (json.loads(run.stdout) for run in runs)
    assert config_says["allocated_state_bytes"] == option_says["allocated_state_bytes"]
    assert config_says["allocated_state_bytes"] == explicit.state_bytes


# N11, the library -------------------------------------------------------------------------------

READ_BY = {"ssm_dtype": ("ideal", "vllm", "sglang"), "conv_dtype": ("vllm",)}
UNREAD = [("llama.cpp", "ssm_dtype", "int4"), ("llama.cpp", "ssm_dtype", 1),
          *((engine, "conv_dtype", "zz") for engine in ("ideal", "llama.cpp", "sglang"))]


@pytest.mark.parametrize("engine, option, value", UNREAD)
def test_a_dtype_the_engine_does_not_read_is_refused(engine, option, value) -> None:
    with pytest.raises(ValueError) as refused:  # N11: allocate(…, engine="llama.cpp", ssm_dtype="int4")
        allocate(MODEL, 1000, 1, engine, **{option: value})
    message = str(refused.value)
    assert message.startswith(f"{option}: {engine} does not read it") and "\n" not in message
    engines = " or ".join(READ_BY[option])
    assert message.endswith(f"give it only with {engines}")
    for other in READ_BY[option]:  # where the message sends it, it is read
        wide, narrow = (allocate(MODEL, 1000, 1, other, **{option: d}) for d in ("fp32", "bf16"))
        assert wide.state_bytes > narrow.state_bytes, other


@pytest.mark.parametrize("engine", ENGINES)
def test_a_family_that_is_no_model_type_name_is_refused(engine) -> None:
    with pytest.raises(ValueError) as refused:  # N11: family="<script>" for every engine
        allocate(MODEL, 1000, 1, engine, family="<script>")
    assert str(refused.value) == ("family: expected a model_type name (letters, digits, _ - .) "
                                  "or None, got '<script>'")
    assert allocate(MODEL, 1000, 1, engine, family="jamba").total_bytes > 0


# N11, the CLI -----------------------------------------------------------------------------------

CLI_CASES = [  # (the option, what the line names as wrong, where it is accepted, that place)
    (("--overhead", "3"), "--overhead: has no effect without --gpu or --gpu-memory",
     "--gpu or --gpu-memory", ("--gpu", "H100-80GB")),
    *(((*option, *engine), f"{option[0]}: has no effect under {engine[-1] if engine else 'ideal'}",
       "accepted with --engine vllm or sglang", ("--engine", "vllm"))
      for option in (("--speculative-tokens", "4"), ("--no-prefix-caching",))
      for engine in ((), ("--engine", "llama.cpp"))),
    (("--state-dtype", "fp8", "--engine", "llama.cpp"), "--state-dtype: has no effect under llama.cpp",
     "accepted with --engine ideal, vllm or sglang", ("--engine", "ideal")),
]


@pytest.mark.parametrize("args, wrong, accepted, fixed", CLI_CASES,
                         ids=[" ".join(case[0]) for case in CLI_CASES])
def test_a_cli_option_without_effect_is_refused_in_one_line(sim_cli, args, wrong, accepted,
                                                            fixed) -> None:
    base = ("cache", "--model", MODEL, "--tokens", "1000")
    run = sim_cli(*base, *args)
    assert run.returncode == 2 and run.stdout == "", run
    assert run.stderr.count("\n") == 1 and wrong in run.stderr and accepted in run.stderr
    if "--engine" in args:  # where the line sends it, the option is taken
        args = args[:args.index("--engine")]
    assert sim_cli(*base, *args, *fixed).returncode == 0


@pytest.mark.parametrize("engine, kv_dtype, types", [("llama.cpp", "fp8", LLAMA_CPP_KV_TYPES),
                                                     ("ideal", "q4_0", DTYPE_BYTES)])
def test_a_kv_dtype_is_checked_against_the_engines_own_list(sim_cli, engine, kv_dtype, types):
    """N5: q4_0 under llama.cpp was refused with the ideal table's list, fp8 with llama.cpp's:
    two lists that contradicted each other. The refusal names the engine and its one list,
    and each type on it is taken (q4_0 and q8_0 under llama.cpp too)."""
    base = ("cache", "--model", MODEL, "--tokens", "1000", "--engine", engine)
    run = sim_cli(*base, "--kv-dtype", kv_dtype)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert f"--kv-dtype: kv_dtype '{kv_dtype}' is unknown for {engine}; accepted: " in run.stderr
    assert run.stderr.rstrip().endswith("accepted: " + ", ".join(types))
    for name in types:
        assert sim_cli(*base, "--kv-dtype", name).returncode == 0, name
