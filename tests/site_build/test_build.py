"""build.py's checks, on small made-up inputs (the real build runs in `make build`)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

import build


def test_self_contained_check_names_the_file_that_would_fetch(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text('<a href="running-sum.html">ok</a>')
    (tmp_path / "assets" / "lab.js").write_text('const here = "relative/url.js";')
    build.assert_self_contained(tmp_path)  # nothing outside: passes

    (tmp_path / "page.html").write_text('<script src="https://cdn.example.org/x.js"></script>')
    with pytest.raises(SystemExit, match=r"page\.html: https://cdn\.example\.org/x\.js"):
        build.assert_self_contained(tmp_path)


def test_vendored_bundles_may_mention_urls_but_not_fetch_them(tmp_path):
    vendor = tmp_path / "static" / "lib"
    vendor.mkdir(parents=True)
    (vendor / "lib.min.js").write_text('const ns = "http://www.w3.org/2000/svg"; // licence: https://x.org')
    build.assert_self_contained(tmp_path)
    (vendor / "lib.min.js").write_text('s.src="https://cdn.jsdelivr.net/npm/thing.js"')
    with pytest.raises(SystemExit, match="lib.min.js"):
        build.assert_self_contained(tmp_path)


def test_rewritten_wheel_keeps_members_and_a_valid_record(tmp_path):
    src = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("pkg/__init__.py", "x = 1\n")
        zf.writestr("pkg/dist/big.js", "var a;\n")
        zf.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\nVersion: 1.0\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", "")
    dest = build.rewrite_wheel(src, tmp_path / "out" / src.name, lambda n: "/dist/" not in n)
    with zipfile.ZipFile(dest) as zf:
        names = set(zf.namelist())
        record = zf.read("pkg-1.0.dist-info/RECORD").decode()
    assert "pkg/dist/big.js" not in names and "pkg/__init__.py" in names
    assert "pkg/__init__.py,sha256=" in record and record.strip().endswith("RECORD,,")


def _wheel(folder: Path, name: str, requires: list[str], module: str = "") -> Path:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{module or name}/__init__.py", "x = 1\n")
        zf.writestr(f"{name}-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: {}\nVersion: 1.0\n{}".format(
            name, "".join(f"Requires-Dist: {r}\n" for r in requires)))
        zf.writestr(f"{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{name}-1.0.dist-info/RECORD", "")
    return path


def test_lock_follows_pyodide_markers_and_names_the_shipped_wheels(tmp_path):
    """Dependencies are evaluated under Pyodide's markers (tornado is left out), the dropped
    ones go, and each entry names the wheel that ships (bytecode-only) with its sha256."""
    (tmp_path / "built").mkdir()
    (tmp_path / "shipped").mkdir()
    official_lock = {  # as in Pyodide 0.27.7's own lock
        "info": {"arch": "wasm32", "abi_version": "2024_0", "platform": "emscripten_3_1_58",
                 "python": "3.12.7", "version": "0.27.7"},
        "packages": {"numpy": {"name": "numpy", "version": "2.0.2", "file_name": "numpy.whl", "install_dir": "site",
                               "sha256": "00", "package_type": "package", "imports": ["numpy"], "depends": [],
                               "unvendored_tests": True}}}
    built = {
        "app": _wheel(tmp_path / "built", "app", [
            "lib>=1", 'tornado; sys_platform != "emscripten"', "pandas", 'numpy; python_version >= "3.12"',
            'extra-thing; extra == "docs"']),
        "lib": _wheel(tmp_path / "built", "lib", [], module="lib_module"),
    }
    shipped = {name: _wheel(tmp_path / "shipped", name, []) for name in built}
    shipped["lib"].write_bytes(shipped["lib"].read_bytes() + b"\0")  # differs from the built one
    lock = build.write_lock(official_lock, {"numpy": None}, built, shipped)
    app, lib = lock["packages"]["app"], lock["packages"]["lib"]
    assert app["depends"] == ["lib", "numpy"]
    assert lib["imports"] == ["lib_module"] and lib["file_name"] == "lib-1.0-py3-none-any.whl"
    assert lib["sha256"] == build.sha256(shipped["lib"]) != build.sha256(built["lib"])
    assert lock["packages"]["numpy"]["sha256"] == "00" and lock["info"]["abi_version"] == "2024_0"
    json.dumps(lock)

    with pytest.raises(SystemExit, match="not shipped"):
        build.write_lock(official_lock, {}, built, shipped)  # numpy missing


def test_resolve_orders_dependencies_first():
    lock = {"packages": {"a": {"depends": ["b", "c"]}, "b": {"depends": ["c"]}, "c": {"depends": []}}}
    assert build.resolve(lock, ["a"]) == ["c", "b", "a"]


def test_pins_cover_what_the_browser_loads():
    pins = build.PINS
    assert pins["pyodide"]["version"] == "0.27.7"
    for name in ("panel", "bokeh", "param", "pyodide-http"):
        assert name in pins["pure_wheels"]
    assert set(pins["browser_stack"]["dropped_requirements"]) >= {"pandas", "nh3"}
    json.dumps(pins)  # plain data only


def test_bokehjs_patches_match_the_pinned_bokeh_once():
    """Each edit to the shipped bokeh.min.js finds its text exactly once (the build stops
    otherwise), so a Bokeh upgrade that moves the code is caught here first."""
    import bokeh

    text = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.min.js").read_text()
    for old, new, why in build.BOKEHJS_PATCHES:
        assert text.count(old) == 1, why
        assert new not in text, why


def test_csp_is_one_policy_that_readme_shows(tmp_path):
    """The policy is build.CSP; README's "Hosting" shows it as build.py writes it, and the page
    writer puts it first in every page's <head> and refuses what it would block."""
    readme = (Path(build.__file__).parent / "README.md").read_text()
    assert f"\n{build.content_security_policy()}\n" in readme
    assert f"\nContent-Security-Policy: {build.content_security_policy(header=True)}\n" in readme
    for directive, value, _ in (*build.CSP, *build.CSP_HEADER_ONLY):
        assert f"| `{directive} {value}` |" in readme

    page = '<!doctype html><html><head>\n<meta charset="utf-8">\n<script src="a.js"></script>{}</head></html>'
    (tmp_path / "ok.html").write_text(page.format('<script id="d" type="application/json">{"a": 1}</script>'))
    build.add_content_security_policy(tmp_path)
    text = (tmp_path / "ok.html").read_text()
    assert text.index("Content-Security-Policy") < text.index("<script")
    for bad in ("<script>alert(1)</script>", '<button onclick="go()">x</button>'):
        (tmp_path / "ok.html").write_text(page.format(bad))
        with pytest.raises(SystemExit, match="ok.html: an inline"):
            build.add_content_security_policy(tmp_path)


