"""Single-step pessimistic PMFs of the non-Gaussian leaves.

Laplace → its connect-the-dots PMF (:func:`laplace_pmf`); any other pure or (ε, δ) leaf, and every
ε below 1e-6 → the PLD of (ε, δ)-randomized response (:func:`dp_parameters_pmf`), which dominates
every (ε, δ)-DP mechanism. Both are computed here, in closed form, so that the common case does
not load dp-accounting (about 0.6 s with the SciPy modules it imports); they are the constructions
of dp-accounting's ``from_laplace_mechanism`` and ``from_privacy_parameters``, and the tests check
them against those. Discrete Laplace → ``from_discrete_laplace_mechanism``; k-ary randomized
response (k > 2) → ``from_randomized_response``; a Poisson-sampled Laplace or discrete Laplace →
the same constructions with ``sampling_prob=q`` (all three from dp-accounting); any other
Poisson-sampled ε-DP release → the sampled pair of binary randomized response
(:func:`sampled_randomized_response_pmfs`).
:mod:`dpaudit.accounting.pld` composes them.

>>> from dpaudit.events import LaplaceEvent
>>> [p.probs.size > 10 for p in single_step_pmfs(LaplaceEvent(1.0), 1.0, 0.0, 1e-3)]
[True]
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from dpaudit.accounting.leaves import pure_epsilon, sampled_epsilon
from dpaudit.accounting.pld_pmf import Pmf, from_dp
from dpaudit.events import LaplaceEvent, PoissonSampledEvent, PrivacyEvent, RandomizedResponseEvent
from dpaudit.events_ml import DiscreteLaplaceEvent

__all__ = [
    "single_step_pmfs",
    "dense_pmfs",
    "laplace_pmf",
    "dp_parameters_pmf",
    "sampled_randomized_response_pmfs",
    "SMALL_EPSILON",
]

SMALL_EPSILON = 1e-6


def single_step_pmfs(leaf: PrivacyEvent, e: float, d: float, interval: float) -> list[Pmf]:
    """The pessimistic single-step PMFs of one non-Gaussian leaf on the grid ``interval``: one if
    both directions agree, else (remove, add)."""
    if isinstance(leaf, PoissonSampledEvent) and e >= SMALL_EPSILON:
        return _sampled_pmfs(leaf, interval)
    if isinstance(leaf, LaplaceEvent) and e >= SMALL_EPSILON:
        return [laplace_pmf(leaf.sensitivity / leaf.scale, interval)]
    if isinstance(leaf, DiscreteLaplaceEvent) and e >= SMALL_EPSILON:
        return _discrete_laplace_pmfs(leaf, interval)
    if isinstance(leaf, RandomizedResponseEvent) and leaf.num_categories > 2 and e >= SMALL_EPSILON:
        return _k_ary_pmfs(leaf, e, interval)
    return [dp_parameters_pmf(e, d, interval)]


def _discrete_laplace_pmfs(leaf: DiscreteLaplaceEvent, interval: float) -> list[Pmf]:
    """dp-accounting's pessimistic PMF of a discrete Laplace release."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return dense_pmfs(pld.from_discrete_laplace_mechanism(
        leaf.parameter, sensitivity=leaf.sensitivity, pessimistic_estimate=True,
        value_discretization_interval=interval))  # fmt: skip


