"""Normal form of an event tree: parallel alternatives of multisets of leaf events.

Every event is rewritten as ``Parallel(C_1, ..., C_m)`` where each ``C_j`` is a sequential
composition written as a multiset {leaf: count}. Sequential composition distributes over
parallel composition (a unit of data in branch B of ``Compose(A, Parallel(B, C))`` sees A∘B),
so ``C_j`` is exactly what one data unit experiences, and the guarantee of the whole event is
the worst ``C_j``. Every accounting method bounds each alternative and takes the maximum.

:class:`Composition` also offers the views the methods need: the Gaussian part as arrays of
per-step μ with multiplicities, and the remaining leaves.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
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
    NoOpEvent,
    ParallelEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)

__all__ = ["Composition", "NotApplicable", "normal_form", "MAX_ALTERNATIVES", "pure_epsilon"]

MAX_ALTERNATIVES = 4096


class NotApplicable(Exception):
    """Raised by an accounting method that cannot bound an event; the message says why."""


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
        sequences, heterogeneous-Gaussian report-noisy-max via its GDP dominating Gaussian)
        flattened to per-step μ; everything else returned as is."""
        mus: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        rest: list[tuple[PrivacyEvent, int]] = []
        for leaf, c in self.items:
            if isinstance(leaf, (GaussianEvent, GaussianReportNoisyMaxEvent)):
                mus.append(np.array([leaf.mu]))
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
    def _mu_squared(self) -> float:
        mus, counts, _ = self.gaussian_part()
        return math.fsum((counts * mus * mus).tolist())

    def gaussian_mu_squared(self) -> float:
        """Σ count·μ² over the Gaussian-type leaves (exactly rounded sum)."""
        return self._mu_squared


def pure_epsilon(leaf: PrivacyEvent) -> float | None:
    """The pure-DP ε of a leaf, or None if the leaf is not pure DP."""
    if isinstance(leaf, (LaplaceEvent, LaplaceReportNoisyMaxEvent, RandomizedResponseEvent, PureDpEvent)):
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
