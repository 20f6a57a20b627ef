"""Events of private model training (DP-SGD with fixed-size batches, DP-FTRL) and of
dp-accounting's wider taxonomy (zCDP, discrete Laplace).

Each is a frozen, validated dataclass with its neighbouring relation explicit (this module builds
on :mod:`dpaudit.events`, which is near its size limit):

* :class:`SampledWithoutReplacementEvent` — a Gaussian release on a uniformly random batch of
  ``sample_size`` out of ``dataset_size`` records (fixed-size batches, shuffled-free DP-SGD);
  replace-one relation (the dataset size is public), the inner Gaussian's sensitivity being the
  largest change of one *replaced* record (2C for a sum of gradients clipped to norm C).
  Bounded by ``rdp`` (Wang, Balle & Kasiviswanathan 2019, "Subsampled Rényi Differential Privacy
  and Analytical Moments Accountant", Thm 9); the other methods say why not.
* :class:`SampledWithReplacementEvent` — the same on a batch of ``sample_size`` draws with
  replacement (a record may enter C ~ Binomial(m, 1/n) times); replace-one relation. Bounded by
  ``rdp`` through joint convexity over C (a sound but O(q) amplification, see
  :mod:`dpaudit.accounting.with_replacement`); the other methods say why not.
* :class:`TreeAggregationEvent` — one epoch of tree-aggregation DP-FTRL (Kairouz, McMahan, Song,
  Thakkar, Thakurta & Xu 2021, "Practical and Private (Deep) Learning without Sampling or
  Shuffling", App. D): trees over the given numbers of steps, each record in at most one leaf of
  one tree, so it enters at most ⌈log₂(n + 1)⌉ nodes (n the largest tree), each a Gaussian
  release of its contribution with noise σ times its sensitivity: exactly a Gaussian mechanism
  with μ² = ⌈log₂(n + 1)⌉/σ²
  (dp-accounting's ``SingleEpochTreeAggregationDpEvent``), so every method bounds it as those
  Gaussian steps (:meth:`TreeAggregationEvent.gaussian`). The project's tree counters
  (``mechanisms.continual``) are this event with one tree.
* :class:`ZCdpEvent` — any (ξ, ρ)-zCDP release (Bun & Steinke 2016): RDP ρα + ξ at every order,
  bounded by ``rdp``.
* :class:`DiscreteLaplaceEvent` — f(x) + Z with P(Z = z) ∝ e^{−a|z|} on the integers, integer
  ℓ1-sensitivity Δ: pure (aΔ)-DP, bounded as such by every method.
* :class:`MixtureOfGaussiansEvent` — N(0, σ²) on one neighbour against Σ_i p_i N(c_i, σ²) on the
  other (add/remove; Choquette-Choo, Ganesh, Steinke & Thakurta 2023); bounded by ``rdp`` and
  ``pld`` as a mixture of Poisson-subsampled Gaussians (:mod:`dpaudit.accounting.mixtures`,
  :mod:`dpaudit.accounting.pld_mixture`), the other methods say why not.
* :class:`TruncatedSubsampledGaussianEvent` — a Gaussian on a Poisson sample cut down to at most
  ``truncated_batch_size`` records (add/remove); bounded by ``rdp`` and ``pld`` as a mixture of
  two Poisson-subsampled Gaussians (:mod:`dpaudit.accounting.mixtures`), the other methods say why
  not.
* :class:`RepeatAndSelectEvent` — an event run a random number K of times, only the best run
  released (hyperparameter tuning; Papernot & Steinke 2022): K truncated negative binomial
  (``shape`` η ≥ 0; η = 0 logarithmic, η = 1 geometric) or Poisson (η = ∞) of the given mean;
  bounded by ``rdp`` only (Thms 2 and 6 there), the other methods say why not.

>>> e = TreeAggregationEvent(noise_multiplier=2.0, step_counts=(7, 3))  # trees of depth 3 and 2
>>> e.nodes, round(e.mu, 6)
(3, 0.866025)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from dpaudit.events import GaussianEvent, Neighbouring, PrivacyEvent
from dpaudit.validation import check_integer, check_nonnegative, check_number, check_positive

__all__ = ["SampledWithoutReplacementEvent", "SampledWithReplacementEvent", "TreeAggregationEvent",
           "ZCdpEvent", "DiscreteLaplaceEvent", "RepeatAndSelectEvent", "MixtureOfGaussiansEvent",
           "TruncatedSubsampledGaussianEvent"]


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(PrivacyEvent):
    """``event`` (a :class:`~dpaudit.events.GaussianEvent`) applied to a uniformly random subset of
    ``sample_size`` of the ``dataset_size`` records, under the replace-one relation.

    >>> e = SampledWithoutReplacementEvent(60000, 256, GaussianEvent(sigma=1.1, sensitivity=2.0))
    >>> round(e.sampling_fraction, 6), e.neighbouring.value
    (0.004267, 'replace')
    """

    dataset_size: int
    sample_size: int
    event: PrivacyEvent

    def __post_init__(self) -> None:
        n = check_integer("dataset_size", self.dataset_size, 1)
        m = check_integer("sample_size", self.sample_size, 1)
        if m > n:
            raise ValueError(f"sample_size must be in [1, dataset_size={n}], got {m}")
        object.__setattr__(self, "dataset_size", n)
        object.__setattr__(self, "sample_size", m)
        if not isinstance(self.event, GaussianEvent):
            raise ValueError("event must be a GaussianEvent (the only mechanism sampled without replacement "
                             f"supported), got {type(self.event).__name__}")

    @property
    def neighbouring(self) -> Neighbouring:
        """Replace one record (the dataset size is public)."""
        return Neighbouring.REPLACE

    @property
    def sampling_fraction(self) -> float:
        """γ = sample_size/dataset_size."""
        return self.sample_size / self.dataset_size

    @property
    def mu(self) -> float:
        """The GDP parameter s/σ of the inner Gaussian (before subsampling)."""
        inner = self.event
        assert isinstance(inner, GaussianEvent), "checked by __post_init__"
        return inner.mu


@dataclass(frozen=True)
class SampledWithReplacementEvent(PrivacyEvent):
    """``event`` (a :class:`~dpaudit.events.GaussianEvent`, its sensitivity the largest change of
    one *replaced* batch entry) applied to a batch of ``sample_size`` records drawn uniformly
    *with* replacement from the ``dataset_size`` records, under the replace-one relation; a record
    drawn c times moves the release by up to c times the sensitivity. dp-accounting's
    ``SampledWithReplacementDpEvent(source_dataset_size, sample_size, event)``.

    >>> SampledWithReplacementEvent(1000, 10, GaussianEvent(sigma=2.0)).neighbouring.value
    'replace'
    """

    dataset_size: int
    sample_size: int
    event: PrivacyEvent

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset_size", check_integer("dataset_size", self.dataset_size, 1))
        object.__setattr__(self, "sample_size", check_integer("sample_size", self.sample_size, 1))
        if not isinstance(self.event, GaussianEvent):
            raise ValueError("event must be a GaussianEvent (the only mechanism sampled with replacement "
                             f"supported), got {type(self.event).__name__}")

    @property
    def neighbouring(self) -> Neighbouring:
        """Replace one record (the dataset size is public)."""
        return Neighbouring.REPLACE


def _depth(steps: int) -> int:
    """⌈log₂(n + 1)⌉: the nodes of a binary tree over n leaves that one leaf's value enters."""
    return (steps).bit_length()


