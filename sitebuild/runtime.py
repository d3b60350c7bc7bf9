"""Runtime: the Pyodide core (pyodide.js, the wasm, the stdlib zip, its lock) from npm.

The tarball is checked against pins.toml's integrity; only the files pins.toml names are taken
from it. The official lock it carries is where the lock the site ships starts (wheels.write_lock).
The standard library ships as zstd in frames (``PACKED``, ``pack_runtime``): the worker decodes it
(assets/py-fetch.js), and with a snapshot only once the page is live, or when Python first reads it.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from sitebuild import CACHE, copy, log, sha256, zstd
from sitebuild.pins import PINS, fetch_npm

# The runtime's files the site ships as `name.zst` only (zstd in frames, sitebuild/zstd.py).
# python_stdlib.zip (stored, for fast imports; bytecode without docstrings): 7.9 -> 2.5 MB, and
# a static host does not compress a .zip on its own; the worker decodes it (assets/zstd.js), at once where
# it must (py-fetch.js lateBytes: a restored Python reads it only after live, if at all). Not the
# wasm: as zstd (10.1 -> 2.7 MB, a host's gzip 3.2) its compile no longer streams beside its
# download, and live came 0.3 s later on loopback for 0.4-0.5 s sooner at 10 Mbit/s (one run of
# bench/network.py, 3 pages); gzipped by us it was 0.1-0.35 s later on localhost. Hosts that
# compress application/wasm do it on the wire. The page's config names them, with their
# lengths, to the worker (sitebuild/pages.py).
PACKED = ("python_stdlib.zip",)


def shipped_name(name: str) -> str:
    """The name a runtime file has in the site: `name.zst` for the packed ones."""
    return f"{name}.zst" if name in PACKED else name


def fetch_runtime() -> tuple[Path, dict]:
    """The Pyodide core from npm, integrity-checked; returns its folder and official lock."""
    pin = PINS["pyodide"]
    folder = CACHE / f"pyodide-{pin['version']}"
    tarball = fetch_npm(pin, "pyodide")
    if not all((folder / f).exists() for f in pin["files"]):
        with tarfile.open(tarball) as tar:
            for name in pin["files"]:
                member = tar.getmember(f"package/{name}")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(tar.extractfile(member).read())
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    log(f"Pyodide {lock['info']['version']} (Python {lock['info']['python']}) verified")
    return folder, lock


def write_runtime(out: Path, runtime: Path, npm_runtime: Path, bytecode: str) -> list[dict]:
    """The runtime's files into out/pyodide/, from `runtime` (the npm folder, or its compiled
    copy: bytecode.compile_bytecode); the lock is the site's own (wheels.write_wheels). Returns
    where each file came from, for build-info.json."""
    pin = PINS["pyodide"]
    sources = []
    for name in pin["files"]:
        if name != "pyodide-lock.json":
            copy(runtime / name, out / "pyodide" / name)
            origin = pin["tarball"].split("//")[1]
            if sha256(runtime / name) != sha256(npm_runtime / name):
                origin += f", compiled to bytecode by {bytecode}"
            sources.append({"file": f"pyodide/{name}", "from": origin})
    return sources


def packed_sizes(out: Path) -> dict[str, int]:
    """name -> its length unpacked, for each file of ``PACKED`` in out/pyodide/ (from the frames'
    index): the worker checks what it decodes against it."""
    return {name: zstd.raw_length(out / "pyodide" / shipped_name(name)) for name in PACKED}


def pack_runtime(out: Path, sources: list[dict]) -> None:
    """Replace each file of ``PACKED`` in out/pyodide/ by its zstd frames (after the snapshot
    step, which reads them as they are), and say so in `sources` (write_runtime's, for build-info)."""
    for name in PACKED:
        path = out / "pyodide" / name
        size = path.stat().st_size
        zstd.write(path, out / "pyodide" / shipped_name(name))
        for source in sources:
            if source["file"] == f"pyodide/{name}":
                source["file"] = f"pyodide/{shipped_name(name)}"
                source["from"] += ", zstd in frames"
        log(f"runtime: {name} shipped as zstd frames, {size / 1e6:.1f} -> "
            f"{(out / 'pyodide' / shipped_name(name)).stat().st_size / 1e6:.1f} MB")
