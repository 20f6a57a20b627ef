"""A two-sided interval for the μ one threshold test exhibits: how loose is the certificate?

A threshold test with error rates (FPR, FNR) exhibits the GDP parameter
μ_T = Φ⁻¹(1 − FPR) − Φ⁻¹(FNR) (Dong, Roth & Su 2022, Definition 2.6: a μ-GDP pair has
FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ), with equality for the Gaussian pair at every threshold). μ_T is a lower
bound on the pair's true μ, and equals it when the pair's trade-off curve is Gaussian-shaped and
the test is optimal. Clopper–Pearson (1934) bounds on *both* sides of both rates, each at level
α/4, give an interval that contains μ_T with probability ≥ 1 − α (Bonferroni over the four
bounds): its lower end says "at least this much leaks", its upper end "this test sees no more
than this" — beside the certificate it shows how loose the certificate is on the pair audited.

Example:
    >>> iv = mu_interval_from_counts(3085, 10_000, 3085, 10_000, confidence=0.95)   # μ_T = 1
    >>> round(iv.lower, 3), round(iv.estimate, 3), round(iv.upper, 3)
    (0.941, 1.0, 1.059)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.audit.clopper_pearson import check_counts, cp_lower, cp_upper
from dpaudit.validation import check_probability

__all__ = ["MuInterval", "mu_interval_from_counts"]


@dataclass(frozen=True)
class MuInterval:
    """``lower ≤ μ_T ≤ upper`` with probability ≥ ``confidence`` (module docstring);
    ``estimate`` is the plug-in value at the observed rates (clipped to ≥ 0)."""

    lower: float
    estimate: float
    upper: float
    confidence: float
    false_positives: int
    null_trials: int
    false_negatives: int
    alt_trials: int
    method: str = "clopper-pearson on both sides of both rates, alpha/4 each"


def _mu(p: float, q: float) -> float:
    from scipy import stats
    with np.errstate(divide="ignore"):
        return float(stats.norm.isf(p) - stats.norm.ppf(q))


def mu_interval_from_counts(
    false_positives: int, null_trials: int, false_negatives: int, alt_trials: int, *, confidence: float
) -> MuInterval:
    """The interval of the module docstring for one test fixed before the counts were drawn."""
    conf = check_probability("confidence", confidence)
    check_counts(false_positives, null_trials)
    check_counts(false_negatives, alt_trials)
    a = (1.0 - conf) / 4.0
    fp, n0, fn, n1 = int(false_positives), int(null_trials), int(false_negatives), int(alt_trials)
    pu, pl = float(cp_upper(fp, n0, a)), float(cp_lower(fp, n0, a))
    qu, ql = float(cp_upper(fn, n1, a)), float(cp_lower(fn, n1, a))
    lo = max(0.0, _mu(pu, qu))
    hi = _mu(pl, ql)  # +inf when a rate's lower bound is 0
    est = max(0.0, _mu(fp / n0, fn / n1)) if 0 < fp < n0 and 0 < fn < n1 else math.nan
    return MuInterval(lo, est if not math.isnan(est) else lo, max(hi, lo), conf, fp, n0, fn, n1)
