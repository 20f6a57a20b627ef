"""A black-box audit of any policy: distinguish its action sequences on neighbouring streams.

The released output of a bandit algorithm is its action sequence; neighbouring inputs differ in
one unit of privacy. :func:`audit_policy` turns how well the outputs on two fixed neighbouring
reward tables can be told apart into statistically valid lower bounds on ε at δ and on GDP μ,
and compares them with the certified values of the policy's declaration. It needs nothing from
the policy but :meth:`~bandits.policy.Policy.agent` and :meth:`~bandits.policy.Policy.declare`.

**Valid selection.** A family of candidate neighbour pairs (:class:`PairDesign`) and
statistics (:class:`ArmCount`: how often an arm is played after the changed round) is
registered before any sampling. A *pilot* of fresh trajectories on every candidate picks the
pair, the statistic, its threshold and orientation that predict the largest μ bound at the
main sample size (:func:`dpaudit.audit.thresholds.pilot_choice`, pessimistic pilot rates); then
the main sample — new seeds, never seen by the selection — is tested with that one test. Two
Clopper–Pearson bounds at level α/2 each (Clopper & Pearson 1934;
union bound) give the false-positive and false-negative rates, and the rates give ε at δ
(Kairouz, Oh & Viswanath 2015, Thm 2.1) and μ (Dong, Roth & Su 2022, Cor. 2.13). The pilot's
choice depends only on pilot data, so no multiplicity correction is needed. Every report states
the detection floor of that test (:mod:`dpaudit.audit.power`; the verdict is ``inconclusive``
when the certificate is below it) and the two-sided interval for the μ the test exhibits
(:mod:`dpaudit.audit.estimate`).

**Pairs.** Both tables are fixed (every trajectory is a draw of the mechanism's output on that
input): constant outcome columns — all arms tied at 1/2, or one leader slightly ahead — so that
every arm stays competitive, and a change at round τ ∈ {0, N} of either the whole outcome row (1
vs 0: whichever arm is played observes a different reward; a legal neighbour for the units
"one reward", "one round's reward vector" and "one user's feedback") or of one arm's entry (so
an implementation whose noise is wrong on one arm only cannot hide behind the others).

Example:
    >>> from bandits.gaussian_ts import GaussianTS
    >>> rep = audit_policy(GaussianTS(b=1, c=1.0), 60, "bernoulli:0.5,0.5", trials=2000, progress=False)
    >>> rep.verdict, rep.details["chosen"]["statistic"].startswith("plays of arm")
    ('consistent', True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bandits.environments import Environment, RewardTableEnv, parse_env
from bandits.policy import Policy
from bandits.simulator import simulate
from dpaudit.accounting import account
from dpaudit.audit import (
    AuditReport,
    Certified,
    Empirical,
    epsilon_lower_bound_from_counts,
    mu_lower_bound_from_counts,
)
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.power import floor_report
from dpaudit.audit.thresholds import pilot_choice
from dpaudit.events import check_integer, check_probability

__all__ = ["PairDesign", "ArmCount", "candidate_pairs", "audit_policy", "BLOCK"]

BLOCK = 2048
"""Trajectories per simulated block (fixed, so results do not depend on the executor)."""


@dataclass(frozen=True)
class PairDesign:
    """Two fixed (T, N) tables: constant columns ``base``, except round ``round`` where the
    ``arms`` (None: the whole row) take ``values[0]`` under the null and ``values[1]`` under
    the alternative."""

    name: str
    base: tuple[float, ...]
    round: int
    arms: tuple[int, ...] | None
    values: tuple[float, float] = (1.0, 0.0)

    def tables(self, horizon: int) -> tuple[np.ndarray, np.ndarray]:
        null = np.tile(np.asarray(self.base, dtype=float), (horizon, 1))
        alt = null.copy()
        cols = slice(None) if self.arms is None else list(self.arms)
        null[self.round, cols] = self.values[0]
        alt[self.round, cols] = self.values[1]
        return null, alt


@dataclass(frozen=True)
class ArmCount:
    """How often ``arm`` is played (or included in the set / list) in rounds after ``after``."""

    arm: int
    after: int

    def __call__(self, actions: np.ndarray) -> np.ndarray:
        a = np.asarray(actions)[:, self.after + 1 :]
        hit = a == self.arm
        return hit.reshape(hit.shape[0], -1).sum(axis=1).astype(float)

    def describe(self) -> str:
        return f"plays of arm {self.arm} after round {self.after}"


def candidate_pairs(horizon: int, n_arms: int, max_arms: int = 8) -> list[PairDesign]:
    """The pre-registered family (module docstring): whole-row changes on a tie and with a leader
    at τ = 0 and τ = N, and one-arm changes on a tie at τ = 0 for up to ``max_arms`` arms."""
    tie = (0.5,) * n_arms
    lead = (0.6,) + (0.5,) * (n_arms - 1)
    taus = sorted({0, min(n_arms, horizon - 1)})
    out = [
        PairDesign(f"row {t} 1 vs 0, {bn}", base, t, None)
        for bn, base in (("tie", tie), ("leader", lead))
        for t in taus
    ]
    arms = list(range(min(n_arms, max_arms)))
    if n_arms > max_arms:
        arms[-1] = n_arms - 1
    out += [PairDesign(f"arm {j} at round 0 1 vs 0, tie", tie, 0, (j,)) for j in arms]
    return out


def _block_statistics(task: tuple[Policy, np.ndarray, int, int, np.random.SeedSequence, tuple]) -> np.ndarray:
    """Simulate ``n`` trajectories on one fixed table and return every statistic (n, S)."""
    policy, table, horizon, n, seed, stats = task
    res = simulate(
        policy,
        RewardTableEnv(table),
        horizon,
        n,
        seed,
        record_actions=True,
        progress=False,
        checkpoints=[horizon],
    )
    return np.stack([s(res.actions) for s in stats], axis=1)


def _sample(
    policy: Policy,
    table: np.ndarray,
    horizon: int,
    n: int,
    key: tuple[int, ...],
    seed: int,
    stats: tuple,
    executor: Executor | None,
) -> np.ndarray:
    sizes = [BLOCK] * (n // BLOCK) + ([n % BLOCK] if n % BLOCK else [])
    tasks = [
        (policy, table, horizon, sz, np.random.SeedSequence(seed, spawn_key=key + (i,)), stats)
        for i, sz in enumerate(sizes)
    ]
    parts = executor.map(_block_statistics, tasks) if executor is not None else map(_block_statistics, tasks)
    return np.concatenate(list(parts), axis=0)


def _certified(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified:
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        return Certified(source="none: the policy declares no privacy")
    acc = account(decl.event, delta=delta)
    return Certified(mu=acc.mu, epsilon=acc.best.value, delta=delta, source="dpaudit")


def audit_policy(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    *,
    trials: int,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
    executor: Executor | None = None,
    progress: bool = False,
    pilot_fraction: float = 0.1,
    pairs: Sequence[PairDesign] | None = None,
) -> AuditReport:
    """Audit ``policy`` at ``horizon`` with ``trials`` trajectories per neighbouring table
    (module docstring); the pilot adds ``pilot_fraction·trials`` (at least 100) per side per
    candidate pair. ``env`` gives the number of arms and the action structure (its outcome
    law is not used: the tables are fixed)."""
    if isinstance(env, str):
        env = parse_env(env)
    T = check_integer("horizon", horizon, 2)
    n = check_integer("trials", trials, 10)
    delta = check_probability("delta", delta)
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not (0.0 < pilot_fraction <= 1.0):
        raise ValueError(f"pilot_fraction must be in (0, 1], got {pilot_fraction!r}")
    t0 = time.perf_counter()
    cands = list(pairs) if pairs is not None else candidate_pairs(T, env.n_arms)
    n_pilot = max(100, math.ceil(pilot_fraction * n))
    pilots, keys = [], []
    for c, pair in enumerate(cands):
        stats = tuple(ArmCount(j, pair.round) for j in range(env.n_arms))
        null_t, alt_t = pair.tables(T)
        x = _sample(policy, null_t, T, n_pilot, (0, c, 0), seed, stats, executor)
        y = _sample(policy, alt_t, T, n_pilot, (0, c, 1), seed, stats, executor)
        for s, stat in enumerate(stats):
            pilots.append((x[:, s], y[:, s], None))
            keys.append((pair, stat))
    pc = pilot_choice(pilots, n, confidence=confidence, kind="mu")
    pair, stat = keys[pc.candidate]
    choice: dict[str, Any] = {"mu": pc.predicted, "pair": pair, "statistic": stat,
                              "threshold": pc.threshold, "orientation": pc.orientation}  # fmt: skip
    t1 = time.perf_counter()
    pair, stat = choice["pair"], choice["statistic"]
    null_t, alt_t = pair.tables(T)
    x = _sample(policy, null_t, T, n, (1, 0), seed, (stat,), executor)[:, 0]
    y = _sample(policy, alt_t, T, n, (1, 1), seed, (stat,), executor)[:, 0]
    o, thr = choice["orientation"], choice["threshold"]
    # "x′" when o·(s − thr) > 0 (the convention of dpaudit.audit.thresholds)
    fp, fn = int(np.sum(o * (x - thr) > 0)), int(np.sum(o * (y - thr) <= 0))
    eb = epsilon_lower_bound_from_counts(fp, n, fn, n, delta=delta, confidence=confidence)
    mb = mu_lower_bound_from_counts(fp, n, fn, n, confidence=confidence)
    t2 = time.perf_counter()
    empirical = Empirical(
        epsilon_lower=float(eb.epsilon),
        mu_lower=float(mb.mu),
        delta=delta,
        confidence=confidence,
        trials=2 * n,
        method="clopper-pearson, one test chosen on an independent pilot",
        statistic=stat.describe(),
    )
    cert = _certified(policy, T, env, delta)
    floor = floor_report(n, n, (1.0 - confidence) / 2.0, certified_mu=cert.mu, certified_epsilon=cert.epsilon,
                         delta=delta)  # fmt: skip
    estimate = mu_interval_from_counts(fp, n, fn, n, confidence=confidence)
    details = {
        "detection_floor": floor.describe(),
        "chosen": {
            "pair": asdict(pair),
            "statistic": stat.describe(),
            "threshold": thr,
            "orientation": o,
            "predicted_mu": choice["mu"],
            "false_positives": fp,
            "false_negatives": fn,
        },
        "candidates": [p.name for p in cands],
        "pilot_trials_per_side": n_pilot,
        "seed": seed,
        "seconds": {"pilot": t1 - t0, "main": t2 - t1},
    }
    return AuditReport.build(
        target=f"{policy.name} (black box)",
        certified=cert,
        empirical=empirical,
        details=details,
        floor=floor if cert.mu is not None or cert.epsilon is not None else None,
        estimate=estimate,
    )
