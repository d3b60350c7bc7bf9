"""Colours and styling for Bokeh figures: light/dark themes and the presenter view.

Palettes are colour-blind safe: a diverging blue-white-red (ColorBrewer RdBu, listed as safe for
colour-blind readers) for signed values, and Okabe-Ito (Bokeh's Colorblind8) for lines.

``style_figure`` is called on every figure of a page whenever the theme or the presenter view
changes. The presenter view scales each figure's size, fonts, lines and markers; the sizes a figure
had before (its base) are remembered per model id, so leaving the presenter view restores them
exactly. A size changed by the page while a view is on (say a height that follows the data) is
taken as the new base; ``set_size`` sets one that is scaled at once.
"""

from __future__ import annotations

from bokeh.palettes import Colorblind8, RdBu11

# Negative values blue, zero white, positive red (RdBu11 runs from dark blue to dark red).
DIVERGING = tuple(RdBu11)
# Okabe-Ito without its yellow (too faint on white) and black (reserved for text).
LINES = (Colorblind8[0], Colorblind8[5], Colorblind8[3], Colorblind8[6], Colorblind8[1], Colorblind8[4])

THEMES = {
    "light": {"background": "#ffffff", "text": "#1f2328", "grid": "#e6e8eb", "axis": "#57606a",
              "muted": "#6e7781", "accent": "#0072B2"},
    "dark": {"background": "#161b22", "text": "#e6edf3", "grid": "#30363d", "axis": "#b1bac4",
             "muted": "#9da7b3", "accent": "#56B4E9"},
}

# The presenter view: how much larger a figure is drawn, its type, and its lines and markers.
PRESENT_SIZE = 1.45
PRESENT_FONT = 1.6
PRESENT_LINE = 1.8
PRESENT_MARKER = 1.6

# Greys the pages use for secondary ink (markers, notes); in the dark theme they become the
# theme's muted grey so they stay visible. Any other colour is the page's own and is kept.
NEUTRAL_INKS = {"#57606a", "#6e7781", "#8c959f", "#444444", "#1f2328", "grey", "gray", "black"}

_SIZES = ("width", "height", "min_width", "max_width", "min_height", "max_height")
# per model id: {property: (base value, value last applied)}
_BASE: dict[str, dict[str, tuple]] = {}
_SCALE: dict[str, float] = {}  # per figure id: the size scale last applied


def _scaled(model, prop: str, factor: float, kind: str = "num") -> None:
    """Set ``model.prop`` to its base value × factor, remembering the base (None stays None)."""
    if not hasattr(model, prop):
        return
    current = getattr(model, prop)
    seen = _BASE.setdefault(model.id, {})
    base, applied = seen.get(prop, (current, current))
    if current != applied:  # changed by the page since: that is the new base
        base = current
    numeric = isinstance(base, (int, float)) and not isinstance(base, bool)
    if base is None or (kind != "px" and not numeric):  # unset, "auto", a field spec: leave it
        seen[prop] = (base, current)
        return
    if kind == "px":
        text = str(base)
        if not text.endswith("px"):
            seen[prop] = (base, current)
            return
        value = f"{round(float(text[:-2]) * factor)}px"
    elif kind == "int":
        value = round(base * factor)
    else:
        value = base * factor
    if value != current:
        setattr(model, prop, value)
    seen[prop] = (base, value)


def _ink(model, prop: str, theme: str, colour: str) -> None:
    """Follow the theme with a neutral grey the page chose; keep the original for light."""
    current = getattr(model, prop)
    seen = _BASE.setdefault(model.id, {})
    base, applied = seen.get(prop, (current, current))
    if current != applied:
        base = current
    if not isinstance(base, str) or base.lower() not in NEUTRAL_INKS:
        seen[prop] = (base, current)
        return
    value = base if theme == "light" else colour
    if value != current:
        setattr(model, prop, value)
    seen[prop] = (base, value)


def set_size(fig, **sizes) -> None:
    """Give a figure a new base size (e.g. a height that follows the data), scaled for the
    view it is in."""
    scale = _SCALE.get(fig.id, 1.0)
    seen = _BASE.setdefault(fig.id, {})
    for prop, value in sizes.items():
        applied = None if value is None else round(value * scale)
        seen[prop] = (value, applied)
        setattr(fig, prop, applied)


