"""The (locally) private combinatorial semi-bandits of Chen et al. (2020) as ``dpaudit run``:
CUCB-LDP1, CUCB-LDP2, CUCB-DP and the non-private CUCB of Chen et al. (2016)
(:mod:`bandits.semibandits.policies`).

The paper has no experiments; with no options they run a bottleneck instance of our own design
(min reward, K = 4 good arms at 0.7, 8 bad arms at 0.5, comonotone outcomes; Δ = 0.2) at
T = 10⁵ and ε = 1. ``--env`` takes the combinatorial grammar of :mod:`bandits.environments.grammar`
(``topk:k=4,means=...,reward=average``, ``paths:k=4,paths=4,gap=0.1``, ...). The privacy section
certifies ε per user (one report for LDP; (⌈log₂T⌉ + 1) tree nodes for CUCB-DP, flagged when
that exceeds the paper's ε); the audit is :func:`bandits.semibandits.audit.audit_csb_policy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import TIE_RULES, AlgorithmSpec, Configured, Option, parse_combinatorial_env
from dpaudit.papers import CHEN_2016, CHEN_2020

if TYPE_CHECKING:  # policies, audits and accounting load in the functions that use them
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.policy import Policy
    from bandits.semibandits.policies import CSBPolicy

UNIT = "one user (one round's outcome vector)"
"""The unit of privacy (:data:`bandits.semibandits.policies.UNIT`, repeated so that declaring the
specs imports no policy; ``tests/test_registry.py`` checks that they agree)."""
DEFAULT_ENV = "topk:k=4,means=0.5x8/0.7x4,reward=min"
DEFAULT_HORIZON = 100_000
AUDIT_HORIZON = 32

EPSILON = Option(
    "epsilon",
    float,
    1.0,
    "privacy budget epsilon (the analysis assumes epsilon <= 1)",
    low=0.0,
    low_open=True,
)
TIES = Option("ties", str, "random", "oracle ties: random (policy randomness) or index", choices=TIE_RULES)
SCALE = Option(
    "bonus-scale",
    float,
    1.0,
    "multiplies the LDP bonus / CUCB-DP's privacy term (1 = the paper; CUCB-DP's documented variant: 1/30)",
    low=0.0,
    low_open=True,
)
BONUS = Option(
    "bonus-rule",
    str,
    "literal",
    "CUCB-LDP1 bonus: literal 4 sqrt(2K ln T/(eps^2 n)) or k-corrected 4 sqrt(2K^2 ln T/(eps^2 n))",
    choices=("literal", "k-corrected"),
)
LOG_BASE = Option(
    "log-base", str, "2", "base of log T in the node scale b = 2K log T/eps (2 or e)", choices=("2", "e")
)
NOISE_FACTOR = Option(
    "noise-factor",
    float,
    2.0,
    "b = factor*K*log T/eps (2: Algorithm 3; 1: Lemma 1 literally)",
    low=0.0,
    low_open=True,
)


def _lines(pol: CSBPolicy, env: Environment, horizon: int) -> tuple[list[str], dict[str, Any]]:
    from bandits.semibandits.policies import CUCBDP
    from bandits.structures.combinatorial import problem
    from mechanisms.continual.tree import tree_levels

    p = problem(env.structure)
    lines = [
        f"m = {env.n_arms} arms, K = {p.k}, reward {p.reward.name} "
        f"(B_inf = {p.b_inf():g}, B_1 = {p.b_1():g}, "
        f"monotone); oracle exact: regret benchmark alpha*opt with alpha = {p.alpha:g}",
        f"oracle ties: {pol.ties}; bonus scale {pol.bonus_scale:g}"
        + (" (the paper's constants)" if pol.bonus_scale == 1 else ""),
    ]
    config: dict[str, Any] = {
        "ties": pol.ties,
        "bonus_scale": pol.bonus_scale,
        "K": p.k,
        "reward": p.reward.name,
    }
    if isinstance(pol, CUCBDP):
        b = pol.node_scale(horizon, p.k)
        levels = tree_levels(horizon, padded=True)
        used = levels * p.k / b
        lines.append(
            f"tree: {levels} levels, node noise Lap(b), "
            f"b = {pol.noise_factor:g}*K*log_{pol.log_base}(T)/eps = {b:.6g}; "
            f"eps used per user = {levels}*K/b = {used:.6g}"
            + (
                f"  ** exceeds the paper's eps = {pol.epsilon:g} **"
                if used > pol.epsilon * (1 + 1e-12)
                else ""
            )
        )
        config.update(log_base=pol.log_base, noise_factor=pol.noise_factor, node_scale=b, tree_levels=levels)
    if hasattr(pol, "epsilon"):
        config["epsilon"] = pol.epsilon
    return lines, config


def _build(key: str, title: str) -> Any:
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.semibandits.policies import CUCB, CUCBDP, CUCBLDP1, CUCBLDP2

        cls = {"cucb-ldp1": CUCBLDP1, "cucb-ldp2": CUCBLDP2, "cucb-dp": CUCBDP, "cucb": CUCB}[key]
        kw: dict[str, Any] = {"ties": options["ties"], "bonus_scale": options["bonus_scale"]}
        if cls is CUCBLDP1:
            pol: CSBPolicy = CUCBLDP1(options["epsilon"], options["bonus_rule"], **kw)
        elif cls is CUCBDP:
            pol = CUCBDP(options["epsilon"], options["log_base"], options["noise_factor"], **kw)
        elif cls is CUCBLDP2:
            pol = CUCBLDP2(options["epsilon"], **kw)
        else:
            pol = CUCB(**kw)
        lines, config = _lines(pol, env, horizon)
        return Configured(pol, title, lines=tuple(lines), config=config)

    return build


def _published(policy: CSBPolicy, horizon: int, n_arms: int, delta: float) -> dict[str, float]:
    return {"paper": float(policy.epsilon)}  # type: ignore[attr-defined]


def _extras(policy: CSBPolicy, horizon: int, n_arms: int) -> dict[str, Any]:
    return {"paper_epsilon": float(policy.epsilon)}  # type: ignore[attr-defined]


def _audit_horizon(policy: CSBPolicy, horizon: int, n_arms: int) -> int:
    return min(horizon, AUDIT_HORIZON)


def _audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.semibandits.audit import audit_csb_policy

    return audit_csb_policy(policy, horizon, env, settings)


def _spec(key: str, title: str, privacy: str, opts: tuple[Option, ...]) -> AlgorithmSpec:
    private = privacy != "none"
    return AlgorithmSpec(
        key=key,
        title=title,
        paper=CHEN_2016 if key == "cucb" else CHEN_2020,
        feedback=Feedback.SEMI_BANDIT,
        privacy=privacy,
        unit=UNIT if private else None,
        default_env=DEFAULT_ENV,
        default_horizon=DEFAULT_HORIZON,
        options=opts,
        build=_build(key, title),
        auditor=_audit if private else None,
        published_bounds=_published if private else None,
        privacy_extras=_extras if private else None,
        default_audit_horizon=_audit_horizon,
        env_parser=parse_combinatorial_env,
    )


SPECS = (
    _spec(
        "cucb-ldp1",
        f"CUCB-LDP1 ({CHEN_2020.short}, Alg. 1): each user reports its K outcomes + Lap(K/eps)",
        "local pure DP",
        (EPSILON, BONUS, TIES, SCALE),
    ),
    _spec(
        "cucb-ldp2",
        f"CUCB-LDP2 ({CHEN_2020.short}, Alg. 2): each user reports its least-pulled arm's outcome "
        "+ Lap(1/eps)",
        "local pure DP",
        (EPSILON, TIES, SCALE),
    ),
    _spec(
        "cucb-dp",
        f"CUCB-DP ({CHEN_2020.short}, Alg. 3): tree-based aggregation of K-sparse leaves, Lap(2K log T/eps) "
        "per node",
        "central pure DP",
        (EPSILON, LOG_BASE, NOISE_FACTOR, TIES, SCALE),
    ),
    _spec(
        "cucb",
        f"CUCB ({CHEN_2016.short}), non-private reference for {CHEN_2020.short}",
        "none",
        (TIES, SCALE),
    ),
)

__all__ = ["SPECS"]
