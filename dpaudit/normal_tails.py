"""Normal tail functions without SciPy, for the exact GDP ↔ (ε, δ) conversions.

Every run certifies its privacy through :mod:`dpaudit.conversions`; importing ``scipy.special``
for three functions cost more than half of a small run's start-up (≈ 60 ms of ≈ 270 ms). Here
they are built on the C library's ``erfc``/``erf`` (Python's :mod:`math`, correctly rounded to
about one ulp) and NumPy:

* :func:`erfcx` — the scaled complementary error function e^{x²} erfc(x). For 0 ≤ x < 8,
  ``math.erfc(x)`` times e^{x²}, with x² split exactly into a double and its rounding error
  (Dekker 1971, "A floating-point technique for extending the available precision"), so the
  exponential adds no error of order x²·ulp; for x ≥ 8 the asymptotic series (1/(x√π))·Σ (−1)^n
  (2n−1)!!/(2x²)^n, whose truncation after 30 terms is below 1e-23 relative there; for x < 0,
  2e^{x²} − erfcx(−x) (a difference of a term ≥ 2 and one ≤ 1: no cancellation), ``inf`` once
  e^{x²} overflows.
* :func:`erf` — ``math.erf`` elementwise.
* :func:`log_ndtr` and its inverse :func:`ndtri_exp` — log Φ(x) from :func:`erfcx` (no
  underflow for any x), and the x with log Φ(x) = y by Newton's method from the normal-tail
  approximation (in the lower tail; the upper half by symmetry).
* :func:`erfinv` — the inverse error function on (−1, 1): Newton's method on ``math.erf`` for
  |x| ≤ ½ (relative-accurate down to the smallest normal doubles), −Φ^{-1}((1 − |x|)/2)/√2 through
  :func:`ndtri_exp` above (1 − |x| is exact there).

Measured against 50-digit mpmath (``tests/test_normal_tails.py``, property-based): relative
error of :func:`erfcx` ≤ 2e-15 on x ∈ [−26.5, 1e300] (SciPy's: up to 5.7e-14 on the same
points), of :func:`log_ndtr` ≤ 2e-15 (SciPy's: 2.2e-13), of :func:`ndtri_exp` ≤ 1e-14 (SciPy's:
5.4e-13) — within the 1e-14 that :func:`dpaudit.conversions.log_delta_error_bound` allows. The
C library's functions are called once per element (≈ 60 ns each): the conversions call these
on at most a few thousand elements at a time; arrays of up to 32 elements are evaluated in plain
Python, larger ones with NumPy, by the same operations (the same bits, tested). Heavy numerical
code elsewhere keeps to ``scipy.special`` (:func:`dpaudit.numerics.special`).

Example:
    >>> round(float(erfcx(1.0)), 12), round(float(erf(0.5)), 12)
    (0.427583576156, 0.520499877813)
    >>> float(ndtri_exp(log_ndtr(-40.0)))
    -40.0
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["erfcx", "erf", "erfinv", "log_ndtr", "ndtri_exp"]

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_LOG_HALF = math.log(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitting constant
_ASYMPTOTIC_FROM = 8.0
_ASYMPTOTIC_TERMS = 30
_OVERFLOW_FROM = 27.0  # erfcx(x) > e^{x²} overflows for x < −27 (e^{729})


_SCALAR_UP_TO = 32  # arrays up to this size go element by element in plain Python (same bits)


def _elementwise(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    flat = x.reshape(-1)
    return np.fromiter(map(fn, flat.tolist()), dtype=float, count=flat.size).reshape(x.shape)


def _exp(v: float) -> float:
    """``math.exp``, with ``inf`` instead of ``OverflowError``."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _square1(x: float) -> tuple[float, float]:
    """x² = hi + lo exactly (Dekker's product; |x| < 1e150)."""
    c = _SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    return hi, ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl


def _exp_square1(x: float, scale: float = 1.0) -> float:
    """e^{scale·x²} with x² split exactly, so only exp's own rounding remains."""
    hi, lo = _square1(x)
    return _exp(scale * hi) * (1.0 + scale * lo)