def style_figure(fig, theme: str = "light", present: bool = False) -> None:
    """Restyle a figure in place for a theme, and for the presenter view (a larger figure, large
    type, thick lines and markers)."""
    c = THEMES.get(theme, THEMES["light"])
    font = PRESENT_FONT if present else 1.0
    size = PRESENT_SIZE if present else 1.0
    line = PRESENT_LINE if present else 1.0
    _SCALE[fig.id] = size
    for prop in _SIZES:
        _scaled(fig, prop, size, "int")
    for prop in ("min_border_left", "min_border_right", "min_border_top", "min_border_bottom"):
        _scaled(fig, prop, size, "int")
    fig.background_fill_color = c["background"]
    fig.border_fill_color = c["background"]
    fig.outline_line_color = c["grid"]
    if fig.title is not None:
        fig.title.text_color = c["text"]
        fig.title.text_font_size = f"{round(14 * font)}px"
    for axis in [*fig.xaxis, *fig.yaxis]:
        axis.axis_label_text_color = c["text"]
        axis.major_label_text_color = c["axis"]
        axis.axis_line_color = c["axis"]
        axis.major_tick_line_color = c["axis"]
        axis.minor_tick_line_color = c["axis"]
        axis.axis_label_text_font_size = f"{round(13 * font)}px"
        axis.major_label_text_font_size = f"{round(11 * font)}px"
        axis.axis_label_text_font_style = "normal"
        axis.axis_line_width = 2 if present else 1
        axis.major_tick_line_width = 2 if present else 1
        axis.major_tick_out = 7 if present else 6
    for grid in [*fig.xgrid, *fig.ygrid]:
        grid.grid_line_color = c["grid"]
        grid.grid_line_width = 1.5 if present else 1
    if fig.legend:
        for legend in fig.legend:
            legend.background_fill_color = c["background"]
            legend.background_fill_alpha = 0.85
            legend.label_text_color = c["text"]
            legend.border_line_color = c["grid"]
            legend.inactive_fill_color = c["background"]
            _scaled(legend, "label_text_font_size", font, "px")
            for prop in ("glyph_width", "glyph_height", "spacing", "label_standoff",
                         "label_height", "label_width"):
                _scaled(legend, prop, size, "int")
    for r in fig.renderers:
        glyph = getattr(r, "glyph", None)
        if glyph is None:
            continue
        for g in (glyph, getattr(r, "nonselection_glyph", None), getattr(r, "hover_glyph", None)):
            if g is None:
                continue
            if hasattr(g, "line_width"):
                _scaled(g, "line_width", line)
            if type(g).__name__ == "Scatter":
                _scaled(g, "size", PRESENT_MARKER if present else 1.0)
            if hasattr(g, "text_font_size"):
                _scaled(g, "text_font_size", size, "px")  # as the cells grow
    for item in fig.center:
        kind = type(item).__name__
        if kind == "Span":
            _scaled(item, "line_width", line)
            _ink(item, "line_color", theme, c["muted"])
        elif kind == "Label":
            _scaled(item, "text_font_size", font, "px")
            if item.background_fill_color is None:
                _ink(item, "text_color", theme, c["muted"])
    for item in fig.right + fig.left + fig.above + fig.below:
        if type(item).__name__ == "ColorBar":
            item.background_fill_color = c["background"]
            item.major_label_text_color = c["axis"]
            item.title_text_color = c["text"]
            item.major_label_text_font_size = f"{round(11 * font)}px"
            item.title_text_font_size = f"{round(12 * font)}px"
            item.major_tick_line_color = c["axis"]
            _scaled(item, "width", size, "int")


# Panel widgets: their insides are in shadow roots, which the page's stylesheet does not reach,
# but CSS custom properties inherit into them. This sheet (given to a widget's ``stylesheets``)
# draws sliders from the page's --lab-* colours (set for light and dark in assets/lab.css), lets
# long labels wrap instead of running into the next widget, and makes keyboard focus plain.
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
input:focus-visible, select:focus-visible, textarea:focus-visible {
  outline: 3px solid var(--accent, #0072B2); outline-offset: 2px; }
.noUi-handle:focus { outline: 3px solid var(--accent, #0072B2); outline-offset: 2px; }
"""

PRESENT_WIDGET = 1.3  # widgets' fixed widths in the presenter view (their type is larger there)
_WIDGET_BASE: dict[int, tuple] = {}


def style_widget(widget):
    """Give a Panel widget the site's slider colours, wrapping labels and a visible focus."""
    widget.stylesheets = [*widget.stylesheets, WIDGET_CSS]
    return widget


def scale_widgets(widgets, present: bool) -> None:
    """Widen fixed-width widgets in the presenter view (larger type needs the room); restore
    their widths exactly when it is left."""
    factor = PRESENT_WIDGET if present else 1.0
    for w in widgets:
        current = w.width
        base, applied = _WIDGET_BASE.get(id(w), (current, current))
        if current != applied:
            base = current
        if base is None:
            continue
        value = round(base * factor)
        if value != current:
            w.width = value
        _WIDGET_BASE[id(w)] = (base, value)
