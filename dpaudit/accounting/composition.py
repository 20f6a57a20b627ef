"""Normal form of an event tree: parallel alternatives of multisets of leaf events.

Every event is rewritten as ``Parallel(C_1, ..., C_m)`` where each ``C_j`` is a sequential
composition written as a multiset {leaf: count}. Sequential composition distributes over
parallel composition (a unit of data in branch B of ``Compose(A, Parallel(B, C))`` sees A∘B),
so ``C_j`` is exactly what one data unit experiences, and the guarantee of the whole event is
the worst ``C_j``. Every accounting method bounds each alternative and takes the maximum.

:class:`Composition` also offers the views the methods need: the Gaussian part as arrays of
per-step μ with multiplicities, and the remaining leaves. Derived parameters that an event
computes by a division (μ = s/σ, ε = s/b) are rounded *up* here (:func:`div_up`), and the
composed GDP parameter sqrt(Σ c_i μ_i²) is summed with scaling (no under- or overflow of μ²)
and rounded up, so every method starts from parameters that are never below the event's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
    NonPrivateEvent,
    NoOpEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)

__all__ = [
    "Composition",
    "NotApplicable",
    "normal_form",
    "MAX_ALTERNATIVES",
    "pure_epsilon",
    "div_up",
    "div_down",
    "sampled_noise_multiplier",
    "no_bound",
    "norm_up",
    "sum_up",
    "leaf_mu",
    "check_private",
]

MAX_ALTERNATIVES = 4096


class NotApplicable(Exception):
    """Raised by an accounting method that cannot bound an event; the message says why."""


def div_up(num: float, den: float) -> float:
    """num/den for positive doubles, rounded *up* to a double (inf if it overflows).

    >>> div_up(1.0, 3.0) > 1 / 3, div_up(1.0, 2.0) == 0.5, div_up(1e-300, 1e300)
    (True, True, 5e-324)
    """
    q = num / den
    if math.isinf(q):
        return q
    if Fraction(q) < Fraction(num) / Fraction(den):
        q = math.nextafter(q, math.inf)
    return q


def div_down(num: float, den: float) -> float:
    """num/den for positive doubles, rounded *down* to a double (0 if it underflows).

    >>> Fraction(div_down(1.0, 3.0)) <= Fraction(1, 3), div_down(1.0, 2.0), div_down(5e-324, 4.0)
    (True, 0.5, 0.0)
    """
    q = num / den
    if q == 0 or math.isinf(q):
        return q if q == 0 else math.nextafter(q, 0.0)
    if Fraction(q) > Fraction(num) / Fraction(den):
        q = math.nextafter(q, 0.0)
    return q


def sum_up(terms: list[tuple[float, float]] | list[float]) -> float:
    """Σ count·value over ``terms`` (pairs, or plain non-negative values), rounded *up*.

    With at most 64 terms the sum is exact (rational arithmetic on the doubles) and then rounded
    up to the nearest double, so an exact total stays exact: four steps of ε = 0.25 sum to 1.0.
    Longer sums use ``math.fsum`` plus a relative 1e-15 and one ulp. Either way each *value* is
    taken as exact; a caller whose values carry their own rounding inflates them first.

    >>> sum_up([(4, 0.25)]), sum_up([(10, 0.1)])  # 10 × 0.1000000000000000055…
    (1.0, 1.0000000000000002)
    """
    pairs = [(1.0, t) if not isinstance(t, tuple) else t for t in terms]
    if not pairs:
        return 0.0
    if any(math.isinf(c * v) or math.isinf(v) for c, v in pairs if v > 0 and c > 0):
        return math.inf
    if len(pairs) <= 64:
        exact = sum((Fraction(c) * Fraction(v) for c, v in pairs), Fraction(0))
        out = float(exact)
        if Fraction(out) < exact:
            out = math.nextafter(out, math.inf)
        return out
    total = math.fsum(c * v for c, v in pairs)
    if total == 0.0:
        return 0.0
    return math.nextafter(total * (1.0 + 1e-15) + len(pairs) * 5e-324, math.inf)


def norm_up(values: np.ndarray, counts: np.ndarray) -> float:
    """sqrt(Σ counts·values²) for values ≥ 0, rounded *up*, without under- or overflow of the
    squares (the values are scaled by their maximum first). inf if the result overflows.

    >>> norm_up(np.array([3e-200, 4e-200]), np.array([1.0, 1.0])) >= 5e-200
    True
    """
    v = np.asarray(values, dtype=float)
    c = np.asarray(counts, dtype=float)
    keep = (v > 0) & (c > 0)
    if not np.any(keep):
        return 0.0
    v, c = v[keep], c[keep]
    top = float(v.max())
    if math.isinf(top):
        return math.inf
    r = v / top
    # pairwise summation: relative error ≤ (log2 n + 3)·2^-53 ≤ 4e-15 for n ≤ 1e9, inside 1e-14
    s = float(np.sum(c * r * r)) * (1.0 + 1e-14)
    with np.errstate(over="ignore"):
        out = top * math.sqrt(s)
    return math.nextafter(out, math.inf) if math.isfinite(out) else math.inf


def is_full_sample(leaf: PrivacyEvent) -> bool:
    """A Poisson-sampled event with q = 1: the inner Gaussian itself."""
    return isinstance(leaf, PoissonSampledEvent) and leaf.sampling_probability == 1.0


def leaf_mu(leaf: PrivacyEvent) -> float:
    """The GDP μ of a Gaussian-type leaf, rounded up (sensitivity/σ as an exact quotient)."""
    if is_full_sample(leaf):
        leaf = leaf.event  # type: ignore[attr-defined]
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


def no_bound(leaf: PrivacyEvent, what: str) -> NotApplicable:
    """The "not applicable" of a method that has no ``what`` bound for ``leaf``, with a hint
    where another method applies."""
    if isinstance(leaf, PoissonSampledEvent):
        return NotApplicable(
            f"no {what} bound is implemented for a Poisson-subsampled Gaussian (sampling_probability < 1); "
            "the rdp and pld methods bound it"
        )
    return NotApplicable(f"no {what} bound is known for {type(leaf).__name__}")


def check_private(comp: Composition) -> None:
    """Raise NotApplicable if a leaf of ``comp`` is not differentially private at all."""
    for leaf, _ in comp:
        if isinstance(leaf, NonPrivateEvent):
            raise NotApplicable(f"not differentially private (unbounded privacy loss): {leaf.reason}")


@dataclass(frozen=True)
class Composition:
    """A sequential composition written as ``((leaf, count), ...)``."""

    items: tuple[tuple[PrivacyEvent, int], ...]

    def __iter__(self) -> Iterator[tuple[PrivacyEvent, int]]:
        return iter(self.items)

    @property
    def num_releases(self) -> int:
        return sum(leaf.num_releases * c for leaf, c in self.items)

    def gaussian_part(self) -> tuple[np.ndarray, np.ndarray, list[tuple[PrivacyEvent, int]]]:
        return self._gaussian_part

    @cached_property
    def _gaussian_part(self) -> tuple[np.ndarray, np.ndarray, list[tuple[PrivacyEvent, int]]]:
        """(μ values, multiplicities, other leaves): Gaussian-type leaves (Gaussian, Gaussian
        sequences, heterogeneous-Gaussian report-noisy-max via its GDP dominating Gaussian, a
        Poisson-sampled Gaussian with q = 1) flattened to per-step μ (rounded up); everything
        else returned as is."""
        mus: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        rest: list[tuple[PrivacyEvent, int]] = []
        for leaf, c in self.items:
            if isinstance(leaf, (GaussianEvent, GaussianReportNoisyMaxEvent)) or is_full_sample(leaf):
                mus.append(np.array([leaf_mu(leaf)]))
                counts.append(np.array([c], dtype=float))
            elif isinstance(leaf, GaussianSequenceEvent):
                mus.append(leaf.mus)
                counts.append(np.full(leaf.mus.size, float(c)))
            else:
                rest.append((leaf, c))
        if mus:
            return np.concatenate(mus), np.concatenate(counts), rest
        return np.zeros(0), np.zeros(0), rest

    @cached_property
    def _mu(self) -> float:
        mus, counts, _ = self.gaussian_part()
        return norm_up(mus, counts)

    def gaussian_mu(self) -> float:
        """sqrt(Σ count·μ²) over the Gaussian-type leaves, rounded up (inf on overflow)."""
        return self._mu

    def gaussian_mu_squared(self) -> float:
        """The square of :meth:`gaussian_mu`, rounded up (≥ 5e-324 when μ > 0; inf on overflow)."""
        m = self._mu
        if m == 0:
            return 0.0
        with np.errstate(over="ignore"):
            sq = m * m
        return math.nextafter(sq, math.inf) if math.isfinite(sq) else math.inf

    @property
    def is_empty(self) -> bool:
        """True when no leaf can reveal anything: no leaves, or only ε = 0 pure leaves."""
        for leaf, _ in self.items:
            if isinstance(leaf, (GaussianEvent, GaussianReportNoisyMaxEvent, GaussianSequenceEvent,
                                 PoissonSampledEvent)):
                return False
            e = pure_epsilon(leaf)
            if e is None or e > 0 or (isinstance(leaf, ApproxDpEvent) and leaf.delta > 0):
                return False
        return True


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
    return None


def _leaf_key(c: Counter) -> frozenset:
    return frozenset(c.items())


def _normal(event: PrivacyEvent) -> list[Counter]:
    if isinstance(event, NoOpEvent):
        return [Counter()]
    if isinstance(event, ComposedEvent):
        acc: list[Counter] = [Counter()]
        for child in event.events:
            alts = _normal(child)
            if len(alts) == 1:
                for a in acc:
                    a.update(alts[0])
                continue
            combined: dict[frozenset, Counter] = {}
            for a in acc:
                for b in alts:
                    s = a + b
                    combined.setdefault(_leaf_key(s), s)
            if len(combined) > MAX_ALTERNATIVES:
                raise ValueError(
                    f"the event expands into more than {MAX_ALTERNATIVES} parallel alternatives; "
                    "record parallel branches at the top level (per data unit) instead"
                )
            acc = list(combined.values())
        return acc
    if isinstance(event, SelfComposedEvent):
        return [Counter({k: v * event.count for k, v in alt.items()}) for alt in _normal(event.event)]
    if isinstance(event, ParallelEvent):
        seen: dict[frozenset, Counter] = {}
        for child in event.events:
            for alt in _normal(child):
                seen.setdefault(_leaf_key(alt), alt)
        if len(seen) > MAX_ALTERNATIVES:
            raise ValueError(f"the event has more than {MAX_ALTERNATIVES} distinct parallel alternatives")
        return list(seen.values())
    if isinstance(event, PrivacyEvent):
        return [Counter({event: 1})]
    raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")


def normal_form(event: PrivacyEvent) -> tuple[Composition, ...]:
    """The distinct per-unit compositions of ``event`` (see the module docstring).

    >>> from dpaudit.events import LaplaceEvent, ParallelEvent, ComposedEvent
    >>> a, b, c = LaplaceEvent(1.0), LaplaceEvent(2.0), LaplaceEvent(4.0)
    >>> [len(x.items) for x in normal_form(ComposedEvent((a, ParallelEvent((b, c)))))]
    [2, 2]
    """
    out = []
    for alt in _normal(event):
        items = tuple(sorted(((k, v) for k, v in alt.items() if v > 0), key=lambda kv: repr(kv[0])))
        out.append(Composition(items))
    return tuple(out)
