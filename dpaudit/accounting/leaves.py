"""The parameters of single leaves, rounded in the direction that never under-reports: a Gaussian
leaf's μ up, a sampled Gaussian's noise multiplier down, a pure leaf's ε up. Shared by the normal
form (:mod:`dpaudit.accounting.composition`) and the methods.

>>> from dpaudit.events import GaussianEvent, LaplaceEvent
>>> leaf_mu(GaussianEvent(sigma=3.0)) > 1 / 3, pure_epsilon(LaplaceEvent(scale=4.0))
(True, 0.25)
"""

from __future__ import annotations

import math
from typing import TypeGuard

from dpaudit.events import (
    ApproxDpEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    loaded_ml_events,
)
from dpaudit.numerics import div_down, div_up, mul_up

__all__ = ["is_full_sample", "leaf_mu", "sampled_noise_multiplier", "pure_epsilon", "sampled_epsilon"]


def is_full_sample(leaf: PrivacyEvent) -> TypeGuard[PoissonSampledEvent]:
    """A Poisson-sampled Gaussian with q = 1: the inner Gaussian itself."""
    return (isinstance(leaf, PoissonSampledEvent) and leaf.sampling_probability == 1.0
            and isinstance(leaf.event, GaussianEvent))


def sampled_epsilon(q: float, epsilon: float) -> float:
    """log(1 + q(e^ε − 1)), rounded up: the ε of an ε-DP release on a Poisson subsample of rate q
    (add/remove relation; Li, Qardaji & Su 2012). For ε > 700, ε + log(q + e^{−ε}).

    >>> sampled_epsilon(1.0, 2.0) >= 2.0, round(sampled_epsilon(0.01, 1.0), 6)
    (True, 0.017037)
    """
    if q == 0.0 or epsilon == 0.0:
        return 0.0
    if epsilon > 700.0:
        value = epsilon + math.log(q + math.exp(-epsilon))
    else:
        value = math.log1p(mul_up(q, math.expm1(epsilon)))
    return min(epsilon, value * (1.0 + 1e-14)) if math.isfinite(value) else math.inf


def leaf_mu(leaf: PrivacyEvent) -> float:
    """The GDP μ of a Gaussian-type leaf, rounded up (sensitivity/σ as an exact quotient)."""
    if is_full_sample(leaf):
        leaf = leaf.event
    if isinstance(leaf, GaussianEvent):
        return div_up(leaf.sensitivity, leaf.sigma)
    if isinstance(leaf, GaussianReportNoisyMaxEvent):
        return max(div_up(s, g) for s, g in zip(leaf.sensitivities, leaf.sigmas))
    raise TypeError(f"not a single-mu Gaussian leaf: {type(leaf).__name__}")


def sampled_noise_multiplier(leaf: PoissonSampledEvent) -> float:
    """σ/s of a sampled leaf's inner Gaussian, rounded *down* (the subsampled Gaussian's RDP and
    PLD grow as the noise multiplier shrinks, so a rounded-down value only adds privacy loss)."""
    inner = leaf.event
    assert isinstance(inner, GaussianEvent)
    return div_down(inner.sigma, inner.sensitivity)


def pure_epsilon(leaf: PrivacyEvent) -> float | None:
    """The pure-DP ε of a leaf rounded up (inf if it overflows), or None if the leaf is not pure DP."""
    if isinstance(leaf, LaplaceEvent):
        return div_up(leaf.sensitivity, leaf.scale)
    if isinstance(leaf, LaplaceReportNoisyMaxEvent):
        base = div_up(leaf.sensitivity, leaf.scale)
        if leaf.monotone and leaf.neighbouring is Neighbouring.ADD_REMOVE:
            return base
        return 2.0 * base  # (exact; inf on overflow)
    if isinstance(leaf, (RandomizedResponseEvent, PureDpEvent)):
        return float(leaf.epsilon)
    if isinstance(leaf, ApproxDpEvent) and leaf.delta == 0:
        return float(leaf.epsilon)
    if isinstance(leaf, PoissonSampledEvent) and not isinstance(leaf.event, GaussianEvent):
        inner = pure_epsilon(leaf.event)
        return None if inner is None else sampled_epsilon(leaf.sampling_probability, inner)
    ml = loaded_ml_events()  # None: no event of dpaudit.events_ml exists
    if ml is not None and isinstance(leaf, ml.DiscreteLaplaceEvent):
        return mul_up(leaf.parameter, float(leaf.sensitivity))
    return None
