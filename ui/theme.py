"""Palettes and the widgets' stylesheet.

Palettes are colour-blind safe: a diverging blue-white-red (ColorBrewer RdBu, listed as safe for
colour-blind readers) for signed values, and Okabe-Ito (Bokeh's Colorblind8) for lines.

The figures' light/dark theme and presenter view are applied in the browser (assets/js/restyle.js,
``restyle``), so they work on the page built ahead of time, before Python has started.
"""

from __future__ import annotations

from bokeh.palettes import Colorblind8, RdBu11

# Negative values blue, zero white, positive red (RdBu11 runs from dark blue to dark red).
DIVERGING = tuple(RdBu11)


def _mix(a: str, b: str, w: float) -> str:
    """The colour a fraction w of the way from a to b (#rrggbb)."""
    return "#" + "".join(f"{round(int(a[i:i + 2], 16) * (1 - w) + int(b[i:i + 2], 16) * w):02x}"
                         for i in (1, 3, 5))


def luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    c = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours (1 to 21; text wants 4.5 or more)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# The dark theme's diverging scale: zero a neutral a shade off the dark background (RdBu's
# near-white zero glared on a dark page), light blue and light orange-red at the ends; the
# same hues as RdBu, the order of lightness turned round as the background is. Its steps from
# zero (the fraction of the way to each end) keep the third step dark enough for light numbers
# and the fourth light enough for dark ones, as RdBu's own steps do (evenly spaced, the third
# step took neither ink at 4.5:1).
_ZERO_DARK, _BLUE_DARK, _RED_DARK = "#262c34", "#8cc4ec", "#f4a582"
_DARK_STEPS = (0.16, 0.32, 0.48, 0.74, 1.0)
DIVERGING_DARK = tuple([_mix(_ZERO_DARK, _BLUE_DARK, w) for w in reversed(_DARK_STEPS)] + [_ZERO_DARK]
                       + [_mix(_ZERO_DARK, _RED_DARK, w) for w in _DARK_STEPS])
# A signed heatmap's colours in each theme: its scale, the ink of the numbers in cells near zero
# ("ink") and in cells far from it ("ink_strong"), the lines between cells and a masked cell (no
# number: darker than zero in both themes). Pages are built with "light"; the shell
# (assets/js/restyle.js) swaps in the theme's from lab-config's contract
# (ui.contract.contract()["heatmap"]).
HEATMAP = {
    "light": {"palette": DIVERGING, "ink": "#0d1117", "ink_strong": "#ffffff", "border": "#ffffff",
              "masked": "#d0d7de"},
    "dark": {"palette": DIVERGING_DARK, "ink": "#ffffff", "ink_strong": "#0d1117",
             "border": "#161b22", "masked": "#0d1117"},
}


def _ink_strong_at() -> tuple[int, ...]:
    """The colours of the scale (indices into the palettes) whose numbers take "ink_strong":
    where its worse contrast over both themes beats "ink"'s. One choice for both themes, as a
    cell's number is in one of the two text glyphs whatever the theme (ui.views.Heatmap)."""
    n = len(DIVERGING)
    assert all(len(c["palette"]) == n for c in HEATMAP.values())
    worst = lambda i, ink: min(contrast(c["palette"][i], c[ink]) for c in HEATMAP.values())  # noqa: E731
    return tuple(i for i in range(n) if worst(i, "ink_strong") > worst(i, "ink"))


INK_STRONG_AT = _ink_strong_at()  # (0, 1, 9, 10): the two darkest blues and reds in light
for _colours in HEATMAP.values():  # in the page's contract with the colours (no JS reads it)
    _colours["ink_strong_at"] = list(INK_STRONG_AT)
# Okabe-Ito without its yellow (too faint on white) and black (reserved for text).
LINES = (Colorblind8[0], Colorblind8[5], Colorblind8[3], Colorblind8[6], Colorblind8[1], Colorblind8[4])

