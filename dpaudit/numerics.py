"""Small numerical helpers shared by the accounting, the auditor and the bandit analyses.

One implementation of each: :func:`bisect` (vectorised bisection of a monotone predicate that
keeps a bracket whose two ends stay on their own side), :func:`expand_bracket` (doubling
until the predicate flips) and :func:`minimise_zoom` (the minimum of a vectorised function over
a grid, refined by zooming in on the best point). Every root search in the toolkit that must end
on a *known side* of the root — a certified value is the feasible end, never the midpoint — goes through them.

Example:
    >>> import numpy as np
    >>> lo, hi = bisect(lambda x: x * x <= 2.0, 0.0, 2.0)
    >>> float(lo) <= 2 ** 0.5 <= float(hi), float(hi - lo) < 1e-15
    (True, True)
    >>> lo, hi = bisect(lambda x: x <= np.array([1.0, 3.0]), np.zeros(2), np.full(2, 4.0), xtol=1e-9)
    >>> np.round(hi, 6).tolist()
    [1.0, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

__all__ = ["bisect", "expand_bracket", "minimise_zoom", "div_up", "div_down", "div_up_array"]

Predicate = Callable[[np.ndarray], np.ndarray]


def bisect(
    below: Predicate,
    lo: float | np.ndarray,
    hi: float | np.ndarray,
    *,
    iters: int = 200,
    xtol: float = 0.0,
    rtol: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Bisection of a monotone predicate, elementwise over arrays.

    ``below(x)`` is True on ``[lo, root)`` and False on ``[root, hi]`` (a step function of x);
    the caller guarantees ``below(lo)`` and ``not below(hi)`` — they are not evaluated. Each
    step replaces ``lo`` or ``hi`` by the midpoint, so the invariant is kept exactly: the
    returned ``lo`` is always on the True side and ``hi`` on the False side. It stops after
    ``iters`` halvings, when ``hi − lo ≤ max(xtol, rtol·|hi|)`` everywhere, or when no float lies
    strictly between the ends.

    Returns ``(lo, hi)`` as float arrays of the broadcast shape (0-d for scalar input).
    """
    lo_a, hi_a = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    lo_a, hi_a = lo_a.copy(), hi_a.copy()
    for _ in range(int(iters)):
        mid = 0.5 * (lo_a + hi_a)
        open_ = (mid > lo_a) & (mid < hi_a) & (hi_a - lo_a > np.maximum(xtol, rtol * np.abs(hi_a)))
        if not np.any(open_):
            break
        up = np.asarray(below(mid), dtype=bool)
        lo_a = np.where(open_ & up, mid, lo_a)
        hi_a = np.where(open_ & ~up, mid, hi_a)
    return lo_a, hi_a


def expand_bracket(
    below: Predicate, start: float | np.ndarray, *, factor: float = 2.0, limit: float = 1e300
) -> np.ndarray:
    """The first ``start·factorᵏ`` (k ≥ 0) at which ``below`` is False, elementwise.

    ``start`` must be positive. Raises ``ValueError`` if ``below`` is still True at ``limit``.

    >>> float(expand_bracket(lambda x: x < 10.0, 1.0))
    16.0
    """
    x = np.array(start, dtype=float, copy=True)
    if np.any(~(x > 0)):
        raise ValueError(f"start must be positive, got {start!r}")
    while True:
        more = np.asarray(below(x), dtype=bool)
        if not np.any(more):
            return x
        if np.any(x[more] * factor > limit):
            raise ValueError(f"no bracket below {limit:g}: the predicate is still true there")
        x = np.where(more, x * factor, x)


