"""Offline: the service worker (assets/sw.js) with this build's id and the list of every file it
keeps, so that after one visit the whole site works without a network.

Each page's memory snapshot (about 14 MB of zstd each) is not on the list: the worker keeps
the heap of each page that is visited (the page asks it to), and a page whose heap it does
not have starts Python the normal way, from the wheels it keeps."""

from __future__ import annotations

import json
from pathlib import Path

from sitebuild import ROOT, BuildError, log, sha256


def write_service_worker(out: Path, build_id: str) -> None:
    """out/sw.js: the template with its cache named `lab-<build_id>` and every file of `out`
    (the site's root "./" first) to keep. Runs once every other file is written."""
    from sitebuild.snapshot import HEAP_PREFIX  # noqa: PLC0415

    every = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "sw.js")
    files = [p.relative_to(out).as_posix() for p in every if not p.name.startswith(HEAP_PREFIX)]
    # what a kept file must measure: its bytes (a response cut short but answered 200 is never
    # kept), and for the heaps, which are kept one by one later, their sha256 too (fuzz N4)
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in every}
    sizes["./"] = (out / "index.html").stat().st_size
    heaps = {p.relative_to(out).as_posix(): sha256(p) for p in every if p.name.startswith(HEAP_PREFIX)}
    template = (ROOT / "assets" / "sw.js").read_text()
    for name in ("__BUILD__", "__FILES__", "__SIZES__", "__HEAPS__"):
        if name not in template:
            raise BuildError(f"assets/sw.js: the placeholder {name} is missing; the build writes this build's id, "
                             "its files, their sizes and the heaps' sha256 into it")
    (out / "sw.js").write_text(template.replace("__BUILD__", build_id)
                               .replace("__FILES__", json.dumps(["./", *files]))
                               .replace("__SIZES__", json.dumps(sizes, separators=(",", ":")))
                               .replace("__HEAPS__", json.dumps(heaps, separators=(",", ":"))))
    (out / "assets" / "sw.js").unlink(missing_ok=True)
    log(f"service worker: {len(files)} files in cache 'lab-{build_id}'")
