"""The steps that build the static site, one module each, in the order build.py's main() runs them.

    pins      this Python against pins.toml; downloads, each verified against its pin
    runtime   the Pyodide core from npm, and where each of its shipped files came from
    wheels    Pyodide's official wheels, the pure ones, the ones built from sdists, Bokeh and
              Panel without their JavaScript, the project's own (sim, ui), and the lock
    bytecode  the shipped Pyodide, run by Node.js, compiles the wheels and the stdlib to .pyc
    snapshot  the shipped Pyodide, run by Node.js, imports numpy, Bokeh, Panel, sim and ui and
              saves its memory, which each page's worker restores instead of starting anew
    static    BokehJS (patched: bokehjs.py), Panel's JS/CSS, KaTeX, the shell's assets, the UI font
    zstd      the worker's zstd decoder (wasm); the heaps and the bundle packed as zstd frames
    bundle    the shell's modules (assets/js, from main.js) in one file, by the pinned esbuild;
              the Python worker's first scripts in its own file
    pages     each page's default run rendered in CPython and written into the shell; the index
    formulas  the lesson texts' formulas typeset by KaTeX, run by Node.js (for pages)
    zoo       every model the Lab knows on one static page, its figures from sim
    policy    the Content-Security-Policy, into every page
    offline   the service worker and its list of files
    buildinfo the build id, build-info.json, and the checks of the finished site

Each step is a function that takes what it works on as arguments and returns what the next one
needs; what every step shares is here: the paths, the log and the one error a build fails with.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "build"  # downloads and what is made from them, kept between builds
OUT = ROOT / "dist" / "site"
PROJECT = "linear-attention-lab"  # the project's wheel (sim, ui), as named in pyproject.toml


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


class BuildError(SystemExit):
    def __init__(self, msg: str):
        super().__init__(f"build failed: {msg}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def norm(name: str) -> str:
    """A distribution's name as the lock and wheel file names spell it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def empty_folder(path: Path) -> Path:
    """`path`, emptied: every build writes the site from nothing (never point it at your files)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
