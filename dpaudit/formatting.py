"""Plain-number formatting shared by the command line and the printed reports (standard library
only, so the command line can import it without NumPy).

A bound is printed with six decimals between 1e-3 and 1e5 and in scientific notation outside,
so that every value from 5e-324 to 1.8e308 stays one short, readable token. A *certified upper
bound* is printed rounded up (:func:`fmt_up`) and a *lower bound* rounded down
(:func:`fmt_down`): the printed number, read back as a double, is itself a valid bound (never
below, resp. above, the JSON value); :func:`fmt` rounds to nearest, for values that bound
nothing. JSON keeps full precision.

>>> fmt(None), fmt(0.0), fmt(633.9298511), fmt(2.5e-7), fmt(1.5e6)
('n/a', '0', '633.929851', '2.500000e-07', '1.500000e+06')
>>> fmt_up(1.1286240742), fmt(1.1286240742), fmt_down(1.1286240742)
('1.128625', '1.128624', '1.128624')
>>> fmt_up(1e-300), fmt_up(1e308), fmt_up(5e-324), fmt_up(float("inf"))
('1.000000e-300', '1.000000e+308', '4.940656e-324', 'inf')
>>> fmt_up(99999.9999999), fmt_down(0.0394399, 4), fmt_up(0.14859, 4)
('100000.000000', '0.0394', '0.1486')
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

__all__ = ["fmt", "fmt_up", "fmt_down"]


def _format(v: float | None, digits: int, rounding: str) -> str:
    if v is None:
        return "n/a"
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    exact = Decimal(v)  # the binary value itself: rounding in a direction is then exact
    step = Decimal(1).scaleb(-digits)
    if 1e-3 <= abs(v) < 1e5:
        return f"{exact.quantize(step, rounding=rounding):f}"
    exponent = exact.adjusted()
    mantissa = exact.scaleb(-exponent).quantize(step, rounding=rounding)
    if abs(mantissa) >= 10:  # 9.9999996 rounded up to 10: carry into the exponent
        exponent += 1
        mantissa = exact.scaleb(-exponent).quantize(step, rounding=rounding)
    return f"{mantissa:f}e{exponent:+03d}"


def fmt(v: float | None, digits: int = 6) -> str:
    """A value as printed in tables, rounded to nearest: ``digits`` decimals, scientific notation
    below 1e-3 or from 1e5, ``n/a`` for a missing value."""
    return _format(v, digits, ROUND_HALF_EVEN)


def fmt_up(v: float | None, digits: int = 6) -> str:
    """A certified upper bound as printed: like :func:`fmt`, but the printed number, read back as
    a double, is never below the bound (rounded to nearest when that already holds, else up)."""
    text = _format(v, digits, ROUND_HALF_EVEN)
    if v is None or not math.isfinite(v) or float(text) >= v:
        return text
    return _format(v, digits, ROUND_CEILING)


def fmt_down(v: float | None, digits: int = 6) -> str:
    """A lower bound as printed: like :func:`fmt`, but the printed number, read back as a double,
    is never above the bound (rounded to nearest when that already holds, else down)."""
    text = _format(v, digits, ROUND_HALF_EVEN)
    if v is None or not math.isfinite(v) or float(text) <= v:
        return text
    return _format(v, digits, ROUND_FLOOR)
