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

import gc
import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter, itemgetter
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dpaudit.accounting.leaves import is_full_sample, leaf_mu, pure_epsilon, sampled_noise_multiplier
from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
    loaded_ml_events,
)
from dpaudit.numerics import div_up, div_up_array, norm_up

if TYPE_CHECKING:
    from dpaudit.events_ml import TreeAggregationEvent

__all__ = [
    "Composition",
    "NotApplicable",
    "normal_form",
    "MAX_ALTERNATIVES",
    "TooManyAlternatives",
    "pure_epsilon",
    "sampled_noise_multiplier",
    "no_bound",
    "is_full_sample",
    "leaf_mu",
    "check_private",
    "PureGroup",
    "Steps",
]

MAX_ALTERNATIVES = 4096


class NotApplicable(Exception):
    """Raised by an accounting method that cannot bound an event; the message says why."""


def no_bound(leaf: PrivacyEvent, what: str) -> NotApplicable:
    """The "not applicable" of a method that has no ``what`` bound for ``leaf``, with a hint
    where another method applies."""
    if isinstance(leaf, PoissonSampledEvent):
        return NotApplicable(
            f"no {what} bound is implemented for a Poisson-subsampled Gaussian (sampling_probability < 1); "
            "the rdp and pld methods bound it"
        )
    ml = loaded_ml_events()  # None: no event of dpaudit.events_ml exists
    reason = None if ml is None else _ml_no_bound(leaf, what, ml)
    if reason is not None:
        return NotApplicable(reason)
    return NotApplicable(f"no {what} bound is known for {type(leaf).__name__}")


def _ml_no_bound(leaf: PrivacyEvent, what: str, ml: ModuleType) -> str | None:
    """Why a method has no ``what`` bound for an event of :mod:`dpaudit.events_ml` (the loaded
    module ``ml``), naming the methods that bound it; None for any other event."""
    if isinstance(leaf, ml.SampledWithoutReplacementEvent):
        return (f"no {what} bound is implemented for a Gaussian on a batch sampled without replacement "
                "(replace-one); the rdp method bounds it (Wang, Balle & Kasiviswanathan 2019)")
    if isinstance(leaf, ml.SampledWithReplacementEvent):
        return (f"no {what} bound is implemented for a Gaussian on a batch sampled with replacement "
                "(replace-one); the rdp and pld methods bound it (revealing the record's number of copies)")
    if isinstance(leaf, ml.MixtureOfGaussiansEvent):
        return (f"no {what} bound is implemented for a mixture of Gaussians; the rdp and pld methods bound "
                "it (a mixture of Poisson-subsampled Gaussians)")
    if isinstance(leaf, ml.TruncatedSubsampledGaussianEvent):
        return (f"no {what} bound is implemented for a Gaussian on a truncated Poisson sample; the rdp and "
                "pld methods bound it (two Poisson-subsampled Gaussians: whether the batch is cut)")
    if isinstance(leaf, ml.RepeatAndSelectEvent):
        return (f"no {what} bound is known for repeat-and-select (an unbounded random number of runs); "
                "the rdp method bounds it (Papernot & Steinke 2022, Thms 2 and 6)")
    if isinstance(leaf, ml.ZCdpEvent):
        return (f"no {what} bound is implemented for a zCDP release; the rdp method bounds it "
                "exactly (RDP xi + rho*alpha)")
    return None


def check_private(comp: Composition) -> None:
    """Raise NotApplicable if a leaf of ``comp`` is not differentially private at all."""
    for leaf, _ in comp.steps().other:
        if isinstance(leaf, NonPrivateEvent):
            raise NotApplicable(f"not differentially private (unbounded privacy loss): {leaf.reason}")


@dataclass(frozen=True)
class PureGroup:
    """The pure ε-DP leaves of one family, as arrays: ``family`` is "laplace", "rr" (k-ary
    randomized response with ``k`` categories) or "pure" (any other pure ε-DP release, bounded
    as binary randomized response where a method needs its shape); ``eps`` rounded up."""

    family: str
    k: int
    eps: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True)
