"""Colours and styling for Bokeh figures: light/dark themes and the presenter view.

Palettes are colour-blind safe: a diverging blue-white-red (ColorBrewer RdBu, listed as safe for
colour-blind readers) for signed values, and Okabe-Ito (Bokeh's Colorblind8) for lines.
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
    "dark": {"background": "#161b22", "text": "#e6edf3", "grid": "#30363d", "axis": "#9da7b3",
             "muted": "#9da7b3", "accent": "#56B4E9"},
}


def style_figure(fig, theme: str = "light", present: bool = False) -> None:
    """Restyle a figure in place for a theme, and for the presenter view (large type, thick lines)."""
    c = THEMES.get(theme, THEMES["light"])
    scale = 1.6 if present else 1.0
    fig.background_fill_color = c["background"]
    fig.border_fill_color = c["background"]
    fig.outline_line_color = c["grid"]
    if fig.title is not None:
        fig.title.text_color = c["text"]
        fig.title.text_font_size = f"{round(14 * scale)}px"
    for axis in [*fig.xaxis, *fig.yaxis]:
        axis.axis_label_text_color = c["text"]
        axis.major_label_text_color = c["axis"]
        axis.axis_line_color = c["axis"]
        axis.major_tick_line_color = c["axis"]
        axis.minor_tick_line_color = c["axis"]
        axis.axis_label_text_font_size = f"{round(13 * scale)}px"
        axis.major_label_text_font_size = f"{round(11 * scale)}px"
        axis.axis_label_text_font_style = "normal"
    for grid in [*fig.xgrid, *fig.ygrid]:
        grid.grid_line_color = c["grid"]
    if fig.legend:
        for legend in fig.legend:
            legend.background_fill_color = c["background"]
            legend.background_fill_alpha = 0.85
            legend.label_text_color = c["text"]
            legend.label_text_font_size = f"{round(12 * scale)}px"
            legend.border_line_color = c["grid"]
    for r in fig.renderers:
        glyph = getattr(r, "glyph", None)
        if glyph is None:
            continue
        base = r.tags[0] if r.tags and isinstance(r.tags[0], (int, float)) else None
        if base is not None and hasattr(glyph, "line_width"):
            glyph.line_width = base * (2.0 if present else 1.0)
    for layout in fig.center:
        if type(layout).__name__ == "Span":
            layout.line_width = 3 if present else 1.5
    for item in fig.right + fig.left + fig.above + fig.below:
        if type(item).__name__ == "ColorBar":
            item.background_fill_color = c["background"]
            item.major_label_text_color = c["axis"]
            item.title_text_color = c["text"]
            item.major_label_text_font_size = f"{round(11 * scale)}px"
