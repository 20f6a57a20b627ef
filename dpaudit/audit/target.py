"""What an audit audits: the :class:`AuditTarget` record and the protocols it is built from.

A target bundles a mechanism (a :class:`Sampler`), a neighbour pair
(:class:`~dpaudit.audit.neighbours.NeighbourPair`), a scalar statistic of the outputs, the
claim under audit (:class:`~dpaudit.audit.report.Certified`) and the δ at which ε is audited.
Mechanism-specific targets are built by :class:`TargetFactory` callables that live beside
their mechanisms (``mechanisms.auditing.targets``); the core never imports them.

The contract every factory's target honours (tested once for all of them in
``tests/test_audit_target_contract.py``):

1. the mechanism draws all its randomness from the ``numpy.random.Generator`` it is given
   (anything else — a seed, ``None``, the global state — is rejected), so a target is
   reproducible from its seed;
2. the statistic maps ``n`` outputs to ``n`` floats, never NaN, infinite only where the
   declared ``support`` contains ``±inf`` (disjoint output supports);
3. a declared ``support`` contains every value the statistic takes;
4. audited against its own certificate the target is ``consistent`` (a small-scale audit).

Example (a μ = 1 Gaussian mechanism written inline, audited against 1-GDP):
    >>> import numpy as np
    >>> from dpaudit.audit.claims import claim_mu
    >>> from dpaudit.audit.neighbours import scalar_pair
    >>> class Shift:   # x + N(0, 1)
    ...     def sample(self, x, rng, size):
    ...         return x + rng.standard_normal(size)
    ...     def privacy_loss(self, o, x, x_prime):   # log N(o; x, 1) − log N(o; x′, 1)
    ...         return (x_prime - x) * (x + x_prime - 2 * np.asarray(o)) / 2
    >>> pair = scalar_pair(1.0)
    >>> t = AuditTarget("shift", Shift(), pair, choose_statistic(Shift(), pair), claim_mu(1.0), 1e-5)
    >>> isinstance(t.mechanism, Sampler), describe_statistic(t.statistic)
    (True, 'privacy loss of Shift')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpaudit.audit.neighbours import NeighbourPair
from dpaudit.audit.report import Certified
from dpaudit.audit.statistics import Identity, Indicator, PrivacyLoss
from dpaudit.validation import check_probability

__all__ = [
    "Sampler",
    "TargetFactory",
    "Candidate",
    "AuditTarget",
    "RoundedLoss",
    "choose_statistic",
    "describe_statistic",
]


@runtime_checkable
class Sampler(Protocol):
    """A mechanism under audit: ``sample(x, rng, size=n)`` returns ``n`` outputs on input ``x``,
    drawing every random number from ``rng`` (a ``numpy.random.Generator``).

    White-box mechanisms also expose ``privacy_loss(outputs, x, x_prime)``; discrete ones
    ``output_distribution(x)``.
    """

    def sample(self, x: Any, rng: np.random.Generator, size: int) -> Any: ...


class TargetFactory(Protocol):
    """A callable that builds an :class:`AuditTarget` from mechanism parameters. Every factory
    takes the keyword ``claim: Certified | None = None``; ``claim=None`` means the toolkit's own
    certificate for those parameters (source ``"dpaudit"``). The parameters differ from factory
    to factory, so the signature is open (a fixed keyword here would match no factory)."""

    def __call__(self, *args: Any, **kwargs: Any) -> AuditTarget: ...


@dataclass(frozen=True)
class Candidate:
    """One pre-registered design: a neighbour pair, its statistic and (for discrete outputs) the
    finite support of that statistic."""

    pair: NeighbourPair
    statistic: Callable[[Any], np.ndarray]
    support: tuple[float, ...] | None = None


@dataclass(frozen=True)
class AuditTarget:
    """What to audit.

    Attributes:
        name: short name for the report (e.g. ``"gaussian"``).
        mechanism: samples outputs with ``sample(x, rng, size=n)`` (the implementation under
            audit; it may differ from what ``certified`` was computed for — a planted bug).
        pair: the neighbouring inputs; outputs on ``pair.x`` are the null sample.
        statistic: maps an array of ``n`` outputs to ``n`` floats.
        certified: the claim under audit.
        delta: the δ at which the ε lower bound is computed (must equal ``certified.delta``
            for the ε comparison to enter the verdict).
        support: the finite set of values the statistic can take, fixed before sampling (for
            discrete outputs); ``None`` for continuous statistics (Bonferroni grid).
        details: extra JSON-ready facts for the report (exact values, parameters).
        candidates: further pre-registered designs (e.g. one pair per arm or coordinate) among
            which the runner's pilot chooses; the primary (``pair``, ``statistic``,
            ``support``) is always candidate 0 (:attr:`family`).
        reference: the reference pair whose privacy the detection floor of an ε claim is
            stated in (:mod:`dpaudit.audit.reference_pairs`: ``"laplace"`` for Laplace
            mechanisms, else the canonical ``"randomized-response"`` pair); μ claims always
            use the Gaussian pair.
    """

    name: str
    mechanism: Any
    pair: NeighbourPair
    statistic: Callable[[Any], np.ndarray]
    certified: Certified
    delta: float = 0.0
    support: tuple[float, ...] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    candidates: tuple[Candidate, ...] = ()
    reference: str = "randomized-response"

    @property
    def family(self) -> tuple[Candidate, ...]:
        """Every pre-registered design: the primary first, then :attr:`candidates`."""
        return (Candidate(self.pair, self.statistic, self.support),) + tuple(self.candidates)

    def __post_init__(self) -> None:
        if not callable(getattr(self.mechanism, "sample", None)):  # a Sampler
            raise ValueError("mechanism must expose sample(x, rng, size=n)")
        object.__setattr__(self, "delta", check_probability("delta", self.delta, low_open=False))
        if self.reference not in ("laplace", "randomized-response"):
            raise ValueError(f"reference must be 'laplace' or 'randomized-response', got {self.reference!r}")
        if self.support is not None:
            sup = np.unique(np.asarray(self.support, dtype=float))
            if sup.size == 0 or np.isnan(sup).any():
                raise ValueError("support must be a non-empty set of numbers (no NaN)")
            object.__setattr__(self, "support", tuple(sup.tolist()))
        cands = []
        for c in self.candidates:
            if not isinstance(c, Candidate):
                raise ValueError(f"candidates must be Candidate values, got {type(c).__name__}")
            if c.support is not None:
                sup = np.unique(np.asarray(c.support, dtype=float))
                c = Candidate(c.pair, c.statistic, tuple(sup.tolist()))
            cands.append(c)
        object.__setattr__(self, "candidates", tuple(cands))


def choose_statistic(
    mechanism: Any, pair: NeighbourPair, prefer: str = "auto"
) -> Callable[[Any], np.ndarray]:
    """White-box privacy loss when the mechanism exposes ``privacy_loss(output, x, x′)`` (the
    Neyman–Pearson-optimal statistic), else the black-box identity (``prefer="identity"``) or
    the indicator of the output ``x`` would most likely produce (``prefer="indicator"``).

    >>> from dpaudit.audit.neighbours import scalar_pair
    >>> class WhiteBox:
    ...     def sample(self, x, rng, size): return x + rng.standard_normal(size)
    ...     def privacy_loss(self, o, x, x_prime): return (x_prime - x) * (x + x_prime - 2 * o) / 2
    >>> describe_statistic(choose_statistic(WhiteBox(), scalar_pair()))
    'privacy loss of WhiteBox'
    >>> describe_statistic(choose_statistic(WhiteBox(), scalar_pair(), "identity"))
    'identity'
    """
    if prefer not in ("auto", "privacy-loss", "identity", "indicator"):
        raise ValueError(
            f"statistic must be 'auto', 'privacy-loss', 'identity' or 'indicator', got {prefer!r}"
        )
    white = callable(getattr(mechanism, "privacy_loss", None))
    if prefer == "privacy-loss" and not white:
        raise ValueError(f"{type(mechanism).__name__} exposes no privacy_loss: use a black-box statistic")
    if prefer in ("auto", "privacy-loss") and white:
        return RoundedLoss(PrivacyLoss(pair.bind(mechanism)))
    if prefer == "indicator":
        dist = getattr(mechanism, "output_distribution", None)
        if not callable(dist):
            raise ValueError("the indicator statistic needs a discrete mechanism with output_distribution(x)")
        return Indicator((int(np.argmax(dist(pair.x))),))
    return Identity()


@dataclass(frozen=True)
class RoundedLoss:
    """A white-box privacy loss rounded to ``decimals`` decimals.

    Rounding is post-processing, so any test on it is still valid; it removes floating-point
    noise in the *computation* of the loss (e.g. ``|o − 1| − |o|`` is 1 or 1 + 2⁻⁵² depending
    on the low bits of ``o``), which otherwise lets the auditor detect the low-order bits of
    the float sampler — a real but different (floating-point) leak, not the one audited here.

    >>> import numpy as np
    >>> class Shift:
    ...     def privacy_loss(self, o):
    ...         return 0.5 - np.asarray(o, dtype=float)
    >>> RoundedLoss(PrivacyLoss(Shift()))(np.array([0.1 + 0.2, -1e300])).tolist()
    [0.2, 1e+300]
    """

    loss: PrivacyLoss
    decimals: int = 9

    def __call__(self, outputs: Any) -> np.ndarray:
        v = np.asarray(self.loss(outputs), dtype=float)
        big = ~(np.abs(v) < 1e290)  # 10^decimals·v would overflow: such a loss has no low bits to clear
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(big, v, np.round(v, self.decimals))

    def describe(self) -> str:
        inner = getattr(self.loss.mechanism, "mechanism", self.loss.mechanism)
        return f"privacy loss of {type(inner).__name__}"


def describe_statistic(statistic: Any) -> str:
    """``statistic.describe()`` if available, else the class name."""
    d = getattr(statistic, "describe", None)
    return str(d()) if callable(d) else type(statistic).__name__
