"""What every page must do, generated from each page's declared settings: jumping equals
stepping, links round-trip and refuse bad values with a notice, nothing from a link is ever shown
as markup, the CSV is a table, the frames cover every t. (Every control changes the picture:
test_settings_that_apply.py.)"""

from __future__ import annotations

import csv
import io
import json
import re
from urllib.parse import parse_qsl, urlencode

import pytest
from helpers import other_values, picture, same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lanes import examples

from ui.app import prerender
from ui.document import document_json
from ui.pages import PAGES, page_class
from ui.panel_private import ids_of, make_document
from ui.urlstate import apply_query, to_query

CLASSES = {info.slug: page_class(info) for info in PAGES}
MARKUP = '<img src="x" onerror="window.__xss=1">'


@pytest.fixture(scope="module")
def pages():
    """One built page per slug, shared by the read-only tests of this module."""
    return {slug: cls() for slug, cls in CLASSES.items()}


@pytest.mark.parametrize("slug", CLASSES)
def test_jump_equals_stepping_and_frames_cover_every_t(build, slug):
    page, other = build(CLASSES[slug]), build(CLASSES[slug])
    n = page.run.t_max + 1
    assert all(len(column) == n for column in page.frames.data.values())
    t = page.run.t_max
    for s in range(t + 1):
        page.show(s)
    other.show(t)
    assert same(picture(page), picture(other))
    page.show(t + 10)  # beyond the run: the last frame
    assert page.t == t


@pytest.mark.parametrize("slug", CLASSES)
def test_link_round_trip(build, slug):
    page = build(CLASSES[slug])
    for name in page.settings():
        for value in other_values(page, name):
            setattr(page, name, value)
            if not page.notice:
                break
            page.notice = ""
    query = to_query(page)
    fresh = build(CLASSES[slug])
    assert apply_query(fresh, query) == []
    assert fresh.settings_now() == page.settings_now()
    assert same(picture(fresh)["frames"], picture(page)["frames"])


def respelled(query: str) -> str:
    """The same settings spelled otherwise: a number with a trailing zero, a flag as true/false."""
    out = []
    for key, raw in parse_qsl(query, keep_blank_values=True):
        if re.fullmatch(r"-?\d+\.\d+", raw):
            raw += "0"
        out.append((key, raw))
    return urlencode(out)


@pytest.mark.parametrize("slug", CLASSES)
def test_the_link_of_the_defaults_is_the_page_as_it_is(build, slug):
    """The link a page writes of its defaults (with its t, or respelled), applied to that page
    as the worker applies a link to the page made ahead of time: no notice, no recompute and the
    same document, model for model (so the page on screen is adopted, not built anew: hybrid's
    was, and its replaced document stayed behind)."""
    page = build(CLASSES[slug])
    doc = make_document(page.layout)
    ids, computed = ids_of(doc), []
    compute = page.compute
    page.compute = lambda: computed.append(1) or compute()
    for query in (to_query(page), f"{to_query(page)}&t=2", respelled(to_query(page))):
        assert apply_query(page, query) == [], query
    assert computed == [] and ids_of(doc) == ids


@pytest.mark.parametrize("slug", CLASSES)
def test_bad_link_values_are_named_and_the_rest_applies(build, slug):
    page = build(CLASSES[slug])
    defaults = page.settings_now()
    name = page.settings()[0]
    key = page.link_keys.get(name, name)
    notices = apply_query(page, f"{key}=%F0%9F%A6%84zzz&{key}=also-bad&nonsense=1&t=4")
    assert page.settings_now() == defaults
    text = " ".join(notices)
    assert "nonsense" in text and key in text and "2 times; the last one counts" in text
    assert "t" not in [n.split("=")[0] for n in notices]  # t belongs to the browser's player


@pytest.mark.parametrize("slug", CLASSES)
def test_markup_in_a_link_is_never_markup(build, slug):
    """Notices are plain text (the shell shows them with textContent); no HTML the page makes
    may contain the markup raw."""
    page = build(CLASSES[slug])
    name = page.settings()[0]
    key = page.link_keys.get(name, name)
    from urllib.parse import quote  # noqa: PLC0415

    notices = apply_query(page, f"{key}={quote(MARKUP)}&{quote(MARKUP)}=1")
    assert len(notices) == 2 and all("\n" not in n for n in notices)
    assert MARKUP not in document_json(page.layout, "lab-app")


@pytest.mark.parametrize("slug", CLASSES)
def test_csv_is_one_table(pages, slug):
    rows = list(csv.reader(io.StringIO(pages[slug].csv())))
    assert len(rows) >= 2 and len({len(r) for r in rows}) == 1
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row)


@pytest.mark.parametrize("slug", CLASSES)
def test_built_ahead_of_time(slug):
    ahead = prerender(CLASSES[slug])
    doc = json.loads(ahead["doc"])
    names = [r.get("attributes", {}).get("name") for r in doc["doc"]["roots"]]
    assert doc["target_id"] == "lab-app" and names
    assert '"name":"lab-frames"' in ahead["doc"].replace(" ", "")
    assert "https://" not in ahead["doc"]
    assert ahead["csv"].count("\n") >= 2 and ahead["t_max"] >= 1


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300))
def test_any_query_gives_notices_never_an_error(pages, query):
    for page in pages.values():
        before = page.settings_now()
        notices = apply_query(page, query)
        assert all(isinstance(n, str) and "\n" not in n for n in notices)
        for name, value in before.items():  # put the shared page back
            if getattr(page, name) != value:
                setattr(page, name, value)


def test_page_modules_are_short():
    """One lifecycle in ui/page.py, shared views in ui/views: each page module stays small."""
    from pathlib import Path  # noqa: PLC0415

    pages = Path(__file__).resolve().parents[2] / "ui" / "pages"
    long = {p.name: n for p in pages.glob("*.py") if (n := len(p.read_text().splitlines())) > 250}
    assert long == {}
