"""A setting that does not apply is hidden (issue 20, "No dead ends"), in the browser.

Gates' "Decay gate α" stayed on screen with only linear attention, RetNet and DeltaNet compared,
none of which reads it: moving it changed nothing. Guarded here on the live page from a link
with those rules: α is hidden, RetNet's γ and the write strength β (DeltaNet's) are shown; and
the default rules (Gated DeltaNet reads α) show it. (tests/ui/test_settings_that_apply.py checks
every page's settings without a browser.)
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import open_page, painted

pytestmark = pytest.mark.e2e

SHOWN_JS = """(title) => [...lab.player.doc.all_models]
  .filter((m) => (m.type || '').includes('Slider') && String(m.title).startsWith(title))
  .map((m) => { const v = lab.viewOf(m); const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
                return !!(m.visible && r && r.width > 0); })"""


def test_the_decay_gate_shows_only_with_a_rule_that_reads_it(context, server):
    page = open_page(context, f"{server.url}gates.html?rules=linear,retnet,deltanet").page
    painted(page)
    assert page.evaluate(SHOWN_JS, "Decay gate α") == [False]
    assert page.evaluate(SHOWN_JS, "RetNet decay γ") == [True]
    assert page.evaluate(SHOWN_JS, "Write strength β") == [True]
    page.close()
    page = open_page(context, f"{server.url}gates.html").page
    painted(page)
    assert page.evaluate(SHOWN_JS, "Decay gate α") == [True]
