"""Single-step pessimistic PMFs of the non-Gaussian leaves, from dp-accounting's constructions.

Discrete Laplace → ``from_discrete_laplace_mechanism``; Laplace → ``from_laplace_mechanism``;
k-ary randomized response (k > 2) → ``from_randomized_response``; any other pure or (ε, δ) leaf,
and every ε below 1e-6 → ``from_privacy_parameters(ε, δ)`` (randomized response's PLD, which
dominates every (ε, δ)-DP mechanism). :mod:`dpaudit.accounting.pld` composes them.

>>> from dpaudit.events import LaplaceEvent
>>> [p.probs.size > 10 for p in single_step_pmfs(LaplaceEvent(1.0), 1.0, 0.0, 1e-3)]
[True]
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.accounting.pld_pmf import Pmf, from_dp
from dpaudit.events import LaplaceEvent, PrivacyEvent, RandomizedResponseEvent
from dpaudit.events_ml import DiscreteLaplaceEvent

__all__ = ["single_step_pmfs", "dense_pmfs", "SMALL_EPSILON"]

SMALL_EPSILON = 1e-6


def single_step_pmfs(leaf: PrivacyEvent, e: float, d: float, interval: float) -> list[Pmf]:
    """The pessimistic single-step PMFs of one non-Gaussian leaf on the grid ``interval``: one if
    both directions agree, else (remove, add)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    if isinstance(leaf, DiscreteLaplaceEvent) and e >= SMALL_EPSILON:
        p = pld.from_discrete_laplace_mechanism(
            leaf.parameter, sensitivity=leaf.sensitivity, pessimistic_estimate=True,
            value_discretization_interval=interval)
    elif isinstance(leaf, LaplaceEvent) and e >= SMALL_EPSILON:
        p = pld.from_laplace_mechanism(
            leaf.scale, sensitivity=leaf.sensitivity, pessimistic_estimate=True,
            value_discretization_interval=interval)
    elif isinstance(leaf, RandomizedResponseEvent) and leaf.num_categories > 2 and e >= SMALL_EPSILON:
        k = leaf.num_categories
        p = pld.from_randomized_response(k / (math.exp(e) + k - 1), k, pessimistic_estimate=True,
                                         value_discretization_interval=interval)
    else:
        p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e, d),
                                        value_discretization_interval=interval)
    return dense_pmfs(p)


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
