"""Runtime: the Pyodide core (pyodide.js, the wasm, the stdlib zip, its lock) from npm.

The tarball is checked against pins.toml's integrity; only the files pins.toml names are taken
from it. The official lock it carries is where the lock the site ships starts (wheels.write_lock).
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from sitebuild import CACHE, copy, log, sha256
from sitebuild.pins import PINS, fetch_npm


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
