"""Conversions between the toolkit's events and dp-accounting's ``DpEvent`` s, both ways.

:func:`from_dp_accounting` turns a ``dp_accounting.DpEvent`` into a
:class:`~dpaudit.events.PrivacyEvent`; :func:`to_dp_accounting` turns an event into a ``DpEvent``
where dp-accounting has an equivalent. Anything without one is refused with a ``ValueError``
that names the type ("... is not supported: UnsupportedDpEvent").

=====================================================  ==============================================
dp-accounting                                          toolkit
=====================================================  ==============================================
``NoOpDpEvent()``                                      :class:`~dpaudit.events.NoOpEvent`
``NonPrivateDpEvent()``                                :class:`~dpaudit.events.NonPrivateEvent`
``GaussianDpEvent(σ/s)``                               ``GaussianEvent(sigma=σ/s, sensitivity=1)``
``LaplaceDpEvent(b/s)``                                ``LaplaceEvent(scale=b/s, sensitivity=1)``
``RandomizedResponseDpEvent(p, k)``                    ``RandomizedResponseEvent(ε, k)``,
                                                       ε = log(1 + k(1 − p)/p)
``ComposedDpEvent([...])``                             :class:`~dpaudit.events.ComposedEvent`
``SelfComposedDpEvent(e, n)``                          :class:`~dpaudit.events.SelfComposedEvent`
``PoissonSampledDpEvent(q, GaussianDpEvent(σ/s))``     :class:`~dpaudit.events.PoissonSampledEvent`
``PoissonSampledDpEvent(q, LaplaceDpEvent(b/s))``      ``PoissonSampledEvent(q, LaplaceEvent(…))``
``PoissonSampledDpEvent(q, DiscreteLaplaceDpEvent…)``  ``PoissonSampledEvent(q, DiscreteLaplaceEvent…)``
``SampledWithoutReplacementDpEvent(n, m, Gaussian…)``  ``SampledWithoutReplacementEvent(n, m, Gaussian…)``
``SampledWithReplacementDpEvent(n, m, Gaussian…)``     ``SampledWithReplacementEvent(n, m, Gaussian…)``
``SingleEpochTreeAggregationDpEvent(σ, counts)``       :class:`~dpaudit.events_ml.TreeAggregationEvent`
``ZCDpEvent(ρ, ξ)``                                    :class:`~dpaudit.events_ml.ZCdpEvent`
``DiscreteLaplaceDpEvent(a, Δ)``                       :class:`~dpaudit.events_ml.DiscreteLaplaceEvent`
``RepeatAndSelectDpEvent(e, mean, shape)``             :class:`~dpaudit.events_ml.RepeatAndSelectEvent`
``MixtureOfGaussiansDpEvent(σ, c, p)``                 :class:`~dpaudit.events_ml.MixtureOfGaussiansEvent`
``TruncatedSubsampledGaussianDpEvent(n, q, B, σ)``     ``TruncatedSubsampledGaussianEvent(n, q, B, σ)``
=====================================================  ==============================================

Repeat-and-select keeps its inner event's neighbouring relation (:func:`check_relation` looks
inside it); a no-op inner event imports as a no-op (the number of runs is data-independent), a
non-private one as non-private. Sampling with replacement is replace-one, like sampling without;
a mixture of Gaussians add/remove (or ``REPLACE_SPECIAL``), as dp-accounting's PLD accountant
requires; a truncated Poisson sample add/remove only (a ``REPLACE_SPECIAL`` null record would
still take a place in the cut batch, a pair the toolkit's event does not cover).

Randomized response: dp-accounting's mechanism keeps the input with probability 1 − p and
otherwise outputs a uniform bucket, so it reports the truth with probability 1 − p + p/k and each
other bucket with p/k; the toolkit's reports the truth with e^ε/(e^ε + k − 1) and each other
bucket with 1/(e^ε + k − 1). They are the same mechanism when e^ε = (1 − p + p/k)/(p/k) =
1 + k(1 − p)/p, i.e. p = k/(e^ε + k − 1) (dp-accounting's ``from_randomized_response`` docstring;
the same relation is used by :mod:`dpaudit.accounting.pld`). dp-accounting accounts it under the
replace relations (``REPLACE_ONE``), as the toolkit does; Gaussian, Laplace and the Poisson-sampled
Gaussian are accounted under ``ADD_OR_REMOVE_ONE`` (the default), as the toolkit's sensitivities
and :class:`~dpaudit.events.PoissonSampledEvent` are meant; a batch sampled without replacement
under ``REPLACE_ONE`` (the only relation dp-accounting accounts it under). The relation is part of
each toolkit event's meaning; :func:`check_relation` refuses a dp-accounting event tree meant for
another relation than the one its accountant uses.

Soundness of the rounding. A parameter computed by a division or a logarithm is rounded so that
the converted event is never *more* private than the original: on import ε is rounded up; on
export the noise multipliers σ/s, b/s and the noise parameter p are rounded down. Parameters
that need no arithmetic (unit sensitivity, ``noise_multiplier`` ↔ ``sigma``/``scale``, q,
counts) round-trip exactly. Degenerate dp-accounting parameters follow dp-accounting's own
accountants: noise multiplier 0 or p = 0 → :class:`~dpaudit.events.NonPrivateEvent`; p = 1,
k = 1, q = 0 or count 0 → :class:`~dpaudit.events.NoOpEvent`.

Not exported (no dp-accounting equivalent): ``PureDpEvent`` and ``ApproxDpEvent`` with ε > 0
(dp-accounting 0.6 has no (ε, δ) event; ε = δ = 0 exports as ``NoOpDpEvent``),
``ParallelEvent``, the report-noisy-max events. A ``GaussianSequenceEvent`` exports as a
``ComposedDpEvent`` of ``GaussianDpEvent`` s (noise multiplier 1/μ_i, rounded down).

dp-accounting is imported inside the functions only (the core imports fast without it).

Example:
    >>> import dp_accounting as dpa
    >>> d = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 1000)
    >>> e = from_dp_accounting(d)
    >>> e
    SelfComposedEvent(event=PoissonSampledEvent(sampling_probability=0.01, event=GaussianEvent(sigma=1.0, \
sensitivity=1.0)), count=1000)
    >>> to_dp_accounting(e) == d
    True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)
from dpaudit.events_ml import (
    DiscreteLaplaceEvent,
    MixtureOfGaussiansEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    TreeAggregationEvent,
    TruncatedSubsampledGaussianEvent,
    ZCdpEvent,
)
from dpaudit.numerics import div_down
from dpaudit.validation import check_number

if TYPE_CHECKING:  # pragma: no cover
    import dp_accounting

__all__ = ["from_dp_accounting", "to_dp_accounting", "rr_epsilon", "rr_noise_parameter", "check_relation"]


def rr_epsilon(noise_parameter: float, num_buckets: int) -> float:
    """ε = log(1 + k(1 − p)/p) of dp-accounting's k-ary randomized response with noise parameter
    p ∈ (0, 1), rounded *up* (the quotient exactly as a rational, then rounded up; log1p's error
    of at most one ulp covered by two more).

    >>> rr_epsilon(0.5, 2), rr_epsilon(2 / (math.e + 1), 2) >= 1.0
    (1.0986122886681102, True)
    """
    x_exact = Fraction(num_buckets) * (1 - Fraction(noise_parameter)) / Fraction(noise_parameter)
    x = float(x_exact) if x_exact < Fraction(2) ** 1023 else math.inf
    if math.isinf(x):
        eps = math.log(x_exact.numerator) - math.log(x_exact.denominator)
    else:
        if Fraction(x) < x_exact:
            x = math.nextafter(x, math.inf)
        eps = math.log1p(x)
    eps = eps + abs(eps) * 4.5e-16
    return math.nextafter(eps, math.inf)


def rr_noise_parameter(epsilon: float, num_buckets: int) -> float:
    """p = k/(k + e^ε − 1) of the toolkit's k-ary randomized response at ε, rounded *down* (the
    exported mechanism is then at least as revealing). ``ValueError`` when p underflows (ε above
    about 745: dp-accounting would read p = 0 as non-private).

    >>> rr_noise_parameter(math.log(3.0), 2) <= 0.5, rr_noise_parameter(1e-300, 2) < 1.0
    (True, True)
    """
    with_margin = math.expm1(epsilon) * (1.0 + 4.5e-16) if epsilon < 709.0 else math.inf
    den = math.nextafter(num_buckets + math.nextafter(with_margin, math.inf), math.inf)
    p = div_down(float(num_buckets), den) if math.isfinite(den) else 0.0
    if math.isfinite(den) and p > 0:
        return p
    log_p = math.log(num_buckets) - epsilon - 1e-12 * epsilon  # k e^{-ε}/(1 + (k−1)e^{-ε}) ≤ k e^{-ε}
    p = math.exp(log_p) * (1.0 - 1e-15) if log_p > -745.0 else 0.0
    if not p > 0:
        raise ValueError(
            f"epsilon must be at most about 745 to export randomized response to dp-accounting "
            f"(its noise parameter underflows), got {epsilon!r}"
        )
    return p


def _noise_multiplier(name: str, num: float, den: float) -> float:
    nm = num if den == 1.0 else div_down(num, den)
    if not nm > 0:
        raise ValueError(f"{name} underflows to 0 (dp-accounting would read it as non-private)")
    return nm


def from_dp_accounting(event: dp_accounting.DpEvent) -> PrivacyEvent:
    """The toolkit event for a dp-accounting ``DpEvent`` (see the module docstring for the map).

    Raises ``ValueError`` naming the type for an event without a toolkit equivalent.

    >>> import dp_accounting as dpa
    >>> from_dp_accounting(dpa.ComposedDpEvent([dpa.GaussianDpEvent(2.0), dpa.LaplaceDpEvent(0.5)])).events
    (GaussianEvent(sigma=2.0, sensitivity=1.0), LaplaceEvent(scale=0.5, sensitivity=1.0))
    >>> from_dp_accounting(dpa.UnsupportedDpEvent())
    Traceback (most recent call last):
    ...
    ValueError: dp-accounting event is not supported: UnsupportedDpEvent
    """
    import dp_accounting as dpa

    if isinstance(event, dpa.NoOpDpEvent):
        return NoOpEvent()
    if isinstance(event, dpa.NonPrivateDpEvent):
        return NonPrivateEvent("a dp-accounting NonPrivateDpEvent")
    if isinstance(event, dpa.GaussianDpEvent):
        nm = check_number("noise_multiplier", event.noise_multiplier)
        if nm == 0:
            return NonPrivateEvent("a dp-accounting GaussianDpEvent with noise_multiplier 0")
        return GaussianEvent(sigma=nm, sensitivity=1.0)
    if isinstance(event, dpa.LaplaceDpEvent):
        nm = check_number("noise_multiplier", event.noise_multiplier)
        if nm == 0:
            return NonPrivateEvent("a dp-accounting LaplaceDpEvent with noise_multiplier 0")
        return LaplaceEvent(scale=nm, sensitivity=1.0)
    if isinstance(event, dpa.RandomizedResponseDpEvent):
        p = check_number("noise_parameter", event.noise_parameter)
        if not 0 <= p <= 1:
            raise ValueError(f"noise_parameter must be in [0, 1], got {p!r}")
        k = event.num_buckets
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"num_buckets must be an integer >= 1, got {k!r}")
        if k == 1 or p == 1:
            return NoOpEvent()
        if p == 0:
            return NonPrivateEvent("a dp-accounting RandomizedResponseDpEvent with noise_parameter 0")
        return RandomizedResponseEvent(rr_epsilon(p, k), k)
    if isinstance(event, dpa.ComposedDpEvent):
        return ComposedEvent(tuple(from_dp_accounting(e) for e in event.events))
    if isinstance(event, dpa.SelfComposedDpEvent):
        count = event.count
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer >= 0, got {count!r}")
        inner = from_dp_accounting(event.event)
        return NoOpEvent() if count == 0 else SelfComposedEvent(inner, count)
    if isinstance(event, dpa.PoissonSampledDpEvent):
        q = check_number("sampling_probability", event.sampling_probability)
        if not 0 <= q <= 1:
            raise ValueError(f"sampling_probability must be in [0, 1], got {q!r}")
        sampleable = (dpa.GaussianDpEvent, dpa.LaplaceDpEvent, dpa.dp_event.DiscreteLaplaceDpEvent)
        if not isinstance(event.event, sampleable):
            raise ValueError(
                "dp-accounting event is not supported: PoissonSampledDpEvent of "
                f"{type(event.event).__name__} (only a Poisson-sampled GaussianDpEvent, LaplaceDpEvent "
                "or DiscreteLaplaceDpEvent is)"
            )
        if q == 0:
            return NoOpEvent()
        inner = from_dp_accounting(event.event)
        if isinstance(inner, (NonPrivateEvent, NoOpEvent)):
            return inner if isinstance(inner, NoOpEvent) else NonPrivateEvent(
                f"a dp-accounting PoissonSampledDpEvent of a noiseless {type(event.event).__name__}")
        return PoissonSampledEvent(q, inner)
    out = _from_ml_event(event)
    if out is not None:
        return out
    if isinstance(event, dpa.DpEvent):
        raise ValueError(f"dp-accounting event is not supported: {type(event).__name__}")
    raise ValueError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")


def _fixed_batch(event: Any, ours: type) -> PrivacyEvent:
    """A Gaussian on a fixed-size batch (drawn without or with replacement) as ``ours``; a batch of
    0 records is a no-op, a noiseless Gaussian non-private."""
    from dp_accounting import dp_event as de

    name = type(event).__name__
    if not isinstance(event.event, de.GaussianDpEvent):
        raise ValueError(f"dp-accounting event is not supported: {name} of "
                         f"{type(event.event).__name__} (only of a GaussianDpEvent)")
    if event.sample_size == 0:
        return NoOpEvent()
    inner = from_dp_accounting(event.event)
    if isinstance(inner, NonPrivateEvent):
        return inner
    return ours(event.source_dataset_size, event.sample_size, inner)


def _from_ml_event(event: dp_accounting.DpEvent) -> PrivacyEvent | None:
    """The events of :mod:`dpaudit.events_ml` from dp-accounting's (None for any other type)."""
    from dp_accounting import dp_event as de

    for theirs, ours in ((de.SampledWithoutReplacementDpEvent, SampledWithoutReplacementEvent),
                         (de.SampledWithReplacementDpEvent, SampledWithReplacementEvent)):
        if isinstance(event, theirs):
            return _fixed_batch(event, ours)
    if isinstance(event, de.SingleEpochTreeAggregationDpEvent):
        nm = check_number("noise_multiplier", event.noise_multiplier)
        if nm == 0:
            return NonPrivateEvent("a dp-accounting tree aggregation with noise_multiplier 0")
        counts = event.step_counts if isinstance(event.step_counts, (list, tuple)) else [event.step_counts]
        return TreeAggregationEvent(nm, tuple(counts))
    if isinstance(event, de.ZCDpEvent):
        return ZCdpEvent(check_number("rho", event.rho), check_number("xi", event.xi))
    if isinstance(event, de.DiscreteLaplaceDpEvent):
        a = check_number("noise_parameter", event.noise_parameter)
        if a == 0:
            return NonPrivateEvent("a dp-accounting DiscreteLaplaceDpEvent with noise_parameter 0")
        return DiscreteLaplaceEvent(a, event.sensitivity)
    if isinstance(event, de.MixtureOfGaussiansDpEvent):
        sd = check_number("standard_deviation", event.standard_deviation)
        sens, probs = tuple(event.sensitivities), tuple(event.sampling_probs)
        if all(c == 0 for c in sens):
            return NoOpEvent()
        if sd == 0:
            return NonPrivateEvent("a dp-accounting MixtureOfGaussiansDpEvent with standard_deviation 0")
        return MixtureOfGaussiansEvent(sd, sens, probs)
    if isinstance(event, de.TruncatedSubsampledGaussianDpEvent):
        return _from_truncated(event)
    if isinstance(event, de.RepeatAndSelectDpEvent):
        inner = from_dp_accounting(event.event)
        if isinstance(inner, (NoOpEvent, NonPrivateEvent)):
            return inner
        mean, shape = check_number("mean", event.mean), check_number("shape", event.shape)
        return RepeatAndSelectEvent(inner, mean, shape)
    return None


