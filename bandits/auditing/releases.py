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
whole-row changes (for set and list actions also one on a zero table), one arm's reward at the
round where the policy first plays it (:func:`zero_table_plays`), the swap of arms 0 and 1, for
a cascade a click at the first vs the last position of the list it shows at the first rounds of a
zero table, and the policy's own (:meth:`~bandits.policy.Policy.release_audit`).
A pilot of fresh runs on both tables of each pair comes in two parts:

1. *fit* (a quarter, x and x′ run on the *same seeds*, so that the noise cancels in each pair of
   runs that made the same decisions): for every release key, how often the change moves it,
   its shift where it does (the median paired difference), its centre under x (median) and
   its spread (median absolute deviation); the keys that move are the releases the changed
   unit reaches — a key that moves only in the runs that played one arm at the changed round is
   *gated* by that arm (the actions are released too) and centred on those runs;
2. *score* (the rest, independent seeds, for the :data:`SCORED_PAIRS` pairs whose reached
   releases are strongest): the candidate statistics — each reached release alone (its value;
   for a release with few values, such as an argmax, each value's indicator), and the summed
   privacy loss over all reached releases in the shape of a Laplace mechanism (clipped linear)
   and of a Gaussian one (linear), each release weighted by its fitted scale (and, where keys are
   gated, the same sums counting each key only in its arm's runs) — are scored by
   :func:`dpaudit.audit.pilot.pilot_choice` (the bound each would give at the main size); the
   ungated sums first among themselves on sums resampled from their terms
   (:func:`~bandits.auditing.release_pilot.resampled_family`), the best of them then against the
   rest.

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

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bandits.actions import Ranking, SingleArm
from bandits.auditing.black_box import PairDesign, audit_inputs, certify_chosen, pilot_size, reachable_pairs
from bandits.auditing.contract import AuditSettings
from bandits.auditing.floor_memory import check_floor_memory, column_bytes, fit_pool_bytes, scoring_pool_bytes
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.leak_floor import (
    DEFAULT_REPLICATES,
    POOL_PILOTS,
    NoiseScaled,
    certified_quantity,
    detections,
    error_counts,
    scoring_size,
    take_rows,
)
from bandits.auditing.release_pilot import (
    BLOCK,
    ReleaseStatistic,
    choose_scored,
    fit_runs,
    fit_statistics,
    pilot,
    pilot_sizes,
    run_blocks,
    score_runs,
    select_fitted,
    tasks,
)
from bandits.engine.simulator import simulate
from bandits.environments import Environment, RewardTableEnv
from bandits.policy import Policy
from dpaudit.audit import AuditReport, Certified, Empirical
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.leak_floor import LeakFloor, leak_floor
from dpaudit.audit.pilot import PilotChoice
from dpaudit.audit.power import floor_report
from dpaudit.validation import check_integer

__all__ = ["ReleaseStatistic", "release_pairs", "default_pairs", "zero_table_plays", "audited_arms",
           "records_releases", "audit_releases", "releases_leak_floor", "BLOCK"]  # fmt: skip


def release_pairs(
    horizon: int,
    n_arms: int,
    max_arms: int = 8,
    first_play: Mapping[int, int] | None = None,
    zero_row: bool = False,
    lists: Mapping[int, Sequence[int]] | None = None,
) -> list[PairDesign]:
    """The pre-registered pairs: whole-row changes (1 vs 0 on a tie) at rounds 0, 1 and N — with
    ``zero_row`` (a round releases several coordinates: sets, lists) also at round 0 on a zero
    table, where the changed round's contribution is alone in every release it reaches — the swap
    of arms 0 and 1 at round 0 on a zero table, for each arm j (up to ``max_arms``, the last one
    included) its own reward (1 vs 0, every other reward 0) at the round ``first_play[j]`` where
    the policy first plays it (default: round j, as round-robin initial pulls do) — so that the
    changed reward is observed and released — and, for a ranked list shown at round t of a zero
    table (``lists[t]``, the first :data:`LIST_ROUNDS` of them), a click at its first position
    against a click at its last: the first item attractive vs only the last one, the worst pair of
    one user's cascade feedback (the most examinations and clicks move).

    >>> [p.name for p in release_pairs(8, 3, lists={2: (6, 7, 5)})][-1]
    'a click at position 1 vs 3 at round 2 (items 6, 5), others 0'
    """
    tie, zero = (0.5,) * n_arms, (0.0,) * n_arms
    taus = sorted({0, 1, min(n_arms, horizon - 1)})
    out = [PairDesign(f"row {t} 1 vs 0, tie", tie, t, None) for t in taus]
    if zero_row:
        out.append(PairDesign("row 0 1 vs 0, others 0", zero, 0, None))
    swap = ((1.0, 0.0), (0.0, 1.0))
    if n_arms >= 2:
        out.append(PairDesign("arms 0, 1 at round 0: (1, 0) vs (0, 1), others 0", zero, 0, (0, 1), swap))
    arms = audited_arms(n_arms, max_arms)
    rounds = {j: (first_play or {}).get(j, j) for j in arms}
    out += [PairDesign(f"arm {j} at round {rounds[j]} 1 vs 0, others 0", zero, rounds[j], (j,)) for j in arms]
    shown = sorted((t, tuple(a)) for t, a in (lists or {}).items() if len(a) >= 2)[:LIST_ROUNDS]
    for t, a in shown:
        name = f"a click at position 1 vs {len(a)} at round {t} (items {a[0]}, {a[-1]}), others 0"
        out.append(PairDesign(name, zero, t, (a[0], a[-1]), swap))
    return out


LIST_ROUNDS = 4
"""How many deterministic rounds of a ranked list get their own first-vs-last click pair (a
tree or hybrid counter exposes the users of different rounds to different numbers of nodes)."""


def audited_arms(n_arms: int, max_arms: int = 8) -> list[int]:
    """The arms that get their own pre-registered pairs: the first ``max_arms``, the last arm in
    place of the last of them when there are more (so the highest index is always reached).

    >>> audited_arms(4), audited_arms(20, 3)
    ([0, 1, 2, 3], [0, 1, 19])
    """
    arms = list(range(min(n_arms, max_arms)))
    if n_arms > max_arms:
        arms[-1] = n_arms - 1
    return arms


def _several(env: Environment) -> bool:
    """Whether one round of ``env`` plays several arms (a set, a list), so that a whole-row
    change reaches several coordinates of every release."""
    return not isinstance(env.structure, SingleArm)


@dataclass(frozen=True)
class ZeroTablePlays:
    """What a policy plays on an all-zero table: ``first[j]``, the round at which it most often
    plays arm j first (arms never played are absent), and ``lists[t]``, the action of round t
    where every run played the same one (a deterministic round, e.g. the unseen items of a
    cascade shown in index order)."""

    first: Mapping[int, int]
    lists: Mapping[int, tuple[int, ...]]


def zero_table_plays(
    policy: Policy, env: Environment, horizon: int, settings: AuditSettings, runs: int = 64
) -> ZeroTablePlays:
    """:class:`ZeroTablePlays` of ``policy`` from ``runs`` runs on an all-zero table (their own
    seeds)."""
    table = np.zeros((horizon, env.n_arms))
    seed = np.random.SeedSequence(settings.seed, spawn_key=(2,))
    env0 = RewardTableEnv(table, action_structure=env.structure)
    res = simulate(policy, env0, horizon, runs, seed, record_actions=True, progress=False, checkpoints=(),
                   ledgers=False)  # fmt: skip
    acts = np.asarray(res.actions).reshape(runs, horizon, -1)
    first = {}
    for j in range(env.n_arms):
        hit = (acts == j).any(axis=2)
        played = hit.any(axis=1)
        if played.any():
            first[j] = int(np.bincount(hit[played].argmax(axis=1)).argmax())
    same = (acts == acts[:1]).all(axis=(0, 2))
    lists = {t: tuple(int(a) for a in acts[0, t]) for t in np.flatnonzero(same).tolist()}
    return ZeroTablePlays(first, lists)


def default_pairs(
    policy: Policy, env: Environment, horizon: int, settings: AuditSettings
) -> list[PairDesign]:
    """The pre-registered pairs of :func:`release_pairs` for ``policy`` on ``env``'s shape: arms
    changed where the policy first plays them on a zero table, a zero-table row for set and list
    actions, and for ranked lists (a cascade) the first and last item of every deterministic
    round's list (:class:`ZeroTablePlays`)."""
    plays = zero_table_plays(policy, env, horizon, settings)
    lists = plays.lists if isinstance(env.structure, Ranking) else None
    return release_pairs(horizon, env.n_arms, first_play=plays.first, zero_row=_several(env), lists=lists)


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
        ledgers=False,
    )
    return bool(res.transcripts)


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
    """Audit what ``policy``'s mechanisms release at ``horizon``, ``settings.trials`` runs per table
    (module docstring); the pilot adds ``pilot_fraction·trials`` (≥ 200) per side per pair.
    ``pairs``: the pre-registered family (default :func:`default_pairs`); ``select``: rank tests by
    their ``"mu"`` or ``"epsilon"`` bound (default: ε for pure ε-DP, else μ); ``design``: the policy's
    own pairs and candidate statistics by pair name (:meth:`bandits.policy.Policy.release_audit`)."""
    env, T, n, cert, published, select = audit_inputs(policy, horizon, env, settings, pilot_fraction, select)
    t0 = time.perf_counter()
    if pairs is None:
        pairs = default_pairs(policy, env, T, settings)
    extra, registered = design if design is not None else ((), {})
    cands = reachable_pairs([*pairs, *extra], T)
    n_pilot = pilot_size(n, pilot_fraction, 200)
    pc, pair, stat, scored = pilot(policy, env, T, n, n_pilot, cands, select, settings, registered)
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
    gate = pair.round if any(stat.gates) else None
    main = [
        tasks(policy, table, T, n, (1, s), settings, env.structure, stat, gate)
        for s, table in enumerate((null_t, alt_t))
    ]
    xs, ys = run_blocks(main, settings)
    x, y = np.concatenate(xs), np.concatenate(ys)

    conf, delta = settings.confidence, settings.delta
    emp, fp, fn = certify_chosen(
        x, y, pc.orientation, pc.threshold, delta=delta, confidence=conf, statistic=stat.describe()
    )
    t2 = time.perf_counter()
    measured, kept = None, None
    if cert.mu is not None or cert.epsilon is not None:
        measured, kept = algorithm_floor(
            "releases", settings, [policy, T, env, pilot_fraction, pairs, select, design],
            lambda: releases_leak_floor(policy, T, env, settings.for_floor(), pilot_fraction=pilot_fraction,
                                        pairs=pairs, select=select, design=design))  # fmt: skip
    floor = None
    if measured is not None:
        floor_text = measured.describe()
    else:
        floor = floor_report(n, n, (1.0 - conf) / 2.0, certified_mu=cert.mu, certified_epsilon=cert.epsilon,
                             delta=delta)  # fmt: skip
        floor_text = floor.describe()
    t3 = time.perf_counter()
    details = {
        "view": "releases",
        "detection_floor": floor_text,
        "chosen": _chosen(pair, stat, pc, select, fp, fn),
        **base,
        "seconds": {"pilot": t1 - t0, "main": t2 - t1, **({"floor": t3 - t2} if measured else {})},
        **({"algorithm_floor": measured.to_dict()} if measured is not None else {}),
        **({"algorithm_floor_kept": kept} if kept is not None else {}),
    }
    return AuditReport.build(
        target=f"{policy.name} (releases)",
        certified=cert,
        empirical=emp,
        details=details,
        floor=floor if cert.mu is not None or cert.epsilon is not None else None,
        estimate=mu_interval_from_counts(fp, n, fn, n, confidence=conf),
        published=published,
        inconclusive=measured is not None and not measured.has_power,
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


def releases_leak_floor(
    policy: Policy,
    horizon: int,
    env: Environment | str,
    settings: AuditSettings,
    *,
    pilot_fraction: float = 0.1,
    pairs: Sequence[PairDesign] | None = None,
    select: str | None = None,
    design: tuple[Sequence[PairDesign], Mapping[str, Sequence[ReleaseStatistic]]] | None = None,
    replicates: int = DEFAULT_REPLICATES,
    pool_pilots: int = POOL_PILOTS,
) -> LeakFloor:
    """The detection floor of :func:`audit_releases` (same arguments) measured on the policy's own
    noise-scaled runs (:mod:`bandits.auditing.leak_floor`): for each L, pools
    of coupled fit runs and of independent scoring runs of every pair, the pilot's own fit, pair
    ranking and choice (:mod:`bandits.auditing.release_pilot`) on subsamples of them (the scoring
    runs from their pool of ``pool_pilots`` pilots' worth), and the chosen statistic scored on
    :data:`~bandits.auditing.leak_floor.SCORING_MAINS` main samples' worth of further runs.
    A pilot that finds no test with a positive predicted bound detects nothing, as in the audit."""
    env, T, n, cert, _, select = audit_inputs(policy, horizon, env, settings, pilot_fraction, select)
    quantity, certified = certified_quantity(policy, cert)
    extra, registered = design if design is not None else ((), {})
    fit, score = pilot_sizes(pilot_size(n, pilot_fraction, 200))
    alpha, n_rep = (1.0 - settings.confidence) / 2.0, max(1, int(replicates))
    pool, m = check_integer("pool_pilots", pool_pilots, 1), scoring_size(n)
    fam0 = pairs if pairs is not None else default_pairs(policy, env, T, settings)
    cands0 = reachable_pairs([*fam0, *extra], T)
    cols = column_bytes(policy, env, T, cands0, settings)  # each pool is checked before it is made
    check_floor_memory(fit_pool_bytes(cols, 2 * pool * fit), "fit pools", T, settings)

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        variant = NoiseScaled(policy, 1.0 / leak)
        fam = pairs if pairs is not None else default_pairs(variant, env, T, settings)
        cands = reachable_pairs([*fam, *extra], T)
        half = pool * score  # the pilots score on these; the m runs after them score their tests
        rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(7,)))
        draws = [(rng.choice(2 * pool * fit, size=fit, replace=False),
                  [rng.choice(half, size=score, replace=False) for _ in range(2)])
                 for _ in range(n_rep)]  # fmt: skip
        fitted = _fitted_per_pilot(variant, env, T, 2 * pool * fit, [d[0] for d in draws], cands, registered,
                                   settings)  # fmt: skip
        if len(cands) == len(cols):
            need = scoring_pool_bytes(cols, _read_columns(fitted), half)
            check_floor_memory(need, "scoring pools", T, settings)
        scores = _scoring_pools(variant, env, T, half, fitted, cands, settings)
        chosen: list[tuple[int, ReleaseStatistic, PilotChoice] | None] = []
        for fits, (_, picks) in zip(fitted, draws):
            sub = {c: (take_rows(scores[c][0], picks[0]), take_rows(scores[c][1], picks[1]), score)
                   for _, c, _, _ in fits}  # fmt: skip
            pc, pair, stat, _ = choose_scored(fits, sub, n, select, settings)
            # a pilot without a test of positive predicted bound: the audit is inconclusive, nothing detected
            chosen.append(None if pc is None or pc.predicted <= 0 else (cands.index(pair), stat, pc))
        tests = list(dict.fromkeys((c, st) for c, st, _ in filter(None, chosen)))
        values = _scoring_values(variant, env, T, half, m, tests, cands, settings, (6,))
        fp, fn, live = np.zeros(n_rep, np.int64), np.zeros(n_rep, np.int64), np.zeros(n_rep, bool)
        for r, ch in enumerate(chosen):
            if ch is not None:
                vx, vy = values[ch[:2]]
                fp[r], fn[r] = error_counts(vx, vy, ch[2].orientation, ch[2].threshold)
                live[r] = True
        return detections(fp, fn, live, m, n, alpha, quantity, settings.delta, certified)

    return leak_floor(evaluate, replicates=n_rep, quantity=quantity, certified=certified)