@dataclass(frozen=True)
class TreeAggregationEvent(PrivacyEvent):
    """One epoch of tree-aggregation DP-FTRL: Gaussian noise of standard deviation
    ``noise_multiplier`` times the sensitivity (one record's largest contribution, the clipping
    norm) on every node, one tree per entry of ``step_counts`` (its number of leaves), each record
    in at most one leaf across all trees (to let a record recur once per tree, compose one event
    per tree). Add/remove relation on a record.
    """

    noise_multiplier: float
    step_counts: tuple[int, ...]

    def __post_init__(self) -> None:
        nm = check_positive("noise_multiplier", self.noise_multiplier)
        object.__setattr__(self, "noise_multiplier", nm)
        counts = self.step_counts if isinstance(self.step_counts, (tuple, list)) else (self.step_counts,)
        if not counts:
            raise ValueError("step_counts must contain at least one count")
        object.__setattr__(self, "step_counts",
                           tuple(check_integer(f"step_counts[{i}]", c, 0) for i, c in enumerate(counts)))

    @property
    def neighbouring(self) -> Neighbouring:
        return Neighbouring.ADD_REMOVE

    @property
    def nodes(self) -> int:
        """⌈log₂(n + 1)⌉ for the largest tree: the most Gaussian nodes one record's contribution
        enters."""
        return max(_depth(c) for c in self.step_counts)

    @property
    def mu(self) -> float:
        """The GDP parameter of the whole epoch: sqrt(nodes)/σ (exact: the nodes a record touches
        are independent Gaussian releases of its contribution)."""
        return math.sqrt(self.nodes) / self.noise_multiplier

    def gaussian(self) -> PrivacyEvent:
        """The equivalent Gaussian releases: ``nodes`` steps of μ = 1/σ (a no-op if there are
        none)."""
        from dpaudit.events import NoOpEvent

        one = GaussianEvent(sigma=self.noise_multiplier)
        return one.repeat(self.nodes) if self.nodes else NoOpEvent()


