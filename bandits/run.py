"""One run of any policy, end to end: regret, certified privacy, the ledger check, an audit.

:func:`run_policy` is the pipeline every algorithm goes through (``dpaudit run ALG`` calls it):

1. **declare** — ``policy.declare(T, N, structure)``: the worst-case releases per unit of
   privacy (None for a non-private reference);
2. **simulate** — :func:`bandits.engine.simulator.simulate`, which hands every repetition's agent its
   own generators and ledger; mechanisms record what each run really released;
3. **certify** — :func:`dpaudit.accounting.account` of the declared event under every method,
   the best one, GDP μ where the guarantee is GDP, the paper's claim beside it;
4. **check** — :func:`dpaudit.declaration.check_ledgers`: every unit of every repetition must be
   covered by the declaration, else :class:`~dpaudit.declaration.LedgerCheckError` (the run
   fails loudly: the implementation released more than it certifies);
5. **audit** — optional: the algorithm's own auditor or the generic black-box audit of
   :mod:`bandits.auditing.black_box`, at the run's horizon or a shorter one (the report says which).

The report is a :class:`bandits.report.RunReport` of typed sections; the audit is any
:class:`bandits.auditing.contract.PolicyAuditor` (default: the black-box audit).

Example:
    >>> from bandits.thompson.policy import GaussianTS
    >>> rep = run_policy(GaussianTS(b=10, c=4.0), "bernoulli:0.75,0.25", 2000, reps=3, progress=False)
    >>> round(rep.privacy.mu, 4), rep.ledger_check.ok, rep.audit is None
    (6.7082, True, True)
    >>> sorted(rep.to_dict())
    ['audit', 'config', 'ledger_check', 'privacy', 'regret', 'timing']
"""


from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bandits.engine.results import SimulationResult
from bandits.engine.simulator import simulate
from bandits.environments import Environment, parse_env
from bandits.policy import Policy
from bandits.report import (
    AuditSection,
    LedgerSection,
    RegretSection,
    RunConfig,
    RunReport,
    Timing,
    privacy_section,
)
from dpaudit.accounting import account
from dpaudit.declaration import Declaration, check_ledgers
from dpaudit.formatting import fmt_up
from dpaudit.validation import check_integer, check_probability

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Executor

    from bandits.auditing.contract import AuditSettings, PolicyAuditor

__all__ = ["RunReport", "run_policy", "run_algorithm"]


@dataclass(frozen=True)
class _Presentation:
    """What the report says about the configuration (title, lines, options, the paper's bounds)."""

    title: str | None = None
    lines: tuple[str, ...] = ()
    config: Mapping[str, Any] | None = None
    published_bounds: Mapping[str, float] | None = None
    privacy_extras: Mapping[str, Any] | None = None


def _audit_section(
    auditor: PolicyAuditor, policy: Policy, env: Environment, horizon: int, audit_horizon: int,
    settings: AuditSettings, run_mu: float | None = None,
) -> AuditSection:  # fmt: skip
    """Both views of the audit (:func:`~bandits.auditing.views.audit_views`) and its note;
    ``run_mu`` is the run's headline GDP μ (the privacy section's, e.g. Thompson sampling's
    closed form), quoted for the run's T so the two lines agree."""
    from bandits.auditing.views import audit_views  # the audit's machinery loads only when an audit runs

    result = audit_views(auditor, policy, audit_horizon, env, settings)
    per_side = result.primary.empirical.trials
    # what the auditor really ran on the running code (a model of a mechanism has its own samples)
    trials = int(per_side) // 2 if per_side and not result.primary.details.get("model") else settings.trials
    if audit_horizon != horizon:
        at_a = _certified_text(policy.declare(audit_horizon, env.n_arms, env.structure), settings.delta)
        at_t = _certified_text(policy.declare(horizon, env.n_arms, env.structure), settings.delta)
        if run_mu is not None:
            at_t = f"certified mu {fmt_up(run_mu, 4)}"
        what = (
            f"({at_a} there), not the run's T = {horizon} ({at_t})"
            if at_a and at_t
            else (f"not the run's T = {horizon}")
        )
        note = f"audited the same configuration at the reduced horizon T = {audit_horizon} {what}"
    else:
        note = f"audited the run's configuration at T = {horizon}"
    return AuditSection(result, audit_horizon, trials, note)


