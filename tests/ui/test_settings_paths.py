"""No dead ends: a setting changed on the live page shows the same controls and views as a page
built with it (a link's), and settings that do not apply say why or are hidden."""

from __future__ import annotations

import html
import re

import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.models import CheckboxButtonGroup, RadioButtonGroup
from helpers import other_values

from ui.pages import PAGES, page_class

CLASSES = {info.slug: page_class(info) for info in PAGES}


def shown(layout) -> list:
    """Every part of a page's layout in order, as (kind, name, visible, disabled): what a
    user sees of it (a hidden part's children are listed too, as they are)."""
    out = []

    def walk(obj) -> None:
        name = getattr(obj, "name", "") if isinstance(obj, pn.widgets.Widget) else ""
        out.append((type(obj).__name__, name, bool(obj.visible),
                    bool(getattr(obj, "disabled", False))))
        if isinstance(obj, pn.pane.Bokeh) and obj.object is not None:
            model = obj.object  # a hidden figure's title is not seen
            title = getattr(getattr(model, "title", None), "text", "") if model.visible else ""
            out.append(("bokeh", title, bool(model.visible), False))
        for child in getattr(obj, "objects", []) or []:
            walk(child)

    walk(layout)
    return out


def paths(slug):
    """Each setting with up to three other values; a number's second and third value take the
    path its first took, so they run in the slow lane, and so does a choice's third."""
    page = CLASSES[slug]()
    for name in page.settings():
        if name == "exercise":
            continue
        number = isinstance(page.param[name], param.Number)
        for i, value in enumerate(other_values(page, name)[:3]):
            yield pytest.param(slug, name, value, id=f"{slug}-{name}-{value}"[:80],
                               marks=[pytest.mark.slow] if (number and i) or i == 2 else [])


@pytest.fixture(scope="module")
def live_pages():
    """One live page per slug for the module, put back to its defaults before each use: the
    change under test is made to a page that is already on screen, as a reader makes it."""
    return {}


def live_page(pages: dict, slug: str):
    entry = pages.get(slug)
    if entry is not None:
        page, defaults = entry
        page.notice = ""
        page.param.update(**{n: v for n, v in defaults.items() if getattr(page, n) != v})
        if page.settings_now() == defaults and not page.notice:
            return page
    page = CLASSES[slug]()
    assert page.layout is not None
    pages[slug] = (page, page.settings_now())
    return page


@pytest.mark.parametrize(("slug", "name", "value"),
                         [p for slug in CLASSES for p in paths(slug)])
def test_a_setting_changed_live_shows_what_its_link_shows(build, live_pages, slug, name, value):
    live = live_page(live_pages, slug)
    try:
        setattr(live, name, value)
    except ValueError:
        pytest.skip(f"{name} = {value!r} cannot run with the defaults")
    if live.notice:
        pytest.skip(f"{name} = {value!r} was refused: {live.notice}")
    linked = build(CLASSES[slug], **live.settings_now())
    assert shown(live.layout) == shown(linked.layout)


def text_content(markup: str) -> str:
    """What the shell reads of a model's text (a template's textContent): tags dropped, then
    entities decoded, so an escaped "&lt;label&gt;" reads as the tag itself."""
    return html.unescape(re.sub(r"<[^>]*>", "", markup)).strip()


def group_names(page) -> dict[str, str]:
    """Each toggle group's name as the shell gives it (assets/js/readers.js, nameOf): its own
    title, else the text of the nearest sibling before it in its parent."""
    root = page.layout.get_root(Document())
    names = {}
    groups = [*root.select({"type": RadioButtonGroup}), *root.select({"type": CheckboxButtonGroup})]
    for model in groups:
        parent = next(m for m in root.references() if model in (getattr(m, "children", None) or []))
        siblings = parent.children[: parent.children.index(model)]
        name = ""
        for sib in reversed(siblings):
            name = text_content(getattr(sib, "title", None) or getattr(sib, "label", None)
                                or getattr(sib, "text", None) or "")
            if name:
                break
        names[",".join(model.labels)] = name.split(":")[0].strip()
    return names