@dataclass(frozen=True)
class ZCdpEvent(PrivacyEvent):
    """Any (ξ, ρ)-zCDP release: its Rényi divergence of every order α > 1 is at most ξ + ρα
    (Bun & Steinke 2016, Def. 1.1). dp-accounting's ``ZCDpEvent(rho, xi)``."""

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_nonnegative("rho", self.rho))
        object.__setattr__(self, "xi", check_nonnegative("xi", self.xi))


@dataclass(frozen=True)
class DiscreteLaplaceEvent(PrivacyEvent):
    """f(x) + Z, P(Z = z) ∝ e^{−parameter·|z|} on the integers, integer ℓ1-sensitivity
    ``sensitivity``: pure ε-DP with ε = parameter·sensitivity (either relation, as the sensitivity
    is computed). dp-accounting's ``DiscreteLaplaceDpEvent(parameter, sensitivity)``."""

    poisson_sampleable: ClassVar[bool] = True

    parameter: float
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameter", check_positive("parameter", self.parameter))
        object.__setattr__(self, "sensitivity", check_integer("sensitivity", self.sensitivity, 1))

    @property
    def epsilon(self) -> float:
        return self.parameter * self.sensitivity


@dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    """``event`` run K times on the same data, only the best run (its output and score) released,
    K random: truncated negative binomial with ``shape`` η ∈ [0, ∞) (P(K = k) ∝
    binom(k + η − 1, k)(1 − γ)^k for k ≥ 1; η = 0 the logarithmic, η = 1 the geometric
    distribution), or Poisson for η = ∞ (K = 0 releasing nothing), γ fixed by E[K] = ``mean``
    (Papernot & Steinke 2022, "Hyperparameter Tuning with Renyi Differential Privacy").
    dp-accounting's ``RepeatAndSelectDpEvent(event, mean, shape)``; the neighbouring relation is
    the inner event's.

    >>> e = RepeatAndSelectEvent(GaussianEvent(sigma=4.0), mean=10.0, shape=1.0)
    >>> e.mean, e.shape, e.is_poisson
    (10.0, 1.0, False)
    """

    event: PrivacyEvent
    mean: float
    shape: float

    def __post_init__(self) -> None:
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        mean = check_number("mean", self.mean)
        if not 1.0 <= mean < math.inf:
            raise ValueError(f"mean must be in [1, inf) (the mean number of runs), got {mean!r}")
        shape = check_number("shape", self.shape)
        if not shape >= 0.0:
            raise ValueError(f"shape must be in [0, inf] (inf: Poisson), got {shape!r}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "shape", shape + 0.0)

    @property
    def neighbouring(self) -> Neighbouring:
        """The inner event's relation (add/remove if it does not say)."""
        return getattr(self.event, "neighbouring", Neighbouring.ADD_REMOVE)

    @property
    def is_poisson(self) -> bool:
        """K Poisson (shape = ∞) rather than truncated negative binomial."""
        return math.isinf(self.shape)


@dataclass(frozen=True)
class MixtureOfGaussiansEvent(PrivacyEvent):
    """A release distributed as N(0, σ²) on one dataset and as the mixture Σ_i p_i N(c_i, σ²) on
    its neighbour with one more record (add/remove relation, both orders), σ =
    ``standard_deviation``, c_i ≥ 0 = ``sensitivities``, p_i = ``sampling_probs`` (summing to 1
    within a relative 1e-9, as dp-accounting checks with ``math.isclose``; the mixture uses them
    normalised). dp-accounting's ``MixtureOfGaussiansDpEvent`` (Choquette-Choo, Ganesh, Steinke &
    Thakurta 2023, "Privacy Amplification for Matrix Mechanisms"; a vector mixture is dominated
    by the one of the norms, their Cor. 4.7).

    >>> MixtureOfGaussiansEvent(1.0, (0.0, 1.0), (0.9, 0.1)).neighbouring.value
    'add-remove'
    """

    standard_deviation: float
    sensitivities: tuple[float, ...]
    sampling_probs: tuple[float, ...]

    def __post_init__(self) -> None:
        sd = check_positive("standard_deviation", self.standard_deviation)
        object.__setattr__(self, "standard_deviation", sd)
        sens = tuple(check_number(f"sensitivities[{i}]", c)
                     for i, c in enumerate(_as_tuple(self.sensitivities)))
        probs = tuple(check_number(f"sampling_probs[{i}]", p)
                      for i, p in enumerate(_as_tuple(self.sampling_probs)))
        if not sens or len(sens) != len(probs):
            raise ValueError("sensitivities and sampling_probs must be non-empty and of the same length, got "
                             f"{len(sens)} and {len(probs)}")
        for i, (c, p) in enumerate(zip(sens, probs)):
            if not 0.0 <= c < math.inf:
                raise ValueError(f"sensitivities[{i}] must be in [0, inf), got {c!r}")
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"sampling_probs[{i}] must be in [0, 1], got {p!r}")
        if not math.isclose(math.fsum(probs), 1.0, rel_tol=1e-9):
            raise ValueError(f"sampling_probs must sum to 1 (within 1e-9), got {math.fsum(probs)!r}")
        object.__setattr__(self, "sensitivities", tuple(c + 0.0 for c in sens))
        object.__setattr__(self, "sampling_probs", probs)

    @property
    def neighbouring(self) -> Neighbouring:
        return Neighbouring.ADD_REMOVE


