"""Serve dist/site on http://127.0.0.1:8000 with the right MIME types (.wasm as application/wasm)
and the headers a host should send (README, "Hosting"): the pages' Content-Security-Policy, as
build.py writes it into every page, plus frame-ancestors, which only a header can carry.

    python serve.py [--port 8000] [--dir dist/site] [--prefix /courses/lab/]

--prefix serves the site under a sub-path, as a course site would host it.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
from pathlib import Path

from build import content_security_policy

TYPES = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
         ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
         ".woff2": "font/woff2", ".svg": "image/svg+xml", ".css": "text/css", ".html": "text/html",
         ".gz": "application/gzip", ".zst": "application/zstd"}  # as they are, never with a Content-Encoding


class Handler(http.server.SimpleHTTPRequestHandler):
    # Keep-alive: a page asks for a dozen files at once; HTTP/1.0 opened a connection for each
    # (every response here carries its Content-Length, as HTTP/1.1 needs).
    protocol_version = "HTTP/1.1"
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    prefix = "/"
    policy = True  # False serves plain files (the tests' stand-in for another site)

    def translate_path(self, path: str) -> str:
        if self.prefix != "/":
            if not path.startswith(self.prefix):
                return str(Path(self.directory) / "__outside_the_prefix__")
            path = "/" + path[len(self.prefix):]
        return super().translate_path(path)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")  # always revalidate: a rebuild shows at once
        if self.policy:
            self.send_header("Content-Security-Policy", content_security_policy(header=True))
            self.send_header("X-Content-Type-Options", "nosniff")  # every type is set right (TYPES)
        super().end_headers()

    def log_message(self, fmt: str, *args) -> None:
        if self.server.verbose:
            super().log_message(fmt, *args)


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # a browser closing early is normal


def make_server(directory: Path, port: int, prefix: str = "/", verbose: bool = False, policy: bool = True):
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    handler = functools.partial(type("H", (Handler,), {"prefix": prefix, "policy": policy}), directory=str(directory))
    server = QuietServer(("127.0.0.1", port), handler)
    server.verbose = verbose
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--dir", type=Path, default=Path(__file__).parent / "dist" / "site")
    parser.add_argument("--prefix", default="/")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if not (args.dir / "index.html").exists():
        sys.exit(f"error: {args.dir}/index.html is missing: run `make build` first")
    server = make_server(args.dir, args.port, args.prefix, verbose=not args.quiet)
    prefix = "/" + args.prefix.strip("/") + "/" if args.prefix.strip("/") else "/"
    print(f"Linear Attention Lab: http://127.0.0.1:{args.port}{prefix}  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
