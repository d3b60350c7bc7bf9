"""Command line: `python -m sim cache ...` and `python -m sim models`.

    python -m sim cache (--model ID | --config FILE | --hf-config FILE) --tokens N [--batch B]
                        [--kv-dtype D] [--state-dtype D] [--block [B]] [--weights [DTYPE]]
                        [--engine {ideal,vllm,llama.cpp,sglang}] [--no-prefix-caching]
                        [--speculative-tokens N] [--gpu NAME | --gpu-memory GIB]
                        [--overhead GIB] [--json]
    python -m sim models
    python -m sim gpus

--weights counts the parameters (sim.weights; a preset or a config.json, not a layer
description) and their bytes at DTYPE (bf16 when no dtype is given). --engine adds what the
engine allocates for --batch sequences of --tokens tokens (sim.engines); --gpu or --gpu-memory
adds the verdict (sim.gpus): the budget, whether it fits, the longest context for --batch
sequences and the most sequences at --tokens, with the arithmetic. With --json these add the
keys params_total, params_active, weight_bytes, engine, allocated_bytes (KV + state as the
engine allocates them), engine_block_tokens, fits, max_tokens, max_sequences (null where not
asked), beside engine_lines, verdict_lines, max_context and beyond_max_context.

--hf-config reads a Hugging Face config.json (sim.hf_config) and adds the fields it used,
derived, defaulted and ignored; --block B also shows the KV cache rounded up to whole blocks of B
tokens per attention layer, as a paged engine allocates it (B = 16 when no number is given).

Any problem prints one line `error: ...` on stderr and exits with status 2, never a traceback:
bad arguments, a file that cannot be read or is larger than 64 KiB (at most that many bytes are
read, so `--config /dev/zero` answers at once), a model `sim.cache` refuses, a figure past 2^53
bytes, and even an unexpected failure. Names and labels from a file are printed with control
characters (ESC, bidi overrides, newlines) shown as escapes, so a file cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from .cache import (
    DTYPE_BYTES,
    MAX_TOKENS,
    PRESETS,
    Model,
    cache_report,
    format_bytes,
    parse_model_text,
)
from .engines import ENGINES, LLAMA_CPP_KV_TYPES, allocate
from .gpus import GPU_MIB, GPUS, GiB, gpu_memory_bytes, gpu_verdict
from .hf_config import context_note, from_hf_config, max_context, parse_config, recognise
from .hf_reader import MAX_CONFIG_BYTES, unwrap
from .presets import PRESET_HF_CONFIGS
from .user_input import MAX_NUMBER_DIGITS, MAX_TEXT_BYTES, escape_unprintable, quote
from .weights import WEIGHT_DTYPES, parameter_count, parameter_report


def _say_error(message: str) -> None:
    print(f"error: {escape_unprintable(' '.join(message.split()), 1000)}", file=sys.stderr)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _say_error(message)
        raise SystemExit(2)


def _integer(text: str) -> int:
    """An argparse type: an integer written with at most 40 digits (never converts more)."""
    digits = text.strip()
    if len(digits) > MAX_NUMBER_DIGITS:
        raise argparse.ArgumentTypeError(
            f"expected an integer, got {len(text):,} characters; accepted: 0 to {MAX_TOKENS:,}")
    try:
        return int(digits)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {quote(text)}") from None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m sim", description="KV-cache and state calculator.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    cache = commands.add_parser("cache", help="KV-cache and state bytes of one model")
    which = cache.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help=f"preset id: {', '.join(PRESETS)}")
    which.add_argument("--config", help="JSON file describing the model's layers (≤ 64 KiB)")
    which.add_argument("--hf-config", help="a Hugging Face config.json (≤ 8 MiB)")
    cache.add_argument("--tokens", type=_integer, required=True, help="tokens per sequence")
    cache.add_argument("--batch", type=_integer, default=1, help="sequences (default 1)")
    cache.add_argument("--kv-dtype", default=None,
                       help=f"one of {', '.join(DTYPE_BYTES)} (default bf16); under llama.cpp one "
                            f"of {', '.join(LLAMA_CPP_KV_TYPES)} (default f16)")
    cache.add_argument("--state-dtype", default=None,
                       help=f"one of {', '.join(DTYPE_BYTES)} (default fp32; an engine's own)")
    cache.add_argument("--block", type=_integer, nargs="?", const=16, default=None, metavar="B",
                       help="also show the KV cache in whole blocks of B tokens (default B 16)")
    cache.add_argument("--weights", nargs="?", const="bf16", default=None, metavar="DTYPE",
                       help=f"count parameters and weight bytes at one of "
                            f"{', '.join(WEIGHT_DTYPES)} (default shipped: as the config.json's "
                            "quantization_config and dtype say; bf16 for a preset)")
    cache.add_argument("--engine", choices=ENGINES, default=None,
                       help="what an engine allocates (default: ideal when --gpu is given)")
    cache.add_argument("--no-prefix-caching", action="store_true",
                       help="vLLM without prefix caching; SGLang without the radix cache")
    cache.add_argument("--speculative-tokens", type=_integer, default=0, metavar="N",
                       help="speculative (draft) tokens per step (default 0)")
    gpu = cache.add_mutually_exclusive_group()
    gpu.add_argument("--gpu", default=None, help=f"one of {', '.join(GPUS)}")
    gpu.add_argument("--gpu-memory", type=float, default=None, metavar="GIB",
                     help="a custom GPU size in GiB")
    cache.add_argument("--overhead", type=float, default=None, metavar="GIB",
                       help="activations, CUDA graphs and other non-KV memory (default 2 GiB)")
    cache.add_argument("--json", action="store_true", help="print JSON instead of a table")
    commands.add_parser("models", help="list the presets with their sources")
    commands.add_parser("gpus", help="list the GPUs the verdict knows")
    return parser


def _cell(text: str, width: int) -> str:
    """A name or label for the table: escaped, cut to `width` characters."""
    return escape_unprintable(text, width)


def _table(report: dict[str, Any]) -> str:
    lines = [f"{_cell(report['model'], 80)}: {report['n_layers']} layers, "
             f"{report['tokens']:,} tokens, batch {report['batch']}, KV {report['kv_dtype']}, "
             f"state {report['state_dtype']}",
             "", f"{'layer':>5}  {'mixer':<22} {'KV cache':>12} {'state':>12}"]
    for row in report["per_layer"]:
        lines.append(f"{row['layer']:>5}  {_cell(row['label'], 40):<22} "
                     f"{format_bytes(row['kv_bytes']):>12} {format_bytes(row['state_bytes']):>12}")
    lines.append("")
    blocked = report.get("kv_cache_bytes_in_blocks")
    for key, name in (("kv_cache_bytes", "KV cache"), ("state_bytes", "state"),
                      ("total_bytes", "total"), ("full_attention_kv_bytes", "full-attention KV")):
        if report[key] is not None:
            lines.append(f"{name + ':':<22} {format_bytes(report[key]):>12} ({report[key]:,} bytes)")
        if key == "kv_cache_bytes" and blocked is not None:
            name = f"in {report['block_tokens']}-token blocks"
            lines.append(f"{'  ' + name + ':':<22} {format_bytes(blocked):>12} ({blocked:,} bytes)")
    if report["ratio"] is not None:
        lines.append(f"{'KV ratio:':<22} {report['ratio']:>12.4f} of full attention")
    return "\n".join(lines)


def read_limited(path: str, option: str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """At most `limit` + 1 bytes of `path` (so /dev/zero or a huge file costs nothing); one
    more than the limit means too long."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ValueError(f"{option}: cannot read {quote(path, 80)} ({reason})") from None
    if len(data) > limit:
        raise ValueError(f"{option}: {quote(path, 80)} is larger than {limit:,} bytes; "
                         f"accepted: at most {limit:,}")
    return data


