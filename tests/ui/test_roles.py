"""Roles as names: every ``lab-*`` class on a built page's models is a role or a mark of
ui/contract.py, a named view's class (``Page.view_class``), a box the shell hides by the link
(``Page.applies_by_link``) or a class assets/lab.css styles; a misspelt role cannot reach a page
unnoticed. ui/ writes roles and marks as ``role(name)`` and ``mark(name)``, not as literals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bokeh.document import Document
from bokeh.model import Model

from ui import contract
from ui.pages import PAGES, page_class

ROOT = Path(__file__).resolve().parents[2]
CSS_CLASSES = frozenset(re.findall(r"\.(lab-[\w-]+)", (ROOT / "assets" / "lab.css").read_text()))
ROLE_CLASSES = frozenset(cls for cls, _ in contract.ROLES.values())
MARK_CLASSES = frozenset(cls for cls, _ in contract.MARKS.values())
# Where a class is spelt out on purpose: ui/contract.py states them; ui/theme.py, which
# ui/contract.py imports, cannot import it back; ui/pages/hybrid_models.py is another's to change.
SPELT_OUT = ("contract.py", "theme.py", "hybrid_models.py")


@pytest.fixture(scope="module", params=[p.slug for p in PAGES])
def page(request):
    return page_class(next(p for p in PAGES if p.slug == request.param))()


def lab_classes(page) -> set[str]:
    root = page.layout.get_root(Document())
    models = root.references() if isinstance(root, Model) else set()
    return {c for m in models for c in (getattr(m, "css_classes", None) or ())
            if c.startswith("lab-")}


def test_every_lab_class_on_a_page_is_a_role_a_view_or_styled(page):
    found = lab_classes(page)
    views = {page.view_class(name) for name in page.named_views}
    hidden = {a["class"] for a in page.applies_by_link().values()}
    unknown = found - ROLE_CLASSES - MARK_CLASSES - views - hidden - CSS_CLASSES
    assert not unknown, (f"{page.slug}: classes that are no role or mark of ui/contract.py, no "
                         f"named view, no box hidden by the link and not in assets/lab.css: "
                         f"{sorted(unknown)}")
    assert found & ROLE_CLASSES  # the walk sees the roles


def test_every_role_is_put_on_a_page_by_name():
    """ui/ writes ``role("name")`` and ``mark("name")``, not the class (SPELT_OUT aside); each
    role is used."""
    code = {p: p.read_text() for p in (ROOT / "ui").rglob("*.py") if p.name != "contract.py"}
    used = {name for text in code.values() for name in re.findall(r"""role\(["'](\w+)["']\)""", text)}
    assert used == set(contract.ROLES), set(contract.ROLES) ^ used
    literal = re.compile("|".join(rf"""["']{re.escape(cls)}["']"""
                                  for cls in ROLE_CLASSES | MARK_CLASSES))
    spelt = [str(p.relative_to(ROOT)) for p, text in code.items()
             if literal.search(text) and p.name not in SPELT_OUT]
    assert spelt == [], f"role or mark classes spelt out instead of role(name), mark(name): {spelt}"
