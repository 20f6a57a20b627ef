"""Pilot selection: choose one threshold test (and the split of the main sample) on a pilot.

A pilot sample of every pre-registered design scores every test of the design's family
(:func:`~dpaudit.audit.thresholds.design_family`) by the bound it would give at the main sample
size; the best one is then certified on fresh main samples by
:func:`~dpaudit.audit.thresholds.single_test_rates`. The choice is a function of the pilot only,
so the certification needs no multiplicity correction.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> c = pilot_choice([(rng.normal(0, 1, 500), rng.normal(1, 1, 500), None)], 10_000, confidence=0.95)
    >>> c.candidate, c.orientation, c.sides(10_000)
    (0, 1, (10000, 10000))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.clopper_pearson import cp_upper, cp_upper_many, epsilon_from_rates, mu_from_rates
from dpaudit.audit.thresholds import design_family
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "PilotChoice",
    "FamilyBatch",
    "NULL_SHARES",
    "pilot_choice",
    "choose_tests",
    "main_splits",
    "batch_of_one",
]

ArrayLike = Any


@dataclass(frozen=True)
class PilotChoice:
    """The test a pilot chose: design ``candidate``, ``threshold`` and ``orientation``, the
    bound it predicted at the main sample size, and ``null_share``, the fraction of the main
    sample to draw on the null side (x) — the rest on x′."""

    candidate: int
    threshold: float
    orientation: int
    predicted: float
    null_share: float = 0.5

    def sides(self, main_per_side: int) -> tuple[int, int]:
        """(null, alternative) sample sizes of a main sample of ``2·main_per_side`` runs."""
        return _split(main_per_side, self.null_share)


def _split(main_per_side: int, null_share: float) -> tuple[int, int]:
    n0 = int(round(2 * main_per_side * null_share))
    return n0, 2 * main_per_side - n0


def _predicted_bound(p: np.ndarray, q: np.ndarray, kind: str, delta: float) -> np.ndarray:
    """The μ (``kind="mu"``) or ε-at-δ lower bound a test with error-rate bounds (p, q) gives."""
    return np.asarray(mu_from_rates(p, q) if kind == "mu" else epsilon_from_rates(p, q, delta))


# Main-sample splits the pilot may choose (null side's share; the even split first, so it wins
# ties). A rare count on one side bounds the test: e.g. FPR 1.2 % against a TPR of 15 %, where
# the optimal share is about 0.7 and the test needs about 8 % fewer runs than with an even split.
NULL_SHARES = (0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2)


def pilot_choice(
    pilots: Sequence[tuple[ArrayLike, ArrayLike, Iterable[float] | None]],
    main_per_side: int,
    *,
    confidence: float,
    kind: str = "mu",
    delta: float = 0.0,
    grid_size: int = 300,
    claim: float | None = None,
    null_shares: Iterable[float] = (0.5,),
) -> PilotChoice:
    """Choose one test on pilot samples: ``pilots[i] = (null, alt, support)`` of design i. Every
    threshold of every design's family (:func:`~dpaudit.audit.multiplicity.threshold_grid` ranks
    of the pilot's null sample, or the support cuts) is scored by the bound it *would* give if
    the main sample's counts equalled ``main_per_side`` × a pessimistic pilot rate
    (Clopper–Pearson at α/2 per rate, μ bound for ``kind="mu"``, ε at ``delta`` otherwise); the
    best wins. The pessimistic rate is the
    pilot's own Clopper–Pearson upper bound at 95 % (then 80 %, then 50 % if no test scores
    above 0): plugging in the raw pilot rates picks tail thresholds whose pilot counts are 0 by
    chance (winner's curse; on N(0,1) vs N(1,1) with 500 pilot and 10⁴ main samples per side the
    median main bound drops from 0.94 to 0.83, against 0.95 for the oracle threshold μ/2). The
    choice depends on the pilot samples only, so certifying it on fresh samples needs no
    multiplicity correction. With several ``null_shares`` (e.g. :data:`NULL_SHARES`) the split of
    the main sample between the two sides is chosen the same way, jointly with the test: a test
    whose bound is limited by a rare count on one side is certified with more runs on that side
    (the split is again a function of the pilot only).

    With ``claim`` (the certified μ, or ε at ``delta``) and every design on a declared finite
    support (fixed cuts, so the pilot counts are binomial), the test is instead the one with the
    highest predicted probability of a main bound above the claim (:func:`_pilot_power`); a
    design whose rare output betrays a bug then wins over a common output that cannot violate
    the claim (report-noisy-max with one arm's noise missing: 31 of 40 pilots pick that arm's
    design at 6,027 trials, against 13 of 40 with the pessimistic rule). If no test reaches a
    predicted power of 1/7, or a family is a threshold grid, the pessimistic rule decides.

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> pilots = [(rng.normal(0, 1, 500), rng.normal(m, 1, 500), None) for m in (0.2, 1.0)]
    >>> c = pilot_choice(pilots, 10_000, confidence=0.95)
    >>> c.candidate, c.orientation, -1.0 < c.threshold < 1.5
    (1, 1, True)
    """
    conf = check_probability("confidence", confidence)
    n = check_integer("main_per_side", main_per_side)
    splits = main_splits(n, null_shares)
    fams = [batch_of_one(design_family(x, y, sup, grid_size), np.size(x), np.size(y), sup is not None)
            for x, y, sup in pilots]  # fmt: skip
    return choose_tests(fams, splits, alpha=(1.0 - conf) / 2.0, kind=kind, delta=delta, claim=claim)[0]


def main_splits(main_per_side: int, null_shares: Iterable[float]) -> list[tuple[float, int, int]]:
    """``(null share, null size, alternative size)`` of a main sample of ``2·main_per_side`` runs
    for every share in ``null_shares`` (validated: each in (0, 1), both sides non-empty)."""
    n = main_per_side
    shares = tuple(float(check_probability("null_shares", s)) for s in null_shares)  # each in (0, 1)
    if not shares:
        raise ValueError("null_shares must name at least one share of the main sample, got none")
    splits = [(s, *_split(n, s)) for s in shares]
    if any(m0 < 1 or m1 < 1 for _, m0, m1 in splits):
        raise ValueError(f"main_per_side = {n} is too small to split by the null_shares {shares!r}")
    return splits


@dataclass(frozen=True)
class FamilyBatch:
    """The test families of one design on ``R`` pilots at once (row r = pilot r): thresholds,
    orientations, false positives and false negatives, each of shape (R, T), the pilot sizes and
    whether the family is a finite support's cuts (``discrete``)."""

    thresholds: np.ndarray
    orientations: np.ndarray
    false_positives: np.ndarray
    false_negatives: np.ndarray
    null_size: int
    alt_size: int
    discrete: bool


