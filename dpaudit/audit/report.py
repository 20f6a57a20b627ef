"""The result of an audit: certified values, empirical lower bounds, and a verdict.

The verdict is ``violated`` when a statistically valid lower bound (at the stated confidence)
exceeds the certified upper bound for the same quantity — ε at the same δ, or GDP μ — and
``consistent`` otherwise. A consistent verdict never proves a claim; a violated one refutes it
(up to the stated confidence).

An audit may also be compared with a *published* claim that the toolkit does not certify
(``published=``): ``published_verdict`` then says whether the same empirical bound refutes it,
with the same rule.

Example:
    >>> from dpaudit.audit.report import AuditReport, Certified, Empirical
    >>> r = AuditReport.build(
    ...     target="gaussian", certified=Certified(mu=1.0, epsilon=4.8866, delta=1e-6),
    ...     empirical=Empirical(epsilon_lower=3.1, mu_lower=0.93, delta=1e-6, confidence=0.95,
    ...                         trials=10**6, method="clopper-pearson/bonferroni", statistic="privacy-loss"))
    >>> r.verdict, round(r.fraction_recovered, 2)
    ('consistent', 0.93)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Certified", "Empirical", "AuditReport", "CONSISTENT", "VIOLATED"]

CONSISTENT = "consistent"
VIOLATED = "violated"


@dataclass(frozen=True)
class Certified:
    """The claim under audit: a GDP μ and/or an ε at δ (None where not claimed)."""

    mu: float | None = None
    epsilon: float | None = None
    delta: float | None = None
    source: str = "dpaudit"  # "dpaudit" (the toolkit's certified value) or "claim" / a paper's name


@dataclass(frozen=True)
class Empirical:
    """Statistically valid lower bounds from the audit."""

    epsilon_lower: float
    mu_lower: float | None
    delta: float
    confidence: float
    trials: int
    method: str
    statistic: str


@dataclass(frozen=True)
class AuditReport:
    target: str
    certified: Certified
    empirical: Empirical
    verdict: str
    fraction_recovered: float | None
    details: dict[str, Any] = field(default_factory=dict)
    published: Certified | None = None
    published_verdict: str | None = None

    @staticmethod
    def _violated(certified: Certified, empirical: Empirical) -> bool:
        violated = False
        if certified.mu is not None and empirical.mu_lower is not None:
            violated |= empirical.mu_lower > certified.mu
        if certified.epsilon is not None and certified.delta is not None:
            if abs(certified.delta - empirical.delta) <= 1e-12 * max(certified.delta, 1e-300):
                violated |= empirical.epsilon_lower > certified.epsilon
        return violated

    @classmethod
    def build(cls, *, target: str, certified: Certified, empirical: Empirical,
              details: dict[str, Any] | None = None, published: Certified | None = None) -> AuditReport:
        """Compute the verdict and the fraction of the certified value the audit recovered
        (μ_lower/μ if μ is certified, else ε_lower/ε); with ``published``, also the verdict
        against that claim (``published_verdict``: ``"violated: ..."`` / ``"consistent: ..."``).

        >>> emp = Empirical(epsilon_lower=1.4, mu_lower=None, delta=1e-6, confidence=0.95, trials=10,
        ...                 method="m", statistic="s")
        >>> r = AuditReport.build(target="rnm", certified=Certified(epsilon=2.0, delta=1e-6), empirical=emp,
        ...                       published=Certified(epsilon=1.0, delta=1e-6, source="Theorem 8"))
        >>> r.verdict, r.published_verdict.split(":")[0]
        ('consistent', 'violated')
        """
        violated = cls._violated(certified, empirical)
        pub_verdict = None
        if published is not None:
            bad = cls._violated(published, empirical)
            what = (
                f"epsilon >= {empirical.epsilon_lower:.4f} at delta = {empirical.delta:g} "
                f"vs published {published.epsilon:g}" if published.epsilon is not None
                else f"mu >= {empirical.mu_lower} vs published {published.mu}"
            )
            pub_verdict = f"{VIOLATED if bad else CONSISTENT}: {what} ({published.source})"
        if certified.mu is not None and empirical.mu_lower is not None and certified.mu > 0:
            frac: float | None = empirical.mu_lower / certified.mu
        elif certified.epsilon:
            frac = empirical.epsilon_lower / certified.epsilon
        else:
            frac = None
        return cls(target=target, certified=certified, empirical=empirical,
                   verdict=VIOLATED if violated else CONSISTENT, fraction_recovered=frac,
                   details=dict(details or {}), published=published, published_verdict=pub_verdict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``certified``, ``empirical`` (``epsilon_lower``, ``mu_lower``, ``delta``,
        ``confidence``, ``trials``, ``method``, ``statistic``), ``verdict``, ``fraction_recovered``,
        ``target``, ``details``."""
        d = asdict(self)
        out = {
            "target": d["target"],
            "certified": d["certified"],
            "empirical": d["empirical"],
            "verdict": d["verdict"],
            "fraction_recovered": d["fraction_recovered"],
            "details": d["details"],
        }
        if self.published is not None:
            out["published"] = d["published"]
            out["published_verdict"] = d["published_verdict"]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