def _as_tuple(values: object) -> tuple:
    """A sequence's values as a tuple (a scalar as a 1-tuple)."""
    if isinstance(values, Iterable) and not isinstance(values, str):
        return tuple(values)
    return (values,)


@dataclass(frozen=True)
class TruncatedSubsampledGaussianEvent(PrivacyEvent):
    """A Gaussian of standard deviation ``noise_multiplier`` (σ, sensitivity 1: the sum of
    gradients clipped to norm 1) on a truncated Poisson sample: each of the ``dataset_size`` (n)
    records is sampled with probability ``sampling_probability`` (q), and a sample larger than
    ``truncated_batch_size`` (B) is cut to a uniformly random subset of B records. Add/remove
    relation, n counting the records of the larger neighbour (the others are n − 1, as in
    dp-accounting's accounting of the event). dp-accounting's
    ``TruncatedSubsampledGaussianDpEvent(dataset_size, sampling_probability,
    truncated_batch_size, noise_multiplier)`` (arXiv:2508.15089).

    >>> e = TruncatedSubsampledGaussianEvent(60000, 0.004, 300, 1.1)
    >>> e.neighbouring.value, e.truncated_batch_size
    ('add-remove', 300)
    """

    dataset_size: int
    sampling_probability: float
    truncated_batch_size: int
    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset_size", check_integer("dataset_size", self.dataset_size, 1))
        q = check_number("sampling_probability", self.sampling_probability)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"sampling_probability must be in (0, 1], got {q!r}")
        object.__setattr__(self, "sampling_probability", q)
        object.__setattr__(self, "truncated_batch_size",
                           check_integer("truncated_batch_size", self.truncated_batch_size, 1))
        nm = check_positive("noise_multiplier", self.noise_multiplier)
        object.__setattr__(self, "noise_multiplier", nm)

    @property
    def neighbouring(self) -> Neighbouring:
        """Add or remove one record."""
        return Neighbouring.ADD_REMOVE
