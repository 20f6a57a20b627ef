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
  usually give a zero bound at this sample size, so "no violation found" means nothing; or the
  bounds are 0 and no floor was computed (nothing shows the audit could have seen a loss); or
  the audit found no test with power (the caller says so);
* ``consistent`` — none of the above. It never proves a claim.

An audit may also be compared with a *published* claim that the toolkit does not certify
(``published=``): ``published_verdict`` then says whether the same empirical bound refutes it,
with the same rule.

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
from dpaudit.formatting import fmt, fmt_down, fmt_up

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
    published: Certified | None = None
    published_verdict: str | None = None

    @staticmethod
    def _violated(certified: Certified, empirical: Empirical) -> bool:
        """Whether a lower bound exceeds the claim for the same quantity (μ, or ε at the same δ)."""
        violated = False
        if certified.mu is not None and empirical.mu_lower is not None:
            violated |= empirical.mu_lower > certified.mu
        if certified.epsilon is not None and certified.delta is not None:
            if abs(certified.delta - empirical.delta) <= 1e-12 * max(certified.delta, 1e-300):
                violated |= empirical.epsilon_lower > certified.epsilon
        return violated

    @staticmethod
    def _published_verdict(published: Certified, empirical: Empirical) -> str:
        bad = AuditReport._violated(published, empirical)
        what = (f"epsilon >= {fmt_down(empirical.epsilon_lower, 4)} at delta = {empirical.delta:g} vs "
                f"published {published.epsilon:g}" if published.epsilon is not None
                else f"mu >= {fmt_down(empirical.mu_lower, 4)} vs published {published.mu}")
        verdict = Verdict.VIOLATED if bad else Verdict.CONSISTENT
        return f"{verdict.value}: {what} ({published.source})"

    @classmethod
    def build(cls, *, target: str, certified: Certified, empirical: Empirical,
              details: dict[str, Any] | None = None, floor: DetectionFloor | None = None,
              estimate: MuInterval | None = None, model_mismatch: bool = False,
              published: Certified | None = None, inconclusive: bool = False) -> AuditReport:
        """Compute the verdict (precedence: violated, model-mismatch, inconclusive when the
        certificate is below ``floor``, when there is no ``floor`` and the bounds are 0 — the
        audit exhibited no privacy loss and nothing shows it could have — or when the caller
        says the audit had no power (``inconclusive``), else consistent), the fraction of the
        certified value the audit recovered (μ_lower/μ if μ is certified, else ε_lower/ε) and,
        with ``published``, the verdict of the same bounds against that claim
        (``published_verdict``).

        >>> emp = Empirical(epsilon_lower=1.4, mu_lower=None, delta=1e-6, confidence=0.95, trials=10,
        ...                 method="m", statistic="s")
        >>> r = AuditReport.build(target="rnm", certified=Certified(epsilon=2.0, delta=1e-6), empirical=emp,
        ...                       published=Certified(epsilon=1.0, delta=1e-6, source="Theorem 8"))
        >>> r.verdict.value, r.published_verdict.split(":")[0]
        ('consistent', 'violated')
        """
        if certified.mu is not None and empirical.mu_lower is not None and certified.mu > 0:
            frac: float | None = empirical.mu_lower / certified.mu
        elif certified.epsilon:
            frac = empirical.epsilon_lower / certified.epsilon
        else:
            frac = None
        if cls._violated(certified, empirical):
            verdict = Verdict.VIOLATED
        elif model_mismatch:
            verdict = Verdict.MODEL_MISMATCH
        elif inconclusive or (floor is not None and floor.below(certified.mu, certified.epsilon)):
            verdict = Verdict.INCONCLUSIVE
        elif floor is None and empirical.epsilon_lower <= 0.0 and not (empirical.mu_lower or 0.0) > 0.0:
            verdict = Verdict.INCONCLUSIVE
        else:
            verdict = Verdict.CONSISTENT
        pub = None if published is None else cls._published_verdict(published, empirical)
        return cls(target=target, certified=certified, empirical=empirical, verdict=verdict,
                   fraction_recovered=frac, details=dict(details or {}), floor=floor, estimate=estimate,
                   published=published, published_verdict=pub)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``certified``, ``empirical`` (``epsilon_lower``, ``mu_lower``, ``delta``,
        ``confidence``, ``trials``, ``method``, ``statistic``), ``verdict`` (a lowercase string),
        ``fraction_recovered``, ``detection_floor``, ``estimate`` (``None`` when not computed),
        ``target``, ``details``; ``published`` and ``published_verdict`` when a published claim
        was compared."""
        d = asdict(self)
        out = {
            "target": d["target"],
            "certified": d["certified"],
            "empirical": d["empirical"],
            "verdict": Verdict(self.verdict).value,
            "fraction_recovered": d["fraction_recovered"],
            "detection_floor": d["floor"],
            "estimate": d["estimate"],
            "details": d["details"],
        }
        if self.published is not None:
            out["published"] = d["published"]
            out["published_verdict"] = self.published_verdict
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        """The text ``dpaudit audit`` prints: verdict, neighbours, certified and empirical values,
        the statistic, the samples, the detection floor, the estimate and any exact values."""
        c, e = self.certified, self.empirical
        nb = self.details.get("neighbours", {})
        lines = [f"audit of {self.target}: {str(self.verdict).upper()}"]
        lines.append(f"  neighbours  : {nb.get('description', '')} [{nb.get('relation', '')}]")
        claim = []
        if c.mu is not None:
            claim.append(f"mu = {fmt_up(c.mu)}")
        if c.epsilon is not None:
            claim.append(f"epsilon = {fmt_up(c.epsilon)} at delta = {c.delta:g}")
        lines.append(f"  certified   : {', '.join(claim)} (source: {c.source})")
        bounds = (f"mu >= {fmt_down(e.mu_lower)}, epsilon >= {fmt_down(e.epsilon_lower)} "
                  f"at delta = {e.delta:g}")
        lines.append(f"  empirical   : {bounds} ({e.confidence:.0%} confidence, {e.trials:,} trials)")
        lines.append(f"  statistic   : {e.statistic}; {e.method}")
        sel = self.details.get("selection", {})
        if sel.get("selection") == "pilot":
            pilot = e.trials - sel["main_null_trials"] - sel["main_alt_trials"]
            lines.append(
                f"  samples     : pilot {pilot:,}; certifying test {sel['main_null_trials']:,} on x, "
                f"{sel['main_alt_trials']:,} on x' (split chosen on the pilot)"
            )
        if self.floor is not None:
            lines.append(f"  floor       : {self.floor.describe()}")
        if self.verdict == Verdict.INCONCLUSIVE and self.details.get("would_need_trials"):
            need = self.details["would_need_trials"]
            lines.append(f"  to see it   : about {need:,} trials would bring the floor below the certificate "
                         "(floors shrink about as 1/sqrt(trials))")  # fmt: skip
        if self.estimate is not None and c.mu is not None:
            iv = self.estimate
            lines.append(
                "  estimate    : the certifying test exhibits mu in "
                f"[{fmt_down(iv.lower)}, {fmt_up(iv.upper)}] "
                f"({iv.confidence:.0%} two-sided) against the certified {fmt_up(c.mu)}"
            )
        if self.fraction_recovered is not None:
            lines.append(
                f"  recovered   : {self.fraction_recovered:.1%} of the certified "
                f"{'mu' if c.mu is not None else 'epsilon'}"
            )
        exact = self.details.get("exact")
        if exact:
            shown = [f"{k} = {fmt(v) if isinstance(v, float) else v}"
                     for k, v in exact.items() if v is not None]  # fmt: skip
            lines.append("  exact       : " + ", ".join(shown))
        return "\n".join(lines)