class Steps:
    """The non-Gaussian leaves of a composition: pure groups, (ε, δ > 0) leaves as arrays, and
    ``other`` leaves that have no (ε, δ) parameters (a method that cannot bound them names them)."""

    pure: tuple[PureGroup, ...]
    approx_eps: np.ndarray
    approx_delta: np.ndarray
    approx_counts: np.ndarray
    other: tuple[tuple[PrivacyEvent, int], ...]

    def pure_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(ε, counts) of every pure leaf, all families together."""
        if not self.pure:
            return np.zeros(0), np.zeros(0)
        return (np.concatenate([g.eps for g in self.pure]), np.concatenate([g.counts for g in self.pure]))

    def fixed_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ε, δ, counts) of every pure and (ε, δ) leaf."""
        e, c = self.pure_arrays()
        return (np.concatenate([e, self.approx_eps]), np.concatenate([np.zeros(e.size), self.approx_delta]),
                np.concatenate([c, self.approx_counts]))


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
        """(μ values, multiplicities, other leaves): Gaussian-type leaves (Gaussian, Gaussian
        sequences, heterogeneous-Gaussian report-noisy-max via its GDP dominating Gaussian, a
        Poisson-sampled Gaussian with q = 1) flattened to per-step μ (rounded up); everything
        else returned as is."""
        m, c, _, _ = self._classified
        return m, c, self._rest

    def gaussian_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """(μ values, multiplicities) of :meth:`gaussian_part`, without listing the other leaves."""
        m, c, _, _ = self._classified
        return m, c

    def steps(self) -> Steps:
        """The non-Gaussian leaves as arrays (:class:`Steps`)."""
        return self._classified[2]

    @cached_property
    def memo(self) -> dict[str, Any]:
        """Results that accounting methods derive from this (immutable) composition, kept on it
        for the next query: a cache keyed by value would hash every leaf (0.4 s for 10⁶)."""
        return {}

    @cached_property
    def _classified(self) -> tuple[np.ndarray, np.ndarray, Steps, np.ndarray]:
        """(μ, multiplicities, :class:`Steps`, mask of the Gaussian-type items), in one pass.

        Gaussian and Laplace leaves — the bulk of a long heterogeneous composition — are
        selected by type and read attribute by attribute in C loops (``map``/``attrgetter``),
        their divisions vectorised; every other leaf is classified one by one. The cyclic
        garbage collector is paused (a pass over 10⁶ leaves otherwise triggers collections of
        the whole event graph)."""
        n = len(self.items)
        out = _Classes(n)
        with _gc_paused():
            leaves = list(map(itemgetter(0), self.items))
            types = list(map(type, leaves))
            kinds = set(types)
            counts_all = np.fromiter(map(itemgetter(1), self.items), dtype=float, count=n)
            if len(kinds) == 1:
                codes = np.zeros(n, dtype=np.intp)
                code = {types[0]: 0}
            else:
                code = {t: i for i, t in enumerate(kinds)}
                codes = np.fromiter(map(code.__getitem__, types), dtype=np.intp, count=n)

            def bulk(t: type, *attrs: str) -> tuple[np.ndarray, ...]:
                idx = np.flatnonzero(codes == code[t])
                sel = leaves if idx.size == n else [leaves[i] for i in idx.tolist()]
                return (idx, *(np.fromiter(map(attrgetter(a), sel), dtype=float, count=idx.size)
                               for a in attrs))

            if GaussianEvent in kinds:
                idx, s, sigma = bulk(GaussianEvent, "sensitivity", "sigma")
                out.add_gaussian(idx, div_up_array(s, sigma), counts_all[idx])
            if LaplaceEvent in kinds:
                idx, s, scale = bulk(LaplaceEvent, "sensitivity", "scale")
                out.groups.append(PureGroup("laplace", 0, div_up_array(s, scale), counts_all[idx]))
            singles = [code[t] for t in kinds if t is not GaussianEvent and t is not LaplaceEvent]
            for i in np.flatnonzero(np.isin(codes, singles)).tolist() if singles else ():
                out.add_leaf(i, *self.items[i])
        return out.result()

    @cached_property
    def _rest(self) -> list[tuple[PrivacyEvent, int]]:
        """The items that are not Gaussian-type, in order."""
        mask = self._classified[3]
        if not mask.any():
            return list(self.items)
        return [self.items[i] for i in np.flatnonzero(~mask).tolist()]

    @cached_property
    def _mu(self) -> float:
        mus, counts, _, _ = self._classified
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
        mus, _, st, _ = self._classified
        return (mus.size == 0 and st.approx_eps.size == 0 and not st.other
                and all(not np.any(g.eps > 0) for g in st.pure))


