"""Number formatting for readouts, captions and labels: one place for every page.

Readouts show short numbers that are exact where they are small integers or simple decimals;
anything that comes from a user (a model name, a link value) goes through ``text`` so it is
shown as text, never run as markup.
"""

from __future__ import annotations

import html

import numpy as np

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def sub(n: int) -> str:
    """An index as Unicode subscript digits (figure titles cannot render TeX)."""
    return str(n).translate(_SUB)


def num(x: float) -> str:
    """A readout number: 4 significant digits, scientific outside [1e-3, 1e5)."""
    x = float(x)
    if x == 0:
        return "0"
    if not np.isfinite(x):
        return str(x)
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.3e}"
    return f"{x:.4g}"


def cell(x: float, tiny: float = 0.0) -> str:
    """A number that fits a heatmap cell or a table cell: at most 7 characters.

    |x| below ``tiny`` (rounding residue, e.g. 1e-17 left where the delta rule erased a value
    exactly) reads "≈0"; the exact value stays in the hover and the CSV.
    """
    x = float(x)
    if x == 0:
        return "0"
    if not np.isfinite(x):
        return str(x)
    if abs(x) < tiny:
        return "≈0"
    if abs(x) >= 100 or abs(x) < 0.01:
        return f"{x:.0e}".replace("e-0", "e-").replace("e+0", "e")
    return f"{x:.2f}"


def vec(a, tiny: float = 0.0) -> str:
    """A vector as "(1, 0.5, -2)"; entries below ``tiny`` in size (rounding residue, as in
    ``cell``) read "≈0"."""
    return "(" + ", ".join("≈0" if 0 < abs(x) < tiny else num(x) for x in np.ravel(a)) + ")"


def count(n: float) -> str:
    """A whole number with thousands separators."""
    return f"{int(round(float(n))):,}"


def ratio(x: float) -> str:
    """A ratio with thousands separators and at most two decimals (781.25, 25,000)."""
    return f"{float(x):,.2f}".rstrip("0").rstrip(".")


def plain(value: object, limit: int = 60) -> str:
    """Any outside value (a link, a typed model, a file) as one line of plain text: invisible
    and control characters shown as escapes (\\u200b), so what is quoted is what was given
    ("d=8\\u200b", not a "d=8" that contradicts "expected 4 to 32"), shortened to ``limit``
    characters. For text shown as text (notices go to the page with textContent); in HTML use
    ``text``."""
    s = str(value)[: limit + 8]
    if not s.isprintable():  # most text is: one check of the whole, not one a character
        s = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in s)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def text(value: object, limit: int = 60) -> str:
    """Any outside value as escaped HTML text (see ``plain``): markup shows, never runs."""
    return html.escape(plain(value, limit), quote=True)
