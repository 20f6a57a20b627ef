"""Single-step pessimistic PMFs of the non-Gaussian leaves.

Laplace → its connect-the-dots PMF (:func:`laplace_pmf`); any other pure or (ε, δ) leaf, and every
ε below 1e-6 → the PLD of (ε, δ)-randomized response (:func:`dp_parameters_pmf`), which dominates
every (ε, δ)-DP mechanism. Both are computed here, in closed form, so that the common case does
not load dp-accounting (about 0.6 s with the SciPy modules it imports); they are the constructions
of dp-accounting's ``from_laplace_mechanism`` and ``from_privacy_parameters``, and the tests check
them against those (both round every mass up past its error, so they dominate in floating point
too); k-ary randomized response (k > 2) → :func:`k_ary_pmf`, likewise. A Poisson-sampled Laplace
→ :func:`~dpaudit.accounting.pld_sampled.sampled_laplace_pmfs`. Discrete Laplace →
``from_discrete_laplace_mechanism``, Poisson-sampled too with ``sampling_prob=q`` (from
dp-accounting, taken as computed); any other Poisson-sampled ε-DP release → the sampled pair of
binary randomized response (:func:`sampled_randomized_response_pmfs`).
:mod:`dpaudit.accounting.pld` composes them.

>>> from dpaudit.events import LaplaceEvent
>>> [p.probs.size > 10 for p in single_step_pmfs(LaplaceEvent(1.0), 1.0, 0.0, 1e-3)]
[True]
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from dpaudit.accounting.leaves import pure_epsilon, sampled_epsilon
from dpaudit.accounting.pld_gaussian import gaussian_pmf
from dpaudit.accounting.pld_pmf import Pmf, from_dp
from dpaudit.events import (
    LaplaceEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    RandomizedResponseEvent,
    loaded_ml_events,
)

if TYPE_CHECKING:
    from dpaudit.events_ml import DiscreteLaplaceEvent

__all__ = [
    "single_step_pmfs",
    "dense_pmfs",
    "laplace_pmf",
    "dp_parameters_pmf",
    "k_ary_pmf",
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
    if _is_discrete_laplace(leaf) and e >= SMALL_EPSILON:
        return _discrete_laplace_pmfs(leaf, interval)
    if isinstance(leaf, RandomizedResponseEvent) and leaf.num_categories > 2 and e >= SMALL_EPSILON:
        return _k_ary_pmfs(leaf, e, interval)
    return [dp_parameters_pmf(e, d, interval)]


def _is_discrete_laplace(leaf: PrivacyEvent) -> TypeGuard[DiscreteLaplaceEvent]:
    ml = loaded_ml_events()  # None: no event of dpaudit.events_ml exists
    return ml is not None and isinstance(leaf, ml.DiscreteLaplaceEvent)


def _discrete_laplace_pmfs(leaf: DiscreteLaplaceEvent, interval: float) -> list[Pmf]:
    """dp-accounting's pessimistic PMF of a discrete Laplace release."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return dense_pmfs(pld.from_discrete_laplace_mechanism(
        leaf.parameter, sensitivity=leaf.sensitivity, pessimistic_estimate=True,
        value_discretization_interval=interval))  # fmt: skip


def _k_ary_pmfs(leaf: RandomizedResponseEvent, e: float, interval: float) -> list[Pmf]:
    """:func:`k_ary_pmf` of the leaf."""
    return [k_ary_pmf(e, leaf.num_categories, interval)]


def k_ary_pmf(epsilon: float, k: int, interval: float) -> Pmf:
    """The pessimistic PMF of ε-DP k-ary randomized response (both directions): the true answer
    with probability e^ε/(e^ε + k − 1), each other with 1/(e^ε + k − 1), so the loss is ε, 0 (the
    k − 2 answers that are neither neighbour's) or −ε with those masses, each loss rounded up to
    the grid and each mass past its rounding (6 ulps; dp-accounting's ``from_randomized_response``
    with noise k/(e^ε + k − 1) is the same PMF up to that).

    >>> p = k_ary_pmf(1.0, 4, 0.5)
    >>> p.lower, [round(float(x), 6) for x in p.probs]
    (-2, [0.174878, 0.0, 0.349755, 0.0, 0.475367])
    """
    t = math.exp(-epsilon)  # e^ε/(e^ε + k − 1) = 1/(1 + (k − 1)t), 1/(e^ε + k − 1) = t/(1 + (k − 1)t)
    denom = 1.0 + (k - 1) * t
    up = 1.0 + 8.0 * 2.0**-53
    other = math.nextafter(max(t / denom, 5e-324) * up, math.inf)  # never a silent 0
    atoms = [(epsilon, math.nextafter(up / denom, math.inf)), (-epsilon, other)]
    if k > 2:
        atoms.append((0.0, math.nextafter((k - 2) * other * up, math.inf)))
    return _atoms(atoms, interval)


