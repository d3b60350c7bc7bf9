"""Pages made ahead in the memory snapshot (ui.worker.premake): the same page is the same document,
to the byte, whether a process made it alone (the build's CPython, one process a page) or after
every other page (the snapshot's one Pyodide process), so the worker can take the one the heap
holds instead of making it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sitebuild import ROOT

# The slow lane's: the gate takes the same path in every page's life (tests/e2e/test_site.py: the
# worker adopts the premade page, nothing made again), and the build checks each page's ids.
pytestmark = pytest.mark.slow

# A document's text, but for Panel's link tags (the id() of a Python object, as in
# test_panel_private), and its ids' digest.
SHOW = """
import hashlib, json, re
from ui.document import embed_json, ids_digest
def show(pydoc):
    text = re.sub(r'("tags": \\[\\[)\\d+(, \\[)', r"\\g<1>0\\2", embed_json(pydoc))
    return {"ids": ids_digest(pydoc), "text": hashlib.sha256(text.encode()).hexdigest()}
"""

ALONE = SHOW + """
import sys
from ui.app import prerender
from ui.document import build_ahead
from ui.pages import PAGES, page_class
cls = page_class(next(p for p in PAGES if p.slug == sys.argv[1]))
assert prerender(cls)["ids"] == show(build_ahead(cls)[1])["ids"]
print(json.dumps(show(build_ahead(cls)[1])))
"""

# Every page made in one process, each page's module imported just before it is made (the
# snapshot imports them all first: this is the harder case, other pages made before an import).
TOGETHER = SHOW + """
import json, sys
import ui.worker
expected = json.loads(sys.argv[1])
found = ui.worker.premake(expected)
print(json.dumps({"found": found, "kept": {s: show(d) for s, (_, d) in ui.worker.PREMADE.items()}}))
"""

# hybrid had a Bokeh model made on import (its bar axis' formatter), numbered by whatever the
# process imported first; fixed-state is made after hybrid and gates, whose Panel objects move
# Panel's name counter; random-features carries a Panel link.
SLUGS = ("hybrid", "random-features", "fixed-state")


def python(code: str, *args: str) -> str:
    run = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.strip().splitlines()[-1]


def test_a_page_made_after_every_other_is_the_document_made_alone():
    """The same ids (what adoption asks) and, in one Python, the same text."""
    alone = {slug: json.loads(python(ALONE, slug)) for slug in SLUGS}
    expected = {**{s: a["ids"] for s, a in alone.items()}, "gates": "0" * 64}  # gates: made, not kept
    got = json.loads(python(TOGETHER, json.dumps(expected)))
    assert got["found"] == {**{s: a["ids"] for s, a in alone.items()}, "gates": got["found"]["gates"]}
    assert got["found"]["gates"] != "0" * 64 and len(got["found"]["gates"]) == 64
    assert got["kept"] == alone
