"""BokehJS: the edits made to the shipped bokeh.min.js, each with why and what it saves.

Each edit must match its text exactly once, or the build stops (a Bokeh upgrade that moved the
code is caught; tests/site_build checks them against the pinned Bokeh first). The last edit holds
only while nothing shipped defines a --bk-* CSS variable: `assert_no_bokeh_css_variables` checks
the finished site.
"""

from __future__ import annotations

import re
from pathlib import Path

from sitebuild import BuildError

# BokehJS loads MathJax from a CDN the first time a label holds TeX. The pages never put TeX in a
# plot (formulas are rendered by KaTeX in the page text), so that loader gets an empty inline
# script instead of an outside address.
MATHJAX_CDN = '"https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js"'
# Edits to the shipped bokeh.min.js: (text, replacement, why). Each must match exactly once.
BOKEHJS_PATCHES = (
    (MATHJAX_CDN, '"data:text/javascript,"',
     "the MathJax loader above: no outside address in the site"),
    # Every renderer rewrites its position stylesheet on every paint, even when the text is the
    # same; each rewrite invalidates the page's style, and the next renderer's visuals read a
    # CSS variable (getComputedStyle), so a repaint forced one style recalculation per renderer
    # (about 4 ms of a running-sum step, measured with Chromium's profiler). Writing only a
    # changed text keeps the picture and drops the recalculations.
    ("_update(t){this.el.textContent=t}",
     "_update(t){this.el.textContent!==t&&(this.el.textContent=t)}",
     "a stylesheet's text is written only when it changes"),
    # Before every repaint a figure re-measures its side panels (axes, title, colour bar: every
    # tick label) in case one changed size, even when the only thing to repaint is a renderer
    # on the overlay layer, which cannot change a panel's size: the pages put what moves on a
    # step there (markers, the heatmaps' cells). Skip the check in exactly that case (nothing
    # but overlay renderers that are not side panels invalidated, no full repaint asked for).
    # About 2 ms a step on the running-sum page's eight figures.
    ("_invalidate_layout_if_needed(){(()=>{if(this._needs_layout)return this.invalidate_painters(),!0;"
     "for(const e of this.model.side_panels)",
     "_invalidate_layout_if_needed(){(()=>{if(this._needs_layout)return this.invalidate_painters(),!0;"
     "if(!this._invalidate_all&&this._invalidated_painters.size>0&&[...this._invalidated_painters]"
     '.every((p=>"overlay"==p.model.level&&!this.model.side_panels.includes(p.model))))return!1;'
     "for(const e of this.model.side_panels)",
     "an overlay-only repaint does not re-measure the side panels"),
    # A figure that will not paint (held out of view by assets/js/culling.js, or paused) still
    # re-measured its side panels on every repaint request, before paint() returns early; a
    # hidden figure (display: none, as the chunkwise page's UT transform for a rule without
    # one) finds them changed every time and laid itself out again: 30-60 ms of every
    # chunkwise step, measured. The check waits until the figure paints again (releasing
    # hold_render asks for a repaint, which measures then).
    ("repaint(){this._invalidate_layout_if_needed(),this.paint()}",
     "repaint(){this.is_paused||this.model.hold_render||this._invalidate_layout_if_needed(),"
     "this.paint()}",
     "a figure that will not paint is not laid out"),
    # Every line, fill and text visual reads a CSS variable (--bk-line-color, ...) that may
    # override its value, through getComputedStyle, each time it paints: while views are being
    # built each read forces a style recalculation (44 ms of the gates page's first plot,
    # measured with Chromium's profiler), and every step pays it again for each annotation. No
    # file of the site defines such a variable (assert_no_bokeh_css_variables checks every
    # build), so the read always finds nothing: it is skipped.
    ("_get_css_value(t){return getComputedStyle(this.obj.el).getPropertyValue(`${this.css_prefix}${t}`)}",
     '_get_css_value(t){return""}',
     "a visual's CSS variable, which the site never defines, is not read"),
    # A figure's base font size (what an "em" in its text is) is read from its element's computed
    # style by every title, axis label and tick label each time it is measured or painted.
    # While the views of a page are built and laid out, each element's style has just changed, so
    # each read forced a style recalculation of the page: the largest single item of the main
    # thread's profile while a page starts (gates: 0.5-1.4 s of self time under load, measured
    # with Chromium's profiler). It is read once per figure and task and kept until the task ends
    # (a timeout clears it). The pages' text sizes are in px, where the value is not used.
    ('get base_font_size(){const e=getComputedStyle(this.el).fontSize,t=(0,H.parse_css_font_size)(e);'
     'if(null!=t){const{value:e,unit:i}=t;if("px"==i)return e}return null}',
     'get base_font_size(){if(void 0!==this._lab_font_size)return this._lab_font_size;'
     'const e=getComputedStyle(this.el).fontSize,t=(0,H.parse_css_font_size)(e);let s=null;'
     'if(null!=t){const{value:e,unit:i}=t;"px"==i&&(s=e)}'
     'return this._lab_font_size=s,setTimeout((()=>{this._lab_font_size=void 0}),0),s}',
     "a figure's base font size is read once per task"),
)
BOKEH_CSS_VARIABLE = re.compile(r"--bk-[A-Za-z0-9_-]+\s*:")


def assert_no_bokeh_css_variables(out: Path) -> None:
    """The patch that skips BokehJS's CSS-variable overrides holds only while nothing shipped
    defines one (a style sheet, a page's inline style, a script writing one): fail, naming it."""
    found = []
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".css", ".html", ".js"):
            match = BOKEH_CSS_VARIABLE.search(path.read_text(errors="replace"))
            if match:
                found.append(f"{path.relative_to(out).as_posix()}: {match.group(0)}")
    if found:
        raise BuildError("BokehJS's visuals would read these CSS variables, which the shipped "
                         "bokeh.min.js is patched to skip (BOKEHJS_PATCHES): " + "; ".join(found[:5]))


def patch_bokehjs(core: Path) -> None:
    """Apply BOKEHJS_PATCHES to the bokeh.min.js at `core`, in place."""
    text = core.read_text()
    for old, new, why in BOKEHJS_PATCHES:
        if text.count(old) != 1:
            raise BuildError(f"{core.name}: the edit \"{why}\" expects {old!r} once and found it "
                             f"{text.count(old)} times; check BokehJS (sitebuild/bokehjs.py)")
        text = text.replace(old, new)
    core.write_text(text)