def laplace_pmf(epsilon: float, interval: float) -> Pmf:
    """The pessimistic connect-the-dots PMF of one Laplace release with ε = Δ/b (both directions).

    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi (2022), "Connect the Dots: Tighter Discrete
    Approximations of Privacy Loss Distributions", Algorithm 1, on the grid points t_i = i·h from
    ⌊−ε/h⌋ to ⌈ε/h⌉ (the loss lies in [−ε, ε]; both computed exactly): the PMF whose hockey-stick
    curve interpolates δ(t_i) linearly in e^t between the grid points, which dominates the
    mechanism. Laplace's hockey-stick divergence is δ(t) = 1 − e^{(t − ε)/2} for |t| < ε,
    1 − e^t for t ≤ −ε and 0 for t ≥ ε, so Algorithm 1's mass
    ((δ_{i+1} − δ_i) − e^h(δ_i − δ_{i−1}))/(e^h − 1) is, wherever t_{i−1}, t_i, t_{i+1} all lie
    inside (−ε, ε), exactly e^{(t_i − ε)/2}·tanh(h/4), computed so in long double (the formula
    as written divides differences of δ by e^h − 1 ≈ h: ~u/h absolute, 6e-12 at h = 1e-4 in
    double). The at most four masses at the ends, where the pieces of δ meet, come from the
    formula in 60-digit decimal arithmetic on 1 − δ (the correctly rounded ``exp`` of
    :mod:`decimal`).

    Every mass is then rounded *up* to a double at least the exact one (long double errs by at
    most (2ε + 16) of its units in the last place: inflated by twice that, then one double ulp up):
    a PMF with larger masses has a larger hockey-stick curve at every t, alone and composed, so it
    still dominates the mechanism with no error term (``err`` 0), at the price of a total mass
    above 1 by a few units of 2⁻⁵³.

    >>> p = laplace_pmf(1.0, 0.1)
    >>> p.lower, p.probs.size, 0 < float(p.probs.sum()) - 1 < 1e-15, p.inf_mass, p.err
    (-10, 21, True, 0.0, 0.0)
    """
    e, h = Fraction(epsilon), Fraction(interval)
    lower, upper = math.floor(-e / h), math.ceil(e / h)
    probs = np.empty(upper - lower + 1, dtype=np.longdouble)
    inner = np.arange(lower + 2, upper - 1)  # t_{i±1} inside (−ε, ε): t_{lower+1} > −ε, t_{upper−1} < ε
    ld_h, ld_e = np.longdouble(interval), np.longdouble(epsilon)
    probs[2 : probs.size - 2] = np.exp((inner * ld_h - ld_e) / 2) * np.tanh(ld_h / 4)
    probs[2 : probs.size - 2] *= 1 + 2 * (2 * epsilon + 16) * float(np.finfo(np.longdouble).eps)
    with localcontext(Context(prec=60)):
        for i in sorted({lower, lower + 1, upper - 1, upper}):
            probs[i - lower] = float(_laplace_end_mass(i, lower, upper, e, h))
    with np.errstate(under="ignore"):
        return Pmf(lower, np.nextafter(probs.astype(float), np.inf), 0.0, 0.0)


