"""A grey-box audit of any policy: distinguish what its mechanisms *release* on neighbouring streams.

The black-box audit (:mod:`bandits.auditing.black_box`) sees only the action sequence; a
noise-scale or budget-split bug shows there only through the few decisions it tips. Every
mechanism of :mod:`mechanisms` also records, when the run keeps transcripts
(:mod:`dpaudit.transcripts`), the value of each release under a key that names it in every run
("lazy epochs arm 2 epoch 1", "tree level 0 node ending at step 3", …). The declared privacy
covers the whole transcript (the actions are a post-processing of it), so a transcript whose
privacy loss exceeds the certificate means the certificate does not describe this implementation
— the threat model of auditing DP-SGD's intermediate updates (Nasr, Song, Thakurta, Papernot &
Carlini 2021), applied to every release of a bandit algorithm.

**Procedure.** The pre-registered pairs of neighbouring reward tables (:func:`release_pairs`):
whole-row changes, one arm's reward at the round where the policy first plays it
(:func:`first_plays`), and the swap of arms 0 and 1 — a click at position 1 vs 2 for a cascade.
A pilot of fresh runs on both tables of each pair comes in two parts:

1. *fit* (a quarter, x and x′ run on the *same seeds*, so that the noise cancels in each pair of
   runs that made the same decisions): for every release key, how often the change moves it,
   its shift where it does (the median paired difference), its centre under x (median) and
   its spread (median absolute deviation); the keys that move are the releases the changed
   unit reaches;
2. *score* (the rest, independent seeds, for the :data:`SCORED_PAIRS` pairs whose reached
   releases are strongest): the candidate statistics — each reached release alone (its value;
   for a release with few values, such as an argmax, each value's indicator), and the summed
   privacy loss over all reached releases in the shape of a Laplace mechanism (clipped linear)
   and of a Gaussian one (linear), each release weighted by its fitted scale — are scored by
   :func:`dpaudit.audit.pilot.pilot_choice` (the bound each would give at the main size).

The chosen statistic (its keys, centres and weights frozen by the pilot) is then certified on a
main sample of fresh runs with two Clopper–Pearson bounds (:func:`certify_chosen`), so the
selection needs no multiplicity correction. A release missing from a run counts as no loss (a
value statistic puts it below every value). When the pilot finds no statistic with a positive
predicted bound, the report is ``inconclusive`` and says so.

Example:
    >>> from bandits.lazy.policies import LazyUCB
    >>> rep = audit_releases(LazyUCB(epsilon=1.0), 6, "bernoulli:0.5,0.5,0.5", AuditSettings(trials=2000))
    >>> rep.verdict.value, rep.details["chosen"]["statistic"]
    ('consistent', "value of release 'epoch 0 mean of arm 0'")
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bandits.auditing.black_box import PairDesign, audit_inputs, certify_chosen, reachable_pairs
from bandits.auditing.contract import AuditSettings
from bandits.engine.simulator import simulate
from bandits.environments import Environment, RewardTableEnv
from bandits.policy import Policy
from dpaudit.audit import AuditReport, Certified, Empirical
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.pilot import PilotChoice, pilot_choice
from dpaudit.audit.power import floor_report
from dpaudit.tasks import run_tasks
from dpaudit.transcripts import merge

__all__ = ["ReleaseStatistic", "release_pairs", "records_releases", "audit_releases", "BLOCK"]

BLOCK = 1024
"""Runs per simulated block (fixed, so results do not depend on the executor)."""

MISSING = -1e300
"""The value statistic of a run that made no such release (below every released value)."""

MIN_REACH = 0.1
"""A release counts as reached when the change moves it in at least this fraction of the fit runs."""

TOP_VALUES = 6

SCORED_PAIRS = 4
"""How many pairs (those with the strongest reached releases in the fit runs) the pilot scores."""

MAX_LEVELS = 8
"""A release with at most this many distinct values also gets one indicator statistic per value."""
"""How many single releases (the most shifted) are candidates on their own, per pair."""


@dataclass(frozen=True)
class ReleaseStatistic:
    """A statistic of one run's transcript: the value of one release (``kind="value"``), whether
    a release with few distinct values took the value ``null[0]`` (``"equals"``), or the
    summed privacy loss over ``keys`` of a Laplace (``"laplace"``: clipped to the centres) or
    Gaussian (``"gaussian"``: linear) mechanism centred at ``null``/``alt`` with ``scale``."""

    kind: str
    keys: tuple[str, ...]
    null: tuple[float, ...]
    alt: tuple[float, ...]
    scale: tuple[float, ...]

    def __call__(self, columns: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        if self.kind == "equals":
            v = columns.get(self.keys[0])
            return np.zeros(n) if v is None else (v == self.null[0]).astype(float)
        if self.kind == "value":
            v = columns.get(self.keys[0])
            return np.full(n, MISSING) if v is None else np.where(np.isnan(v), MISSING, v)
        total = np.zeros(n)
        for k, m0, m1, s in zip(self.keys, self.null, self.alt, self.scale):
            v = columns.get(k)
            if v is None:
                continue
            if self.kind == "laplace":  # clipped exactly, so that no rounding splits the end points
                lo, hi = min(m0, m1), max(m0, m1)
                loss = (m0 + m1 - 2.0 * np.clip(v, lo, hi)) / s * (1.0 if m0 > m1 else -1.0)
            else:
                loss = (m1 - m0) * (v - 0.5 * (m0 + m1)) / (s * s)
            total += np.where(np.isnan(loss), 0.0, loss)
        return total

    def describe(self) -> str:
        if self.kind == "equals":
            return f"release '{self.keys[0]}' == {self.null[0]:g}"
        if self.kind == "value":
            return f"value of release '{self.keys[0]}'"
        shape = "Laplace" if self.kind == "laplace" else "Gaussian"
        first = ", ".join(f"'{k}'" for k in self.keys[:3]) + (", ..." if len(self.keys) > 3 else "")
        return f"{shape} loss over {len(self.keys)} releases ({first})"


def release_pairs(
    horizon: int, n_arms: int, max_arms: int = 8, first_play: Mapping[int, int] | None = None
) -> list[PairDesign]:
    """The pre-registered pairs: whole-row changes (1 vs 0 on a tie) at rounds 0, 1 and N, the swap
    of arms 0 and 1 at round 0 on a zero table (for a cascade: a click at position 1 vs at
    position 2, the worst pair of one user's feedback), and for each arm j (up to ``max_arms``,
    the last one included) its own reward (1 vs 0, every other reward 0) at the round
    ``first_play[j]`` where the policy first plays it (default: round j, as round-robin initial
    pulls do) — so that the changed reward is observed and released."""
    tie, zero = (0.5,) * n_arms, (0.0,) * n_arms
    taus = sorted({0, 1, min(n_arms, horizon - 1)})
    out = [PairDesign(f"row {t} 1 vs 0, tie", tie, t, None) for t in taus]
    if n_arms >= 2:
        swap = ((1.0, 0.0), (0.0, 1.0))
        out.append(PairDesign("arms 0, 1 at round 0: (1, 0) vs (0, 1), others 0", zero, 0, (0, 1), swap))
    arms = list(range(min(n_arms, max_arms)))
    if n_arms > max_arms:
        arms[-1] = n_arms - 1
    rounds = {j: (first_play or {}).get(j, j) for j in arms}
    out += [PairDesign(f"arm {j} at round {rounds[j]} 1 vs 0, others 0", zero, rounds[j], (j,)) for j in arms]
    return out


def first_plays(
    policy: Policy, env: Environment, horizon: int, settings: AuditSettings, runs: int = 64
) -> dict[int, int]:
    """For every arm, the round at which ``policy`` most often plays it first on an all-zero
    table (``runs`` runs on their own seeds; arms never played within ``horizon`` are absent)."""
    table = np.zeros((horizon, env.n_arms))
    seed = np.random.SeedSequence(settings.seed, spawn_key=(2,))
    env0 = RewardTableEnv(table, action_structure=env.structure)
    res = simulate(
        policy, env0, horizon, runs, seed, record_actions=True, progress=False, checkpoints=()
    )
    acts = np.asarray(res.actions).reshape(runs, horizon, -1)
    out = {}
    for j in range(env.n_arms):
        hit = (acts == j).any(axis=2)
        played = hit.any(axis=1)
        if played.any():
            out[j] = int(np.bincount(hit[played].argmax(axis=1)).argmax())
    return out


def _block(task: tuple) -> dict[str, np.ndarray] | np.ndarray:
    """Simulate ``n`` runs on one fixed table with transcripts; the columns, or the statistic's
    values when one is given. Task: ``(policy, table, horizon, n, seed, structure, statistic)``."""
    policy, table, horizon, n, seed, structure, stat = task
    res = simulate(
        policy,
        RewardTableEnv(table, action_structure=structure),
        horizon,
        n,
        seed,
        progress=False,
        checkpoints=(),
        transcripts=True,
    )
    cols = res.transcripts or {}
    return cols if stat is None else stat(cols, n)


def _sizes(n: int) -> list[int]:
    return [BLOCK] * (n // BLOCK) + ([n % BLOCK] if n % BLOCK else [])


def _tasks(
    policy: Policy,
    table: np.ndarray,
    horizon: int,
    n: int,
    key: tuple[int, ...],
    settings: AuditSettings,
    structure: object,
    stat: ReleaseStatistic | None,
) -> list[tuple[tuple[Any, ...]]]:
    """The blocks of ``n`` runs on ``table`` (seeds spawned from ``settings.seed`` and ``key``)."""
    return [
        (
            (
                policy,
                table,
                horizon,
                sz,
                np.random.SeedSequence(settings.seed, spawn_key=key + (i,)),
                structure,
                stat,
            ),
        )
        for i, sz in enumerate(_sizes(n))
    ]


def _run_all(batches: list[list[tuple[tuple[Any, ...]]]], settings: AuditSettings) -> list[list[Any]]:
    """Every batch's block results, all blocks submitted at once (an executor runs them in
    parallel; the results do not depend on it)."""
    flat = [t for b in batches for t in b]
    out = run_tasks(_block, flat, executor=settings.executor)
    res, i = [], 0
    for b in batches:
        res.append(out[i : i + len(b)])
        i += len(b)
    return res


def records_releases(policy: Policy, horizon: int, env: Environment) -> bool:
    """Whether ``policy``'s mechanisms record any release in ``horizon`` rounds of ``env``'s
    shape (two runs on a tied table)."""
    table = np.full((horizon, env.n_arms), 0.5)
    res = simulate(
        policy,
        RewardTableEnv(table, action_structure=env.structure),
        horizon,
        2,
        0,
        progress=False,
        checkpoints=(),
        transcripts=True,
    )
    return bool(res.transcripts)


@dataclass(frozen=True)
class _Reached:
    """A release the changed unit reaches, as the fit half of a pilot shows it."""

    strength: float  # P(moved)·|shift| / spread (inf: released under one input only)
    key: str
    null: float
    alt: float
    spread: float  # median absolute deviation about the centres


def _reached(key: str, a0: np.ndarray | None, a1: np.ndarray | None) -> _Reached | None:
    """Whether (and how strongly) release ``key`` differs between the coupled fit runs ``a0``
    (on x) and ``a1`` (on x′, the same seeds): the shift is the median of the paired differences,
    exact wherever the two runs of a seed made the same decisions, taken over the runs where the
    change reached it (at least :data:`MIN_REACH` of them)."""
    seen0 = a0 is not None and not np.all(np.isnan(a0))
    seen1 = a1 is not None and not np.all(np.isnan(a1))
    if not (seen0 and seen1):
        return _Reached(math.inf, key, 0.0, 0.0, 1.0) if seen0 or seen1 else None
    assert a0 is not None and a1 is not None
    both = ~np.isnan(a0) & ~np.isnan(a1)
    d = a1[both] - a0[both]
    m0 = float(np.median(a0[both])) if both.any() else 0.0
    moved = np.abs(d) > 1e-12 * (1.0 + abs(m0))
    if moved.size == 0 or moved.mean() < MIN_REACH:
        return None
    shift = float(np.median(d[moved]))  # the shift where the change reaches this release
    size = abs(shift) or float(np.median(np.abs(d[moved])))  # moves both ways (an argmax): no centre shift
    spread = float(np.median(np.abs(a0[both] - m0)))
    if spread == 0.0:  # a noiseless release that moves
        spread = 1e-9 * size
    return _Reached(moved.mean() * size / spread, key, m0, m0 + shift, spread)


def _fit(x: Mapping[str, np.ndarray], y: Mapping[str, np.ndarray]) -> tuple[list[ReleaseStatistic], float]:
    """The candidate statistics of one pair from its coupled fit runs (module docstring), and the
    pair's signal: Σ min(strength, 50)² over its reached releases (what ranks pairs for scoring)."""
    found = (_reached(k, x.get(k), y.get(k)) for k in dict.fromkeys([*x, *y]))
    reached = sorted((r for r in found if r is not None), key=lambda r: -r.strength)
    out = [
        ReleaseStatistic("value", (r.key,), (r.null,), (r.alt,), (r.spread,)) for r in reached[:TOP_VALUES]
    ]
    for r in reached[:TOP_VALUES]:  # a release with few values (an argmax, a count): each value alone
        seen = np.unique(
            np.concatenate([v[~np.isnan(v)] for v in (x.get(r.key), y.get(r.key)) if v is not None])
        )
        if 1 < seen.size <= MAX_LEVELS:
            out += [ReleaseStatistic("equals", (r.key,), (float(u),), (float(u),), (1.0,)) for u in seen]
    summed = [r for r in reached if math.isfinite(r.strength)]
    if summed:
        keys = tuple(r.key for r in summed)
        m0s, m1s = tuple(r.null for r in summed), tuple(r.alt for r in summed)
        lap = tuple(r.spread / math.log(2.0) for r in summed)  # Laplace b = MAD / ln 2
        gau = tuple(r.spread * 1.4826 for r in summed)  # Gaussian σ = 1.4826 MAD
        out += [
            ReleaseStatistic("laplace", keys, m0s, m1s, lap),
            ReleaseStatistic("gaussian", keys, m0s, m1s, gau),
        ]
    signal = sum(min(r.strength, 50.0) ** 2 for r in reached)
    return out, signal