def _fields(hf_report: dict[str, Any]) -> str:
    """The --hf-config report: one line per kind of field, names escaped."""
    lines = ["", f"config.json read as {hf_report['family']}"]
    for key, name in (("used", "used"), ("derived", "derived"), ("defaults", "defaults"),
                      ("ignored", "ignored (no effect on the cache)")):
        text = ", ".join(hf_report[key]) or "none"
        lines.append(f"{name + ':':<34} {escape_unprintable(text, 4000)}")
    return "\n".join(lines)


def _model(args: argparse.Namespace) -> tuple[Model, dict[str, Any] | None]:
    if args.hf_config is not None:
        return from_hf_config(read_limited(args.hf_config, "--hf-config", MAX_CONFIG_BYTES))
    return _model_description(args), None


def _config(args: argparse.Namespace) -> dict[str, Any] | None:
    """The config.json behind the model: the file, a preset's fields, or None (a layer file)."""
    if args.hf_config is not None:
        return parse_config(read_limited(args.hf_config, "--hf-config", MAX_CONFIG_BYTES))
    if args.model is not None:
        return PRESET_HF_CONFIGS[args.model]
    return None


def _check_options(args: argparse.Namespace) -> None:
    """Refuse, in one line, an option that would have no effect (N11) and a KV dtype the
    chosen engine does not take (N5: llama.cpp's quantized types are its own)."""
    gpu_asked = args.gpu is not None or args.gpu_memory is not None
    if args.overhead is not None and not gpu_asked:
        raise ValueError("--overhead: has no effect without --gpu or --gpu-memory")
    engine = args.engine or "ideal"
    if args.speculative_tokens and engine not in ("vllm", "sglang"):
        raise ValueError(f"--speculative-tokens: has no effect under {engine}; accepted with "
                         "--engine vllm or sglang")
    if args.no_prefix_caching and engine not in ("vllm", "sglang"):
        raise ValueError(f"--no-prefix-caching: has no effect under {engine}; accepted with "
                         "--engine vllm or sglang")
    if args.state_dtype is not None and engine == "llama.cpp":
        raise ValueError("--state-dtype: has no effect under llama.cpp (its state is f32, "
                         "hard-coded); accepted with --engine ideal, vllm or sglang")
    accepted = LLAMA_CPP_KV_TYPES if engine == "llama.cpp" else DTYPE_BYTES
    if args.kv_dtype is not None and args.kv_dtype not in accepted:
        raise ValueError(f"--kv-dtype: kv_dtype {quote(args.kv_dtype)} is unknown for {engine}; "
                         f"accepted: {', '.join(accepted)}")


