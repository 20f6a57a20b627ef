"""Exact, numerically stable conversions between μ-GDP and (ε, δ)-DP.

A mechanism is μ-GDP (Dong, Roth & Su 2022) iff it is (ε, δ_μ(ε))-DP for every ε ≥ 0 with

    δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

Naive evaluation underflows to 0 or gives ``inf·0 = NaN`` for large ε (anchors-accounting §2e),
so everything here works with log δ. Write a = −ε/μ + μ/2 and b = −ε/μ − μ/2; then b² − a² = 2ε
and, for a ≤ 0, with the scaled complementary error function erfcx(z) = e^{z²} erfc(z),

    δ_μ(ε) = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)],

which has no cancelling exponentials at all. For a > 0 (ε < μ²/2) δ is at least
½ − e^{μ²/2}Φ(−μ) and ``log_ndtr`` + ``log1p`` are accurate.

Conservative rounding. Every *certified* output absorbs the floating-point error of evaluating
log δ: with τ a bound on that error (a few 1e-12 plus 1e-14·|log δ|, well above what the tests
against 60-digit mpmath measure), :func:`gdp_epsilon` returns an ε with
log δ_μ(ε) ≤ log δ − τ (so the true δ_μ(ε) ≤ δ), :func:`gdp_delta` returns e^{log δ + τ}, and
:func:`gdp_mu` returns a μ with log δ_μ(ε) ≤ log δ − τ. The roots are found by bisection that
keeps the conservative end point as its invariant, so no result is ever on the wrong side.

Example:
    >>> from dpaudit.conversions import gdp_epsilon, gdp_delta, gdp_mu
    >>> round(gdp_epsilon(1.0, 1e-6), 4)
    4.8866
    >>> gdp_delta(1.0, 4.8866) <= 1e-6 * 1.0001
    True
    >>> round(gdp_mu(4.8866, 1e-6), 4)
    1.0
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dpaudit.events import check_nonnegative, check_positive, check_probability

__all__ = [
    "gdp_log_delta",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "log_delta_error_bound",
    "gdp_tradeoff",
    "pure_dp_to_gdp",
]

_SQRT2 = math.sqrt(2.0)
_LOG_HALF = math.log(0.5)


def log_delta_error_bound(log_delta: np.ndarray | float) -> np.ndarray | float:
    """A bound τ on the absolute floating-point error of :func:`gdp_log_delta`.

    The dominant errors are the rounding of a²/2 (relative 1e-16 of |log δ|) and the
    cancellation in erfcx(u) − erfcx(v), relative at most ~u/(v − u)·1e-16 ≤ 4e-12 for
    μ ≥ 1e-3 and δ ≥ 1e-300. We take ten times more than either.
    """
    return 4e-11 + 1e-13 * np.abs(log_delta)


def _log_delta(mu: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Vectorised log δ_μ(ε); mu > 0, eps ≥ 0, arrays broadcast together."""
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(eps, dtype=float))
    a = -eps / mu + mu / 2.0
    b = -eps / mu - mu / 2.0
    out = np.empty(a.shape, dtype=float)
    neg = a <= 0
    if np.any(neg):
        an, bn = a[neg], b[neg]
        diff = special.erfcx(-an / _SQRT2) - special.erfcx(-bn / _SQRT2)
        # diff > 0 mathematically (erfcx is decreasing on [0, ∞) and −b > −a ≥ 0); guard the
        # last-ulp case for tiny μ with the first-order expansion erfcx'(u)·(v − u).
        u = -an / _SQRT2
        deriv = 2.0 * (u * special.erfcx(u) - 1.0 / math.sqrt(math.pi))  # erfcx'(u) < 0
        first_order = -deriv * (mu[neg] / _SQRT2)
        diff = np.where(diff > 0, diff, first_order)
        out[neg] = _LOG_HALF - 0.5 * an * an + np.log(diff)
    pos = ~neg
    if np.any(pos):
        # δ = [Φ(a) − Φ(b)] − (e^ε − 1)Φ(b): the bracket is computed without cancellation
        # (a − b = μ may be tiny), and the second term is at most a fraction of it here.
        ap, bp, ep = a[pos], b[pos], eps[pos]
        gap = np.where(
            bp >= 0,
            0.5 * (special.erfc(bp / _SQRT2) - special.erfc(ap / _SQRT2)),
            0.5 * (special.erf(ap / _SQRT2) - special.erf(bp / _SQRT2)),
        )
        with np.errstate(divide="ignore"):
            log_expm1 = np.where(ep > 1.0, ep + np.log1p(-np.exp(-np.maximum(ep, 1.0))),
                                 np.log(np.expm1(np.minimum(ep, 1.0))))
            log_gap = np.log(gap)
            lt = log_expm1 + special.log_ndtr(bp)
            out[pos] = log_gap + np.log1p(-np.exp(lt - log_gap))
    return out


