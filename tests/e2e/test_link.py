"""The link contract (ui/urlstate.py SHELL_KEYS, written into every page): each shell key, alone
and all together, on the page built ahead of time keeps t, steps at once, and the live page
adopts that page; bad values of the shell keys are named and dropped, and their notice stays
beside Python's. Generated from the contract: a key added there is tested here."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlparse

import pytest

from tests.e2e.conftest import hold_python, release_python, t_of, wait_live, wait_ready, watch
from ui.pages import PAGES, page_class
from ui.urlstate import SHELL_KEYS, view_names

pytestmark = pytest.mark.e2e

SLUG = "running-sum"
VIEWS = view_names(page_class(next(p for p in PAGES if p.slug == SLUG))())


def example(key: str) -> str:
    return SHELL_KEYS[key]["example"] or (VIEWS[1] if key == "view" else "")


CASES = {key: f"t=3&{key}={example(key)}" if key != "t" else "t=3" for key in SHELL_KEYS}
CASES["all together"] = "&".join(["t=3", *(f"{k}={example(k)}" for k in SHELL_KEYS if k != "t")])


def query_of(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query, keep_blank_values=True)


# Every key before Python in the gate; the live page's adoption there for t alone and for all
# the keys together (adoption does not depend on which key the link carries), and for each key
# alone in the slow lane.
LIVE_IN_GATE = ("t", "all together")
LINK_CASES = [pytest.param(case, live, id=f"{case}-{'live' if live else 'before-python'}",
                           marks=[pytest.mark.slow] if live and case not in LIVE_IN_GATE else [])
              for case in CASES for live in ((True,) if case in LIVE_IN_GATE else (False, True))]


@pytest.mark.parametrize(("case", "live"), LINK_CASES)
def test_each_shell_key_keeps_t_steps_at_once_and_is_adopted(context, server, case, live):
    page = context.new_page()
    visit = watch(page)
    held = hold_python(page)
    page.goto(f"{server.url}{SLUG}.html?{CASES[case]}")
    wait_ready(page)
    # before Python: at the link's t, stepping at once (not a greyed default run)
    assert t_of(page) == 3, case
    step = page.get_by_role("button", name="Step", exact=True)
    assert step.is_enabled(), case
    step.click()
    page.wait_for_function("window.lab?.player.t === 4")
    assert page.locator("#btn-csv").is_enabled(), case
    assert page.locator("#lab-notice-text").inner_text() == "", case
    if not live:
        assert visit.problems() == []
        return
    release_python(page, held)
    if "embed=1" in CASES[case]:  # an embed starts Python when its settings are wanted: unfolded, or reached
        settings = page.locator("#tp-settings")
        if settings.is_visible():  # folded (a named view, the presenter view)
            settings.click()
        else:
            page.locator("#lab-app .noUi-handle").first.focus()
    wait_live(page)
    assert page.evaluate("window.lab.state.adopted") is True, case  # the page on screen, not a new one
    assert t_of(page) == 4, case
    query = query_of(page)
    for pair in CASES[case].split("&"):
        key, value = pair.split("=")
        if key != "t":
            assert query[key] == [value], (case, query)  # a good value stays in the link
    assert query["t"] == ["4"]
    if "speed" in CASES[case]:
        assert page.locator("#tp-speed").input_value() == "30"
    assert page.locator("#lab-notice-text").inner_text() == "", case
    assert visit.problems() == []


BAD = {
    "t": ["99999", "-1", "<b>3</b>", "9" * 5000],
    "view": ["<img src=x onerror=alert(1)>", "javascript:alert(1)"],
    "theme": ["javascript:alert(1)", "<b>dark</b>"],
    "speed": ["1000", "fast"],
    "embed": ["maybe"],
    "present": ["<i>1</i>"],
}


# t (a number the player owns) and view (markup in a name) in the gate; the others, each
# another entry of the same contract, in the slow lane.
@pytest.mark.parametrize("key", [pytest.param(key, marks=[] if key in ("t", "view") else [pytest.mark.slow])
                                 for key in BAD])
def test_bad_shell_values_are_named_dropped_and_stay_beside_pythons_notices(context, server, key):
    """Each bad value of a shell key is named (shortened), dropped from the link once live, and
    its notice is still there after Python took over, next to Python's own (an unknown key)."""
    values = BAD[key]
    query = "&".join(f"{key}={quote(v)}" for v in values) + "&zzz=1"
    page = context.new_page()
    visit = watch(page)
    page.goto(f"{server.url}{SLUG}.html?{query}")
    wait_live(page)
    text = page.locator("#lab-notice-text").inner_text()
    last = values[-1]
    assert f"Ignored {key}={last[:20]}" in text, text  # the last one counts, and is named
    if len(values) > 1:
        assert f"The link gives {key} {len(values)} times; the last one counts." in text
    assert "Ignored an unknown setting “zzz”." in text  # Python's, beside the shell's
    assert len(text) < 700
    assert key not in query_of(page) or key == "t"  # dropped (t: the player's own)
    if key == "t":
        assert query_of(page)["t"] == ["0"] and t_of(page) == 0
    assert page.evaluate("window.__xss") is None
    assert visit.outside == []