def _overhead(gib: float | None) -> int:
    if gib is None:
        gib = 2.0
    if not (0 <= gib <= 16_384):  # also refuses NaN
        raise ValueError(f"--overhead: expected 0 to 16,384 GiB, got {gib!r}")
    return int(gib * GiB)


def _engine_keys(args: argparse.Namespace, model: Model,
                 hf_report: dict[str, Any] | None) -> dict[str, Any] | None:
    """Parameters, the engine's allocation and the GPU verdict, or None when none is asked."""
    gpu_asked = args.gpu is not None or args.gpu_memory is not None
    if args.weights is None and args.engine is None and not gpu_asked:
        return None
    if gpu_asked:
        try:
            gpu_memory_bytes(args.gpu, args.gpu_memory)
        except ValueError as error:
            option = "--gpu" if args.gpu is not None else "--gpu-memory"
            raise ValueError(f"{option}: {str(error).split(': ', 1)[1]}") from None
    config = _config(args)
    if args.weights is not None and args.weights not in WEIGHT_DTYPES:
        raise ValueError(f"--weights: unknown dtype {quote(args.weights)}; accepted: "
                         f"{', '.join(WEIGHT_DTYPES)}")
    params = None
    if config is not None and (args.weights is not None or gpu_asked):
        dtype = args.weights or ("shipped" if args.hf_config is not None else "bf16")
        if dtype == "shipped" and args.hf_config is None:
            dtype = "bf16"  # a preset has no quantization_config: its bf16 weights
        params = parameter_report(parameter_count(config), dtype)
    elif args.weights is not None:
        raise ValueError("--weights: needs --model or --hf-config (a layer description has no "
                         "parameter sizes)")
    family = None
    if config is not None:
        family = (hf_report or {}).get("family") or recognise(config)
    engine = args.engine or "ideal"
    options: dict[str, Any] = {"family": family}
    if engine in ("vllm", "sglang"):
        options.update(prefix_caching=not args.no_prefix_caching,
                       speculative_tokens=args.speculative_tokens)
    if config is not None and engine in ("vllm", "sglang"):
        options["config"] = unwrap(config)[1]  # state dtypes the config itself sets
    if args.kv_dtype is not None:
        options["kv_dtype"] = args.kv_dtype
    if args.state_dtype is not None:
        options["ssm_dtype"] = args.state_dtype
    allocation = allocate(model, args.tokens, args.batch, engine, **options)
    limit = (hf_report or {}).get("max_context") if hf_report else (
        max_context(config) if config is not None else None)
    out: dict[str, Any] = {
        "params_total": None if params is None else params["params_total"],
        "params_active": None if params is None else params["params_active"],
        "params_active_without_embeddings":
            None if params is None else params["params_active_without_embeddings"],
        "params_active_without_input_embedding":
            None if params is None else params["params_active_without_input_embedding"],
        "params_mtp": None if params is None else params["params_mtp"],
        "weight_dtype": None if params is None else params["weight_dtype"],
        "weight_storage": None if params is None else params["weight_storage"],
        "weight_bytes": None if params is None else params["weight_bytes"],
        "engine": engine, "allocated_bytes": allocation.total_bytes,
        "allocated_kv_bytes": allocation.kv_bytes,
        "allocated_state_bytes": allocation.state_bytes,
        "engine_block_tokens": allocation.block_tokens, "engine_lines": list(allocation.lines),
        "fits": None, "max_tokens": None, "max_sequences": None, "verdict_lines": [],
        "max_context": limit, "beyond_max_context": limit is not None and args.tokens > limit}
    if gpu_asked:
        weights = 0 if params is None else params["weight_bytes"]
        verdict = gpu_verdict(model, args.tokens, args.batch, engine, gpu=args.gpu,
                              memory_gib=args.gpu_memory, weight_bytes=weights,
                              overhead_bytes=_overhead(args.overhead), max_context=limit,
                              **options)
        lines = verdict["lines"] if params is not None else [
            "weights not counted (a layer description has no parameter sizes)", *verdict["lines"]]
        out.update(fits=verdict["fits"], max_tokens=verdict["max_tokens"],
                   max_sequences=verdict["max_sequences"], budget_bytes=verdict["budget_bytes"],
                   verdict_lines=lines)
    return out