# Panel widgets: their insides are in shadow roots, which the page's stylesheet does not reach,
# but CSS custom properties inherit into them. This sheet (given to a widget's ``stylesheets``)
# draws sliders from the page's --lab-* colours (set for light and dark in assets/lab.css), lets
# long labels wrap instead of running into the next widget, makes keyboard focus plain (3 px in the
# accent colour, !important over Choices.js's and BokehJS's own "outline: none" and 1 px dotted
# rings: gates' rule chips and "Add a rule" input had none, hybrid's tabs a faint one; a chip's
# remove button rings on a band of the background, as its chip is the accent's blue) and fills
# the chosen button of a toggle group with the accent colour (in the dark theme Panel's own grey
# could not be told from the others).
WIDGET_CSS = """
.noUi-target { background: var(--lab-track, #fafafa); border-color: var(--lab-track-line, #d3d3d3);
  box-shadow: none; }
.noUi-connect { background: var(--lab-connect, #0072B2) !important; }
.noUi-handle { background: var(--lab-handle, #fff); border-color: var(--lab-handle-line, #d9d9d9);
  box-shadow: none; }
.noUi-handle:before, .noUi-handle:after { background: var(--lab-handle-line, #e8e7e6); }
.bk-slider-title, label { white-space: normal; }
.bk-input { font-family: inherit; font-size: var(--font-size, 13px); }
.bk-btn:focus-visible, .bk-input:focus-visible, .noUi-handle:focus-visible,
input:focus-visible, select:focus-visible, textarea:focus-visible, .bk-tab:focus-visible {
  outline: 3px solid var(--accent, #0072B2) !important; outline-offset: 2px; }
.noUi-handle:focus { outline: 3px solid var(--accent, #0072B2); outline-offset: 2px; }
.choices__input:focus-visible { outline: 3px solid var(--accent, #0072B2) !important; outline-offset: 1px; }
.choices__button:focus-visible { outline: 3px solid var(--accent, #0072B2) !important; outline-offset: 2px;
  box-shadow: 0 0 0 2px var(--bg, #ffffff) !important; }
.bk-btn-group .bk-btn.bk-active, .bk-btn-group .bk-btn.bk-btn-default.bk-active {
  background: var(--accent, #0072B2) !important; color: var(--accent-text, #ffffff) !important;
  border-color: var(--accent, #0072B2) !important; font-weight: 600; box-shadow: none; }
.bk-btn-group .bk-btn.bk-btn-default:not(.bk-active) { background: var(--bg, #ffffff);
  color: var(--text, #1f2328); border-color: var(--line, #d1d9e0); }
.bk-tab { color: var(--text, #1f2328); background: var(--surface, #f6f8fa); }
.bk-tab.bk-active { color: var(--text, #1f2328); background: var(--bg, #ffffff);
  border-color: var(--accent, #0072B2); font-weight: 600; }
"""


# A toggle group's buttons a little tighter, so three presets fit a 340 px settings column
# ("your turn" was cut to "your tur").
TIGHT_BUTTONS_CSS = ".bk-btn-group .bk-btn { padding-left: 8px; padding-right: 8px; }"


def group_label(text: str, **kwargs):
    """The label of a toggle group (a Panel button group shows none of its own), as plain text:
    the shell names the group after the text just before it (assets/js/readers.js), and a label
    written as markup ("<label>Key set</label>") was read out with its tags."""
    import html  # noqa: PLC0415

    import panel as pn  # noqa: PLC0415

    kwargs.setdefault("margin", (5, 10, 0, 10))
    return pn.pane.HTML(html.escape(text), css_classes=["lab-group-label"], **kwargs)


def heading(text: str, **kwargs):
    """A section's heading in a page's body (text: the page's own markup, never a user's), one
    size on every page; in the presenter view close to what it heads (lab.css
    --lab-heading-margin: running-sum's outputs scene had a 24 px band above its heading)."""
    import panel as pn  # noqa: PLC0415

    kwargs.setdefault("margin", (0, 10))
    return pn.pane.HTML(f"<h3 style='font-size:1em;margin:var(--lab-heading-margin,1em 0 0.5em)'>{text}</h3>",
                        **kwargs)


def style_widget(widget):
    """Give a Panel widget the site's slider colours, wrapping labels and a visible focus."""
    widget.stylesheets = [*widget.stylesheets, WIDGET_CSS]
    return widget
