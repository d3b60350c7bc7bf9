"""Hybrid's state dtype is hidden from a link whose models hold no fixed state (issue 20, "No
dead ends"), and the link's value is kept. "State dtype (the ideal)" stayed on screen with
Llama-3-8B against Llama-3-8B, where it sizes nothing. Guarded on the live page opened from
such a link: the state dtype's box is not on screen, the KV cache dtype's is, no notice says a
setting was ignored, and the address still carries state_dtype=bf16; the default models (Jamba
holds a state) show both (chosen live). (tests/ui/test_hybrid_dtypes_shown.py checks it without a browser.)
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import open_page, painted

pytestmark = pytest.mark.e2e

SHOWN_JS = """(words) => [...lab.player.doc.all_models]
  .filter((m) => typeof m.text === 'string' && m.text.trim() === words)
  .map((m) => { const v = lab.viewOf(m); const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
                return !!(r && r.width > 0 && r.height > 0); })"""
LINK = "hybrid.html?model_a=llama-3-8b&model_b=llama-3-8b&state_dtype=bf16"


def test_a_link_without_a_fixed_state_hides_the_state_dtype(context, server):
    visit = open_page(context, f"{server.url}{LINK}")
    page = visit.page
    painted(page)
    assert page.evaluate(SHOWN_JS, "State dtype (the ideal)") == [False]
    assert page.evaluate(SHOWN_JS, "KV cache dtype") == [True]
    assert "state_dtype=bf16" in page.evaluate("location.search")
    assert "Ignored" not in page.locator("body").inner_text()
    # a model holding a state (Jamba, the default model A) chosen live: the state dtype comes back
    # (on the same live page: a second Python start had cost the test half its time)
    page.evaluate("window.lab.py.apply('model_a=jamba-v0.1')")
    page.wait_for_function("location.search.includes('model_a=jamba-v0.1')", timeout=30_000)
    painted(page)
    assert page.evaluate(SHOWN_JS, "State dtype (the ideal)") == [True]
    assert page.evaluate(SHOWN_JS, "KV cache dtype") == [True]
    assert visit.problems() == []
