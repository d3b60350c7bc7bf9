"""Bytecode: the shipped Pyodide, run by Node.js at build time, compiles what the browser imports.

Pyodide runs with sys.dont_write_bytecode, so without this every import in the page compiles its
module anew. Compiled by the very Pyodide the site ships, the bytecode always matches the
browser's Python, and every machine builds the same site. No Node.js 18+: source ships, slower.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from sitebuild import CACHE, PROJECT, BuildError, log, sha256
from sitebuild.pins import PINS
from sitebuild.wheels import write_wheel


def find_node() -> tuple[str, str] | None:
    """Node.js 18 or newer (Pyodide 0.27's minimum), which runs the shipped Pyodide at build time:
    its path and version."""
    for candidate in (os.environ.get("LAB_NODE"), shutil.which("node"), shutil.which("nodejs")):
        if not candidate:
            continue
        probe = subprocess.run([candidate, "-p", "process.versions.node"], capture_output=True, text=True)
        if probe.returncode == 0 and int(probe.stdout.split(".")[0]) >= 18:
            return candidate, probe.stdout.strip()
    return None


# Runs in node: starts the Pyodide that the site ships, mounts the build cache (.cache/build)
# at /cache and runs PYC_COMPILER there, which reads the source zips and writes the compiled ones.
PYC_RUNNER = r"""
const [index, cache] = [process.env.LAB_PYODIDE, process.env.LAB_CACHE];
const { loadPyodide } = require(index + "/pyodide.js");
(async () => {
  const pyodide = await loadPyodide({ indexURL: index + "/", stdout: console.log, stderr: console.error });
  pyodide.mountNodeFS("/cache", cache);
  pyodide.globals.set("JOBS", require("fs").readFileSync(0, "utf8"));
  pyodide.runPython(process.env.LAB_COMPILER);
})().catch((e) => { console.error(e); process.exit(1); });
"""
# Runs in Pyodide: for each (zip, out, path prefix, keep source) writes `out`, a zip of the
# compiled files under the names they take in the shipped zip. Where the source is not kept, the
# docstrings of modules, classes and functions are left out (as `python -OO` does, but asserts
# stay): nothing the pages show comes from one, and every heap holds about 4 MB less (Bokeh,
# param and Panel guard their docstring edits for -OO's None).
PYC_COMPILER = r"""
import ast, importlib._bootstrap_external as ext, importlib.util, json, sys, zipfile
print("magic", importlib.util.MAGIC_NUMBER.hex(), sys.version.split()[0])
DEFINES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)

def without_docstrings(tree):
    for node in ast.walk(tree):
        body = node.body if isinstance(node, DEFINES) else None
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0:1] = [] if len(body) > 1 else [ast.copy_location(ast.Pass(), body[0])]
    return tree

for src, out, prefix, keep_source in json.loads(JOBS):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            if not name.endswith(".py"):
                continue
            source = zin.read(name)
            try:
                tree = ast.parse(source, prefix + name)
                code = compile(tree if keep_source else without_docstrings(tree), prefix + name, "exec",
                               dont_inherit=True, optimize=0)
            except (SyntaxError, ValueError):
                continue  # shipped as source
            if keep_source:
                folder, _, stem = name[:-3].rpartition("/")
                pyc = f"{folder}/__pycache__/{stem}.{sys.implementation.cache_tag}.pyc".lstrip("/")
                zout.writestr(pyc, ext._code_to_hash_pyc(code, importlib.util.source_hash(source), False))
            else:
                zout.writestr(name + "c", ext._code_to_timestamp_pyc(code, 0, 0))
