"""What one run reports: regret, certified privacy, the ledger check, the audit, as typed sections.

:class:`RunReport` holds one frozen dataclass per section — :class:`RegretSection`,
:class:`PrivacySection`, :class:`LedgerSection`, :class:`AuditSection`, :class:`RunConfig`,
:class:`Timing` — built by :func:`bandits.run.run_policy`. ``report.to_dict()`` is the strict
JSON ``dpaudit run --json`` prints (``regret``, ``privacy``, ``ledger_check``, ``audit``,
``config``, ``timing``); ``str(report)`` is the text ``dpaudit run`` prints.

Example:
    >>> from bandits.run import run_policy
    >>> from bandits.thompson.policy import GaussianTS
    >>> rep = run_policy(GaussianTS(b=10, c=4.0), "bernoulli:0.75,0.25", 2000, reps=3, progress=False)
    >>> rep.privacy.guarantee, round(rep.privacy.mu, 4), rep.ledger_check.ok, rep.audit is None
    ('gdp', 6.7082, True, True)
    >>> str(rep).splitlines()[0]
    'gaussian-ts(b=10,c=4) on bernoulli:0.75,0.25'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bandits.auditing.text import audit_lines
from bandits.engine.results import SimulationResult
from dpaudit.accounting import account
from dpaudit.accounting.composition import normal_form, pure_epsilon
from dpaudit.declaration import Declaration, LedgerCheck
from dpaudit.formatting import fmt_up

if TYPE_CHECKING:  # pragma: no cover
    from bandits.auditing.contract import PolicyAudit

__all__ = [
    "LINEAR_SLOPE",
    "linear_growth",
    "RegretCurves",
    "RegretSection",
    "PrivacySection",
    "LedgerSection",
    "AuditSection",
    "RunConfig",
    "Timing",
    "RunReport",
    "privacy_section",
]


@dataclass(frozen=True)
class RegretCurves:
    """Mean regret and its standard error over the repetitions at the checkpoints ``t``."""

    t: tuple[int, ...]
    pseudo_mean: tuple[float, ...]
    pseudo_stderr: tuple[float, ...]
    empirical_mean: tuple[float, ...]
    empirical_stderr: tuple[float, ...]

    def to_dict(self) -> dict[str, list[Any]]:
        return {f.name: list(getattr(self, f.name)) for f in dataclasses.fields(self)}


LINEAR_SLOPE = 0.9
"""A run's regret is called linear when the second half of the rounds cost at least this fraction
of the first half's regret per round (1 for a straight line, ln 2/ln(T/2) for a logarithm)."""


@dataclass(frozen=True)
class RegretSection:
    """Pseudo-regret at T (``mean`` ± ``stderr`` over the repetitions), the empirical regret
    (realised rewards) likewise, both curves, and ``linear``: why the regret is linear in T
    (the configuration's reason, :meth:`bandits.policy.Policy.linear_regret`, or what the curve
    shows), None when it is not."""

    mean: float
    stderr: float
    empirical_mean: float
    empirical_stderr: float
    curves: RegretCurves
    kind: str = "pseudo"
    linear: str | None = None

    @classmethod
    def from_simulation(cls, sim: SimulationResult, reason: str | None = None) -> RegretSection:
        curves = RegretCurves(
            t=tuple(int(x) for x in sim.checkpoints),
            pseudo_mean=tuple(sim.mean("pseudo").tolist()),
            pseudo_stderr=tuple(sim.stderr("pseudo").tolist()),
            empirical_mean=tuple(sim.mean("empirical").tolist()),
            empirical_stderr=tuple(sim.stderr("empirical").tolist()),
        )
        return cls(sim.final("pseudo"), float(sim.stderr("pseudo")[-1]), sim.final("empirical"),
                   float(sim.stderr("empirical")[-1]), curves,
                   linear=reason or linear_growth(curves))  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "mean": self.mean, "stderr": self.stderr,
                "empirical_mean": self.empirical_mean, "empirical_stderr": self.empirical_stderr,
                "linear": self.linear is not None, "linear_reason": self.linear,
                "checkpoints": self.curves.to_dict()}  # fmt: skip

    def lines(self) -> list[str]:
        """The regret lines of the text report."""
        out = [
            "regret at T (mean ± s.e. over repetitions)",
            f"  pseudo-regret    {self.mean:10.1f} ± {self.stderr:.1f}",
            f"  empirical regret {self.empirical_mean:10.1f} ± {self.empirical_stderr:.1f}",
        ]
        if self.linear is not None:
            out.append(f"  LINEAR regret: {self.linear}")
        return out


