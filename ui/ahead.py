"""The runs of the links a page offers itself (``Page.offered``: its settings link, its presets),
as the build makes them: each as a Bokeh JSON patch of the page built ahead of time, and the
patch back to its defaults.

A patch is what Python would send if that setting changed in the live page: the same models
(no new ids) with the run's values. So the shell applies one to the document on screen, with no
Python, in one task (assets/js/ahead.js: a preset chosen before Python responds within a frame
or two), and a link of such a run is the default document with its patch applied before the first
render (assets/js/first-paint.js). The build checks both ways against documents made directly:
the default page patched is, model for model and value for value, the page built with the link,
and patched back it is the default page again (``ahead_runs`` raises otherwise, naming the run).

The page's settings whose every choice is the default or one offered link (running-sum's preset)
are answered here: their widgets respond before Python (``Page.ahead_settings``), and the page's
config says which run each choice is (``choices``).
"""

from __future__ import annotations

import json
import re

from ui import panel_private
from ui.document import build_ahead
from ui.urlstate import apply_query, link_contract, to_query

# The names param gives the objects Panel makes (FlexBox01066): the page made with a link counts
# its layout's objects after those its settings made, the default page patched before. Nothing
# finds a model by such a name (the shell's are named: ui/contract.py).
AUTO_NAME = re.compile(r"^[A-Za-z_]\w*\d{5}$")


def _state(pydoc) -> dict[str, tuple[str, str]]:
    """Every model's type and all its values (defaults included), as JSON: what the browser's
    document holds, whether a value was set or is the default."""
    from bokeh.core.serialization import Serializer  # noqa: PLC0415

    models = set(pydoc.models)
    out = {}
    for model in pydoc.models:
        values = model.properties_with_values()
        if AUTO_NAME.match(str(values.get("name"))):  # (counted as objects are made: not the browser's concern)
            del values["name"]
        values = Serializer(references=models, deferred=False).encode(values)
        out[model.id] = (type(model).__name__, json.dumps(values, sort_keys=True))
    return out


def _differs(got: dict, expected: dict) -> str:
    ids = sorted(set(got) ^ set(expected)) or sorted(k for k in got if got[k] != expected[k])
    return ", ".join(f"{k} ({(got.get(k) or expected.get(k))[0]})" for k in ids[:5])


def latest(events: list) -> list:
    """The events without those a later one makes moot: a value set again later, columns of a
    source set again later or replaced whole (a page sets its sources once as it computes and
    again as it shows t = 0: running-sum's worked example sent each of 32 sources up to three
    times). What is left keeps its order."""
    from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent  # noqa: PLC0415

    kept, whole, cols = [], set(), {}
    for event in reversed(events):
        if isinstance(event, ColumnDataChangedEvent):
            key, changed = (event.model.id, event.attr), set(event.cols or [])
            if key in whole or (event.cols is not None and changed <= cols.get(key, set())):
                continue
            if event.cols is None:
                whole.add(key)
            cols.setdefault(key, set()).update(changed)
        elif isinstance(event, ModelChangedEvent):
            key = (event.model.id, event.attr)
            if key in whole:
                continue
            whole.add(key)
        kept.append(event)
    return kept[::-1]


class _Recorder:
    """The changes of a page's document (held as ``make_document`` leaves it), as JSON patches
    of the document the browser has."""

    def __init__(self, page, pydoc) -> None:
        self.page, self.pydoc, self.events = page, pydoc, []
        pydoc.unhold()
        panel_private.known_to_browser(pydoc)
        pydoc.on_change(self.events.append)

    def change(self, query: str) -> str:
        """The patch that takes the document to the page with ``query`` applied, at t = 0."""
        from bokeh.core.serialization import Serializer  # noqa: PLC0415
        from bokeh.document.json import PatchJson  # noqa: PLC0415

        self.events.clear()
        notices = apply_query(self.page, query)
        if notices:
            raise ValueError(f"{self.page.slug}: the link {query!r} is not one the page takes: {' '.join(notices)}")
        self.page.show(0)
        serializer = Serializer(references=self.pydoc.models.synced_references, deferred=False)
        patch = json.dumps(PatchJson(events=serializer.encode(latest(self.events))), separators=(",", ":"))
        panel_private.known_to_browser(self.pydoc)
        return patch


def ahead_runs(page_class, page, pydoc) -> list[dict]:
    """Each link the page offers (``Page.offered``), as its config and runs/ file say it: {"link",
    "query": the run's full settings, "csv", "t_max", "patch": from the default page to its run,
    "back": from its run to the default page (JSON text), "values": its settings answered ahead
    of time}. ``page`` and ``pydoc`` are the default page built ahead of time, already embedded
    (its document is changed here and left as it was). Each patch is checked as the browser
    takes it: applied to another default page's document, it gives the page built with the
    link, and back, the default page; else ValueError, naming the run and what differs."""
    defaults = link_contract(page)["defaults"]
    default_state = _state(pydoc)
    recorder = _Recorder(page, pydoc)
    _, screen = build_ahead(page_class)  # the browser's document, as first shown
    out = []
    for query in page_class.offered:
        direct_page, direct = build_ahead(page_class, query)
        patch, back = recorder.change(query), recorder.change(defaults)
        screen.apply_json_patch(json.loads(patch))
        if (diff := _differs(_state(screen), _state(direct))):
            raise ValueError(f"{page_class.slug}: the default page patched to {query!r} is not the page "
                             f"built with it: {diff} differ (a change that makes new models cannot be "
                             "a patch of the page on screen)")
        screen.apply_json_patch(json.loads(back))
        if (diff := _differs(_state(screen), default_state)):
            raise ValueError(f"{page_class.slug}: {query!r} patched back to the defaults is not the "
                             f"default page: {diff} differ")
        out.append({"link": query, "query": to_query(direct_page), "csv": direct_page.csv(),
                    "t_max": direct_page.run.t_max, "patch": patch, "back": back,
                    "values": {n: getattr(direct_page, n) for n in page_class.ahead_settings()}})
    return out


def choices(page, runs: list[dict]) -> list[dict]:
    """What the page's config says of its settings answered ahead of time
    (``Page.ahead_settings``): for each, its key in a link and its widget's choices in words (as
    the widget labels them) -> the index in ``runs`` (``ahead_runs``) of the run it is, or -1 for the default run.
    Raises ValueError naming a choice the build did not make ahead."""
    out = []
    for name in page.ahead_settings():
        widget, default = page.widget_of(name), getattr(page, name)
        labels = {}
        for label, value in zip(widget.labels, widget.values):
            found = [i for i, run in enumerate(runs) if run["values"][name] == value]
            if value == default:
                labels[str(label)] = -1
            elif found:
                labels[str(label)] = found[0]
            else:
                raise ValueError(f"{page.slug}: {name} = {label!r} is a choice no offered link makes "
                                 "(Page.offered): every choice of a setting answered ahead of time needs its run")
        out.append({"setting": name, "key": page.link_keys.get(name, name), "labels": labels})
    return out
