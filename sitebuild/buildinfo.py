"""Build info: the build's id, build-info.json (what came from where), and the checks of the
finished site, which fail naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

from sitebuild import PROJECT, ROOT, BuildError, log, sha256
from sitebuild.bokehjs import assert_no_bokeh_css_variables
from sitebuild.bytecode import is_bytecode
from sitebuild.pins import PINS
from sitebuild.policy import content_security_policy
from sitebuild.static import assert_font_covers_pages


def compute_build_id(out: Path) -> str:
    """12 hex digits that change with anything a page or the service worker is made from: every
    file already in `out` (runtime, wheels, static files), the entry scripts and assets, the
    policy. The pages and the offline cache are named by it.

    Python's memory snapshot is left out: it is made from the files above and sitebuild/'s
    snapshot step (both counted), and two snapshots of the same sources differ in a few hundred
    bytes of the heap (measured: 960 of 75 MB), which would name every build anew."""
    from sitebuild.snapshot import HEAP_PREFIX  # noqa: PLC0415

    digest = hashlib.sha256()
    for path in [*sorted(out.rglob("*")), ROOT / "sitebuild" / "snapshot.py", ROOT / "sitebuild" / "snapshot.js"]:
        if path.name.startswith(HEAP_PREFIX):
            continue
        if path.is_file() and path.is_relative_to(out):
            digest.update(path.relative_to(out).as_posix().encode() + sha256(path).encode())
        elif path.is_file():
            digest.update(sha256(path).encode())
    for path in sorted([*(ROOT / "site").glob("*.py"), *(ROOT / "assets").rglob("*")]):
        if path.is_file():
            digest.update(sha256(path).encode())
    digest.update(content_security_policy().encode())  # pages and service worker change with it
    return digest.hexdigest()[:12]


def write_build_info(out: Path, lock, official, others, sources, pages, build_id, bytecode,
                     fonts: dict[str, dict], snapshot: dict | None = None) -> None:
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
        if name not in official and name != PROJECT and entry["file_name"] and is_bytecode(out / "pyodide" / entry["file_name"]):
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
            "fonts": fonts, "snapshot": snapshot}
    (out / "build-info.json").write_text(json.dumps(info, indent=1))


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


def check_site(out: Path) -> None:
    """The finished site: nothing fetches from another host, the UI font has every character a
    page shows, no file defines a CSS variable the patched BokehJS would no longer read."""
    assert_self_contained(out)
    assert_font_covers_pages(out)
    assert_no_bokeh_css_variables(out)
