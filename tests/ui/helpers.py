"""What the page tests share: a page's picture as plain values, compared with NaN equal to NaN."""

from __future__ import annotations

import numpy as np


def plain(value):
    """Nested arrays, lists and numbers as plain Python values (NaN stays NaN). A numeric array
    stays an array (a copy): ``same`` compares it whole, which is about fifty times cheaper than
    a list of Python floats (the generated page tests compare hundreds of pictures)."""
    if isinstance(value, np.ndarray):
        return value.copy() if value.dtype.kind in "biuf" else plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


def prop(model, name: str):
    """A Bokeh model's property, None where its class has none. (getattr with a default went
    through Bokeh's "did you mean" search for every miss: a tenth of a hybrid test's time.)"""
    return getattr(model, name) if model is not None and hasattr(type(model), name) else None


def picture(page) -> dict:
    """Everything a page draws for its current run and t: every frame of the run, the data of
    every glyph, the axis ranges and colour scales of every figure, and what is shown at t."""
    out = {"frames": plain(dict(page.frames.data)), "t": page.t, "info": page.info.text}
    if page.exercise_box is not None:  # "Your turn": its numbers follow the exercise setting
        out["exercise"] = page.exercise_box.prompt.object
    for i, view in enumerate(page.views):
        for j, fig in enumerate(view.figures()):
            key = f"{i}.{j}"
            out[key + ".ranges"] = [prop(fig.x_range, "start"), prop(fig.x_range, "end"),
                                    prop(fig.y_range, "start"), prop(fig.y_range, "end")]
            for k, r in enumerate(fig.renderers):
                source = prop(r, "data_source")
                if source is not None:
                    out[f"{key}.r{k}"] = plain(dict(source.data))
                mapper = prop(prop(r, "glyph"), "color_mapper")
                if mapper is not None:
                    out[f"{key}.r{k}.scale"] = (mapper.low, mapper.high)
    return out


def same(a, b) -> bool:
    """Equal pictures, treating NaN as equal to NaN (an array and a list of the same numbers
    are the same picture)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
            return x.shape == y.shape and bool(np.array_equal(
                x, y, equal_nan=x.dtype.kind == "f" and y.dtype.kind == "f"))
        return same(plain(x.tolist()), plain(y.tolist()))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def heat(view) -> np.ndarray:
    """The matrix a ui.views.Heatmap shows now (its image), as rows × cols."""
    return np.asarray(view.image_source.data["image"][0]).reshape(view.rows, view.cols)


def other_values(page, name) -> list:
    """Valid values of setting ``name`` other than the current one, nearest first (for the
    generated tests; a page may still refuse some in combination with its other settings)."""
    import param  # noqa: PLC0415

    p, now = page.param[name], getattr(page, name)
    if name in page.examples:
        return [v for v in page.examples[name] if v != now]
    if isinstance(p, param.Boolean):
        return [not now]
    if isinstance(p, param.ListSelector):
        options = [o for o in p.objects if o not in now]
        return [[*now[:-1], o] for o in options] + ([now[:-1]] if len(now) > 1 else [])
    if isinstance(p, param.Selector):
        return [o for o in p.objects if o != now]
    lo, hi = p.bounds or (None, None)
    step = 1 if isinstance(p, param.Integer) else (
        round((hi - lo) / 8, 6) if hi is not None and lo is not None else 0.1)
    out = [now + step, now - step]
    return [v for v in out if (lo is None or v >= lo) and (hi is None or v <= hi)]


def other_value(page, name):
    return other_values(page, name)[0]


def columns(sources: dict) -> dict:
    """Every column of the named ColumnDataSources, as ``{"name.column": plain values}``."""
    return {f"{name}.{key}": plain(col) for name, source in sources.items()
            for key, col in source.data.items()}
