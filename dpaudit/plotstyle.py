"""The look shared by every figure: distinct styles for many series, log axes fitted to the data.

Matplotlib's default cycle has ten colours, so the eleventh line of a legend repeats the first
one's; :func:`series_style` gives series ``i`` of ``n`` a colour *and* a line style (and, beyond
40 series, a marker), so no two series of one figure look alike. :func:`fit_log_axis` sets a log
axis to the positive finite values actually drawn (a zero or a tiny value dropped by the log
scale otherwise stretches the axis over hundreds of decades and flattens every curve).

Standard library only (matplotlib is imported by the callers that draw).

>>> [series_style(i, 3)["color"] for i in range(3)]
['tab:blue', 'tab:orange', 'tab:green']
>>> styles = [series_style(i, 19) for i in range(19)]
>>> len({(s["color"], s["linestyle"]) for s in styles})
19
>>> log_limits([0.0, 2.5, 7.2, float("inf"), -1.0])
(2.0, 10.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["COLOURS", "LINESTYLES", "MARKERS", "series_style", "log_limits", "fit_log_axis"]

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
           "tab:gray", "tab:olive", "tab:cyan")  # fmt: skip
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("", "o", "s", "^", "v", "D")


def series_style(i: int, n: int) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` of series ``i`` (0-based) of ``n``: ten colours, then
    the same colours dashed, dash-dotted and dotted, then with markers."""
    if not 0 <= i < max(n, 1):
        raise ValueError(f"i must be in [0, {n}), got {i}")
    colour = COLOURS[i % len(COLOURS)]
    style = LINESTYLES[(i // len(COLOURS)) % len(LINESTYLES)]
    marker = MARKERS[(i // (len(COLOURS) * len(LINESTYLES))) % len(MARKERS)]
    out: dict[str, Any] = {"color": colour, "linestyle": style}
    if marker:
        out.update(marker=marker, markevery=0.1, markersize=4)
    return out


def log_limits(values: Iterable[float], pad: float = 1.25) -> tuple[float, float] | None:
    """(low, high) of a log axis around the positive finite ``values`` with a margin of ``pad``
    (multiplicative, on a 1-2-5 grid when the span allows), or None if there are none."""
    pos = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    if not pos:
        return None
    lo, hi = min(pos) / pad, max(pos) * pad
    return _round_down(lo), _round_up(hi)


def _round_down(x: float) -> float:
    e = math.floor(math.log10(x))
    return max((m * 10.0**e for m in (1, 2, 5) if m * 10.0**e <= x), default=10.0**e)


def _round_up(x: float) -> float:
    e = math.floor(math.log10(x))
    return min((m * 10.0**e for m in (1, 2, 5, 10) if m * 10.0**e >= x), default=10.0 ** (e + 1))


def fit_log_axis(ax: Any, values: Iterable[float], which: str = "y") -> None:
    """Set ``ax``'s ``which`` axis to a log scale with limits fitted to ``values``
    (:func:`log_limits`)."""
    lim = log_limits(values)
    getattr(ax, f"set_{which}scale")("log")
    if lim is not None:
        getattr(ax, f"set_{which}lim")(*lim)
