"""RDP of repeat-and-select (Papernot & Steinke 2022, "Hyperparameter Tuning with Renyi
Differential Privacy", ICLR; arXiv:2110.03620v2): an event Q run K times, only the best run
released, K random.

* K truncated negative binomial with shape η ≥ 0 and parameter γ ∈ (0, 1] (Thm 2; η = 0 the
  logarithmic distribution, Thm 2 covers it): if Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP, the release is
  (λ, ε + (1 + η)[(1 − 1/λ̂)ε̂ + log(1/γ)/λ̂] + log E[K]/(λ − 1))-RDP for every λ > 1, λ̂ ≥ 1.
  λ̂ is chosen on :data:`~dpaudit.accounting.rdp.ORDERS` (any λ̂ is valid, the choice affects
  tightness only).
* K Poisson of mean μ (Thm 6): if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with e^ε̂ ≤ 1 + 1/(λ − 1), the
  release is (λ, ε + μδ̂ + log μ/(λ − 1))-RDP. ε̂ = log(1 + 1/(λ − 1)) rounded *down* (a smaller
  ε̂ with its own δ̂ also satisfies the hypothesis: (ε̂', δ̂)-DP implies (ε̂, δ̂)-DP for ε̂ ≥ ε̂'),
  δ̂ from Q's RDP curve by the conversion of Canonne, Kamath & Steinke 2020, Prop. 12
  (log δ̂ = (λ' − 1)(ρ(λ') − ε̂ + log(1 − 1/λ')) − log λ'), minimised over λ' on the grid.

In both cases RDP is non-decreasing in the order (van Erven & Harremoës 2014, Thm 3), so the
bound at λ is also the smallest bound at a grid order ≥ λ (this tames log E[K]/(λ − 1) near 1).

γ is fixed by E[K] = mean: with t = log(1/γ), E[K] = η·expm1(t)/(−expm1(−ηt)) (η > 0) or
expm1(t)/t (η = 0), increasing in t. Bisection keeps the end whose *computed* mean is at least
mean·(1 + 1e-12), which covers the few-ulp error of the formula, so the t used is never below
the true one (a larger log(1/γ) only increases the bound). Every sum of the bound is of
non-negative terms and carries a relative margin of 1e-13.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpaudit.events_ml import RepeatAndSelectEvent

__all__ = ["log_inverse_gamma", "repeat_select_rdp"]

_MARGIN = 1e-13


def _log_mean(t: float, shape: float) -> float:
    """log E[K] of the truncated negative binomial with γ = e^{−t} (t > 0)."""
    log_expm1 = t + math.log(-math.expm1(-t))  # log(e^t − 1) without overflow
    if shape * t < 1e-200:  # −expm1(−ηt) = ηt(1 − O(ηt)): the logarithmic case to within 1e-200
        return log_expm1 - math.log(t)
    return math.log(shape) + log_expm1 - math.log(-math.expm1(-shape * t))


def log_inverse_gamma(mean: float, shape: float) -> float:
    """t = log(1/γ) of the truncated negative binomial of the given shape (finite, ≥ 0) and
    mean (≥ 1), rounded *up* (see the module docstring); 0 for mean = 1 (K = 1 surely).

    >>> t = log_inverse_gamma(10.0, 1.0)  # geometric: E[K] = 1/γ
    >>> abs(t - math.log(10.0)) < 1e-9 and t >= math.log(10.0)
    True
    """
    if mean == 1.0:
        return 0.0
    target = math.log(mean) + 1e-12
    lo, hi = 0.0, 1.0
    while _log_mean(hi, shape) < target:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if _log_mean(mid, shape) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _suffix_min(grid: np.ndarray, on_grid: np.ndarray, alphas: np.ndarray, direct: np.ndarray) -> np.ndarray:
    """min(direct, the bound at the first grid order ≥ α, or any later one): monotonicity."""
    suffix = np.minimum.accumulate(on_grid[::-1])[::-1]
    idx = np.searchsorted(grid, alphas, side="left")
    later = np.where(idx < grid.size, suffix[np.minimum(idx, grid.size - 1)], np.inf)
    return np.minimum(direct, later)


def _poisson_extra(grid: np.ndarray, rho_grid: np.ndarray, alphas: np.ndarray, mean: float) -> np.ndarray:
    """μδ̂ + log μ/(λ − 1) of Thm 6 at each λ in ``alphas`` (rounded up)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        eps_hat = np.log1p(1.0 / (alphas - 1.0)) * (1.0 - 1e-15)
        eps_hat = np.nextafter(np.maximum(eps_hat, 0.0), -np.inf).clip(min=0.0)
        g1, t = (grid - 1.0)[None, :], np.log1p(-1.0 / grid)[None, :]
        rho = rho_grid[None, :]
        conv = g1 * (rho - eps_hat[:, None] + t) - np.log(grid)[None, :]
        err = 1e-14 * (g1 * (rho + eps_hat[:, None] + np.abs(t)) + np.log(grid)[None, :]) + 1e-15
        conv = np.where(np.isnan(conv), np.inf, conv + err)
        delta_hat = np.minimum(np.exp(np.min(conv, axis=1)), 1.0)
        return mean * delta_hat + math.log(mean) / (alphas - 1.0)


def repeat_select_rdp(
    leaf: RepeatAndSelectEvent,
    alphas: np.ndarray,
    grid: np.ndarray,
    inner: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """ρ(α) of ``leaf`` at each order in ``alphas`` (all > 1), rounded up, given ``inner``: the
    inner event's RDP curve (an upper bound, vectorised) and ``grid``: the increasing orders
    (> 1) on which λ̂ (Thm 2), λ' (Thm 6's δ̂) and the monotone envelope are taken."""
    a = np.asarray(alphas, dtype=float)
    g = np.asarray(grid, dtype=float)
    rho_a, rho_g = inner(a), inner(g)
    if leaf.is_poisson:
        extra_a = _poisson_extra(g, rho_g, a, leaf.mean)
        extra_g = _poisson_extra(g, rho_g, g, leaf.mean)
    else:
        t = log_inverse_gamma(leaf.mean, leaf.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            hat = np.where(np.isnan(rho_g), np.inf, (1.0 - 1.0 / g) * rho_g + t / g)
            c = (1.0 + leaf.shape) * float(np.min(hat)) * (1.0 + _MARGIN)
        log_m = math.log(leaf.mean)
        with np.errstate(divide="ignore", over="ignore"):
            extra_a = log_m / (a - 1.0) + c
            extra_g = log_m / (g - 1.0) + c
    with np.errstate(over="ignore", invalid="ignore"):
        direct = (rho_a + extra_a) * (1.0 + _MARGIN)
        on_grid = (rho_g + extra_g) * (1.0 + _MARGIN)
    finite = np.where(np.isnan(on_grid), np.inf, on_grid)
    out = _suffix_min(g, finite, a, np.where(np.isnan(direct), np.inf, direct))
    with np.errstate(over="ignore"):
        return np.nextafter(out, np.inf)
