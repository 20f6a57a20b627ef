"""Gaussian Thompson sampling with (b, c) (Ou, Avella Medina & Cummings 2024, Algorithm 2) as
``dpaudit run ts``.

With no options it runs the paper's §5.1 instance (five Bernoulli arms 0.75…0.25, T = 10⁵) at a
budget of 1-GDP: b from :func:`bandits.thompson.frontier.rule_of_thumb_prepulls` (b =
round(6·sqrt(T)/μ), capped so that c ≥ 1) and c on the certified frontier. Its audit is the white-box audit of
:func:`bandits.thompson.audit.audit_thompson` (tied arms, score statistic, model tests) with
:data:`DEFAULT_AUDIT_TRIALS` trajectories per neighbouring table at a shorter horizon (all
pre-pulls plus 2000 private rounds) so that the whole command stays under a minute; the report
says what was audited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import AlgorithmSpec, Configured, Option
from dpaudit.papers import OU_2024

if TYPE_CHECKING:  # the policy and its accounting load when a run needs them, not to declare the spec
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.policy import Policy
    from bandits.thompson.policy import GaussianTS

DEFAULT_ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"
DEFAULT_MU = 1.0
DEFAULT_AUDIT_PRIVATE_ROUNDS = 2000
DEFAULT_AUDIT_TRIALS = 20_000
"""Trajectories per neighbouring table of the default audit: enough for a positive μ bound on
the tied design and for the model tests to see a posterior-variance bug of c/4."""


def choose_bc(options: Mapping[str, Any], n_arms: int, horizon: int) -> tuple[int, float, str]:
    """(b, c) and how they were chosen, from ``prepulls``, ``variance_scale``, ``target_mu``."""
    from bandits.thompson.frontier import budget_pair, max_prepulls, min_target_mu

    b, c, mu = options.get("prepulls"), options.get("variance_scale"), options.get("target_mu")
    if c is not None and mu is not None:
        raise ValueError("give --variance-scale (with --prepulls) or --target-mu, not both")
    if c is not None and b is None:
        raise ValueError("--variance-scale needs --prepulls")
    if b is not None and b * n_arms >= horizon:
        raise ValueError(
            f"--prepulls must be in [0, {(horizon - 1) // n_arms}] (b*N < T with N = {n_arms}, "
            f"T = {horizon}), got {b}"
        )
    if c is not None and b is not None:
        return int(b), float(c), "given on the command line"
    mu = DEFAULT_MU if mu is None else mu
    if mu < min_target_mu(horizon):
        raise ValueError(
            f"--target-mu must be at least {min_target_mu(horizon):.3g} at --horizon {horizon} (a smaller "
            f"budget needs a variance scale above 1e300), got {mu:g}"
        )
    if b is not None:
        bmax = max_prepulls(horizon, n_arms, mu)
        if b > bmax:
            raise ValueError(
                f"--prepulls must be in [0, {bmax}] to meet --target-mu {mu:g} with c >= 1, got {b}"
            )
        b, c = budget_pair(horizon, n_arms, mu, b)
        return b, c, f"b given, c on the certified {mu:g}-GDP frontier"
    b, c = budget_pair(horizon, n_arms, mu)
    return (
        b,
        c,
        (
            f"rule of thumb for {mu:g}-GDP: b = round(6 sqrt(T)/mu) capped at c >= 1, "
            "c on the certified frontier (dpaudit tune ts searches instead)"
        ),
    )


def _build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.thompson.policy import GaussianTS

    b, c, choice = choose_bc(options, env.n_arms, horizon)
    pol = GaussianTS(b=b, c=c)
    return Configured(
        pol,
        f"Gaussian Thompson sampling (b = {b}, c = {c:.6g})",
        lines=(f"(b, c) chosen by: {choice}",),
        config={"prepulls": b, "variance_scale": c, "choice": choice},
    )


def _audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.thompson.audit import audit_thompson

    return audit_thompson(policy, horizon, env, settings)


def _published(policy: GaussianTS, horizon: int, n_arms: int, delta: float) -> dict[str, float]:
    """The paper's bounds at δ: Theorem 4 GDP, Theorem 8 RDP, Corollary 1 ("standard DP")."""
    from dpaudit.analyses.thompson_sampling import corollary1_epsilon, theorem8_epsilon
    from dpaudit.conversions import gdp_epsilon

    cfg = policy.config(horizon, n_arms)
    return {
        "paper": float(gdp_epsilon(cfg.mu_paper, delta)),
        "paper_rdp": theorem8_epsilon(cfg, delta),
        "paper_standard": corollary1_epsilon(cfg, delta),
    }


def _extras(policy: GaussianTS, horizon: int, n_arms: int) -> dict[str, Any]:
    """The closed-form count of :mod:`dpaudit.analyses.thompson_sampling` for μ (the accountant
    composes the same declared event and agrees to 1e-15; the closed form is what the tuner puts on the budget
    frontier, so a run at ``--target-mu 2`` reports 2, not 2 + 2 ulp), Theorem 4's μ, the rounds."""
    cfg = policy.config(horizon, n_arms)
    return {"mu": cfg.mu_tight, "mu_paper": cfg.mu_paper, "private_rounds": cfg.private_rounds}


def _audit_horizon(policy: GaussianTS, horizon: int, n_arms: int) -> int:
    return min(horizon, policy.b * n_arms + DEFAULT_AUDIT_PRIVATE_ROUNDS)


SPECS = (
    AlgorithmSpec(
        key="ts",
        title=f"Gaussian Thompson sampling with (b, c) ({OU_2024.short}, Alg. 2): pre-pull every arm b "
        "times, posterior variance x c",
        paper=OU_2024,
        feedback=Feedback.BANDIT,
        privacy="central GDP",
        unit="one reward",
        default_env=DEFAULT_ENV,
        default_horizon=100_000,
        options=(
            Option(
                "prepulls",
                int,
                None,
                "pre-pulls per arm b (default: rule of thumb for the budget)",
                short="-b",
                low=0,
            ),
            Option(
                "variance-scale",
                float,
                None,
                "variance scale c >= 1 (needs --prepulls; default: on the budget frontier)",
                short="-c",
                low=1.0,
            ),
            Option(
                "target-mu",
                float,
                None,
                f"GDP budget used to choose (b, c) (default {DEFAULT_MU:g})",
                low=0.0,
                low_open=True,
            ),
        ),
        build=_build,
        auditor=_audit,
        published_bounds=_published,
        privacy_extras=_extras,
        default_audit_horizon=_audit_horizon,
        default_audit_trials=DEFAULT_AUDIT_TRIALS,
        # the releases and outputs floors: bandits.thompson.draws_floor.RUNS_PER_TRIAL (40) +
        # bandits.thompson.outputs_floor.RUNS_PER_TRIAL (360), not imported here (start-up)
        floor_runs_per_trial=400,
    ),
)