def _asymptotic1(x: float) -> float:
    s = 0.5 / (x * x)
    t = 1.0
    for n in range(_ASYMPTOTIC_TERMS, 0, -1):  # 1 − s(1 − 3s(1 − 5s(…))), Horner form
        t = 1.0 - (2 * n - 1) * s * t
    return _INV_SQRT_PI * t / x


def _erfcx1(x: float) -> float:
    """:func:`erfcx` of one float."""
    if x < 0:
        return math.inf if x < -_OVERFLOW_FROM else 2.0 * _exp_square1(-x) - _erfcx1(-x)
    if x < _ASYMPTOTIC_FROM:
        return math.erfc(x) * _exp_square1(x)
    return _asymptotic1(x)


def _square(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_square1` elementwise (the same operations, so the same bits)."""
    c = _SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    return hi, ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl


def _exp_square(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """:func:`_exp_square1` elementwise (the exponential is the C library's, as there)."""
    hi, lo = _square(x)
    return _elementwise(_exp, scale * hi) * (1.0 + scale * lo)


def _erfcx_nonnegative(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    near = x < _ASYMPTOTIC_FROM
    if np.any(near):
        xn = x[near]
        out[near] = _elementwise(math.erfc, xn) * _exp_square(xn)
    far = ~near
    if np.any(far):
        xf = x[far]
        with np.errstate(over="ignore", under="ignore"):
            s = 0.5 / (xf * xf)
        t = np.ones_like(s)
        for n in range(_ASYMPTOTIC_TERMS, 0, -1):  # as in _asymptotic1
            t = 1.0 - (2 * n - 1) * s * t
        out[far] = _INV_SQRT_PI * t / xf
    return out


def erfcx(x: float | np.ndarray) -> np.ndarray:
    """e^{x²}·erfc(x), elementwise, for every double x (see the module docstring). Small arrays
    are evaluated one float at a time in plain Python, larger ones with NumPy by the same
    operations: the same bits either way (tested).

    >>> erfcx(np.array([0.0, 1e300])).tolist()[0], float(erfcx(1e300)) > 0
    (1.0, True)
    """
    a = np.asarray(x, dtype=float)
    if a.size <= _SCALAR_UP_TO:
        return _elementwise(_erfcx1, a)
    out = np.empty_like(a)
    neg = a < 0
    pos = ~neg
    if np.any(pos):
        out[pos] = _erfcx_nonnegative(a[pos])
    if np.any(neg):
        xn = np.minimum(-a[neg], _OVERFLOW_FROM)
        with np.errstate(over="ignore"):
            val = 2.0 * _exp_square(xn) - _erfcx_nonnegative(xn)
        out[neg] = np.where(-a[neg] > _OVERFLOW_FROM, np.inf, val)
    return out


def erf(x: float | np.ndarray) -> np.ndarray:
    """The error function, elementwise (``math.erf``).

    >>> erf(np.array([0.0, 10.0])).tolist()
    [0.0, 1.0]
    """
    a = np.asarray(x, dtype=float)
    return _elementwise(math.erf, a)


def log_ndtr(x: float | np.ndarray) -> np.ndarray:
    """log Φ(x) for every double x, without underflow: log(½ erfcx(−x/√2)) − x²/2 for x < 0,
    log1p(−½ erfcx(x/√2)·e^{−x²/2}) for x ≥ 0 (x² split exactly, as in :func:`erfcx`).

    >>> round(float(log_ndtr(-100.0)), 4)  # mpmath: −5005.5242086942050886…
    -5005.5242
    """
    a = np.asarray(x, dtype=float)
    out = np.empty_like(a)
    neg = a < 0
    if np.any(neg):
        xn = a[neg]
        out[neg] = np.log(0.5 * erfcx(-xn / _SQRT2)) - 0.5 * xn * xn
    pos = ~neg
    if np.any(pos):
        xp = a[pos]
        with np.errstate(over="ignore", under="ignore"):
            tail = 0.5 * erfcx(xp / _SQRT2) * _exp_square(np.minimum(xp, 1e150), -0.5)
        out[pos] = np.log1p(-tail)
    return out


def _lower_quantile(t: np.ndarray) -> np.ndarray:
    """The x ≤ 0 with log Φ(x) = t, for finite t ≤ log ½: Newton's method on log Φ from the
    normal-tail approximation (log Φ is concave there, so the iterates approach from one side).
    Below t = −1e30 the tail's correction terms (log|x| and 1/x²) are below an ulp of x²/2:
    x = −√2·√(−t) there, written so that it does not overflow."""
    far = t < -1e30
    if np.any(far):
        out = np.empty_like(t)
        out[far] = -_SQRT2 * np.sqrt(-t[far])
        if not np.all(far):
            out[~far] = _lower_quantile(t[~far])
        return out
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = -np.sqrt(np.maximum(-2.0 * t - np.log(np.maximum(-4.0 * math.pi * t, 1.0)), 0.0))
        for _ in range(60):
            lp = log_ndtr(x)
            # d log Φ/dx = φ(x)/Φ(x) = √(2/π)/erfcx(−x/√2) for x ≤ 0 (no e^{±x²/2} to cancel)
            step = (lp - t) * erfcx(-x / _SQRT2) / _SQRT_2_OVER_PI
            step = np.where(np.isfinite(step), step, 0.0)
            x = np.minimum(x - step, 0.0)
            if np.all(np.abs(step) <= 4e-16 * np.maximum(np.abs(x), 1e-300)):
                break
    return x


def ndtri_exp(y: float | np.ndarray) -> np.ndarray:
    """The x with log Φ(x) = y, for y < 0 (−inf at y = −inf; ``ValueError`` for y ≥ 0 or NaN).

    For y ≤ log ½, Newton's method on log Φ (:func:`_lower_quantile`); above it, by symmetry,
    x = −x' with log Φ(x') = log(1 − e^y), so no digit is lost as y → 0.

    >>> round(float(ndtri_exp(np.log(0.975))), 10), round(float(ndtri_exp(-1e-300)), 6)
    (1.9599639845, 37.047096)
    """
    a = np.asarray(y, dtype=float)
    if np.any(np.isnan(a)) or np.any(a >= 0):
        raise ValueError("y must be in [-inf, 0)")
    out = np.full(a.shape, -np.inf)
    low = np.isfinite(a) & (a <= _LOG_HALF)
    if np.any(low):
        out[low] = _lower_quantile(a[low])
    high = a > _LOG_HALF
    if np.any(high):
        out[high] = -_lower_quantile(np.log(-np.expm1(a[high])))
    return out


_NEWTON_FROM_SERIES = 5  # steps from the two-term series: its error ≤ 1.1e-2 at |x| = ½, squared each step


def erfinv(x: float | np.ndarray) -> np.ndarray:
    """The y with erf(y) = x, for −1 < x < 1 (``ValueError`` otherwise or for NaN).

    For |x| ≤ ½, Newton's method on ``math.erf`` from y₀ = (√π/2)(x + πx³/12) (its relative error
    is at most 1.1e-2 there and is squared by each step; erf' = (2/√π)e^{−y²} ≥ 0.89); above,
    y = −Φ^{-1}((1 − |x|)/2)/√2 with the sign of x, through :func:`ndtri_exp`.

    >>> round(float(erfinv(0.5)), 12), round(float(erfinv(1e-300)) / 1e-300, 15)  # √π/2 = 0.886226925452758…
    (0.476936276204, 0.886226925452758)
    """
    a = np.asarray(x, dtype=float)
    if np.any(np.isnan(a)) or np.any(np.abs(a) >= 1.0):
        raise ValueError("x must be in (-1, 1)")
    v = np.abs(a)
    out = np.empty_like(v)
    near = v <= 0.5
    if np.any(near):
        t = v[near]
        y = _SQRT_PI_OVER_2 * (t + (math.pi / 12.0) * t**3)
        for _ in range(_NEWTON_FROM_SERIES):
            y = y - (erf(y) - t) * _SQRT_PI_OVER_2 * np.exp(y * y)
        out[near] = y
    far = ~near
    if np.any(far):
        out[far] = -ndtri_exp(np.log((1.0 - v[far]) / 2.0)) / _SQRT2
    return np.copysign(out, a)
