"""Command line: `python -m sim cache ...` and `python -m sim models`.

    python -m sim cache (--model ID | --config FILE | --hf-config FILE) --tokens N [--batch B]
                        [--kv-dtype D] [--state-dtype D] [--block [B]] [--json]
    python -m sim models

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
from .hf_config import from_hf_config
from .user_input import MAX_NUMBER_DIGITS, MAX_TEXT_BYTES, escape_unprintable, quote


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
    which.add_argument("--hf-config", help="a Hugging Face config.json (≤ 64 KiB)")
    cache.add_argument("--tokens", type=_integer, required=True, help="tokens per sequence")
    cache.add_argument("--batch", type=_integer, default=1, help="sequences (default 1)")
    cache.add_argument("--kv-dtype", default="bf16", help=f"one of {', '.join(DTYPE_BYTES)}")
    cache.add_argument("--state-dtype", default="fp32", help=f"one of {', '.join(DTYPE_BYTES)}")
    cache.add_argument("--block", type=_integer, nargs="?", const=16, default=None, metavar="B",
                       help="also show the KV cache in whole blocks of B tokens (default B 16)")
    cache.add_argument("--json", action="store_true", help="print JSON instead of a table")
    commands.add_parser("models", help="list the presets with their sources")
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


def read_limited(path: str, option: str) -> bytes:
    """At most MAX_TEXT_BYTES + 1 bytes of `path` (so /dev/zero or a huge file costs nothing);
    one more than the limit means too long."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ValueError(f"{option}: cannot read {quote(path, 80)} ({reason})") from None
    if len(data) > MAX_TEXT_BYTES:
        raise ValueError(f"{option}: {quote(path, 80)} is larger than {MAX_TEXT_BYTES:,} bytes; "
                         f"accepted: at most {MAX_TEXT_BYTES:,}")
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
        return from_hf_config(read_limited(args.hf_config, "--hf-config"))
    return _model_description(args), None


def _model_description(args: argparse.Namespace) -> Model:
    if args.config is not None:
        return parse_model_text(read_limited(args.config, "--config"))
    if args.model not in PRESETS:
        raise ValueError(f"--model: unknown preset {quote(args.model)}; accepted: "
                         f"{', '.join(PRESETS)}")
    return PRESETS[args.model]


def _run(args: argparse.Namespace) -> str:
    if args.command == "models":
        return "\n".join(f"{key:<22} {_cell(model.name, 80)} ({model.n_layers} layers)\n"
                         f"{'':<22} {_cell(model.source, 4000)}" for key, model in PRESETS.items())
    model, hf_report = _model(args)
    report = cache_report(model, args.tokens, args.batch, args.kv_dtype, args.state_dtype,
                          args.block)
    if args.json:
        return json.dumps(report if hf_report is None else {**report, "hf_config": hf_report},
                          indent=2)
    return _table(report) + ("" if hf_report is None else _fields(hf_report))


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
