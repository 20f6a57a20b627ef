"""The audit of the private matroid bandits (``dpaudit run dpucb-mat`` / ``dpts-mat``).

* **the initialisation release** (``init="paper"``) — the real agent plays its initialisation
  round on two neighbouring inputs that differ in the record w₀ (all arms 1 vs all arms 0); the
  released vector ``w̃ = w₀ + Lap(1/ε₀)^L`` is read from the agent and thresholded on its
  full-vector likelihood ratio ``ε₀ Σ_e (|w̃_e| − |w̃_e − 1|)`` (Neyman–Pearson optimal; maximal,
  L·ε₀, on the event {every w̃_e ≥ 1}). The ε lower bound is compared with the toolkit's
  certificate (L·ε₀) and with the paper's ε (Theorems 1/3), which it refutes when L·ε₀ > ε.
* **the action sequences** (:func:`bandits.auditing.black_box.audit_policy`). For
  ``init="public-w0"`` round 0 is not a protected record, so its pairs change round 1 instead.

The initialisation audit's floor, with ``--audit-floor algorithm`` or kept from such a run, is
measured on the agent: the same audit, whole, on the agent with its privacy noise scaled by 1/L
(:func:`init_release_leak_floor`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from bandits.auditing.black_box import PairDesign, audit_policy, candidate_pairs
from bandits.auditing.claims import (
    certified_claim,
    detection_floor,
    published_claim,
)
from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.mechanism_floor import with_measured_floor
from bandits.auditing.replicated_floor import replicated_leak_floor
from bandits.environments import Environment
from bandits.policy import Outcomes, Policy, RunContext
from bandits.structures.combinatorial import problem
from dpaudit.audit import AuditReport, Bonferroni, Empirical, epsilon_lower_bound
from dpaudit.audit.leak_floor import LeakFloor
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

__all__ = ["init_release_samples", "audit_init_release", "init_release_leak_floor", "audit_matroid_policy",
           "DEFAULT_INIT_TRIALS", "INIT_FLOOR_REPLICATES"]

DEFAULT_INIT_TRIALS = 20_000
"""Initialisation releases per neighbour for the initialisation audit."""

INIT_FLOOR_REPLICATES = 16
"""Whole initialisation audits per leak factor of its measured floor (each runs the agent's
initialisation 2·10⁴ times per neighbour, ~2.7 s of CPU: the white-box test's detection curve is
steep, and 64 would cost about 20 minutes per algorithm)."""


def init_release_samples(
    policy: Policy, env: Environment, w0: np.ndarray, n: int, seed: np.random.SeedSequence, block: int = 4096
) -> np.ndarray:
    """(n, L) initialisation releases w̃ of the real agent on the first outcome row ``w0``."""
    L = env.n_arms
    row = np.asarray(w0, dtype=float).reshape(1, 1, L)
    out = []
    for b, start in enumerate(range(0, n, block)):
        size = min(block, n - start)
        seeds = np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (b,)).spawn(size)
        run = RunContext(L, 2, env.structure, RepRandom(seeds), RepRandom(seeds).child(2), RunLedgers(size))
        agent = policy.agent(run)
        agent.run_chunk(0, 1, Outcomes(np.broadcast_to(row, (size, 1, L)), policy.feedback))
        rel = getattr(agent, "released_init", None)
        if rel is None:
            raise ValueError(
                f"{policy.name} makes no initialisation release (init must be 'paper' or 'public-w0')"
            )
        out.append(np.asarray(rel))
    return np.concatenate(out, axis=0)


def _init_bound(policy: Policy, sampler: Policy, env: Environment, n: int, root: np.random.SeedSequence,
                confidence: float, delta: float) -> tuple[float, str]:  # fmt: skip
    """The ε lower bound of the initialisation test on ``n`` releases per neighbour of ``sampler``'s
    agent (``policy`` itself, or a noise-scaled variant of it), the likelihood ratio being that of
    the declared ``policy``; and the statistic's name."""
    L, K = env.n_arms, problem(env.structure).k
    eps0 = policy.epsilon0(K)  # type: ignore[attr-defined]
    null, alt = (
        init_release_samples(sampler, env, np.full(L, w), n,
                             np.random.SeedSequence(root.entropy, spawn_key=(0xA0D17, i)))  # fmt: skip
        for i, w in enumerate((1.0, 0.0))
    )

    def llr(y: np.ndarray) -> np.ndarray:  # log p(y | w0 = 1) − log p(y | w0 = 0), rounded (post-processing)
        return np.round(eps0 * (np.abs(y) - np.abs(y - 1.0)).sum(axis=1), 9)

    bound = epsilon_lower_bound(llr(null), llr(alt), delta=delta, confidence=confidence,
                                selection=Bonferroni())  # fmt: skip
    statistic = f"full-vector likelihood ratio of the initial release (L = {L}, eps0 = {eps0:.6g})"
    return float(bound.epsilon), statistic


