"""Every private part of Panel and Bokeh that the Lab uses, in this one place.

Checked against panel 1.9.4 and bokeh 3.9.2 (the versions the site ships; build.py refuses
others). Each part says what it is for; if one is gone in a newer version, this module is
the one to change, and the browser tests are the check.

- ``panel.io.pyodide._model_json``'s two halves, done apart: a layout's Python document
  (``make_document``) and its JSON for BokehJS (``document_json``). A page the browser already
  shows (built ahead of time, adopted) needs no JSON: its models are marked as known to the
  browser instead (``known_to_browser``: Bokeh's ``DocumentModelManager.flush_synced``, which
  serialising does), saving a third of the live page's start (measured in Pyodide: 2.6 of 9.9 s).
- ``panel.io.pyodide._process_document_events``: a list of document events as a JSON patch
  and its binary buffers (Panel's ``pysync``).
- ``panel.io.pyodide._convert_json_patch``: a patch arriving from JavaScript as one Python's
  document applies, buffers included.
- ``panel.io.pyodide._dict_converter``: JavaScript objects, not Maps, from Python dicts, with
  ``undefined`` made ``null`` (Pyodide issue 3968).
- ``panel.io.pyodide._link_docs_worker``: Panel's link of a document to a worker's messages;
  its per-event ``pysync`` is swapped for the Lab's batched one (``link_document``).
- ``bokeh.util.serialization._simple_id``: the counter behind Bokeh's model ids p1000, p1001,
  … (``ui.document.fresh_ids``): the page built ahead of time and the live page count alike; and
  ``param.parameterized.object_count``, behind the names Panel gives its objects
  (``Column01042``), which reach the document too: counted from the same base, a page's
  document is the same text whatever the process made before it.
- ``panel.util.HTML_SANITIZER._sanitize``: replaced in the browser (nh3 has no Pyodide build).
- ``panel.io.pyodide``'s ``pyodide_http.patch_all()`` as it is imported (``requests`` over the
  browser's XMLHttpRequest): a no-op stands in (``prepare_pyodide``), as no page fetches over
  HTTP from Python; otherwise requests, urllib3, charset_normalizer and idna are imported into
  every page's heap.
- Panel's parts no page uses (``LEFT_OUT``): ``import panel`` imports every pane, widget and
  template and the chat, and every page downloads the heap that holds them. In the worker a
  stand-in module takes each one's place before Panel is imported (``prepare_pyodide``).
- ``HasProps._overridden_defaults``, ``PropertyDescriptor.has_unstable_default`` and
  ``PropertyDescriptor.instance_default``: remembered per model class in the worker
  (``remember_defaults``). Bokeh works each one out anew on every read of a property not set,
  and adding a layout to its document reads every property of every model.
"""

from __future__ import annotations

import types

CHECKED_WITH = {"panel": "1.9.4", "bokeh": "3.9.2"}

# Panel's modules no page uses, the one module only they use (tqdm, for Panel's Tqdm), and
# PyYAML (Bokeh reads its config file with it, and there is none: reading it fails quietly). In
# the worker a stand-in takes each one's place (``leave_out``): the shared heap every page
# downloads, measured: 10.35 -> 9.57 MB zstd (yaml's part: 0.11). tests/ui/test_panel_private.py
# builds every page with them left out.
LEFT_OUT = (
    "panel.chat", "panel.template", "panel.pipeline", "panel.interact",
    *(f"panel.pane.{m}" for m in ("deckgl", "echarts", "holoviews", "ipywidget", "perspective", "plotly", "streamz",
                                  "textual", "vega", "vizzu", "vtk")),
    *(f"panel.widgets.{m}" for m in ("codeeditor", "debugger", "file_selector", "speech_to_text", "tables", "terminal",
                                     "text_to_speech", "texteditor")),
    "tqdm", "tqdm.asyncio", "yaml",
)


