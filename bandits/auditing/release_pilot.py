"""The pilot of the releases audit (:mod:`bandits.auditing.releases`): its candidate statistics and
the runs and choices it makes.

* :class:`ReleaseStatistic` — a statistic of one run's transcript (a release's value, the
  indicator of one of its few values, or the summed Laplace or Gaussian privacy loss over the
  releases a change reaches);
* :func:`fit_runs`, :func:`fitted_pairs` — coupled runs of x and x′ on the same seeds, and the
  statistics fitted on them (which releases the change reaches, their centres and spreads);
* :func:`score_runs`, :func:`choose_scored` — independent runs of the strongest pairs, and the one
  test :func:`dpaudit.audit.pilot.pilot_choice` picks among their statistics.

Split in these pieces so that the floor measured on an algorithm's own runs
(:mod:`bandits.auditing.leak_floor`) replays exactly the choice the audit makes.

Example:
    >>> s = ReleaseStatistic("value", ("a",), (0.0,), (1.0,), (1.0,))
    >>> s({"a": np.array([0.5, np.nan])}, 2).tolist()
    [0.5, -1e+300]
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.auditing.black_box import PairDesign
from bandits.auditing.contract import AuditSettings
from bandits.engine.simulator import simulate
from bandits.environments import Environment, RewardTableEnv
from bandits.policy import Policy
from dpaudit.audit.pilot import (
    FamilyBatch,
    PilotChoice,
    batch_of_one,
    choose_tests,
    main_splits,
    pilot_choice,
)
from dpaudit.audit.thresholds import design_family
from dpaudit.tasks import run_tasks
from dpaudit.transcripts import merge

Columns = Mapping[str, np.ndarray]
Scored = tuple[Columns, Columns, int]

__all__ = ["ReleaseStatistic", "BLOCK", "MISSING", "SCORED_PAIRS", "pilot_sizes", "fit_runs", "fitted_pairs",
           "score_runs", "choose_scored", "run_blocks", "tasks", "pilot", "played_key", "gated",
           "fit_statistics", "select_fitted"]  # fmt: skip

BLOCK = 1024
"""Runs per simulated block (fixed, so results do not depend on the executor)."""

MISSING = -1e300
"""The value statistic of a run that made no such release (below every released value)."""

MIN_REACH = 0.1
"""A release counts as reached when the change moves it in at least this fraction of the fit runs."""

TOP_VALUES = 6
"""How many single releases (the most shifted) are candidates on their own, per pair."""

SCORED_PAIRS = 4
"""How many pairs (those with the strongest reached releases in the fit runs) the pilot scores."""

MAX_LEVELS = 8
"""A release with at most this many distinct values also gets one indicator statistic per value."""


@dataclass(frozen=True)
class ReleaseStatistic:
    """A statistic of one run's transcript: the value of one release (``kind="value"``), whether
    a release with few distinct values took the value ``null[0]`` (``"equals"``), or the
    summed privacy loss over ``keys`` of a Laplace (``"laplace"``: clipped to the centres) or
    Gaussian (``"gaussian"``: linear) mechanism centred at ``null``/``alt`` with ``scale``.
    ``gates`` (summed kinds only): per key, a column of :func:`played_key` (or ``""``) — the key's
    loss counts only in the runs that played that arm at the changed round, the runs whose
    released actions say the change reached it."""

    kind: str
    keys: tuple[str, ...]
    null: tuple[float, ...]
    alt: tuple[float, ...]
    scale: tuple[float, ...]
    gates: tuple[str, ...] = ()

    def __call__(self, columns: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        if self.kind == "equals":
            v = columns.get(self.keys[0])
            return np.zeros(n) if v is None else (v == self.null[0]).astype(float)
        if self.kind == "value":
            v = columns.get(self.keys[0])
            return np.full(n, MISSING) if v is None else np.where(np.isnan(v), MISSING, v)
        total = np.zeros(n)
        for term in self.terms(columns, n):
            total += term
        return total

    def terms(self, columns: Mapping[str, np.ndarray], n: int) -> list[np.ndarray]:
        """A summed statistic's terms: the loss of each of its ``keys`` in each of the ``n`` runs
        (0 where the key is missing or its gate is closed); their sum is the statistic."""
        out = []
        for i, (k, m0, m1, s) in enumerate(zip(self.keys, self.null, self.alt, self.scale)):
            v = columns.get(k)
            if v is None:
                out.append(np.zeros(n))
                continue
            if self.gates and self.gates[i]:
                gate = columns.get(self.gates[i])
                v = np.where(gate == 1.0, v, np.nan) if gate is not None else np.full(n, np.nan)
            if self.kind == "laplace":  # clipped exactly, so that no rounding splits the end points
                lo, hi = min(m0, m1), max(m0, m1)
                loss = (m0 + m1 - 2.0 * np.clip(v, lo, hi)) / s * (1.0 if m0 > m1 else -1.0)
            else:
                loss = (m1 - m0) * (v - 0.5 * (m0 + m1)) / (s * s)
            out.append(np.where(np.isnan(loss), 0.0, loss))
        return out

    def describe(self) -> str:
        if self.kind == "equals":
            return f"release '{self.keys[0]}' == {self.null[0]:g}"
        if self.kind == "value":
            return f"value of release '{self.keys[0]}'"
        shape = "Laplace" if self.kind == "laplace" else "Gaussian"
        first = ", ".join(f"'{k}'" for k in self.keys[:3]) + (", ..." if len(self.keys) > 3 else "")
        gated = ", each where the changed round played its arm" if any(self.gates) else ""
        return f"{shape} loss over {len(self.keys)} releases ({first}{gated})"


PLAYED = "played at round "
"""The prefix of the :func:`played_key` columns (no release key starts with it)."""


def played_key(round_: int, arm: int) -> str:
    """The column that says whether a run played ``arm`` at round ``round_`` (1.0) or not (0.0):
    kept beside the transcripts when a statistic's gates need it (the actions are released)."""
    return f"{PLAYED}{round_}[{arm}]"