class _Classes:
    """What :meth:`Composition._classified` collects in its pass over the leaves: Gaussian-type
    per-step μ with multiplicities (and which items they came from), the pure ε-DP groups, the
    (ε, δ > 0) leaves and every other leaf."""

    def __init__(self, n: int) -> None:
        self.gaussian_mask = np.zeros(n, dtype=bool)
        self.mus: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.groups: list[PureGroup] = []
        self.pure: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
        self.approx: list[tuple[float, float, float]] = []
        self.other: list[tuple[PrivacyEvent, int]] = []

    def add_gaussian(self, items: int | np.ndarray, mus: np.ndarray, counts: np.ndarray) -> None:
        """Gaussian-type steps of per-step ``mus`` and multiplicities ``counts`` from ``items``."""
        self.gaussian_mask[items] = True
        self.mus.append(mus)
        self.counts.append(counts)

    def add_leaf(self, i: int, leaf: PrivacyEvent, c: int) -> None:
        """Item ``i``: ``c`` times a leaf that is neither a plain Gaussian nor a plain Laplace
        (classified by its exact type: a subclass of an event type is not that event)."""
        if type(leaf) is GaussianReportNoisyMaxEvent or is_full_sample(leaf):
            self.add_gaussian(i, np.array([leaf_mu(leaf)]), np.array([c], dtype=float))
            return
        if type(leaf) is GaussianSequenceEvent:
            self.add_gaussian(i, leaf.mus, np.full(leaf.mus.size, float(c)))
            return
        ml = loaded_ml_events()
        if ml is not None and type(leaf) is ml.TreeAggregationEvent:  # `nodes` Gaussian steps of μ = 1/σ
            tree = cast("TreeAggregationEvent", leaf)
            if tree.nodes:
                self.add_gaussian(i, np.array([div_up(1.0, tree.noise_multiplier)]),
                                  np.array([float(c) * tree.nodes]))
            else:
                self.gaussian_mask[i] = True
            return
        if type(leaf) is ApproxDpEvent and leaf.delta > 0:
            self.approx.append((float(leaf.epsilon), float(leaf.delta), float(c)))
            return
        if isinstance(leaf, PoissonSampledEvent) and leaf.sampling_probability == 1.0:
            leaf = leaf.event  # a pure release on the whole dataset: the release itself
        e = pure_epsilon(leaf)
        if e is None:
            self.other.append((leaf, c))
            return
        if type(leaf) is RandomizedResponseEvent:
            key = ("rr", int(leaf.num_categories))
        elif type(leaf) is LaplaceEvent:
            key = ("laplace", 0)
        else:
            key = ("pure", 0)
        vals, cnts_k = self.pure.setdefault(key, ([], []))
        vals.append(e)
        cnts_k.append(float(c))

    def result(self) -> tuple[np.ndarray, np.ndarray, Steps, np.ndarray]:
        """(μ, multiplicities, :class:`Steps`, Gaussian mask), every array in canonical order
        (by value), so that sums do not depend on the order of the leaves."""
        if self.mus:
            m, c = np.concatenate(self.mus), np.concatenate(self.counts)
            order = _canonical_order(m, c)
            m, c = m[order], c[order]
        else:
            m, c = np.zeros(0), np.zeros(0)
        groups = list(self.groups)  # the bulk Laplace group, if any: one group per family
        for (family, k), (vals, cnts_k) in sorted(self.pure.items()):
            eps, cnts = np.array(vals, dtype=float), np.array(cnts_k)
            same = [i for i, g in enumerate(groups) if (g.family, g.k) == (family, k)]
            if same:
                g = groups.pop(same[0])
                eps, cnts = np.concatenate([g.eps, eps]), np.concatenate([g.counts, cnts])
            groups.append(PureGroup(family, k, eps, cnts))
        for i, g in enumerate(groups):
            order = _canonical_order(g.eps, g.counts)
            groups[i] = PureGroup(g.family, g.k, g.eps[order], g.counts[order])
        a = np.array(sorted(self.approx), dtype=float).reshape(-1, 3)
        steps = Steps(tuple(groups), a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), tuple(self.other))
        return m, c, steps, self.gaussian_mask


