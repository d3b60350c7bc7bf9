"""Which views a page has and which are its presenter scenes: stated once, on the page class
(``Page.named_views``, ``Page.scenes``), marked on the layout through ``Page.view_class`` and
written into the page's link contract, which the shell reads (no list of its own in JS)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ui.contract import VIEW_PREFIX
from ui.pages import PAGES, page_class
from ui.urlstate import link_contract, marked_views, view_names

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=[p.slug for p in PAGES])
def page(request):
    return page_class(next(p for p in PAGES if p.slug == request.param))()


def test_every_named_view_is_one_part_of_the_layout_and_every_marked_part_is_named(page):
    assert len(page.named_views) >= 2, "every page offers at least two scenes"
    assert marked_views(page) and set(marked_views(page)) == set(page.named_views)
    for name in page.named_views:  # one part a view: ?view=<name> shows that part alone
        parts = page.layout.select(lambda o, n=name: VIEW_PREFIX + n in (getattr(o, "css_classes", None) or []))
        assert len(parts) == 1, (name, parts)


def test_the_scenes_are_named_views_keys_1_to_9_can_reach(page):
    scenes = page.scene_names()
    assert scenes and len(scenes) <= 9 and len(set(scenes)) == len(scenes)
    assert set(scenes) <= set(page.named_views)
    for name, label in page.named_views.items():
        assert re.fullmatch(r"[a-z]+", name) and label and "<" not in label, (name, label)


def test_the_link_contract_carries_the_views_their_words_and_the_scenes(page):
    contract = json.loads(json.dumps(link_contract(page)))
    assert contract["views"] == view_names(page) == list(page.named_views)
    assert contract["view_labels"] == page.named_views
    assert contract["scenes"] == page.scene_names()


def test_a_view_the_page_does_not_name_cannot_be_marked():
    cls = page_class(PAGES[0])
    with pytest.raises(KeyError, match="names no view 'nope'"):
        cls.view_class("nope")


def test_the_shell_keeps_no_list_of_a_pages_views():
    """assets/js/ reads the views and scenes from lab-config: no page's view name is spelt there."""
    shell = "\n".join(re.sub(r"^\s*//.*$", "", p.read_text(), flags=re.M)  # code, not comments
                      for p in (ROOT / "assets" / "js").glob("*.js"))
    names = {n for info in PAGES for n in page_class(info).named_views}
    spelt = sorted(n for n in names if re.search(rf"""["'`]{n}["'`]""", shell))
    assert spelt == []
