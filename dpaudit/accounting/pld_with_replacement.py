"""The PLD of a Gaussian on a batch drawn *with* replacement (replace-one relation), through the
number of copies of the record.

m draws, uniformly and independently from n records; the replaced record is drawn
C ~ Binomial(m, 1/n) times. Given the drawn indices, the two neighbouring datasets give Gaussians
whose means differ by at most C·s (C entries changed, each by at most the sensitivity s): a pair
dominated by N(0, σ²) against N(C·s, σ²), of privacy loss 0 when C = 0. Revealing the indices is
extra information, so the pair "C, then the output" dominates the event's pair; its privacy loss
distribution is, in both directions,

    P(C = 0)·[loss 0] + Σ_{c=1}^{K} P(C = c)·PLD(Gaussian, μ = c·s/σ) + P(C > K)·[loss +∞],

with K the largest c whose Gaussian stays in the PLD's domain (c·μ ≤ 20) and at most the c beyond
which P(C > K) ≤ 10⁻³⁰. Each Gaussian's PLD is dp-accounting's pessimistic PMF, the weights are
rounded up (more mass at any loss only raises δ(ε)), and the tail is bounded by
P(C ≥ K + 1) ≤ binom(m, K + 1)/n^{K+1} (a union bound over the (K + 1)-sets of draws).

This is sound for every n, m and σ but, like the RDP bound of
:mod:`dpaudit.accounting.with_replacement` (the same joint convexity), amplifies by O(m/n) only:
revealing C loses the mixing of the records that were not drawn. It is tighter than that RDP
bound, as the PLD of a pair always is than its RDP curve converted.

>>> from dpaudit.events import GaussianEvent
>>> from dpaudit.events_ml import SampledWithReplacementEvent
>>> zero, parts, tail = copy_weights(SampledWithReplacementEvent(1000, 10, GaussianEvent(sigma=1.0)))
>>> round(zero, 5), [c for _, c in parts][:3], tail < 1e-30
(0.99004, [1, 2, 3], True)
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.pld_pmf import Pmf
from dpaudit.accounting.with_replacement import log_binomial_up
from dpaudit.events import GaussianEvent, PoissonSampledEvent
from dpaudit.events_ml import SampledWithReplacementEvent
from dpaudit.numerics import div_up

__all__ = ["copy_weights", "copy_parts", "zero_and_tail_pmfs", "MAX_COPY_MU", "TAIL"]

MAX_COPY_MU = 20.0
"""The largest μ = c·s/σ of a copy count c given its own Gaussian PLD (the sampled-Gaussian PLD's
domain); the larger counts go to the loss +∞."""
TAIL = 1e-30
_UP = 1.0 + 1e-14


def _log_weight_up(n: int, m: int, c: int) -> float:
    """log P(C = c), C ~ Binomial(m, 1/n), rounded up."""
    log_n, log1m = math.log(n), math.log1p(-1.0 / n)
    parts = c * log_n + (m - c) * abs(log1m)
    return float(log_binomial_up(m, c)) - c * log_n + (m - c) * log1m + 1e-14 * parts


def _log_tail_up(n: int, m: int, k: int) -> float:
    """log of the union bound binom(m, k)/n^k ≥ P(C ≥ k)."""
    return float(log_binomial_up(m, k)) - k * math.log(n) * (1.0 - 1e-15)


def copy_weights(leaf: SampledWithReplacementEvent) -> tuple[float, list[tuple[float, int]], float]:
    """(P(C = 0), [(P(C = c), c) for c = 1..K], bound on P(C > K)), each rounded up (see the module
    docstring); K = 0 where a single copy's μ exceeds :data:`MAX_COPY_MU`."""
    inner = leaf.event
    assert isinstance(inner, GaussianEvent)
    n, m = leaf.dataset_size, leaf.sample_size
    mu = div_up(inner.sensitivity, inner.sigma)
    if mu == 0:  # the record moves nothing
        return 1.0, [], 0.0
    if n == 1:  # every draw is the record: C = m
        return 0.0, ([(1.0, m)] if m * mu <= MAX_COPY_MU else []), (0.0 if m * mu <= MAX_COPY_MU else 1.0)
    zero = min(1.0, math.exp(m * math.log1p(-1.0 / n) * (1.0 - 1e-15)) * _UP)
    cap = min(m, int(MAX_COPY_MU // mu))
    parts: list[tuple[float, int]] = []
    for c in range(1, cap + 1):
        if c > 1 and _log_tail_up(n, m, c) < math.log(TAIL):
            return zero, parts, math.exp(_log_tail_up(n, m, c))  # P(C ≥ c) ≤ TAIL
        parts.append((min(1.0, math.exp(_log_weight_up(n, m, c)) * _UP), c))
    tail = 0.0 if cap == m else min(1.0, math.exp(_log_tail_up(n, m, cap + 1)) * _UP)
    return zero, parts, tail


def copy_parts(leaf: SampledWithReplacementEvent) -> list[tuple[float, PoissonSampledEvent]]:
    """(weight, Gaussian of sensitivity c·s as a Poisson sample of rate 1) for c = 1..K."""
    inner = leaf.event
    assert isinstance(inner, GaussianEvent)
    _, parts, _ = copy_weights(leaf)
    return [(w, PoissonSampledEvent(1.0, GaussianEvent(inner.sigma, c * inner.sensitivity)))
            for w, c in parts]


def zero_and_tail_pmfs(leaf: SampledWithReplacementEvent) -> list[tuple[float, Pmf]]:
    """The two non-Gaussian parts of the mixture: P(C = 0) at loss 0 and P(C > K) at +∞."""
    zero, _, tail = copy_weights(leaf)
    return [(zero, Pmf(0, np.ones(1), 0.0, 0.0)), (tail, Pmf(0, np.zeros(1), 1.0, 0.0))]
