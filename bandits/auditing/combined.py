"""Several audit components of one run read as one verdict, and the ceilings every report states.

A run's audit may combine a white-box audit of a mechanism (an initialisation release, a local
randomizer, a tree of partial sums) with the black-box audit of the action sequences
(:func:`bandits.auditing.black_box.audit_policy`). :class:`CombinedAudit` reports them as one:
the verdict is ``violated`` if any component proves more than the toolkit certifies;
``published_verdict`` compares the strongest component with the paper's claim. Each report
states its **detection floor**: the largest ε any test with n trials per side can prove
(all outcomes on the right side), so "consistent" is read against what could have been seen.

Example:
    >>> floor = max_provable_epsilon(1000, delta=1e-6, confidence=0.95)
    >>> round(floor, 2)
    5.6
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bandits.environments import Environment
from bandits.policy import Policy
from dpaudit.accounting import account
from dpaudit.audit import (
    AuditReport,
    Certified,
)
from dpaudit.audit.power import floor_report, largest_provable_epsilon
from dpaudit.audit.report import Verdict
from dpaudit.validation import check_integer

__all__ = [
    "CombinedAudit",
    "max_provable_epsilon",
    "detection_floor",
    "certified_claim",
    "published_claim",
    "DEFAULT_MECHANISM_TRIALS",
]

DEFAULT_MECHANISM_TRIALS = 200_000
"""Mechanism samples (both neighbours together) for the randomizer and tree audits."""


def max_provable_epsilon(trials: int, *, delta: float, confidence: float) -> float:
    """The largest ε lower bound one pre-registered test can give with ``trials`` runs per side
    (:func:`dpaudit.audit.power.largest_provable_epsilon`): the audit's detection ceiling."""
    n = check_integer("trials", trials)
    return largest_provable_epsilon(n, n, (1.0 - confidence) / 2.0, delta)


def detection_floor(trials: int, *, delta: float, confidence: float) -> str:
    """One line for the report: the design's floor (:func:`dpaudit.audit.power.floor_report`: the
    smallest ε of the canonical (ε, δ) pair that ``trials`` runs per side detect with probability
    ≥ 1/2) and its ceiling (the most any test can prove)."""
    n = check_integer("trials", trials)
    alpha = (1.0 - confidence) / 2.0
    floor = floor_report(n, n, alpha, certified_mu=None, certified_epsilon=1.0, delta=delta)
    top = largest_provable_epsilon(n, n, alpha, delta)
    return (f"{trials} runs per side: epsilon >= {floor.epsilon:.3g} at delta = {delta:g} is detected with "
            f"probability >= 1/2; no test can prove epsilon above {top:.3g}")


@dataclass(frozen=True)
class CombinedAudit:
    """Several audits of one run: ``primary`` (whose bounds the report shows) and the others by
    name; the verdict is ``violated`` if any of them is."""

    primary: AuditReport
    components: Mapping[str, AuditReport] = field(default_factory=dict)
    published: AuditReport | None = None
    floor: str = ""

    @property
    def verdict(self) -> str:
        """The most severe verdict of the parts (violated > model-mismatch > inconclusive of the
        primary > consistent): one refuted part refutes the run."""
        parts = (self.primary, *self.components.values())
        for v in ("violated", "model-mismatch"):
            if any(Verdict(r.verdict).value == v for r in parts):
                return v
        return Verdict(self.primary.verdict).value

    def to_dict(self) -> dict[str, Any]:
        d = self.primary.to_dict()
        d["verdict"] = self.verdict
        d["details"] = dict(d["details"])
        d["details"]["components"] = {k: v.to_dict() for k, v in self.components.items()}
        if self.floor:
            d["details"]["detection_floor"] = self.floor
        if self.published is not None:
            p = self.published
            word = "VIOLATED" if p.verdict == "violated" else "consistent"
            d["published_verdict"] = (
                f"{word}: epsilon >= {p.empirical.epsilon_lower:.4f} vs claimed {p.certified.epsilon:g} "
                f"({p.certified.source})"
            )
            d["published_audit"] = p.to_dict()
        return d


def certified_claim(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified:
    """What the toolkit certifies for ``policy`` at ``horizon`` (ε at δ; the pure ε when δ = 0)."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        return Certified(source="none: the policy declares no privacy")
    if delta > 0:
        eps = account(decl.event, delta=delta).best.value
    else:  # δ = 0: the pure ε of basic composition (independent of δ for pure leaves)
        eps = account(decl.event, delta=1e-12).bounds["basic"].value
    return Certified(epsilon=eps, delta=delta, source="dpaudit")


def published_claim(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified | None:
    """The paper's claimed ε for ``policy`` at ``horizon``, if its declaration carries one."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None or decl.published is None or decl.published.epsilon is None:
        return None
    return Certified(epsilon=float(decl.published.epsilon), delta=delta, source=decl.published.source)