def _scoring_values(
    policy: Policy, env: Environment, T: int, start: int, count: int,
    tests: Sequence[tuple[int, ReleaseStatistic]], cands: Sequence[PairDesign], settings: AuditSettings,
    prefix: tuple[int, ...],
) -> dict[tuple[int, ReleaseStatistic], tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Each test's statistic (pair c, statistic) on runs ``start .. start+count−1`` of pair c's
    scoring runs as :func:`score_runs` numbers them (side s: blocks of :data:`BLOCK` runs keyed
    ``prefix + (c, 1 + s, block)``, the changed round's plays kept), both sides. Only the
    statistic's values are kept, and only the chosen pairs are run: a run does not depend on
    the size of the block it is simulated in (its streams are its own), so the blocks start at the
    one that holds ``start``."""
    b0, b1 = start // BLOCK, -(-(start + count) // BLOCK)
    batches = []
    for c, stat in tests:
        for s, table in enumerate(cands[c].tables(T)):
            batches.append([((policy, table, T, min(BLOCK, start + count - b * BLOCK),
                              np.random.SeedSequence(settings.seed, spawn_key=prefix + (c, 1 + s, b)),
                              env.structure, stat, cands[c].round),) for b in range(b0, b1)])  # fmt: skip
    lo = start - b0 * BLOCK
    vals = [np.concatenate(blocks)[lo : lo + count] for blocks in run_blocks(batches, settings)]
    return {t: (vals[2 * i], vals[2 * i + 1]) for i, t in enumerate(tests)}


Fitted = list[tuple[float, int, PairDesign, list[ReleaseStatistic]]]


def _fitted_per_pilot(
    policy: Policy, env: Environment, T: int, runs: int, rows: Sequence[np.ndarray],
    cands: Sequence[PairDesign], registered: Mapping[str, Sequence[ReleaseStatistic]],
    settings: AuditSettings,
) -> list[Fitted]:  # fmt: skip
    """For each pilot (its fit runs ``rows[r]`` of the pool of ``runs`` coupled runs per pair),
    :func:`~bandits.auditing.release_pilot.fitted_pairs` — computed one pair at a time, so that
    only one pair's pool of transcripts is held at once (a pair's runs, keyed by its index, are
    the same whichever pairs run beside it)."""
    per_pair = []
    for c in range(len(cands)):
        x, y = fit_runs(policy, env, T, runs, cands, settings, (6,), which=[c])[0]
        per_pair.append([fit_statistics(take_rows(x, r), take_rows(y, r)) for r in rows])
    return [select_fitted([p[i] for p in per_pair], cands, registered) for i in range(len(rows))]


def _read_columns(fitted: Sequence[Fitted]) -> dict[int, set[str]]:
    """Per pair some pilot fitted, the columns (releases and gates) its statistics read."""
    return {c: {k for fits in fitted for _, i, _, stats in fits if i == c for st in stats
                for k in (*st.keys, *st.gates)}
            for c in sorted({c for fits in fitted for _, c, _, _ in fits})}  # fmt: skip


def _scoring_pools(
    policy: Policy, env: Environment, T: int, runs: int, fitted: Sequence[Fitted],
    cands: Sequence[PairDesign], settings: AuditSettings,
) -> dict[int, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:  # fmt: skip
    """The ``runs`` scoring runs per side of every pair some pilot fitted (as :func:`score_runs`
    numbers them), one pair at a time and keeping only the columns its pilots' statistics read
    (their releases and gates): the statistics see exactly what they would in the whole pool."""
    out = {}
    for c, read in _read_columns(fitted).items():
        x, y, _ = score_runs(policy, env, T, runs, [c], cands, settings, (6,), [c])[c]
        out[c] = ({k: v for k, v in x.items() if k in read}, {k: v for k, v in y.items() if k in read})
    return out

