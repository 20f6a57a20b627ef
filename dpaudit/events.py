"""Privacy events: immutable descriptions of what a mechanism did.

An event says *which* randomised release happened and with which parameters; it does not
say how to account for it. Accountants (:mod:`dpaudit.accounting`) read events and may
answer "not applicable" for events they cannot bound. This mirrors the split of
dp-accounting's ``DpEvent`` taxonomy and its accountants.

Leaves
    :class:`GaussianEvent`, :class:`GaussianSequenceEvent` (many Gaussian releases with
    per-step μ, stored as one array so 10^6 steps cost one object),
    :class:`LaplaceEvent`, :class:`RandomizedResponseEvent`,
    :class:`GaussianReportNoisyMaxEvent`, :class:`LaplaceReportNoisyMaxEvent`,
    :class:`PureDpEvent`, :class:`ApproxDpEvent`, :class:`NoOpEvent`,
    :class:`PoissonSampledEvent` (a Gaussian or pure ε-DP release on a Poisson subsample);
    and in :mod:`dpaudit.events_ml` (built on this module):
    ``SampledWithoutReplacementEvent`` (fixed-size batches, replace-one), ``TreeAggregationEvent``
    (DP-FTRL), ``ZCdpEvent``, ``DiscreteLaplaceEvent``. The accountants handle those without
    importing that module (:func:`loaded_ml_events`: none of its events exists before it is
    imported), so a run that records none of them does not load it.

Combinators
    :class:`ComposedEvent` (sequential, possibly adaptive, composition),
    :class:`SelfComposedEvent` (k-fold), :class:`ParallelEvent` (the branches touch
    disjoint data: the guarantee is the worst branch).

Every event validates its parameters on construction and raises ``ValueError`` naming the
parameter and its valid range.

Example:
    >>> from dpaudit.events import GaussianEvent, LaplaceEvent, ComposedEvent
    >>> e = ComposedEvent((GaussianEvent(sigma=2.0), LaplaceEvent(scale=4.0).repeat(3)))
    >>> e.num_releases
    4
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from types import ModuleType
from typing import ClassVar

import numpy as np

from dpaudit.validation import (
    check_flag,
    check_integer,
    check_nonnegative,
    check_positive,
    check_probability,
)

__all__ = [
    "Neighbouring",
    "PrivacyEvent",
    "NoOpEvent",
    "GaussianEvent",
    "GaussianSequenceEvent",
    "LaplaceEvent",
    "RandomizedResponseEvent",
    "GaussianReportNoisyMaxEvent",
    "LaplaceReportNoisyMaxEvent",
    "PureDpEvent",
    "ApproxDpEvent",
    "NonPrivateEvent",
    "PoissonSampledEvent",
    "ComposedEvent",
    "SelfComposedEvent",
    "ParallelEvent",
    "loaded_ml_events",
]


def loaded_ml_events() -> ModuleType | None:
    """:mod:`dpaudit.events_ml` if it has been imported, else None. No event of its classes can
    exist before it is, so a dispatch over event types skips those cases without importing it
    (and the accounting modules that only they need): a run that records none of them does not
    pay for loading them."""
    return sys.modules.get("dpaudit.events_ml")


class Neighbouring(str, Enum):
    """The neighbouring relation between datasets.

    ``REPLACE``: one record is replaced by another. ``ADD_REMOVE``: one record is added or
    removed. Where an event's guarantee depends on the relation, the event has an explicit
    ``neighbouring`` field.
    """

    REPLACE = "replace"
    ADD_REMOVE = "add-remove"


# ---------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------
# base


@dataclass(frozen=True)
class PrivacyEvent:
    """Base class of all events. Events are immutable, hashable values."""

    poisson_sampleable: ClassVar[bool] = False
    """Whether :class:`PoissonSampledEvent` accepts the event as its inner release (a Gaussian,
    or a pure ε-DP release: its pair of outputs is dominated by binary randomized response)."""

    @property
    def num_releases(self) -> int:
        """How many randomised releases the event stands for."""
        return 1

    def repeat(self, count: int) -> PrivacyEvent:
        """The ``count``-fold sequential self-composition of this event."""
        count = check_integer("count", count)
        return self if count == 1 else SelfComposedEvent(self, count)


@dataclass(frozen=True)
class NoOpEvent(PrivacyEvent):
    """A release that reveals nothing about the data (e.g. a data-independent pre-pull)."""

    @property
    def num_releases(self) -> int:
        return 0


# ---------------------------------------------------------------------------------------
# leaves


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian mechanism ``f(x) + N(0, σ² I)`` with ℓ2-sensitivity ``sensitivity``.

    It is exactly μ-GDP with μ = sensitivity/σ (Dong, Roth & Su 2022, Thm 2.7) under
    whichever neighbouring relation the sensitivity was computed for.
    """

    poisson_sampleable: ClassVar[bool] = True

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def mu(self) -> float:
        return self.sensitivity / self.sigma

    @classmethod
    def from_mu(cls, mu: float) -> GaussianEvent:
        """The Gaussian mechanism with unit sensitivity that is exactly ``mu``-GDP (unit noise and
        sensitivity ``mu`` when 1/μ overflows: μ < 5.6e-309)."""
        mu = check_positive("mu", mu)
        if 1.0 / mu == math.inf:
            return cls(sigma=1.0, sensitivity=mu)
        return cls(sigma=1.0 / mu, sensitivity=1.0)


