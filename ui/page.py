"""One page lifecycle: settings in, a whole run out, views bound to its columns.

A page is
- settings: its own ``param`` parameters, labelled in words ("Write strength β"); they travel
  in the link (under ``link_keys`` short names where a page gives them);
- ``compute()``: pure, settings -> ``Run``: every plotted quantity as arrays over t, the
  readout texts per t, and the table behind the CSV;
- ``make_views()``: the views (``ui.views``) bound to columns of the Run, and ``body()``, how
  they and the controls are arranged.

This base owns the rest: recomputing on a change, keeping the last good run and naming a value
that cannot run, the notice, the CSV, the frames the browser's player (assets/js/player.js) steps
through, and the "Your turn" box of a page with an ``exercise`` setting (ui/exercises.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qsl

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Div

from ui.contract import VIEW_PREFIX, mark, role
from ui.csvfile import to_csv
from ui.exercises import ExerciseBox
from ui.fmt import plain as text
from ui.pages import info_of
from ui.theme import style_widget

# What a page's settings may fail with when they cannot run (sim raises ValueError, which
# DivergenceError is, for every bad input; the rest are the arithmetic of a huge setting).
SETTINGS_ERRORS = (ValueError, ArithmeticError, MemoryError, RecursionError)


def _same(now: Any, value: Any) -> bool:
    """A setting's value and a link's (decoded): the same value (0.5 and 0.50, a model's JSON
    in any key order), not only the same text."""
    number = (int, float, np.integer, np.floating)
    if isinstance(now, (bool, np.bool_)) or isinstance(value, (bool, np.bool_)):
        return type(now) is type(value) and now == value
    if isinstance(now, number) and isinstance(value, number):
        return bool(now == value)
    try:
        return type(now) is type(value) and bool(now == value)
    except (ValueError, TypeError):  # arrays, or values that do not compare
        return False


@dataclass
class Run:
    """Everything a page shows for one setting, for every t = 0 … t_max.

    ``data``: named arrays and lists; a view reads the keys it was given. What changes with t
    has t_max + 1 entries along its first axis. ``table``: the CSV's columns (one row each).
    ``info``: a remark about these settings shown above the plots ("" for none).
    """

    t_max: int
    data: dict[str, Any]
    table: dict[str, list] = field(default_factory=dict)
    info: str = ""


class Page(param.Parameterized):
    """Base of the lesson pages. Subclasses add settings, ``compute``, ``make_views``, ``body``."""

    # A lesson page's own come from its entry in ui.pages.PAGES (``__init_subclass__``).
    title: ClassVar[str] = "Linear Attention Lab"
    slug: ClassVar[str] = "page"
    link_keys: ClassVar[dict[str, str]] = {}  # setting -> its key in the link, where shorter
    stops: ClassVar[tuple[tuple[str, str], ...]] = ()  # (name, key of run.data) for named stops
    phases: ClassVar[tuple[str, ...]] = ()  # the phases a step is taken apart into (ui/contract.py)
    # A setting that only shows with others set so ({"rho": {"keys": "correlated"}}), and values
    # to try for settings no generic rule can invent (a model): for the generated tests.
    only_with: ClassVar[dict[str, dict[str, Any]]] = {}
    examples: ClassVar[dict[str, list]] = {}
    no_recompute: ClassVar[tuple[str, ...]] = ("exercise",)  # settings that change no run
    # The page's named views, in page order: name -> what it shows, in words (?view=<name>,
    # Share's picker); the parts are marked with ``view_class(name)``. ``scenes``: those the
    # presenter view offers on keys 1-9, in key order (None: every named view). Written into
    # the page's lab-config (ui.urlstate.link_contract): the shell keeps no list of its own.
    named_views: ClassVar[dict[str, str]] = {}
    scenes: ClassVar[tuple[str, ...] | None] = None
    # The named view the page is about (running-sum's state S): the first main view in page
    # order, so the first render builds it, and on the first screen of a 1366 x 768 laptop and
    # a 390 x 844 phone (tests/ui/test_first_screen.py, tests/e2e/test_site.py, test_screens.py).
    subject: ClassVar[str] = ""
    # Settings the site itself links to (a page's settings link, its presets), and each choice
    # of a setting that is to respond before Python (hybrid's models), as queries: their runs
    # are built ahead of time too, as patches of the default page (ui.ahead), so such a link
    # shows its own run at first paint, stepping with no Python (assets/js/link.js
    # loadPrebuilt); a setting each of whose choices is one of them responds before Python too
    # (ahead_settings; assets/js/ahead.js); two such settings changed together are Python's.
    offered: ClassVar[tuple[str, ...]] = ()

    notice = param.String("", precedence=-1, doc="A message for the user (plain text)")

    def __init_subclass__(cls, **kwargs):
        """A page defined in a module of ui.pages.PAGES takes its slug and title from its entry,
        where the page is declared once."""
        super().__init_subclass__(**kwargs)
        info = info_of(cls.__module__)
        if info is not None:
            cls.slug, cls.title = info.slug, info.title

    def __init__(self, **params):
        super().__init__(**params)
        self.batch = contextlib.nullcontext  # in the browser: one patch per action
        self.after_apply = None  # in the browser: tells the player the frames changed
        self.before_apply = None  # in the browser: the player lets go of the old run
        self.t = 0
        self.alt: dict[str, str] = {}  # figure id -> its text alternative at t
        self.controls_ready = True  # False in the page built ahead of time (no Python yet)
        self.widgets: list = []
        self._widget_of: dict[str, Any] = {}  # setting -> its widget
        self.info = Div(text="", visible=False, css_classes=["lab-info"],
                        sizing_mode="stretch_width")
        self.views = self.make_views()
        self.exercise_box = ExerciseBox.for_page(self)  # "Your turn", where the page has one
        self.frames = ColumnDataSource(name="lab-frames")
        bindings = []
        for i, view in enumerate(self.views):
            bindings += [[model, attr, f"{i}:{key}"] for model, attr, key in view.bindings]
        self._bindings = bindings
        # The frames travel with the document through a reference from the info box (a model
        # is part of a document when a model in it refers to it); the player finds them by name.
        self.info.tags = [self.frames]
        self._good = self.settings_now()
        self._reverting = self._quiet = False
        self._own_notice = self._error = ""
        self.run = self.compute()  # the defaults must run
        self._apply(self.run)
        self.param.watch(self._changed, [n for n in self.settings() if n not in self.no_recompute])
        self._layout = None
        self._own_disabled: set[int] = set()

    # What a page provides ------------------------------------------------------------------
    def compute(self) -> Run:
        raise NotImplementedError

    def make_views(self) -> list:
        raise NotImplementedError

    def body(self) -> pn.viewable.Viewable:
        raise NotImplementedError

    @classmethod
    def view_class(cls, name: str) -> str:
        """The class that marks the part ``?view=<name>`` shows: a view the page names."""
        if name not in cls.named_views:
            raise KeyError(f"{cls.__name__} names no view {name!r} (named_views: "
                           f"{', '.join(cls.named_views) or 'none'})")
        return VIEW_PREFIX + name

    @classmethod
    def scene_names(cls) -> list[str]:
        """The presenter view's scenes (keys 1-9), in key order."""
        return list(cls.named_views if cls.scenes is None else cls.scenes)

    # Settings -------------------------------------------------------------------------------
    @classmethod
    def settings(cls) -> list[str]:
        """The page's settings: its parameters that a user sets (in declaration order)."""
        return [n for n, p in cls.param.objects("existing").items()
                if n != "name" and (p.precedence is None or p.precedence >= 0)]

    def applies_by_link(self) -> dict[str, dict]:
        """Settings whose box the page built ahead of time hides, before Python, when the link's
        settings say it does not apply (ui.urlstate.link_contract's "applies"): setting ->
        {"class": the box's css class, "keys": link keys, "values": it applies if any of those
        keys (the link's value, else the default) has one of these values}."""
        return {}

    def settings_now(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.settings()}

    def label(self, name: str) -> str:
        return self.param[name].label or name

    def widget(self, name: str, kind=None, **kwargs):
        """A Panel widget for setting ``name`` (its label in words), registered so the page
        built ahead of time can show it waiting for Python."""
        w = (kind.from_param(self.param[name], **kwargs) if kind is not None
             else pn.panel(self.param[name], **kwargs))
        self.widgets.append(style_widget(w))
        self._widget_of[name] = w
        return w

    def widget_of(self, name: str):
        """The widget registered for setting ``name`` (``widget``)."""
        return self._widget_of[name]

    @classmethod
    def ahead_settings(cls) -> list[str]:
        """The settings an offered link sets alone (running-sum's preset): their widgets respond
        before Python, each choice a run built ahead of time (the build checks that every choice
        is the default or such a run: ui.ahead.choices)."""
        keys = {key: name for name, key in ((n, cls.link_keys.get(n, n)) for n in cls.settings())}
        sole = [list(dict.fromkeys(k for k, _ in parse_qsl(q))) for q in cls.offered]
        return list(dict.fromkeys(keys[k[0]] for k in sole if len(k) == 1 and k[0] in keys))

    def _changed(self, *events) -> None:
        if self._reverting or self._quiet:
            return
        with self.batch():
            try:
                run = self.compute()
            except SETTINGS_ERRORS as err:
                what = ", ".join(f"{self.label(e.name)} = {text(e.new, 40)}" for e in events)
                self._error = text(err, 200)  # what a link's notice quotes (apply_link_settings)
                self._own_notice = (f"Kept the previous settings: {what} cannot run here "
                                    f"({self._error}).")
                self.notice = self._own_notice
                self._revert()
                return
            self._good = self.settings_now()
            if self._own_notice and self.notice == self._own_notice:
                self.notice = ""
            self._own_notice = ""
            self._apply(run)
        if self.after_apply is not None:
            self.after_apply()

    def apply_link_settings(self, updates: dict[str, Any]) -> list[str]:
        """Apply a link's settings with one recompute; if together they cannot run, apply them
        one by one and name each that cannot. Returns the notices.
        A link whose every value equals the setting's own is no change, however it spelled
        them (the link a page writes of its defaults is the page it opened: adopted, not built
        anew). One that changes anything applies whole: a preset sets other settings, which the
        link's own values then set back."""
        if not updates or all(_same(getattr(self, name), value) for name, value in updates.items()):
            return []
        self._quiet = True  # no recompute per setting (a page's own watchers still run)
        try:
            for name, value in self._in_order(updates):
                setattr(self, name, value)
            run = self.compute()
        except SETTINGS_ERRORS:
            run = None
        finally:
            self._quiet = False
        if run is not None:
            self._good = self.settings_now()
            self._apply(run)
            return []
        self._revert()
        notices = []
        for name, value in self._in_order(updates):
            self._error = ""
            try:
                setattr(self, name, value)
            except SETTINGS_ERRORS as err:
                self._error = text(err, 200)
            if self._error:
                notices.append(f"Ignored {self.label(name)} = {text(value, 40)} from the link: "
                               f"{self._error}")
        self.notice = self._own_notice = ""
        return notices

    def _in_order(self, updates: dict[str, Any]) -> list[tuple[str, Any]]:
        """In the order the page declares its settings, not the link's: a setting that bounds
        another (d bounds n) comes first, so the result does not depend on the link's order."""
        return sorted(updates.items(), key=lambda u: self.settings().index(u[0]))

    def _revert(self) -> None:
        self._reverting = True
        try:
            self.param.update(**{n: v for n, v in self._good.items()  # not the exercise number:
                                 if getattr(self, n) != v and n not in self.no_recompute})
        finally:
            self._reverting = False

    # Frames ---------------------------------------------------------------------------------
    def _apply(self, run: Run) -> None:
        if self.before_apply is not None:  # the browser's player lets go of the old run first
            self.before_apply()
        for view in self.views:
            view.setup(run)
        frames: dict[str, list] = {}
        for i, view in enumerate(self.views):
            for key, column in view.frames(run).items():
                if len(column) != run.t_max + 1:
                    raise AssertionError(f"{type(view).__name__}.{key}: {len(column)} frames "
                                         f"for t_max {run.t_max}")
                frames[f"{i}:{key}"] = column
        frames["t"] = np.arange(run.t_max + 1)
        self.info.update(text=run.info, visible=bool(run.info))
        self.run = run
        tags = [{"bindings": self._bindings, "stops": self.named_stops(),
                 "phases": list(self.phases)}]
        if self.frames.tags != tags:  # tags hold models: setting them makes Bokeh walk the
            self.frames.tags = tags  # whole document again (0.2 s on the gates page)
        self.frames.data = frames
        if self.after_apply is None:  # no browser player: Python shows the frame itself
            self.show(min(self.t, run.t_max))

    def show(self, t: int) -> None:
        """Put frame t into every view, as the browser's player does (assets/js/player.js)."""
        t = max(0, min(int(t), self.run.t_max))
        self.t = t
        data = self.frames.data
        updates: dict[int, tuple[Any, dict]] = {}
        for model, attr, key in self._bindings:
            updates.setdefault(id(model), (model, {}))[1][attr] = data[key][t]
        for model, attrs in updates.values():
            fields = {a[5:]: v for a, v in attrs.items() if a.startswith("data.")}
            if fields:
                model.data = {**model.data, **fields}
            for a, v in attrs.items():  # "@alt": the figure's text alternative (the player sets
                if a.startswith("@"):   # it on the figure's element); kept here for the tests
                    self.alt[model.id] = v
            props = {a: v for a, v in attrs.items() if a[0] != "@" and not a.startswith("data.")}
            if props:
                model.update(**props)

    # Shared -----------------------------------------------------------------------------------
    def csv(self) -> str:
        return to_csv(self.run.table)

    def named_stops(self) -> list[tuple[str, int]]:
        """(name, t) of the page's named stops in the current run, in order of t."""
        stops = [(name, int(self.run.data[key])) for name, key in self.stops
                 if key in self.run.data and 0 <= int(self.run.data[key]) <= self.run.t_max]
        return sorted(stops, key=lambda s: s[1])

    def ready_controls(self) -> None:
        """Python has started: the settings respond (those the page disabled itself stay so)."""
        self.controls_ready = True
        for w in self.widgets:
            if id(w) not in self._own_disabled:
                w.disabled = False
        if self.exercise_box is not None and self._layout is not None:
            self.exercise_box.ready()  # its answer field and buttons too

    @property
    def layout(self) -> pn.viewable.Viewable:
        if self._layout is None:
            body = self.body()
            self._own_disabled = {id(w) for w in self.widgets if w.disabled}
            parts = [pn.pane.Bokeh(self.info), body]
            if self.exercise_box is not None:  # "Your turn" ends the page
                parts.append(self.exercise_box.panel(self.controls_ready))
            ahead = {id(self._widget_of[n]) for n in self.ahead_settings() if n in self._widget_of}
            for w in self.widgets:
                if id(w) in ahead:  # answered ahead of time: responds before Python (ui.ahead)
                    w.css_classes = [*w.css_classes, role("ahead")]
                    continue
                w.disabled = w.disabled or not self.controls_ready  # the page's own stays
            self._layout = pn.Column(*parts, sizing_mode="stretch_width", css_classes=[mark("page")])
        return self._layout