def batch_of_one(family: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], n0: int, n1: int,
                 discrete: bool) -> FamilyBatch:  # fmt: skip
    """A :class:`FamilyBatch` of one pilot (the family of :func:`design_family`)."""
    t, o, fp, fn = (np.asarray(a)[None, :] for a in family)
    return FamilyBatch(t, o, fp, fn, int(n0), int(n1), discrete)


def choose_tests(
    fams: Sequence[FamilyBatch],
    splits: Sequence[tuple[float, int, int]],
    *,
    alpha: float,
    kind: str,
    delta: float,
    claim: float | None,
    cp: Callable[[np.ndarray, int, float], np.ndarray] = cp_upper_many,
) -> list[PilotChoice]:
    """The choice of :func:`pilot_choice` for each of ``R`` pilots at once (``fams[i]`` holds
    design i's families on every pilot): the power rule where every design is discrete and a
    ``claim`` is given, the pessimistic rule for the pilots it leaves undecided. ``cp``
    computes the pessimistic rule's Clopper–Pearson bounds (``cp(counts, n, alpha)``; a
    simulation may pass an interpolating one)."""
    reps = fams[0].thresholds.shape[0]
    out: list[PilotChoice | None] = [None] * reps
    if claim is not None and all(f.discrete for f in fams):
        for r, c in enumerate(_pilot_power(fams, splits, alpha, kind, delta, float(claim))):
            out[r] = c
    todo = np.array([c is None for c in out])
    if todo.any():
        decided = _pessimistic(fams, splits, alpha, kind, delta, todo, cp)
        for r, c in zip(np.flatnonzero(todo).tolist(), decided, strict=True):
            out[r] = c
    decided_all = [c for c in out if c is not None]
    if len(decided_all) != reps:  # the pessimistic rule decides every pilot the power rule left
        raise AssertionError("a pilot was left without a choice")
    return decided_all