"""


COMPILED = "nodoc"  # how PYC_COMPILER compiles, in its cache's folder names: another way, other files


def compile_bytecode(runtime: Path, wheels: dict[str, Path]) -> tuple[Path, dict[str, Path], str]:
    """Ship Python bytecode, so the browser does not compile every module on every visit.

    Pyodide runs with sys.dont_write_bytecode, so each `import` of a .py file is compiled anew
    in the page: most of start-up after the wheels are in. The shipped Pyodide itself, run by
    Node.js, compiles ahead of time, so every machine builds the same site and the bytecode
    always matches the browser's Python:
    - the pure wheels and python_stdlib.zip become bytecode-only (`mod.pyc` where `mod.py` was;
      the stdlib zip stored uncompressed: zipimport reads it without inflating, and a
      compressing server does better on stored entries);
    - the project's wheel keeps its source and gains unchecked-hash `__pycache__` files, so a
      traceback in the page still shows our lines;
    - the official Pyodide wheels (numpy, packaging) stay exactly as verified.
    Without Node.js 18+ (`make build` installs Debian's nodejs as root; LAB_NODE names one)
    this says so and ships source: the site works, only slower to start. Compiled files are
    cached by input sha256. Returns the runtime folder to copy from, the wheels to ship and
    how the build compiled them (for the log and build-info.json).
    """
    found = find_node()
    if found is None:
        log("BYTECODE: none, no Node.js 18+ to run Pyodide with (apt-get install nodejs, or set "
            "LAB_NODE): shipping source, the pages start slower")
        return runtime, wheels, "none (no Node.js at build time): source shipped"
    node, node_version = found
    how = f"Pyodide {PINS['pyodide']['version']} itself, run by Node.js"
    folder = CACHE / "bytecode"
    folder.mkdir(parents=True, exist_ok=True)
    stdlib = runtime / "python_stdlib.zip"
    key = lambda path: f"pyodide-{sha256(path)[:16]}-{COMPILED}"  # noqa: E731
    targets = {name: (path, folder / key(path) / path.name) for name, path in wheels.items()}
    targets["<stdlib>"] = (stdlib, folder / f"pyodide-{PINS['pyodide']['version']}-{key(stdlib)}" / stdlib.name)
    todo = {name: (src, dest) for name, (src, dest) in targets.items() if not dest.exists()}
    if todo:
        log(f"compiling {len(todo)} zip(s) to bytecode with {how} {node_version} ({node})")
        work = Path(tempfile.mkdtemp(prefix="bytecode-", dir=folder))
        try:
            jobs = [(str(src), str(work / f"{i}.zip"),
                     "/lib/python312.zip/" if name == "<stdlib>" else "/lib/python3.12/site-packages/",
                     name == PROJECT) for i, (name, (src, _)) in enumerate(todo.items())]
            inside = lambda path: "/cache/" + Path(path).resolve().relative_to(CACHE.resolve()).as_posix()  # noqa: E731
            jobs_inside = [(inside(src), inside(out), prefix, keep) for src, out, prefix, keep in jobs]
            env = {**os.environ, "LAB_PYODIDE": str(runtime.resolve()), "LAB_CACHE": str(CACHE.resolve()),
                   "LAB_COMPILER": PYC_COMPILER}
            started = time.monotonic()
            result = subprocess.run([node, "-e", PYC_RUNNER], input=json.dumps(jobs_inside), env=env,
                                    capture_output=True, text=True)
            if result.returncode:
                raise BuildError(f"compiling to bytecode with Pyodide in Node.js failed:\n"
                                 f"{(result.stdout + result.stderr)[-2000:]}")
            log(f"Pyodide compiled them in {time.monotonic() - started:.1f} s ({result.stdout.strip()})")
            for (name, (src, dest)), (_, compiled_zip, _, keep_source) in zip(todo.items(), jobs):
                with zipfile.ZipFile(src) as zin, zipfile.ZipFile(compiled_zip) as zc:
                    compiled = {n: zc.read(n) for n in zc.namelist()}
                    members = {n: zin.read(n) for n in zin.namelist()
                               if keep_source or n + "c" not in compiled}
                members.update(compiled)
                dest.parent.mkdir(parents=True, exist_ok=True)
                tmp = work / f"{dest.name}.part"
                if name == "<stdlib>":
                    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zout:
                        for n, data in sorted(members.items()):
                            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
                            info.external_attr = (0o40755 << 16 | 0x10) if n.endswith("/") else 0o644 << 16
                            zout.writestr(info, data)
                else:
                    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
                    write_wheel(tmp, {n: d for n, d in members.items() if n != record}, record)
                os.replace(tmp, dest)  # atomic: other builds may read the cache meanwhile
        finally:
            shutil.rmtree(work, ignore_errors=True)
    compiled_runtime = targets["<stdlib>"][1].parent
    for name in PINS["pyodide"]["files"]:
        if name != stdlib.name and not (compiled_runtime / name).exists():
            shutil.copyfile(runtime / name, compiled_runtime / f"{name}.part")
            os.replace(compiled_runtime / f"{name}.part", compiled_runtime / name)
    sizes = [(s.stat().st_size, d.stat().st_size) for s, d in targets.values()]
    log(f"BYTECODE: {len(targets) - 1} wheels and python_stdlib.zip compiled by {how} "
        f"({sum(s for s, _ in sizes) / 1e6:.1f} MB -> {sum(d for _, d in sizes) / 1e6:.1f} MB)")
    return compiled_runtime, {name: targets[name][1] for name in wheels}, how


def is_bytecode(wheel: Path) -> bool:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    return any(n.endswith(".pyc") for n in names) and not any(n.endswith(".py") for n in names)