def _certified_text(decl: Declaration | None, delta: float) -> str | None:
    """ "certified mu 0.1486" for a GDP declaration, "certified epsilon 1 at delta = 1e-06" else."""
    if decl is None:
        return None
    acc = account(decl.event, delta=delta)
    if decl.guarantee == "gdp" and acc.mu is not None:
        return f"certified mu {fmt_up(acc.mu, 4)}"
    if acc.best.value is None:
        return None
    return f"certified epsilon {fmt_up(acc.best.value, 4)} at delta = {delta:g}"


def _default_auditor() -> PolicyAuditor:
    from bandits.auditing.black_box import black_box_audit

    return black_box_audit


def run_policy(
    policy: Policy,
    env: Environment | str,
    horizon: int,
    *,
    reps: int = 10,
    seed: int = 0,
    delta: float = 1e-6,
    audit_trials: int = 0,
    audit_horizon: int | None = None,
    auditor: PolicyAuditor | None = None,
    confidence: float = 0.95,
    audit_floor: str = "auto",
    executor: Executor | None = None,
    progress: bool = True,
    published_bounds: Mapping[str, float] | None = None,
    privacy_extras: Mapping[str, Any] | None = None,
    title: str | None = None,
    lines: tuple[str, ...] = (),
    config: Mapping[str, Any] | None = None,
) -> RunReport:
    """Declare, simulate, certify, check and (if ``audit_trials`` > 0) audit ``policy``.

    Args:
        env: an environment or a spec such as ``"bernoulli:0.75,0.5"``.
        audit_trials: neighbouring-run pairs for the audit (0: skip it).
        audit_horizon: horizon of the audited runs (default ``horizon``).
        auditor: a :class:`~bandits.auditing.contract.PolicyAuditor` (default: the generic
            black-box audit, :func:`bandits.auditing.black_box.black_box_audit`).
        audit_floor: ``"auto"``, ``"reference"`` or ``"algorithm"``
            (:class:`~bandits.auditing.contract.AuditSettings`).
        published_bounds: the paper's own ε values at ``delta`` for the bounds table.
        privacy_extras: extra facts added to the ``privacy`` section.
        title, lines, config: what the report says about the configuration.

    Raises:
        LedgerCheckError: some repetition recorded releases its declaration does not cover.
    """
    env = _environment(env)
    if not isinstance(policy, Policy):
        raise ValueError(f"policy must be a bandits.policy.Policy, got {type(policy).__name__}")
    T = check_integer("horizon", horizon, 2)
    reps, seed = check_integer("reps", reps, 1), check_integer("seed", seed, 0)
    trials = check_integer("audit_trials", audit_trials, 0)
    delta = check_probability("delta", delta)
    Ta = T if audit_horizon is None else check_integer("audit_horizon", audit_horizon, 2)
    settings = None
    if trials:
        from bandits.auditing.contract import AuditSettings

        settings = AuditSettings(trials, seed, confidence, delta, executor, progress, audit_floor)
    if trials and Ta != T:
        policy.declare(Ta, env.n_arms, env.structure)  # the audited configuration must be valid
    shown = _Presentation(title, tuple(lines), config, published_bounds, privacy_extras)
    return _run(policy, env, T, reps, seed, delta, Ta, settings, auditor, executor, progress, shown)


