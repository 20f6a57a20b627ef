"""Exact, numerically stable conversions between μ-GDP and (ε, δ)-DP, for every float.

A mechanism is μ-GDP (Dong, Roth & Su 2022, Def. 2.6) iff it is (ε, δ_μ(ε))-DP for every
ε ≥ 0 with (ibid. Cor. 2.13)

    δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

Naive evaluation underflows to 0 or gives ``inf·0 = NaN`` for large ε
and cancels catastrophically for small μ (the two terms agree to 1 − O(μ)), so everything here
works with log δ and never subtracts two nearly equal numbers. Write c = ε/μ, a = μ/2 − c,
b = a − μ, u = −a/√2 and h = μ/√2.

* u ≥ 0 (ε ≥ μ²/2). With the scaled complementary error function erfcx(z) = e^{z²} erfc(z)
  and b² − a² = 2ε,

      δ_μ(ε) = ½ e^{−u²} D,   D = erfcx(u) − erfcx(u + h) = ∫_u^{u+h} g(w) dw,
      g(w) = −erfcx'(w) = 2/√π − 2w·erfcx(w) > 0.

  D is evaluated as the difference when h ≥ max(½, u/20) (it then keeps ≥ 4 % of erfcx(u): no
  cancellation) and otherwise as h times a 12-point Gauss–Legendre mean of g over [u, u + h],
  with log h taken from log μ — so a tiny or subnormal μ keeps full relative accuracy. For
  w ≥ 8, g comes from its asymptotic series (2/√π)·Σ_{n≥1} (−1)^{n+1} (2n−1)!!/(2w²)^n.
* u < 0 (ε < μ²/2). δ = G − (e^ε − 1)Φ(b) with the gap G = Φ(a) − Φ(b) = ∫_b^a φ: for
  μ < ½ a Gauss–Legendre mean of φ over [b, a] times μ, else ½(erf(a/√2) − erf(b/√2)) (b < 0 < a,
  a sum of two positive terms). The subtracted term is at most 31 % of G here, so
  log δ = log G + log1p(−T/G) does not cancel.

Conservative rounding. Every *certified* output absorbs the floating-point error of log δ:
τ(log δ) = 1e-11 + 1e-13·|log δ| (:func:`log_delta_error_bound`) bounds it for every μ in
(0, ∞) and ε in [0, ∞) — ten times the largest error measured against 60-digit (and, for tiny
μ, several-hundred-digit) mpmath over μ ∈ [1e-320, 1e300], ε up to 1e300
(``tests/test_soundness.py``). :func:`gdp_epsilon` returns an ε with
log δ_μ(ε) + τ ≤ log δ, :func:`gdp_delta` returns e^{log δ + τ} rounded up to the next double,
and :func:`gdp_mu` a μ with log δ_μ(ε) + τ ≤ log δ. The roots are found with
:func:`dpaudit.numerics.bisect`, whose returned end is always on the conservative side.

Domain. Accuracy (relative error of δ ≤ 1e-10, of ε ≤ 1e-12 + the bisection's 1e-15) holds for
every μ in (0, ∞) and δ in [5e-324, 1), and for per-step targets down to log δ = −1e4 through
:func:`gdp_epsilon_log`. ε itself must be a finite double: for μ ≳ 1.9e154 the ε at any
δ ≥ 5e-324 exceeds 1.8e308 and :func:`gdp_epsilon` raises ``ValueError``; δ is then ≈ 1.

Example:
    >>> from dpaudit.conversions import gdp_epsilon, gdp_delta, gdp_mu
    >>> round(gdp_epsilon(1.0, 1e-6), 4)
    4.8866
    >>> gdp_delta(1.0, 4.8866) <= 1e-6 * 1.0001
    True
    >>> round(gdp_mu(4.8866, 1e-6), 4)
    1.0
    >>> gdp_epsilon(1e-170, 1e-300) > 0  # no underflow to a false 0
    True
"""

