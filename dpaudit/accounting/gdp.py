"""Gaussian differential privacy (f-DP) composition, exact for Gaussian-type events.

μ-GDP composes exactly: μ = sqrt(Σ μ_i²) (Dong, Roth & Su 2022, Cor. 3.3), and parallel
composition takes the largest μ. Gaussian mechanisms are exactly (s/σ)-GDP (ibid. Thm 2.7); the
heterogeneous-Gaussian report-noisy-max is (max_i s_i/σ_i)-GDP as post-processing of the
Gaussian mechanism on the one coordinate that changes (ibid. Prop. 2.8,
:func:`dpaudit.analyses.rnm_gaussian.gdp_bound`); a pure ε-DP release is
μ(ε) = 2Φ^{-1}(e^ε/(1+e^ε))-GDP (:func:`dpaudit.conversions.pure_dp_to_gdp`, tight for
randomized response). An (ε, δ) release with δ > 0 is not μ-GDP for any finite μ: its trade-off
function may start at 1 − δ < 1 = G_μ(0). The conversion to (ε, δ) is the exact privacy profile
δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (ibid. Cor. 2.13), in log space
(:mod:`dpaudit.conversions`).

Soundness and domain. μ is summed with scaling (no underflow of μ_i² for μ_i down to 5e-324,
no overflow up to 1.8e308) and rounded up; the conversions are certified upper bounds for every
μ. Accuracy (measured against mpmath at δ from 1e-300 to 0.5, always on the safe side): ε within a
relative 3e-12 of exact for μ ∈ [1e-3, 1e6]; δ within a relative 1e-10 for μ ≤ 10³, growing with μ
to 2e-10 at 10⁴, 1e-9 at 10⁵ and 1e-8 at 10⁶ (the margin for the rounding of ε/μ, whose float
spacing grows with μ); beyond, δ(ε) can be conservative by that spacing. ε is not applicable when
it exceeds the largest double (μ ≳ 1.9e154); δ is then 1.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.composition import Composition, NotApplicable, check_private, no_bound
from dpaudit.conversions import gdp_delta, gdp_epsilon, pure_dp_to_gdp
from dpaudit.numerics import norm_up

NAME = "gdp"


def mu(comp: Composition) -> float:
    """The GDP parameter of one composition, rounded up (inf if it overflows).

    Raises NotApplicable for (ε, δ > 0) leaves, non-private leaves and unknown leaf types.
    """
    check_private(comp)
    st = comp.steps()
    if st.approx_eps.size:
        raise NotApplicable("an (epsilon, delta) event with delta > 0 is not mu-GDP for any finite mu")
    if st.other:
        raise no_bound(st.other[0][0], "GDP")
    eps, counts = st.pure_arrays()
    keep = eps > 0
    eps, counts = eps[keep], counts[keep]
    values = np.full(eps.size, math.inf)
    finite = np.isfinite(eps)
    if np.any(finite):
        values[finite] = pure_dp_to_gdp(eps[finite])
    return norm_up(np.append(values, comp.gaussian_mu()), np.append(counts, 1.0))


def epsilon(comp: Composition, delta: float) -> float:
    m = mu(comp)
    if m == 0:
        return 0.0
    if math.isinf(m):
        raise NotApplicable("the composed mu exceeds the largest double, and so would epsilon")
    try:
        return float(gdp_epsilon(m, delta))
    except ValueError as exc:
        raise NotApplicable(f"epsilon exceeds the largest double (mu = {m:.6g}): {exc}") from None


def delta(comp: Composition, eps: float) -> float:
    m = mu(comp)
    if m == 0:
        return 0.0
    if math.isinf(m):
        return 1.0  # δ_μ(ε) → 1 as μ → ∞: the only bound left
    return float(gdp_delta(m, eps))
