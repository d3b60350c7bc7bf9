"""Formulas typeset at build time (sitebuild/formulas.py): each formula of a lesson text, as
KaTeX's auto-render took them in the browser, becomes KaTeX's HTML and MathML; nothing of the
TeX is left to show, and a formula the build cannot typeset stops it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitebuild import BuildError, formulas
from sitebuild.bytecode import find_node
from sitebuild.static import fetch_katex

ROOT = Path(__file__).resolve().parents[2]


def test_formulas_are_found_as_auto_render_took_them():
    text = r"<p>A \(q_t^\top k_i\) and \[S_t = S_{t-1} + k_t v_t^\top\] then $$a &lt; b$$ end.</p>"
    assert formulas.formulas_in(text) == [(r"q_t^\top k_i", False), (r"S_t = S_{t-1} + k_t v_t^\top", True),
                                          ("a < b", True)]  # entities read, as the browser's text node held them
    assert formulas.formulas_in("<p>no formula, a $ and a \\ alone</p>") == []
    with pytest.raises(BuildError, match="runs across a tag"):
        formulas.formulas_in(r"<p>\(a <b>x</b>\)</p>")


@pytest.mark.skipif(find_node() is None, reason="no Node.js 18+: the build itself refuses to typeset")
def test_every_lesson_text_comes_typeset_with_nothing_of_its_tex_left():
    texts = {p.stem: p.read_text() for p in sorted((ROOT / "assets" / "texts").glob("*.html"))}
    counts = {name: len(formulas.formulas_in(text)) for name, text in texts.items()}
    assert sum(counts.values()) > 100, counts
    done = formulas.typeset(texts, fetch_katex())
    for name, html in done.items():
        assert html.count('class="katex"') == counts[name], name
        assert formulas.formulas_in(html) == [], name  # no delimiter left
        assert "katex-error" not in html and "<math>" in html, name  # MathML for screen readers
        assert "http" not in html, name  # no xmlns: HTML's parser knows <math>
    # a displayed formula is displayed; an inline one is not
    one = formulas.typeset({"x": r"<p>\(a\) and \[b\]</p>"}, fetch_katex())["x"]
    assert one.count('class="katex-display"') == 1 and one.count('class="katex"') == 2
    assert re.search(r"<mi>a</mi>", one) and re.search(r"<mi>b</mi>", one)


@pytest.mark.skipif(find_node() is None, reason="no Node.js 18+")
def test_a_formula_katex_cannot_read_stops_the_build():
    with pytest.raises(BuildError, match="cannot read the formula"):
        formulas.typeset({"x": r"<p>\(\frac{a}\)</p>"}, fetch_katex())
