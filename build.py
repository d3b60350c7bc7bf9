"""Build the self-contained static site in dist/site/.

Everything the browser needs ships with the site: the Pyodide runtime, every wheel the pages
import, BokehJS, Panel's static files, KaTeX, the project's own wheel, one HTML page per entry
script in site/, an index, and a service worker. Every download is pinned in pins.toml, verified,
and kept in .cache/ so a rebuild needs no network. The build fails, naming the file, if anything
it ships would make the browser fetch an http(s):// address.

    python build.py                    # build dist/site (downloads only what .cache/ lacks)
    python build.py --out DIR          # build elsewhere (DIR is emptied first)
    python build.py --only running-sum # just these pages (development)

Each step is a module of sitebuild/ (its docstring lists them); main() runs them in order.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import sitebuild
from sitebuild import (
    buildinfo,
    bundle,
    bytecode,
    offline,
    pages,
    pins,
    policy,
    runtime,
    snapshot,
    static,
    wheels,
    zoo,
    zstd,
)
from sitebuild.policy import content_security_policy  # noqa: F401 (serve.py, tests/e2e)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=sitebuild.OUT)
    parser.add_argument("--allow-missing", action="store_true", help="skip pages whose entry script is missing")
    parser.add_argument("--only", action="append", metavar="SLUG", help="build only these pages (development)")
    args = parser.parse_args()
    started = time.monotonic()

    pins.check_versions()                                            # this Python renders what ships
    npm_runtime, official_lock = runtime.fetch_runtime()
    official = wheels.fetch_official_wheels(official_lock)           # numpy, packaging
    built = wheels.collect_wheels()                                  # pure, slimmed, from sdists, ours
    compiled_runtime, shipped, how = bytecode.compile_bytecode(npm_runtime, built)
    lock = wheels.write_lock(official_lock, official, built, shipped)

    out = sitebuild.empty_folder(args.out)
    sources = runtime.write_runtime(out, compiled_runtime, npm_runtime, how)
    wheels.write_wheels(out, [*official.values(), *shipped.values()], lock)
    wheels.discard_project_build(built[sitebuild.PROJECT])
    static.copy_static(out, static.fetch_katex())
    zstd.write_decoder(out)                                          # the worker's decoder of the heaps
    bundle.bundle_shell(out, bundle.fetch_esbuild())                 # the shell's modules, one file
    bundle.bundle_worker(out)                                        # the worker's first scripts in it
    fonts = static.write_ui_font(out, static.fetch_ui_font())

    packages = pins.PINS["browser_stack"]["packages"]
    ahead = pages.prerender_pages(args.only)                         # each default run, in CPython
    saved = snapshot.make_snapshot(out, lock, packages, ahead)       # Python's memory: imports, pages
    runtime.pack_runtime(out, sources)                               # after the snapshot: it reads them

    build_id = buildinfo.compute_build_id(out)                       # names the pages and the cache
    sizes = pages.download_sizes(out, lock, packages)
    written = pages.render_pages(out, packages, sizes, build_id, ahead, args.allow_missing, args.only, saved)
    written += zoo.write_zoo(out, build_id)                          # every model, its figures from sim
    policy.add_content_security_policy(out)
    offline.write_service_worker(out, build_id)                      # lists every file: after the others
    buildinfo.write_build_info(out, lock, official, shipped, sources, written, build_id, how, fonts, saved)
    buildinfo.check_site(out)

    files = [p for p in out.rglob("*") if p.is_file()]
    sitebuild.log(f"dist/site: {sum(p.stat().st_size for p in files) / 1e6:.1f} MB in {len(files)} files, "
        f"build {build_id}, {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