def minimise_zoom(
    fun: Callable[[np.ndarray], np.ndarray], grid: np.ndarray, *, points: int = 17, rounds: int = 6
) -> tuple[float, float]:
    """(x, fun(x)) at the smallest value found: ``fun`` on ``grid`` (increasing), then ``rounds``
    times on ``points`` equally spaced points between the neighbours of the best point so far.

    ``fun`` is evaluated on whole arrays (one call per round) and NaN counts as +inf. The value
    returned is one that ``fun`` itself returned at the returned x — never an interpolation —
    so when every x gives a valid bound, so does the answer; the search affects tightness
    only. Each round shrinks the bracket by (points − 1)/2, so the defaults resolve x to
    1/8⁶ ≈ 4e-6 of the grid spacing.

    >>> x, v = minimise_zoom(lambda a: (a - 0.3) ** 2, np.linspace(0.0, 1.0, 11))
    >>> round(x, 6), v < 1e-10
    (0.3, True)
    """
    xs = np.asarray(grid, dtype=float)
    vals = np.asarray(fun(xs), dtype=float)
    vals = np.where(np.isnan(vals), np.inf, vals)
    i = int(np.argmin(vals))
    best_x, best_v = float(xs[i]), float(vals[i])
    lo, hi = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, xs.size - 1)])
    for _ in range(int(rounds)):
        if not (hi > lo) or not np.isfinite(best_v):
            break
        xs = np.linspace(lo, hi, int(points))
        vals = np.asarray(fun(xs), dtype=float)
        vals = np.where(np.isnan(vals), np.inf, vals)
        i = int(np.argmin(vals))
        if vals[i] < best_v:
            best_x, best_v = float(xs[i]), float(vals[i])
        step = (hi - lo) / (int(points) - 1)
        lo, hi = max(lo, best_x - step), min(hi, best_x + step)
    return best_x, best_v


# ---------------------------------------------------------------------------------------
# divisions rounded in a known direction


def div_up(num: float, den: float) -> float:
    """num/den for positive doubles, rounded *up* to a double (inf if it overflows).

    >>> div_up(1.0, 3.0) > 1 / 3, div_up(1.0, 2.0) == 0.5, div_up(1e-300, 1e300)
    (True, True, 5e-324)
    """
    q = num / den
    if math.isinf(q):
        return q
    if Fraction(q) < Fraction(num) / Fraction(den):
        q = math.nextafter(q, math.inf)
    return q


def div_down(num: float, den: float) -> float:
    """num/den for positive doubles, rounded *down* to a double (0 if it underflows).

    >>> Fraction(div_down(1.0, 3.0)) <= Fraction(1, 3), div_down(1.0, 2.0), div_down(5e-324, 4.0)
    (True, 0.5, 0.0)
    """
    q = num / den
    if q == 0 or math.isinf(q):
        return q if q == 0 else math.nextafter(q, 0.0)
    if Fraction(q) > Fraction(num) / Fraction(den):
        q = math.nextafter(q, 0.0)
    return q


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p + e = a·b exactly (Dekker 1971, Veltkamp splitting), for |a|, |b|, |a·b| in
    the range where neither the split overflows nor the product underflows."""
    p = a * b
    c = 134217729.0 * a
    ah = c - (c - a)
    al = a - ah
    c = 134217729.0 * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def div_up_array(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise :func:`div_up`, vectorised: q = num/den is rounded up one ulp exactly when
    num > q·den, decided without error (q·den = p + e exactly by :func:`_two_product`, and
    num − p is exact by Sterbenz's lemma since p is within an ulp of num). Elements outside
    [1e-290, 1e290] fall back to the rational :func:`div_up`.

    >>> bool(np.all(div_up_array(np.array([1.0, 1.0]), np.array([3.0, 2.0])) == [div_up(1.0, 3.0), 0.5]))
    True
    """
    n, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        q = n / d
        ok = (n > 1e-290) & (n < 1e290) & (d > 1e-290) & (d < 1e290) & (q > 1e-290) & (q < 1e290)
        qs, ds = np.where(ok, q, 1.0), np.where(ok, d, 1.0)
        p, e = _two_product(qs, ds)
        out = np.where(np.where(ok, n, 1.0) - p > e, np.nextafter(qs, np.inf), qs)
    if not np.all(ok):
        for i in np.flatnonzero(~ok):
            out[i] = div_up(float(n[i]), float(d[i]))
    return out