def linear_growth(curves: RegretCurves) -> str | None:
    """What the pseudo-regret curve shows when it grows linearly: the second half of the rounds
    cost at least :data:`LINEAR_SLOPE` of the first half's regret per round, with the final regret
    clearly positive (above 3 standard errors); None otherwise.

    >>> t = (1, 10, 100, 500, 1000)
    >>> straight = RegretCurves(t, (0.2, 2.0, 20.0, 100.0, 200.0), (0.1,) * 5, t, t)
    >>> linear_growth(straight)
    'the pseudo-regret still grows linearly at T: rounds 500-1000 cost 0.2 per round, 1.00 of rounds 1-500'
    >>> bent = RegretCurves(t, (0.2, 2.0, 9.0, 12.0, 13.0), (0.1,) * 5, t, t)
    >>> linear_growth(bent) is None
    True
    """
    t, r, se = curves.t, curves.pseudo_mean, curves.pseudo_stderr
    T = t[-1]
    half = max((i for i, x in enumerate(t) if 2 * x <= T), default=None)
    if half is None or t[half] <= 0 or not r[-1] > 3 * se[-1] or not r[half] > 0:
        return None
    early, late = r[half] / t[half], (r[-1] - r[half]) / (T - t[half])
    if late < LINEAR_SLOPE * early:
        return None
    return (
        f"the pseudo-regret still grows linearly at T: rounds {t[half]}-{T} cost {late:.3g} per round, "
        f"{late / early:.2f} of rounds 1-{t[half]}"
    )


