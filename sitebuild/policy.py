"""Policy: the Content-Security-Policy of every page, stated once, and written into each page.

serve.py sends the same as a header (with what only a header can carry) and README's "Hosting"
shows both; tests/site_build holds README to this module, and the e2e suite fails on any violation.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from sitebuild import BuildError, log

# The Content-Security-Policy of every page, in this one place: (directive, sources, why).
# add_content_security_policy writes it into each page's <head> as a <meta http-equiv> (a static
# site has no headers of its own); serve.py sends it as a header too, with CSP_HEADER_ONLY added.
CSP = (
    ("default-src", "'none'", "whatever no directive below allows is refused"),
    ("script-src", "'self' 'unsafe-eval'", "the site's own files, no inline script; eval because Pyodide "
     "evaluates the JavaScript glue of numpy's compiled modules as it loads them (with only "
     "'wasm-unsafe-eval' no page starts), which also covers compiling WebAssembly"),
    ("style-src", "'self' 'unsafe-inline'", "the site's stylesheets, and the <style> elements and style "
     "attributes that BokehJS and Panel write at run time (thousands per page)"),
    ("img-src", "'self' data:", "the site's images; BokehJS and Panel's toolbar icons are data: URLs in their CSS"),
    ("font-src", "'self'", "the UI font and KaTeX's fonts, shipped with the site"),
    ("connect-src", "'self'", "Pyodide fetches its runtime and the wheels from the site, nothing else"),
    ("worker-src", "'self'", "the page's Python worker (assets/py-worker.js) and the service worker that keeps "
     "the site for offline use, both files of the site"),
    ("object-src", "'none'", "no plugins"),
    ("base-uri", "'none'", "no <base> element may re-point the pages' relative URLs"),
    ("form-action", "'none'", "the pages' only forms close dialogs (method=dialog) and submit nowhere"),
)
# A <meta> cannot carry frame-ancestors: a host that can set headers decides who may embed the
# pages; `*` lets any course page embed them (narrow it to the course site's origin if wanted).
CSP_HEADER_ONLY = (("frame-ancestors", "*", "any page may embed the simulator (?embed=1 in a lesson)"),)


def content_security_policy(*, header: bool = False) -> str:
    return "; ".join(f"{d} {v}" for d, v, _ in (*CSP, *(CSP_HEADER_ONLY if header else ())))


INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*\btype=[\"']?application/(?:ld\+)?json)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)


def add_content_security_policy(out: Path) -> None:
    """Put CSP into every page's <head>, first after the charset (a <meta> policy covers only
    what follows it). Fails on anything the policy would block: an executable inline script
    (move it to a file; JSON data blocks are fine) or an inline event handler."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(content_security_policy(), quote=False)}">'
    charset = '<meta charset="utf-8">'
    for page in sorted(out.glob("*.html")):
        text = page.read_text()
        problem = (f"it has no {charset} to put the policy after" if text.count(charset) != 1 else
                   "it already has a Content-Security-Policy" if re.search(r"http-equiv=[\"']?Content-Security-Policy", text, re.I) else
                   f"an inline script the policy would block: {m[0][:80]}" if (m := INLINE_SCRIPT.search(text)) else
                   f"an inline event handler the policy would block: {m[0][:80]}" if (m := INLINE_HANDLER.search(text)) else
                   None)
        if problem:
            raise BuildError(f"{page.name}: {problem}")
        page.write_text(text.replace(charset, f"{charset}\n{meta}"))
    log(f"Content-Security-Policy in every page: {content_security_policy()}")
