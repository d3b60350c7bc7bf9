"""Offline: the service worker (assets/sw.js) with this build's id and the list of every file it
keeps, so that after one visit the whole site works without a network.

Each page's memory snapshot (about 20 MB of gzip each) is not on the list: the worker keeps
the heap of each page that is visited (the page asks it to), and a page whose heap it does
not have starts Python the normal way, from the wheels it keeps."""

from __future__ import annotations

import json
from pathlib import Path

from sitebuild import ROOT, log


def write_service_worker(out: Path, build_id: str) -> None:
    """out/sw.js: the template with its cache named `lab-<build_id>` and every file of `out`
    (the site's root "./" first) to keep. Runs once every other file is written."""
    from sitebuild.snapshot import HEAP_PREFIX  # noqa: PLC0415

    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                   if p.is_file() and p.name not in ("sw.js",) and not p.name.startswith(HEAP_PREFIX))
    template = (ROOT / "assets" / "sw.js").read_text()
    (out / "sw.js").write_text(template.replace("__BUILD__", build_id)
                               .replace("__FILES__", json.dumps(["./", *files])))
    (out / "assets" / "sw.js").unlink(missing_ok=True)
    log(f"service worker: {len(files)} files in cache 'lab-{build_id}'")
