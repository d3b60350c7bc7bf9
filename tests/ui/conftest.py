"""Fixtures of the page tests (plain helpers are in helpers.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def build():
    """``build(PageClass, **settings)``: a new page with its layout built (the widgets too), as
    in the browser."""
    def make(page_class, **settings):
        page = page_class(**settings)
        assert page.layout is not None
        return page
    return make