def test_make_test_runs_every_test_directory():
    """`make test` names the directories it runs; one left out (tests/js was, for a while)
    would pass unseen, as pytest's per-directory count only covers what it was asked to run."""
    import re

    from tests.conftest import KNOWN

    root = Path(build.__file__).resolve().parent
    recipe = (root / "Makefile").read_text()
    ran = set(re.findall(r"\btests/(\w+)", recipe.split("\ntest:", 1)[1].split("\nunit:", 1)[0]))
    with_tests = {p.name for p in (root / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert with_tests <= ran, f"make test leaves out tests/{sorted(with_tests - ran)}"
    assert with_tests <= set(KNOWN), "tests/conftest.py KNOWN must name every test directory"


def test_a_bokeh_css_variable_anywhere_stops_the_build(tmp_path):
    """BokehJS is patched not to read --bk-* CSS variables (none is defined): one that a
    style sheet, a page or a script would define stops the build, naming the file."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "lab.css").write_text(".x { color: red; --lab-accent: #08f; }")
    (tmp_path / "page.html").write_text("<p>the code names `--bk-${prefix}` without defining it</p>")
    build.assert_no_bokeh_css_variables(tmp_path)
    (tmp_path / "assets" / "lab.css").write_text(".bk-Figure { --bk-line-color: red; }")
    with pytest.raises(build.BuildError, match=r"assets/lab\.css: --bk-line-color:"):
        build.assert_no_bokeh_css_variables(tmp_path)


def test_the_font_check_names_a_character_the_font_is_not_cut_to(tmp_path):
    """A page that shows a character outside pins.toml's [ui_font] ranges stops the build,
    naming it; one inside them (Greek, ᵀ, ‖, subscripts) passes, in the text and the figures."""
    doc = json.dumps({"title": "Sᵀ q ‖k‖ αβγ x₁ ⱼ ≤ → ✔"})
    page = ('<html><body><h1>Sᵀ = α S</h1><script id="lab-doc" type="application/json">'
            f"{doc}</script></body></html>")
    (tmp_path / "ok.html").write_text(page)
    build.assert_font_covers_pages(tmp_path)
    doc = json.dumps({"title": "a \u4e2d character"})  # CJK: not in the cut
    (tmp_path / "bad.html").write_text(f'<script id="lab-doc" type="application/json">{doc}</script>')
    with pytest.raises(build.BuildError, match=r"bad.html .* U\+4E2D"):
        build.assert_font_covers_pages(tmp_path)


def test_the_ui_font_is_cut_to_its_ranges_and_keeps_every_symbol_the_pages_use(tmp_path):
    """The shipped woff2 files hold the pinned ranges' glyphs (DejaVu Sans has every one the
    pages print) and are small; their sizes and hashes go to build-info.json."""
    from fontTools.ttLib import TTFont  # noqa: PLC0415

    written = build.write_ui_font(tmp_path, build.fetch_ui_font())
    assert sorted(written) == ["static/fonts/lab-sans-400.woff2", "static/fonts/lab-sans-700.woff2"]
    for name, info in written.items():
        assert 5_000 < info["bytes"] < 40_000, (name, info)
        cmap = TTFont(tmp_path / name).getBestCmap()
        for ch in "αβγΣφρᵀᵢⱼₜ₀₉‖≤≥≈−→←×·…✔✘⟨⟩√∝":
            assert ord(ch) in cmap, (name, ch)
    assert (tmp_path / "static" / "fonts" / "LICENSE").read_text().startswith("Fonts are (c) Bitstream")


def test_every_page_carries_the_one_link_contract():
    """lab-config's link is ui.urlstate's contract for that page: the shell reads nothing else."""
    from ui.pages import PAGES, page_class  # noqa: PLC0415
    from ui.urlstate import SHELL_KEYS, link_contract  # noqa: PLC0415

    for info in PAGES[:2]:
        contract = link_contract(page_class(info)())
        assert contract["shell"] == SHELL_KEYS
        assert set(contract["settings"]).isdisjoint(SHELL_KEYS), info.slug
    shell = (build.ROOT / "assets" / "lab.js").read_text()
    assert "SHELL_KEYS" not in shell and '["t", "embed"' not in shell  # no second list