def _canonical_order(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The permutation sorting by (value, count): an unstable sort where the values are distinct
    (the order is then unique), the two-key sort only where some value repeats."""
    order = np.argsort(values)
    v = values[order]
    if np.any(v[1:] == v[:-1]):
        return np.lexsort((counts, values))
    return order


def _leaf_key(c: Counter) -> frozenset:
    return frozenset(c.items())


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_COMPOUND = (NoOpEvent, ComposedEvent, SelfComposedEvent, ParallelEvent)


def _is_plain(t: type) -> bool:
    return issubclass(t, PrivacyEvent) and not issubclass(t, _COMPOUND)


class TooManyAlternatives(ValueError):
    """The normal form would have more than :data:`MAX_ALTERNATIVES` parallel alternatives."""


def _collapsed(alts: list[Counter]) -> list[Counter]:
    """The alternatives with every Gaussian-only one (plain Gaussian leaves and sequences) replaced
    by a single Gaussian step at the largest composed μ among them. Sound for every method: a
    μ-GDP pair is a post-processing of a μ′-GDP pair for μ ≤ μ′ (Dong, Roth & Su 2022, Prop. 2.8),
    so the worst alternative can only get worse; exact for gdp and for pld's closed form."""
    alts = _collapsed_single(alts)
    gauss = [a for a in alts if all(type(k) in (GaussianEvent, GaussianSequenceEvent) for k in a)]
    if len(gauss) < 2:
        return alts
    worst = 0.0
    for a in gauss:
        mus = np.concatenate([k.mus if isinstance(k, GaussianSequenceEvent) else np.array([leaf_mu(k)])
                              for k in a])
        counts = np.concatenate([np.full(k.mus.size if isinstance(k, GaussianSequenceEvent) else 1, float(c))
                                 for k, c in a.items()])
        worst = max(worst, norm_up(mus, counts))
    rest = [a for a in alts if not any(a is g for g in gauss)]
    return rest + [Counter({GaussianSequenceEvent(np.array([worst])): 1})]


def _collapsed_single(alts: list[Counter]) -> list[Counter]:
    """The alternatives that are k repetitions of one Laplace leaf (or of one k-ary randomized
    response leaf, per k) replaced by one: the leaf of the largest ε, repeated the most times. Sound:
    within each family a smaller ε's output pair is a post-processing of a larger one's (see
    :func:`~dpaudit.accounting.binning.binned_up`), and fewer repetitions are a post-processing of
    more (drop the extra outputs)."""
    groups: dict[tuple[type, int], list[Counter]] = {}
    for a in alts:
        if len(a) == 1:
            (leaf,) = a
            if type(leaf) is LaplaceEvent or type(leaf) is RandomizedResponseEvent:
                groups.setdefault((type(leaf), getattr(leaf, "num_categories", 0)), []).append(a)
    if all(len(g) < 2 for g in groups.values()):
        return alts
    merged = {id(a) for g in groups.values() if len(g) > 1 for a in g}
    out = [a for a in alts if id(a) not in merged]
    for g in groups.values():
        if len(g) > 1:
            top = max((next(iter(a)) for a in g), key=lambda leaf: pure_epsilon(leaf) or 0.0)
            out.append(Counter({top: max(next(iter(a.values())) for a in g)}))
    return out


def _normal(event: PrivacyEvent) -> list[Counter]:
    if isinstance(event, NoOpEvent):
        return [Counter()]
    if isinstance(event, ComposedEvent):
        if all(_is_plain(t) for t in set(map(type, event.events))):
            return [Counter(event.events)]  # only leaves: one multiset, counted in C
        acc: list[Counter] = [Counter()]
        leaves = [c for c in event.events if isinstance(c, PrivacyEvent) and not isinstance(c, _COMPOUND)]
        if leaves:  # plain leaves join every alternative; Counter counts them in C
            acc[0].update(leaves)
        for child in event.events:
            if isinstance(child, PrivacyEvent) and not isinstance(child, _COMPOUND):
                continue
            alts = _normal(child)
            if len(alts) == 1:
                for a in acc:
                    a.update(alts[0])
                continue
            if len(acc) * len(alts) > MAX_ALTERNATIVES:
                acc, alts = _collapsed(acc), _collapsed(alts)
            if len(acc) * len(alts) > MAX_ALTERNATIVES:
                n = len(acc) * len(alts)
                raise TooManyAlternatives(
                    f"the event expands into {n} > {MAX_ALTERNATIVES} parallel alternatives (a sequential "
                    "composition of parallel events multiplies them, and only Gaussian-only or single-family "
                    "Laplace / randomized-response alternatives merge); record parallel branches at the top "
                    "level (per data unit) instead"
                )
            combined: dict[frozenset, Counter] = {}
            for a in acc:
                for b in alts:
                    s = a + b
                    combined.setdefault(_leaf_key(s), s)
            acc = list(combined.values())
        return acc
    if isinstance(event, SelfComposedEvent):
        return [Counter({k: v * event.count for k, v in alt.items()}) for alt in _normal(event.event)]
    if isinstance(event, ParallelEvent):
        seen: dict[frozenset, Counter] = {}
        for child in event.events:
            for alt in _normal(child):
                seen.setdefault(_leaf_key(alt), alt)
        out = list(seen.values())
        if len(out) > MAX_ALTERNATIVES:
            out = _collapsed(out)
        if len(out) > MAX_ALTERNATIVES:
            raise TooManyAlternatives(
                f"the event has {len(out)} > {MAX_ALTERNATIVES} distinct parallel alternatives that do not "
                "merge")
        return out
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
    with _gc_paused():
        for alt in _normal(event):  # leaves in order of first appearance: deterministic per event
            positive = min(alt.values(), default=1) > 0
            items = alt.items() if positive else ((k, v) for k, v in alt.items() if v > 0)
            out.append(Composition(tuple(items)))
    return tuple(out)

