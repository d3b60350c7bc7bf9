"""What Python and the browser's shell (assets/js/) agree on, stated once, here.

``ui.app.prerender`` returns ``contract()`` and build.py writes it into every page's lab-config
(key ``"contract"``) beside the link contract (``ui.urlstate.link_contract``, key ``"link"``);
the shell reads both (assets/js/config.js: ``roles()``, ``frameBindings()``, ``linkContract()``)
and keeps no list of its own. Three parts:

- **Role classes**: ``css_classes`` (and one model name) a page puts on its Panel layouts and
  Bokeh models so the shell knows what they are: what the presenter view shows, fits and leaves
  out, what folds away, what prints, what is announced, which part ``?view=<name>`` shows.
- **Frame bindings**: where the player (assets/js/player.js) finds a run's frames in the
  document and how it puts frame t into each model (``ui.page.Page`` writes them).
- **Worker messages**: what the page and its Python worker (``ui.worker``) say to each other.

ui/ writes the role classes as ``role(name)`` and the marks (classes that name a part, which
nothing looks for) as ``mark(name)``; any other ``lab-*`` class on a page is a named view's, a box
the link hides (``Page.applies_by_link``) or one lab.css styles (tests/ui/test_roles.py walks the
built pages). tests/js/test_contract.py checks that the shell spells out none of these names, asks
for no role or binding that is not here, and that every role is used by a page.
"""

from __future__ import annotations

from ui.theme import HEATMAP

# role -> (class, what the shell does with a model that has it)
ROLES: dict[str, tuple[str, str]] = {
    "main_view": ("lab-main-view", "what the presenter view shows, fitted to the screen; the first "
                  "render stops after the first one (the rest joins after the first paint)"),
    "secondary": ("lab-secondary", "never in the presenter view"),
    "controls": ("lab-controls", "the settings: folded behind the Settings button in the presenter "
                 "view, on a phone, in a named view, and left out of print"),
    "present_drop": ("lab-present-drop", "left out first when the presenter view does not fit the "
                     "screen at a readable scale (a quiet line says so)"),
    "no_print": ("lab-no-print", "left out of print"),
    "caption": ("lab-caption", "the Div whose text is read out with t once stepping stops"),
    "settings_link": ("lab-settings-link", "an <a> whose href holds the page's own settings: "
                      "applied in place once Python is live, else opened as a link"),
    "exercise": ("lab-exercise", "the 'Your turn' box (ui.exercises): hidden before Python on a "
                 "link whose own settings change no run (its exercise number: the numbers are Python's)"),
    "ahead": ("lab-ahead", "a setting each of whose choices the build made ahead of time "
              "(ui.ahead): it responds before Python, by a patch of the document on screen"),
}
# mark -> (class, the part it names). Marks are no roles: neither the shell nor lab.css looks for
# them; they name a part of the page for whoever reads its HTML (and tests/ui/test_roles.py).
MARKS: dict[str, tuple[str, str]] = {
    "page": ("lab-page", "the page's outer column (ui.page.Page.layout)"),
    "readout": ("lab-readout", "a readout beside the figures: a table or sentences per t"),
    "group_label": ("lab-group-label", "a settings group's label (ui.theme.group_label, which "
                    "spells it out: this module imports ui.theme)"),
}
VIEW_PREFIX = "lab-view-"  # + a view's name: the part ?view=<name> shows alone (urlstate.view_names)
VEIL_NAME = "lab-veil"  # a BoxAnnotation's name: over what is still to come, painted the background
# a Text renderer's name: labels along x (a strip's cells), each fitted by the shell into the room
# between it and its neighbours (assets/js/fit-text.js), none where they do not fit
CELL_TEXT_NAME = "lab-cell-text"

# The frames: a ColumnDataSource of this name, one column per thing that changes with t (t_max + 1
# values each) and the column T of 0..t_max; its tags[0] is {BINDINGS: [[model, attribute, column],
# ...], STOPS: [[name, t], ...]}. An attribute DATA_PREFIX + field is a column of a data source;
# ALT a figure's text alternative (on its element, not the model); INDICES a filter's indices
# (emptied before a new run arrives); TEXT a Div's text (written into its element). A step eases
# (assets/js/ease.js); tags[0][PHASES] names the phases a step is taken apart into, in order, and
# a column + PHASE_SEP + phase holds, at t, what that column shows at the end of that phase of
# the step from t − 1 to t (the gates page's overwrite: ui/views/overwrite.py).
FRAMES = {"source": "lab-frames", "t": "t", "bindings": "bindings", "stops": "stops",
          "data_prefix": "data.", "alt": "@alt", "indices": "indices", "text": "text",
          "phases": "phases", "phase_sep": "@"}


# The messages between the page (assets/js/python.js) and its worker (assets/py-worker.js and
# ui/worker.py): name -> (direction, what it carries). The shell passes the names to the worker
# in "start", the one name both scripts know beforehand.
WORKER_MESSAGES: dict[str, tuple[str, str]] = {
    "start": ("to worker", "what to load: the runtime's address, the packages, the entry script"),
    "page": ("to worker", "the page on screen: the link's query, its document's ids (when the live "
             "page may adopt it), the settings it was built with, its t, the description's version "
             "(sent again when a choice answered ahead of time changed the page: assets/js/ahead.js)"),
    "patch": ("both ways", "a Bokeh JSON patch; from the worker with the player's flags: prepare "
              "(let go of the old run), refresh (show the new frames), seek (a t to show)"),
    "call": ("to worker", "csv, query, apply (a page's own link to its settings) or run (Python code, "
             "for diagnostics and the browser tests), with an id"),
    "reply": ("to page", "the value (or error) of a call, by its id"),
    "idle": ("to page", "the last patch is handled: the page may send the next"),
    "progress": ("to page", "how far the start is: stage, bytes of runtime and packages, packages done"),
    "failed": ("to page", "the start failed: kind (scripts, download, install, start), file, detail"),
    "render": ("to page", "the live page: adopted (the document on screen is it) or its document "
               "JSON to render; its settings' query and its notices; adopted, the patch that "
               "enables the controls on screen (ready); the version of the description it was "
               "made from (an older one's is dropped: the worker makes the page again)"),
    "notice": ("to page", "Python's notice for the user (plain text)"),
    "settings": ("to page", "the settings' query, for the link"),
    "log": ("to page", "a line for the console: level, text"),
}



def role(name: str) -> str:
    """The class of a role: ``role("controls")`` is "lab-controls"."""
    if name not in ROLES:
        raise KeyError(f"no role {name!r}: the roles are {', '.join(ROLES)}")
    return ROLES[name][0]


def mark(name: str) -> str:
    """The class of a mark: ``mark("page")`` is "lab-page"."""
    if name not in MARKS:
        raise KeyError(f"no mark {name!r}: the marks are {', '.join(MARKS)}")
    return MARKS[name][0]


def contract() -> dict:
    """What lab-config's ``contract`` holds (JSON): role -> class, the view prefix, the veil's
    and the cell labels' names, the frame bindings, the worker messages' names and each theme's heatmap colours
    (ui.theme.HEATMAP)."""
    return {"roles": {name: cls for name, (cls, _) in ROLES.items()}, "view_prefix": VIEW_PREFIX,
            "veil": VEIL_NAME, "cell_text": CELL_TEXT_NAME, "frames": dict(FRAMES),
            "worker": {name: name for name in WORKER_MESSAGES},
            "heatmap": {theme: dict(c, palette=list(c["palette"])) for theme, c in HEATMAP.items()}}
