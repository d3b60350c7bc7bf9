"""sitebuild.buildinfo: the build id, build-info.json, and the checks of the finished site."""

from __future__ import annotations

import json
import sys
import zipfile

import pytest

from sitebuild import BuildError, buildinfo, pins


def test_self_contained_check_names_the_file_that_would_fetch(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text('<a href="running-sum.html">ok</a>')
    (tmp_path / "assets" / "lab.js").write_text('const here = "relative/url.js";')
    buildinfo.assert_self_contained(tmp_path)  # nothing outside: passes

    (tmp_path / "page.html").write_text('<script src="https://cdn.example.org/x.js"></script>')
    with pytest.raises(SystemExit, match=r"page\.html: https://cdn\.example\.org/x\.js"):
        buildinfo.assert_self_contained(tmp_path)


def test_vendored_bundles_may_mention_urls_but_not_fetch_them(tmp_path):
    vendor = tmp_path / "static" / "lib"
    vendor.mkdir(parents=True)
    (vendor / "lib.min.js").write_text('const ns = "http://www.w3.org/2000/svg"; // licence: https://x.org')
    buildinfo.assert_self_contained(tmp_path)
    (vendor / "lib.min.js").write_text('s.src="https://cdn.jsdelivr.net/npm/thing.js"')
    with pytest.raises(SystemExit, match="lib.min.js"):
        buildinfo.assert_self_contained(tmp_path)


def test_the_finished_site_is_checked_for_the_font_and_bokehs_css_variables_too(tmp_path):
    (tmp_path / "index.html").write_text("<p>Sᵀ q</p>")
    buildinfo.check_site(tmp_path)
    (tmp_path / "index.html").write_text("<p>\u4e2d</p>")
    with pytest.raises(BuildError, match=r"index.html shows characters the UI font is not cut to: .* U\+4E2D"):
        buildinfo.check_site(tmp_path)
    (tmp_path / "index.html").write_text("<style>.x { --bk-text-color: red }</style>")
    with pytest.raises(BuildError, match="index.html: --bk-text-color:"):
        buildinfo.check_site(tmp_path)


def test_the_build_id_follows_every_shipped_file_and_its_name(tmp_path):
    (tmp_path / "pyodide").mkdir()
    (tmp_path / "pyodide" / "a.whl").write_bytes(b"one")
    first = buildinfo.compute_build_id(tmp_path)
    assert len(first) == 12 and int(first, 16) >= 0
    assert buildinfo.compute_build_id(tmp_path) == first  # nothing changed: the same id
    (tmp_path / "pyodide" / "a.whl").write_bytes(b"two")
    second = buildinfo.compute_build_id(tmp_path)
    (tmp_path / "pyodide" / "a.whl").rename(tmp_path / "pyodide" / "b.whl")
    assert len({first, second, buildinfo.compute_build_id(tmp_path)}) == 3


def _zip(path, names) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name in names:
            zf.writestr(name, "")


def test_build_info_says_where_every_shipped_file_came_from(tmp_path):
    shipped = tmp_path / "pyodide"
    shipped.mkdir()
    names = {"numpy": "numpy-2.0.2.whl", "linear-attention-lab": "lab.whl", "pyyaml": "pyyaml.whl",
             "bokeh": "bokeh.whl", "param": "param.whl"}
    for name, file_name in names.items():
        _zip(shipped / file_name, ["m.pyc"] if name in ("numpy", "param") else ["m.py", "m.pyc"])
    lock = {"packages": {n: {"file_name": f, "sha256": f"sha-{n}", "version": "9.9"} for n, f in names.items()}}
    sources = [{"file": "pyodide/pyodide.js", "from": "npm"}]
    fonts = {"static/fonts/lab-sans-400.woff2": {"bytes": 1, "sha256": "f", "glyphs": 2}}
    buildinfo.write_build_info(tmp_path, lock, {"numpy": None}, {}, sources, ["index.html"], "abc", "Pyodide", fonts)
    info = json.loads((tmp_path / "build-info.json").read_text())
    assert info["build"] == "abc" and info["bytecode_compiled_by"] == "Pyodide"
    assert info["pyodide"] == pins.PINS["pyodide"]["version"] and info["built_with"] == f"Python {sys.version.split()[0]}"
    assert info["runtime"] == sources and info["pages"] == ["index.html"] and info["fonts"] == fonts
    origin = {w["file"].removeprefix("pyodide/"): w["from"] for w in info["wheels"]}
    assert origin["numpy-2.0.2.whl"].startswith("official Pyodide 0.27.7 build (sha256 as in its lock)")
    assert origin["lab.whl"] == "this repository (sim, ui)"
    assert origin["pyyaml.whl"] == "built from the PyPI sdist pyyaml==9.9 without C extensions"
    assert origin["bokeh.whl"] == "PyPI bokeh==9.9, JavaScript removed (shipped once under static/)"
    assert origin["param.whl"] == f"PyPI param=={pins.PINS['pure_wheels']['param']['version']}, compiled to bytecode"
    assert {w["sha256"] for w in info["wheels"]} == {f"sha-{n}" for n in names}
    assert len(info["static"]) == 4
