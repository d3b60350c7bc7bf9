"""A run's table as CSV text, through the ``csv`` module.

A cell that a spreadsheet would read as a formula (starting with = + - @, a tab or a carriage
return) is prefixed with an apostrophe, unless it is a plain number: a model named
``=HYPERLINK(...)`` must stay text when the file is opened.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # np.float64 too, whose repr is "np.float64(…)" in numpy 2
        return repr(float(value)) if math.isfinite(value) else str(float(value))
    if hasattr(value, "item"):  # a numpy scalar
        return _cell(value.item())
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        return "'" + text
    return text


def to_csv(table: Mapping[str, Sequence]) -> str:
    """``{column name: values}`` (all the same length) as CSV with a header row."""
    names = list(table)
    lengths = {len(table[n]) for n in names}
    if len(lengths) > 1:
        raise ValueError(f"CSV columns differ in length: {sorted(lengths)}")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([_cell(n) for n in names])
    # numpy columns as Python values at once (in C), not a scalar's .item() per cell
    columns = [table[n].tolist() if hasattr(table[n], "tolist") else table[n] for n in names]
    for row in zip(*columns):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()
