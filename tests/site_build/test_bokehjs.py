"""sitebuild.bokehjs: the edits to the shipped bokeh.min.js, and the check they rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild import BuildError, bokehjs


@pytest.mark.parametrize(("old", "new", "why"), bokehjs.BOKEHJS_PATCHES,
                         ids=[why for _, _, why in bokehjs.BOKEHJS_PATCHES])
def test_each_bokehjs_edit_finds_its_line_in_the_pinned_bokeh_once(old, new, why):
    """Each edit to the shipped bokeh.min.js (its reason beside it in sitebuild/bokehjs.py) finds
    the text it expects exactly once in the pinned BokehJS, and its replacement is not there yet
    (the build stops otherwise), so a Bokeh upgrade that moves the code is caught here first,
    named by the edit."""
    import bokeh

    text = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.min.js").read_text()
    assert text.count(old) == 1, f"the edit '{why}' expects this text once in bokeh {bokeh.__version__}: {old}"
    assert new not in text, f"the edit '{why}': its replacement is already in bokeh.min.js"


def test_a_patch_whose_text_moved_stops_the_build(tmp_path):
    core = tmp_path / "bokeh.min.js"
    core.write_text("".join(old for old, _, _ in bokehjs.BOKEHJS_PATCHES))
    bokehjs.patch_bokehjs(core)
    assert core.read_text() == "".join(new for _, new, _ in bokehjs.BOKEHJS_PATCHES)
    core.write_text("".join(old for old, _, _ in bokehjs.BOKEHJS_PATCHES[1:]))  # the MathJax loader moved
    with pytest.raises(BuildError, match="bokeh.min.js: the edit .*MathJax loader.* expects .*mathjax.* once and found it 0 times"):
        bokehjs.patch_bokehjs(core)


def test_a_bokeh_css_variable_anywhere_stops_the_build(tmp_path):
    """BokehJS is patched not to read --bk-* CSS variables (none is defined): one that a
    style sheet, a page or a script would define stops the build, naming the file."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "lab.css").write_text(".x { color: red; --lab-accent: #08f; }")
    (tmp_path / "page.html").write_text("<p>the code names `--bk-${prefix}` without defining it</p>")
    bokehjs.assert_no_bokeh_css_variables(tmp_path)
    (tmp_path / "assets" / "lab.css").write_text(".bk-Figure { --bk-line-color: red; }")
    with pytest.raises(BuildError, match=r"assets/lab\.css: --bk-line-color:"):
        bokehjs.assert_no_bokeh_css_variables(tmp_path)
