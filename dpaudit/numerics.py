"""Small numerical helpers shared by the accounting, the auditor and the bandit analyses.

One implementation of each: :func:`bisect` (vectorised bisection of a monotone predicate that
keeps a bracket whose two ends stay on their own side), :func:`expand_bracket` (doubling
until the predicate flips) and :func:`minimise_zoom` (the minimum of a vectorised function over
a grid, refined by zooming in on the best point). Every root search in the toolkit that must end
on a *known side* of the root — a certified value is the feasible end, never the midpoint — goes through them.

Arithmetic rounded in a known direction, so that a certified value never falls below the exact
one: divisions (:func:`div_up`, :func:`div_down`, :func:`div_up_array`), sums of count × value
(:func:`sum_up`, :func:`sum_up_arrays`) and the norm sqrt(Σ count·value²) (:func:`norm_up`).

:func:`special` is :mod:`scipy.special`, imported on first use, so that importing the toolkit (and
a small run) does not pay SciPy's import; :func:`next_fast_len` (``scipy.fft.next_fast_len``) and
:func:`geometric_suffix_sums` (a first-order ``scipy.signal.lfilter``) are written out here, so that
the PLD accountant runs on NumPy's FFT (the same pocketfft, the same bits) without loading
``scipy.fft`` (≈ 0.18 s) or ``scipy.signal`` (≈ 0.75 s).

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
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "special",
    "next_fast_len",
    "geometric_suffix_sums",
    "unique",
    "bisect",
    "expand_bracket",
    "minimise_zoom",
    "div_up",
    "mul_up",
    "div_down",
    "div_up_array",
    "sum_up",
    "sum_up_arrays",
    "norm_up",
    "square",
]

Predicate = Callable[[np.ndarray], np.ndarray]


def special() -> Any:
    """:mod:`scipy.special`, imported when first needed rather than when this package is.

    >>> float(special().ndtr(0.0))
    0.5
    """
    from scipy import special as module

    return module


def next_fast_len(n: int) -> int:
    """The smallest 11-smooth integer ≥ n (prime factors 2, 3, 5, 7, 11 only): an FFT length that
    pocketfft transforms fast, as ``scipy.fft.next_fast_len(n)`` (tested equal). Every product of
    powers of 11, 7, 5 and 3 below the best so far, completed by the least power of 2.

    >>> next_fast_len(1), next_fast_len(13), next_fast_len(1000003)
    (1, 14, 1000188)
    """
    target = max(int(n), 1)
    best = 1 << (target - 1).bit_length()
    p11 = 1
    while p11 < best:
        p7 = p11
        while p7 < best:
            p5 = p7
            while p5 < best:
                p3 = p5
                while p3 < best:
                    best = min(best, p3 if p3 >= target else p3 << (-(-target // p3) - 1).bit_length())
                    p3 *= 3
                p5 *= 5
            p7 *= 7
        p11 *= 11
    return best


_Real = TypeVar("_Real", float, np.ndarray)

_SUFFIX_BLOCK_LOG = 30.0  # r^{-block} ≤ e^30 within a block: no overflow, no underflow of a term that matters


def geometric_suffix_sums(x: np.ndarray, r: float) -> np.ndarray:
    """V_j = Σ_{i ≥ j} r^{i−j} x_i for x ≥ 0 and 0 ≤ r ≤ 1 (the recursion V_j = x_j + r·V_{j+1}),
    in blocks where r^{i−j} stays above e^{−30}: inside a block, reversed cumulative sums of
    x_i·r^{i−start} (positive terms: relative error ≤ block·ulp), divided back, plus the next
    block's V times its power of r.

    >>> geometric_suffix_sums(np.array([1.0, 2.0, 4.0]), 0.5).tolist()
    [3.0, 4.0, 4.0]
    """
    a = np.asarray(x, dtype=float)
    if r <= 0.0 or a.size == 0:
        return a.copy()
    log_r = math.log(r)
    block = a.size if log_r == 0.0 else max(1, min(a.size, int(_SUFFIX_BLOCK_LOG / -log_r)))
    out = np.empty_like(a)
    carry = 0.0
    for end in range(a.size, 0, -block):
        start = max(0, end - block)
        k = np.arange(end - start, dtype=float)
        w = np.exp(k * log_r)  # r^{i − start}
        sums = np.cumsum((a[start:end] * w)[::-1])[::-1]
        out[start:end] = sums / w + np.exp((end - start - k) * log_r) * carry
        carry = float(out[start])
    return out


def unique(values: np.ndarray, return_inverse: bool = False) -> Any:
    """``numpy.unique`` of a 1-D array without NaN (sorted distinct values, and with
    ``return_inverse`` the index of each value among them), the same result, without loading
    ``numpy.ma`` — which ``numpy.unique`` imports, ≈ 6 ms of a small run's start-up.

    >>> u, inv = unique(np.array([3.0, 1.0, 3.0, 2.0]), return_inverse=True)
    >>> u.tolist(), inv.tolist()
    ([1.0, 2.0, 3.0], [2, 0, 2, 1])
    """
    a = np.asarray(values).reshape(-1)
    order = np.argsort(a, kind="stable")
    ordered = a[order]
    fresh = np.empty(a.size, dtype=bool)
    fresh[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=fresh[1:])
    out = ordered[fresh]
    if not return_inverse:
        return out
    inverse = np.empty(a.size, dtype=np.intp)
    inverse[order] = np.cumsum(fresh) - 1
    return out, inverse


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


def square(x: float) -> float:
    """``x**2`` for a Python float, inf where it overflows (``**`` raises ``OverflowError``
    there, unlike NumPy's arithmetic); the same value as ``x**2`` everywhere else.

    >>> square(3.0), square(1e300)
    (9.0, inf)
    """
    try:
        return x**2
    except OverflowError:
        return math.inf


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
    if _sign_of_remainder(num, den, q) > 0:
        q = math.nextafter(q, math.inf)
    return q


def _sign_of_remainder(num: float, den: float, q: float) -> int:
    """The sign of num/den − q (den > 0), exactly: in doubles where q·den = p + e exactly
    (:func:`_two_product`) and num − p is exact (Sterbenz's lemma, p being within an ulp of num),
    so that num > q·den iff num − p > e — floats in [1e-290, 1e290], as
    :func:`div_up_array` — and with rationals otherwise."""
    if (isinstance(num, float) and isinstance(den, float)
            and 1e-290 < num < 1e290 and 1e-290 < den < 1e290 and 1e-290 < q < 1e290):
        p, e = _two_product(q, den)
        r = num - p
        return int(r > e) - int(r < e)
    exact, fq = Fraction(num) / Fraction(den), Fraction(q)
    return (exact > fq) - (exact < fq)


def mul_up(a: float, b: float) -> float:
    """a·b for non-negative doubles, rounded *up* to a double (inf if it overflows).

    >>> mul_up(0.1, 3.0) >= Fraction(0.1) * 3, mul_up(0.5, 4.0)
    (True, 2.0)
    """
    p = a * b
    if math.isinf(p) or math.isnan(p):
        return p
    if Fraction(p) < Fraction(a) * Fraction(b):
        p = math.nextafter(p, math.inf)
    return p


def div_down(num: float, den: float) -> float:
    """num/den for positive doubles, rounded *down* to a double (0 if it underflows).

    >>> Fraction(div_down(1.0, 3.0)) <= Fraction(1, 3), div_down(1.0, 2.0), div_down(5e-324, 4.0)
    (True, 0.5, 0.0)
    """
    q = num / den
    if q == 0 or math.isinf(q):
        return q if q == 0 else math.nextafter(q, 0.0)
    if _sign_of_remainder(num, den, q) < 0:
        q = math.nextafter(q, 0.0)
    return q


def _two_product(a: _Real, b: _Real) -> tuple[_Real, _Real]:
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


# ---------------------------------------------------------------------------------------
# sums and norms rounded up


def sum_up(terms: list[tuple[float, float]] | list[float]) -> float:
    """Σ count·value over ``terms`` (pairs, or plain non-negative values), rounded *up*.

    With at most 64 terms the sum is exact (rational arithmetic on the doubles) and then rounded
    up to the nearest double, so an exact total stays exact: four steps of ε = 0.25 sum to 1.0.
    Longer sums use ``math.fsum`` plus a relative 1e-15 and one ulp. Either way each *value* is
    taken as exact; a caller whose values carry their own rounding inflates them first.

    >>> sum_up([(4, 0.25)]), sum_up([(10, 0.1)])  # 10 × 0.1000000000000000055…
    (1.0, 1.0000000000000002)
    """
    pairs = [(1.0, t) if not isinstance(t, tuple) else t for t in terms]
    if not pairs:
        return 0.0
    c, v = zip(*pairs)
    return sum_up_arrays(np.array(c, dtype=float), np.array(v, dtype=float))


def sum_up_arrays(counts: np.ndarray, values: np.ndarray) -> float:
    """:func:`sum_up` of the pairs (counts[i], values[i]), vectorised.

    >>> sum_up_arrays(np.array([4.0]), np.array([0.25]))
    1.0
    """
    c, v = np.asarray(counts, dtype=float), np.asarray(values, dtype=float)
    keep = (c != 0) & (v != 0)
    c, v = c[keep], v[keep]
    if c.size == 0:
        return 0.0
    with np.errstate(over="ignore"):
        prod = c * v
    if np.any(np.isinf(prod) & (prod > 0)):
        return math.inf
    if c.size <= 64:
        exact = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(c, v)), Fraction(0))
        out = float(exact)
        if Fraction(out) < exact:
            out = math.nextafter(out, math.inf)
        return out
    # each product c·v is rounded (≤ 2^-53 relative), fsum is exact to one rounding: 1e-15 covers both
    total = math.fsum(prod.tolist())
    if total == 0.0:
        return 0.0
    return math.nextafter(total * (1.0 + 1e-15) + c.size * 5e-324, math.inf)


def norm_up(values: np.ndarray, counts: np.ndarray) -> float:
    """sqrt(Σ counts·values²) for values ≥ 0, rounded *up*, without under- or overflow of the
    squares (the values are scaled by their maximum first). inf if the result overflows.

    >>> norm_up(np.array([3e-200, 4e-200]), np.array([1.0, 1.0])) >= 5e-200
    True
    """
    v = np.asarray(values, dtype=float)
    c = np.asarray(counts, dtype=float)
    keep = (v > 0) & (c > 0)
    if not np.any(keep):
        return 0.0
    v, c = v[keep], c[keep]
    top = float(v.max())
    if math.isinf(top):
        return math.inf
    r = v / top
    # pairwise summation: relative error ≤ (log2 n + 3)·2^-53 ≤ 4e-15 for n ≤ 1e9, inside 1e-14
    s = float(np.sum(c * r * r)) * (1.0 + 1e-14)
    with np.errstate(over="ignore"):
        out = top * math.sqrt(s)
    return math.nextafter(out, math.inf) if math.isfinite(out) else math.inf

