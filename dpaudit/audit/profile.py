"""Monte-Carlo privacy profile from white-box privacy-loss samples, with confidence bands.

For a pair (x, x′) the privacy profile is the hockey-stick divergence

    δ(ε) = E_{o∼P(x)}[(1 − e^{ε − L(o)})₊],   L(o) = log p(o | x) − log p(o | x′)

(Balle, Barthe & Gaboardi 2018, arXiv:1807.01647, §2; Balle & Wang 2018, arXiv:1805.06530,
Theorem 5 gives the equivalent form P[L ≥ ε] − e^ε P[L′ ≤ −ε]). :func:`monte_carlo_profile`
estimates it from samples of L with either

* a one-sided DKW band on the distribution of L (Dvoretzky, Kiefer & Wolfowitz 1956 with the
  tight constant of Massart 1990, *Ann. Probab.* 18(3), 1269–1283:
  P[sup_t (F_n(t) − F(t)) > λ] ≤ e^{−2nλ²} for e^{−2nλ²} ≤ ½), integrated exactly, which holds
  for all ε simultaneously; or
* empirical-Bernstein bounds per ε (Maurer & Pontil 2009, COLT, arXiv:0907.3740, Theorem 4:
  E Z ≤ Z̄ + √(2 V_n log(2/α)/n) + 7 log(2/α)/(3(n − 1)) for Z ∈ [0, 1]) with a Bonferroni
  correction over the ε grid.

:func:`epsilon_lower_bound_from_losses` inverts the lower band at δ. Both are valid only if L
is the true privacy loss of the implementation (a white-box model).

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(6)
    >>> p = monte_carlo_profile(rng.normal(0.5, 1.0, 100_000), [0.0], confidence=0.95)
    >>> round(p.delta_estimate[0], 2)   # μ = 1 Gaussian: exact δ(0) = 0.383
    0.38
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit.audit.results import BoundEvidence, EpsilonLowerBound
from dpaudit.audit.statistics import as_samples
from dpaudit.numerics import bisect
from dpaudit.validation import check_probability

__all__ = [
    "PrivacyProfileEstimate",
    "monte_carlo_profile",
    "epsilon_lower_bound_from_losses",
]

ArrayLike = Any


@dataclass(frozen=True)
class PrivacyProfileEstimate:
    """δ(ε) = E[(1 − e^{ε−L})₊] estimated from ``trials`` privacy-loss samples ``L`` (o ~ P(x)).

    ``method="dkw"``: ``delta_lower`` holds for all ε ≥ 0 simultaneously with probability
    ≥ ``confidence`` (one-sided DKW–Massart band on the distribution of L, integrated exactly),
    and so does ``delta_upper``. ``method="bernstein"``: empirical-Bernstein (Maurer & Pontil
    2009) per grid point with a Bonferroni correction over the grid, one statement per side.
    """

    epsilons: tuple[float, ...]
    delta_estimate: tuple[float, ...]
    delta_lower: tuple[float, ...]
    delta_upper: tuple[float, ...]
    confidence: float
    trials: int
    method: str


def _hinge_sum(ls: np.ndarray, eps: float, lo: int, hi: int) -> float:
    """Σ_{i∈[lo,hi)} (1 − e^{ε − L_i})₊ for sorted ``ls`` (stable: −expm1)."""
    if hi <= lo:
        return 0.0
    start = max(lo, int(np.searchsorted(ls, eps, side="right")))
    if start >= hi:
        return 0.0
    return float(-np.expm1(eps - ls[start:hi]).sum())


def _hinge(ls: np.ndarray, eps: float, i: int) -> float:
    if i < 0 or i >= ls.size or not ls[i] > eps:
        return 0.0
    return float(-math.expm1(eps - ls[i]))


def _dkw_bounds(ls: np.ndarray, eps: float, alpha: float) -> tuple[float, float, float]:
    """(estimate, lower, upper) of δ(ε) from the sorted losses ``ls``.

    One-sided DKW (Massart 1990, Theorem 1 and its one-sided corollary, valid for α ≤ ½): with
    probability ≥ 1 − α the true distribution of L puts at most λ = √(log(1/α)/(2n)) more mass
    above any point than the empirical one does. The hinge (1 − e^{ε−L})₊ is non-decreasing in
    L, so the smallest δ consistent with the band moves mass λ from the top sample values to
    the bottom (lower) and the largest moves it to L = +∞ (upper).
    """
    n = ls.size
    mass = math.sqrt(math.log(1.0 / alpha) / (2.0 * n)) * n
    kf = int(math.floor(mass))
    fr = mass - kf
    est = _hinge_sum(ls, eps, 0, n) / n
    if kf >= n:
        return est, 0.0, 1.0
    p = n - kf - 1  # lower: remove the top `mass` of the distribution
    lo = (_hinge_sum(ls, eps, 0, p) + (1.0 - fr) * _hinge(ls, eps, p)) / n
    up = (mass + (1.0 - fr) * _hinge(ls, eps, kf) + _hinge_sum(ls, eps, kf + 1, n)) / n
    return est, max(0.0, lo), min(1.0, up)


def _bernstein_bounds(ls: np.ndarray, eps: float, alpha: float) -> tuple[float, float, float]:
    """Empirical-Bernstein bounds (Maurer & Pontil 2009, Theorem 4) on E[(1 − e^{ε−L})₊] ∈ [0, 1],
    each side at level α: mean ± (√(2 V log(2/α)/n) + 7 log(2/α)/(3(n − 1)))."""
    n = ls.size
    start = int(np.searchsorted(ls, eps, side="right"))
    y = -np.expm1(eps - ls[start:])
    s1, s2 = float(y.sum()), float((y * y).sum())
    mean = s1 / n
    var = max(0.0, (s2 - n * mean * mean) / (n - 1))
    lg = math.log(2.0 / alpha)
    w = math.sqrt(2.0 * var * lg / n) + 7.0 * lg / (3.0 * (n - 1))
    return mean, max(0.0, mean - w), min(1.0, mean + w)


def _losses(privacy_losses: ArrayLike) -> np.ndarray:
    return np.sort(as_samples("privacy_losses", privacy_losses))


def monte_carlo_profile(
    privacy_losses: ArrayLike,
    epsilons: ArrayLike,
    *,
    confidence: float,
    method: Literal["dkw", "bernstein"] = "dkw",
) -> PrivacyProfileEstimate:
    """Monte-Carlo privacy profile with confidence bands from white-box privacy losses.

    ``privacy_losses`` are ``L = log p(o|x) − log p(o|x′)`` with ``o ~ P(x)`` (``+inf`` allowed
    where ``p(o|x′) = 0``). This bounds δ(ε) for the ordered pair (x, x′); audit the other order
    with its own samples.

    >>> import numpy as np
    >>> rng = np.random.default_rng(6)
    >>> L = rng.normal(0.5, 1.0, 200_000)   # μ = 1 Gaussian: L ~ N(μ²/2, μ²)
    >>> p = monte_carlo_profile(L, [0.0, 1.0], confidence=0.95)
    >>> [round(v, 2) for v in p.delta_estimate]   # exact: 0.383, 0.127
    [0.38, 0.13]
    >>> all(lo <= e <= up for lo, e, up in zip(p.delta_lower, p.delta_estimate, p.delta_upper))
    True
    """
    conf = check_probability("confidence", confidence)
    ls = _losses(privacy_losses)
    eps = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
    if eps.ndim != 1 or np.any(~(eps >= 0)) or np.any(np.isinf(eps)):
        raise ValueError("epsilons must be a 1-D array of finite values in [0, inf)")
    alpha = 1.0 - conf
    if method == "dkw":
        if alpha > 0.5:
            raise ValueError(f"confidence must be in [0.5, 1) for method='dkw', got {confidence!r}")
        rows = [_dkw_bounds(ls, float(e), alpha) for e in eps]
        desc = "dkw (uniform in epsilon)"
    elif method == "bernstein":
        if ls.size < 2:
            raise ValueError("privacy_losses needs at least 2 samples for method='bernstein'")
        rows = [_bernstein_bounds(ls, float(e), alpha / eps.size) for e in eps]
        desc = f"empirical-bernstein (bonferroni over {eps.size} epsilons)"
    else:
        raise ValueError(f"method must be 'dkw' or 'bernstein', got {method!r}")
    est, lo, up = (tuple(float(r[j]) for r in rows) for j in range(3))
    return PrivacyProfileEstimate(tuple(eps.tolist()), est, lo, up, conf, int(ls.size), desc)


def _dkw_epsilon(ls: np.ndarray, delta: float, alpha: float) -> float:
    """``sup{ε ≥ 0 : δ_lower(ε) > δ}`` for the DKW lower band (non-increasing in ε).

    The bisection keeps ``lo`` on the side where the band still exceeds δ, so the returned
    value is never above the supremum.
    """

    def above(e: np.ndarray) -> np.ndarray:
        return np.asarray(_dkw_bounds(ls, float(e), alpha)[1] > delta)

    if not above(np.asarray(0.0)):
        return 0.0
    finite = ls[np.isfinite(ls)]
    hi = float(finite[-1]) if finite.size else 0.0
    if not hi > 0 or above(np.asarray(hi)):
        return math.inf  # the kept mass at L = +inf alone exceeds delta
    lo, _ = bisect(above, 0.0, hi, xtol=1e-12, rtol=1e-12)
    return float(lo)


def epsilon_lower_bound_from_losses(
    privacy_losses: ArrayLike,
    *,
    delta: float,
    confidence: float,
    method: Literal["dkw", "bernstein"] = "dkw",
    epsilons: ArrayLike | None = None,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` from the Monte-Carlo privacy profile.

    ``dkw``: ``sup{ε ≥ 0 : δ_lower(ε) > δ}`` (bisection; valid because the band is uniform in ε).
    ``bernstein``: the largest ε of the pre-registered grid ``epsilons`` with ``δ_lower(ε) > δ``.

    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> b = epsilon_lower_bound_from_losses(rng.normal(0.5, 1.0, 200_000), delta=0.01, confidence=0.95)
    >>> 2.1 < b.epsilon < 2.318   # exact ε(0.01) of 1-GDP: 2.3178
    True
    """
    d = check_probability("delta", delta, low_open=False)
    conf = check_probability("confidence", confidence)
    ls = _losses(privacy_losses)
    n = ls.size
    alpha = 1.0 - conf
    if method == "bernstein":
        if epsilons is None:
            raise ValueError("epsilons (a pre-registered grid) is required for method='bernstein'")
        prof = monte_carlo_profile(ls, epsilons, confidence=conf, method="bernstein")
        ok = [e for e, lo in zip(prof.epsilons, prof.delta_lower) if lo > d]
        eps_lb = max(ok) if ok else 0.0
        desc = prof.method
    elif method == "dkw":
        if epsilons is not None:
            raise ValueError("epsilons must be None for method='dkw' (the band is uniform in epsilon)")
        if alpha > 0.5:
            raise ValueError(f"confidence must be in [0.5, 1) for method='dkw', got {confidence!r}")
        eps_lb = _dkw_epsilon(ls, d, alpha)
        desc = "dkw (uniform in epsilon)"
    else:
        raise ValueError(f"method must be 'dkw' or 'bernstein', got {method!r}")
    evidence = BoundEvidence(
        confidence=conf,
        threshold=None,
        fpr_upper=None,
        fnr_upper=None,
        trials=int(n),
        method=f"monte-carlo privacy profile, {desc}",
        null_trials=int(n),
    )
    return EpsilonLowerBound(epsilon=float(eps_lb), delta=d, evidence=evidence)
