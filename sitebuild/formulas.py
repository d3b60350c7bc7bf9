"""Formulas typeset at build time: KaTeX (the pinned npm build, run by Node.js) renders every
formula of the lesson texts to HTML and MathML, so a page ships them typeset. The browser runs
no KaTeX and never shows TeX source (it had, for the first 1-3 s, while KaTeX's script and
auto-render loaded and ran after the first plot); it loads only KaTeX's style sheet, joined to
lab.css by sitebuild/static.py (one request), and the fonts a formula uses.

A formula is what KaTeX's auto-render took: \\( … \\) inline, \\[ … \\] and $$ … $$ displayed,
within one run of text (never across a tag); its TeX is HTML text, so entities are read first.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import tarfile
from pathlib import Path

from sitebuild import CACHE, BuildError, log
from sitebuild.bytecode import find_node

# inline \( \), displayed \[ \] and $$ $$: the delimiters KaTeX's auto-render took in the browser, before the build typeset them
MATH = re.compile(r"\\\((?P<inline>.+?)\\\)|\\\[(?P<display>.+?)\\\]|\$\$(?P<dollars>.+?)\$\$", re.S)

# Runs in node: KaTeX's UMD build, every formula of stdin's JSON list [[tex, display], ...] to
# its HTML (stdout, a JSON list). throwOnError false: a formula KaTeX cannot read shows its
# source in red, as in the browser; the build refuses those (KATEX_ERROR).
RENDER = r"""
const katex = require(process.env.LAB_KATEX);
const jobs = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(jobs.map(([tex, display]) =>
  katex.renderToString(tex, { displayMode: display, throwOnError: false, output: "htmlAndMathml" }))));
"""
KATEX_ERROR = 'class="katex-error"'
NAMESPACES = ("http://www.w3.org/1998/Math/MathML", "http://www.w3.org/2000/svg")


def katex_script(katex_tar: Path) -> Path:
    """dist/katex.min.js from the pinned tarball, kept in the build cache (the site no longer
    ships it)."""
    target = CACHE / "katex" / "katex.min.js"
    if not target.exists():
        with tarfile.open(katex_tar) as tar:
            member = tar.getmember("package/dist/katex.min.js")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    return target


def formulas_in(text: str) -> list[tuple[str, bool]]:
    """Each formula of an HTML text, as KaTeX takes it: (TeX, displayed), in order."""
    out = []
    for m in MATH.finditer(text):
        source = m.group("inline") or m.group("display") or m.group("dollars")
        if "<" in source or ">" in source:
            raise BuildError(f"a formula runs across a tag, which no typesetting reads: {m[0][:80]!r}")
        out.append((html.unescape(source), m.group("inline") is None))
    return out


def typeset(texts: dict[str, str], katex_tar: Path) -> dict[str, str]:
    """The same texts (name -> HTML) with every formula replaced by KaTeX's HTML. Needs Node.js
    18+ (the build's, as for the snapshot): without it the build stops and says so."""
    jobs = [job for text in texts.values() for job in formulas_in(text)]
    if not jobs:
        return dict(texts)
    found = find_node()
    if found is None:
        raise BuildError("the lesson texts' formulas are typeset at build time by KaTeX in Node.js 18+: "
                         "none found (apt-get install nodejs, or set LAB_NODE; `make build` installs it)")
    run = subprocess.run([found[0], "-e", RENDER], input=json.dumps(jobs), capture_output=True, text=True,
                         env={"LAB_KATEX": str(katex_script(katex_tar)), "PATH": "/usr/bin:/bin"})
    if run.returncode != 0:
        raise BuildError(f"KaTeX in Node.js failed: {run.stderr.strip()[-2000:]}")
    rendered = iter(json.loads(run.stdout))
    out = {}
    def one(m: re.Match) -> str:
        # <math> and <svg> (KaTeX's stretchy arrows and hats) need no xmlns in HTML (its parser
        # puts them in their namespaces); without it the pages name no outside address at all
        # (buildinfo.assert_self_contained)
        done = next(rendered)
        for namespace in NAMESPACES:
            done = done.replace(f' xmlns="{namespace}"', "")
        if KATEX_ERROR in done:
            raise BuildError(f"KaTeX cannot read the formula {m[0][:80]!r}")
        return done

    for name, text in texts.items():
        out[name] = MATH.sub(one, text)
    log(f"formulas: {len(jobs)} typeset at build time by KaTeX in Node.js {found[1]}")
    return out
