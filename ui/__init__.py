"""Panel + Bokeh user interface of Linear Attention Lab.

Layout (see ../shared/docs/style.md):
- ``ui.state``    PageState: the one place a page keeps its knobs and the token position t.
- ``ui.urlstate`` the query string <-> PageState (links that reproduce a view).
- ``ui.views``    read-only plots that own their ColumnDataSource and patch it in place.
- ``ui.controls`` the transport bar (Step, Back, Play/Pause, Reset, speed, seed, timeline).
- ``ui.theme``    colours, light/dark and presenter styling for Bokeh figures.
- ``ui.app``      Page (state + layout + CSV) and ``launch``, which runs a page in Pyodide
                  or under ``panel serve``.
- ``ui.pages``    one module per lesson page.

All numbers come from ``sim``; nothing here does mathematics beyond picking what to show.
"""
