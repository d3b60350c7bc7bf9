"""Command line: `python -m sim cache ...` and `python -m sim models`.

    python -m sim cache (--model ID | --config FILE) --tokens N [--batch B]
                        [--kv-dtype D] [--state-dtype D] [--json]
    python -m sim models

Bad input prints one line `error: ...` on stderr and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from .cache import DTYPE_BYTES, PRESETS, cache_report, format_bytes, load_model


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m sim", description="KV-cache and state calculator.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    cache = commands.add_parser("cache", help="KV-cache and state bytes of one model")
    which = cache.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help=f"preset id: {', '.join(PRESETS)}")
    which.add_argument("--config", help="JSON file describing the model's layers")
    cache.add_argument("--tokens", type=int, required=True, help="tokens per sequence")
    cache.add_argument("--batch", type=int, default=1, help="sequences (default 1)")
    cache.add_argument("--kv-dtype", default="bf16", help=f"one of {', '.join(DTYPE_BYTES)}")
    cache.add_argument("--state-dtype", default="fp32", help=f"one of {', '.join(DTYPE_BYTES)}")
    cache.add_argument("--json", action="store_true", help="print JSON instead of a table")
    commands.add_parser("models", help="list the presets with their sources")
    return parser


def _table(report: dict[str, Any]) -> str:
    lines = [f"{report['model']}: {report['n_layers']} layers, {report['tokens']:,} tokens, "
             f"batch {report['batch']}, KV {report['kv_dtype']}, state {report['state_dtype']}",
             "", f"{'layer':>5}  {'mixer':<22} {'KV cache':>12} {'state':>12}"]
    for row in report["per_layer"]:
        lines.append(f"{row['layer']:>5}  {row['label']:<22} {format_bytes(row['kv_bytes']):>12} "
                     f"{format_bytes(row['state_bytes']):>12}")
    lines.append("")
    for key, name in (("kv_cache_bytes", "KV cache"), ("state_bytes", "state"),
                      ("total_bytes", "total"), ("full_attention_kv_bytes", "full-attention KV")):
        if report[key] is not None:
            lines.append(f"{name + ':':<19} {format_bytes(report[key]):>12} ({report[key]:,} bytes)")
    if report["ratio"] is not None:
        lines.append(f"{'KV ratio:':<19} {report['ratio']:>12.4f} of full attention")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "models":
            for key, model in PRESETS.items():
                print(f"{key:<22} {model.name} ({model.n_layers} layers)\n{'':<22} {model.source}")
            return 0
        if args.config is not None:
            try:
                with open(args.config, encoding="utf-8") as handle:
                    text = handle.read()
            except OSError as error:
                raise ValueError(f"--config: cannot read {args.config!r} ({error.strerror})") from None
            model = load_model(text)
        else:
            if args.model not in PRESETS:
                raise ValueError(f"--model: unknown preset {args.model!r}; accepted: "
                                 f"{', '.join(PRESETS)}")
            model = PRESETS[args.model]
        report = cache_report(model, args.tokens, args.batch, args.kv_dtype, args.state_dtype)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else _table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