def _pilot(
    policy: Policy,
    env: Environment,
    T: int,
    n: int,
    n_pilot: int,
    cands: list[PairDesign],
    select: str,
    settings: AuditSettings,
    registered: Mapping[str, Sequence[ReleaseStatistic]],
) -> tuple:
    """Pilot runs: fit the statistics of every pair on ``n_pilot/4`` coupled runs per side (x and
    x′ on the same seeds); score those of the :data:`SCORED_PAIRS` pairs with the strongest
    reached releases, and of every pair with ``registered`` statistics (added to its fitted
    ones), on the other ``3 n_pilot/4`` (independent seeds). Returns the choice, its pair and statistic,
    and how many statistics were scored."""
    fit = max(25, n_pilot // 4)
    score = max(50, n_pilot - fit)
    batches = []
    for c, pair in enumerate(cands):
        null_t, alt_t = pair.tables(T)
        for table in (null_t, alt_t):  # the same key: x and x′ share their seeds
            batches.append(_tasks(policy, table, T, fit, (0, c, 0), settings, env.structure, None))
    runs = _run_all(batches, settings)
    fitted = []
    for c, pair in enumerate(cands):
        stats, signal = _fit(merge(runs[2 * c], _sizes(fit)), merge(runs[2 * c + 1], _sizes(fit)))
        stats += registered.get(pair.name, ())
        if stats:
            fitted.append((signal, c, pair, stats))
    own = [f for f in fitted if f[2].name in registered]  # scored beside the strongest others
    others = sorted((f for f in fitted if f[2].name not in registered), key=lambda f: -f[0])
    fitted = own + others[:SCORED_PAIRS]
    batches = []
    for _, c, pair, _ in fitted:
        null_t, alt_t = pair.tables(T)
        batches += [_tasks(policy, t, T, score, (0, c, 1 + s), settings, env.structure, None)
                    for s, t in enumerate((null_t, alt_t))]  # fmt: skip
    runs = _run_all(batches, settings)
    pilots, keys = [], []
    for i, (_, _, pair, stats) in enumerate(fitted):
        score_x, score_y = merge(runs[2 * i], _sizes(score)), merge(runs[2 * i + 1], _sizes(score))
        for stat in stats:
            pilots.append((stat(score_x, score), stat(score_y, score), None))
            keys.append((pair, stat))
    if not pilots:
        return None, None, None, 0
    pc = pilot_choice(pilots, n, confidence=settings.confidence, kind=select, delta=settings.delta)
    pair, stat = keys[pc.candidate]
    return pc, pair, stat, len(pilots)


def audit_releases(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    settings: AuditSettings,
    *,
    pilot_fraction: float = 0.1,
    pairs: Sequence[PairDesign] | None = None,
    select: str | None = None,
    design: tuple[Sequence[PairDesign], Mapping[str, Sequence[ReleaseStatistic]]] | None = None,
) -> AuditReport:
    """Audit what ``policy``'s mechanisms release at ``horizon`` with ``settings.trials`` runs per
    neighbouring table (module docstring); the pilot adds ``pilot_fraction·trials`` (at least
    200) runs per side per pair. ``pairs``: the pre-registered family (default
    :func:`release_pairs` at the rounds of :func:`first_plays`); ``select``: rank tests by
    their ``"mu"`` or ``"epsilon"`` bound (default: ε for a pure ε-DP declaration, else μ);
    ``design``: the policy's own pre-registered pairs (added to the family) and candidate
    statistics by pair name (:meth:`bandits.policy.Policy.release_audit`)."""
    env, T, n, cert, published, select = audit_inputs(policy, horizon, env, settings, pilot_fraction, select)
    t0 = time.perf_counter()
    if pairs is None:
        pairs = release_pairs(T, env.n_arms, first_play=first_plays(policy, env, T, settings))
    extra, registered = design if design is not None else ((), {})
    cands = reachable_pairs([*pairs, *extra], T)
    n_pilot = max(200, math.ceil(pilot_fraction * n))
    pc, pair, stat, scored = _pilot(policy, env, T, n, n_pilot, cands, select, settings, registered)
    t1 = time.perf_counter()
    base = {
        "candidates": [p.name for p in cands],
        "pilot_trials_per_side": n_pilot,
        "statistics_scored": scored,
        "seed": settings.seed,
    }
    if pc is None or pc.predicted <= 0:
        return _no_power(policy, cert, published, n, settings, base, t1 - t0)
    null_t, alt_t = pair.tables(T)
    main = [
        _tasks(policy, table, T, n, (1, s), settings, env.structure, stat)
        for s, table in enumerate((null_t, alt_t))
    ]
    xs, ys = _run_all(main, settings)
    x, y = np.concatenate(xs), np.concatenate(ys)

    conf, delta = settings.confidence, settings.delta
    emp, fp, fn = certify_chosen(
        x, y, pc.orientation, pc.threshold, delta=delta, confidence=conf, statistic=stat.describe()
    )
    t2 = time.perf_counter()
    floor = floor_report(
        n, n, (1.0 - conf) / 2.0, certified_mu=cert.mu, certified_epsilon=cert.epsilon, delta=delta
    )
    details = {
        "view": "releases",
        "detection_floor": floor.describe(),
        "chosen": _chosen(pair, stat, pc, select, fp, fn),
        **base,
        "seconds": {"pilot": t1 - t0, "main": t2 - t1},
    }
    return AuditReport.build(
        target=f"{policy.name} (releases)",
        certified=cert,
        empirical=emp,
        details=details,
        floor=floor if cert.mu is not None or cert.epsilon is not None else None,
        estimate=mu_interval_from_counts(fp, n, fn, n, confidence=conf),
        published=published,
    )


def _chosen(
    pair: PairDesign, stat: ReleaseStatistic, pc: PilotChoice, select: str, fp: int, fn: int
) -> dict[str, Any]:
    """The ``chosen`` entry of the details: the pair, the statistic and its certified counts."""
    return {
        "pair": asdict(pair),
        "statistic": stat.describe(),
        "keys": list(stat.keys),
        "threshold": pc.threshold,
        "orientation": pc.orientation,
        "ranked_by": select,
        "predicted": pc.predicted,
        "false_positives": fp,
        "false_negatives": fn,
    }


def _no_power(
    policy: Policy,
    cert: Certified,
    published: Certified | None,
    n: int,
    settings: AuditSettings,
    base: dict[str, Any],
    seconds: float,
) -> AuditReport:
    """The report of a releases audit whose pilot found no statistic with a positive predicted
    bound: ``inconclusive``, with what the pilot saw."""
    emp = Empirical(
        epsilon_lower=0.0,
        mu_lower=0.0 if cert.mu is not None else None,
        delta=settings.delta,
        confidence=settings.confidence,
        trials=0,
        method="none: the pilot found no test with power",
        statistic="none",
    )
    why = (
        "the pilot saw no release that differs between the neighbouring inputs"
        if base["statistics_scored"] == 0
        else f"none of the {base['statistics_scored']} statistics predicts a positive bound at {n} runs"
    )
    details = {"view": "releases", "no_power": why, **base, "seconds": {"pilot": seconds, "main": 0.0}}
    return AuditReport.build(
        target=f"{policy.name} (releases)",
        certified=cert,
        empirical=emp,
        details=details,
        published=published,
        inconclusive=True,
    )
