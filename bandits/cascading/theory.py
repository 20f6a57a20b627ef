"""The formulas of Wang, Dong, Wang, Li & Shao, *Cascading Bandit under Differential Privacy*
(arXiv:2105.11126, 2021) as pure functions, each beside its source.

Noise calibrations of the algorithms:

==========================  ================================================  ======================
algorithm                   per-value noise                                    source
==========================  ================================================  ======================
Alg. 2 (LDP, Laplace)       ``Lap(K/ε)``                                       §5.1, Alg. 2 line 9
Alg. 3 (LDP, Gaussian)      ``N(0, σ²)``, ``σ = sqrt(2K ln(1.25/δ))/ε``         §5.2, Alg. 3 Init
Theorem 7 (advanced comp.)  ``Lap(sqrt(4K ln(e + ε/δ))/ε)``                    §5.3, Lemma 4
Alg. 4 (CUCB, LDP)          ``N(0, σ²)``, the σ of Alg. 3                      App. B, Alg. 4 Init
==========================  ================================================  ======================

The experiments multiply every noise by 0.01 (§7). What that spends is
:func:`effective_epsilon`: Laplace ``ε/0.01 = 100ε`` (pure, any K), Gaussian the exact GDP ε of
``μ = √K/(0.01σ)`` at δ (the analytic Gaussian mechanism, Balle & Wang 2018, Thm 8, is the GDP
curve): 29.60 / 127.66 / 431.47 / 1565.03 at ε = 0.2 / 0.5 / 1 / 2, δ = 10⁻³.

Example:
    >>> round(gaussian_sigma(1.0, 1e-3, 4), 6)             # Algorithm 3, K = 4, ε = 1, δ = 10⁻³
    7.552959
    >>> [round(effective_epsilon("gaussian", e, 1e-3, 4, 0.01), 1) for e in (0.2, 0.5, 1, 2)]
    [29.6, 127.7, 431.5, 1565.0]
    >>> round(kairouz_epsilon0(0.2, 1e-3, 4), 4)           # Lemma 4, per-item budget
    0.0217
    >>> optimal_composition_delta(kairouz_epsilon0(1.0, 1e-3, 4), 4, 1.0)   # Cor. 4.1 holds
    0.0
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.conversions import gdp_delta, gdp_epsilon
from dpaudit.numerics import bisect
from dpaudit.validation import check_integer, check_positive, check_probability

__all__ = [
    "laplace_scale",
    "gaussian_sigma",
    "theorem7_scale",
    "kairouz_epsilon0",
    "analytic_gaussian_delta",
    "tight_gaussian_epsilon",
    "effective_epsilon",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "classical_failure_epsilon",
    "theorem4_tau",
    "theorem6_tau",
    "theorem10_constant",
    "bernoulli_kl",
    "alg1_bonus_coefficient",
    "NOISE_KINDS",
]

NOISE_KINDS = ("laplace", "gaussian")


def laplace_scale(epsilon: float, k: int) -> float:
    """Algorithm 2's per-value scale ``b = K/ε`` (ε/K per value, ≤ K values: ε by basic composition).

    >>> laplace_scale(0.5, 4)
    8.0
    """
    return check_integer("k", k) / check_positive("epsilon", epsilon)


def gaussian_sigma(epsilon: float, delta: float, k: int) -> float:
    """Algorithm 3 / 4: ``σ = sqrt(2K ln(1.25/δ))/ε`` (Lemma 3 with Δ₂ = √K; the classical
    calibration of Dwork & Roth Thm A.1, proved there for ε < 1 only).

    >>> round(gaussian_sigma(0.2, 1e-3, 4), 3)             # Algorithm 3 at ε = 0.2
    37.765
    """
    eps = check_positive("epsilon", epsilon)
    d = check_probability("delta", delta)
    return math.sqrt(2.0 * check_integer("k", k) * math.log(1.25 / d)) / eps


def theorem7_scale(epsilon: float, delta: float, k: int) -> float:
    """The Theorem 7 variant's per-value Laplace scale ``sqrt(4K ln(e + ε/δ))/ε`` = 1/ε₀ with ε₀ of
    :func:`kairouz_epsilon0` (§5.3).

    >>> round(theorem7_scale(1.0, 1e-3, 4), 2)             # 10.5 vs Alg. 2's 4
    10.52
    """
    return 1.0 / kairouz_epsilon0(epsilon, delta, k)


def kairouz_epsilon0(epsilon: float, delta: float, k: int) -> float:
    """Lemma 4 (Kairouz, Oh & Viswanath 2015, Cor. 4.1): per-query ``ε₀ = ε/sqrt(4k ln(e + ε/δ))``
    (the paper's (ε₀, δ/2k) with the δ part unused by pure Laplace queries).

    >>> [round(kairouz_epsilon0(e, 1e-3, 4), 4) for e in (0.2, 0.5, 1, 2)]   # Theorem 7's ε₀
    [0.0217, 0.0501, 0.0951, 0.1813]
    """
    eps = check_positive("epsilon", epsilon)
    d = check_probability("delta", delta)
    return eps / math.sqrt(4.0 * check_integer("k", k) * math.log(math.e + eps / d))


def analytic_gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The exact δ(ε) of the Gaussian mechanism ``f + N(0, σ²)`` with ℓ2 sensitivity Δ:
    ``Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)`` (Balle & Wang 2018, Thm 8) — the μ-GDP curve with
    μ = Δ/σ.

    >>> s = gaussian_sigma(1.0, 1e-3, 4)
    >>> f"{analytic_gaussian_delta(s, 2.0, 1.0):.4g}"       # far below the paper's δ = 1e-3
    '8.147e-06'
    """
    mu = check_positive("sensitivity", sensitivity) / check_positive("sigma", sigma)
    return float(gdp_delta(mu, check_positive("epsilon", epsilon)))


def tight_gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """The smallest ε at which ``N(0, σ²)`` with ℓ2 sensitivity Δ is (ε, δ)-DP (exact GDP).

    >>> round(tight_gaussian_epsilon(gaussian_sigma(1.0, 1e-3, 4), 2.0, 1e-3), 3)   # loose: 0.634 < 1
    0.634
    """
    mu = check_positive("sensitivity", sensitivity) / check_positive("sigma", sigma)
    return float(gdp_epsilon(mu, check_probability("delta", delta)))


def effective_epsilon(noise: str, epsilon: float, delta: float, k: int, factor: float = 0.01) -> float:
    """What the noise of Algorithm 2 (``"laplace"``, pure: ε/factor) or Algorithm 3
    (``"gaussian"``: exact GDP ε at δ of μ = √K/(factor·σ)) spends when it is multiplied by
    ``factor`` (§7: "all noises are multiplied by 0.01"). The report length is not counted here
    (it leaks the click: see :mod:`bandits.cascading.policies`).

    >>> effective_epsilon("laplace", 0.2, 1e-3, 4)
    20.0
    """
    f = check_positive("factor", factor)
    if noise == "laplace":
        return check_positive("epsilon", epsilon) / f
    if noise != "gaussian":
        raise ValueError(f"noise must be one of {NOISE_KINDS}, got {noise!r}")
    sigma = gaussian_sigma(epsilon, delta, k)
    return tight_gaussian_epsilon(f * sigma, math.sqrt(k), delta)


def _log_binom(k: int, i: int) -> float:
    return math.lgamma(k + 1) - math.lgamma(i + 1) - math.lgamma(k - i + 1)


def optimal_composition_delta(epsilon0: float, k: int, epsilon: float) -> float:
    """δ(ε) of the k-fold composition of ε₀-DP mechanisms, exactly (Kairouz, Oh & Viswanath 2015,
    Thm 3.3; the privacy profile of k-fold randomized response, which is the worst case):
    ``Σ_i C(k, i) [e^{(k−i)ε₀} − e^ε e^{iε₀}]₊ / (1 + e^{ε₀})^k``, summed in log space.

    >>> round(optimal_composition_delta(1.0, 1, 0.5), 6)   # one RR step: (e − e^0.5)/(1 + e)
    0.287649
    """
    e0 = check_positive("epsilon0", epsilon0)
    k = check_integer("k", k)
    eps = float(epsilon)
    if eps < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    log_norm = k * (e0 + math.log1p(math.exp(-e0)))  # k·ln(1 + e^{ε₀})
    total = 0.0
    for i in range(k + 1):
        a, b = (k - i) * e0, eps + i * e0
        if a <= b:
            break  # the terms only decrease in i
        # e^a − e^b = e^a (1 − e^{b−a})
        total += math.exp(_log_binom(k, i) + a - log_norm) * -math.expm1(b - a)
    return float(min(1.0, total))


def optimal_composition_epsilon(epsilon0: float, k: int, delta: float) -> float:
    """The smallest ε with :func:`optimal_composition_delta` ≤ δ (bisection, rounded up).

    >>> round(optimal_composition_epsilon(kairouz_epsilon0(1.0, 1e-3, 4), 4, 1e-3), 4)
    0.367
    """
    d = check_probability("delta", delta)
    e0, k = check_positive("epsilon0", epsilon0), check_integer("k", k)
    if optimal_composition_delta(e0, k, 0.0) <= d:
        return 0.0
    def above(e: np.ndarray) -> np.ndarray:  # True below the answer
        return np.asarray(optimal_composition_delta(e0, k, float(e)) > d)

    _, hi = bisect(above, 0.0, k * e0, xtol=1e-13, rtol=1e-13)
    return float(hi)


def classical_failure_epsilon(delta: float, sensitivity: float = 1.0) -> float:
    """The smallest ε at which the classical σ = Δ sqrt(2 ln(1.25/δ))/ε stops being (ε, δ)-DP
    (bisection on the exact δ; it holds below): ≈ 7.5 at δ = 10⁻³, so Lemma 3's missing ε < 1
    hypothesis does not matter at the paper's ε ≤ 2.

    >>> round(classical_failure_epsilon(1e-3), 1)
    7.5
    """
    d = check_probability("delta", delta)
    sens = check_positive("sensitivity", sensitivity)

    def fails(eps: float) -> bool:
        sigma = sens * math.sqrt(2 * math.log(1.25 / d)) / eps
        return analytic_gaussian_delta(sigma, sens, eps) > d

    lo, hi = 0.5, 50.0
    if fails(lo) or not fails(hi):
        raise ValueError(f"no failure point in [0.5, 50] for delta = {delta!r}")
    def holds(e: np.ndarray) -> np.ndarray:
        return np.asarray(not fails(float(e)))

    _, hi_end = bisect(holds, lo, hi, iters=60)
    return float(hi_end)


def theorem4_tau(epsilon: float, k: int, gap: float, t: float, constant: float = 4.0) -> float:
    """Observations of a suboptimal item before Algorithm 2 stops choosing it (App. D):
    ``τ = 4 (sqrt(1.5) + (K/ε) sqrt(24))² log t / Δ²``.

    >>> round(theorem4_tau(2.0, 4, 0.15, 1e5) / 1e5, 1)    # 2.5e5 observations ≫ T = 1e5
    2.5
    """
    e, g = check_positive("epsilon", epsilon), check_positive("gap", gap)
    c = math.sqrt(1.5) + check_integer("k", k) / e * math.sqrt(24.0)
    return constant * c * c * math.log(t) / (g * g)


def theorem6_tau(epsilon: float, delta: float, k: int, gap: float, t: float) -> float:
    """Algorithm 3's τ (App. E): ``(2 sqrt(1.5) + (8/ε) sqrt(K ln(1.25/δ)))² log t / Δ²``.

    >>> round(theorem6_tau(1.0, 1e-3, 4, 0.15, 1e5) / 1e6, 2)   # 1.0e6 observations
    1.04
    """
    e, g = check_positive("epsilon", epsilon), check_positive("gap", gap)
    d = check_probability("delta", delta)
    c = 2 * math.sqrt(1.5) + 8.0 / e * math.sqrt(check_integer("k", k) * math.log(1.25 / d))
    return c * c * math.log(t) / (g * g)


def bernoulli_kl(p: float, q: float) -> float:
    """d(p ‖ q) of Bernoulli laws (nats).

    >>> round(bernoulli_kl(0.1, 0.01), 4)      # Theorem 10 bounds it by Δ²/(p(1−p)) = 0.09: false
    0.1445
    """
    p = float(p)
    q = check_probability("q", q)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


def theorem10_constant(p: float, gap: float, n_items: int, k: int, epsilon: float) -> float:
    """Theorem 10's lim inf R(T)/log T lower bound as written:
    ``(L − K) p (1 − p)^K / (2 min{4, e^{2ε}} (e^ε − 1)² Δ)``.

    >>> round(theorem10_constant(0.2, 0.15, 20, 4, 0.2), 2)   # per log T on the assumed instance
    59.75
    """
    e = check_positive("epsilon", epsilon)
    L, K = check_integer("n_items", n_items), check_integer("k", k)
    return (L - K) * p * (1 - p) ** K / (2 * min(4.0, math.exp(2 * e)) * math.expm1(e) ** 2 * gap)


def alg1_bonus_coefficient(epsilon: float, n_items: int, horizon: int, c1: float) -> float:
    """Algorithm 1's privacy term is ``coef·log t / T_{t−1}(e)`` with
    ``coef = 3 c₁ L log^{1.5}(n) / ε`` (n the horizon; §4, Alg. 1 line 5; Lemma 1 with ε' = ε/L
    and γ = t⁻³). ``log(n)`` is natural; the term is 0 at n = 1 (the proof uses the stream length
    instead of n).

    >>> round(alg1_bonus_coefficient(1.0, 20, 10**5, 1.0), 1)
    2343.8
    """
    n = check_integer("horizon", horizon)
    L = check_integer("n_items", n_items)
    return 3.0 * check_positive("c1", c1) * L * math.log(n) ** 1.5 / check_positive("epsilon", epsilon)
