"""Rényi DP of two mixtures of Poisson-subsampled Gaussians (add/remove relation): the mixture of
Gaussians and the Gaussian on a truncated Poisson sample.

Both are bounded by one argument. If the pair of output distributions is a mixture, with the
*same* weights w_j on both sides, of pairs (P_j, Q_j) each dominated by a Poisson-subsampled
Gaussian, then, (P, Q) ↦ ∫P^α Q^{1−α} being jointly convex for α > 1 (the f-divergence of the
convex f(t) = t^α, its integrand Q·f(P/Q) the perspective of f; Csiszár 1967),

    e^{(α−1)ρ(α)} ≤ Σ_j w_j A_j(α) = 1 + Σ_j w_j (A_j(α) − 1),

A_j = e^{(α−1)ρ_j} the subsampled Gaussian's, in both orders of the pair (Mironov, Talwar &
Zhang 2019, Thm 5). Weights rounded up are still valid (each A_j − 1 ≥ 0 and the true weights
sum to 1); so is a larger sampling probability or sensitivity (the subsampled Gaussian's
divergence grows with both: mixing in more of the identical branch, or scaling both sides and
adding noise, is post-processing). Each ρ_j is :func:`dpaudit.accounting.rdp.log_sampled_gaussian_rdp`
(the caller passes its curves; this module only forms the parts and their sum).

Mixture of Gaussians, N(0, σ²) against Σ_i p_i N(c_i, σ²) (Choquette-Choo, Ganesh, Steinke &
Thakurta 2023): with p₀ the weight of c = 0 and P = 1 − p₀, the mixture is
Σ_{c>0} (p_c/P)·[(1 − P) N(0, σ²) + P N(c, σ²)], a mixture of subsampled Gaussians with sampling
probability P and sensitivity c (weights p_c/P). One positive sensitivity: exactly the
subsampled Gaussian. This is never above plain joint convexity over the components
(Σ p_i e^{(α−1)αc_i²/(2σ²)}). More than 32 distinct positive c are rounded up onto 32 geometric
points (cost), which only enlarges the bound.

Truncated Poisson sample (n records with the added one, sampling probability q, at most B kept,
noise σ, sensitivity 1): let K ~ Binomial(n − 1, q) be the number of the other records sampled;
whether K ≥ B has the same law on both neighbours, so revealing it only adds information. If
K < B nothing is cut: the subsampled Gaussian (q, sensitivity 1). If K ≥ B the batch without the
record is a uniform B-subset U of the others, and with it, the record is in it with probability
q̄ = q·E[B/(K + 1) | K ≥ B] = B·P(Binomial(n, q) ≥ B + 1)/(n·t), t = P(K ≥ B), replacing a uniform
member y of U (the batch is then (U∖{y}) ∪ {record}); conditioned on (U∖{y}, y), N(0, σ²) against
(1 − q̄)N(0, σ²) + q̄ N(v, σ²) with |v| = |g(record) − g(y)| ≤ 2: the subsampled Gaussian
(q̄, sensitivity 2). Hence the weights 1 − t and t (dp-accounting's PLD uses the same
decomposition, with a replace-one pair for the second part). t, 1 − t and P(Binomial(n, q) ≥ B + 1)
are scipy's regularized incomplete beta functions with a relative margin of 1e-10 (about 10⁵
times their documented error) and an absolute one of 1e-300; q̄ ≤ q is used where t is too small
to divide by, and weights 1, 1 with q̄ = q (always valid) where n exceeds 2⁵³.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.with_replacement import log_expm1_up, log_rho_of_terms
from dpaudit.events import GaussianEvent, PoissonSampledEvent
from dpaudit.events_ml import MixtureOfGaussiansEvent, TruncatedSubsampledGaussianEvent
from dpaudit.numerics import div_up, special

__all__ = ["mixture_parts", "log_rdp_of_parts", "MAX_SENSITIVITIES"]

MAX_SENSITIVITIES = 32
_BETA_REL = 1e-10
_BETA_ABS = 1e-300


def _ratio_up(num: float, den: float) -> float:
    """num/den for two correctly rounded sums (each within 2^-53 relative), rounded up."""
    return div_up(num, den) * (1.0 + 4e-16)


def mixture_parts(leaf: MixtureOfGaussiansEvent | TruncatedSubsampledGaussianEvent,
                  ) -> list[tuple[float, PoissonSampledEvent]]:
    """(weight rounded up, dominating Poisson-subsampled Gaussian) for each part of ``leaf`` (see
    the module docstring); empty if the leaf releases nothing about the record."""
    if isinstance(leaf, TruncatedSubsampledGaussianEvent):
        return _truncated_parts(leaf)
    total = math.fsum(leaf.sampling_probs)
    positive: dict[float, list[float]] = {}
    for c, p in zip(leaf.sensitivities, leaf.sampling_probs):
        if c > 0 and p > 0:
            positive.setdefault(c, []).append(p)
    if not positive:
        return []
    cs = np.array(sorted(positive))
    if cs.size > MAX_SENSITIVITIES:
        grid = np.geomspace(cs[0], cs[-1], MAX_SENSITIVITIES)
        grid[-1] = cs[-1]
        merged: dict[float, list[float]] = {}
        for c, ps in positive.items():
            merged.setdefault(float(grid[np.searchsorted(grid, c)]), []).extend(ps)
        positive = merged
    mass = math.fsum(p for ps in positive.values() for p in ps)
    q = min(1.0, _ratio_up(mass, total))
    sd = leaf.standard_deviation
    return [(min(1.0, _ratio_up(math.fsum(ps), mass)), PoissonSampledEvent(q, GaussianEvent(sd, c)))
            for c, ps in sorted(positive.items())]


def _truncated_parts(leaf: TruncatedSubsampledGaussianEvent) -> list[tuple[float, PoissonSampledEvent]]:
    """The parts of a truncated subsampled Gaussian: no cut (weight 1 − t) and a cut (weight t)."""
    n, q, b = leaf.dataset_size, leaf.sampling_probability, leaf.truncated_batch_size
    sd = leaf.noise_multiplier
    uncut = PoissonSampledEvent(q, GaussianEvent(sd, 1.0))
    if b >= n:
        return [(1.0, uncut)]  # the other n − 1 records never fill the batch
    w_uncut, w_cut, q_cut = 1.0, 1.0, q
    if n <= 2**53:
        with np.errstate(all="ignore"):
            t = float(special().betainc(b, n - b, q))  # P(Binomial(n − 1, q) ≥ b)
            one_minus_t = float(special().betaincc(b, n - b, q))
            s = float(special().betainc(b + 1, n - b, q))  # P(Binomial(n, q) ≥ b + 1)
        if all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in (t, one_minus_t, s)):
            w_uncut = min(1.0, one_minus_t * (1.0 + _BETA_REL) + _BETA_ABS)
            w_cut = min(1.0, t * (1.0 + _BETA_REL) + _BETA_ABS)
            t_low = t * (1.0 - _BETA_REL) - _BETA_ABS
            if t_low > 0.0:
                s_up = s * (1.0 + _BETA_REL) + _BETA_ABS
                q_cut = min(q, div_up(div_up(b * s_up, t_low), float(n)) * (1.0 + 4e-16))
    cut = PoissonSampledEvent(q_cut, GaussianEvent(sd, 2.0))
    return [(w_uncut, uncut), (w_cut, cut)]


def log_rdp_of_parts(weights: list[float], log_rhos: list[np.ndarray], alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of the mixture of parts with the given weights (rounded up) and log RDP curves
    (upper bounds), rounded up: log[log(1 + Σ_j w_j (A_j − 1))/(α − 1)]."""
    a = np.asarray(alphas, dtype=float)
    if not weights:
        return np.full(a.shape, -np.inf)
    log_x = np.log(a - 1.0)
    rows = []
    for w, lr in zip(weights, log_rhos):
        with np.errstate(invalid="ignore"):
            log_la = lr + log_x  # log of (α − 1)ρ_j = log A_j, with a margin for the rounding
            log_la = log_la + np.where(np.isfinite(log_la), 1e-15 * (np.abs(lr) + np.abs(log_x)), 0.0)
        rows.append((math.log(w) + 1e-16 + log_expm1_up(log_la))[None, :])
    return log_rho_of_terms(rows, a)
