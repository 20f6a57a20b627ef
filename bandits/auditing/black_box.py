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
main sample size; then the main sample — new seeds, never seen by the selection — is tested
with that one test. Two Clopper–Pearson bounds at level α/2 each (Clopper & Pearson 1934;
union bound) give the false-positive and false-negative rates, and the rates give ε at δ
(Kairouz, Oh & Viswanath 2015, Thm 2.1) and μ (Dong, Roth & Su 2022, Cor. 2.13). The pilot's
choice depends only on pilot data, so no multiplicity correction is needed. The pilot ranks tests
by the μ bound they predict, or by the ε bound for a pure ε-DP guarantee (there the most telling
test sits in a tail rather than in the middle) (:func:`dpaudit.audit.pilot.pilot_choice`,
pessimistic pilot rates against the winner's curse).

**Pairs.** Both tables are fixed (every trajectory is a draw of the mechanism's output on that
input): constant outcome columns — all arms tied at 1/2, or one leader slightly ahead — so that
every arm stays competitive, and a change at round τ ∈ {0, N} of either the whole outcome row (1
vs 0: whichever arm is played observes a different reward; a legal neighbour for the units
"one reward", "one round's reward vector" and "one user's feedback") or of one arm's entry (so
an implementation whose noise is wrong on one arm only cannot hide behind the others). An
algorithm may bring its own family (``pairs=``), e.g. a count gap inside a long epoch for
report-noisy-max, or rewards at an elimination threshold (``overrides`` set rows before the change).

**Limits.** Every report states the detection floor of its certifying test
(:mod:`dpaudit.audit.power`: the smallest true μ — or, for a pure-ε certificate, the smallest ε of
the canonical (ε, δ) pair — whose median bound is positive at this sample size; the verdict is
``inconclusive`` when the certificate is below it, or when the pilot found no test with a
positive predicted bound: then the main test still runs and can refute, but a bound of 0 there
is no evidence) and the two-sided interval for the μ the test exhibits
(:mod:`dpaudit.audit.estimate`). **Published claims.** When the declaration carries the
paper's claim, the same bounds are compared with it too (``published_verdict``): a published ε
below the certified one can be refuted by the audit.

