"""Basic composition: (Σ ε_i, Σ δ_i) (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014,
Thm 3.16).

Pure and (ε, δ) leaves contribute their parameters. A Gaussian-type step has a whole curve of
valid (ε_i, δ_i) (its exact GDP privacy profile, Dong, Roth & Su 2022, Cor. 2.13): the δ budget
left after the (ε, δ) leaves is split evenly over the Gaussian steps and each contributes its
exact ε at that δ. For long heterogeneous sequences the per-step μ are grouped into at most 1025
bins (:func:`binned_mus`: the 128 largest values exact, geometric bins below) and every step is
charged the largest μ in its bin, which can only increase ε (monotone in μ): the cost is
bounded whatever the number of steps.

Soundness and domain. Sums are rounded up (:func:`~dpaudit.numerics.sum_up`), the δ
left for the Gaussian steps is rounded down and the per-step δ is handled in log space, so a
per-step δ below the smallest double (δ = 1e-318 over 10⁶ steps) is still exact. Every finite
input gets an answer or "not applicable" (a sum of ε that exceeds the largest double; (ε, δ)
leaves that alone spend more than δ).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.binning import binned_up
from dpaudit.accounting.composition import Composition, NotApplicable, check_private, no_bound
from dpaudit.conversions import gdp_epsilon_log
from dpaudit.numerics import bisect, sum_up, sum_up_arrays

NAME = "basic"
_TINY = 5e-324


MAX_BINS = 1024
EXACT_TOP = 128


def binned_mus(mus: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-step μ in at most 1025 bins, each charged its largest member (:func:`binned_up`).

    >>> rep, mult = binned_mus(np.linspace(1.0, 2.0, 10**5), np.ones(10**5))
    >>> rep.size <= 1025, float(mult.sum()), float(rep.max())
    (True, 100000.0, 2.0)
    """
    return binned_up(mus, counts, MAX_BINS, EXACT_TOP)


def split(comp: Composition) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(Σ pure/approx ε, Σ approx δ — both rounded up —, Gaussian μ bins, multiplicities)."""
    check_private(comp)
    mus, counts = comp.gaussian_steps()
    st = comp.steps()
    if st.other:
        raise no_bound(st.other[0][0], "(epsilon, delta)")
    eps, dlt, cnt = st.fixed_arrays()
    eps_terms = sum_up_arrays(cnt, eps)
    delta_terms = sum_up_arrays(st.approx_counts, st.approx_delta)
    rep, mult = binned_mus(mus, counts) if mus.size else (mus, counts)
    return eps_terms, delta_terms, rep, mult


def _gaussian_epsilons(rep: np.ndarray, log_per_step: np.ndarray | float) -> np.ndarray:
    try:
        return np.asarray(gdp_epsilon_log(rep, log_per_step), dtype=float)
    except ValueError as exc:
        raise NotApplicable(f"a Gaussian step's epsilon exceeds the largest double: {exc}") from None


def _log_per_step(remaining: float, n: float) -> float:
    """log(remaining/n), rounded down by far more than its own rounding error."""
    x = math.log(remaining) - math.log(n)
    return x - 1e-14 * (1.0 + abs(x))


def epsilon(comp: Composition, delta: float) -> float:
    check_private(comp)
    if comp.is_empty:
        return 0.0
    eps_fixed, delta_used, rep, mult = split(comp)
    if math.isinf(eps_fixed):
        raise NotApplicable("the sum of the per-step epsilons exceeds the largest double")
    if rep.size == 0:
        if delta_used > delta:
            raise NotApplicable(
                f"the (epsilon, delta) events alone spend delta={delta_used:.3g} > {delta:.3g}"
            )
        return eps_fixed
    remaining = math.nextafter(delta - delta_used, 0.0)
    if remaining <= 0:
        raise NotApplicable("the (epsilon, delta) events leave no delta for the Gaussian steps")
    eps_g = _gaussian_epsilons(rep, _log_per_step(remaining, math.fsum(mult.tolist())))
    total = sum_up([(1.0, eps_fixed), *zip(mult.tolist(), eps_g.tolist())])
    if math.isinf(total):
        raise NotApplicable("the sum of the per-step epsilons exceeds the largest double")
    return total


def delta(comp: Composition, eps: float) -> float:
    check_private(comp)
    if comp.is_empty:
        return 0.0
    eps_fixed, delta_used, rep, mult = split(comp)
    if rep.size == 0:
        return min(1.0, delta_used) if eps_fixed <= eps else 1.0
    budget = eps - eps_fixed
    if not budget > 0:
        return 1.0
    n = math.fsum(mult.tolist())

    def over(log_step: float | np.ndarray) -> np.ndarray:
        """True where the Gaussian steps at per-step δ = e^x need more ε than the budget."""
        x = np.atleast_1d(np.asarray(log_step, dtype=float))
        out = np.empty(x.shape, dtype=bool)
        for i, xi in enumerate(x.reshape(-1)):
            eps_g = _gaussian_epsilons(rep, float(xi))
            out.reshape(-1)[i] = sum_up(list(zip(mult.tolist(), eps_g.tolist()))) > budget
        return out.reshape(np.shape(log_step))

    top_total = 1.0 - delta_used
    if not top_total > 0:
        return 1.0
    hi = _log_per_step(top_total, n)
    if hi >= 0 or bool(over(hi)):
        return 1.0
    lo = math.log(_TINY) - math.log(n) - 50.0
    if not bool(over(lo)):
        x = lo
    else:
        _, x_hi = bisect(over, lo, hi, xtol=1e-10)
        x = float(x_hi)
    total = delta_used + n * math.exp(x)
    return min(1.0, math.nextafter(total * (1 + 1e-15), math.inf))
