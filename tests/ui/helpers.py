"""What the page tests share: a page's plots as plain values, compared with NaN equal to NaN."""

from __future__ import annotations

import numpy as np


def plain(column) -> list:
    """A data column as plain Python values (NaN stays NaN: compare with ``same``)."""
    return [float(x) if isinstance(x, (float, np.floating)) else x
            for x in np.asarray(column).tolist()]


def columns(sources: dict) -> dict:
    """Every column of the named ColumnDataSources, as ``{"name.column": plain values}``."""
    return {f"{name}.{key}": plain(col) for name, source in sources.items()
            for key, col in source.data.items()}


def same(a: dict, b: dict) -> bool:
    """Equal snapshots, treating NaN as equal to NaN."""
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, list) and x and isinstance(x[0], float):
            if not np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True):
                return False
        elif x != y:
            return False
    return True


def heat(view) -> np.ndarray:
    """The matrix a ui.views.Heatmap shows (its image), as rows × cols."""
    return np.asarray(view.image_source.data["image"][0]).reshape(view.rows, view.cols)


def sizers_over_a_run(page, readout) -> set[str]:
    """Step ``page`` through its whole run: the texts ``readout`` (a ui.views.Readout) reserved
    room for, checking at each step that it shows the current text."""
    sizers = set()
    for _ in range(page.state.t_max):
        page.state.step()
        sizers.add(readout._sizer)
        assert readout.object in readout.pane.object
    return sizers
