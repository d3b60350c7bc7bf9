"""ui.ahead: the runs of the links a page offers itself (Page.offered), built ahead of time as
patches of the default page, and the settings whose every choice is one of them.

Each patch is checked here as the browser takes it, against independent references: applied
(from its JSON, by Bokeh's own patch code) to a default page's document just built, it gives
the document of the page made with the link, model for model and value for value; the patch
back gives the default page again; the run's CSV and last t are the page's made with the link."""

from __future__ import annotations

import json

import pytest

from sim import cache
from ui.ahead import _state, ahead_runs, choices, latest
from ui.contract import role
from ui.document import build_ahead, embed_json
from ui.pages import PAGES, page_class
from ui.urlstate import apply_query, link_contract, to_query

OFFERED = [info for info in PAGES if page_class(info).offered]
RUNNING_SUM = page_class(next(i for i in PAGES if i.slug == "running-sum"))
HYBRID = page_class(next(i for i in PAGES if i.slug == "hybrid"))


@pytest.fixture(scope="module")
def made():
    """Running-sum's default page, embedded as the build does, and its runs."""
    page, pydoc = build_ahead(RUNNING_SUM)
    embed_json(pydoc)
    return page, pydoc, ahead_runs(RUNNING_SUM, page, pydoc)


def test_running_sums_presets_and_hybrids_models_are_offered():
    """The settings link on the running-sum page (?preset=worked+example) and its other preset;
    on hybrid, each model A with B at its default and each model B with A at its default (the
    custom models and "none" too); no other page offers links of its own."""
    assert [i.slug for i in OFFERED] == ["running-sum", "hybrid"]
    assert RUNNING_SUM.offered == ("preset=worked+example", "preset=your+turn")
    assert RUNNING_SUM.ahead_settings() == ["preset"]
    # ten presets: A has nine others and its custom model, B nine others, its custom one and none
    assert len(cache.PRESETS) == 10 and len(HYBRID.offered) == 21
    assert all(q.count("=") == 1 for q in HYBRID.offered)  # one setting each, the other at its default
    assert "model_a=jamba-v0.1" not in HYBRID.offered and "model_b=llama-3-8b" not in HYBRID.offered
    assert {"model_a=llama-3-8b", "model_a=falcon-h1-7b", "model_a=custom", "model_b=none",
            "model_b=jamba-v0.1", "model_b=custom"} <= set(HYBRID.offered)
    assert sum(q.startswith("model_a=") for q in HYBRID.offered) == 10
    assert HYBRID.ahead_settings() == ["model_a", "model_b"]
    assert all(page_class(i).ahead_settings() == [] for i in PAGES if i not in OFFERED)


def test_each_run_is_the_page_made_with_its_link(made):
    _, _, runs = made
    assert [r["link"] for r in runs] == list(RUNNING_SUM.offered)
    for run in runs:
        page = RUNNING_SUM()
        assert apply_query(page, run["link"]) == []
        assert run["query"] == to_query(page) != to_query(RUNNING_SUM())  # its own settings, all of them
        assert run["csv"] == page.csv() and run["t_max"] == page.run.t_max
    assert [r["t_max"] for r in runs] == [2, 3]  # the worked example's two tokens; "your turn"'s three


def test_each_patch_applied_to_the_default_document_gives_the_run_and_back(made):
    page, _, runs = made
    _, screen = build_ahead(RUNNING_SUM)  # the document the browser has, as first shown
    default = _state(screen)
    for run in runs:
        _, direct = build_ahead(RUNNING_SUM, run["link"])
        screen.apply_json_patch(json.loads(run["patch"]))
        assert _state(screen) == _state(direct), run["link"]
        screen.apply_json_patch(json.loads(run["back"]))
        assert _state(screen) == default, run["link"]
    # one after the other, as a reader choosing twice: the first run's way back, then the second
    screen.apply_json_patch(json.loads(runs[0]["patch"]))
    screen.apply_json_patch(json.loads(runs[0]["back"]))
    screen.apply_json_patch(json.loads(runs[1]["patch"]))
    assert _state(screen) == _state(build_ahead(RUNNING_SUM, runs[1]["link"])[1])
    # the page the build used is back at its defaults
    assert to_query(page) == link_contract(page)["defaults"]


def test_a_patch_refers_to_the_models_on_screen_and_makes_none(made):
    _, pydoc, runs = made
    ids = {m.id for m in pydoc.models}
    for run in runs:
        for part in ("patch", "back"):
            events = json.loads(run[part])["events"]
            assert events and all(e["model"]["id"] in ids for e in events)
            assert '"type":"object"' not in run[part]  # no model is sent whole (none is new)


def test_a_patch_that_does_not_give_the_run_stops_the_build(monkeypatch):
    import ui.ahead as ahead

    real = ahead._Recorder.change

    def short(self, query):  # the run's first five changes lost on the way
        patch = json.loads(real(self, query))
        return json.dumps({**patch, "events": patch["events"][5:]})

    monkeypatch.setattr(ahead._Recorder, "change", short)
    page, pydoc = build_ahead(RUNNING_SUM)
    with pytest.raises(ValueError, match=r"running-sum: the default page patched to 'preset=worked\+example' "
                                         r"is not the page built with it: p\d+ \(\w+\)"):
        ahead_runs(RUNNING_SUM, page, pydoc)


