"""Pins: what pins.toml fixes, and the downloads it pins, each verified before it is used.

Every file the build downloads is named in pins.toml with its hash and kept in .cache/build, so a
rebuild needs no network. `check_versions` holds this Python (which renders the pages ahead of
time) to the versions the browser runs.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
from pathlib import Path

from sitebuild import CACHE, ROOT, BuildError, log, norm

PINS = tomllib.loads((ROOT / "pins.toml").read_text())


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


def download(url: str, dest: Path) -> Path:
    if dest.exists():
        return dest
    log(f"downloading {url}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own: the build and the tests beside it may fetch the same file at once
    tmp = dest.with_suffix(f"{dest.suffix}.{os.getpid()}.part")
    with urllib.request.urlopen(url, timeout=120) as response, open(tmp, "wb") as f:
        shutil.copyfileobj(response, f)
    tmp.rename(dest)
    return dest


def check_integrity(path: Path, integrity: str) -> None:
    """`integrity` as npm records it (sha512-<base64>); a file that differs is deleted."""
    algo, _, expected = integrity.partition("-")
    digest = base64.b64encode(hashlib.new(algo, path.read_bytes()).digest()).decode()
    if digest != expected:
        path.unlink()
        raise BuildError(f"{path.name}: {algo} integrity {digest} does not match the pin {expected}")


def fetch_npm(pin: dict, name: str) -> Path:
    """An npm tarball pinned as {version, tarball, integrity}, verified: its path in the cache."""
    tarball = download(pin["tarball"], CACHE / "downloads" / f"{name}-{pin['version']}.tgz")
    check_integrity(tarball, pin["integrity"])
    return tarball


def pip_download(specs: dict[str, str], dest: Path, *, sdist: bool = False) -> None:
    """Download pinned files with pip, which checks each --hash itself."""
    missing = {spec: h for spec, h in specs.items() if not find_download(dest, spec)}
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


def find_download(folder: Path, spec: str) -> Path | None:
    """The wheel or sdist of `spec` (name==version) in `folder`, however its name is spelled."""
    name, _, version = spec.partition("==")
    if not folder.exists():
        return None
    for path in folder.iterdir():
        stem = path.name.lower().replace("_", "-")
        if stem.startswith(f"{norm(name)}-{version}-") or stem.startswith(f"{norm(name)}-{version}.tar"):
            return path
    return None
