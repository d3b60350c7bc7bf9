"""Static files: BokehJS (patched: bokehjs.py), Panel's JS and CSS, KaTeX, the shell's assets,
and the UI font cut to the characters the pages show.

BokehJS and Panel's files come from the installed wheels (whose versions pins.check_versions
holds to the pins), once, under static/: the wheels the browser installs are slimmed of them.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path

from sitebuild import ROOT, BuildError, copy, log, sha256
from sitebuild.bokehjs import patch_bokehjs
from sitebuild.pins import PINS, fetch_npm


def fetch_katex() -> Path:
    """KaTeX's npm tarball (its fonts included), verified."""
    return fetch_npm(PINS["katex"], "katex")


def copy_static(out: Path, katex: Path) -> None:
    """out/static/: BokehJS (patched), Panel's JS, CSS and theme, KaTeX's script, style and woff2
    fonts; out/assets/: the shell's files (the templates aside: pages and worker are made)."""
    import bokeh  # noqa: PLC0415
    import panel  # noqa: PLC0415

    bokeh_js = Path(bokeh.__file__).parent / "server" / "static" / "js"
    for name in ("bokeh", "bokeh-widgets"):  # not its tables: assets/tables-stub.js stands in
        copy(bokeh_js / f"{name}.min.js", out / "static" / "bokeh" / f"{name}.min.js")
    patch_bokehjs(out / "static" / "bokeh" / "bokeh.min.js")
    panel_dist = Path(panel.__file__).parent / "dist"
    version = json.loads((Path(panel.__file__).parent / "package.json").read_text())["version"]
    dest = out / "static" / "panel" / version.split("+")[0] / "dist"
    copy(panel_dist / "panel.min.js", dest / "panel.min.js")
    for sub in ("css", "assets", "bundled/theme"):
        shutil.copytree(panel_dist / sub, dest / sub, dirs_exist_ok=True)
    # KaTeX: its fonts; its style sheet joins lab.css (below); no script: the formulas come
    # typeset from the build (sitebuild/formulas.py)
    katex_css = None
    with tarfile.open(katex) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/")
            if name == "dist/katex.min.css":
                katex_css = tar.extractfile(member).read().decode()
            elif name.startswith("dist/fonts/") and name.endswith(".woff2"):
                target = out / "static" / "katex" / name.removeprefix("dist/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
    if katex_css is None:
        raise BuildError(f"{katex.name}: no dist/katex.min.css in KaTeX's package")
    shutil.copytree(ROOT / "assets", out / "assets", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("texts", "*.md", "shell.html", "index.html", "sw.js"))
    lab_css = out / "assets" / "lab.css"
    lab_css.write_text(lab_css.read_text() + "\n/* KaTeX's style sheet (npm katex@" + PINS["katex"]["version"]
                       + "), for the formulas typeset at build time: sitebuild/formulas.py */\n"
                       + re.sub(r"url\(fonts/", "url(../static/katex/fonts/", katex_css) + "\n")
    log("static files: BokehJS, Panel JS/CSS, KaTeX's style and fonts, assets")


# The UI font ----------------------------------------------------------------------------------

def fetch_ui_font() -> Path:
    """DejaVu Sans from npm's @fontsource build, verified."""
    return fetch_npm(PINS["ui_font"], "fontsource-dejavu-sans")


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
            # The font keeps its own date: saved with today's, every build made different
            # fonts, hence a new build id, new pages and a new offline cache for nothing changed.
            font = TTFont(io.BytesIO(tar.extractfile(f"package/{member}").read()), recalcTimestamp=False)
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


def _without_formulas(text: str) -> str:
    """An HTML page without KaTeX's formulas (each a span of class katex, its spans nested)."""
    out, at = [], 0
    for m in re.finditer(r'<span class="katex(?:-display)?">', text):
        if m.start() < at:
            continue  # inside the formula just skipped
        out.append(text[at:m.start()])
        depth, i = 0, m.start()
        for tag in re.finditer(r"<(/?)span\b[^>]*>", text[m.start():]):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                i = m.start() + tag.end()
                break
        at = i
    return "".join(out) + text[at:]


def assert_font_covers_pages(out: Path) -> None:
    """Every character a page shows in its shell, lesson text or figures is in the UI font: one
    outside its ranges would be drawn in whatever font the visitor's system has (and measured
    with it by the presenter fit). The formulas are KaTeX's (typeset at build time, drawn in its
    own fonts): left out. Fails naming the characters and the page."""
    covered = font_codepoints() | {0x0A, 0x0D, 0x09, 0xFEFF}
    for page in sorted(out.glob("*.html")):
        text = page.read_text()
        shown = [re.sub(r"<script\b[^>]*>.*?</script>", " ", _without_formulas(text), flags=re.S)]
        for block in re.findall(r'<script id="lab-(?:doc|config)" type="application/json">(.*?)</script>', text, re.S):
            shown.extend(_strings(json.loads(block.replace("<\\/", "</"))))
        missing = sorted({ch for s in shown for ch in s if ord(ch) not in covered})
        if missing:
            names = ", ".join(f"{ch} U+{ord(ch):04X}" for ch in missing[:20])
            raise BuildError(f"{page.name} shows characters the UI font is not cut to: {names}; "
                             "add their ranges to pins.toml [ui_font] unicodes")