def init_release_leak_floor(
    policy: Policy, env: Environment, *, trials: int, confidence: float, delta: float, floor_seed: int = 0,
    replicates: int = INIT_FLOOR_REPLICATES,
) -> LeakFloor:
    """The initialisation audit's floor measured on the real agent: whole initialisation audits of
    the agent with its privacy noise scaled by 1/L
    (:func:`bandits.auditing.replicated_floor.replicated_leak_floor`)."""
    n = check_integer("trials", trials, 100)
    claim = certified_claim(policy, 2, env, delta).epsilon
    if claim is None:
        raise ValueError(f"{policy.name} certifies no epsilon for its initialisation: no floor to measure")

    def bound(variant: Policy, seed: list[int]) -> float:
        return _init_bound(policy, variant, env, n, np.random.SeedSequence(seed), confidence, delta)[0]

    return replicated_leak_floor(bound, policy, "epsilon", claim, floor_seed=floor_seed,
                                 replicates=replicates)  # fmt: skip


def audit_init_release(
    policy: Policy,
    env: Environment,
    *,
    trials: int = DEFAULT_INIT_TRIALS,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
    settings: AuditSettings | None = None,
) -> tuple[AuditReport, AuditReport | None]:
    """Audit the initialisation release (module docstring): (vs the toolkit's certificate, vs the
    paper's claim). With ``settings``, its floor is the one measured on the agent
    (:func:`init_release_leak_floor`) or kept from such a measurement, as ``settings.floor`` asks."""
    n = check_integer("trials", trials, 100)
    L, K = env.n_arms, problem(env.structure).k
    eps0 = policy.epsilon0(K)  # type: ignore[attr-defined]
    root = np.random.SeedSequence(check_integer("seed", seed, 0), spawn_key=(0xA0D17,))
    lower, statistic = _init_bound(policy, policy, env, n, root, confidence, delta)
    empirical = Empirical(
        epsilon_lower=lower,
        mu_lower=None,
        delta=delta,
        confidence=confidence,
        trials=2 * n,
        method="clopper-pearson, bonferroni over a pre-registered threshold grid",
        statistic=statistic,
    )
    details = {
        "neighbours": "the initial record w0: every arm 1 vs every arm 0 (replace one round's reward vector)",
        "exact_max_loss": L * eps0,
        "per_round_epsilon": K * eps0,
        "detection_floor": detection_floor(n, delta=delta, confidence=confidence),
    }
    target = f"{policy.name}: initialisation release (white box)"
    own = AuditReport.build(
        target=target, certified=certified_claim(policy, 2, env, delta), empirical=empirical, details=details
    )
    if settings is not None:
        measured, kept = algorithm_floor(
            "initialisation release", settings, [policy, env, n, confidence, delta],
            lambda: init_release_leak_floor(policy, env, trials=n, confidence=confidence, delta=delta,
                                            floor_seed=settings.floor_seed))  # fmt: skip
        own = with_measured_floor(own, measured, kept)
    claim = published_claim(policy, 2, env, delta)
    pub = (
        None
        if claim is None
        else AuditReport.build(target=target, certified=claim, empirical=empirical, details=own.details)
    )
    return own, pub


def _shift_pairs(pairs: list[PairDesign], horizon: int) -> list[PairDesign]:
    """The same designs with changes at round 0 moved to round 1 (w₀ public: round 0 unprotected)."""
    out = []
    for p in pairs:
        r = max(1, p.round) if horizon > 1 else p.round
        out.append(
            dataclasses.replace(
                p, round=r, name=p.name.replace(" 0 ", f" {r} ").replace("round 0", f"round {r}")
            )
        )
    return out


def audit_matroid_policy(
    policy: Policy,
    horizon: int,
    env: Environment,
    settings: AuditSettings,
    *,
    init_trials: int = DEFAULT_INIT_TRIALS,
) -> PolicyAudit:
    """The audit ``dpaudit run dpucb-mat`` / ``dpts-mat`` runs (module docstring): the
    :class:`~bandits.auditing.contract.PolicyAuditor` of the matroid family."""
    init = getattr(policy, "init", "cover")
    pairs = candidate_pairs(horizon, env.n_arms)
    if init == "public-w0":
        pairs = _shift_pairs(pairs, horizon)
    both = init == "paper" and getattr(policy, "private", False)
    each = settings.shared(2) if both else settings  # two tests with the paper's initialisation
    actions = audit_policy(policy, horizon, env, each, pairs=pairs)
    floor = detection_floor(settings.trials, delta=settings.delta, confidence=each.confidence)
    if not both:
        return PolicyAudit(actions, {}, None, floor)
    own, pub = audit_init_release(policy, env, trials=init_trials, seed=settings.seed,
                                  confidence=each.confidence, delta=settings.delta,
                                  settings=settings)  # fmt: skip
    return PolicyAudit(own, {"action sequences": actions}, pub, own.details["detection_floor"])