# Every toggle group is named (the config.json box's slot group, "Show it", was the last).
UNNAMED: set = set()


def test_every_toggle_group_has_its_settings_name_in_plain_text(build):
    unnamed = set()
    for slug, cls in CLASSES.items():
        page = build(cls)
        for labels, name in group_names(page).items():
            assert "<" not in name, (slug, labels, name)
            if not name:
                unnamed.add((slug, labels))
    assert unnamed == UNNAMED
    rs = group_names(build(CLASSES["running-sum"]))
    assert rs == {"random tokens,worked example,your turn": "Token stream",
                  "identity,elu+1": "Feature map φ"}
    fs = group_names(build(CLASSES["fixed-state"]))
    assert set(fs.values()) == {"Rule (step-by-step view)", "Key set"}


def test_the_rule_pickers_text_box_is_named():
    page = CLASSES["gates"]()
    page.layout  # noqa: B018 — builds the widgets
    picker = next(w for w in page.widgets if isinstance(w, pn.widgets.MultiChoice))
    assert picker.placeholder == "Add a rule to compare"  # Choices.js names its box by it


def test_before_the_first_token_each_box_has_its_own_text_and_one_says_t_0(build):
    """At t = 0 the gates page said "t = 0" twice (caption and token line) and showed an empty
    "Gates at this token" box; running-sum kept its token box's room empty (about 100 px)."""
    from ui.fmt import vec  # noqa: PLC0415

    gates = build(CLASSES["gates"])
    data = gates.run.data
    said = [key for key in ("caption", "token_text", "delta_text", "gates_text")
            if "t = 0" in data[key][0]]
    assert said == ["caption"]
    first = data["gates_text"][0]
    assert "<table" in first and "the gates token 1 will use" in first
    assert all(gates.run.data["gates_text"][1].count(f"<td>{label}</td>") == 1
               for label in ("RetNet", "DeltaNet"))
    assert first.count("<tr>") == data["gates_text"][1].count("<tr>")  # the same rows
    rs = build(CLASSES["running-sum"])
    k1 = vec(rs.run.data["k"][0])
    assert "Next: token t = 1" in rs.run.data["token_text"][0] and f"k = {k1}" in rs.run.data["token_text"][0]
    assert rs.run.data["token_text"][0].count("<br>") == rs.run.data["token_text"][1].count("<br>")


def test_every_page_has_one_caption_read_out_after_a_step(build):
    """The shell reads out t and the text of the Div with the caption role; chunkwise and
    random-features had none ("t = 1 of 16." and nothing more)."""
    from bokeh.models import Div  # noqa: PLC0415

    for slug, cls in CLASSES.items():
        page = build(cls)
        root = page.layout.get_root(Document())
        captions = [m for m in root.select({"type": Div}) if "lab-caption" in m.css_classes]
        assert len(captions) == 1, slug
        assert any(model is captions[0] for model, _, _ in page._bindings), slug  # per t
        page.show(1)
        assert text_content(captions[0].text), slug


def test_retnets_decay_shows_only_while_retnet_is_compared(build):
    """γ is RetNet's alone (sim: gamma of the "retnet" rule only); without RetNet it changed
    nothing on screen."""
    page = build(CLASSES["gates"])
    gamma = next(w for w in page.widgets if w.name == page.label("retnet_decay"))
    assert "retnet" in page.rules and gamma.visible
    page.rules = [r for r in page.rules if r != "retnet"]
    assert not gamma.visible
    before = page.csv()
    page.retnet_decay = 0.6  # nothing it could change: the same run
    assert page.csv() == before and not gamma.visible
    page.rules = [*page.rules, "retnet"]
    assert gamma.visible
