"""Plain-number formatting shared by the command line and the printed reports (standard library
only, so the command line can import it without NumPy).

>>> fmt(None), fmt(0.0), fmt(633.9298511), fmt(2.5e-7), fmt(1.5e6)
('n/a', '0', '633.929851', '2.500000e-07', '1.500000e+06')
"""

from __future__ import annotations

__all__ = ["fmt"]


def fmt(v: float | None) -> str:
    """A bound as printed in tables: six decimals, scientific notation below 1e-3 or from 1e5,
    ``n/a`` for a missing value."""
    if v is None:
        return "n/a"
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.6e}"
    return f"{v:.6f}"