from __future__ import annotations

import functools
import math
from typing import Literal, overload

import numpy as np

from dpaudit.normal_tails import erf, erfcx, erfinv, ndtri_exp
from dpaudit.numerics import bisect, expand_bracket, special
from dpaudit.validation import check_nonnegative, check_positive, check_probability, plain

__all__ = [
    "gdp_log_delta",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_epsilon_log",
    "gdp_epsilon_estimate",
    "gdp_mu",
    "log_delta_error_bound",
    "gdp_tradeoff",
    "pure_dp_to_gdp",
]


_SQRT2 = math.sqrt(2.0)
_LOG_SQRT2 = 0.5 * math.log(2.0)
_LOG_HALF = math.log(0.5)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_DBL_MAX = float(np.finfo(float).max)
_TINY = 5e-324

# 12-point Gauss–Legendre rule on [0, 1] (weights sum to 1): numpy.polynomial.legendre.leggauss(12)
# mapped to [0, 1], written out (bit for bit, tested) because importing numpy.polynomial costs
# ≈ 25 ms of a small run's start-up (it loads numpy.ma)
_GL_X = np.array([0.009219682876640378, 0.0479413718147626, 0.11504866290284765, 0.20634102285669126,
                  0.31608425050090994, 0.43738329574426554, 0.5626167042557344, 0.6839157494990901,
                  0.7936589771433087, 0.8849513370971523, 0.9520586281852375, 0.9907803171233596])
_GL_W = np.array([0.023587668193255706, 0.05346966299765953, 0.08003916427167321, 0.10158371336153287,
                  0.1167462682691773, 0.12457352290670134, 0.12457352290670134, 0.1167462682691773,
                  0.10158371336153287, 0.08003916427167321, 0.05346966299765953, 0.023587668193255706])


def log_delta_error_bound(log_delta: np.ndarray | float) -> np.ndarray | float:
    """A bound τ on the absolute floating-point error of :func:`gdp_log_delta`.

    Sources: the rounding of u = (ε/μ − μ/2)/√2 enters log δ through −u², a relative error of
    a few ulps of |log δ|; erfcx and erf (:mod:`dpaudit.normal_tails`, ≤ 2e-15 relative, measured); the
    cancellation in 2/√π − 2w·erfcx(w) for w < 8 (≤ 2w²·1e-16 ≤ 1.3e-14) and the Gauss–Legendre
    truncation (< 1e-15). The bound is ten times the largest error measured against mpmath.
    """
    return 1e-11 + 1e-13 * np.abs(log_delta)


def _upper(log_delta: np.ndarray) -> np.ndarray:
    """log δ + τ(log δ), keeping −inf (δ = 0 exactly) as −inf."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(log_delta), -np.inf, log_delta + log_delta_error_bound(log_delta))


def _g(w: np.ndarray) -> np.ndarray:
    """−erfcx'(w) = 2/√π − 2w·erfcx(w) > 0 for w ≥ 0, relative-accurate (no cancellation)."""
    w = np.asarray(w, dtype=float)
    out = np.empty_like(w)
    near = w < 8.0
    out[near] = _TWO_OVER_SQRT_PI - 2.0 * w[near] * erfcx(w[near])
    far = ~near
    if np.any(far):
        with np.errstate(over="ignore", under="ignore"):
            s = 0.5 / (w[far] * w[far])
        t = np.ones_like(s)
        for n in range(25, 1, -1):  # s·(1 − 3s(1 − 5s(1 − 7s(…)))), Horner form
            t = 1.0 - (2 * n - 1) * s * t
        out[far] = _TWO_OVER_SQRT_PI * s * t
    return out