def _pessimistic(
    fams: Sequence[FamilyBatch], splits: Sequence[tuple[float, int, int]], alpha: float, kind: str,
    delta: float, rows: np.ndarray, cp: Callable[[np.ndarray, int, float], np.ndarray],
) -> list[PilotChoice]:
    """The pessimistic rule (:func:`pilot_choice`) on the pilots ``rows`` (a boolean mask)."""
    nr = int(rows.sum())
    best = np.full(nr, -1.0)
    pick = np.zeros((nr, 3), np.int64)  # design, test, split
    for level in (0.05, 0.2, 0.5, None):
        active = best <= 0
        for i, f in enumerate(fams):
            fp, fn = f.false_positives[rows], f.false_negatives[rows]
            if (fp == fp[:1]).all():  # rank-based grid counts: one row serves every pilot
                fp = fp[:1]
            r0 = fp / f.null_size if level is None else cp(fp, f.null_size, level)
            r1 = fn / f.alt_size if level is None else cp(fn, f.alt_size, level)
            for s, (_, m0, m1) in enumerate(splits):
                p = cp(np.round(r0 * m0), m0, alpha)
                q = cp(np.round(r1 * m1), m1, alpha)
                score = np.broadcast_to(np.asarray(_predicted_bound(p, q, kind, delta), float), q.shape)
                j = np.argmax(score, axis=1)
                sj = score[np.arange(nr), j]
                upd = active & (sj > best)
                best = np.where(upd, sj, best)
                pick[upd] = np.column_stack([np.full(nr, i), j, np.full(nr, s)])[upd]
        if not (best <= 0).any():
            break
    rix = np.flatnonzero(rows)
    out = []
    for k, r in enumerate(rix):
        i, j, s = (int(v) for v in pick[k])
        f = fams[i]
        t, o = (f.thresholds[r, j], f.orientations[r, j]) if best[k] > -1.0 else (math.inf, 1)
        out.append(PilotChoice(i, float(t), int(o), float(best[k]), splits[s][0] if best[k] > -1.0 else 0.5))
    return out


# Jeffreys-posterior quantiles at which the pilot's rates are evaluated (7 midpoints per rate)
_POWER_GRID = (np.arange(7) + 0.5) / 7


def _pilot_power(
    fams: Sequence[FamilyBatch],
    splits: Sequence[tuple[float, int, int]],
    alpha: float,
    kind: str,
    delta: float,
    claim: float,
) -> list[PilotChoice | None]:
    """The test with the highest predicted probability that its main-sample bound exceeds
    ``claim`` (``None`` if no test reaches 1/7; ties broken by the predicted median bound).

    Each pilot rate gets the Jeffreys posterior Beta(k + ½, n − k + ½) (Jeffreys 1946; as an
    interval: Brown, Cai & DasGupta 2001, §4.1.2); at 7 quantiles per rate the main test's bound
    is predicted by plugging the main sample's size on that side (for each split in ``splits``:
    (null share, null size, alternative size)) × that rate into Clopper–Pearson (α/2 per rate),
    and the predicted power is the fraction of the 49 quantile pairs whose bound exceeds the
    claim (a Bayesian preposterior criterion, e.g. Spiegelhalter, Abrams & Myles 2004, §6.5;
    it only chooses the test, the certification on fresh samples does not depend on it).
    Unlike the pessimistic rule below, it does not discount a rare event seen once or twice in
    the pilot to a rate no better than a common one."""
    from scipy import stats

    reps = fams[0].thresholds.shape[0]
    rows = np.arange(reps)
    best_pw, best_med = np.full(reps, -np.inf), np.full(reps, -np.inf)
    pick = np.zeros((reps, 3), np.int64)  # design, test, split
    u = _POWER_GRID[None, None, :]
    for i, f in enumerate(fams):
        fp, fn = f.false_positives[..., None], f.false_negatives[..., None]
        r0 = stats.beta.ppf(u, fp + 0.5, f.null_size - fp + 0.5)
        r1 = stats.beta.ppf(u, fn + 0.5, f.alt_size - fn + 0.5)
        for s, (_, m0, m1) in enumerate(splits):
            p, q = cp_upper(np.round(r0 * m0), m0, alpha), cp_upper(np.round(r1 * m1), m1, alpha)
            b = _predicted_bound(p[..., :, None], q[..., None, :], kind, delta)  # pilots x tests x quantiles²
            pw = np.mean(b > claim, axis=(2, 3))
            med = b[:, :, _POWER_GRID.size // 2, _POWER_GRID.size // 2]
            j = _last_lexicographic_max(pw, med)
            pj, mj = pw[rows, j], med[rows, j]
            upd = (pj > best_pw) | ((pj == best_pw) & (mj > best_med))
            best_pw, best_med = np.where(upd, pj, best_pw), np.where(upd, mj, best_med)
            pick[upd] = np.column_stack([np.full(reps, i), j, np.full(reps, s)])[upd]
    out: list[PilotChoice | None] = []
    for r in range(reps):
        if best_pw[r] < 1 / _POWER_GRID.size:
            out.append(None)
            continue
        di, tj, sk = (int(v) for v in pick[r])
        f = fams[di]
        out.append(PilotChoice(di, float(f.thresholds[r, tj]), int(f.orientations[r, tj]), float(best_med[r]),
                               splits[sk][0]))  # fmt: skip
    return out


def _last_lexicographic_max(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Per row, the last column whose (primary, secondary) pair is the largest — the column
    ``np.lexsort((secondary, primary))[-1]`` picks (a stable sort keeps ties in column order)."""
    top = primary == primary.max(axis=1, keepdims=True)
    sec = np.where(top, secondary, -np.inf)
    both = top & (sec == sec.max(axis=1, keepdims=True))
    return primary.shape[1] - 1 - np.argmax(both[:, ::-1], axis=1)
