"""Each page's subject (``Page.subject``: running-sum's state S, gates' states, …) is one of its
named views and its first main view in page order: the shell's first render builds the top of
the page up to the first main view and sets the rest aside (assets/js/first-paint.js setAside),
so the subject is on screen with the first plot. That it starts within the first screen of a
laptop and a phone is measured in the browser (tests/e2e/test_site.py, test_screens.py)."""

from __future__ import annotations

import panel as pn
import pytest

from ui.contract import role
from ui.pages import PAGES, page_class


def main_views_in_order(obj) -> list[set[str]]:
    """The css classes of every main view under a Panel object, depth first in page order (a
    main view's own insides not searched: the shell stops at one)."""
    classes = set(getattr(obj, "css_classes", None) or ())
    if role("main_view") in classes:
        return [classes]
    found = []
    for kid in getattr(obj, "objects", None) or ():
        found += main_views_in_order(kid)
    return found


@pytest.mark.parametrize("info", PAGES, ids=[p.slug for p in PAGES])
def test_the_subject_is_a_named_view_and_the_first_main_view(info):
    cls = page_class(info)
    assert cls.subject in cls.named_views, (info.slug, cls.subject, list(cls.named_views))
    page = cls()
    mains = main_views_in_order(page.layout)
    assert len(mains) >= 1, info.slug
    assert cls.view_class(cls.subject) in mains[0], (info.slug, mains)


def test_a_page_without_a_subject_is_caught():
    """The walk finds main views where the shell does: a layout whose first main view is not the
    named subject fails the check above."""
    layout = pn.Column(pn.Column(css_classes=["x"]),
                       pn.Row(pn.Column(css_classes=[role("main_view"), "lab-view-b"])),
                       pn.Column(css_classes=[role("main_view"), "lab-view-a"]))
    assert main_views_in_order(layout) == [{role("main_view"), "lab-view-b"}, {role("main_view"), "lab-view-a"}]