def _engine_text(extra: dict[str, Any]) -> str:
    lines = [""]
    if extra["params_total"] is not None:
        lines.append(f"parameters: {extra['params_total']:,} total, {extra['params_active']:,} "
                     f"active with embeddings ("
                     f"{extra['params_active_without_input_embedding']:,} without the input "
                     f"embedding, {extra['params_active_without_embeddings']:,} without both)")
        if extra["params_mtp"]:
            lines.append(f"multi-token-prediction layers: {extra['params_mtp']:,} more (not in "
                         "the total; loaded only for speculative decoding)")
        lines.append(f"weights {extra['weight_dtype']} ({extra['weight_storage']}): "
                     f"{format_bytes(extra['weight_bytes'])} ({extra['weight_bytes']:,} bytes)")
    lines += [f"engine {extra['engine']}: {format_bytes(extra['allocated_bytes'])} "
              f"({extra['allocated_bytes']:,} bytes) allocated", *extra["engine_lines"]]
    if extra["verdict_lines"]:
        lines += ["", *extra["verdict_lines"]]
    if extra["beyond_max_context"]:
        lines.append(context_note({"max_context": extra["max_context"]}, extra["tokens"]))
    return "\n".join(lines)


def _model_description(args: argparse.Namespace) -> Model:
    if args.config is not None:
        return parse_model_text(read_limited(args.config, "--config"))
    if args.model not in PRESETS:
        raise ValueError(f"--model: unknown preset {quote(args.model)}; accepted: "
                         f"{', '.join(PRESETS)}")
    return PRESETS[args.model]


def _run(args: argparse.Namespace) -> str:
    if args.command == "gpus":
        return "\n".join(f"{name:<16} {GPUS[name]} GB: {GPU_MIB[name][0]:,} MiB = {GPU_MIB[name][0] * 2**20:,} "
                         f"bytes as the device reports it ({GPU_MIB[name][1]})" for name in GPUS)
    if args.command == "models":
        return "\n".join(f"{key:<22} {_cell(model.name, 80)} ({model.n_layers} layers)\n"
                         f"{'':<22} {_cell(model.source, 4000)}" for key, model in PRESETS.items())
    _check_options(args)
    model, hf_report = _model(args)
    ideal_kv = args.kv_dtype if args.kv_dtype in DTYPE_BYTES else "bf16"
    report = cache_report(model, args.tokens, args.batch, ideal_kv,
                          args.state_dtype or "fp32", args.block)
    extra = _engine_keys(args, model, hf_report)
    if args.json:
        out = report if hf_report is None else {**report, "hf_config": hf_report}
        return json.dumps(out if extra is None else {**out, **extra}, indent=2)
    text = _table(report) + ("" if hf_report is None else _fields(hf_report))
    if extra is not None:
        text += _engine_text({**extra, "tokens": args.tokens})
    elif hf_report is not None and context_note(hf_report, args.tokens):
        text += "\n" + context_note(hf_report, args.tokens)
    return text


def main(argv: list[str] | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):  # an ASCII terminal gets escapes, not an exception
        sys.stdout.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)  # exits 2 with one line on bad arguments
    try:
        print(_run(args))
        sys.stdout.flush()
        return 0
    except KeyboardInterrupt:
        _say_error("interrupted")
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, no second error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except MemoryError:
        _say_error("out of memory")
    except RecursionError:
        _say_error("input nested too deeply")
    except (ValueError, OverflowError, OSError) as error:
        _say_error(str(error))
    except Exception as error:  # noqa: BLE001 — never a traceback, even for a bug
        _say_error(f"internal error ({type(error).__name__}: {error})")
    return 2


if __name__ == "__main__":
    sys.exit(main())
