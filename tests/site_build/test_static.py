"""sitebuild.static: the static files (a made-up KaTeX tarball, the installed Bokeh and Panel)
and the UI font, its code points and the check that every page's characters are in it."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from sitebuild import ROOT, BuildError, pins, static
from sitebuild.bokehjs import MATHJAX_CDN


def test_the_font_is_cut_to_the_pinned_ranges(monkeypatch):
    monkeypatch.setitem(pins.PINS, "ui_font", {**pins.PINS["ui_font"], "unicodes": ["0041-0043", "00E9", "2192"]})
    assert static.font_codepoints() == {0x41, 0x42, 0x43, 0xE9, 0x2192}


def test_the_pinned_ranges_cover_the_symbols_the_lessons_print():
    points = static.font_codepoints()
    assert all(ord(ch) in points for ch in "Sᵀ q ‖k‖ αβγΔ x₁ ⱼ ≤ ≈ → ✔ ✘ × · … ŵ")
    assert 0x4E2D not in points and len(points) < 1000  # a cut, not the whole font


def test_the_font_check_names_a_character_the_font_is_not_cut_to(tmp_path):
    """A page that shows a character outside pins.toml's [ui_font] ranges stops the build,
    naming it; one inside them (Greek, ᵀ, ‖, subscripts) passes, in the text and the figures."""
    doc = json.dumps({"title": "Sᵀ q ‖k‖ αβγ x₁ ⱼ ≤ → ✔"})
    page = ('<html><body><h1>Sᵀ = α S</h1><script id="lab-doc" type="application/json">'
            f"{doc}</script></body></html>")
    (tmp_path / "ok.html").write_text(page)
    static.assert_font_covers_pages(tmp_path)
    doc = json.dumps({"title": "a \u4e2d character"})  # CJK: not in the cut
    (tmp_path / "bad.html").write_text(f'<script id="lab-doc" type="application/json">{doc}</script>')
    with pytest.raises(BuildError, match=r"bad.html .* U\+4E2D"):
        static.assert_font_covers_pages(tmp_path)


def test_the_ui_font_is_cut_to_its_ranges_and_keeps_every_symbol_the_pages_use(tmp_path, monkeypatch):
    """The shipped woff2 files hold the pinned ranges' glyphs (DejaVu Sans has every one the
    pages print) and are small; their sizes and hashes go to build-info.json. A build at
    another time writes the same bytes (fontTools dates a font by SOURCE_DATE_EPOCH or the clock)."""
    from fontTools.ttLib import TTFont  # noqa: PLC0415

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "2000000000")
    later = static.write_ui_font(tmp_path / "later", static.fetch_ui_font())
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1000000000")
    written = static.write_ui_font(tmp_path, static.fetch_ui_font())
    assert {n: i["sha256"] for n, i in written.items()} == {n: i["sha256"] for n, i in later.items()}
    assert sorted(written) == ["static/fonts/lab-sans-400.woff2", "static/fonts/lab-sans-700.woff2"]
    for name, info in written.items():
        assert 5_000 < info["bytes"] < 40_000, (name, info)
        cmap = TTFont(tmp_path / name).getBestCmap()
        for ch in "αβγΣφρᵀᵢⱼₜ₀₉‖≤≥≈−→←×·…✔✘⟨⟩√∝":
            assert ord(ch) in cmap, (name, ch)
    assert (tmp_path / "static" / "fonts" / "LICENSE").read_text().startswith("Fonts are (c) Bitstream")


def _katex(path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name in ("dist/katex.min.js", "dist/katex.min.css", "dist/contrib/auto-render.min.js",
                     "dist/fonts/KaTeX_Main-Regular.woff2", "dist/fonts/KaTeX_Main-Regular.ttf",
                     "dist/katex.js", "README.md"):
            body = (".katex{font:normal 1.21em KaTeX_Main}@font-face{src:url(fonts/KaTeX_Main-Regular.woff2)}"
                    if name.endswith(".css") else name).encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def test_static_files_are_bokehjs_patched_panel_katex_trimmed_and_the_assets(tmp_path):
    _katex(tmp_path / "katex.tgz")
    out = tmp_path / "site"
    static.copy_static(out, tmp_path / "katex.tgz")
    katex = sorted(p.relative_to(out / "static" / "katex").as_posix() for p in (out / "static" / "katex").rglob("*.*"))
    # KaTeX's fonts only: the formulas come typeset (sitebuild/formulas.py), its style joins lab.css
    assert katex == ["fonts/KaTeX_Main-Regular.woff2"]
    css = (out / "assets" / "lab.css").read_text()
    assert css.startswith((ROOT / "assets" / "lab.css").read_text())
    assert css.rstrip().endswith(".katex{font:normal 1.21em KaTeX_Main}@font-face{src:url(../static/katex/fonts/KaTeX_Main-Regular.woff2)}")
    core = (out / "static" / "bokeh" / "bokeh.min.js").read_text()
    assert MATHJAX_CDN not in core and '_get_css_value(t){return""}' in core
    assert sorted(p.name for p in (out / "static" / "bokeh").iterdir()) == [
        "bokeh-widgets.min.js", "bokeh.min.js"]  # its tables: assets/tables-stub.js stands in
    assert len(list((out / "static" / "panel").glob("*/dist/panel.min.js"))) == 1
    shipped = {p.relative_to(out / "assets").as_posix() for p in (out / "assets").rglob("*") if p.is_file()}
    made = {"shell.html", "index.html", "sw.js"}  # made into the pages, the index and the worker
    expected = {p.relative_to(ROOT / "assets").as_posix() for p in (ROOT / "assets").rglob("*")
                if p.is_file() and p.name not in made and p.suffix != ".md" and not p.is_relative_to(ROOT / "assets" / "texts")}
    assert shipped == expected and any(name.endswith(".css") for name in shipped)
