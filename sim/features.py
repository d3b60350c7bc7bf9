"""Explicit preprocessing a caller (or a page) chooses: feature maps φ and key normalisation.

The rules never apply these on their own, except linear attention's `feature_map` option, which
names φ in its equations (S ← S + φ(k) vᵀ).
"""

from __future__ import annotations

import numpy as np

from .validation import as_float_array, check_choice, check_finite, check_float

Array = np.ndarray

FEATURE_MAPS = ("identity", "elu+1")


def feature_map(name: str, x: Array) -> Array:
    """φ(x), elementwise. "identity": φ(x) = x. "elu+1": φ(x) = x + 1 for x > 0, else eˣ,
    so every feature is positive and the normalised output is a weighted average
    (Katharopoulos et al., 2020). Any shape in, same shape out.
    """
    check_choice("feature_map", name, FEATURE_MAPS)
    x = check_finite("x", as_float_array("x", x))
    return apply_feature_map(name, x)


def apply_feature_map(name: str, x: Array) -> Array:
    """`feature_map` without the checks (used inside `step`, where inputs are already checked)."""
    if name == "identity":
        return x
    # exp of the clipped value: no overflow warning from the branch np.where throws away
    return np.where(x > 0.0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def l2_normalize(x: Array, eps: float = 1e-12) -> Array:
    """x / ‖x‖ along the last axis; rows with ‖x‖ < eps stay zero. (d,) or (T, d) in and out.

    x: finite real numbers (rows near 1e300 or 1e-300 are normalised as x / max|x| first, so
    no square overflows). eps: a real number in (0, 1e300].
    """
    x = check_finite("x", as_float_array("x", x))
    if x.ndim == 0:
        raise ValueError("x: expected a vector (d,) or a matrix (T, d), got a scalar")
    eps = check_float("eps", eps, 0.0, 1e300, low_open=True, accepted="(0, 1e300]")
    with np.errstate(over="ignore", under="ignore"):
        norm = np.linalg.norm(x, axis=-1, keepdims=True)  # (…, 1)
        top = np.abs(x).max(axis=-1, keepdims=True) if x.shape[-1] else norm
        odd = (top > 1e150) | ((top < 1e-150) & (top > 0.0))  # squares leave float64's range
        if not odd.any():
            return np.where(norm < eps, 0.0, x / np.maximum(norm, eps))
        # rows far from 1: normalise x / max|x| first, so no square overflows or underflows
        safe = np.where(odd, top, 1.0)
        scaled = np.linalg.norm(x / safe, axis=-1, keepdims=True)  # ‖x‖ / max|x|, in [1, √d]
        norm = np.where(odd, top * scaled, norm)  # inf only past 1.8e308, which counts as ≥ eps
        unit = np.where(odd, x / safe / np.where(odd, scaled, 1.0), x / np.maximum(norm, eps))
    return np.where(norm < eps, 0.0, unit)