class LeftOut(types.ModuleType):
    """A module left out of the worker's Python: each name Panel imports from it is a class of
    its own that refuses to be made, saying so."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        module = self.__name__

        def refuse(*args, **kwargs):
            raise RuntimeError(f"{module}.{name} is left out of the Lab's Python (ui/panel_private.py LEFT_OUT)")

        stand_in = type(name, (), {"__module__": module, "__init__": refuse})
        setattr(self, name, stand_in)
        return stand_in


def leave_out() -> None:
    """Before Panel is imported: a stand-in for each module of ``LEFT_OUT`` not imported yet."""
    import sys  # noqa: PLC0415

    for name in LEFT_OUT:
        if name not in sys.modules:
            stand_in = LeftOut(name, "left out of the Lab's Python: ui/panel_private.py LEFT_OUT")
            stand_in.__path__ = []  # a package, for its submodules' imports
            sys.modules[name] = stand_in


def prepare_pyodide() -> None:
    """Before Panel is imported: Panel 1.9 targets Pyodide 0.29 and uses ``pyodide.ffi.jsnull``,
    which 0.27 lacks; there a JS null already arrives as None, so a private sentinel stands in.
    And Panel's patch of ``requests`` (``pyodide_http.patch_all``) is a no-op: no page fetches
    over HTTP from Python, and the patch imports requests and urllib3 into every heap. And the
    parts of Panel no page uses are left out (``leave_out``)."""
    import sys  # noqa: PLC0415

    import pyodide.ffi  # noqa: PLC0415

    if not hasattr(pyodide.ffi, "jsnull"):
        pyodide.ffi.jsnull = type("JsNull", (), {})()
    if "pyodide_http" not in sys.modules:
        no_patch = types.ModuleType("pyodide_http", "requests left unpatched: the Lab fetches nothing from Python")
        no_patch.patch_all = lambda: None
        sys.modules["pyodide_http"] = no_patch
    leave_out()


def set_next_id(value: int) -> None:
    """The next Bokeh model made is p<value + 1>, and Panel's objects are named from
    ``value // 1000`` on."""
    import bokeh.util.serialization as serialization  # noqa: PLC0415
    import param.parameterized  # noqa: PLC0415

    serialization._simple_id = value
    param.parameterized.object_count = value // 1000


def replace_sanitizer(sanitize) -> None:
    from panel.util import HTML_SANITIZER  # noqa: PLC0415

    HTML_SANITIZER._sanitize = sanitize


def make_document(layout):
    """The layout's Python document, held (as ``panel.io.pyodide._model_json`` makes it)."""
    from bokeh.document import Document  # noqa: PLC0415

    doc = Document()
    doc.hold()
    layout.server_doc(doc=doc)
    return doc


def document_json(doc, target: str) -> str:
    """The JSON BokehJS's ``embed_item`` renders into element ``target`` (the rest of
    ``panel.io.pyodide._model_json``)."""
    import json  # noqa: PLC0415

    from bokeh.embed.util import standalone_docs_json_and_render_items  # noqa: PLC0415
    from bokeh.settings import settings  # noqa: PLC0415
    from panel import __version__  # noqa: PLC0415

    compression_level = settings.compression_level

    root = doc.roots[0]
    # Arrays go in as gzip of level 0 (stored, BokehJS still reads them as gzip): they are small
    # (gates' 350 are 128 bytes to a few kB, which gzip barely packs), and BokehJS inflating them
    # one by one, its code not yet warm, made decoding gates' page 20 ms longer of its 110 (an
    # A/B of two builds, medians of 16 loads). The page as a host gzips it: 0.5 kB more.
    compression_level.set_value(0)
    try:
        docs_json, _ = standalone_docs_json_and_render_items([root], suppress_callback_warning=True)
    finally:
        compression_level.unset_value()
    return json.dumps({"target_id": target, "root_id": root.ref["id"], "doc": list(docs_json.values())[0],
                       "version": __version__})


def known_to_browser(doc) -> None:
    """Every model of the document is one the browser has (what serialising it marks): a patch
    refers to them by id instead of sending them whole."""
    doc.models.flush_synced()


def ids_of(pydoc) -> set[str]:
    """Every model id of the document, its configuration's included (what the page on screen
    holds, model for model, when it is this document)."""
    return {m.id for m in pydoc.models} | {m.id for m in pydoc.config.references()}


def dict_converter():
    import panel.io.pyodide as pnpy  # noqa: PLC0415

    return pnpy._dict_converter


