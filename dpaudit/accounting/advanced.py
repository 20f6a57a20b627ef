"""Advanced composition (Dwork, Rothblum & Vadhan 2010), heterogeneous form.

For steps that are (ε_i, δ_i)-DP and any δ' > 0, the composition is (ε, δ' + Σ δ_i)-DP with

    ε = sqrt(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1)

(Dwork & Roth, Thm 3.20, with per-step ε_i; Kairouz, Oh & Viswanath 2015 for the general
form). Pure and (ε, δ) leaves enter with their own parameters. Gaussian-type steps have a
curve of valid (ε_i, δ_i): the δ left after the (ε, δ) leaves is split into the slack δ' and
an equal per-step δ_i for the Gaussian steps, and the split is optimised numerically (a
golden-section search over the fraction given to δ'); any split is valid, so the
optimisation only affects tightness. The formula can exceed basic composition (e.g. ε₀ = 1,
k = 10); it is reported as is and ``best`` takes the minimum.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.basic import split
from dpaudit.accounting.composition import Composition, NotApplicable
from dpaudit.accounting.search import delta_from_epsilon
from dpaudit.conversions import gdp_epsilon

NAME = "advanced"


def _drv(sum_sq: float, sum_lin: float, slack: float) -> float:
    return math.sqrt(2.0 * math.log(1.0 / slack) * sum_sq) + sum_lin


def epsilon(comp: Composition, delta: float) -> float:
    eps_pure_total, delta_used, rep, mult = split(comp, delta)
    # the fixed (pure / approx) steps, one entry per distinct ε with its multiplicity
    fixed = _fixed_steps(comp)
    f_sq = math.fsum(c * e * e for e, c in fixed)
    f_lin = math.fsum(c * e * math.expm1(e) for e, c in fixed)
    remaining = delta - delta_used
    if remaining <= 0:
        raise NotApplicable("the (epsilon, delta) events leave no delta for advanced composition's slack")
    if rep.size == 0:
        return _drv(f_sq, f_lin, remaining) * (1 + 1e-14)
    n_gauss = math.fsum(mult.tolist())

    def value(frac: float) -> float:
        slack = remaining * frac
        eps_i = gdp_epsilon(rep, remaining * (1.0 - frac) / n_gauss)
        sq = f_sq + math.fsum((mult * eps_i * eps_i).tolist())
        lin = f_lin + math.fsum((mult * eps_i * np.expm1(eps_i)).tolist())
        return _drv(sq, lin, slack)

    # golden-section search on logit(frac) ∈ [-30, 30]
    lo, hi = -30.0, 30.0
    g = (math.sqrt(5) - 1) / 2

    def at(z: float) -> float:
        return value(1.0 / (1.0 + math.exp(-z)))

    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = at(x1), at(x2)
    for _ in range(40):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = at(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = at(x2)
    return min(f1, f2) * (1 + 1e-14)


def _fixed_steps(comp: Composition) -> list[tuple[float, int]]:
    from dpaudit.accounting.composition import pure_epsilon
    from dpaudit.events import ApproxDpEvent

    out = []
    _, _, rest = comp.gaussian_part()
    for leaf, count in rest:
        e = pure_epsilon(leaf)
        if e is None and isinstance(leaf, ApproxDpEvent):
            e = leaf.epsilon
        if e is None:
            raise NotApplicable(f"no (epsilon, delta) bound is known for {type(leaf).__name__}")
        out.append((e, count))
    return out


def delta(comp: Composition, eps: float) -> float:
    return delta_from_epsilon(lambda d: epsilon(comp, d), eps)
