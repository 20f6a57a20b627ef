"""The auditor contract: what every algorithm's audit takes and returns.

A :class:`PolicyAuditor` is any callable ``auditor(policy, horizon, env, settings)`` that audits
``policy`` at ``horizon`` rounds on neighbouring inputs of ``env``'s size and structure, with the
:class:`AuditSettings` of the run (trials, seed, confidence, δ, executor, progress), and returns
a :class:`PolicyAudit`: one result type whether the audit has one component (the black-box audit
of the action sequences) or several (a white-box audit of a mechanism beside it). Each
registered algorithm names its auditor in its spec (:attr:`bandits.algorithm.AlgorithmSpec.auditor`);
:func:`bandits.auditing.black_box.black_box_audit` is the default. ``tests/test_auditor_contract.py``
checks every registered auditor against this contract.

Example:
    >>> from bandits.auditing.black_box import black_box_audit
    >>> from bandits.environments import parse_env
    >>> from bandits.thompson.policy import GaussianTS
    >>> audit = black_box_audit(GaussianTS(b=1, c=1.0), 60, parse_env("bernoulli:0.5,0.5"),
    ...                         AuditSettings(trials=2000))
    >>> audit.verdict, str(audit).splitlines()[0]
    ('consistent', 'audit: CONSISTENT (2000 trials per neighbouring stream)')
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from dpaudit.audit.report import AuditReport, Verdict
from dpaudit.formatting import fmt_down
from dpaudit.validation import check_flag, check_integer, check_probability

if TYPE_CHECKING:  # pragma: no cover
    from bandits.environments import Environment
    from bandits.policy import Policy

__all__ = ["AuditSettings", "PolicyAudit", "PolicyAuditor", "FLOORS"]

FLOORS = ("auto", "reference", "algorithm")
"""The detection floors an audit can be judged against (:class:`AuditSettings`)."""


@dataclass(frozen=True)
class AuditSettings:
    """How to audit one run.

    Attributes:
        trials: trajectories (or mechanism samples) per neighbouring input.
        seed: root seed of the audit's randomness (independent of the run's).
        confidence: confidence of the lower bounds (two Clopper–Pearson bounds at
            (1 − confidence)/2 each).
        delta: the δ at which ε bounds are stated.
        executor: a ``concurrent.futures`` executor for batches of trajectories (None: in process).
        progress: show progress bars (stderr).
        floor: the detection floor that decides ``inconclusive``: ``"algorithm"`` (measured on
            the audited algorithm's own noise-scaled variants, :mod:`bandits.auditing.leak_floor`;
            many times the audit's cost, for the views that support it), ``"reference"`` (a
            reference pair's, :mod:`dpaudit.audit.power`), or ``"auto"``: a floor measured on
            the algorithm at this very configuration, floor seed and code when one is kept
            (:mod:`bandits.auditing.kept_floors`; every default ``dpaudit run ALG``, at any
            ``seed``), else the reference floor.
        floor_seed: root seed of a measured floor's simulations. The floor is a property of the
            audit procedure at its configuration, not of the audit's own draws, so it is seeded
            apart from ``seed``: one measured floor serves every audit seed.
    """

    trials: int
    seed: int = 0
    confidence: float = 0.95
    delta: float = 1e-6
    executor: Executor | None = field(default=None, compare=False)
    progress: bool = False
    floor: str = "auto"
    floor_seed: int = 0

    def __post_init__(self) -> None:
        check_integer("trials", self.trials, 1)
        check_integer("seed", self.seed, 0)
        check_integer("floor_seed", self.floor_seed, 0)
        check_probability("confidence", self.confidence)
        check_probability("delta", self.delta)
        check_flag("progress", self.progress)
        if self.floor not in FLOORS:
            raise ValueError(f"floor must be one of {list(FLOORS)}, got {self.floor!r}")

    def shared(self, parts: int) -> AuditSettings:
        """These settings for one of ``parts`` tests whose verdicts are combined: confidence
        1 − (1 − c)/parts each (Bonferroni), so that the chance that any of them falsely says
        ``violated`` stays at most 1 − c.

        Example:
            >>> AuditSettings(trials=100).shared(4).confidence
            0.9875
        """
        check_integer("parts", parts, 1)
        return replace(self, confidence=1.0 - (1.0 - self.confidence) / parts)

    def for_floor(self) -> AuditSettings:
        """These settings for a floor measured on the algorithm: its simulations are seeded from
        ``floor_seed``, whatever the audit's ``seed``.

        Example:
            >>> AuditSettings(trials=100, seed=7).for_floor().seed
            0
        """
        return replace(self, seed=self.floor_seed)


@dataclass(frozen=True)
class PolicyAudit:
    """The audit of one run: ``primary`` (whose bounds the report shows), the other components
    by name, the audit of the paper's claim (``published``, when it differs from the primary's
    certificate) and a one-line ``floor`` of what the design could see.

    The verdict: ``violated`` if any part refutes the certificate, else ``model-mismatch`` if any
    part says so, else ``consistent`` if at least one part *of the running code* had power (its own
    verdict is consistent), else ``inconclusive``. A part that says ``consistent`` with a lower
    bound of 0 on the certified quantity (μ when one is certified, else ε) is stored as
    ``inconclusive`` (:data:`BLIND`), unless its floor was measured on the algorithm: a floor
    measured on an algorithm calls a view without power one whose bound is positive in fewer than
    half of its audits of the algorithm as declared, and a bound of 0 is this audit's own draw of
    that event; its ``consistent`` would read as a pass while proving nothing. A view with a
    measured floor keeps the verdict that floor decided. A part whose ``details`` carry ``"model"`` (what
    it re-builds, for example the declared mechanism from the policy's parameters) audits a model,
    not the run: it can refute the certificate, but a model that behaves says nothing about the
    code that ran, so it never makes the run ``consistent``. The parts' confidences are set so that
    the family-wise error is controlled: :attr:`family_confidence` (Bonferroni over the parts,
    :meth:`AuditSettings.shared`) is at least the run's confidence.
    """

    primary: AuditReport
    components: Mapping[str, AuditReport] = field(default_factory=dict)
    published: AuditReport | None = None
    floor: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "primary", _seen(self.primary))
        object.__setattr__(self, "components", {k: _seen(v) for k, v in self.components.items()})

    @property
    def verdict(self) -> str:
        """The combined verdict (class docstring), as its lowercase string."""
        parts = (self.primary, *self.components.values())
        said = {Verdict(r.verdict).value for r in parts}
        for v in ("violated", "model-mismatch"):
            if v in said:
                return v
        if any(r.verdict == "consistent" and not r.details.get("model") for r in parts):
            return "consistent"
        return "inconclusive"

    @property
    def family_confidence(self) -> float:
        """1 − the sum of the parts' error levels: the confidence with which no part's bound is
        above the truth (Bonferroni; the published claim's report reuses the primary's sample and
        test, so it adds no test)."""
        parts = (self.primary, *self.components.values())
        return 1.0 - sum(1.0 - r.empirical.confidence for r in parts)

    def to_dict(self) -> dict[str, Any]:
        """The primary's JSON (:meth:`dpaudit.audit.report.AuditReport.to_dict`) with the combined
        ``verdict``, ``details.components`` (when there are any), ``details.detection_floor`` (when
        given) and ``published_verdict``/``published_audit`` (when a published claim was audited)."""
        d = self.primary.to_dict()
        d["verdict"] = self.verdict
        if self.components:
            d["details"] = dict(d["details"])
            d["details"]["components"] = {k: v.to_dict() for k, v in self.components.items()}
            d["details"]["family_confidence"] = self.family_confidence
        if self.floor:
            d["details"] = dict(d["details"])
            d["details"]["detection_floor"] = self.floor
        if self.published is not None:
            p = self.published
            word = "VIOLATED" if p.verdict == "violated" else "consistent"
            d["published_verdict"] = (
                f"{word}: epsilon >= {fmt_down(p.empirical.epsilon_lower, 4)} "
                f"vs claimed {p.certified.epsilon:g} "
                f"({p.certified.source})"
            )
            d["published_audit"] = p.to_dict()
        return d

    def __str__(self) -> str:
        """The audit section of ``dpaudit run``'s text report (without the run's horizon note)."""
        from bandits.auditing.text import audit_lines

        d = self.to_dict()
        d["trials"] = d["empirical"]["trials"] // 2
        return "\n".join(audit_lines(d))


BLIND = "bound 0: this view did not see even the algorithm's own loss at this size"
"""Why a part whose lower bound is 0 is ``inconclusive`` (:class:`PolicyAudit`)."""


def _seen(report: AuditReport) -> AuditReport:
    """``report``, or, when it says ``consistent`` with a lower bound of 0 on the certified
    quantity and its floor was not measured on the algorithm, the same report ``inconclusive`` with
    its reason in ``details["no_power"]`` (:class:`PolicyAudit`)."""
    if report.verdict != Verdict.CONSISTENT or "algorithm_floor" in report.details:
        return report
    mu_certified = report.certified.mu is not None
    bound = report.empirical.mu_lower if mu_certified else report.empirical.epsilon_lower
    if bound is not None and bound > 0:
        return report
    why = report.details.get("no_power") or BLIND
    return replace(report, verdict=Verdict.INCONCLUSIVE, details={**report.details, "no_power": why})


class PolicyAuditor(Protocol):
    """``auditor(policy, horizon, env, settings) -> PolicyAudit`` (module docstring)."""

    def __call__(
        self, policy: Policy, horizon: int, env: Environment, settings: AuditSettings
    ) -> PolicyAudit: ...
