"""Gaussian differential privacy (f-DP) composition, exact for Gaussian-type events.

μ-GDP composes exactly: μ = sqrt(Σ μ_i²) (Dong, Roth & Su 2022, Cor. 3.3), and parallel
composition takes the largest μ. Gaussian mechanisms are exactly (s/σ)-GDP; the
heterogeneous-Gaussian report-noisy-max is (max_i s_i/σ_i)-GDP as post-processing of the
Gaussian mechanism on the one coordinate that changes; a pure ε-DP release is
μ(ε) = 2Φ^{-1}(e^ε/(1+e^ε))-GDP (:func:`dpaudit.conversions.pure_dp_to_gdp`, tight for
randomized response). An (ε, δ) release with δ > 0 is not μ-GDP for any finite μ: its trade-off
function may start at 1 − δ < 1 = G_μ(0).
"""

from __future__ import annotations

import math

from dpaudit.accounting.composition import Composition, NotApplicable, pure_epsilon
from dpaudit.conversions import gdp_delta, gdp_epsilon, pure_dp_to_gdp
from dpaudit.events import ApproxDpEvent

NAME = "gdp"


def mu(comp: Composition) -> float:
    """The GDP parameter of one composition (raises NotApplicable for (ε, δ > 0) leaves)."""
    mus_sq, _, rest = comp.gaussian_part()
    total = [comp.gaussian_mu_squared()]
    for leaf, count in rest:
        eps = pure_epsilon(leaf)
        if eps is None:
            if isinstance(leaf, ApproxDpEvent):
                raise NotApplicable(
                    "an (epsilon, delta) event with delta > 0 is not mu-GDP for any finite mu"
                )
            raise NotApplicable(f"no GDP bound is known for {type(leaf).__name__}")
        if eps > 0:
            total.append(count * pure_dp_to_gdp(eps) ** 2)
    # sqrt of an exactly rounded sum; a relative 1e-15 nudge covers the last-ulp rounding
    return math.sqrt(math.fsum(total)) * (1 + 1e-15)


def epsilon(comp: Composition, delta: float) -> float:
    m = mu(comp)
    return 0.0 if m == 0 else float(gdp_epsilon(m, delta))


def delta(comp: Composition, eps: float) -> float:
    m = mu(comp)
    return 0.0 if m == 0 else gdp_delta(m, eps)