def test_the_presets_choices_are_the_default_and_the_two_runs(made):
    page, _, runs = made
    assert choices(page, runs) == [{"setting": "preset", "key": "preset", "labels": {
        "random tokens": -1, "worked example": 0, "your turn": 1}}]
    # a choice no offered link makes stops the build
    with pytest.raises(ValueError, match="preset = 'your turn' is a choice no offered link makes"):
        choices(page, runs[:1])


def test_the_answered_setting_responds_before_python_and_the_others_wait(made):
    page, _, _ = made
    preset = page.widget_of("preset")
    assert role("ahead") in preset.css_classes and not preset.disabled
    others = [w for w in page.widgets if w is not preset]
    assert others and all(w.disabled for w in others)
    assert all(role("ahead") not in w.css_classes for w in others)


def test_latest_keeps_the_last_of_each_change_in_order():
    from bokeh.document import Document
    from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
    from bokeh.models import ColumnDataSource, Div

    doc, src, div = Document(), ColumnDataSource({"a": [1], "b": [2]}), Div(text="x")
    first_a = ColumnDataChangedEvent(doc, src, "data", cols=["a"])
    text_1 = ModelChangedEvent(doc, div, "text", "y")
    both = ColumnDataChangedEvent(doc, src, "data", cols=["a", "b"])
    text_2 = ModelChangedEvent(doc, div, "text", "z")
    only_b = ColumnDataChangedEvent(doc, src, "data", cols=["b"])
    assert latest([first_a, text_1, both, text_2, only_b]) == [both, text_2, only_b]
    whole = ColumnDataChangedEvent(doc, src, "data", cols=None)
    assert latest([first_a, both, whole]) == [whole]
    assert latest([whole, first_a]) == [whole, first_a]


def test_hybrids_model_choices_are_patches_of_the_page_on_screen(monkeypatch):
    """A model A or B chosen is the same page with other values (the layer strip keeps one legend
    entry per kind, shown or hidden): three of the offered links, one of each kind (a preset as A,
    no model B, the custom model A with its boxes), patched to and back as the browser does."""
    links = ("model_a=mamba-2-2.7b", "model_b=none", "model_a=custom")
    monkeypatch.setattr(HYBRID, "offered", links)
    monkeypatch.setattr(HYBRID, "ahead_settings", classmethod(lambda cls: ["model_a", "model_b"]))
    page, pydoc = build_ahead(HYBRID)
    runs = ahead_runs(HYBRID, page, pydoc)
    _, screen = build_ahead(HYBRID)
    default = _state(screen)
    for run in runs:
        made = HYBRID()
        assert apply_query(made, run["link"]) == []
        assert run["csv"] == made.csv() and run["t_max"] == made.run.t_max == 10
        screen.apply_json_patch(json.loads(run["patch"]))
        assert _state(screen) == _state(build_ahead(HYBRID, run["link"])[1]), run["link"]
        screen.apply_json_patch(json.loads(run["back"]))
        assert _state(screen) == default, run["link"]
        assert '"type":"object"' not in run["patch"]  # no model made
    assert [run["values"] for run in runs] == [{"model_a": "mamba-2-2.7b", "model_b": "llama-3-8b"},
                                               {"model_a": "jamba-v0.1", "model_b": "none"},
                                               {"model_a": "custom", "model_b": "llama-3-8b"}]


def test_hybrids_choices_name_each_models_run_and_the_pair_has_none():
    """Every label of both menus is the default (-1) or the run of its own link; the key names
    the setting in a link (the shell adds a choice to the link's own settings by it)."""
    page = HYBRID()
    page.layout  # noqa: B018  (its widgets)
    runs = []
    for link in HYBRID.offered:
        made = HYBRID()
        apply_query(made, link)
        runs.append({"values": {"model_a": made.model_a, "model_b": made.model_b}})
    entries = {e["setting"]: e for e in choices(page, runs)}
    a, b = entries["model_a"], entries["model_b"]
    assert (a["key"], b["key"]) == ("model_a", "model_b")
    assert a["labels"]["Jamba-v0.1"] == b["labels"]["Llama-3-8B"] == -1
    assert HYBRID.offered[a["labels"]["Mamba-2-2.7B"]] == "model_a=mamba-2-2.7b"
    assert HYBRID.offered[a["labels"]["custom A (below)"]] == "model_a=custom"
    assert HYBRID.offered[b["labels"]["none"]] == "model_b=none"
    assert HYBRID.offered[b["labels"]["Jamba-v0.1"]] == "model_b=jamba-v0.1"
    assert len(a["labels"]) == len(cache.PRESETS) + 1 and len(b["labels"]) == len(cache.PRESETS) + 2