def _run(
    policy: Policy, env: Environment, T: int, reps: int, seed: int, delta: float, Ta: int,
    settings: AuditSettings | None, auditor: PolicyAuditor | None, executor: Executor | None,
    progress: bool, shown: _Presentation,
) -> RunReport:  # fmt: skip
    """The stages of :func:`run_policy` on checked arguments, timed."""
    decl = policy.declare(T, env.n_arms, env.structure)
    t0 = time.perf_counter()
    sim = simulate(policy, env, T, reps, seed, executor=executor, progress=progress)
    t1 = time.perf_counter()
    privacy = privacy_section(decl, delta, shown.published_bounds).with_extras(shown.privacy_extras)
    t2 = time.perf_counter()
    check = _ledger_section(sim, decl)
    t3 = time.perf_counter()
    audit = None
    if settings is not None:
        audit = _audit_section(auditor or _default_auditor(), policy, env, T, Ta, settings, privacy.mu)
    t4 = time.perf_counter()
    cfg = RunConfig(env.spec, T, env.n_arms, reps, seed, float(delta), settings.trials if settings else 0,
                    Ta if settings else None, dict(shown.config or {}))  # fmt: skip
    return RunReport(
        config=cfg,
        regret=RegretSection.from_simulation(sim, policy.linear_regret(T, env)),
        privacy=privacy,
        ledger_check=check,
        audit=audit,
        timing=Timing(t1 - t0, t2 - t1, t3 - t2, t4 - t3),
        simulation=sim,
        title=shown.title or policy.name,
        lines=shown.lines,
    )


def _environment(env: Environment | str) -> Environment:
    env = parse_env(env) if isinstance(env, str) else env
    if not isinstance(env, Environment):
        raise ValueError(f"env must be an Environment or a spec string, got {type(env).__name__}")
    return env


def _ledger_section(sim: SimulationResult, decl: Declaration | None) -> LedgerSection:
    """Check every repetition's ledger against the declaration (raises LedgerCheckError)."""
    if decl is None:
        return LedgerSection(True, "nothing to check: the algorithm declares no privacy", sim.repetitions)
    result = check_ledgers(sim.ledgers, decl)
    result.raise_if_failed()
    return LedgerSection(result.ok, result.message, result.repetitions, result)


def run_algorithm(
    key: str,
    env: Environment | str | None = None,
    horizon: int | None = None,
    *,
    reps: int = 10,
    seed: int = 0,
    delta: float = 1e-6,
    audit_trials: int | None = None,
    audit_horizon: int | None = None,
    audit_floor: str = "auto",
    executor: Executor | None = None,
    progress: bool = True,
    **options: Any,
) -> RunReport:
    """Run a registered algorithm (:mod:`bandits.registry`) as ``dpaudit run KEY`` does: its
    options by name (``prepulls=``, ``epsilon=``, ...), its paper's instance when ``env`` and
    ``horizon`` are None, its own auditor and default audit horizon, the paper's bounds.

    >>> rep = run_algorithm("ts", "bernoulli:0.75,0.25", 2000, reps=2, prepulls=10, variance_scale=4.0,
    ...                     audit_trials=0, progress=False)
    >>> round(rep.privacy.mu, 4), rep.config.options["algorithm"]
    (6.7082, 'ts')
    """
    from bandits.registry import get

    spec = get(key)
    if env is None or isinstance(env, str):
        text = spec.default_env if env is None else env
        env = spec.env_parser(text) if spec.env_parser is not None else parse_env(text)
    T = spec.default_horizon if horizon is None else check_integer("horizon", horizon, 2)
    configured = spec.configure(options, env, T)
    policy = configured.policy
    trials = spec.default_audit_trials if audit_trials is None else audit_trials
    if audit_horizon is None and spec.default_audit_horizon is not None and trials:
        audit_horizon = spec.default_audit_horizon(policy, T, env.n_arms)
    if trials and policy.declare(T, env.n_arms, env.structure) is None:
        trials = 0  # nothing certified, nothing to audit
    delta = check_probability("delta", delta)
    return run_policy(
        policy,
        env,
        T,
        reps=reps,
        seed=seed,
        delta=delta,
        audit_trials=trials,
        audit_horizon=audit_horizon,
        audit_floor=audit_floor,
        auditor=spec.auditor,
        executor=executor,
        progress=progress,
        published_bounds=spec.published_bounds(policy, T, env.n_arms, delta)
        if spec.published_bounds
        else None,
        privacy_extras=spec.privacy_extras(policy, T, env.n_arms) if spec.privacy_extras else None,
        title=configured.title,
        lines=configured.lines,
        config={"algorithm": spec.key, **configured.config},
    )
