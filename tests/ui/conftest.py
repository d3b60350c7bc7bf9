"""Fixtures of the page tests (plain helpers are in helpers.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def build():
    """``build(PageClass, ...)``: a new page with its layout built (the widgets too), as in the
    browser."""
    def make(page_class, *args, **kwargs):
        page = page_class(*args, **kwargs)
        assert page.layout is not None
        return page
    return make
