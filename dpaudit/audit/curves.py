"""Curve audits: a family of threshold tests against a claimed trade-off curve or privacy profile.

A mechanism satisfies a claim for *every* test, so one confidence box of a
:class:`~dpaudit.audit.thresholds.ThresholdRates` family that lies wholly on the wrong side of
the claimed curve refutes the claim, at the family's simultaneous confidence:

* :func:`audit_tradeoff_curve` — f-DP claims (Dong, Roth & Su 2022, arXiv:1905.02383,
  Definition 2.3: ``T(M(x), M(x′)) ≥ f``), e.g. μ-GDP with :func:`gdp_tradeoff_curve` or
  (ε, δ)-DP with :func:`epsilon_dp_tradeoff_curve`;
* :func:`audit_privacy_profile` — a claimed δ_c(ε) on a grid of ε (the whole privacy profile,
  Balle, Barthe & Gaboardi 2018, arXiv:1807.01647), through
  :func:`~dpaudit.audit.clopper_pearson.delta_from_rates`.

Checking the whole curve instead of one (ε, δ) point is what detects a 10 %-too-small σ
(Delta-Siege, Lokna et al. 2023; Nasr et al. 2023).

Example:
    >>> import numpy as np
    >>> from dpaudit.audit.multiplicity import Bonferroni
    >>> from dpaudit.audit.thresholds import threshold_rates
    >>> rng = np.random.default_rng(4)
    >>> r = threshold_rates(rng.normal(0, 1, 50_000), rng.normal(1.25, 1, 50_000),
    ...                     confidence=0.95, selection=Bonferroni())
    >>> audit_tradeoff_curve(r, gdp_tradeoff_curve(1.0)).violated   # true μ = 1.25
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.clopper_pearson import delta_from_rates
from dpaudit.audit.thresholds import ThresholdRates
from dpaudit.validation import check_nonnegative

__all__ = [
    "gdp_tradeoff_curve",
    "epsilon_dp_tradeoff_curve",
    "CurveAudit",
    "audit_tradeoff_curve",
    "ProfileAudit",
    "audit_privacy_profile",
]

ArrayLike = Any


def gdp_tradeoff_curve(mu: float) -> Callable[[ArrayLike], np.ndarray]:
    """The μ-GDP trade-off curve ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` as a vectorised callable
    (Dong, Roth & Su 2022, Definition 2.6: ``G_μ = T(N(0, 1), N(μ, 1))``).

    Same function as :func:`dpaudit.conversions.gdp_tradeoff`, evaluated with ``isf`` so that
    tiny α keep full relative precision.

    >>> f = gdp_tradeoff_curve(1.0)
    >>> round(float(f(0.3085375387)), 6)   # symmetric point α = β = Φ(−1/2)
    0.308538
    """
    from scipy import stats
    m = check_nonnegative("mu", mu)

    def f(alpha: ArrayLike) -> np.ndarray:
        return stats.norm.cdf(stats.norm.isf(np.asarray(alpha, dtype=np.float64)) - m)

    return f



def epsilon_dp_tradeoff_curve(epsilon: float, delta: float) -> Callable[[Any], np.ndarray]:
    """The (ε, δ)-DP trade-off curve ``max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α))``: the
    smallest FNR allowed at FPR α by Kairouz, Oh & Viswanath (2015, Theorem 2.1), i.e. the
    f_{ε,δ} of Dong, Roth & Su (2022, §2.2).

    >>> f = epsilon_dp_tradeoff_curve(math.log(2.0), 0.0)
    >>> f([0.0, 0.2, 1.0]).round(6).tolist()
    [1.0, 0.6, 0.0]
    """
    e, d = float(epsilon), float(delta)

    def f(alpha: Any) -> np.ndarray:
        a = np.asarray(alpha, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.maximum(1.0 - d - math.exp(min(e, 700.0)) * a, math.exp(-min(e, 700.0)) * (1.0 - d - a))
        return np.maximum(0.0, np.nan_to_num(v, nan=0.0))

    return f


@dataclass(frozen=True)
class CurveAudit:
    """Result of testing a threshold family against a claimed trade-off curve ``f``.

    A test certifies a violation when its whole confidence box lies below the curve:
    ``FNR_ub < f(FPR_ub)`` (or the reflected ``FPR_ub < f(FNR_ub)``). ``gaps[i]`` is the larger
    of ``f(FPR_ub) − FNR_ub`` and ``f(FNR_ub) − FPR_ub``; positive means violation. With
    probability ≥ ``confidence`` no violation is reported for a mechanism that satisfies the claim.
    """

    claim: str
    violated: bool
    violating_indices: tuple[int, ...]
    violating_thresholds: tuple[float, ...]
    max_gap: float
    worst_index: int
    worst_threshold: float
    worst_fpr_upper: float
    worst_fnr_upper: float
    confidence: float
    tests: int
    gaps: tuple[float, ...]


def audit_tradeoff_curve(
    rates: ThresholdRates, tradeoff: Callable[[ArrayLike], ArrayLike], *, claim: str = ""
) -> CurveAudit:
    """Test every point of ``rates`` against the claimed trade-off curve ``tradeoff``
    (non-increasing, ``[0,1] → [0,1]``, e.g. :func:`gdp_tradeoff_curve`).

    >>> import numpy as np
    >>> from dpaudit.audit.multiplicity import Bonferroni
    >>> from dpaudit.audit.thresholds import threshold_rates
    >>> rng = np.random.default_rng(4)
    >>> r = threshold_rates(rng.normal(0, 1, 100_000), rng.normal(1 / 0.8, 1, 100_000),
    ...                     confidence=0.95, selection=Bonferroni())
    >>> audit_tradeoff_curve(r, gdp_tradeoff_curve(1.0), claim="1-GDP").violated   # σ 20 % too small
    True
    >>> audit_tradeoff_curve(r, gdp_tradeoff_curve(1.25 * 1.05)).violated
    False
    """
    p = np.asarray(rates.fpr_upper)
    q = np.asarray(rates.fnr_upper)
    gaps = np.maximum(np.asarray(tradeoff(p), np.float64) - q, np.asarray(tradeoff(q), np.float64) - p)
    gaps = np.nan_to_num(gaps, nan=-np.inf)
    bad = np.flatnonzero(gaps > 0)
    i = int(np.argmax(gaps))
    return CurveAudit(
        claim=claim,
        violated=bool(bad.size),
        violating_indices=tuple(bad.tolist()),
        violating_thresholds=tuple(rates.thresholds[j] for j in bad.tolist()),
        max_gap=float(gaps[i]),
        worst_index=i,
        worst_threshold=rates.thresholds[i],
        worst_fpr_upper=float(p[i]),
        worst_fnr_upper=float(q[i]),
        confidence=rates.confidence,
        tests=rates.tests,
        gaps=tuple(gaps.tolist()),
    )


@dataclass(frozen=True)
class ProfileAudit:
    """Result of testing a threshold family against a claimed privacy profile δ_c(ε).

    ``delta_lower[j] = max_i max(0, 1 − FPR_ub,i − e^{ε_j} FNR_ub,i, 1 − FNR_ub,i − e^{ε_j} FPR_ub,i)``
    is a simultaneous (over all ε) lower bound on the true δ(ε); the claim is violated at ε_j
    when ``delta_lower[j] > claimed_deltas[j]``. ``violating_indices`` lists the tests that
    violate at some ε.
    """

    claim: str
    violated: bool
    epsilons: tuple[float, ...]
    claimed_deltas: tuple[float, ...]
    delta_lower: tuple[float, ...]
    best_test: tuple[int, ...]
    violated_epsilons: tuple[float, ...]
    violating_indices: tuple[int, ...]
    worst_epsilon: float
    max_gap: float
    confidence: float
    tests: int


def audit_privacy_profile(
    rates: ThresholdRates, epsilons: ArrayLike, claimed_deltas: ArrayLike, *, claim: str = ""
) -> ProfileAudit:
    """Test every point of ``rates`` against a claimed δ_c(ε) on a grid of ε ≥ 0.

    >>> import numpy as np
    >>> from dpaudit.audit.multiplicity import Bonferroni
    >>> from dpaudit.audit.thresholds import threshold_rates
    >>> rng = np.random.default_rng(5)
    >>> r = threshold_rates(rng.laplace(0, 1, 50_000), rng.laplace(1, 1, 50_000),
    ...                     confidence=0.95, selection=Bonferroni())
    >>> a = audit_privacy_profile(r, [0.5, 1.0], [0.0, 0.0], claim="0.5-DP")   # truly 1-DP
    >>> a.violated, a.violated_epsilons
    (True, (0.5,))
    """
    eps = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
    dc = np.broadcast_to(np.asarray(claimed_deltas, dtype=np.float64), eps.shape)
    if eps.ndim != 1 or np.any(~(eps >= 0)):
        raise ValueError("epsilons must be a 1-D array of values in [0, inf]")
    if np.any(~(dc >= 0) | ~(dc <= 1)):
        raise ValueError("claimed_deltas must be in [0, 1]")
    p = np.asarray(rates.fpr_upper)[None, :]
    q = np.asarray(rates.fnr_upper)[None, :]
    dl = np.asarray(delta_from_rates(p, q, eps[:, None]))
    best = np.argmax(dl, axis=1)
    dmax = dl[np.arange(eps.size), best]
    gap = dmax - dc
    w = int(np.argmax(gap))
    bad_tests = np.flatnonzero(np.any(dl > dc[:, None], axis=0))
    return ProfileAudit(
        claim=claim,
        violated=bool(np.any(gap > 0)),
        epsilons=tuple(eps.tolist()),
        claimed_deltas=tuple(dc.tolist()),
        delta_lower=tuple(dmax.tolist()),
        best_test=tuple(best.tolist()),
        violated_epsilons=tuple(eps[gap > 0].tolist()),
        violating_indices=tuple(bad_tests.tolist()),
        worst_epsilon=float(eps[w]),
        max_gap=float(gap[w]),
        confidence=rates.confidence,
        tests=rates.tests,
    )
