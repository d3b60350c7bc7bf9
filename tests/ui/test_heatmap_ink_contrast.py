"""Every number in a heatmap cell has a contrast of 4.5:1 or more against its own cell, in both
themes (issue 20, "Legible figures"). The ink changed at 0.55 of the scale's limit, inside the
third colour from each end, so that colour had both inks: in dark embeds 3.2:1 to 3.4:1, in the
light theme 3.4:1 to 4.2:1 (the third red had less than 4.5:1 with either ink). Guarded here: for values across every colour of the scale, the colour BokehJS gives
each cell (its LinearColorMapper's rule, worked out here on its own) and the ink the page puts
its number in (Heatmap.frames, and gates' per-frame scales), in each theme's colours as the
shell swaps them in (ui/theme.py HEATMAP); and that the choice is in the page's contract.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ui.contract import contract
from ui.page import Run
from ui.theme import HEATMAP, INK_STRONG_AT, contrast
from ui.views import Heatmap

N = len(HEATMAP["light"]["palette"])


def bokeh_index(value: float, low: float, high: float) -> int:
    """BokehJS 3's LinearColorMapper.value_to_index, clamped to the palette as it draws."""
    if value == high:
        return N - 1
    index = math.floor((value - low) * (1 / (high - low)) / (1 / N))
    return min(max(index, 0), N - 1)


def values(limit: float) -> list[float]:
    """Each colour's middle and both of its edges (and just inside them), over the scale."""
    edges = [-limit + 2 * limit * k / N for k in range(N + 1)]
    out = [0.0, limit, -limit]
    for a, b in zip(edges, edges[1:]):
        out += [a, (a + b) / 2, np.nextafter(b, a), np.nextafter(a, b)]
    return out


def worst(cells: list[tuple[float, float, str]]) -> list[tuple]:
    """(theme, value, palette index, contrast) of each number below 4.5:1; ``cells`` holds
    (value, limit, which glyph's column the number is in: "light" (ink) or "dark" (ink_strong))."""
    bad = []
    for theme, colours in HEATMAP.items():
        for value, limit, column in cells:
            i = bokeh_index(value, -limit, limit)
            ink = colours["ink" if column == "light" else "ink_strong"]
            c = contrast(colours["palette"][i], ink)
            if c < 4.5:
                bad.append((theme, value, i, round(c, 2)))
    return bad


def columns(frames: dict, t: int) -> list[str]:
    return ["light" if a is not None else "dark" for a, b in zip(frames["light"][t], frames["dark"][t])]


@pytest.mark.parametrize("limit", [1.0, 1.5, 2.392, 1e-3, 37.0])
def test_every_cells_number_has_contrast_on_its_colour(limit):
    vs = values(limit)
    h = Heatmap("S", "S", row_label="i", col_label="j")
    m = np.array(vs + [0.0] * (-len(vs) % 8)).reshape(1, -1, 8)  # ≤ 64 cells: all labelled
    assert m.size <= Heatmap.MAX_LABELLED
    run = Run(t_max=0, data={"S": m, "S_limit": np.array(limit)})
    h.setup(run)
    cells = list(zip(m.ravel().tolist(), [limit] * m.size, columns(h.frames(run), 0)))
    assert len(cells) == m.size and worst(cells) == []


def test_per_frame_scales_too():
    """Gates' heatmaps have a scale per frame (``Heatmap.strong`` with one limit per row)."""
    limits = np.array([1.0, 0.37, 5.0])
    flat = np.array([values(lim)[:40] for lim in limits])
    strong = Heatmap.strong(flat, limits[:, None])
    cells = [(v, lim, "dark" if s else "light")
             for row, lim, srow in zip(flat.tolist(), limits, strong.tolist()) for v, s in zip(row, srow)]
    assert worst(cells) == []


def test_the_choice_is_in_the_pages_contract():
    assert INK_STRONG_AT and all(0 <= i < N for i in INK_STRONG_AT)
    heatmap = contract()["heatmap"]
    assert {t: c["ink_strong_at"] for t, c in heatmap.items()} == {t: list(INK_STRONG_AT) for t in HEATMAP}