Example:
    >>> from bandits.thompson.policy import GaussianTS
    >>> rep = audit_policy(GaussianTS(b=1, c=1.0), 60, "bernoulli:0.5,0.5", AuditSettings(trials=2000))
    >>> rep.verdict, rep.details["chosen"]["statistic"].startswith("plays of arm")
    ('consistent', True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass

import numpy as np

from bandits.actions import ActionStructure
from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.leak_floor import (
    DEFAULT_REPLICATES,
    POOL_PILOTS,
    NoiseScaled,
    certified_quantity,
    detections,
    error_counts,
    scoring_size,
)
from bandits.engine.simulator import simulate
from bandits.environments import Environment, RewardTableEnv, parse_env
from bandits.policy import Policy
from dpaudit.accounting import account
from dpaudit.audit import (
    AuditReport,
    Certified,
    Empirical,
    epsilon_lower_bound_from_counts,
    mu_lower_bound_from_counts,
)
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.leak_floor import LeakFloor, leak_floor
from dpaudit.audit.pilot import PilotChoice, pilot_choice
from dpaudit.audit.power import floor_report
from dpaudit.audit.thresholds import threshold_errors
from dpaudit.tasks import run_tasks
from dpaudit.validation import check_integer

__all__ = [
    "PairDesign",
    "ArmCount",
    "candidate_pairs",
    "audit_inputs",
    "audit_policy",
    "black_box_audit",
    "certify_chosen",
    "declared_certificate",
    "reachable_pairs",
    "black_box_leak_floor",
    "BLOCK",
]

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
    values: tuple[float, float] | tuple[tuple[float, ...], tuple[float, ...]] = (1.0, 0.0)
    overrides: tuple[tuple[int, int, tuple[float, ...]], ...] = ()

    def tables(self, horizon: int) -> tuple[np.ndarray, np.ndarray]:
        """The null and alternative (T, N) tables (``overrides``: rows [start, stop) set to the
        given outcome vector before the change)."""
        null = np.tile(np.asarray(self.base, dtype=float), (horizon, 1))
        for start, stop, row in self.overrides:
            null[start:stop] = np.asarray(row, dtype=float)
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


def _block_statistics(task: tuple) -> np.ndarray:
    """Simulate ``n`` trajectories on one fixed table and return every statistic (n, S).
    The task is ``(policy, table, horizon, n, seed, stats[, structure])``: the structure of the
    audited problem (one arm when absent)."""
    policy, table, horizon, n, seed, stats = task[:6]
    structure = task[6] if len(task) > 6 else None
    res = simulate(
        policy,
        RewardTableEnv(table, action_structure=structure),
        horizon,
        n,
        seed,
        record_actions=True,
        progress=False,
        checkpoints=(),
        ledgers=False,
    )
    return np.stack([s(res.actions) for s in stats], axis=1)


def _sample_all(
    policy: Policy,
    horizon: int,
    n: int,
    samples: Sequence[tuple[np.ndarray, tuple[int, ...], tuple]],
    seed: int,
    executor: Executor | None,
    structure: ActionStructure | None = None,
) -> list[np.ndarray]:
    """For each ``(table, key, stats)`` in ``samples``: the statistics (n, S) of ``n`` trajectories
    on ``table``, simulated in blocks of :data:`BLOCK` seeded by ``key`` and the block's index.
    Every block of every sample goes to the executor in one batch (a pilot's candidates and a
    certification's two sides run side by side on a pool), and a block's numbers depend only on
    its seed."""
    sizes = [BLOCK] * (n // BLOCK) + ([n % BLOCK] if n % BLOCK else [])
    tasks = [
        (policy, table, horizon, sz, np.random.SeedSequence(seed, spawn_key=key + (i,)), stats, structure)
        for table, key, stats in samples
        for i, sz in enumerate(sizes)
    ]
    blocks = run_tasks(_block_statistics, [(t,) for t in tasks], executor=executor)
    k = len(sizes)
    return [np.concatenate(blocks[j * k : (j + 1) * k], axis=0) for j in range(len(samples))]


def declared_certificate(
    policy: Policy, horizon: int, env: Environment, delta: float
) -> tuple[Certified, Certified | None]:
    """The toolkit's certified values and the paper's claim (None if the declaration has none).
    A μ is certified only when the guarantee is GDP; a pure ε-DP certificate is its ε at δ."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        return Certified(source="none: the policy declares no privacy"), None
    acc = account(decl.event, delta=delta)
    gdp = decl.guarantee == "gdp"
    cert = Certified(mu=acc.mu if gdp else None, epsilon=acc.best.value, delta=delta, source="dpaudit")
    claim = decl.published
    if claim is None:
        return cert, None
    eps = claim.epsilon_at(delta)
    if eps is None and claim.mu is None:
        return cert, None
    return cert, Certified(mu=claim.mu, epsilon=eps, delta=delta, source=claim.source)


def certify_chosen(
    x: np.ndarray, y: np.ndarray, orientation: int, threshold: float, *, delta: float, confidence: float,
    statistic: str,
) -> tuple[Empirical, int, int]:
    """The one test a pilot chose, certified on fresh samples ``x`` (null) and ``y``
    (alternative): (Clopper–Pearson ε and μ lower bounds, false positives, false negatives).
    "x′" is decided when o·(s − thr) > 0, the convention of :mod:`dpaudit.audit.thresholds`."""
    n0, n1 = x.size, y.size
    fp, fn = threshold_errors(x, y, threshold, orientation)
    eb = epsilon_lower_bound_from_counts(fp, n0, fn, n1, delta=delta, confidence=confidence)
    mb = mu_lower_bound_from_counts(fp, n0, fn, n1, confidence=confidence)
    empirical = Empirical(
        epsilon_lower=float(eb.epsilon),
        mu_lower=float(mb.mu),
        delta=delta,
        confidence=confidence,
        trials=n0 + n1,
        method="clopper-pearson, one test chosen on an independent pilot",
        statistic=statistic,
    )
    return empirical, fp, fn


def audit_inputs(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    settings: AuditSettings,
    pilot_fraction: float,
    select: str | None,
) -> tuple[Environment, int, int, Certified, Certified | None, str]:
    """The checked inputs of a piloted policy audit: (environment, horizon, trials per side, the
    declaration's certificate, the published claim, the ranking ``"mu"`` or ``"epsilon"``; by
    default ε for a pure ε-DP declaration, else μ). ``ValueError`` names a bad parameter."""
    if isinstance(env, str):
        env = parse_env(env)
    T = check_integer("horizon", horizon, 2)
    n = check_integer("trials", settings.trials, 10)
    if not (0.0 < pilot_fraction <= 1.0):
        raise ValueError(f"pilot_fraction must be in (0, 1], got {pilot_fraction!r}")
    cert, published = declared_certificate(policy, T, env, settings.delta)
    if select is None:
        select = "mu" if cert.mu is not None or cert.epsilon is None else "epsilon"
    if select not in ("mu", "epsilon"):
        raise ValueError(f"select must be 'mu' or 'epsilon', got {select!r}")
    return env, T, n, cert, published, select


def pilot_size(trials: int, fraction: float, least: int) -> int:
    """Pilot runs per side per candidate: ``fraction`` of the main sample, at least ``least``."""
    return max(least, math.ceil(fraction * trials))


def _design(pairs: Sequence[PairDesign] | None, T: int, n_arms: int) -> list[PairDesign]:
    """The audit's candidate pairs: ``pairs`` (default :func:`candidate_pairs`) that fit in ``T``."""
    return reachable_pairs(list(pairs) if pairs is not None else candidate_pairs(T, n_arms), T)


def audit_policy(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    settings: AuditSettings,
    *,
    pilot_fraction: float = 0.1,
    pairs: Sequence[PairDesign] | None = None,
    select: str | None = None,
) -> AuditReport:
    """Audit ``policy`` at ``horizon`` with ``settings.trials`` trajectories per neighbouring
    table (module docstring); the pilot adds ``pilot_fraction·trials`` (at least 100) per side
    per candidate pair. ``env`` gives the number of arms and the action structure (its outcome
    law is not used: the tables are fixed). ``pairs``: the pre-registered pair family (default
    :func:`candidate_pairs`). ``select``: the pilot ranks tests by their predicted ``"mu"`` or
    ``"epsilon"`` bound (default: ε for a pure ε-DP declaration, else μ)."""
    env, T, n, cert, published, select = audit_inputs(policy, horizon, env, settings, pilot_fraction, select)
    t0 = time.perf_counter()
    cands = _design(pairs, T, env.n_arms)
    n_pilot = pilot_size(n, pilot_fraction, 100)
    pc, pair, stat = _pilot(policy, env, T, n, n_pilot, cands, select, settings)
    t1 = time.perf_counter()
    null_t, alt_t = pair.tables(T)
    ex, seed, delta, conf = settings.executor, settings.seed, settings.delta, settings.confidence
    x, y = (v[:, 0] for v in _sample_all(
        policy, T, n, [(null_t, (1, 0), (stat,)), (alt_t, (1, 1), (stat,))], seed, ex, env.structure))
    o, thr = pc.orientation, pc.threshold
    empirical, fp, fn = certify_chosen(x, y, o, thr, delta=delta, confidence=conf, statistic=stat.describe())
    t2 = time.perf_counter()
    certified = cert.mu is not None or cert.epsilon is not None
    measured, kept, floor = None, None, None
    if certified:
        measured, kept = algorithm_floor(
            "outputs", settings, [policy, T, env, pilot_fraction, pairs, select],
            lambda: black_box_leak_floor(policy, T, env, settings.for_floor(), pilot_fraction=pilot_fraction,
                                         pairs=pairs, select=select))  # fmt: skip
    if measured is not None:
        floor_text = measured.describe()
    else:
        floor = floor_report(n, n, (1.0 - conf) / 2.0, certified_mu=cert.mu, certified_epsilon=cert.epsilon,
                             delta=delta)  # fmt: skip
        floor_text = floor.describe()
    t3 = time.perf_counter()
    details = {
        "view": "outputs",
        "detection_floor": floor_text,
        "chosen": {
            "pair": asdict(pair), "statistic": stat.describe(), "threshold": thr, "orientation": o,
            "ranked_by": select, "predicted": pc.predicted, "false_positives": fp, "false_negatives": fn,
        },
        "candidates": [p.name for p in cands],
        "pilot_trials_per_side": n_pilot,
        "seed": seed,
        "seconds": {"pilot": t1 - t0, "main": t2 - t1, **({"floor": t3 - t2} if measured else {})},
    }  # fmt: skip
    if measured is not None:
        details["algorithm_floor"] = measured.to_dict()
    if kept is not None:
        details["algorithm_floor_kept"] = kept
    blind = pc.predicted <= 0  # the pilot saw nothing: the main test runs, but proves no power
    if blind:
        details["no_power"] = (
            f"the pilot found no test with a positive predicted bound on {len(cands)} pair(s), "
            f"{n_pilot} runs per side each: the action sequences did not show the declared loss"
        )
    return AuditReport.build(
        target=f"{policy.name} (black box)",
        certified=cert,
        empirical=empirical,
        details=details,
        floor=floor if certified else None,
        estimate=mu_interval_from_counts(fp, n, fn, n, confidence=conf),
        published=published,
        inconclusive=blind or (measured is not None and not measured.has_power),
    )


def reachable_pairs(cands: list[PairDesign], horizon: int) -> list[PairDesign]:
    """The pairs whose change happens before ``horizon`` (an error if there is none)."""
    reachable = [c for c in cands if c.round < horizon]
    if cands and not reachable:
        raise ValueError(
            f"no neighbouring pair of the audit is reachable within the audit horizon {horizon}: the first "
            f"changes round {min(c.round for c in cands)}; use a longer --horizon (or --audit-trials 0)"
        )
    return reachable


def _pilot(
    policy: Policy, env: Environment, T: int, n: int, n_pilot: int, cands: list[PairDesign], select: str,
    settings: AuditSettings,
) -> tuple[PilotChoice, PairDesign, ArmCount]:  # fmt: skip
    """Pilot trajectories of every candidate pair; the chosen test, its pair and its statistic."""
    drawn = pilot_samples(policy, env, T, n_pilot, cands, settings, (0,))[0]
    return choose(drawn, env, n, cands, select, settings)


def pilot_samples(
    policy: Policy, env: Environment, T: int, n_pilot: int, cands: Sequence[PairDesign],
    settings: AuditSettings, *prefixes: tuple[int, ...],
) -> list[list[np.ndarray]]:  # fmt: skip
    """For each seed-key prefix, ``n_pilot`` trajectories on both tables of every candidate: one
    list per prefix of (null, alternative) arrays (n_pilot, N) of every arm's play count after the
    changed round, candidate by candidate. All prefixes go to the executor in one batch."""
    samples = []
    for pre in prefixes:
        for c, pair in enumerate(cands):
            stats = tuple(ArmCount(j, pair.round) for j in range(env.n_arms))
            null_t, alt_t = pair.tables(T)
            samples += [(null_t, pre + (c, 0), stats), (alt_t, pre + (c, 1), stats)]
    drawn = _sample_all(policy, T, n_pilot, samples, settings.seed, settings.executor, env.structure)
    k = 2 * len(cands)
    return [drawn[i * k : (i + 1) * k] for i in range(len(prefixes))]


def choose(
    drawn: Sequence[np.ndarray], env: Environment, n: int, cands: Sequence[PairDesign], select: str,
    settings: AuditSettings,
) -> tuple[PilotChoice, PairDesign, ArmCount]:  # fmt: skip
    """The pilot's choice on one pilot sample (``drawn``: :func:`pilot_samples`' arrays)."""
    pilots, keys = [], []
    for c, pair in enumerate(cands):
        x, y = drawn[2 * c], drawn[2 * c + 1]
        for j in range(env.n_arms):
            pilots.append((x[:, j], y[:, j], None))
            keys.append((pair, ArmCount(j, pair.round)))
    pc = pilot_choice(pilots, n, confidence=settings.confidence, kind=select, delta=settings.delta)
    pair, stat = keys[pc.candidate]
    return pc, pair, stat


def black_box_audit(
    policy: Policy, horizon: int, env: Environment, settings: AuditSettings,
    pairs: Sequence[PairDesign] | None = None,
) -> PolicyAudit:  # fmt: skip
    """The generic :class:`~bandits.auditing.contract.PolicyAuditor`: :func:`audit_policy` with the
    run's settings (and a family's own pair designs), as a one-component :class:`PolicyAudit`."""
    return PolicyAudit(audit_policy(policy, horizon, env, settings, pairs=pairs))


def black_box_leak_floor(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    settings: AuditSettings,
    *,
    pilot_fraction: float = 0.1,
    pairs: Sequence[PairDesign] | None = None,
    select: str | None = None,
    replicates: int = DEFAULT_REPLICATES,
    pool_pilots: int = POOL_PILOTS,
) -> LeakFloor:
    """The detection floor of :func:`audit_policy` (same arguments) measured on the policy's own
    noise-scaled runs (:mod:`bandits.auditing.leak_floor`): ``replicates`` pilots per leak
    factor, subsampled from a pool of ``pool_pilots`` pilots' worth of runs, their tests scored
    on :data:`~bandits.auditing.leak_floor.SCORING_MAINS` main samples' worth of further runs.
    Its runs are seeded from ``settings.seed`` under keys of their own and are the same at every
    leak factor; the audit passes :meth:`~bandits.auditing.contract.AuditSettings.for_floor`, so
    they are independent of the audit's pilot and main samples and the same at every audit seed.

    >>> from bandits.lazy.policies import LazyUCB
    >>> f = black_box_leak_floor(LazyUCB(epsilon=1.0), 4, parse_env("bernoulli:0.5,0.5"),
    ...                          AuditSettings(trials=500), replicates=8, pool_pilots=4)
    >>> f.has_power, 1.0 < f.violate_leak < 16.0
    (True, True)
    """
    env, T, n, cert, _, select = audit_inputs(policy, horizon, env, settings, pilot_fraction, select)
    quantity, certified = certified_quantity(policy, cert)
    cands = _design(pairs, T, env.n_arms)
    n_pilot = pilot_size(n, pilot_fraction, 100)
    alpha, n_rep = (1.0 - settings.confidence) / 2.0, max(1, int(replicates))
    pool, m = check_integer("pool_pilots", pool_pilots, 1), scoring_size(n)

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        variant = NoiseScaled(policy, 1.0 / leak)
        half = pool * n_pilot  # the pilots' pool; the m runs after it score their tests
        runs = pilot_samples(variant, env, T, half + m, cands, settings, (2,))[0]
        rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(4,)))
        fp, fn = np.empty(n_rep, np.int64), np.empty(n_rep, np.int64)
        for r in range(n_rep):
            pick = rng.choice(half, size=n_pilot, replace=False)
            pc, pair, stat = choose([a[pick] for a in runs], env, n, cands, select, settings)
            x, y = (a[half:, stat.arm] for a in runs[2 * cands.index(pair) : 2 * cands.index(pair) + 2])
            fp[r], fn[r] = error_counts(x, y, pc.orientation, pc.threshold)
        return detections(fp, fn, np.ones(n_rep, bool), m, n, alpha, quantity, settings.delta, certified)

    return leak_floor(evaluate, replicates=n_rep, quantity=quantity, certified=certified)
