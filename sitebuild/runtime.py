"""Runtime: the Pyodide core (pyodide.js, the wasm, the stdlib zip, its lock) from npm.

The tarball is checked against pins.toml's integrity; only the files pins.toml names are taken
from it. The official lock it carries is where the lock the site ships starts (wheels.write_lock).
The standard library ships gzipped (``GZIPPED``, ``gzip_runtime``): the worker unzips it as it
arrives (assets/py-fetch.js).
"""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path

from sitebuild import CACHE, copy, log, sha256
from sitebuild.pins import PINS, fetch_npm

# The runtime's files the site ships as `name.gz` only. python_stdlib.zip (stored, for fast
# imports): 9.4 -> 3.6 MB, and a static host does not compress a .zip on its own. Not the wasm
# (10.1 -> 3.1 MB): unzipped in the worker, its compile waits on the worker's own thread, and
# live came 0.1-0.35 s later on localhost (medians of 4 cold loads, 3 pages); the stdlib alone
# made no difference beyond noise. Hosts that compress application/wasm do it on the wire.
# The page's config names them, with their lengths, to the worker (sitebuild/pages.py).
GZIPPED = ("python_stdlib.zip",)


def shipped_name(name: str) -> str:
    """The name a runtime file has in the site: `name.gz` for the gzipped ones."""
    return f"{name}.gz" if name in GZIPPED else name


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


def gzipped_sizes(out: Path) -> dict[str, int]:
    """name -> its length unzipped, for each file of ``GZIPPED`` in out/pyodide/ (from gzip's own
    trailer): the worker checks what it unzips against it (a stream cut short is an error)."""
    sizes = {}
    for name in GZIPPED:
        with (out / "pyodide" / shipped_name(name)).open("rb") as f:
            f.seek(-4, 2)
            sizes[name] = int.from_bytes(f.read(4), "little")  # the length mod 2**32: files < 4 GB
    return sizes


def gzip_runtime(out: Path, sources: list[dict]) -> None:
    """Replace each file of ``GZIPPED`` in out/pyodide/ by its gzip (after the snapshot step,
    which reads them as they are), and say so in `sources` (write_runtime's, for build-info)."""
    for name in GZIPPED:
        path = out / "pyodide" / name
        data = path.read_bytes()
        # mtime 0: the same file from the same bytes (the build id hashes the site's files)
        (out / "pyodide" / shipped_name(name)).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        path.unlink()
        for source in sources:
            if source["file"] == f"pyodide/{name}":
                source["file"] = f"pyodide/{shipped_name(name)}"
                source["from"] += ", gzipped"
        log(f"runtime: {name} shipped gzipped, {len(data) / 1e6:.1f} -> "
            f"{(out / 'pyodide' / shipped_name(name)).stat().st_size / 1e6:.1f} MB")
