"""Panel + Bokeh user interface of Linear Attention Lab (docs/architecture.md describes the flow).

- ``ui.page``          ``Page`` (settings, ``compute() -> Run``, views) and ``Run``: one lifecycle
                       for every page.
- ``ui.views``         read-only views of a Run, each bound to columns of it (one module per page
                       for its own views).
- ``ui.pages``         ``PAGES`` and one module per lesson page.
- ``ui.contract``      what Python and the browser's shell (assets/js/) agree on: role classes,
                       frame bindings, worker messages.
- ``ui.urlstate``      a page's settings <-> its query string, and the link contract.
- ``ui.link_values``   a dict as a link carries it, with the standard library only (ui.urlstate
                       and ui.zoo share it).
- ``ui.zoo``           the zoo's rows (zoo.html): at build time, and in the zoo's own worker for
                       a config.json the reader adds (sim and the standard library only).
- ``ui.app``           the page built ahead of time (``prerender``) and ``launch``, which runs a
                       page in Pyodide's worker or under ``panel serve``.
- ``ui.worker``        the page's Python in the browser's worker, linked to the page by messages.
- ``ui.document``      how a page's document is made alike in the build and the worker (ids from
                       one base, its JSON): what ``ui.app`` and ``ui.worker`` share.
- ``ui.panel_private`` every private part of Panel and Bokeh the Lab uses.
- ``ui.theme``         palettes and the widgets' stylesheet; ``ui.fmt`` numbers as text;
                       ``ui.csvfile`` the CSV; ``ui.exercises`` the "Your turn" box.

All numbers come from ``sim``; nothing here does mathematics beyond picking what to show.
"""
