"""The cascading bandits of Wang et al. (2021) as ``dpaudit run`` (:mod:`bandits.cascading.policies`,
:mod:`bandits.cascading.cucb_ldp_gaussian`).

With no options they run the paper's setting (L = 20, K = 4, T = 10⁵; §7) on the assumed
instance ``cascade:l=20,k=4,p=0.2,gap=0.15`` at ε = 1 with the noise of the algorithm as written
(``--noise-factor 0.01`` is the experiments' "all noises multiplied by 0.01"). The literal
algorithms (Algs. 1–3, Theorem 7, Alg. 4 with its u₀) report the paper's claim beside the
certified value — "NOT PRIVATE as certified" with the reason — and what their noise alone spends
(the paper's accounting, made exact); the sound variants certify their ε. Every run checks each
repetition's ledger against the declaration; the audit is :mod:`bandits.cascading.audit`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import (
    TIE_RULES,
    AlgorithmSpec,
    Configured,
    Option,
    parse_cascade_env,
    parse_combinatorial_env,
)
from dpaudit.papers import KVETON_2015, WANG_2021, Citation

if TYPE_CHECKING:  # policies, audits and accounting load in the functions that use them
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.policy import Policy

# Repeated from the modules that define them, so that declaring the specs imports no policy
# (``tests/test_registry.py`` checks that they agree):
PAPER_ENV = "cascade:l=20,k=4,p=0.2,gap=0.15"  # bandits.environments.cascade.PAPER_ENV
CUCB_ENV = "topk:k=4,means=0.2x4/0.05x16,reward=coverage"  # bandits.cascading.cucb_ldp_gaussian.DEFAULT_ENV
UNIT = "one user (one round's attraction vector)"  # bandits.cascading.policies.UNIT
INIT_MODES = ("paper", "none")  # bandits.cascading.policies.INIT_MODES
FACTOR_TARGETS = ("noise-and-bonus", "noise")  # bandits.cascading.policies.FACTOR_TARGETS
CALIBRATIONS = ("basic", "theorem7")  # bandits.cascading.policies.CALIBRATIONS
C1 = 2.7  # bandits.cascading.policies.C1
DEFAULT_HORIZON = 100_000

EPSILON = Option(
    "epsilon",
    float,
    1.0,
    "privacy budget epsilon (the paper's experiments: 0.2, 0.5, 1, 2)",
    low=0.0,
    low_open=True,
)
NOISE_FACTOR = Option(
    "noise-factor",
    float,
    1.0,
    "multiplies every noise scale (1: the algorithm as written; 0.01: the paper's experiments, section 7)",
    low=0.0,
    low_open=True,
)
FACTOR_ON = Option(
    "factor-on",
    str,
    "noise-and-bonus",
    "what --noise-factor multiplies: the noise and the privacy part of the bonus, or the noise only",
    choices=FACTOR_TARGETS,
)
INIT = Option(
    "init",
    str,
    "paper",
    "paper: observe w_0 (u_0) un-noised, as written (user 0 unprotected); "
    "none: empty statistics, infinite index",
    choices=INIT_MODES,
)
TIES = Option(
    "ties", str, "index", "ties in the index: index (lower item first) or random", choices=TIE_RULES
)
CSB_TIES = Option(
    "ties", str, "random", "oracle ties: random (policy randomness) or index", choices=TIE_RULES
)
CAL_DELTA = Option(
    "calibration-delta",
    float,
    1e-3,
    "the delta of the Gaussian / Theorem 7 calibration (the paper: 1e-3); "
    "--delta only sets where epsilon is reported",
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=True,
)
CALIBRATION = Option(
    "calibration",
    str,
    "basic",
    "basic: Lap(K/eps) (Algorithm 2); theorem7: Lap(sqrt(4K ln(e + eps/delta))/eps) (advanced composition)",
    choices=CALIBRATIONS,
)
C1_OPT = Option(
    "c1",
    float,
    C1,
    "Algorithm 1's constant c1 (fitted to the hybrid counter's error quantiles)",
    low=0.0,
    low_open=True,
)


def _noise_lines(
    pol: Any, k: int, n_items: int, horizon: int, delta: float
) -> tuple[list[str], dict[str, Any]]:
    """What the noise alone spends (the paper's accounting, exact) and the scales."""
    from bandits.cascading.policies import (
        CascadeDP,
        CascadeDPCounts,
        CascadeLDP,
        CascadeLDPFixed,
        counts_sensitivity,
        fixed_sensitivity,
    )
    from bandits.cascading.theory import optimal_composition_epsilon, tight_gaussian_epsilon

    lines: list[str] = []
    facts: dict[str, Any] = {}
    if isinstance(pol, CascadeLDP):
        base, scale = pol.base_scale(k), pol.value_scale(k)
        law = "Lap(b)" if pol.noise == "laplace" else "N(0, sigma^2)"
        lines.append(
            f"noise per examined position: {law}, scale {base:.6g} x {pol.noise_factor:g} = {scale:.6g}; "
            f"privacy bonus at scale {pol.bonus_scale(k):.6g}"
        )
        if pol.noise == "laplace":
            eps0 = 1.0 / scale
            facts.update(noise_epsilon_pure=k * eps0)
            what = f"eps = {k * eps0:.6g} (K values of eps0 = {eps0:.6g}, basic)"
            if pol.calibration == "theorem7":
                opt = optimal_composition_epsilon(eps0, k, delta)
                facts["noise_epsilon_optimal_composition"] = opt
                what += (
                    f", {opt:.6g} at delta = {delta:g} (exact optimal composition, Kairouz et al. Thm 3.3)"
                )
        else:
            mu = math.sqrt(k) / scale
            facts.update(
                noise_mu=mu, noise_epsilon_at_delta=tight_gaussian_epsilon(scale, math.sqrt(k), delta)
            )
            what = (
                f"mu = {mu:.6g}-GDP, eps = {facts['noise_epsilon_at_delta']:.6g} at delta = {delta:g} (exact)"
            )
        lines.append(f"the noise alone (the paper's accounting; the report length not counted): {what}")
    elif isinstance(pol, CascadeLDPFixed):
        lines.append(
            f"fixed-length report: K = {k} values, sensitivity {fixed_sensitivity(k, pol.noise):.6g}, "
            f"{'Lap' if pol.noise == 'laplace' else 'N(0, sigma^2)'} scale {pol.base_scale(k):.6g} x "
            f"{pol.noise_factor:g} = {pol.value_scale(k):.6g}"
        )
    elif isinstance(pol, CascadeDP):
        eps_c = pol.counter_epsilon(n_items)
        ins = pol.insertion_event(n_items).epsilon  # type: ignore[attr-defined]
        lines.append(
            f"per-item hybrid counters at eps' = eps/L = {eps_c:.6g} (noise x {pol.noise_factor:g}); "
            f"bonus coefficient 3 c1 L log^1.5(n)/eps = {pol.bonus_coefficient(n_items, horizon):.6g} "
            f"(c1 = {pol.c1:g})"
        )
        facts.update(noise_epsilon_pure=k * ins)
        lines.append(
            f"the noise alone (the paper's accounting; the un-noised counts not counted): <= K insertions of "
            f"eps' / factor = {ins:.6g}: eps = {k * ins:.6g}"
        )
    elif isinstance(pol, CascadeDPCounts):
        lines.append(
            f"one hybrid counter of (clicks, examinations) of all {n_items} items, l1 sensitivity "
            f"{counts_sensitivity(k):g}, eps = {pol.epsilon:g}, noise x {pol.noise_factor:g}"
        )
    return lines, facts


def _build(kind: str) -> Any:
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.cascading.policies import (
            CascadeDP,
            CascadeDPCounts,
            CascadeLDP,
            CascadeLDPFixed,
            CascadeUCB1,
        )
        from bandits.cascading.theory import tight_gaussian_epsilon
        from bandits.structures.combinatorial import problem

        o = dict(options)
        if kind == "ucb":
            pol: Any = CascadeUCB1(init=o["init"], ties=o["ties"])
        elif kind in ("ldp-laplace", "ldp-gaussian"):
            noise = kind.split("-")[1]
            pol = CascadeLDP(
                o["epsilon"], noise, o.get("calibration", "basic"), o["calibration_delta"], o["noise_factor"],
                o["factor_on"], init=o["init"], ties=o["ties"],
            )  # fmt: skip
        elif kind in ("ldp-laplace-sound", "ldp-gaussian-sound"):
            noise = kind.split("-")[1]
            pol = CascadeLDPFixed(
                o["epsilon"],
                noise,
                o.get("calibration_delta", 1e-3),
                o["noise_factor"],
                o["factor_on"],
                ties=o["ties"],
            )
        elif kind == "dp":
            pol = CascadeDP(
                o["epsilon"], o["c1"], o["noise_factor"], o["factor_on"], init=o["init"], ties=o["ties"]
            )
        elif kind == "dp-sound":
            pol = CascadeDPCounts(o["epsilon"], o["noise_factor"], o["factor_on"], ties=o["ties"])
        else:
            from bandits.cascading.cucb_ldp_gaussian import CUCBLDPGaussian

            pol = CUCBLDPGaussian(
                o["epsilon"],
                o["calibration_delta"],
                o["noise_factor"],
                o["factor_on"],
                init=o["init"],
                ties=o["ties"],
            )
        k = problem(env.structure).k
        lines = [f"L = {env.n_arms} items, K = {k}; initialisation: {pol.init}; ties: {pol.ties}"]
        config: dict[str, Any] = {"K": k, "init": pol.init, "ties": pol.ties}
        for f in ("epsilon", "noise_factor", "factor_on", "calibration", "calibration_delta", "c1", "noise"):
            if hasattr(pol, f):
                config[f] = getattr(pol, f)
        delta = getattr(pol, "calibration_delta", 1e-3)
        extra, facts = _noise_lines(pol, k, env.n_arms, horizon, delta)
        if _is_cucb_ldp_gaussian(pol):
            sigma = pol.noise_factor * pol.sigma(k)
            mu = math.sqrt(k) / sigma
            extra.append(
                f"report: K = {k} outcomes + N(0, s^2), s = {pol.sigma(k):.6g} x {pol.noise_factor:g} "
                f"= {sigma:.6g}; users t >= 1: mu = {mu:.6g}-GDP, "
                f"eps = {tight_gaussian_epsilon(sigma, math.sqrt(k), delta):.6g} "
                f"at delta = {delta:g} (exact)"
            )
        config.update(facts)
        return Configured(pol, pol.name, lines=tuple(lines + extra), config=config)

    return build


def _is_cucb_ldp_gaussian(policy: Any) -> bool:
    """Whether ``policy`` is a CUCB-LDP-Gaussian, without importing its module for the others (a
    CUCB-LDP-Gaussian's module is imported once one exists)."""
    module = sys.modules.get("bandits.cascading.cucb_ldp_gaussian")
    return module is not None and isinstance(policy, module.CUCBLDPGaussian)


def _published(policy: Any, horizon: int, n_arms: int, delta: float) -> dict[str, float]:
    cd = getattr(policy, "calibration_delta", None)
    gaussian_claim = (
        getattr(policy, "noise", "gaussian") == "gaussian" or getattr(policy, "calibration", "") == "theorem7"
    )
    if cd is not None and (_is_cucb_ldp_gaussian(policy) or gaussian_claim):
        return {"paper": float(policy.epsilon)} if delta >= cd else {}
    return {"paper": float(policy.epsilon)}


def _extras(policy: Any, horizon: int, n_arms: int) -> dict[str, Any]:
    return {"paper_epsilon": float(policy.epsilon)}


def _audit_horizon(policy: Any, horizon: int, n_arms: int) -> int:
    from bandits.cascading.audit import cascade_audit_horizon
    from bandits.cascading.policies import CascadePolicy

    if _is_cucb_ldp_gaussian(policy):
        return min(horizon, 32)
    return (
        cascade_audit_horizon(policy, horizon, n_arms, 1)
        if isinstance(policy, CascadePolicy)
        else min(horizon, 32)
    )


def _audit_cascade(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.cascading.audit import audit_cascade_policy

    return audit_cascade_policy(policy, horizon, env, settings)


def _audit_cucb(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.cascading.audit import audit_cucb_ldp_gaussian

    return audit_cucb_ldp_gaussian(policy, horizon, env, settings)


def _spec(
    key: str, kind: str, title: str, privacy: str, opts: tuple[Option, ...], paper: Citation = WANG_2021
) -> AlgorithmSpec:
    private = privacy != "none"
    cucb = kind == "cucb"
    return AlgorithmSpec(
        key=key,
        title=title,
        paper=paper,
        feedback=Feedback.SEMI_BANDIT if cucb else Feedback.CASCADE,
        privacy=privacy,
        unit=UNIT if private else None,
        default_env=CUCB_ENV if cucb else PAPER_ENV,
        default_horizon=DEFAULT_HORIZON,
        options=opts,
        build=_build(kind),
        auditor=(_audit_cucb if cucb else _audit_cascade) if private else None,
        published_bounds=_published if private else None,
        privacy_extras=_extras if private else None,
        default_audit_horizon=_audit_horizon,
        env_parser=parse_combinatorial_env if cucb else parse_cascade_env,
    )


NOT_PRIVATE = "not private (as specified)"
LDP_OPTS = (EPSILON, CAL_DELTA, NOISE_FACTOR, FACTOR_ON, INIT, TIES)

SPECS = (
    _spec(
        "cascade-ucb",
        "ucb",
        f"CascadeUCB1 ({KVETON_2015.short}), the non-private reference of {WANG_2021.short}",
        "none",
        (INIT, TIES),
        KVETON_2015,
    ),
    _spec(
        "cascade-dp",
        "dp",
        f"Cascading-UCB under DP ({WANG_2021.short}, Alg. 1): per-item hybrid counters at eps/L, un-noised "
        "counts",
        NOT_PRIVATE,
        (EPSILON, C1_OPT, NOISE_FACTOR, FACTOR_ON, INIT, TIES),
    ),
    _spec(
        "cascade-dp-sound",
        "dp-sound",
        "Cascading-UCB under DP with private counts: one time-indexed hybrid counter of clicks, examinations",
        "central pure DP",
        (EPSILON, NOISE_FACTOR, FACTOR_ON, TIES),
    ),
    _spec(
        "cascade-ldp-laplace",
        "ldp-laplace",
        f"Cascading-UCB under LDP ({WANG_2021.short}, Alg. 2; Theorem 7 variant), Lap(K/eps) per examined "
        "position",
        NOT_PRIVATE,
        (EPSILON, CALIBRATION, CAL_DELTA, NOISE_FACTOR, FACTOR_ON, INIT, TIES),
    ),
    _spec(
        "cascade-ldp-gaussian",
        "ldp-gaussian",
        f"Cascading-UCB under LDP ({WANG_2021.short}, Alg. 3), N(0, sigma^2) per examined position",
        NOT_PRIVATE,
        LDP_OPTS,
    ),
    _spec(
        "cascade-ldp-laplace-sound",
        "ldp-laplace-sound",
        "Cascading-UCB under LDP with fixed-length reports, Lap(2/eps) on K values (sound variant)",
        "local pure DP",
        (EPSILON, NOISE_FACTOR, FACTOR_ON, TIES),
    ),
    _spec(
        "cascade-ldp-gaussian-sound",
        "ldp-gaussian-sound",
        "Cascading-UCB under LDP with fixed-length reports, Gaussian, l2 sensitivity sqrt(2) (sound variant)",
        "local approximate DP",
        (EPSILON, CAL_DELTA, NOISE_FACTOR, FACTOR_ON, TIES),
    ),
    _spec(
        "cucb-ldp-gaussian",
        "cucb",
        f"CUCB under LDP ({WANG_2021.short}, Alg. 4) with Gaussian reports",
        NOT_PRIVATE,
        (EPSILON, CAL_DELTA, NOISE_FACTOR, FACTOR_ON, INIT, CSB_TIES),
    ),
)

__all__ = ["SPECS"]