@dataclass(frozen=True, eq=False)
class GaussianSequenceEvent(PrivacyEvent):
    """A sequence of Gaussian releases with per-step μ_i = s_i/σ_i, stored as one array.

    Semantically identical to ``ComposedEvent(tuple(GaussianEvent.from_mu(m) for m in mus))``
    but costs one object for 10^6 steps. Equality and hashing are by value.
    """

    mus: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        arr = np.array(self.mus, dtype=float, copy=True).reshape(-1)
        if arr.size == 0:
            raise ValueError("mus must contain at least one value")
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError("mus must all be in (0, inf)")
        arr.setflags(write=False)
        object.__setattr__(self, "mus", arr)

    @classmethod
    def from_arrays(
        cls, sensitivities: Iterable[float] | float, sigmas: Iterable[float]
    ) -> GaussianSequenceEvent:
        """μ_i = s_i/σ_i, each quotient rounded *up* (never below the mechanism's μ, as for a
        :class:`GaussianEvent`; an overflowing quotient is refused)."""
        from dpaudit.numerics import div_up_array

        sig = np.asarray(sigmas, dtype=float)
        sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), sig.shape)
        if np.any(~np.isfinite(sig)) or np.any(sig <= 0):
            raise ValueError("sigmas must all be in (0, inf)")
        if np.any(~np.isfinite(sens)) or np.any(sens <= 0):
            raise ValueError("sensitivities must all be in (0, inf)")
        return cls(div_up_array(sens, sig))

    @property
    def num_releases(self) -> int:
        return int(self.mus.size)

    @property
    def mu(self) -> float:
        """The GDP parameter of the whole sequence, sqrt(Σ μ_i²) (scaled by the largest μ_i, so
        that no square under- or overflows)."""
        top = float(self.mus.max())
        r = self.mus / top
        return top * math.sqrt(math.fsum((r * r).tolist()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GaussianSequenceEvent) and np.array_equal(self.mus, other.mus)

    def __hash__(self) -> int:
        return hash((GaussianSequenceEvent, self.mus.size, self.mus.tobytes()))

    def __repr__(self) -> str:
        return f"GaussianSequenceEvent(n={self.mus.size}, mu_total={self.mu:.6g})"


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace mechanism ``f(x) + Lap(scale)`` per coordinate, ℓ1-sensitivity ``sensitivity``.

    Pure ε-DP with ε = sensitivity/scale.
    """

    poisson_sampleable: ClassVar[bool] = True

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    @classmethod
    def from_epsilon(cls, epsilon: float) -> LaplaceEvent:
        """Unit-sensitivity Laplace mechanism with scale 1/ε."""
        return cls(scale=1.0 / check_positive("epsilon", epsilon), sensitivity=1.0)


@dataclass(frozen=True)
class RandomizedResponseEvent(PrivacyEvent):
    """k-ary randomised response: report the true value with probability e^ε/(e^ε + k − 1),
    each other value with probability 1/(e^ε + k − 1). Pure ε-DP (replace relation on one
    respondent's value)."""

    poisson_sampleable: ClassVar[bool] = True

    epsilon: float
    num_categories: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "num_categories", check_integer("num_categories", self.num_categories, 2))


@dataclass(frozen=True)
class GaussianReportNoisyMaxEvent(PrivacyEvent):
    """Report-noisy-max with heterogeneous Gaussian noise.

    Ou, Avella Medina & Cummings (2024), Appendix C, Algorithm 4.

    Releases argmax_i (f_i(x) + X_i), X_i ~ N(0, σ_i²). Neighbouring inputs change at most
    one coordinate f_i, by at most s_i. The release is post-processing of a Gaussian
    mechanism on the changed coordinate, so it is (max_i s_i/σ_i)-GDP.
    """

    sensitivities: tuple[float, ...]
    sigmas: tuple[float, ...]

    def __post_init__(self) -> None:
        s = tuple(float(v) for v in np.atleast_1d(np.asarray(self.sensitivities, dtype=float)))
        g = tuple(float(v) for v in np.atleast_1d(np.asarray(self.sigmas, dtype=float)))
        if len(g) < 2:
            raise ValueError(f"sigmas must have at least 2 entries (one per candidate), got {len(g)}")
        if len(s) == 1:
            s = s * len(g)
        if len(s) != len(g):
            raise ValueError(f"sensitivities must have 1 or {len(g)} entries, got {len(s)}")
        for i, v in enumerate(s):
            check_positive(f"sensitivities[{i}]", v)
        for i, v in enumerate(g):
            check_positive(f"sigmas[{i}]", v)
        object.__setattr__(self, "sensitivities", s)
        object.__setattr__(self, "sigmas", g)

    @property
    def mu(self) -> float:
        """The GDP parameter max_i s_i/σ_i."""
        return max(si / gi for si, gi in zip(self.sensitivities, self.sigmas))


@dataclass(frozen=True)
class LaplaceReportNoisyMaxEvent(PrivacyEvent):
    """Report-noisy-max with i.i.d. Laplace(scale) noise over ``num_candidates`` scores.

    Each score has sensitivity ``sensitivity`` (ℓ∞). With ``monotone=True`` under add/remove
    (all scores move in the same direction, e.g. counting queries) the mechanism is
    (sensitivity/scale)-DP (Dwork & Roth, Claim 3.9). Otherwise (e.g. a replace relation
    that lowers one count and raises another) the guarantee is 2·sensitivity/scale, and the
    factor 2 is approached: for K = 2 counts over an epoch of n rounds of {0,1}-rewards under
    replace, the exact worst-case loss of Lap(1/ε) grows with n towards 2ε (1.882 at ε = 1,
    n = 16; :func:`mechanisms.report_noisy_max.laplace_rnm_worst_case_loss`), which is why
    RNM-FTNL with Lap(1/ε) (Hu et al. (2024), Theorem 8) is 2ε-DP, not ε-DP.
    """

    scale: float
    num_candidates: int
    sensitivity: float = 1.0
    neighbouring: Neighbouring = Neighbouring.REPLACE
    monotone: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "num_candidates", check_integer("num_candidates", self.num_candidates, 2))
        object.__setattr__(self, "neighbouring", Neighbouring(self.neighbouring))
        object.__setattr__(self, "monotone", check_flag("monotone", self.monotone))

    @property
    def epsilon(self) -> float:
        base = self.sensitivity / self.scale
        if self.monotone and self.neighbouring is Neighbouring.ADD_REMOVE:
            return base
        return 2.0 * base


