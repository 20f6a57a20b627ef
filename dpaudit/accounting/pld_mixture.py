"""Pessimistic single-step PLDs of the sampled-Gaussian leaves: the Poisson-subsampled Gaussian,
the two mixtures of it (the mixture of Gaussians; the Gaussian on a truncated Poisson sample), and
the Gaussian on a batch drawn with replacement (a mixture over the record's number of copies:
:mod:`dpaudit.accounting.pld_with_replacement`).

A mixture leaf's pair of output distributions is a mixture, with the *same* weights w_j on both
sides, of pairs each dominated by a Poisson-subsampled Gaussian
(:func:`dpaudit.accounting.mixtures.mixture_parts` states the decomposition and why it holds).
Revealing which part ran is extra information, so the pair "part j, then its output" dominates the
leaf's pair (forgetting j is post-processing); its privacy loss distribution is the mixture Σ_j
w_j PLD_j of the parts' PLDs, direction by direction, and composes like any other pair. Each PLD_j
is the pessimistic connect-the-dots PMF of
:func:`~dpaudit.accounting.pld_sampled.sampled_gaussian_pmfs` (or
:func:`~dpaudit.accounting.pld_gaussian.gaussian_pmf` for a part sampled with probability 1),
so every part's δ(ε) is at least its true one. The weights are rounded up (their sum may exceed
1 by a few ulps): more mass at any loss only raises δ(ε) = Σ_i p_i (1 − e^{ε − ℓ_i})₊ + p_∞, so
the mixture stays pessimistic. The weighted sums are of non-negative terms (relative rounding,
inside the PLD's 1e-10 relative margin).

>>> from dpaudit.events_ml import MixtureOfGaussiansEvent
>>> remove, add = leaf_pmfs(MixtureOfGaussiansEvent(1.0, (0.0, 1.0), (0.99, 0.01)), 1e-3)
>>> one = leaf_pmfs(PoissonSampledEvent(0.01, GaussianEvent(sigma=1.0)), 1e-3)  # the same pair
>>> bool(abs(remove.probs.sum() - one[0].probs.sum()) < 1e-12), remove.lower == one[0].lower
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from dpaudit.accounting.composition import sampled_noise_multiplier
from dpaudit.accounting.pld_pmf import Pmf
from dpaudit.accounting.pld_steps import gaussian_pmfs
from dpaudit.events import GaussianEvent, PoissonSampledEvent, PrivacyEvent, loaded_ml_events

if TYPE_CHECKING:
    from dpaudit.events_ml import (
        MixtureOfGaussiansEvent,
        SampledWithReplacementEvent,
        TruncatedSubsampledGaussianEvent,
    )

__all__ = ["is_sampled_gaussian", "leaf_parts", "leaf_pmfs"]


def _ml_kind(leaf: PrivacyEvent) -> str | None:
    """"mixture" for the leaves of :mod:`dpaudit.events_ml` whose PLD is a mixture of
    Poisson-subsampled Gaussians', "with replacement" for a Gaussian on a batch drawn with
    replacement, None for any other leaf (and whenever that module, without which no such leaf
    exists, is not loaded)."""
    ml = loaded_ml_events()
    if ml is None:
        return None
    if isinstance(leaf, (ml.MixtureOfGaussiansEvent, ml.TruncatedSubsampledGaussianEvent)):
        return "mixture"
    return "with replacement" if isinstance(leaf, ml.SampledWithReplacementEvent) else None


def is_sampled_gaussian(leaf: PrivacyEvent) -> bool:
    """A Poisson-subsampled Gaussian, one of its mixtures, or a Gaussian on a batch drawn with
    replacement (a sampled pure ε-DP release is not: it is composed with the pure leaves)."""
    return _ml_kind(leaf) is not None or (
        isinstance(leaf, PoissonSampledEvent) and isinstance(leaf.event, GaussianEvent))


def leaf_parts(leaf: PrivacyEvent) -> list[tuple[float, PoissonSampledEvent]]:
    """(weight, Poisson-subsampled Gaussian) parts of a sampled-Gaussian leaf: the leaf itself with
    weight 1, or a mixture's parts."""
    if isinstance(leaf, PoissonSampledEvent):
        return [(1.0, leaf)]
    kind = _ml_kind(leaf)
    if kind == "with replacement":
        from dpaudit.accounting.pld_with_replacement import copy_parts

        return copy_parts(cast("SampledWithReplacementEvent", leaf))
    if kind == "mixture":
        from dpaudit.accounting.mixtures import mixture_parts

        parts = mixture_parts(cast("MixtureOfGaussiansEvent | TruncatedSubsampledGaussianEvent", leaf))
        if sum(w for w, _ in parts) <= 1.0 + 1e-9:
            return parts
        # weights bounded loosely (1, 1 where the binomial tails are out of reach): one part that
        # dominates every part — the largest sampling probability with the smallest noise
        # multiplier (the subsampled Gaussian's PLD grows with both) — dominates their mixture
        q = max(part.sampling_probability for _, part in parts)
        nm = min(sampled_noise_multiplier(part) for _, part in parts)
        return [(1.0, PoissonSampledEvent(q, GaussianEvent(sigma=nm)))]
    raise ValueError(
        f"leaf must be a Poisson-sampled Gaussian or one of its mixtures, got {type(leaf).__name__}")


def _part_pmfs(part: PoissonSampledEvent, interval: float) -> list[Pmf]:
    """(remove, add) PMFs of one part; a part sampled with probability 1 is its Gaussian."""
    nm = sampled_noise_multiplier(part)
    if part.sampling_probability < 1.0:
        from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs

        return sampled_gaussian_pmfs(nm, part.sampling_probability, interval)
    pmfs = gaussian_pmfs(nm, interval)
    return pmfs if len(pmfs) == 2 else [pmfs[0], pmfs[0]]


def _mix(weighted: list[tuple[float, Pmf]]) -> Pmf:
    """Σ w·PMF on one grid (aligned by their lower loss index)."""
    lower = min(p.lower for _, p in weighted)
    upper = max(p.lower + p.probs.size for _, p in weighted)
    probs = np.zeros(upper - lower)
    inf_mass = 0.0
    for w, p in weighted:
        probs[p.lower - lower : p.lower - lower + p.probs.size] += w * p.probs
        inf_mass += w * p.inf_mass
    return Pmf(lower, probs, min(1.0, inf_mass), 0.0)


def leaf_pmfs(leaf: PrivacyEvent, interval: float) -> list[Pmf]:
    """The pessimistic (remove, add) PMFs of one step of ``leaf`` on the grid ``interval``."""
    parts = leaf_parts(leaf)
    pmfs = [(w, _part_pmfs(part, interval)) for w, part in parts]
    if _ml_kind(leaf) == "with replacement":  # no copy (loss 0), too many (loss +∞)
        from dpaudit.accounting.pld_with_replacement import zero_and_tail_pmfs

        tails = zero_and_tail_pmfs(cast("SampledWithReplacementEvent", leaf))
        pmfs += [(w, [p, p]) for w, p in tails if w > 0]
    if len(pmfs) == 1 and pmfs[0][0] == 1.0:
        return pmfs[0][1]
    return [_mix([(w, d[k]) for w, d in pmfs]) for k in (0, 1)]