def _block(task: tuple) -> dict[str, np.ndarray] | np.ndarray:
    """Simulate ``n`` runs on one fixed table with transcripts; the columns (with the
    :func:`played_key` columns of round ``gate`` unless it is None), or the statistic's values
    when one is given. Task: ``(policy, table, horizon, n, seed, structure, statistic, gate)``."""
    policy, table, horizon, n, seed, structure, stat, gate = task
    res = simulate(
        policy,
        RewardTableEnv(table, action_structure=structure),
        horizon,
        n,
        seed,
        progress=False,
        checkpoints=(),
        transcripts=True,
        record_actions=gate is not None,
        ledgers=False,
    )
    cols = dict(res.transcripts or {})
    if gate is not None:
        acts = np.asarray(res.actions).reshape(n, horizon, -1)[:, gate, :]
        for arm in range(table.shape[1]):
            cols[played_key(gate, arm)] = (acts == arm).any(axis=1).astype(float)
    return cols if stat is None else stat(cols, n)


def _sizes(n: int) -> list[int]:
    return [BLOCK] * (n // BLOCK) + ([n % BLOCK] if n % BLOCK else [])


def tasks(
    policy: Policy,
    table: np.ndarray,
    horizon: int,
    n: int,
    key: tuple[int, ...],
    settings: AuditSettings,
    structure: object,
    stat: ReleaseStatistic | None,
    gate: int | None = None,
) -> list[tuple[tuple[Any, ...]]]:
    """The blocks of ``n`` runs on ``table`` (seeds spawned from ``settings.seed`` and ``key``;
    ``gate``: the round whose actions are kept as :func:`played_key` columns)."""
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
                gate,
            ),
        )
        for i, sz in enumerate(_sizes(n))
    ]


def run_blocks(batches: list[list[tuple[tuple[Any, ...]]]], settings: AuditSettings) -> list[list[Any]]:
    """Every batch's block results, all blocks submitted at once (an executor runs them in
    parallel; the results do not depend on it)."""
    flat = [t for b in batches for t in b]
    out = run_tasks(_block, flat, executor=settings.executor)
    res, i = [], 0
    for b in batches:
        res.append(out[i : i + len(b)])
        i += len(b)
    return res