@dataclass(frozen=True)
class PureDpEvent(PrivacyEvent):
    """Any ε-DP release (δ = 0)."""

    poisson_sampleable: ClassVar[bool] = True

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonnegative("epsilon", self.epsilon))


@dataclass(frozen=True)
class ApproxDpEvent(PrivacyEvent):
    """Any (ε, δ)-DP release, known only through that one pair."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_probability("delta", self.delta, low_open=False))


@dataclass(frozen=True)
class NonPrivateEvent(PrivacyEvent):
    """A release with unbounded privacy loss (e.g. a report whose length reveals a private
    value). No method can certify it; recording it keeps the ledger honest."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("reason must be a non-empty string saying what leaks")


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` applied to a Poisson subsample: every record is included independently with
    probability ``sampling_probability`` (q). The inner event is a :class:`GaussianEvent` (the
    sampled Gaussian mechanism of DP-SGD; dp-accounting's ``PoissonSampledDpEvent(q,
    GaussianDpEvent(σ/s))``) or a pure ε-DP release (:class:`LaplaceEvent`,
    :class:`RandomizedResponseEvent`, :class:`PureDpEvent`, ``DiscreteLaplaceEvent``): any event
    whose class sets ``poisson_sampleable``.

    The guarantee is for the add/remove relation (one record added or removed, as in Mironov,
    Talwar & Zhang 2019, Sec. 3, and dp-accounting's ``ADD_OR_REMOVE_ONE``), with the inner
    event's sensitivity (or ε) that of adding or removing one record.

    * A sampled Gaussian is accounted by ``rdp`` (Mironov, Talwar & Zhang 2019) and ``pld``
      (dp-accounting's subsampled-Gaussian PLD); ``basic``, ``advanced`` and ``gdp`` report "not
      applicable" for q < 1.
    * A sampled ε-DP release is log(1 + q(e^ε − 1))-DP (Li, Qardaji & Su 2012; Balle, Barthe &
      Gaboardi 2018, "Privacy amplification by subsampling"), and every method bounds it so;
      ``pld`` uses the sampled pair itself, which is tighter: subsampling a dominating pair of the
      inner release gives a dominating pair of the sampled one (Zhu, Dong & Wang 2022, "Optimal
      accounting of differential privacy via characteristic function", Poisson subsampling).

    With q = 1 it is the inner event, and every method treats it so.

    >>> e = PoissonSampledEvent(0.01, GaussianEvent(sigma=1.0)).repeat(1000)
    >>> e.num_releases, e.event.mu
    (1000, 1.0)
    >>> PoissonSampledEvent(0.5, LaplaceEvent(scale=1.0)).event.epsilon
    1.0
    """

    sampling_probability: float
    event: PrivacyEvent

    def __post_init__(self) -> None:
        q = check_probability("sampling_probability", self.sampling_probability, high_open=False)
        object.__setattr__(self, "sampling_probability", q)
        if not (isinstance(self.event, PrivacyEvent) and self.event.poisson_sampleable):
            raise ValueError(
                "event must be a GaussianEvent or a pure epsilon-DP release (LaplaceEvent, "
                "RandomizedResponseEvent, PureDpEvent, DiscreteLaplaceEvent) to be Poisson-sampled, "
                f"got {type(self.event).__name__}"
            )

    @property
    def _gaussian(self) -> GaussianEvent:
        """The inner Gaussian (a ``ValueError`` for a sampled pure ε-DP release)."""
        inner = self.event
        if not isinstance(inner, GaussianEvent):
            raise ValueError(f"a Poisson-sampled {type(inner).__name__} has no Gaussian parameters")
        return inner

    @property
    def mu(self) -> float:
        """The GDP parameter s/σ of the inner Gaussian (before subsampling)."""
        return self._gaussian.mu

    @property
    def noise_multiplier(self) -> float:
        """σ/s of the inner Gaussian: dp-accounting's ``noise_multiplier``."""
        return self._gaussian.sigma / self._gaussian.sensitivity


# ---------------------------------------------------------------------------------------
# combinators


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Sequential (possibly adaptive) composition of the given events."""

    events: tuple[PrivacyEvent, ...]

    def __post_init__(self) -> None:
        evs = tuple(self.events)
        for i, e in enumerate(evs):
            if not isinstance(e, PrivacyEvent):
                raise ValueError(f"events[{i}] must be a PrivacyEvent, got {type(e).__name__}")
        object.__setattr__(self, "events", evs)

    @property
    def num_releases(self) -> int:
        return sum(e.num_releases for e in self.events)


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``count``-fold sequential composition of ``event`` with itself."""

    event: PrivacyEvent
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        object.__setattr__(self, "count", check_integer("count", self.count))

    @property
    def num_releases(self) -> int:
        return self.count * self.event.num_releases


@dataclass(frozen=True)
class ParallelEvent(PrivacyEvent):
    """The branches run on disjoint parts of the data: each individual is affected by at most
    one branch, so the guarantee is that of the worst branch (parallel composition)."""

    events: tuple[PrivacyEvent, ...]

    def __post_init__(self) -> None:
        evs = tuple(self.events)
        if not evs:
            raise ValueError("events must contain at least one event")
        for i, e in enumerate(evs):
            if not isinstance(e, PrivacyEvent):
                raise ValueError(f"events[{i}] must be a PrivacyEvent, got {type(e).__name__}")
        object.__setattr__(self, "events", evs)

    @property
    def num_releases(self) -> int:
        return sum(e.num_releases for e in self.events)

