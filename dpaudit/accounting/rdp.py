"""Rényi differential privacy (Mironov 2017) with a continuous search over orders.

Per-leaf RDP curves ρ(α), all in log space:

* Gaussian (μ = s/σ): α μ²/2; a Gaussian sequence: α Σμ_i²/2; heterogeneous-Gaussian
  report-noisy-max: α μ²/2 with μ = max_i s_i/σ_i (post-processing).
* Laplace with b = scale/sensitivity (Mironov 2017, Table II):
  (1/(α−1)) log[α/(2α−1) e^{(α−1)/b} + (α−1)/(2α−1) e^{−α/b}].
* k-ary randomized response (exact, the pair of inputs is unique up to symmetry):
  (1/(α−1)) log[p^α q^{1−α} + q^α p^{1−α} + (k−2) q], p = e^ε/(e^ε+k−1), q = 1/(e^ε+k−1).
* any other pure ε-DP release: the RDP of binary randomized response with the same ε, which
  dominates every ε-DP mechanism (its trade-off function is the lowest one allowed),
  (1/(α−1)) log[(e^{αε} + e^{(1−α)ε})/(1 + e^ε)], also capped by ε.
* (ε, δ) releases with δ > 0 have no RDP curve: not applicable.

Conversion to (ε, δ): the improved bound of Balle et al. 2020 (Thm 21) / Canonne, Kamath &
Steinke 2020 (Prop. 12), ε = ρ(α) + log((α−1)/α) − (log δ + log α)/(α − 1), and for δ(ε) its
inverse together with the KL bound δ ≤ sqrt(1 − e^{−ρ(α)}) (α close to 1). Orders are searched
on a fine logarithmic grid α − 1 ∈ [1e-5, 1e5] (2,000 points) and refined by a bounded Brent
search; every α gives a valid bound, so the search affects only tightness, never soundness.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dpaudit.accounting.composition import Composition, NotApplicable, pure_epsilon
from dpaudit.events import ApproxDpEvent, LaplaceEvent, RandomizedResponseEvent

NAME = "rdp"

ORDERS = 1.0 + np.logspace(-5, 5, 2000)


def laplace_rdp(b: float, alphas: np.ndarray) -> np.ndarray:
    a = np.asarray(alphas, dtype=float)
    log_sum = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) / b, np.log((a - 1) / (2 * a - 1)) - a / b)
    return np.minimum(log_sum / (a - 1), 1.0 / b)


def randomized_response_rdp(eps: float, k: int, alphas: np.ndarray) -> np.ndarray:
    a = np.asarray(alphas, dtype=float)
    log_norm = np.logaddexp(eps, math.log(k - 1))
    lp, lq = eps - log_norm, -log_norm
    terms = [a * lp + (1 - a) * lq, a * lq + (1 - a) * lp]
    if k > 2:
        terms.append(np.full_like(a, math.log(k - 2) + lq))
    out = special.logsumexp(np.stack(terms), axis=0) / (a - 1)
    return np.clip(out, 0.0, eps)


def pure_rdp(eps: float, alphas: np.ndarray) -> np.ndarray:
    a = np.asarray(alphas, dtype=float)
    if eps == 0:
        return np.zeros_like(a)
    out = (np.logaddexp(a * eps, (1 - a) * eps) - np.logaddexp(0.0, eps)) / (a - 1)
    return np.clip(out, 0.0, eps)


def rdp_curve(comp: Composition, alphas: np.ndarray) -> np.ndarray:
    """Σ over leaves of count · ρ_leaf(α), vectorised over ``alphas``."""
    a = np.asarray(alphas, dtype=float)
    total = a * comp.gaussian_mu_squared() / 2.0
    _, _, rest = comp.gaussian_part()
    for leaf, count in rest:
        if isinstance(leaf, LaplaceEvent):
            total = total + count * laplace_rdp(leaf.scale / leaf.sensitivity, a)
        elif isinstance(leaf, RandomizedResponseEvent):
            total = total + count * randomized_response_rdp(leaf.epsilon, leaf.num_categories, a)
        else:
            e = pure_epsilon(leaf)
            if e is None:
                if isinstance(leaf, ApproxDpEvent):
                    raise NotApplicable("an (epsilon, delta) event with delta > 0 has no RDP curve")
                raise NotApplicable(f"no RDP curve is known for {type(leaf).__name__}")
            total = total + count * pure_rdp(e, a)
    return total


def _eps_at(comp: Composition, alphas: np.ndarray, log_delta: float) -> np.ndarray:
    a = np.asarray(alphas, dtype=float)
    rho = rdp_curve(comp, a)
    return rho + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1)


def _minimise(fun, grid: np.ndarray) -> tuple[float, float]:
    vals = fun(grid)
    i = int(np.argmin(vals))
    best_a, best_v = float(grid[i]), float(vals[i])
    lo = float(grid[max(i - 1, 0)])
    hi = float(grid[min(i + 1, grid.size - 1)])
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda x: float(fun(np.array([x]))[0]), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-12 * max(1.0, lo)},
        )
        if res.fun < best_v:
            best_a, best_v = float(res.x), float(res.fun)
    return best_a, best_v


def epsilon_and_order(comp: Composition, delta: float) -> tuple[float, float]:
    """(ε, the optimal order α) for the composition at δ."""
    log_delta = math.log(delta)
    alpha, eps = _minimise(lambda a: _eps_at(comp, a, log_delta), ORDERS)
    return max(0.0, eps * (1 + 1e-12) + 1e-15), alpha


def epsilon(comp: Composition, delta: float) -> float:
    return epsilon_and_order(comp, delta)[0]


def delta(comp: Composition, eps: float) -> float:
    def log_delta(a: np.ndarray) -> np.ndarray:
        rho = rdp_curve(comp, a)
        conv = (a - 1) * (rho - eps + np.log1p(-1.0 / a)) - np.log(a)
        with np.errstate(divide="ignore"):
            kl = 0.5 * np.log(-np.expm1(-rho))
        return np.minimum(conv, kl)

    _, best = _minimise(log_delta, ORDERS)
    out = math.exp(best + 1e-12)
    # exp underflows to 0 for log δ < -745; a certified δ of 0 claims (ε, 0)-DP, which is
    # false whenever a Gaussian step is present or ε is below the total pure ε. Round up to the
    # smallest positive double there (as conversions.gdp_delta does); keep 0 only when it is
    # exact (pure steps only and ε ≥ Σ ε_i).
    if out == 0.0 and not _pure_total_at_most(comp, eps):
        out = 5e-324
    return float(min(1.0, out))


def _pure_total_at_most(comp: Composition, eps: float) -> bool:
    """True if ``comp`` has only pure-DP leaves and their ε's sum to at most ``eps``."""
    if comp.gaussian_mu_squared() > 0:
        return False
    total = []
    for leaf, count in comp.gaussian_part()[2]:
        e = pure_epsilon(leaf)
        if e is None:
            return False
        total.append(count * e)
    return math.fsum(total) <= eps