def _laplace_end_mass(i: int, lower: int, upper: int, e: Fraction, h: Fraction) -> Decimal:
    """Algorithm 1's mass at grid index ``i`` of :func:`laplace_pmf` in the current decimal
    context (first and last indices: their one-sided forms), from s_j = 1 − δ(t_j), so that every
    difference cancels relative to its own terms, not to 1 (at ε = 100, s ≈ e^{−100} at the
    left end)."""

    def s(j: int) -> Decimal:
        t = j * h
        if t >= e:
            return Decimal(1)
        return (_decimal(t) if t <= -e else _decimal((t - e) / 2)).exp()

    grow = _decimal(h).exp()
    gap = grow - 1
    if i == lower:
        return s(i) - (s(i + 1) - s(i)) / gap
    if i == upper:
        return (s(i) - s(i - 1)) * grow / gap  # (δ_i − δ_{i−1})/(e^{−h} − 1)
    return ((s(i) - s(i + 1)) - grow * (s(i - 1) - s(i))) / gap


def _decimal(x: Fraction) -> Decimal:
    """``x`` in the current decimal context (rounded once)."""
    return Decimal(x.numerator) / Decimal(x.denominator)


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
    # each mass within 6 ulps of (1 − δ)/(1 + e^{∓ε}) (exp ≤ 1 ulp, three roundings): rounded up
    # past that, so the PMF dominates with no error term (as in laplace_pmf)
    up = 1.0 + 8.0 * 2.0**-53
    high, low = math.nextafter(high * up, math.inf), math.nextafter(low * up, math.inf)
    pmf = _atoms([(epsilon, high), (-epsilon, low)], interval)
    return replace(pmf, inf_mass=float(delta))


def _minority(epsilon: float, mass: float = 1.0) -> float:
    """mass/(1 + e^ε), the share of ``mass`` on randomized response's other answer, without
    overflow and never 0 (the smallest positive double where mass·e^{−ε} underflows)."""
    return mass / (1.0 + math.exp(epsilon)) if epsilon < 700.0 else max(mass * math.exp(-epsilon), 5e-324)


def _sampled_pmfs(leaf: PoissonSampledEvent, interval: float) -> list[Pmf]:
    """(remove, add) PMFs of a Poisson-sampled pure ε-DP leaf (its amplified ε at least 1e-6)."""
    inner, q = leaf.event, leaf.sampling_probability
    if q == 1.0:
        e = pure_epsilon(inner)
        assert e is not None, "a Poisson-sampled leaf that is not Gaussian is pure"
        return single_step_pmfs(inner, e, 0.0, interval)
    if isinstance(inner, LaplaceEvent):
        from dpaudit.accounting.pld_sampled import sampled_laplace_pmfs

        return sampled_laplace_pmfs(inner.scale / inner.sensitivity, q, interval)
    if _is_discrete_laplace(inner):
        from dp_accounting.pld import privacy_loss_distribution as pld

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
    remove = _atoms([(low / up, x_low), (high_up, x_high)], interval)
    add = _atoms([(-low * up, p * up), (-high_down, pc * up)], interval)
    return [remove, add]


def _atoms(atoms: list[tuple[float, float]], interval: float) -> Pmf:
    """The PMF with mass ``w`` at each loss ``x`` of ``atoms`` (x, w), each loss rounded up to the
    grid (⌈x/Δ⌉ of the rounded quotient: a loss may land up to ~u·|x| below itself, which the PLD's
    loss margin covers, :mod:`dpaudit.accounting.pld_plan`)."""
    idx = [math.ceil(x / interval) for x, _ in atoms]
    lower = min(idx)
    probs = np.zeros(max(idx) - lower + 1)
    for i, (_, w) in zip(idx, atoms):
        probs[i - lower] += w
    return Pmf(lower, probs, 0.0, 0.0)


def gaussian_pmfs(noise_multiplier: float, interval: float) -> list[Pmf]:
    """The pessimistic PMF of one Gaussian step of noise multiplier σ (sensitivity 1), both
    directions alike (:func:`dpaudit.accounting.pld_gaussian.gaussian_pmf`)."""
    return [gaussian_pmf(1.0 / noise_multiplier, interval)]


def dense_pmfs(p: Any) -> list[Pmf]:
    """dp-accounting's PLD as our PMFs: one if symmetric, else (remove, add)."""
    if getattr(p, "_symmetric", False):
        return [from_dp(p._pmf_remove)]  # noqa: SLF001 - dp-accounting's PMFs
    return [from_dp(p._pmf_remove), from_dp(p._pmf_add)]  # noqa: SLF001
