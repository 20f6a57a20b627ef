"""The result of an audit: certified values, empirical lower bounds, and a verdict.

Verdicts (:class:`Verdict`, a ``str`` enum whose JSON values are the lowercase strings), in order
of precedence:

* ``violated`` — a statistically valid lower bound (at the stated confidence) exceeds the
  certified upper bound for the same quantity (ε at the same δ, or GDP μ): the claim is refuted;
* ``model-mismatch`` — the implementation's outputs differ from those of an independent
  simulation of its declared model (white-box audits that have one, e.g. Thompson sampling): the
  implementation is not the mechanism that was certified, even if no bound exceeds the claim;
* ``inconclusive`` — the certificate lies below the audit's detection floor
  (:mod:`dpaudit.audit.power`): even a mechanism spending all of its certified privacy would
  usually give a zero bound at this sample size, so "no violation found" means nothing;
* ``consistent`` — none of the above. It never proves a claim.

Example:
    >>> from dpaudit.audit.report import AuditReport, Certified, Empirical
    >>> r = AuditReport.build(
    ...     target="gaussian", certified=Certified(mu=1.0, epsilon=4.8866, delta=1e-6),
    ...     empirical=Empirical(epsilon_lower=3.1, mu_lower=0.93, delta=1e-6, confidence=0.95,
    ...                         trials=10**6, method="clopper-pearson/bonferroni", statistic="privacy-loss"))
    >>> r.verdict.value, round(r.fraction_recovered, 2), r.verdict == "consistent"
    ('consistent', 0.93, True)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from dpaudit.audit.estimate import MuInterval
from dpaudit.audit.power import DetectionFloor

__all__ = [
    "Verdict",
    "Certified",
    "Empirical",
    "AuditReport",
    "CONSISTENT",
    "VIOLATED",
    "MODEL_MISMATCH",
    "INCONCLUSIVE",
]


class Verdict(str, Enum):
    """The verdict of an audit (module docstring); compares equal to its lowercase value."""

    VIOLATED = "violated"
    MODEL_MISMATCH = "model-mismatch"
    INCONCLUSIVE = "inconclusive"
    CONSISTENT = "consistent"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)


CONSISTENT = Verdict.CONSISTENT
VIOLATED = Verdict.VIOLATED
MODEL_MISMATCH = Verdict.MODEL_MISMATCH
INCONCLUSIVE = Verdict.INCONCLUSIVE


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
    """One audit: the claim, the valid lower bounds, the verdict (module docstring), the fraction
    of the certified value recovered, the detection floor of the design (``floor``), the
    two-sided interval for the μ the certifying test exhibits (``estimate``) and JSON-ready
    ``details``."""

    target: str
    certified: Certified
    empirical: Empirical
    verdict: Verdict
    fraction_recovered: float | None
    details: dict[str, Any] = field(default_factory=dict)
    floor: DetectionFloor | None = None
    estimate: MuInterval | None = None

    @classmethod
    def build(cls, *, target: str, certified: Certified, empirical: Empirical,
              details: dict[str, Any] | None = None, floor: DetectionFloor | None = None,
              estimate: MuInterval | None = None, model_mismatch: bool = False) -> AuditReport:
        """Compute the verdict (precedence: violated, model-mismatch, inconclusive when the
        certificate is below ``floor``, consistent) and the fraction of the certified value the
        audit recovered (μ_lower/μ if μ is certified, else ε_lower/ε)."""
        violated = False
        if certified.mu is not None and empirical.mu_lower is not None:
            violated |= empirical.mu_lower > certified.mu
        if certified.epsilon is not None and certified.delta is not None:
            if abs(certified.delta - empirical.delta) <= 1e-12 * max(certified.delta, 1e-300):
                violated |= empirical.epsilon_lower > certified.epsilon
        if certified.mu is not None and empirical.mu_lower is not None and certified.mu > 0:
            frac: float | None = empirical.mu_lower / certified.mu
        elif certified.epsilon:
            frac = empirical.epsilon_lower / certified.epsilon
        else:
            frac = None
        if violated:
            verdict = Verdict.VIOLATED
        elif model_mismatch:
            verdict = Verdict.MODEL_MISMATCH
        elif floor is not None and floor.below(certified.mu, certified.epsilon):
            verdict = Verdict.INCONCLUSIVE
        else:
            verdict = Verdict.CONSISTENT
        return cls(target=target, certified=certified, empirical=empirical, verdict=verdict,
                   fraction_recovered=frac, details=dict(details or {}), floor=floor, estimate=estimate)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``certified``, ``empirical`` (``epsilon_lower``, ``mu_lower``, ``delta``,
        ``confidence``, ``trials``, ``method``, ``statistic``), ``verdict`` (a lowercase string),
        ``fraction_recovered``, ``detection_floor``, ``estimate`` (``None`` when not computed),
        ``target``, ``details``."""
        d = asdict(self)
        return {
            "target": d["target"],
            "certified": d["certified"],
            "empirical": d["empirical"],
            "verdict": Verdict(self.verdict).value,
            "fraction_recovered": d["fraction_recovered"],
            "detection_floor": d["floor"],
            "estimate": d["estimate"],
            "details": d["details"],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