@dataclass(frozen=True)
class PrivacySection:
    """The certified privacy of the run's declaration.

    ``guarantee`` is ``"gdp"``, ``"pure"``, ``"approximate"`` or ``"none"``; ``mu`` the GDP μ
    (GDP guarantees only); ``epsilon`` the best certified ε at ``delta`` with its
    ``epsilon_method``; ``epsilon_pure`` Σε of the worst unit when every release is pure ε-DP;
    ``bounds`` every method (and the paper's own bounds by name) with ``reasons`` where a method
    does not apply; ``published`` the paper's claim and whether the toolkit certifies it;
    ``extras`` the algorithm's own facts (for example Thompson sampling's private rounds).
    """

    private: bool
    guarantee: str
    note: str
    unit: str | None = None
    neighbouring: str | None = None
    model: str | None = None
    mu: float | None = None
    delta: float | None = None
    epsilon: float | None = None
    epsilon_method: str | None = None
    epsilon_pure: float | None = None
    bounds: Mapping[str, float | None] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    releases: int | None = None
    published: Mapping[str, Any] | None = None
    declaration: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def with_extras(self, extras: Mapping[str, Any] | None) -> PrivacySection:
        """The section with the algorithm's extra facts: a name of a field replaces it (Thompson
        sampling's closed-form μ), any other name is kept in ``extras``."""
        names = {f.name for f in dataclasses.fields(self)} - {"extras"}
        extras = dict(extras or {})
        known = {k: v for k, v in extras.items() if k in names}
        rest = {**self.extras, **{k: v for k, v in extras.items() if k not in names}}
        return dataclasses.replace(self, **known, extras=rest)

    def to_dict(self) -> dict[str, Any]:
        keys: tuple[str, ...]
        if not self.private:
            keys = ("private", "guarantee", "mu", "delta", "epsilon", "epsilon_method", "epsilon_pure",
                    "bounds", "reasons", "published", "unit", "note")  # fmt: skip
        else:
            keys = ("private", "guarantee", "unit", "neighbouring", "model", "mu", "delta", "epsilon",
                    "epsilon_method", "epsilon_pure", "bounds", "reasons", "releases", "published",
                    "declaration", "note")  # fmt: skip
        out = {k: getattr(self, k) for k in keys}
        out["bounds"], out["reasons"] = dict(self.bounds), dict(self.reasons)
        out["published"] = None if self.published is None else dict(self.published)
        return {**out, **self.extras}

    def lines(self) -> list[str]:
        """The privacy lines of the text report."""
        if not self.private:
            return ["privacy: none (a non-private reference; nothing is certified)"]
        lines = [f"privacy (certified; neighbours differ in {self.unit}, output = the action sequence)"]
        pub = self.published
        if self.mu is not None:
            rounds = self.extras.get("private_rounds", self.releases)
            what = "private rounds" if "private_rounds" in self.extras else "releases"
            claim = ""
            if pub is not None and pub.get("mu") is not None:
                claim = f" ({pub['source']}: {pub['mu']:.6f}, not certified)"
            lines.append(f"  mu = {fmt_up(self.mu)}-GDP over {rounds} {what}{claim}")
        if self.epsilon_pure is not None:
            pure = "at delta = 0 (pure epsilon-DP, basic composition)"
            lines.append(f"  epsilon = {fmt_up(self.epsilon_pure)} {pure}")
        if self.epsilon is None:
            why = self.reasons.get("basic", "no method applies")
            lines.append(f"  NOT PRIVATE as certified: {why}")
        else:
            at = f"at delta = {self.delta:g} (by {self.epsilon_method})"
            lines.append(f"  epsilon = {fmt_up(self.epsilon)} {at}")
        if pub is not None and pub.get("mu") is None:
            at = f" at delta = {pub['delta']:g}" if pub.get("delta") else ""
            claim = f"epsilon = {pub['epsilon']:g}{at}"
            lines.append(f"  published ({pub['source']}): {claim}: {pub['status']}")
        elif pub is not None and pub["status"].startswith("NOT"):
            lines.append(f"  published ({pub['source']}): {pub['status']}")
        return lines


@dataclass(frozen=True)
class LedgerSection:
    """Every repetition's recorded releases against the declaration (``check``; None when the
    algorithm declares no privacy, so there is nothing to check)."""

    ok: bool
    message: str
    repetitions: int
    check: LedgerCheck | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.check is not None:
            return self.check.to_dict()
        return {"ok": self.ok, "message": self.message, "repetitions": self.repetitions}


@dataclass(frozen=True)
class AuditSection:
    """The run's audit: the auditor's result, the audited horizon, the trials per neighbouring
    input and a note on how the audited configuration relates to the run's."""

    result: PolicyAudit
    horizon: int
    trials: int
    note: str

    @property
    def verdict(self) -> str:
        return self.result.verdict

    def to_dict(self) -> dict[str, Any]:
        return {**self.result.to_dict(), "horizon": self.horizon, "trials": self.trials, "note": self.note}


@dataclass(frozen=True)
class RunConfig:
    """What was run: the environment's spec, T, N, R, the algorithm's options, the seed, δ and
    the audit's size and horizon (None when the audit was skipped)."""

    env: str
    horizon: int
    arms: int
    reps: int
    seed: int
    delta: float
    audit_trials: int
    audit_horizon: int | None
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"env": self.env, "horizon": self.horizon, "arms": self.arms, "reps": self.reps,
                **self.options, "seed": self.seed, "delta": self.delta, "audit_trials": self.audit_trials,
                "audit_horizon": self.audit_horizon}  # fmt: skip


