"""The shell bundled at build time (sitebuild/bundle.py): the pinned esbuild from the npm registry,
verified; the page names one shell module, the bundle; the bundle holds main.js and every module
it imports, made anew from the sources as they are at each build."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sitebuild import BuildError, bundle
from sitebuild.pins import PINS

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "assets" / "js"


def shell_graph(entry: str = "main.js") -> set[str]:
    """The modules of assets/js that `entry` imports, directly or not, read from their sources."""
    seen, todo = {entry}, [entry]
    while todo:
        for name in re.findall(r'^import .* from "\./([^"]+)";$', (JS / todo.pop()).read_text(), re.M):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_esbuild_is_pinned_exactly_for_each_platform_with_npm_integrity():
    pin = PINS["esbuild"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pin["version"])  # exact, no range
    assert set(pin["platforms"]) == {"linux-x64", "linux-arm64"}
    for name, p in pin["platforms"].items():
        assert p["tarball"] == f"https://registry.npmjs.org/@esbuild/{name}/-/{name}-{pin['version']}.tgz"
        assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", p["integrity"]), name
    assert bundle.esbuild_platform("Linux", "x86_64") == "linux-x64"
    assert bundle.esbuild_platform("Linux", "aarch64") == "linux-arm64"
    with pytest.raises(BuildError, match=r"pinned for linux-arm64, linux-x64 only; this machine is darwin arm64"):
        bundle.esbuild_platform("Darwin", "arm64")


def test_the_page_names_one_shell_module_the_bundle():
    shell = (ROOT / "assets" / "shell.html").read_text()
    modules = re.findall(r'<script type="module"[^>]*\bsrc="([^"]+)"', shell)
    assert modules == [bundle.BUNDLE]
    assert "modulepreload" not in shell and not re.search(r'(?:src|href)="assets/js/', shell)
    assert not (ROOT / bundle.BUNDLE).exists()  # made at build time, never kept in assets/


@pytest.fixture(scope="module")
def esbuild() -> Path:
    return bundle.fetch_esbuild()  # from .cache/build after a build; else the npm registry


def test_the_shell_is_bundled_from_main_js_with_every_module_it_imports(esbuild, tmp_path):
    made = bundle.bundle_shell(tmp_path, esbuild)
    assert made["esbuild"] == PINS["esbuild"]["version"]
    assert {Path(m).name for m in made["modules"]} == shell_graph()  # read from the sources, not from esbuild
    assert all(m.startswith("assets/js/") for m in made["modules"])
    text = (tmp_path / bundle.BUNDLE).read_text()
    assert made["bytes"] == len(text.encode())
    assert not re.search(r'^\s*import\b|\bimport\s*\(|from\s*"\./', text, re.M)  # nothing left to fetch
    assert "sourceMappingURL" not in text and list(tmp_path.rglob("*.map")) == []
    assert "function startWhenWanted" in text and "function showPrerendered" in text  # names kept
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["shell.js"]


def test_a_module_edited_since_the_last_build_is_in_the_next_bundle(esbuild, tmp_path):
    src = tmp_path / "js"
    shutil.copytree(JS, src)
    first = bundle.bundle_shell(tmp_path / "a", esbuild, src / "main.js")
    assert "an edit made after the first bundle" not in (tmp_path / "a" / bundle.BUNDLE).read_text()
    wanted = src / "wanted.js"
    wanted.write_text(wanted.read_text().replace('state.python = "started";', 'state.python = "started"; console.log("an edit made after the first bundle");', 1))
    bundle.bundle_shell(tmp_path / "b", esbuild, src / "main.js")
    assert "an edit made after the first bundle" in (tmp_path / "b" / bundle.BUNDLE).read_text()
    assert first["modules"]


def test_a_module_that_cannot_be_bundled_stops_the_build_with_esbuilds_words(esbuild, tmp_path):
    entry = tmp_path / "main.js"
    entry.write_text('import { nothing } from "./missing.js";\nnothing();\n')
    with pytest.raises(BuildError, match=r'esbuild could not bundle the shell \(.*main\.js\):\n.*Could not resolve "\./missing\.js"'):
        bundle.bundle_shell(tmp_path / "out", esbuild, entry)