def _a_upper(mu: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """a = μ/2 − ε/μ moved up by a bound on its rounding, at most μ/2 (−inf if ε/μ overflows)."""
    c = eps / mu
    half = 0.5 * mu
    a = np.nextafter((half - c) + (2.3e-16 * (np.abs(c) + half) + 1e-323), np.inf)
    return np.where(np.isinf(c), -np.inf, np.minimum(a, half))


def _case_a(
    mu: np.ndarray, log_mu: np.ndarray, a: np.ndarray, slope: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """a ≤ 0: log δ = log ½ − u² + log D(u, h), and d log δ/dε = −erfcx(u + h)/D / (√2 μ)·√2μ."""
    u = np.maximum(np.nextafter(-a / _SQRT2, -np.inf), 0.0)
    h = np.nextafter(mu / _SQRT2, np.inf)
    log_d = np.empty_like(u)
    quad = (h < 0.5) | (h < 0.05 * u)
    if np.any(quad):
        nodes = u[quad, None] + h[quad, None] * _GL_X[None, :]
        log_d[quad] = (log_mu[quad] - _LOG_SQRT2 + 1e-15) + np.log(_g(nodes) @ _GL_W)
    direct = ~quad
    if np.any(direct):
        ud, hd = u[direct], h[direct]
        diff = erfcx(ud) - erfcx(ud + hd)
        ok = diff > 0  # it is, by the branch rule; otherwise fall back to the quadrature
        fallback = (log_mu[direct] - _LOG_SQRT2 + 1e-15) + np.log(
            _g(ud[:, None] + hd[:, None] * _GL_X[None, :]) @ _GL_W) if not np.all(ok) else 0.0
        log_d[direct] = np.where(ok, np.log(np.where(ok, diff, 1.0)), fallback)
    out = _LOG_HALF - u * u + log_d
    if not slope:
        return out, None
    # dδ/dε = −e^ε Φ(b) = −½ e^{−u²} erfcx(u + h)
    return out, -np.exp(np.log(erfcx(u + h)) - log_d)


def _case_b(
    mu: np.ndarray, log_mu: np.ndarray, a: np.ndarray, slope: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """0 < a ≤ μ/2: log δ = log G + log1p(−T/G), ε' = μ(μ/2 − a), b = a − μ."""
    b = np.nextafter(a - mu, -np.inf)
    log_gap = np.empty_like(a)
    small = mu < 0.5
    if np.any(small):
        nodes = a[small, None] - mu[small, None] * _GL_X[None, :]
        phi_mean = np.exp(-0.5 * nodes * nodes - _LOG_SQRT_2PI) @ _GL_W
        log_gap[small] = (log_mu[small] + 1e-15) + np.log(phi_mean)
    big = ~small
    if np.any(big):
        log_gap[big] = np.log(0.5 * (erf(a[big] / _SQRT2) - erf(b[big] / _SQRT2)))
    eps_b = np.maximum(np.nextafter(mu * (0.5 * mu - a), -np.inf), 0.0)
    # e^ε'Φ(b) = ½e^{−a²/2}·erfcx(−b/√2), since b² − a² = 2ε'
    log_e_phi = -0.5 * a * a + np.log(0.5 * erfcx(-b / _SQRT2))
    with np.errstate(divide="ignore"):
        log_t = np.log(-np.expm1(-eps_b)) + log_e_phi
    ratio = np.exp(log_t - log_gap)
    # ratio < 0.31 mathematically; were it to round to ≥ 1, δ ≤ G is the safe answer
    out = np.where(ratio < 1.0, log_gap + np.log1p(-np.minimum(ratio, 0.99)), log_gap)
    if not slope:
        return out, None
    return out, -np.exp(log_e_phi - out)


@overload
def _log_delta(mu: np.ndarray, eps: np.ndarray, slope: Literal[False] = ...) -> np.ndarray: ...


@overload
def _log_delta(mu: np.ndarray, eps: np.ndarray, slope: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...


def _log_delta(
    mu: np.ndarray, eps: np.ndarray, slope: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Vectorised log δ_μ(ε), an upper estimate (see the module docstring); mu > 0, eps ≥ 0.

    The only parameter that is rounded is a = μ/2 − ε/μ. It is moved up by a bound on that
    rounding (δ increases with a at fixed μ), clipped at its largest possible value μ/2, and
    every later quantity is derived from the moved a and rounded in the direction that can
    only increase δ. So the result is δ at an ε' ≤ ε, accurate to τ. With ``slope=True`` it
    also returns d log δ/dε (for Newton steps; never used for a certified value).
    """
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(eps, dtype=float))
    shape = mu.shape
    mu, eps = mu.reshape(-1), eps.reshape(-1)
    out = np.empty(mu.shape)
    der = np.empty(mu.shape)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        log_mu = np.log(mu)
        a = _a_upper(mu, eps)
        for sel, fn in ((a <= 0, _case_a), (a > 0, _case_b)):
            if np.any(sel):
                val, d = fn(mu[sel], log_mu[sel], a[sel], slope)
                out[sel] = val
                if d is not None:
                    der[sel] = d
    if slope:
        return out.reshape(shape), der.reshape(shape)
    return out.reshape(shape)


def _check_mu(mu: float | np.ndarray) -> np.ndarray:
    mu_a = np.asarray(mu, dtype=float)
    if np.any(~np.isfinite(mu_a)) or np.any(mu_a <= 0):
        raise ValueError(f"mu must be in (0, inf), got {plain(mu)}")
    return mu_a


def gdp_log_delta(mu: float | np.ndarray, epsilon: float | np.ndarray) -> float | np.ndarray:
    """log δ_μ(ε), the exact GDP privacy profile in log space (best estimate, not rounded).

    Accurate to τ = 1e-11 + 1e-13·|log δ| for every μ > 0 and ε ≥ 0 (tested against mpmath).

    >>> round(float(gdp_log_delta(1.0, 40.0)), 4)  # δ = 3.9e-343, below the smallest double
    -788.4234
    """
    mu_a = _check_mu(mu)
    eps_a = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps_a)) or np.any(eps_a < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {plain(epsilon)}")
    out = _log_delta(mu_a, eps_a)
    return float(out) if out.ndim == 0 else out


def _round_up_exp(log_value: np.ndarray) -> np.ndarray:
    """e^x rounded up to a double ≥ the exact value (≥ 5e-324 even where e^x underflows)."""
    with np.errstate(under="ignore", over="ignore"):
        return np.nextafter(np.exp(log_value), np.inf)


def gdp_delta(mu: float | np.ndarray, epsilon: float | np.ndarray) -> float | np.ndarray:
    """Certified δ such that μ-GDP implies (ε, δ)-DP: δ_μ(ε) rounded *up*; broadcasts.

    Never 0 (δ_μ(ε) > 0 for every μ > 0): where δ is below the smallest double the answer is
    the smallest positive double (use :func:`gdp_log_delta` for the magnitude). Capped at 1.

    >>> gdp_delta(0.5, 1.0) > 0.00682959
    True
    >>> gdp_delta(1.0, 40.0)  # δ = 3.9e-343
    5e-324
    """
    if np.ndim(mu) == 0:
        check_positive("mu", mu)
    if np.ndim(epsilon) == 0:
        check_nonnegative("epsilon", epsilon)
    mu_a = _check_mu(mu)
    eps_a = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps_a)) or np.any(eps_a < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {plain(epsilon)}")
    out = np.minimum(1.0, _round_up_exp(_upper(_log_delta(mu_a, eps_a))))
    return float(out) if out.ndim == 0 else out


def _infeasible(mu: np.ndarray, eps: np.ndarray, target: np.ndarray) -> np.ndarray:
    """True where δ_μ(ε), rounded up by τ, is still above e^target."""
    return _upper(_log_delta(mu, eps)) > target


def gdp_epsilon_log(mu: float | np.ndarray, log_delta: float | np.ndarray) -> float | np.ndarray:
    """Certified ε at δ = e^log_delta (log_delta ≤ 0 may be far below log 5e-324); broadcasts.

    The smallest double ε found by bisection with log δ_μ(ε) + τ ≤ log_delta; 0 when ε = 0
    already qualifies. Raises ``ValueError`` when that ε exceeds the largest double.

    >>> gdp_epsilon_log(1.0, -2000.0) > gdp_epsilon_log(1.0, -700.0)
    True
    """
    if np.ndim(mu) == 0 and np.ndim(log_delta) == 0 and type(mu) in _REALS and type(log_delta) in _REALS:
        return _scalar_epsilon_log(float(mu), float(log_delta))
    return _epsilon_log(mu, log_delta)


_REALS = (float, int, np.float64)


@functools.lru_cache(maxsize=256)
def _scalar_epsilon_log(mu: float, log_delta: float) -> float:
    """:func:`gdp_epsilon_log` of two floats, kept: a report asks for the same (μ, δ) several
    times (its bounds, the published one, the audit), each a bisection of ~20 steps."""
    return float(_epsilon_log(mu, log_delta))


def _epsilon_log(mu: float | np.ndarray, log_delta: float | np.ndarray) -> float | np.ndarray:
    """:func:`gdp_epsilon_log` itself."""
    mu_a = _check_mu(mu)
    t = np.asarray(log_delta, dtype=float)
    if np.any(np.isnan(t)) or np.any(t >= 0) or np.any(np.isinf(t)):
        raise ValueError(f"log_delta must be in (-inf, 0), got {plain(log_delta)}")
    mu_b, t_b = np.broadcast_arrays(mu_a, t)
    shape = mu_b.shape
    mu_b, t_b = mu_b.reshape(-1).copy(), t_b.reshape(-1).copy()
    zero_ok = ~_infeasible(mu_b, np.zeros_like(mu_b), t_b)
    # a = −sqrt(2|t| + 2) gives δ ≤ Φ(a) ≤ ½e^{−a²/2} < e^{t−1}: feasible with room for τ
    with np.errstate(over="ignore"):
        hi = 0.5 * mu_b * mu_b + mu_b * np.sqrt(2.0 * np.maximum(-t_b, 0.0) + 2.0)
    hi = np.minimum(hi, _DBL_MAX)
    hi = np.where(zero_ok, 0.0, hi)
    todo = ~zero_ok & _infeasible(mu_b, hi, t_b)
    if np.any(todo):
        if np.any(_infeasible(mu_b[todo], np.full(int(todo.sum()), _DBL_MAX), t_b[todo])):
            raise ValueError(
                f"mu={plain(mu)} is too large: the epsilon at delta=e^{plain(log_delta)} exceeds the largest "
                "double (mu must be below about 1.9e154)"
            )
        with np.errstate(over="ignore"):
            hi[todo] = expand_bracket(lambda e: _infeasible(mu_b[todo], e, t_b[todo]), hi[todo],
                                      limit=_DBL_MAX)
    run = ~zero_ok
    out = np.zeros_like(mu_b)
    if np.any(run):
        m, tt, top = mu_b[run], t_b[run], hi[run]
        # Newton from the right gives a tight bracket; the bisection then certifies it. Elements
        # whose tight bracket does not straddle the root fall back to the full bracket [0, top].
        e = _newton(m, tt, top)
        lo = np.maximum(e * (1 - 2e-13) - 1e-300, 0.0)
        up = np.minimum(e * (1 + 2e-13) + 1e-300, top)
        good = _infeasible(m, lo, tt) & ~_infeasible(m, up, tt)
        lo = np.where(good, lo, 0.0)
        up = np.where(good, up, top)
        _, h = bisect(lambda x: _infeasible(m, x, tt), lo, up)  # to the last bit: monotone in δ
        out[run] = h
    out = out.reshape(shape)
    return float(out) if out.ndim == 0 else out


def _newton(m: np.ndarray, tt: np.ndarray, top: np.ndarray, steps: int = 8) -> np.ndarray:
    """Newton's method on log δ_μ(ε) + τ = tt from the right (log δ is concave in ε, so the
    iterates stay on the feasible side), started at the normal-tail approximation, kept in
    (0, top]. An estimate of the certified root, not certified itself."""
    with np.errstate(over="ignore", invalid="ignore"):  # μ² overflows (inf·0 is nan): start at top
        e = np.fmin(top, 0.5 * m * m + m * np.maximum(-ndtri_exp(tt), 0.0))
    for _ in range(steps):
        ld, d = _log_delta(m, e, slope=True)
        f = _upper(ld) - tt
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nxt = e - f / d
        step = np.where(np.isfinite(nxt) & (nxt > 0) & (nxt < top), nxt, e)
        if np.array_equal(step.view(np.int64), e.view(np.int64)):
            break  # every element at a fixed point to the bit: the remaining steps would repeat it
        e = step
    return e


def gdp_epsilon_estimate(mu: np.ndarray, log_delta: np.ndarray | float) -> np.ndarray:
    """A fast estimate of :func:`gdp_epsilon_log` (eight Newton steps, no certifying bisection),
    for searches over a free parameter whose chosen value is then evaluated by the certified
    function — never a certified value itself. Within a relative 1e-9 of the certified ε for
    μ ≤ 10³ and log δ ≥ −10⁴ (tested); broadcasts; mu > 0, log_delta < 0.

    >>> round(float(gdp_epsilon_estimate(np.array([1.0]), np.log(1e-6))[0]), 4)
    4.8866
    """
    mu_b, t_b = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(log_delta, dtype=float))
    shape = mu_b.shape
    m, tt = mu_b.reshape(-1), t_b.reshape(-1)
    with np.errstate(over="ignore"):
        top = np.minimum(0.5 * m * m + m * np.sqrt(2.0 * np.maximum(-tt, 0.0) + 2.0), _DBL_MAX)
    zero_ok = ~_infeasible(m, np.zeros_like(m), tt)
    return np.where(zero_ok, 0.0, _newton(m, tt, top)).reshape(shape)


def gdp_epsilon(mu: float | np.ndarray, delta: float | np.ndarray) -> float | np.ndarray:
    """Certified ε such that μ-GDP implies (ε, δ)-DP, rounded *up*; broadcasts over μ and δ.

    Finite and correct for every μ up to about 1.9e154 and δ down to 5e-324 (the naive
    formula gives NaN for large μ and cancels for small μ).

    >>> round(gdp_epsilon(10.0, 1e-6), 4)
    96.7173
    >>> gdp_epsilon(1000.0, 1e-300) > 5e5
    True
    >>> gdp_epsilon(1e-10, 1e-12) > 1.93835e-10  # exact 1.9383552...e-10
    True
    """
    if np.ndim(delta) == 0:
        check_probability("delta", delta)
    d = np.asarray(delta, dtype=float)
    if np.any(~(d > 0)) or np.any(~(d < 1)):
        raise ValueError(f"delta must be in (0, 1), got {plain(delta)}")
    return gdp_epsilon_log(mu, np.log(d))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ (rounded *down*) such that μ-GDP implies (ε, δ)-DP.

    Use it to turn an (ε, δ) budget into a GDP budget, e.g. for tuning a mechanism.

    >>> round(gdp_mu(35.5663, 1e-6), 4)
    5.0
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_probability("delta", delta)
    log_delta = math.log(delta)
    eps_a = np.asarray(epsilon)

    def ok(m: float | np.ndarray) -> np.ndarray:
        return ~_infeasible(np.asarray(m, dtype=float), eps_a, np.asarray(log_delta))

    lo, hi = math.log(_TINY), math.log(_DBL_MAX)
    if bool(ok(_DBL_MAX)):
        raise ValueError("no finite mu: the (epsilon, delta) budget is satisfied by every mu")
    if not bool(ok(_TINY)):
        raise ValueError(f"no mu > 0 satisfies delta={plain(delta)} at epsilon={plain(epsilon)}")
    with np.errstate(over="ignore", under="ignore"):
        log_lo, _ = bisect(lambda x: ok(np.exp(x)), lo, hi, xtol=1e-14)
        m = float(np.exp(log_lo))
    m = max(m, _TINY)
    while not bool(ok(m)):  # exp may round up past the feasible end: step back to it
        m = float(np.nextafter(m * (1 - 1e-15), 0.0))
    return m


def gdp_tradeoff(mu: float, alpha: np.ndarray | float) -> np.ndarray | float:
    """The Gaussian trade-off function G_μ(α) = Φ(Φ^{-1}(1 − α) − μ) (type II error at type I α)."""
    mu = check_positive("mu", mu)
    alpha_a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    out = special().ndtr(special().ndtri(1.0 - alpha_a) - mu)
    return float(out) if np.ndim(out) == 0 else out


# √(π/2) rounded up: μ(ε) ≤ √(π/2)·ε for every ε (the next Taylor coefficient is negative)
_SQRT_HALF_PI_UP = float(np.nextafter(math.sqrt(math.pi / 2.0), np.inf))


def pure_dp_to_gdp(epsilon: float | np.ndarray) -> float | np.ndarray:
    """The smallest μ such that every ε-DP mechanism is μ-GDP: μ = 2Φ^{-1}(e^ε/(1 + e^ε)).

    Proof (Dong, Roth & Su 2022, Prop. 2.5 and Eq. (4) for f_{ε,0}): ε-DP means the trade-off
    function is at least f_{ε,0}(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α)), which is piecewise
    linear with its kink on the diagonal at α* = 1/(1 + e^ε). G_μ is convex, symmetric and
    equals f_{ε,0} at α = 0 and α = 1, so G_μ ≤ f_{ε,0} everywhere iff G_μ(α*) ≤ α*, i.e.
    μ ≥ Φ^{-1}(1 − α*) − Φ^{-1}(α*) = 2Φ^{-1}(1 − α*). Randomized response attains it, so the
    constant is tight.

    Evaluation without cancellation, rounded up (relative 1e-12, then to the next double):
    μ = 2√2·erfinv(tanh(ε/2)) for 1e-8 < ε ≤ 2 (Φ^{-1}(p) = √2·erfinv(2p − 1) and
    2e^ε/(1+e^ε) − 1 = tanh(ε/2)); μ ≤ √(π/2)·ε for ε ≤ 1e-8 (erfinv(x) = (√π/2)(x + πx³/12 + …),
    tanh(x) = x − x³/3 + …, so μ = √(π/2)·ε·(1 − 0.018ε² + …), relative error < 2e-18); and
    μ = −2Φ^{-1}(e^{−softplus(ε)}) via ``ndtri_exp`` for ε > 2 (no underflow for ε ≥ 745).

    >>> round(pure_dp_to_gdp(1.0), 6)
    1.232035
    >>> pure_dp_to_gdp(1e-17) > 0  # the old form −2·ndtri(expit(−ε)) gave −0.0
    True
    """
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {plain(epsilon)}")
    with np.errstate(over="ignore", under="ignore"):
        tiny = eps * _SQRT_HALF_PI_UP
        mid = 2.0 * _SQRT2 * erfinv(np.tanh(np.minimum(eps, 2.0) / 2.0))
        softplus = eps + np.log1p(np.exp(-eps))
        large = -2.0 * ndtri_exp(-softplus)
        mu = np.where(eps <= 1e-8, tiny, np.where(eps <= 2.0, mid, large))
        mu = np.where(eps == 0, 0.0, np.nextafter(mu * (1.0 + 1e-12), np.inf))
    return float(mu) if mu.ndim == 0 else mu