@dataclass(frozen=True)
class Timing:
    """Seconds spent per stage."""

    simulation: float
    accounting: float
    ledger_check: float
    audit: float

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, eq=False)
class RunReport:
    """Regret, certified privacy, the ledger check and (optionally) the audit of one run (module
    docstring); ``simulation`` keeps the full curves for plots."""

    config: RunConfig
    regret: RegretSection
    privacy: PrivacySection
    ledger_check: LedgerSection
    audit: AuditSection | None
    timing: Timing
    simulation: SimulationResult = field(repr=False)
    title: str = ""
    lines: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``regret``, ``privacy``, ``ledger_check``, ``audit``, ``config``, ``timing``."""
        return {
            "regret": self.regret.to_dict(),
            "privacy": self.privacy.to_dict(),
            "ledger_check": self.ledger_check.to_dict(),
            "audit": None if self.audit is None else self.audit.to_dict(),
            "config": self.config.to_dict(),
            "timing": self.timing.to_dict(),
        }

    def __str__(self) -> str:
        """The text report ``dpaudit run`` prints (header, regret, privacy, ledger check, audit, time)."""
        c, r, t = self.config, self.regret, self.timing
        lines = [f"{self.title} on {c.env}",
                 f"  T = {c.horizon}, N = {c.arms}, {c.reps} repetitions, seed {c.seed}"]  # fmt: skip
        lines += [f"  {x}" for x in self.lines]
        lines += r.lines()
        lines += self.privacy.lines()
        lines.append(f"ledger check: {self.ledger_check.message}")
        lines += audit_lines(None if self.audit is None else self.audit.to_dict())
        lines.append(
            f"time: simulation {t.simulation:.1f} s, accounting {t.accounting:.1f} s, "
            f"ledger check {t.ledger_check:.1f} s, audit {t.audit:.1f} s"
        )
        return "\n".join(lines)


def _pure_sum(decl: Declaration) -> float | None:
    """Σε of the worst unit when every declared release is pure ε-DP (basic composition)."""
    worst = 0.0
    for comp in normal_form(decl.event):
        total = 0.0
        for leaf, count in comp:
            e = pure_epsilon(leaf)
            if e is None:
                return None
            total += count * e
        worst = max(worst, total)
    return worst


def _published(decl: Declaration, delta: float, certified: float | None) -> dict[str, Any] | None:
    """The paper's claim at δ and whether the certified ε covers it."""
    claim = decl.published
    if claim is None:
        return None
    out = claim.to_dict(delta)
    claimed = out.get("epsilon_at_delta")
    if certified is None and decl.guarantee == "none":
        out["status"] = "NOT CERTIFIED: the toolkit certifies no epsilon (a release is not private)"
    elif claimed is None or certified is None:
        out["status"] = "not comparable at this delta"
    elif claimed >= certified * (1 - 1e-12):
        out["status"] = "covered: the certified epsilon is at most the published one"
    else:
        out["status"] = (
            f"NOT CERTIFIED: the published epsilon {claimed:.6g} is below the certified "
            f"{certified:.6g} at delta = {delta:g}"
        )
    return out


def privacy_section(
    decl: Declaration | None, delta: float, published_bounds: Mapping[str, float] | None = None
) -> PrivacySection:
    """The certified bounds of the declaration under every method (the paper's own bounds by
    name beside them, never certified), or privacy "none" for a non-private reference."""
    if decl is None:
        return PrivacySection(
            private=False, guarantee="none",
            note="not private: the algorithm declares no privacy guarantee (a reference)",
        )  # fmt: skip
    acc = account(decl.event, delta=delta, extras=dict(published_bounds or {}))
    d = acc.to_dict()
    kind = decl.guarantee
    return PrivacySection(
        private=True,
        guarantee=kind,
        unit=decl.unit,
        neighbouring=decl.neighbouring.value,
        model=decl.model,
        mu=acc.mu if kind == "gdp" else None,
        delta=float(delta),
        epsilon=acc.best.value,
        epsilon_method=acc.best.method,
        epsilon_pure=_pure_sum(decl),
        bounds=d["bounds"],
        reasons=d["reasons"],
        releases=decl.event.num_releases,
        published=_published(decl, delta, acc.best.value),
        declaration=decl.note,
        note="bounds named paper* are the published values, reported for comparison and not certified",
    )
