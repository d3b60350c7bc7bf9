"""Bundle: the shell's ES modules (assets/js/, entry main.js) joined into one module file,
assets/shell.js, by esbuild: the page loads its shell in one request instead of four waves of
imports (each wave a round trip: on a 50 ms link, 0.2 s before the first plot could start).

esbuild is the pinned native build from the npm registry (pins.toml [esbuild], one tarball per
platform, verified like KaTeX's), fetched at build time and kept in .cache/build: nothing to
install by hand, and the bundle is always made from the sources as they are now (it is never
committed). The bundle keeps the modules' names (an error's stack still names the function) and
carries no source map; the sources ship beside it (the zoo page imports two of them) and are
what the node tests read.
"""

from __future__ import annotations

import json
import platform
import subprocess
import tarfile
from pathlib import Path

from sitebuild import CACHE, ROOT, BuildError, log
from sitebuild.pins import PINS, fetch_npm

ENTRY = ROOT / "assets" / "js" / "main.js"
WORKER = "assets/py-worker.js"  # the page's Python worker, under the site
# The scripts the page's worker loaded first, each with importScripts: a round trip each, one
# after the other (about 45 ms each on the benches' loopback servers while the heap streamed
# beside them), before the worker could decode what it had asked for. Bundled into its script:
# each part in a function of its own (its "use strict" holds there), setting its global on self
# (labZstd, labFetch, labSnapshot), then the worker's own code. The zoo's worker and the floor of
# bench/boot.py still load them one by one, from the same files.
WORKER_PARTS = ("assets/zstd.js", "assets/py-fetch.js", "assets/py-snapshot.js")
BUNDLE = "assets/shell.js"  # where the page's one shell module is written, under the site
# What esbuild is told, besides entry and output: one ES module, every import inlined; whitespace
# and syntax made small but every name kept (an error's stack stays readable); no source map
# (esbuild writes none unless asked); the sources' syntax as it is (no target: nothing is
# rewritten for older browsers); UTF-8 text left as it is (the shell's strings have … and →).
FLAGS = ("--bundle", "--format=esm", "--minify-whitespace", "--minify-syntax",
         "--charset=utf8", "--legal-comments=none", "--log-level=warning")
# platform.machine() -> the @esbuild/linux-* package built for it
MACHINES = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64", "arm64": "linux-arm64"}


def esbuild_platform(system: str | None = None, machine: str | None = None) -> str:
    """The pinned esbuild package for this machine (pins.toml [esbuild] platforms), or a
    BuildError saying which are pinned."""
    system = (system or platform.system()).lower()
    machine = (machine or platform.machine()).lower()
    name = MACHINES.get(machine) if system == "linux" else None
    pinned = PINS["esbuild"]["platforms"]
    if name not in pinned:
        raise BuildError(f"the shell is bundled by esbuild, pinned for {', '.join(sorted(pinned))} only; "
                         f"this machine is {system} {machine}: add its @esbuild package to pins.toml [esbuild]")
    return name


def fetch_esbuild(name: str | None = None) -> Path:
    """The pinned esbuild executable for this machine, from its npm tarball (verified), kept
    in the build cache."""
    name = name or esbuild_platform()
    pin = {"version": PINS["esbuild"]["version"], **PINS["esbuild"]["platforms"][name]}
    tarball = fetch_npm(pin, f"esbuild-{name}")
    target = CACHE / f"esbuild-{name}-{pin['version']}" / "esbuild"
    if not target.exists():
        with tarfile.open(tarball) as tar:
            data = tar.extractfile("package/bin/esbuild").read()
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(".part")
        part.write_bytes(data)
        part.chmod(0o755)
        part.rename(target)
    return target


def bundle_shell(out: Path, esbuild: Path, entry: Path = ENTRY) -> dict:
    """out/assets/shell.js: `entry` and every module it imports, in one ES module. Returns
    {bytes, modules (the files bundled, relative to the repository), esbuild (its version)}.
    Fails naming esbuild's complaint (a missing import, a syntax error) if it cannot bundle."""
    target = out / BUNDLE
    meta = target.with_name("shell.meta.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([str(esbuild), str(entry), *FLAGS, f"--outfile={target}", f"--metafile={meta}"],
                         capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        raise BuildError(f"esbuild could not bundle the shell ({entry}):\n{run.stderr.strip()[-3000:]}")
    if run.stderr.strip():
        log(f"esbuild warns:\n{run.stderr.strip()}")
    inputs = sorted(json.loads(meta.read_text())["inputs"])
    meta.unlink()
    version = subprocess.run([str(esbuild), "--version"], capture_output=True, text=True).stdout.strip()
    if version != PINS["esbuild"]["version"]:
        raise BuildError(f"{esbuild} says it is esbuild {version!r}, but pins.toml pins {PINS['esbuild']['version']}")
    size = target.stat().st_size
    log(f"shell: {len(inputs)} modules of assets/js bundled into {BUNDLE} ({size / 1e3:.0f} kB) by esbuild {version}")
    return {"bytes": size, "modules": inputs, "esbuild": version}


def bundle_worker(out: Path) -> None:
    """out/assets/py-worker.js with the scripts it loads first (WORKER_PARTS) inside it, in order.
    After zstd.write_decoder (zstd.js) and static.copy_static (the rest)."""
    parts = [(name, (out / name).read_text()) for name in (*WORKER_PARTS, WORKER)]
    for name, text in parts:
        if "//# sourceMappingURL" in text:
            raise BuildError(f"{name}: a source map comment would point into the bundled worker")
    (out / WORKER).write_text("".join(f"// ---- {name}\n(function () {{\n{text.rstrip()}\n}}).call(self);\n"
                                      for name, text in parts))
    log(f"bundle: {WORKER} with {', '.join(WORKER_PARTS)} (one request instead of {len(parts)})")
