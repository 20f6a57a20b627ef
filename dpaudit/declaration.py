"""Declared versus observed privacy: what an algorithm promises, and a check of what it did.

An algorithm *declares*, for a configuration, the worst-case releases that can touch one unit
of privacy (:class:`Declaration`: an event, the unit, the neighbouring relation, and the
paper's published claim if any). That event is what the accountant certifies. While it runs,
its mechanisms record every release in a per-run :class:`~dpaudit.ledger.Ledger`, labelled
with the units they touched. :func:`check_ledger` then verifies, unit by unit, that what was
recorded is *dominated* by the declaration — no unit charged more than the certificate allows —
so a bug in the privacy plumbing (a reward released twice, noise smaller than declared)
fails the run instead of silently voiding the certificate.

**Dominance** (:func:`dominated`), a sufficient condition that the observed composition is at
least as private as the declared one, checked per family of leaves:

* Gaussian-type leaves (Gaussian, Gaussian sequences, heterogeneous-Gaussian report-noisy-max
  through its dominating Gaussian): Σ μ² observed ≤ Σ μ² declared. GDP composition is exact
  (Dong, Roth & Su 2022, Cor. 3.3), so this compares the two compositions exactly.
* every other leaf: an injection of the observed leaves into the declared ones in which each
  observed leaf is dominated by its image — same kind with a smaller or equal ε (k-ary
  randomized response also with at least as many categories; (ε, δ) pairs both smaller), or
  a declared generic ``PureDpEvent``/``ApproxDpEvent`` whose (ε, δ) covers it. Adaptive
  composition is monotone in each component (Dwork & Roth 2014, Thm 3.16 / Kairouz, Oh &
  Viswanath 2015, Thm 3.3), so the observed composition is dominated.
* a ``NonPrivateEvent`` observed is dominated only by a ``NonPrivateEvent`` declared.

Example:
    >>> from dpaudit.events import LaplaceEvent
    >>> from dpaudit.ledger import Ledger
    >>> decl = Declaration(LaplaceEvent.from_epsilon(1.0), unit="one reward")
    >>> ok = Ledger(); _ = ok.record(LaplaceEvent(scale=1.0), units=range(10))
    >>> check_ledger(ok, decl).ok
    True
    >>> bad = Ledger()
    >>> _ = bad.record(LaplaceEvent(scale=1.0), units=range(10))
    >>> _ = bad.record(LaplaceEvent(scale=1.0), units=[3])      # round 3 released twice
    >>> c = check_ledger(bad, decl); c.ok, c.worst["unit"], c.worst["epsilon"]
    (False, 3, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dpaudit.accounting.composition import Composition, normal_form, pure_epsilon
from dpaudit.events import (
    ApproxDpEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
    NonPrivateEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
)
from dpaudit.ledger import Ledger
from dpaudit.papers import Citation
from dpaudit.validation import check_probability

__all__ = [
    "PublishedClaim",
    "Declaration",
    "LedgerCheck",
    "LedgerCheckError",
    "dominated",
    "check_ledger",
    "check_ledgers",
    "RTOL",
]

RTOL = 1e-9
"""Relative slack for comparing observed and declared parameters (floating-point rounding of
the same formula computed in two places); a real double charge is off by a factor ≥ 2."""

_GDP_LEAVES = (GaussianEvent, GaussianSequenceEvent, GaussianReportNoisyMaxEvent)
"""Releases whose composition is μ-GDP (a declaration of only these certifies a μ)."""


@dataclass(frozen=True)
class PublishedClaim:
    """A paper's statement about the privacy of an algorithm, reported beside the certified
    value and never used as one: the paper (:mod:`dpaudit.papers`), the place in it (theorem,
    equation, section), and ``mu`` (a GDP claim) or ``epsilon`` with ``delta``.

    >>> from dpaudit.papers import OU_2024
    >>> claim = PublishedClaim(OU_2024, "Theorem 4", mu=1.05)
    >>> claim.source, claim.epsilon_at(1e-6) > 4.88
    ('Ou, Avella Medina & Cummings (2024), Theorem 4', True)
    """

    paper: Citation
    place: str
    mu: float | None = None
    epsilon: float | None = None
    delta: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.paper, Citation):
            raise ValueError(f"paper must be a dpaudit.papers.Citation, got {self.paper!r}")
        if not isinstance(self.place, str) or not self.place.strip():
            raise ValueError("place must say where in the paper the claim is (theorem, equation, section)")
        if self.mu is None and self.epsilon is None:
            raise ValueError("a published claim needs mu or epsilon")

    @property
    def source(self) -> str:
        """Where the claim is published, as a report prints it: ``"Hu et al. (2024), Theorem 2"``."""
        return self.paper.at(self.place)

    def epsilon_at(self, delta: float) -> float | None:
        """The claimed ε at ``delta``: exact for a GDP claim; the claimed ε if the claim's δ is
        at most ``delta``; else None (the claim says nothing there)."""
        delta = check_probability("delta", delta)
        if self.mu is not None:
            from dpaudit.conversions import gdp_epsilon

            return float(gdp_epsilon(self.mu, delta))
        if self.epsilon is not None and (self.delta or 0.0) <= delta:
            return float(self.epsilon)
        return None

    def to_dict(self, delta: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "mu": self.mu,
            "epsilon": self.epsilon,
            "delta": self.delta,
        }
        if delta is not None:
            out["epsilon_at_delta"] = self.epsilon_at(delta)
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Declaration:
    """What an algorithm promises for one configuration.

    Attributes:
        event: the worst-case releases that can touch one unit of privacy (composed over the
            run): the accountant certifies this event.
        unit: the unit of privacy in words, e.g. ``"one reward"``, ``"one round's reward
            vector"``, ``"one user's feedback"``.
        neighbouring: the relation between neighbouring inputs.
        model: ``"central"`` (a curator sees the data) or ``"local"`` (each user randomises).
        published: the paper's claim, or None.
        note: how the declaration was derived (the proof in one line).
    """

    event: PrivacyEvent
    unit: str
    neighbouring: Neighbouring = Neighbouring.REPLACE
    model: str = "central"
    published: PublishedClaim | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent, got {type(self.event).__name__}")
        if not isinstance(self.unit, str) or not self.unit.strip():
            raise ValueError("unit must say, in words, what one unit of privacy is")
        object.__setattr__(self, "neighbouring", Neighbouring(self.neighbouring))
        if self.model not in ("central", "local"):
            raise ValueError(f"model must be 'central' or 'local', got {self.model!r}")

    @property
    def guarantee(self) -> str:
        """``"gdp"`` (every declared release is Gaussian-type: the guarantee is μ-GDP), ``"pure"``
        (every release is pure ε-DP), ``"approximate"`` or ``"none"`` (a non-private release).

        >>> from dpaudit.events import GaussianEvent, LaplaceEvent
        >>> Declaration(GaussianEvent(sigma=2.0), "one reward").guarantee
        'gdp'
        >>> Declaration(LaplaceEvent(scale=1.0).repeat(3), "one row").guarantee
        'pure'
        """
        leaves = [leaf for comp in normal_form(self.event) for leaf, _ in comp]
        if any(isinstance(leaf, NonPrivateEvent) for leaf in leaves):
            return "none"
        if leaves and all(type(leaf) in _GDP_LEAVES for leaf in leaves):
            return "gdp"
        if all(pure_epsilon(leaf) is not None for leaf in leaves):
            return "pure"
        return "approximate"


class LedgerCheckError(RuntimeError):
    """A run recorded more privacy loss for some unit than its declaration allows."""


@dataclass(frozen=True)
class LedgerCheck:
    """The outcome of checking recorded releases against a declaration.

    ``worst`` describes the unit whose recorded releases come closest to (or exceed) the
    declaration: its ``unit`` label (None = every unit alike), ``repetition``, ``releases``,
    ``mu`` (√Σμ² of its Gaussian-type releases), ``epsilon`` (Σε of its pure-DP releases),
    ``non_private`` (count) and ``ratio`` (the largest observed/declared ratio over the
    families, ≤ 1 when dominated). ``declared`` gives the same summary for the declaration.
    """

    ok: bool
    message: str
    repetitions: int
    groups: int
    units: int
    worst: dict[str, Any] = field(default_factory=dict)
    declared: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "message": self.message,
            "repetitions": self.repetitions,
            "groups": self.groups,
            "units": self.units,
            "worst": dict(self.worst),
            "declared": dict(self.declared),
        }

    def raise_if_failed(self) -> None:
        if not self.ok:
            raise LedgerCheckError(self.message)


# ---------------------------------------------------------------------------------------
# dominance of one per-unit composition by another


def _summary(comp: Composition) -> dict[str, Any]:
    _, _, rest = comp.gaussian_part()
    eps = math.fsum(c * (pure_epsilon(leaf) or 0.0) for leaf, c in rest)
    return {
        "releases": comp.num_releases,
        "mu": math.sqrt(comp.gaussian_mu_squared()),
        "epsilon": eps,
        "non_private": sum(c for leaf, c in rest if isinstance(leaf, NonPrivateEvent)),
    }


def _covers(declared: PrivacyEvent, observed: PrivacyEvent) -> bool:
    """Whether one declared leaf dominates one observed leaf."""
    tol = 1.0 + RTOL
    if isinstance(observed, NonPrivateEvent):
        return isinstance(declared, NonPrivateEvent)
    eo = pure_epsilon(observed)
    if isinstance(declared, PureDpEvent) or (isinstance(declared, ApproxDpEvent) and declared.delta == 0):
        return eo is not None and eo <= declared.epsilon * tol
    if isinstance(declared, ApproxDpEvent):
        if eo is not None:
            return eo <= declared.epsilon * tol
        return (
            isinstance(observed, ApproxDpEvent)
            and observed.epsilon <= declared.epsilon * tol
            and observed.delta <= declared.delta * tol
        )
    if type(declared) is not type(observed):
        return False
    if isinstance(declared, RandomizedResponseEvent) and isinstance(observed, RandomizedResponseEvent):
        return (
            observed.epsilon <= declared.epsilon * tol and observed.num_categories >= declared.num_categories
        )
    if isinstance(declared, (LaplaceEvent, LaplaceReportNoisyMaxEvent)) and isinstance(
        observed, (LaplaceEvent, LaplaceReportNoisyMaxEvent)
    ):
        return observed.epsilon <= declared.epsilon * tol
    return observed == declared


def _strength(leaf: PrivacyEvent) -> float:
    if isinstance(leaf, NonPrivateEvent):
        return math.inf
    e = pure_epsilon(leaf)
    if e is not None:
        return e
    return leaf.epsilon if isinstance(leaf, ApproxDpEvent) else math.inf


_GAUSSIAN = (GaussianEvent, GaussianSequenceEvent, GaussianReportNoisyMaxEvent)


def dominated(observed: Composition, declared: Composition) -> tuple[bool, float]:
    """Whether ``observed`` is dominated by ``declared`` (module docstring), and the largest
    observed/declared ratio over the families (Σμ², Σε; inf if a leaf finds no image).

    >>> from dpaudit.events import LaplaceEvent
    >>> [d] = normal_form(LaplaceEvent(1.0).repeat(3)); [o] = normal_form(LaplaceEvent(2.0).repeat(2))
    >>> dominated(o, d)
    (True, 0.3333333333333333)
    >>> dominated(d, o)[0]
    False
    """
    ratios: list[float] = []
    m2_o, m2_d = observed.gaussian_mu_squared(), declared.gaussian_mu_squared()
    ok = m2_o <= m2_d * (1.0 + RTOL)
    if m2_o > 0:
        ratios.append(m2_o / m2_d if m2_d > 0 else math.inf)
    _, _, rest_o = observed.gaussian_part()
    _, _, rest_d = declared.gaussian_part()
    slots = sorted(rest_d, key=lambda lc: _strength(lc[0]))
    capacity = [c for _, c in slots]  # releases of each declared leaf not yet used
    for leaf, count in sorted(rest_o, key=lambda lc: -_strength(lc[0])):
        need = count
        for k, (declared_leaf, _) in enumerate(slots):  # the weakest declared leaf that covers it, first
            if need == 0:
                break
            if capacity[k] > 0 and _covers(declared_leaf, leaf):
                take = min(need, capacity[k])
                capacity[k] -= take
                need -= take
        if need:
            ok = False
    eps_o = _summary(observed)["epsilon"]
    eps_d = _summary(declared)["epsilon"]
    if eps_o > 0:
        ratios.append(eps_o / eps_d if eps_d > 0 else math.inf)
    if any(isinstance(leaf, NonPrivateEvent) for leaf, _ in rest_o) and not any(
        isinstance(leaf, NonPrivateEvent) for leaf, _ in rest_d
    ):
        ratios.append(math.inf)
    return ok, max(ratios, default=0.0)


# ---------------------------------------------------------------------------------------
# checking ledgers


def _declared_compositions(declaration: Declaration | PrivacyEvent) -> tuple[Composition, ...]:
    event = declaration.event if isinstance(declaration, Declaration) else declaration
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"declaration must be a Declaration or a PrivacyEvent, got {type(event).__name__}")
    return normal_form(event)


def check_ledgers(ledgers: Iterable[Ledger], declaration: Declaration | PrivacyEvent) -> LedgerCheck:
    """Check every ledger (one per repetition) against the declaration, unit by unit.

    For each distinct per-unit composition of each ledger (:meth:`Ledger.groups`) there must
    be a declared alternative that dominates it (:func:`dominated`). The result names the
    worst unit (largest observed/declared ratio) and, if the check fails, the first unit that
    is not dominated.
    """
    declared = _declared_compositions(declaration)
    worst: dict[str, Any] = {"ratio": -1.0}
    failure: dict[str, Any] | None = None
    reps = groups = units = 0
    for rep, ledger in enumerate(ledgers):
        if not isinstance(ledger, Ledger):
            raise ValueError(f"ledgers must hold dpaudit.ledger.Ledger values, got {type(ledger).__name__}")
        reps += 1
        for g in ledger.groups():
            groups += 1
            units += g.num_units
            [obs] = normal_form(ledger.group_event(g))
            verdicts = [dominated(obs, d) for d in declared]
            ok = any(v[0] for v in verdicts)
            ratio = min(v[1] for v in verdicts)
            info = {
                "unit": g.first_unit,
                "repetition": rep,
                "units_alike": g.num_units,
                **_summary(obs),
                "ratio": ratio,
            }
            if ratio > worst["ratio"]:
                worst = info
            if not ok and failure is None:
                failure = info
    decl = max((_summary(d) for d in declared), key=lambda s: (s["mu"], s["epsilon"]))
    if failure is not None:
        unit = "every unit" if failure["unit"] is None else f"unit {failure['unit']!r}"
        msg = (
            f"ledger check FAILED: {unit} of repetition {failure['repetition']} was charged "
            f"{failure['releases']} releases (mu {failure['mu']:.6g}, sum of pure epsilon "
            f"{failure['epsilon']:.6g}, {failure['non_private']} non-private), which the declaration "
            f"({decl['releases']} releases, mu {decl['mu']:.6g}, "
            f"sum of pure epsilon {decl['epsilon']:.6g}) "
            "does not cover: the implementation released more than it declares"
        )
        return LedgerCheck(False, msg, reps, groups, units, failure, decl)
    if worst["ratio"] < 0:
        worst = {}
    msg = (
        f"ok: every unit's recorded releases are covered by the declaration over {reps} "
        f"repetition(s) (worst observed/declared ratio {max(worst.get('ratio', 0.0), 0.0):.4g})"
    )
    return LedgerCheck(True, msg, reps, groups, units, worst, decl)


def check_ledger(ledger: Ledger, declaration: Declaration | PrivacyEvent) -> LedgerCheck:
    """:func:`check_ledgers` for one ledger."""
    return check_ledgers([ledger], declaration)