def _k_ary_pmfs(leaf: RandomizedResponseEvent, e: float, interval: float) -> list[Pmf]:
    """dp-accounting's pessimistic PMF of k-ary randomized response (k > 2)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    k = leaf.num_categories
    return dense_pmfs(pld.from_randomized_response(k / (math.exp(e) + k - 1), k, pessimistic_estimate=True,
                                                   value_discretization_interval=interval))  # fmt: skip


def laplace_pmf(epsilon: float, interval: float) -> Pmf:
    """The pessimistic connect-the-dots PMF of one Laplace release with ε = Δ/b (both directions).

    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi (2022), "Connect the Dots: Tighter Discrete
    Approximations of Privacy Loss Distributions", Algorithm 1, on the grid points i·h from
    ⌊−ε/h⌋ to ⌈ε/h⌉ (the loss lies in [−ε, ε]): the PMF whose hockey-stick curve interpolates
    δ(ε_i) linearly in e^ε between the grid points, which dominates the mechanism. The hockey-stick
    divergence of Laplace is, in closed form (no cancellation), δ(t) = 1 − e^{(t − ε)/2} for
    |t| < ε, 1 − e^t for t ≤ −ε and 0 for t ≥ ε. The masses are dp-accounting's formulas
    (``create_pmf_pessimistic_connect_dots_fixed_gap``), negative rounding residues set to 0.

    >>> p = laplace_pmf(1.0, 0.1)
    >>> p.lower, p.probs.size, round(float(p.probs.sum()), 12), p.inf_mass
    (-10, 21, 1.0, 0.0)
    """
    lower, upper = math.floor(-epsilon / interval), math.ceil(epsilon / interval)
    t = np.arange(lower, upper + 1) * interval
    with np.errstate(under="ignore"):
        deltas = np.where(t >= epsilon, 0.0, -np.expm1(np.where(t <= -epsilon, t, (t - epsilon) / 2.0)))
    deltas = np.minimum.accumulate(np.clip(deltas, 0.0, 1.0))
    diffs = np.diff(deltas)
    probs = np.empty_like(deltas)
    gap = math.expm1(interval)
    probs[0] = 1.0 - deltas[0] + diffs[0] / gap
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(interval)) / gap
    probs[-1] = diffs[-1] / math.expm1(-interval)
    return Pmf(lower, np.maximum(probs, 0.0), float(deltas[-1]), 0.0)


def dp_parameters_pmf(epsilon: float, delta: float, interval: float) -> Pmf:
    """The pessimistic PMF of (ε, δ)-randomized response, which dominates every (ε, δ)-DP release
    (Kairouz, Oh & Viswanath 2015; dp-accounting's ``from_privacy_parameters``): loss +∞ with
    probability δ, ε with (1 − δ)/(1 + e^{−ε}) and −ε with (1 − δ)/(1 + e^ε), each loss rounded
    up to the grid (both directions).

    >>> p = dp_parameters_pmf(1.0, 1e-6, 0.5)
    >>> p.lower, [round(float(x), 6) for x in p.probs], p.inf_mass
    (-2, [0.268941, 0.0, 0.0, 0.0, 0.731058], 1e-06)
    """
    high = (1.0 - delta) / (1.0 + math.exp(-epsilon))
    low = _minority(epsilon, 1.0 - delta)
    return replace(_two_atoms((epsilon, high), (-epsilon, low), interval), inf_mass=float(delta))


def _minority(epsilon: float, mass: float = 1.0) -> float:
    """mass/(1 + e^ε), the share of ``mass`` on randomized response's other answer, without
    overflow and never 0 (the smallest positive double where mass·e^{−ε} underflows)."""
    return mass / (1.0 + math.exp(epsilon)) if epsilon < 700.0 else max(mass * math.exp(-epsilon), 5e-324)


def _sampled_pmfs(leaf: PoissonSampledEvent, interval: float) -> list[Pmf]:
    """(remove, add) PMFs of a Poisson-sampled pure ε-DP leaf (its amplified ε at least 1e-6)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    inner, q = leaf.event, leaf.sampling_probability
    if q == 1.0:
        e = pure_epsilon(inner)
        assert e is not None, "a Poisson-sampled leaf that is not Gaussian is pure"
        return single_step_pmfs(inner, e, 0.0, interval)
    if isinstance(inner, LaplaceEvent):
        p = pld.from_laplace_mechanism(inner.scale, sensitivity=inner.sensitivity, pessimistic_estimate=True,
                                       value_discretization_interval=interval, sampling_prob=q)
    elif isinstance(inner, DiscreteLaplaceEvent):
        p = pld.from_discrete_laplace_mechanism(
            inner.parameter, sensitivity=inner.sensitivity, pessimistic_estimate=True,
            value_discretization_interval=interval, sampling_prob=q)
    else:
        e = pure_epsilon(inner)
        assert e is not None, "a Poisson-sampled leaf that is not Gaussian is pure"
        return sampled_randomized_response_pmfs(e, q, interval)
    pmfs = dense_pmfs(p)
    return pmfs if len(pmfs) == 2 else [pmfs[0], pmfs[0]]


def sampled_randomized_response_pmfs(epsilon: float, q: float, interval: float) -> list[Pmf]:
    """The (remove, add) PMFs of binary randomized response with ε run on a Poisson subsample of
    rate q: the pair ((1 − q)A + qB, A) and its reverse (A, (1 − q)A + qB) with A = (p, 1 − p),
    B = (1 − p, p), p = e^ε/(1 + e^ε). Its two atoms are at losses ℓ₋ = log(1 + q(e^{−ε} − 1))
    and ℓ₊ = log(1 + q(e^ε − 1)) (remove) and at −ℓ₋, −ℓ₊ (add), rounded up to the grid; the
    masses are those of the first distribution, rounded up. Binary randomized response dominates
    every ε-DP pair, and Poisson subsampling preserves domination (Zhu, Dong & Wang 2022), so this
    dominates every Poisson-sampled ε-DP release.

    >>> remove, add = sampled_randomized_response_pmfs(1.0, 0.1, 1e-3)
    >>> remove.lower, remove.lower + remove.probs.size - 1, add.lower
    (-65, 159, -158)
    """
    p = 1.0 / (1.0 + math.exp(-epsilon))
    pc = _minority(epsilon)
    up = 1.0 + 1e-14
    low = math.log1p(q * math.expm1(-epsilon))  # ≤ 0
    high_up = sampled_epsilon(q, epsilon)
    high_down = high_up / up**2
    x_low = ((1.0 - q) * p + q * pc) * up  # the first distribution's mass on each outcome
    x_high = ((1.0 - q) * pc + q * p) * up
    remove = _two_atoms((low / up, x_low), (high_up, x_high), interval)
    add = _two_atoms((-low * up, p * up), (-high_down, pc * up), interval)
    return [remove, add]


def _two_atoms(a: tuple[float, float], b: tuple[float, float], interval: float) -> Pmf:
    """The PMF with mass a[1] at loss a[0] and b[1] at b[0], each loss rounded up to the grid."""
    ia, ib = math.ceil(a[0] / interval), math.ceil(b[0] / interval)
    lower = min(ia, ib)
    probs = np.zeros(max(ia, ib) - lower + 1)
    probs[ia - lower] += a[1]
    probs[ib - lower] += b[1]
    return Pmf(lower, probs, 0.0, 0.0)


def gaussian_pmfs(noise_multiplier: float, interval: float) -> list[Pmf]:
    """The pessimistic PMF of one Gaussian step of noise multiplier σ (sensitivity 1), from
    dp-accounting (symmetric: one PMF for both directions)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return dense_pmfs(pld.from_gaussian_mechanism(standard_deviation=noise_multiplier, sensitivity=1.0,
                                                  pessimistic_estimate=True,
                                                  value_discretization_interval=interval))


def dense_pmfs(p: Any) -> list[Pmf]:
    """dp-accounting's PLD as our PMFs: one if symmetric, else (remove, add)."""
    if getattr(p, "_symmetric", False):
        return [from_dp(p._pmf_remove)]  # noqa: SLF001 - dp-accounting's PMFs
    return [from_dp(p._pmf_remove), from_dp(p._pmf_add)]  # noqa: SLF001
