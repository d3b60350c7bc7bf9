"""ui/panel_private.py's remembered Bokeh defaults: the documents every page makes are the
same with and without them, model for model and value for value. And with Panel's unused
parts left out (LEFT_OUT), as in the worker, every page is made, and the same."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sitebuild import ROOT

SCRIPT = r"""
import json, re, sys
if sys.argv[1:] == ["left out"]:
    from ui import panel_private
    panel_private.leave_out()
from ui.document import TARGET, document_json, fresh_ids
from ui.pages import PAGES, page_class
from ui import panel_private

def normal(x, ids):
    # What differs between two builds in one process anyway: Bokeh ids (numbered here in order of
    # first appearance, so the model graph must be the same), Panel's counted names, id()s in tags.
    if isinstance(x, dict):
        return {k: normal(v, ids) for k, v in x.items()}
    if isinstance(x, list):
        return [normal(v, ids) for v in x]
    if isinstance(x, str):
        if re.fullmatch(r"p\d+", x):
            return "id%d" % ids.setdefault(x, len(ids))
        named = re.fullmatch(r"([A-Za-z_]+)\d{5,}", x)
        return named.group(1) + "#" if named else x
    if isinstance(x, int) and not isinstance(x, bool) and x > 10**10:
        return "python id"
    return x

def documents():
    out = {}
    for info in PAGES:
        fresh_ids()
        page = page_class(info)()
        page.show(3)
        out[info.slug] = normal(json.loads(document_json(page.layout, TARGET)), {})
    return out

documents()  # a first build makes a few models once
before = documents()
panel_private.remember_defaults()
panel_private.remember_defaults()  # twice: once in effect
after = documents()
from bokeh.core.property.descriptors import PropertyDescriptor
print(json.dumps({"same": before == after, "pages": len(before), "patched": PropertyDescriptor._lab_remembered,
                  "differ": [s for s in before if before[s] != after[s]]}))
"""


@pytest.mark.slow  # every page built twice more: the gate's page builds use the patch it checks
def test_remembered_defaults_make_the_same_documents():
    """Fails if remembering a default per class changes any value of any page's document (a
    mutable default shared between models, a themed value taken for the class's)."""
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["patched"] and got["pages"] >= 7
    assert got["same"], f"documents differ on {got['differ']}"


LEFT_OUT = SCRIPT.split("documents()  # a first build")[0] + r"""
from ui.panel_private import LEFT_OUT, LeftOut
kept = [name for name in LEFT_OUT if isinstance(sys.modules.get(name), LeftOut)]
try:
    LeftOut("panel.widgets.tables").Tabulator()
    refused = None
except RuntimeError as err:
    refused = str(err)
import hashlib
made = documents()
# the data models Bokeh declares to the browser in every document: those of the modules imported
defs = sorted({d["name"] for made_one in made.values() for d in made_one["doc"].pop("defs", [])})
print(json.dumps({"kept": kept, "refused": refused, "pages": sorted(made), "defs": defs,
                  "digest": hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()}))
"""


def made_documents(*args: str) -> dict:
    run = subprocess.run([sys.executable, "-c", LEFT_OUT, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_page_is_made_with_panels_unused_parts_left_out():
    from ui.pages import PAGES
    from ui.panel_private import LEFT_OUT as NAMES

    got = made_documents("left out")
    assert got["pages"] == sorted(info.slug for info in PAGES)
    assert got["kept"] == list(NAMES)  # no page's making imported one for real
    assert got["refused"] == ("panel.widgets.tables.Tabulator is left out of the Lab's Python "
                              "(ui/panel_private.py LEFT_OUT)")


@pytest.mark.slow  # every page made in two more processes
def test_panels_unused_parts_left_out_change_no_document():
    left_out, whole = made_documents("left out"), made_documents()
    assert whole["kept"] == [] and left_out["digest"] == whole["digest"]
    # declared: fewer data models (the left-out templates' and widgets'), no other
    assert set(left_out["defs"]) < set(whole["defs"]) and "TemplateActions1" in set(whole["defs"]) - set(left_out["defs"])
