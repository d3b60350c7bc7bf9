"""Hybrid's dtype rule for the page built ahead of time (Page.applies_by_link, the link
contract's "applies") says what the live page shows: for every model A and B a link may pick
from the presets (B also none), the rule's verdict is ``shown`` of the page built with them. The
shell hides a box by it before Python (tests/e2e/test_hybrid_dtype_first_paint.py); a rule
that disagreed would hide a box the live page then shows (or the reverse): a flicker again."""

from __future__ import annotations

import pytest

from sim import cache
from ui.pages.hybrid import HybridPage
from ui.pages.hybrid_engine import DTYPES, shown
from ui.urlstate import link_contract


def verdict(rule: dict, query: dict) -> bool:  # what link.js's hideUnapplied reads
    return any(query[k] in rule["values"] for k in rule["keys"])


@pytest.mark.parametrize("model_b", ["none", *cache.PRESETS])
def test_the_links_rule_matches_what_the_live_page_shows(model_b):
    page = HybridPage(model_b=model_b)
    rules = link_contract(page)["applies"]
    assert set(rules) == set(DTYPES)
    for model_a in cache.PRESETS:
        page.model_a = model_a
        for name in DTYPES:
            assert verdict(rules[name], {"model_a": model_a, "model_b": model_b}) == shown(page, name), (model_a, model_b, name)