@dataclass(frozen=True)
class _Reached:
    """A release the changed unit reaches, as the fit half of a pilot shows it."""

    strength: float  # P(moved)·|shift| / spread (inf: released under one input only)
    key: str
    null: float
    alt: float
    spread: float  # median absolute deviation about the centres
    gate: str = ""  # the played_key column that says in which runs the change reaches it
    gated_null: float = 0.0  # the centre under x over those runs


GATE_AGREEMENT = 0.95
"""A release reached in only some runs is gated by the arm whose play at the changed round
agrees with "the change moved it" in at least this fraction of the fit runs."""


def _gate(moved: np.ndarray, played: Mapping[str, np.ndarray]) -> str:
    """The :func:`played_key` column that best tells the runs where a release moved (``moved``)
    from the others, if it agrees in :data:`GATE_AGREEMENT` of them; else ``""``."""
    best, agree = "", GATE_AGREEMENT
    for name, hit in played.items():
        a = float(np.mean((hit == 1.0) == moved))
        if a >= agree and hit.any():
            best, agree = name, a
    return best


def _reached(
    key: str, a0: np.ndarray | None, a1: np.ndarray | None, played: Mapping[str, np.ndarray] | None = None
) -> _Reached | None:
    """Whether (and how strongly) release ``key`` differs between the coupled fit runs ``a0``
    (on x) and ``a1`` (on x′, the same seeds): the shift is the median of the paired differences,
    exact wherever the two runs of a seed made the same decisions, taken over the runs where the
    change reached it (at least :data:`MIN_REACH` of them). When it reaches it in only some runs
    and the arm played at the changed round tells which (``played``: the :func:`played_key`
    columns of the x runs), the release is gated by that arm and centred on those runs."""
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
    gate = _gate(moved, {k: v[both] for k, v in played.items()}) if played and moved.mean() < 1.0 else ""
    reach = 1.0 if gate else moved.mean()  # gated: the released actions tell where it is reached
    gated_null = float(np.median(a0[both][moved])) if gate else m0
    if spread == 0.0:  # a noiseless release that moves
        spread = 1e-9 * size
    return _Reached(reach * size / spread, key, m0, m0 + shift, spread, gate, gated_null)


def fit_statistics(
    x: Mapping[str, np.ndarray], y: Mapping[str, np.ndarray]
) -> tuple[list[ReleaseStatistic], float]:
    """The candidate statistics of one pair from its coupled fit runs (module docstring), and the
    pair's signal: Σ min(strength, 50)² over its reached releases (what ranks pairs for scoring).
    Where some reached releases are gated by the arm played at the changed round, the summed
    statistics come twice: ungated, and gated (each release counted only where it was reached)."""
    played = {k: v for k, v in x.items() if k.startswith(PLAYED)}
    found = (_reached(k, x.get(k), y.get(k), played) for k in dict.fromkeys([*x, *y]) if k not in played)
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
        gates = tuple(r.gate for r in summed)
        if any(gates):
            g0 = tuple(r.gated_null for r in summed)
            g1 = tuple(r.gated_null + r.alt - r.null for r in summed)
            out += [
                ReleaseStatistic("laplace", keys, g0, g1, lap, gates),
                ReleaseStatistic("gaussian", keys, g0, g1, gau, gates),
            ]
    signal = sum(min(r.strength, 50.0) ** 2 for r in reached)
    return out, signal


