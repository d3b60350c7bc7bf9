"""Snapshot: Python's memory, saved after the imports, so a page's worker starts there.

Pyodide starts in Node from the files the site ships, writes the packages from one bundle into
its file system, loads numpy's compiled modules in one fixed order into a function table
padded to a fixed base (assets/py-snapshot.js, the same code the worker restores with), imports
numpy, Bokeh, Panel, sim and ui, and saves its heap. Both files ship gzip-compressed (the
worker decompresses them as they arrive, whatever the host compresses): the bundle, which
replaces installing the wheels, and the heap.

Without Node.js 18+ the site ships no snapshot, and every page starts Python the normal way.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

from sitebuild import ROOT, BuildError, log, sha256
from sitebuild.bytecode import find_node
from sitebuild.wheels import resolve

BUNDLE = "lab-packages.bin.gz"
HEAP = "lab-snapshot.bin.gz"
# Entries added to the function table's length in Node before numpy's modules load: Chromium's
# table holds one entry more than Node's there (measured); a browser whose table is longer than
# the base starts Python the normal way.
TABLE_MARGIN = 64

# What the snapshot holds imported. Everything a page imports on the way to its first object
# (its entry script only adds that page's class).
IMPORTS = """
import ui.panel_private
ui.panel_private.prepare_pyodide()
import numpy, param, bokeh, panel
import panel.io.pyodide
import sim, sim.family
import ui.app, ui.worker, ui.pages
from ui.pages import PAGES
for page in PAGES:
    __import__(f"ui.pages.{page.module}")
# What building a page imports on first use (found by diffing sys.modules after building each
# page): Panel's Markdown parser and its plugins, numpy's random generators, Panel's location.
import markdown_it, markdown_it.renderer, mdit_py_plugins.anchors, mdit_py_plugins.deflist
import mdit_py_plugins.footnote, mdit_py_plugins.tasklists, linkify_it
import numpy.random, numpy.ma, secrets
import panel.io.location
import random
random.seed(0)
numpy.random.seed(0)
"""


# Files of the wheels the restored Python never opens, left out of the bundle (the heap already
# holds what they would give): the modules imported into the snapshot (their .pyc and .py: a
# module in sys.modules is not read again), type stubs, TypeScript and C sources, and a wheel's
# .data directory (xyzservices' providers, a second copy of its package data). Measured on this
# build: 30.9 -> 18.2 MB raw, 9.3 -> 5.3 MB gzip, 2,071 -> 1,081 files. Every directory stays, so
# a package's path is there for whatever it lists or finds later.
NEVER_OPENED = (".pyi", ".ts", ".h", ".pxd", ".a", ".c")


def opened_after_restore(path: str, imported: frozenset[str]) -> bool:
    """Whether the restored Python may still open this file of a wheel (paths relative to
    site-packages; `imported`: the files of the modules the snapshot holds)."""
    if path.endswith(".so"):  # numpy's compiled modules load before every restore
        return True
    return path not in imported and not path.endswith(NEVER_OPENED) and not path.split("/")[0].endswith(".data")


def write_bundle(wheels: list[Path], dest: Path, imported: frozenset[str] = frozenset()) -> dict:
    """One file holding every file the wheels install (site-packages) that the restored Python
    may open (`opened_after_restore`), and every directory; numpy's compiled modules listed in
    the order they load; its format is in assets/py-snapshot.js."""
    files: list[tuple[str, bytes]] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            files += [(i.filename, z.read(i)) for i in z.infolist() if not i.is_dir()]
    paths = [p for p, _ in files]
    twice = sorted(p for p, n in collections.Counter(paths).items() if n > 1)
    if twice:
        raise BuildError(f"snapshot: two wheels install the same file: {', '.join(twice)}")
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p and not p.split("/")[0].endswith(".data")})
    files = [(p, b) for p, b in files if opened_after_restore(p, imported)]
    dynlibs = sorted(p for p, _ in files if p.endswith(".so"))
    header = json.dumps({"files": [[p, len(b)] for p, b in files], "dynlibs": dynlibs, "dirs": dirs}).encode()
    raw = struct.pack("<I", len(header)) + header + b"".join(b for _, b in files)
    dest.write_bytes(raw)
    return {"files": len(files), "dynlibs": len(dynlibs), "bytes": len(raw), "left_out": len(paths) - len(files)}


def gzip_file(src: Path, dest: Path) -> None:
    with src.open("rb") as f, dest.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0) as g:
        while chunk := f.read(1 << 20):
            g.write(chunk)
    src.unlink()


def make_snapshot(out: Path, lock: dict, packages: list[str]) -> dict | None:
    """Write the bundle of `packages` (with their dependencies) and the heap into out/pyodide;
    return what the pages' config and build-info.json say of them, or None (and say why) when
    the snapshot cannot be made."""
    sys.path.insert(0, str(ROOT))
    from ui.worker import WORKER_ENV  # noqa: PLC0415 (Python's environment in the worker)

    found = find_node()
    if found is None:
        log("SNAPSHOT: none, no Node.js 18+ to make it (apt-get install nodejs); pages start Python the normal way")
        return None
    pyodide_dir = out / "pyodide"
    wheels = [pyodide_dir / lock["packages"][n]["file_name"] for n in resolve(lock, packages)]
    raw_bundle = pyodide_dir / "lab-packages.bin"
    raw_heap = pyodide_dir / "lab-snapshot.bin"
    bundle = write_bundle(wheels, raw_bundle)
    result = subprocess.run(
        [found[0], str(ROOT / "sitebuild" / "snapshot.js"), str(pyodide_dir) + "/", str(raw_bundle), str(raw_heap),
         str(TABLE_MARGIN), IMPORTS],
        capture_output=True, text=True, env={**os.environ, "LAB_SNAPSHOT_ENV": json.dumps(WORKER_ENV)})
    if result.returncode != 0:
        raw_bundle.unlink(missing_ok=True)
        raw_heap.unlink(missing_ok=True)
        log("SNAPSHOT: none, Node could not make it; pages start Python the normal way:\n"
            + result.stderr.strip()[-2000:])
        return None
    made = json.loads(result.stdout.strip().splitlines()[-1])
    # The heap holds the imported modules: the bundle the worker restores with leaves their files out.
    bundle = write_bundle(wheels, raw_bundle, frozenset(made["imported"]))
    gzip_file(raw_bundle, pyodide_dir / BUNDLE)
    gzip_file(raw_heap, pyodide_dir / HEAP)
    info = {
        "heap": f"pyodide/{HEAP}", "heap_bytes": made["bytes"],
        "heap_gzip_bytes": (pyodide_dir / HEAP).stat().st_size, "heap_sha256": sha256(pyodide_dir / HEAP),
        "bundle": f"pyodide/{BUNDLE}", "bundle_bytes": bundle["bytes"],
        "bundle_gzip_bytes": (pyodide_dir / BUNDLE).stat().st_size, "bundle_sha256": sha256(pyodide_dir / BUNDLE),
        "table_base": made["tableBase"], "node_table": made["table"],
        "files": bundle["files"], "dynlibs": bundle["dynlibs"],
    }
    log(f"snapshot: heap {made['bytes'] / 1e6:.1f} MB ({info['heap_gzip_bytes'] / 1e6:.1f} MB gzip), "
        f"packages {bundle['bytes'] / 1e6:.1f} MB ({info['bundle_gzip_bytes'] / 1e6:.1f} MB gzip, "
        f"{bundle['files']} files, {bundle['left_out']} left out), table base {made['tableBase']}, made with Node {found[1]} in {made['seconds']:.1f} s")
    return info
