"""Fixtures of the page tests (plain helpers are in helpers.py).

The pages are made as the worker makes them: with Bokeh's defaults remembered per class
(ui.panel_private.remember_defaults, which ui/worker.py applies before it makes a page), in
about two thirds of the time. That it changes no document, model for model and value for
value, is test_panel_private.py's, in a process of its own without it."""

from __future__ import annotations

import pytest

from ui import panel_private

panel_private.remember_defaults()


@pytest.fixture
def build():
    """``build(PageClass, **settings)``: a new page with its layout built (the widgets too), as
    in the browser."""
    def make(page_class, **settings):
        page = page_class(**settings)
        assert page.layout is not None
        return page
    return make
