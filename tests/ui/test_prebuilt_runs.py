"""ui.app.prerender_run: the run of a link a page itself offers (ui/page.py Page.offered), built
ahead of time as the default run is: the same run, settings and CSV as the page made with that
link, its controls waiting for Python, at t = 0."""

from __future__ import annotations

import json

import pytest

from ui.app import prerender_run
from ui.pages import PAGES, page_class
from ui.urlstate import apply_query, to_query

OFFERED = [(info, link) for info in PAGES for link in page_class(info).offered]


def test_running_sums_settings_link_and_presets_are_offered():
    """The settings link on the running-sum page (?preset=worked+example) and its other preset."""
    assert {(info.slug, link) for info, link in OFFERED} == {
        ("running-sum", "preset=worked+example"), ("running-sum", "preset=your+turn")}


@pytest.mark.parametrize(("info", "link"), OFFERED, ids=[f"{i.slug}:{q}" for i, q in OFFERED])
def test_an_offered_links_run_is_the_page_made_with_that_link(info, link):
    cls = page_class(info)
    run = prerender_run(cls, link)
    page = cls()
    assert apply_query(page, link) == []
    assert run["link"] == link
    assert run["query"] == to_query(page) != to_query(cls())  # its own settings, all of them
    assert run["csv"] == page.csv() and run["t_max"] == page.run.t_max
    item = json.loads(run["doc"])
    assert item["target_id"] == "lab-app" and item["root_id"].startswith("p")
    # its controls wait for Python, as the default run's do: every widget disabled
    disabled = [m["attributes"].get("disabled") for m in _models(item["doc"]) if m["name"] == "Slider"]
    assert disabled and all(disabled), disabled


def test_a_link_the_page_does_not_take_stops_the_build():
    with pytest.raises(ValueError, match="not one the page takes"):
        prerender_run(page_class(PAGES[0]), "no_such_setting=1")


def _models(obj):
    if isinstance(obj, dict):
        if obj.get("type") == "object" and "name" in obj:
            yield obj
        for value in obj.values():
            yield from _models(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _models(value)
