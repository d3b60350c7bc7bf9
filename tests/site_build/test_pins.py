"""sitebuild.pins: pins.toml, and downloads verified against it (no network: file:// and fakes)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from sitebuild import BuildError, pins


def test_pins_cover_what_the_browser_loads():
    assert pins.PINS["pyodide"]["version"] == "0.27.7"
    for name in ("panel", "bokeh", "param", "pyodide-http"):
        assert name in pins.PINS["pure_wheels"]
    assert set(pins.PINS["browser_stack"]["dropped_requirements"]) >= {"pandas", "nh3"}
    json.dumps(pins.PINS)  # plain data only


def _integrity(data: bytes) -> str:
    """As npm records it."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def test_a_download_is_kept_once_and_a_tampered_one_is_deleted(tmp_path):
    src = tmp_path / "pkg.tgz"
    src.write_bytes(b"the pinned bytes")
    dest = pins.download(src.as_uri(), tmp_path / "cache" / "pkg.tgz")
    assert dest.read_bytes() == b"the pinned bytes" and not dest.with_suffix(".tgz.part").exists()
    pins.check_integrity(dest, _integrity(b"the pinned bytes"))

    src.write_bytes(b"changed upstream")
    assert pins.download(src.as_uri(), dest).read_bytes() == b"the pinned bytes"  # not fetched again
    with pytest.raises(BuildError, match=r"pkg\.tgz: sha512 integrity .* does not match the pin"):
        pins.check_integrity(dest, _integrity(b"other bytes"))
    assert not dest.exists()  # the next build downloads it again


def test_find_download_matches_a_name_however_it_is_spelled(tmp_path):
    for name in ("PyYAML-6.0.2.tar.gz", "pyodide_http-0.2.1-py3-none-any.whl",
                 "markupsafe-3.0.20-py3-none-any.whl", "markupsafe-3.0.2-py3-none-any.whl"):
        (tmp_path / name).touch()
    assert pins.find_download(tmp_path, "pyyaml==6.0.2").name == "PyYAML-6.0.2.tar.gz"
    assert pins.find_download(tmp_path, "pyodide-http==0.2.1").name.startswith("pyodide_http-0.2.1-")
    assert pins.find_download(tmp_path, "MarkupSafe==3.0.2").name == "markupsafe-3.0.2-py3-none-any.whl"
    assert pins.find_download(tmp_path, "markupsafe==3.0") is None
    assert pins.find_download(tmp_path / "absent", "pyyaml==6.0.2") is None


def test_pip_is_asked_only_for_what_is_missing_each_with_its_hash(tmp_path, monkeypatch):
    (tmp_path / "param-2.4.2-py3-none-any.whl").touch()
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append((cmd, Path(cmd[cmd.index("-r") + 1]).read_text()))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(pins.subprocess, "run", fake_run)
    monkeypatch.setattr(pins, "ROOT", tmp_path.parent)
    pins.pip_download({"param==2.4.2": "aa", "bokeh==3.9.2": "bb"}, tmp_path)
    [(cmd, requirements)] = calls
    assert requirements == "bokeh==3.9.2 --hash=sha256:bb\n"
    assert "--require-hashes" in cmd and "--no-deps" in cmd and "--only-binary=:all:" in cmd

    pins.pip_download({"param==2.4.2": "aa"}, tmp_path)  # all there: pip is not run
    assert len(calls) == 1