def pilot(
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
    fit, score = pilot_sizes(n_pilot)
    fitted = fitted_pairs(fit_runs(policy, env, T, fit, cands, settings, (0,)), cands, registered)
    which = [c for _, c, _, _ in fitted]
    scored = score_runs(policy, env, T, score, which, cands, settings, (0,), gated(fitted))
    return choose_scored(fitted, scored, n, select, settings)


def pilot_sizes(n_pilot: int) -> tuple[int, int]:
    """(coupled fit runs, scoring runs) per side of a pilot of ``n_pilot`` runs per side."""
    fit = max(25, n_pilot // 4)
    return fit, max(50, n_pilot - fit)


def fit_runs(
    policy: Policy, env: Environment, T: int, fit: int, cands: Sequence[PairDesign], settings: AuditSettings,
    prefix: tuple[int, ...], which: Sequence[int] | None = None,
) -> list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:  # fmt: skip
    """``fit`` coupled runs (x and x′ on the same seeds, keyed by ``prefix``) of every pair (or of
    the pairs ``which``, indices into ``cands``): the transcripts' columns of both sides, with the
    :func:`played_key` columns of the changed round."""
    batches = []
    for c in range(len(cands)) if which is None else which:
        for table in cands[c].tables(T):  # the same key: x and x′ share their seeds
            key = prefix + (c, 0)
            batches.append(tasks(policy, table, T, fit, key, settings, env.structure, None, cands[c].round))
    runs = run_blocks(batches, settings)
    sizes = _sizes(fit)
    return [(merge(runs[2 * i], sizes), merge(runs[2 * i + 1], sizes)) for i in range(len(runs) // 2)]


def fitted_pairs(
    fits: Sequence[tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]]], cands: Sequence[PairDesign],
    registered: Mapping[str, Sequence[ReleaseStatistic]],
) -> list[tuple[float, int, PairDesign, list[ReleaseStatistic]]]:  # fmt: skip
    """The pairs the pilot scores, with their candidate statistics (fitted on ``fits``, plus the
    ``registered`` ones): every registered pair and the :data:`SCORED_PAIRS` strongest others."""
    return select_fitted([fit_statistics(*f) for f in fits], cands, registered)


def select_fitted(
    fits: Sequence[tuple[list[ReleaseStatistic], float]], cands: Sequence[PairDesign],
    registered: Mapping[str, Sequence[ReleaseStatistic]],
) -> list[tuple[float, int, PairDesign, list[ReleaseStatistic]]]:  # fmt: skip
    """:func:`fitted_pairs` from each pair's fitted statistics and signal (``fit_statistics``)."""
    fitted = []
    for c, pair in enumerate(cands):
        stats, signal = fits[c]
        stats = [*stats, *registered.get(pair.name, ())]
        if stats:
            fitted.append((signal, c, pair, stats))
    own = [f for f in fitted if f[2].name in registered]  # scored beside the strongest others
    others = sorted((f for f in fitted if f[2].name not in registered), key=lambda f: -f[0])
    return own + others[:SCORED_PAIRS]


def gated(fitted: Sequence[tuple[float, int, PairDesign, Sequence[ReleaseStatistic]]]) -> set[int]:
    """The fitted pairs (indices into the candidates) with a gated statistic: their scoring runs
    keep the actions of the changed round."""
    return {c for _, c, _, stats in fitted if any(any(s.gates) for s in stats)}


def score_runs(
    policy: Policy, env: Environment, T: int, score: int, which: Sequence[int], cands: Sequence[PairDesign],
    settings: AuditSettings, prefix: tuple[int, ...], gated: Collection[int] = (),
) -> dict[int, Scored]:  # fmt: skip
    """``score`` independent runs per side of the pairs ``which`` (indices into ``cands``): both
    sides' columns (with the changed round's :func:`played_key` columns for the pairs in
    ``gated``) and the number of runs."""
    batches = []
    for c in which:
        gate = cands[c].round if c in gated else None
        batches += [tasks(policy, t, T, score, prefix + (c, 1 + s), settings, env.structure, None, gate)
                    for s, t in enumerate(cands[c].tables(T))]  # fmt: skip
    runs = run_blocks(batches, settings)
    return {c: (merge(runs[2 * i], _sizes(score)), merge(runs[2 * i + 1], _sizes(score)), score)
            for i, c in enumerate(which)}  # fmt: skip


def choose_scored(
    fitted: Sequence[tuple[float, int, PairDesign, Sequence[ReleaseStatistic]]],
    scored: Mapping[int, Scored],
    n: int, select: str, settings: AuditSettings,
) -> tuple:  # fmt: skip
    """The pilot's choice among the fitted pairs' statistics on their scoring runs: (choice,
    pair, statistic, number scored), or (None, None, None, 0) when there is nothing to score.

    Two stages. The summed statistics (ungated) are first ranked among themselves on sums
    resampled from their terms (:func:`resampled_family`), which read the tail of a sum far more
    precisely than the runs themselves; the best of them then competes with every other
    statistic by the bound :func:`dpaudit.audit.pilot.pilot_choice` predicts from the scoring
    runs, as every statistic did before, and if it wins its threshold is the one chosen on the
    resampled sums. Each step is a function of the pilot only, and the test is certified on
    fresh runs, so no correction is needed."""
    pilots, keys, summed = [], [], []
    for _, c, pair, stats in fitted:
        score_x, score_y, m = scored[c]
        for stat in stats:
            if stat.kind in SUMMED and not any(stat.gates):
                summed.append((pair, stat, resampled_family(stat, score_x, score_y, m, settings)))
            else:
                pilots.append((stat(score_x, m), stat(score_y, m), None))
                keys.append((pair, stat))
    alpha, best = (1.0 - settings.confidence) / 2.0, None
    if summed:
        splits = main_splits(n, (0.5,))
        fams = [f for _, _, f in summed]
        best = choose_tests(fams, splits, alpha=alpha, kind=select, delta=settings.delta, claim=None)[0]
        pair, stat, _ = summed[best.candidate]
        score_x, score_y, m = scored[next(c for _, c, p, _ in fitted if p is pair)]
        pilots.append((stat(score_x, m), stat(score_y, m), None))
        keys.append((pair, stat))
    if not pilots:
        return None, None, None, 0
    pc = pilot_choice(pilots, n, confidence=settings.confidence, kind=select, delta=settings.delta)
    pair, stat = keys[pc.candidate]
    if best is not None and pc.candidate == len(pilots) - 1 and best.predicted > 0:
        pc = PilotChoice(pc.candidate, best.threshold, best.orientation, pc.predicted, best.null_share)
    return pc, pair, stat, len(pilots) + len(summed) - (best is not None)


SUMMED = ("laplace", "gaussian")
"""The kinds of :class:`ReleaseStatistic` that sum a loss over several releases."""

RESAMPLES = 100_000
"""Sums drawn per side by :func:`resampled_family`."""

GRID = 300
"""Thresholds per orientation scored on the resampled sums (as :func:`~dpaudit.audit.pilot.pilot_choice`)."""


def resampled_family(
    stat: ReleaseStatistic, score_x: Columns, score_y: Columns, m: int, settings: AuditSettings
) -> FamilyBatch:
    """The threshold tests of a summed statistic scored on :data:`RESAMPLES` sums of its terms per
    side, each term drawn from its own ``m`` scoring runs independently of the others.

    Every release a change reaches carries its own noise, so given the decisions the terms are
    independent and the sum's law is the convolution of their marginals, each known from all
    ``m`` runs. Its tail — where a pure-ε certificate is refuted: ten Laplace releases moved by a
    tenth of their scale each exceed it together in about 1 % of the runs — is read from there
    more precisely than from the few runs of the joint sample that reach it. The counts are
    scaled to an effective pilot of ``m`` runs per term (at most :data:`RESAMPLES`): a single
    release gains nothing from resampling (its tail is its ``m`` runs, scored as before), while
    a sum of k terms is scored as if k·m runs had been seen — the pessimism of
    :func:`dpaudit.audit.pilot.pilot_choice` then no longer pushes the threshold into the bulk,
    nor ranks a pair whose releases cannot exceed the certificate above one whose tail does. The
    terms are summed in the statistic's own order, so an atom of the sum (every term saturated)
    is the same float as in the runs."""
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(8,)))
    sums = []
    for cols in (score_x, score_y):
        total = np.zeros(RESAMPLES)
        for term in stat.terms(cols, m):
            total += term[rng.integers(0, m, RESAMPLES)]
        sums.append(total)
    t, o, fp, fn = design_family(sums[0], sums[1], None, GRID)
    eff = min(m * len(stat.keys), RESAMPLES)
    fp_eff, fn_eff = (np.round(np.asarray(c) * (eff / RESAMPLES)).astype(np.int64) for c in (fp, fn))
    return batch_of_one((t, o, fp_eff, fn_eff), eff, eff, False)