def gdp_log_delta(mu: float | np.ndarray, epsilon: float | np.ndarray) -> float | np.ndarray:
    """log δ_μ(ε), the exact GDP privacy profile in log space (best estimate, not rounded).

    Accurate to ~1e-12 relative over μ ∈ [1e-3, 1e3], ε ∈ [0, 1e5] (tested against mpmath).

    >>> round(float(gdp_log_delta(1.0, 40.0)), 4)  # δ = 3.9e-343, below the smallest double
    -788.4234
    """
    mu_a = np.asarray(mu, dtype=float)
    eps_a = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(mu_a)) or np.any(mu_a <= 0):
        raise ValueError(f"mu must be in (0, inf), got {mu!r}")
    if np.any(~np.isfinite(eps_a)) or np.any(eps_a < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {epsilon!r}")
    out = _log_delta(mu_a, eps_a)
    return float(out) if out.ndim == 0 else out


def gdp_delta(mu: float, epsilon: float) -> float:
    """Certified δ such that μ-GDP implies (ε, δ)-DP: δ_μ(ε) rounded *up*.

    Returns a tiny positive number rather than 0 where δ is below the smallest double
    (use :func:`gdp_log_delta` for the exact magnitude).

    >>> gdp_delta(0.5, 1.0) > 0.00682959
    True
    """
    mu = check_positive("mu", mu)
    epsilon = check_nonnegative("epsilon", epsilon)
    ld = float(_log_delta(np.asarray(mu), np.asarray(epsilon)))
    ld += float(log_delta_error_bound(ld))
    return float(min(1.0, max(math.exp(ld), 5e-324)))


def _bisect_eps(mu: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Smallest-found ε ≥ 0 with _log_delta(mu, ε) ≤ target, by bisection keeping hi feasible."""
    # hi: a = −sqrt(2 log(1/δ')) with δ' = e^target gives Φ(a) ≤ ½e^{−a²/2} < e^target.
    hi = mu * mu / 2.0 + mu * np.sqrt(2.0 * np.maximum(-target, 0.0) + 2.0)
    while True:  # make sure hi is feasible despite the rounding of the bound itself
        bad = _log_delta(mu, hi) > target
        if not np.any(bad):
            break
        hi = np.where(bad, hi * 2.0 + 1.0, hi)
    lo = np.zeros_like(hi)
    feasible0 = _log_delta(mu, lo) <= target
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        done = (mid <= lo) | (mid >= hi)
        if np.all(done | feasible0):
            break
        ok = _log_delta(mu, mid) <= target
        hi = np.where(ok & ~done, mid, hi)
        lo = np.where(~ok & ~done, mid, lo)
    return np.where(feasible0, 0.0, hi)


def gdp_epsilon(mu: float | np.ndarray, delta: float) -> float | np.ndarray:
    """Certified ε such that μ-GDP implies (ε, δ)-DP, rounded *up*; vectorised over ``mu``.

    Finite and correct for μ up to 1e3 and δ down to 1e-300 (the naive formula gives NaN).

    >>> round(gdp_epsilon(10.0, 1e-6), 4)
    96.7173
    >>> gdp_epsilon(1000.0, 1e-300) > 5e5
    True
    """
    delta = check_probability("delta", delta)
    mu_a = np.asarray(mu, dtype=float)
    if np.any(~np.isfinite(mu_a)) or np.any(mu_a <= 0):
        raise ValueError(f"mu must be in (0, inf), got {mu!r}")
    log_delta = math.log(delta)
    target = log_delta - float(log_delta_error_bound(log_delta))
    mu_b = np.atleast_1d(mu_a)
    out = _bisect_eps(mu_b, np.full(mu_b.shape, target))
    return float(out[0]) if mu_a.ndim == 0 else out.reshape(mu_a.shape)


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ (rounded *down*) such that μ-GDP implies (ε, δ)-DP.

    Use it to turn an (ε, δ) budget into a GDP budget, e.g. for tuning a mechanism.

    >>> round(gdp_mu(35.5663, 1e-6), 4)
    5.0
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_probability("delta", delta)
    log_delta = math.log(delta)
    target = log_delta - float(log_delta_error_bound(log_delta))

    def ok(m: float) -> bool:
        return float(_log_delta(np.asarray(m), np.asarray(epsilon))) <= target

    hi = 1.0
    while ok(hi):
        hi *= 2.0
        if hi > 1e12:
            raise ValueError("no finite mu: the (epsilon, delta) budget is satisfied by every mu")
    lo = hi / 2.0
    while not ok(lo):
        hi, lo = lo, lo / 2.0
        if lo < 1e-300:
            raise ValueError(f"no mu > 0 satisfies delta={delta!r} at epsilon={epsilon!r}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def gdp_tradeoff(mu: float, alpha: np.ndarray | float) -> np.ndarray | float:
    """The Gaussian trade-off function G_μ(α) = Φ(Φ^{-1}(1 − α) − μ) (type II error at type I α)."""
    mu = check_positive("mu", mu)
    alpha_a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    out = special.ndtr(special.ndtri(1.0 - alpha_a) - mu)
    return float(out) if np.ndim(out) == 0 else out


def pure_dp_to_gdp(epsilon: float | np.ndarray) -> float | np.ndarray:
    """The smallest μ such that every ε-DP mechanism is μ-GDP: μ = 2Φ^{-1}(e^ε/(1 + e^ε)).

    Proof: ε-DP means the trade-off function is at least f_{ε,0}(α) = max(0, 1 − e^ε α,
    e^{−ε}(1 − α)), which is piecewise linear with its kink on the diagonal at
    α* = 1/(1 + e^ε). G_μ is convex, symmetric and equals f_{ε,0} at α = 0 and α = 1, so
    G_μ ≤ f_{ε,0} everywhere iff G_μ(α*) ≤ α*, i.e. μ ≥ Φ^{-1}(1 − α*) − Φ^{-1}(α*)
    = 2Φ^{-1}(1 − α*). Randomized response attains it, so the constant is tight.
    Computed as −2Φ^{-1}(1/(1+e^ε)) = −2 ndtri(expit(−ε)) (no cancellation for large ε);
    rounded up by a relative 1e-12.

    >>> round(pure_dp_to_gdp(1.0), 6)
    1.232035
    """
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon must be in [0, inf), got {epsilon!r}")
    mu = -2.0 * special.ndtri(special.expit(-eps)) * (1.0 + 1e-12)
    return float(mu) if mu.ndim == 0 else mu