def _from_truncated(event: dp_accounting.DpEvent) -> PrivacyEvent:
    """A ``TruncatedSubsampledGaussianDpEvent``, its degenerate parameters as dp-accounting's PLD
    accountant treats them (q, B or n = 0 releases nothing; noise 0 is not private)."""
    n, b = event.dataset_size, event.truncated_batch_size
    q = check_number("sampling_probability", event.sampling_probability)
    nm = check_number("noise_multiplier", event.noise_multiplier)
    if q == 0 or b == 0 or n == 0:
        return NoOpEvent()
    if nm == 0:
        return NonPrivateEvent("a dp-accounting TruncatedSubsampledGaussianDpEvent with noise_multiplier 0")
    return TruncatedSubsampledGaussianEvent(n, q, b, nm)


_RELATIONS = {"SampledWithoutReplacementDpEvent": ("REPLACE_ONE",),
              "SampledWithReplacementDpEvent": ("REPLACE_ONE",),
              "MixtureOfGaussiansDpEvent": ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"),
              "TruncatedSubsampledGaussianDpEvent": ("ADD_OR_REMOVE_ONE",),
              "PoissonSampledDpEvent": ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"),
              "SingleEpochTreeAggregationDpEvent": ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL")}


def check_relation(event: dp_accounting.DpEvent, neighboring_relation: object) -> None:
    """``ValueError`` if ``event`` contains a dp-accounting event whose toolkit counterpart is
    defined for a different neighbouring relation than ``neighboring_relation`` (a
    ``dp_accounting.NeighboringRelation``): a Poisson-sampled event or tree aggregation is
    add/remove (or dp-accounting's ``REPLACE_SPECIAL``: a record replaced by one contributing
    zero, the same sensitivity), a batch sampled without or with replacement replace-one.

    >>> import dp_accounting as dpa
    >>> wor = dpa.SampledWithoutReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0))
    >>> check_relation(wor, dpa.NeighboringRelation.REPLACE_ONE)
    >>> check_relation(wor, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    Traceback (most recent call last):
    ...
    ValueError: SampledWithoutReplacementDpEvent is accounted under REPLACE_ONE, not ADD_OR_REMOVE_ONE
    """
    name = type(event).__name__
    wanted = _RELATIONS.get(name)
    given = getattr(neighboring_relation, "name", str(neighboring_relation))
    if wanted is not None and given not in wanted:
        raise ValueError(f"{name} is accounted under {' or '.join(wanted)}, not {given}")
    for child in getattr(event, "events", None) or ([event.event] if hasattr(event, "event") else []):
        check_relation(child, neighboring_relation)


def to_dp_accounting(event: PrivacyEvent) -> dp_accounting.DpEvent:
    """The dp-accounting ``DpEvent`` for a toolkit event (see the module docstring for the map).

    Raises ``ValueError`` naming the type for an event without a dp-accounting equivalent.

    >>> to_dp_accounting(RandomizedResponseEvent(math.log(3.0), 2)).num_buckets
    2
    >>> to_dp_accounting(PureDpEvent(1.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: event is not supported by dp-accounting (no equivalent DpEvent): PureDpEvent...
    """
    import dp_accounting as dpa

    if isinstance(event, NoOpEvent):
        return dpa.NoOpDpEvent()
    if isinstance(event, NonPrivateEvent):
        return dpa.NonPrivateDpEvent()
    if isinstance(event, GaussianEvent):
        return dpa.GaussianDpEvent(_noise_multiplier("sigma/sensitivity", event.sigma, event.sensitivity))
    if isinstance(event, GaussianSequenceEvent):
        nms = [_noise_multiplier("1/mu", 1.0, m) for m in event.mus.tolist()]
        return dpa.ComposedDpEvent([dpa.GaussianDpEvent(nm) for nm in nms])
    if isinstance(event, LaplaceEvent):
        return dpa.LaplaceDpEvent(_noise_multiplier("scale/sensitivity", event.scale, event.sensitivity))
    if isinstance(event, RandomizedResponseEvent):
        k = event.num_categories
        return dpa.RandomizedResponseDpEvent(rr_noise_parameter(event.epsilon, k), k)
    if isinstance(event, ComposedEvent):
        return dpa.ComposedDpEvent([to_dp_accounting(e) for e in event.events])
    if isinstance(event, SelfComposedEvent):
        return dpa.SelfComposedDpEvent(to_dp_accounting(event.event), event.count)
    if isinstance(event, PoissonSampledEvent):
        return dpa.PoissonSampledDpEvent(event.sampling_probability, to_dp_accounting(event.event))
    if isinstance(event, SampledWithoutReplacementEvent):
        return dpa.SampledWithoutReplacementDpEvent(event.dataset_size, event.sample_size,
                                                    to_dp_accounting(event.event))
    if isinstance(event, SampledWithReplacementEvent):
        return dpa.SampledWithReplacementDpEvent(event.dataset_size, event.sample_size,
                                                 to_dp_accounting(event.event))
    if isinstance(event, TreeAggregationEvent):
        counts = list(event.step_counts)
        return dpa.SingleEpochTreeAggregationDpEvent(event.noise_multiplier,
                                                     counts[0] if len(counts) == 1 else counts)
    if isinstance(event, ZCdpEvent):
        return dpa.ZCDpEvent(event.rho, event.xi)
    if isinstance(event, DiscreteLaplaceEvent):
        from dp_accounting import dp_event as de

        return de.DiscreteLaplaceDpEvent(event.parameter, event.sensitivity)
    if isinstance(event, MixtureOfGaussiansEvent):
        from dp_accounting import dp_event as de

        return de.MixtureOfGaussiansDpEvent(event.standard_deviation, list(event.sensitivities),
                                            list(event.sampling_probs))
    if isinstance(event, TruncatedSubsampledGaussianEvent):
        return dpa.TruncatedSubsampledGaussianDpEvent(event.dataset_size, event.sampling_probability,
                                                      event.truncated_batch_size, event.noise_multiplier)
    if isinstance(event, RepeatAndSelectEvent):
        from dp_accounting import dp_event as de

        return de.RepeatAndSelectDpEvent(to_dp_accounting(event.event), event.mean, event.shape)
    if isinstance(event, (PureDpEvent, ApproxDpEvent)):
        if event.epsilon == 0 and getattr(event, "delta", 0.0) == 0:
            return dpa.NoOpDpEvent()
        raise ValueError("event is not supported by dp-accounting (no equivalent DpEvent): "
                         f"{type(event).__name__} with epsilon > 0 or delta > 0")
    if isinstance(event, PrivacyEvent):
        raise ValueError(
            f"event is not supported by dp-accounting (no equivalent DpEvent): {type(event).__name__}")
    raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")