def patch_of(pydoc, events: list):
    """(patch, buffers) as JavaScript values to post: the events' JSON patch and a Map of its
    buffers (id -> ArrayBuffer)."""
    import js  # noqa: PLC0415
    import panel.io.pyodide as pnpy  # noqa: PLC0415
    import pyodide.ffi  # noqa: PLC0415

    patch, buffer_map = pnpy._process_document_events(pydoc, events)
    patch = pyodide.ffi.to_js(patch, dict_converter=pnpy._dict_converter)
    buffers = js.Map.new(js.Object.entries(pyodide.ffi.to_js(buffer_map, dict_converter=js.Object.fromEntries)))
    return patch, buffers


def convert_patch(patch):
    import panel.io.pyodide as pnpy  # noqa: PLC0415

    return pnpy._convert_json_patch(patch)


def link_document(pydoc, sync) -> None:
    """Link ``pydoc`` as Panel's worker mode does (unhold, document ready, on-load callbacks),
    with ``sync(event)`` in place of Panel's per-event ``pysync``."""
    import panel.io.pyodide as pnpy  # noqa: PLC0415

    # The changes held since the document was made (the link's settings, t) are let go before
    # Panel's link, not into it: its pysync turned each into a JSON patch for a dispatch that
    # drops it (the browser has them: the page it adopts, or the JSON it renders), 60 ms of
    # gates' start in CPython, most of its 100-220 ms "link" in the worker (bench/boot.py).
    # Inside, the document is no longer held: unhold() does nothing.
    pydoc.unhold()
    pnpy._link_docs_worker(pydoc, lambda *_: None, setter="js")
    panel_sync = [cb for cb in pydoc.callbacks._change_callbacks
                  if getattr(cb, "__name__", "") == "pysync"]
    if len(panel_sync) != 1:
        raise RuntimeError(f"panel {CHECKED_WITH['panel']}'s worker link changed: found "
                           f"{len(panel_sync)} pysync callbacks, expected 1 (see ui/panel_private.py)")
    pydoc.callbacks.remove_on_change(panel_sync[0])
    pydoc.on_change(sync)


_IMMUTABLE = (str, int, float, bool, type(None))


def remember_defaults() -> None:
    """Bokeh works out a property's default each time a property not set is read: the class's
    overridden defaults merged over its bases, whether the default is made anew for each
    object, and the default itself (copied, validated). Making a page object and adding its
    layout to a document reads every property of every model, tens of thousands of times; the
    answers depend only on the model's class. Remembered per class, for defaults that are
    immutable values (str, numbers, None, tuples of these) and objects with no theme: anything
    else is asked of Bokeh every time, as before. Same documents, model for model
    (tests/ui/test_panel_private.py); measured in Pyodide in bench/pyodide_page.py."""
    from bokeh.core.has_props import HasProps  # noqa: PLC0415
    from bokeh.core.property.descriptors import PropertyDescriptor  # noqa: PLC0415

    if getattr(PropertyDescriptor, "_lab_remembered", False):
        return
    merged_over_bases = HasProps._overridden_defaults.__func__
    unstable_of = PropertyDescriptor.has_unstable_default
    default_of = PropertyDescriptor.instance_default
    overridden: dict[type, dict] = {}
    unstable: dict[tuple, bool] = {}
    stable: dict[tuple, object] = {}
    missing = object()

    def _overridden_defaults(cls):
        found = overridden.get(cls)
        if found is None:
            found = overridden[cls] = merged_over_bases(cls)
        return found

    def has_unstable_default(self, obj):
        key = (self, obj.__class__)
        found = unstable.get(key)
        if found is None:
            found = unstable[key] = unstable_of(self, obj)
        return found

    def instance_default(self, obj):
        if obj.themed_values() is not None:
            return default_of(self, obj)
        key = (self, obj.__class__)
        found = stable.get(key, missing)
        if found is missing:
            found = default_of(self, obj)
            if type(found) in _IMMUTABLE or (type(found) is tuple and all(type(v) in _IMMUTABLE for v in found)):
                stable[key] = found
        return found

    HasProps._overridden_defaults = classmethod(_overridden_defaults)
    PropertyDescriptor.has_unstable_default = has_unstable_default
    PropertyDescriptor.instance_default = instance_default
    PropertyDescriptor._lab_remembered = True
