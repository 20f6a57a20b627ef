"""Families of threshold tests with simultaneous Clopper–Pearson boxes, and the headline bounds.

A *threshold test* reads one scalar statistic ``s`` of a mechanism output (see
:mod:`dpaudit.audit.statistics`) and says "x′" when ``s > t`` (orientation ``+1``) or when
``s < t`` (orientation ``-1``). Run on ``n₀`` outputs under x (the *null*) and ``n₁`` under
x′ (the *alternative*), it makes ``FP`` false positives and ``FN`` false negatives. Every
bound here is a one-sided Clopper–Pearson bound on the two error rates
(:mod:`dpaudit.audit.clopper_pearson`), turned into a statement about the mechanism by
:func:`~dpaudit.audit.clopper_pearson.epsilon_from_rates` (Kairouz, Oh & Viswanath 2015,
Theorem 2.1) or :func:`~dpaudit.audit.clopper_pearson.mu_from_rates` (Dong, Roth & Su 2022,
Definition 2.6). Both use the two orders of the neighbouring pair (the DP definition is
symmetric), which is why each bound takes the better of two reflected terms. "Not μ′-GDP for
any μ′ < μ_lb" is valid without any assumption on the mechanism's trade-off curve.

Multiplicity. Taking the best of many thresholds with a per-threshold confidence is *not* a
valid bound (it breaks the 95 % guarantee, anchors-auditing §2.5). The caller chooses, in the
signature, one of two valid procedures:

* :class:`Bonferroni` — a pre-registered grid of thresholds (order statistics of the null
  sample at log-spaced ranks from both ends, both orientations); each of the
  ``2·tests`` upper bounds uses ``α/(2·tests)``, so all hold simultaneously with probability
  ``≥ confidence`` (Bonferroni's inequality: P(∪ Aᵢ) ≤ Σ P(Aᵢ)) and the best test is a valid
  bound. CP at an order statistic of the null sample is exact for continuous statistics and
  conservative under ties.
* :class:`SampleSplit` — choose the threshold on the first ``fraction`` of both samples and
  certify it with ``α/2`` per rate on the rest (samples must be i.i.d., so the order does not
  matter).

:func:`discrete_cut_counts` is the family of a statistic with a finite, pre-registered support
(every cut between consecutive values, both orientations).

All results are frozen dataclasses of plain Python values: ``json.dumps(dataclasses.asdict(r))``
works (infinite bounds serialise as ``Infinity``).

Example (a μ = 1 Gaussian mechanism):
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> null, alt = rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000)
    >>> b = mu_lower_bound(null, alt, confidence=0.95, selection=Bonferroni())
    >>> 0.9 < b.mu <= 1.0
    True
    >>> e = epsilon_lower_bound(null, alt, delta=1e-5, confidence=0.95, selection=SampleSplit())
    >>> 0.0 < e.epsilon < 4.38   # true ε(1e-5) of 1-GDP is 4.377
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpaudit.audit.clopper_pearson import (
    check_counts,
    cp_lower,
    cp_upper,
    epsilon_from_rates,
    mu_from_rates,
)
from dpaudit.audit.statistics import as_samples
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "threshold_grid",
    "Bonferroni",
    "SampleSplit",
    "Selection",
    "ThresholdRates",
    "threshold_rates",
    "discrete_cut_counts",
    "support_rates",
    "EpsilonLowerBound",
    "MuLowerBound",
    "epsilon_lower_bound",
    "mu_lower_bound",
    "epsilon_lower_bound_from_counts",
    "mu_lower_bound_from_counts",
    "candidate_counts",
    "PilotChoice",
    "NULL_SHARES",
    "pilot_choice",
    "single_test_rates",
]

ArrayLike = Any


# ---------------------------------------------------------------------------------------
# pre-registered grids and selection procedures


def threshold_grid(n: int, size: int) -> np.ndarray:
    """Pre-registered false-positive ranks for a null sample of size ``n``.

    About ``size`` integers in ``[0, n − 1]``, log-spaced from both ends (dense near 0, where
    FPR is small, and near ``n − 1``, where FNR is small). The threshold of rank ``f`` is the
    ``(n − f)``-th smallest null value, so exactly ``f`` null values lie above it (without ties).
    The grid depends only on ``n`` and ``size``, never on the data.

    >>> threshold_grid(10, 6).tolist()
    [0, 1, 4, 5, 8, 9]
    """
    n = check_integer("n", n)
    size = check_integer("size", size)
    half = max(1, -(-int(size) // 2))
    top = (n + 1) / 2.0
    want = min(half, int(np.round(top)))  # ranks 0 .. round(top) - 1 are available
    k = half
    for _ in range(64):  # add points until `want` distinct ranks (duplicates appear near rank 0)
        f = np.unique(np.round(np.geomspace(1.0, top, k)).astype(np.int64) - 1)
        if f.size >= want:
            break
        k += want - f.size
    return np.unique(np.concatenate([f, n - 1 - f]))


@dataclass(frozen=True)
class Bonferroni:
    """Multiplicity control by a pre-registered threshold grid and a Bonferroni correction.

    ``grid_size`` ranks per orientation (:func:`threshold_grid`), both orientations; with
    ``T`` tests in total every rate bound is at level ``(1 − confidence)/(2T)``.
    """

    grid_size: int = 300

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid_size", check_integer("grid_size", self.grid_size))

    def describe(self) -> str:
        return f"bonferroni(grid_size={self.grid_size})"


@dataclass(frozen=True)
class SampleSplit:
    """Multiplicity control by sample splitting.

    The first ``fraction`` of the null and of the alternative samples choose the best of the
    ``grid_size``-per-orientation candidate thresholds; the remaining samples certify that one
    threshold with level ``(1 − confidence)/2`` per rate. Valid for i.i.d. samples.
    """

    fraction: float = 0.5
    grid_size: int = 300

    def __post_init__(self) -> None:
        object.__setattr__(self, "fraction", check_probability("fraction", self.fraction))
        Bonferroni(self.grid_size)

    def describe(self) -> str:
        return f"split(fraction={self.fraction}, grid_size={self.grid_size})"


Selection = Bonferroni | SampleSplit


def _family(
    null_sorted: np.ndarray, alt_sorted: np.ndarray, grid_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds, orientations, FP (rank-based) and FN counts of the grid family.

    Sort once, then one ``searchsorted`` per orientation: O(n log n + T log n).
    """
    n0 = null_sorted.size
    f = threshold_grid(n0, grid_size)
    # orientation +1: say x' when s > t, t = (n0 - f)-th smallest null value
    t_up = null_sorted[n0 - 1 - f]
    fn_up = np.searchsorted(alt_sorted, t_up, side="right")  # alt values <= t
    # orientation -1: say x' when s < t, t = (f + 1)-th smallest null value
    t_dn = null_sorted[f]
    fn_dn = alt_sorted.size - np.searchsorted(alt_sorted, t_dn, side="left")  # alt values >= t
    thresholds = np.concatenate([t_up, t_dn])
    orient = np.concatenate([np.ones(f.size, np.int64), -np.ones(f.size, np.int64)])
    fp = np.concatenate([f, f])
    fn = np.concatenate([fn_up, fn_dn])
    return thresholds, orient, fp, fn


@dataclass(frozen=True)
class ThresholdRates:
    """Confidence boxes for the error rates of a family of threshold tests.

    Test ``i`` says "x′" when ``orientations[i]·(s − thresholds[i]) > 0``. With probability
    ``≥ confidence`` all upper bounds hold simultaneously (and, separately, all lower bounds):
    each bound is Clopper–Pearson at level ``alpha_per_bound = (1 − confidence)/(2·tests)``.
    Any maximum over the family (:meth:`epsilon_lower_bound`, :meth:`mu_lower_bound`, the curve
    audits) is therefore a valid bound.
    """

    thresholds: tuple[float, ...]
    orientations: tuple[int, ...]
    false_positives: tuple[int, ...]
    false_negatives: tuple[int, ...]
    fpr_lower: tuple[float, ...]
    fpr_upper: tuple[float, ...]
    fnr_lower: tuple[float, ...]
    fnr_upper: tuple[float, ...]
    null_trials: int
    alt_trials: int
    confidence: float
    alpha_per_bound: float
    method: str

    @property
    def tests(self) -> int:
        return len(self.thresholds)

    def _test_record(self, i: int) -> dict[str, Any]:
        """The fields of a lower bound that describe test ``i`` of the family."""
        return dict(
            confidence=self.confidence,
            threshold=self.thresholds[i],
            fpr_upper=self.fpr_upper[i],
            fnr_upper=self.fnr_upper[i],
            trials=self.null_trials + self.alt_trials,
            method=f"clopper-pearson, {self.method}",
            orientation=self.orientations[i],
            false_positives=self.false_positives[i],
            false_negatives=self.false_negatives[i],
            null_trials=self.null_trials,
            alt_trials=self.alt_trials,
            tests=self.tests,
        )

    def epsilon_lower_bound(self, delta: float) -> EpsilonLowerBound:
        """The best ε lower bound at ``delta`` over the family (valid: simultaneous bounds)."""
        d = check_probability("delta", delta, low_open=False)
        eps = np.asarray(epsilon_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper), d))
        i = int(np.argmax(eps))
        return EpsilonLowerBound(epsilon=float(eps[i]), delta=d, **self._test_record(i))

    def best_mu_index(self) -> int:
        """The index of the test with the largest μ lower bound."""
        mus = mu_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper))
        return int(np.argmax(np.asarray(mus)))

    def mu_lower_bound(self) -> MuLowerBound:
        """The best GDP μ lower bound over the family."""
        mus = np.asarray(mu_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper)))
        i = int(np.argmax(mus))
        return MuLowerBound(mu=float(mus[i]), **self._test_record(i))


def _rates(
    thresholds: np.ndarray,
    orient: np.ndarray,
    fp: np.ndarray,
    fn: np.ndarray,
    n0: int,
    n1: int,
    confidence: float,
    alpha_each: float,
    method: str,
) -> ThresholdRates:
    def tup(a: np.ndarray) -> tuple:
        return tuple(a.tolist())

    return ThresholdRates(
        thresholds=tup(thresholds.astype(np.float64)),
        orientations=tup(orient.astype(np.int64)),
        false_positives=tup(fp.astype(np.int64)),
        false_negatives=tup(fn.astype(np.int64)),
        fpr_lower=tup(cp_lower(fp, n0, alpha_each)),
        fpr_upper=tup(cp_upper(fp, n0, alpha_each)),
        fnr_lower=tup(cp_lower(fn, n1, alpha_each)),
        fnr_upper=tup(cp_upper(fn, n1, alpha_each)),
        null_trials=n0,
        alt_trials=n1,
        confidence=confidence,
        alpha_per_bound=alpha_each,
        method=method,
    )


def threshold_rates(
    null_samples: ArrayLike, alt_samples: ArrayLike, *, confidence: float, selection: Bonferroni
) -> ThresholdRates:
    """Simultaneous Clopper–Pearson boxes over a pre-registered grid (Bonferroni).

    ``null_samples`` are statistics of outputs under x, ``alt_samples`` under x′.

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> r = threshold_rates(rng.normal(0, 1, 10_000), rng.normal(1, 1, 10_000),
    ...                     confidence=0.95, selection=Bonferroni(grid_size=100))
    >>> r.tests, round(r.alpha_per_bound * 2 * r.tests, 12)   # both orientations, 2 bounds each
    (200, 0.05)
    """
    conf = check_probability("confidence", confidence)
    if not isinstance(selection, Bonferroni):
        raise ValueError(
            "selection must be Bonferroni(...) for a threshold family; use "
            "epsilon_lower_bound / mu_lower_bound for SampleSplit"
        )
    x = np.sort(as_samples("null_samples", null_samples))
    y = np.sort(as_samples("alt_samples", alt_samples))
    t, o, fp, fn = _family(x, y, selection.grid_size)
    alpha_each = (1.0 - conf) / (2.0 * t.size)
    return _rates(t, o, fp, fn, x.size, y.size, conf, alpha_each, selection.describe())


def _split_rates(
    null_samples: ArrayLike,
    alt_samples: ArrayLike,
    confidence: float,
    selection: SampleSplit,
    objective: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> ThresholdRates:
    conf = check_probability("confidence", confidence)
    x = as_samples("null_samples", null_samples)
    y = as_samples("alt_samples", alt_samples)
    k0 = int(math.floor(selection.fraction * x.size))
    k1 = int(math.floor(selection.fraction * y.size))
    if min(k0, k1) < 1 or k0 == x.size or k1 == y.size:
        raise ValueError(
            "both samples need at least one selection and one certification value; "
            f"got {x.size} null and {y.size} alternative values with fraction={selection.fraction}"
        )
    alpha_each = (1.0 - conf) / 2.0
    t, o, fp, fn = _family(np.sort(x[:k0]), np.sort(y[:k1]), selection.grid_size)
    score = objective(cp_upper(fp, k0, alpha_each), cp_upper(fn, k1, alpha_each))
    i = int(np.argmax(score))
    thr, ori = float(t[i]), int(o[i])
    xc, yc = x[k0:], y[k1:]
    if ori == 1:
        fp_c, fn_c = np.count_nonzero(xc > thr), np.count_nonzero(yc <= thr)
    else:
        fp_c, fn_c = np.count_nonzero(xc < thr), np.count_nonzero(yc >= thr)
    return _rates(
        np.array([thr]),
        np.array([ori]),
        np.array([fp_c]),
        np.array([fn_c]),
        xc.size,
        yc.size,
        conf,
        alpha_each,
        selection.describe(),
    )


def discrete_cut_counts(
    null_counts: np.ndarray, alt_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """FP/FN of the cut family on a finite ordered support.

    ``null_counts[j]``/``alt_counts[j]`` count the samples at the j-th smallest support value.
    For every cut j (between values j and j + 1): orientation +1 ("x′ when s > v_j") and −1
    ("x′ when s < v_{j+1}"). Returns (orientations, cut index, FP, FN); with one support value
    a single trivial test (FP = 0, FN = all) keeps the family non-empty.

    >>> o, j, fp, fn = discrete_cut_counts(np.array([5, 1]), np.array([2, 4]))
    >>> o.tolist(), fp.tolist(), fn.tolist()
    ([1, -1], [1, 5], [2, 4])
    """
    c0 = np.asarray(null_counts, dtype=np.int64)
    c1 = np.asarray(alt_counts, dtype=np.int64)
    m = c0.size
    if m == 1:
        return np.array([1]), np.array([0]), np.array([0]), c1.copy()
    cum0, cum1 = np.cumsum(c0)[:-1], np.cumsum(c1)[:-1]  # counts at values <= v_j
    n0, n1 = int(c0.sum()), int(c1.sum())
    cuts = np.arange(m - 1)
    orient = np.concatenate([np.ones(m - 1, np.int64), -np.ones(m - 1, np.int64)])
    fp = np.concatenate([n0 - cum0, cum0])
    fn = np.concatenate([cum1, n1 - cum1])
    return orient, np.concatenate([cuts, cuts]), fp, fn


def support_rates(
    null: ArrayLike, alt: ArrayLike, support: Iterable[float], *, confidence: float
) -> ThresholdRates:
    """The cut family on a pre-registered finite support (Bonferroni over its 2(m − 1) tests).

    Every value of ``null``/``alt`` must lie in ``support`` (fixed before sampling).

    >>> import numpy as np
    >>> r = support_rates(np.zeros(1000), np.ones(1000), [0.0, 1.0], confidence=0.95)
    >>> r.tests, r.false_positives, r.false_negatives
    (2, (0, 1000), (0, 1000))
    """
    conf = check_probability("confidence", confidence)
    x, y = np.asarray(null, dtype=float), np.asarray(alt, dtype=float)
    thr, orient, fp, fn = _support_family(x, y, support)
    m = np.unique(np.asarray(list(support), dtype=float)).size
    alpha_each = (1.0 - conf) / (2.0 * orient.size)
    method = f"cuts of a pre-registered support of {m} values, bonferroni over {orient.size} tests"
    return _rates(thr, orient, fp, fn, int(x.size), int(y.size), conf, alpha_each, method)


def _support_family(
    x: np.ndarray, y: np.ndarray, support: Iterable[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds, orientations, FP and FN of the cut family of a finite support."""
    sup = np.unique(np.asarray(list(support), dtype=float))
    ix, iy = np.searchsorted(sup, x), np.searchsorted(sup, y)
    for name, v, i in (("null", x, ix), ("alternative", y, iy)):
        ok = (i < sup.size) & (sup[np.minimum(i, sup.size - 1)] == v)
        if not ok.all():
            raise ValueError(f"{name} statistic takes value {v[~ok][0]!r} outside the declared support")
    orient, cut, fp, fn = discrete_cut_counts(np.bincount(ix, minlength=sup.size),
                                              np.bincount(iy, minlength=sup.size))  # fmt: skip
    thr = np.where(orient == 1, sup[cut], sup[np.minimum(cut + 1, sup.size - 1)])
    return thr, orient, fp, fn


def _design_family(
    x: np.ndarray, y: np.ndarray, support: Iterable[float] | None, grid_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The threshold family of one design: support cuts if a support is declared, else the
    pre-registered grid at the null sample's order statistics."""
    if support is not None:
        return _support_family(np.asarray(x, float), np.asarray(y, float), support)
    return _family(np.sort(as_samples("null_samples", x)), np.sort(as_samples("alt_samples", y)), grid_size)


def candidate_counts(
    parts: list[tuple[ArrayLike, ArrayLike, Iterable[float] | None]],
    *,
    confidence: float,
    grid_size: int = 300,
) -> ThresholdRates:
    """One Bonferroni family over several designs: ``parts[i] = (null, alt, support)`` samples of
    design i (all with the same sizes); every design's family, ``α/(2T)`` per rate over all T
    tests (the pre-registered alternative to :func:`pilot_choice`).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> parts = [(rng.normal(0, 1, 2000), rng.normal(m, 1, 2000), None) for m in (0.0, 1.0)]
    >>> r = candidate_counts(parts, confidence=0.95, grid_size=50)
    >>> r.tests, 0.5 < r.mu_lower_bound().mu < 1.0   # 2 designs x 2 orientations x 50 ranks
    (200, True)
    """
    conf = check_probability("confidence", confidence)
    fams = [_design_family(x, y, sup, grid_size) for x, y, sup in parts]
    n0 = {int(np.size(x)) for x, _, _ in parts}
    n1 = {int(np.size(y)) for _, y, _ in parts}
    if len(n0) != 1 or len(n1) != 1:
        raise ValueError("every design needs the same numbers of null and alternative samples")
    t, o, fp, fn = (np.concatenate([f[j] for f in fams]) for j in range(4))
    alpha_each = (1.0 - conf) / (2.0 * t.size)
    method = f"bonferroni over {t.size} tests of {len(parts)} pre-registered designs"
    return _rates(t, o, fp, fn, n0.pop(), n1.pop(), conf, alpha_each, method)


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
    pilots: list[tuple[ArrayLike, ArrayLike, Iterable[float] | None]],
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
    threshold of every design's family (:func:`threshold_grid` ranks of the pilot's null sample,
    or the support cuts) is scored by the bound it *would* give if the main sample's counts
    equalled ``main_per_side`` × a pessimistic pilot rate (Clopper–Pearson at α/2 per rate, μ
    bound for ``kind="mu"``, ε at ``delta`` otherwise); the best wins. The pessimistic rate is the
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
    shares = tuple(float(check_probability("null_shares", s)) for s in null_shares)  # each in (0, 1)
    if not shares:
        raise ValueError("null_shares must name at least one share of the main sample, got none")
    splits = [(s, *_split(n, s)) for s in shares]
    if any(m0 < 1 or m1 < 1 for _, m0, m1 in splits):
        raise ValueError(f"main_per_side = {n} is too small to split by the null_shares {shares!r}")
    alpha = (1.0 - conf) / 2.0
    fams = [(_design_family(x, y, sup, grid_size), np.size(x), np.size(y)) for x, y, sup in pilots]
    if claim is not None and all(sup is not None for _, _, sup in pilots):
        power = _pilot_power(fams, splits, alpha, kind, delta, float(claim))
        if power is not None:
            return power
    best = PilotChoice(0, math.inf, 1, -1.0)
    for level in (0.05, 0.2, 0.5, None):
        for i, ((t, o, fp, fn), n0, n1) in enumerate(fams):
            r0 = fp / n0 if level is None else cp_upper(fp, n0, level)
            r1 = fn / n1 if level is None else cp_upper(fn, n1, level)
            for share, m0, m1 in splits:
                p, q = cp_upper(np.round(r0 * m0), m0, alpha), cp_upper(np.round(r1 * m1), m1, alpha)
                score = _predicted_bound(p, q, kind, delta)
                j = int(np.argmax(score))
                if score[j] > best.predicted:
                    best = PilotChoice(i, float(t[j]), int(o[j]), float(score[j]), share)
        if best.predicted > 0:
            break
    return best


# Jeffreys-posterior quantiles at which the pilot's rates are evaluated (7 midpoints per rate)
_POWER_GRID = (np.arange(7) + 0.5) / 7


def _pilot_power(
    fams: list[tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], int, int]],
    splits: list[tuple[float, int, int]],
    alpha: float,
    kind: str,
    delta: float,
    claim: float,
) -> PilotChoice | None:
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

    best: tuple[float, float, int, int, float] | None = None  # (power, median, design, test, share)
    for i, ((_, _, fp, fn), n0, n1) in enumerate(fams):
        u = _POWER_GRID[None, :]
        r0 = stats.beta.ppf(u, fp[:, None] + 0.5, n0 - fp[:, None] + 0.5)
        r1 = stats.beta.ppf(u, fn[:, None] + 0.5, n1 - fn[:, None] + 0.5)
        for share, m0, m1 in splits:
            p, q = cp_upper(np.round(r0 * m0), m0, alpha), cp_upper(np.round(r1 * m1), m1, alpha)
            b = _predicted_bound(p[:, :, None], q[:, None, :], kind, delta)  # tests x r0 x r1 quantiles
            pw = np.mean(b > claim, axis=(1, 2))
            med = b[:, _POWER_GRID.size // 2, _POWER_GRID.size // 2]
            j = int(np.lexsort((med, pw))[-1])
            if best is None or (pw[j], med[j]) > best[:2]:
                best = (float(pw[j]), float(med[j]), i, j, share)
    if best is None or best[0] < 1 / _POWER_GRID.size:
        return None
    (t, o, _, _), _, _ = fams[best[2]]
    return PilotChoice(best[2], float(t[best[3]]), int(o[best[3]]), best[1], best[4])


def single_test_rates(
    null: ArrayLike, alt: ArrayLike, threshold: float, orientation: int, *, confidence: float,
    method: str = "one pre-registered test",
) -> ThresholdRates:
    """The one-test family of a test fixed before ``null``/``alt`` were drawn ("x′" when
    ``orientation·(s − threshold) > 0``): Clopper–Pearson at α/2 per rate.

    >>> import numpy as np
    >>> r = single_test_rates(np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), 1.5, 1, confidence=0.9)
    >>> r.tests, r.false_positives, r.false_negatives
    (1, (1,), (1,))
    """
    conf = check_probability("confidence", confidence)
    x = as_samples("null_samples", null)
    y = as_samples("alt_samples", alt)
    if orientation == 1:
        fp, fn = np.count_nonzero(x > threshold), np.count_nonzero(y <= threshold)
    elif orientation == -1:
        fp, fn = np.count_nonzero(x < threshold), np.count_nonzero(y >= threshold)
    else:
        raise ValueError(f"orientation must be 1 or -1, got {orientation!r}")
    return _rates(np.array([threshold]), np.array([orientation]), np.array([fp]), np.array([fn]),
                  x.size, y.size, conf, (1.0 - conf) / 2.0, method)  # fmt: skip


# ---------------------------------------------------------------------------------------
# headline bounds


@dataclass(frozen=True)
class EpsilonLowerBound:
    """A valid lower bound: with probability ≥ ``confidence`` the mechanism is not
    (ε′, δ)-DP for any ε′ < ``epsilon``.

    ``threshold``/``orientation`` identify the test that achieved it (``None``/``0`` for
    bounds from privacy-loss samples); ``trials`` counts every sample used, including
    selection samples; ``null_trials``/``alt_trials`` count the certification samples.
    """

    epsilon: float
    delta: float
    confidence: float
    threshold: float | None
    fpr_upper: float | None
    fnr_upper: float | None
    trials: int
    method: str
    orientation: int = 0
    false_positives: int | None = None
    false_negatives: int | None = None
    null_trials: int = 0
    alt_trials: int = 0
    tests: int = 1


@dataclass(frozen=True)
class MuLowerBound:
    """A valid lower bound: with probability ≥ ``confidence`` the mechanism is not μ′-GDP for
    any μ′ < ``mu``. Fields as in :class:`EpsilonLowerBound`."""

    mu: float
    confidence: float
    threshold: float | None
    fpr_upper: float | None
    fnr_upper: float | None
    trials: int
    method: str
    orientation: int = 0
    false_positives: int | None = None
    false_negatives: int | None = None
    null_trials: int = 0
    alt_trials: int = 0
    tests: int = 1


def _with_trials(bound: Any, trials: int) -> Any:
    return replace(bound, trials=trials)


def epsilon_lower_bound(
    null_samples: ArrayLike,
    alt_samples: ArrayLike,
    *,
    delta: float,
    confidence: float,
    selection: Selection,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` from threshold tests on a scalar statistic.

    ``selection`` is :class:`Bonferroni` (best of a pre-registered grid, all samples) or
    :class:`SampleSplit` (select on one part, certify on the other).

    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> x = rng.normal(0, 1, 20_000)
    >>> epsilon_lower_bound(x[:10_000], x[10_000:], delta=0.0, confidence=0.95,
    ...                     selection=Bonferroni()).epsilon   # identical distributions
    0.0
    """
    d = check_probability("delta", delta, low_open=False)
    if isinstance(selection, Bonferroni):
        return threshold_rates(
            null_samples, alt_samples, confidence=confidence, selection=selection
        ).epsilon_lower_bound(d)
    if isinstance(selection, SampleSplit):
        r = _split_rates(
            null_samples,
            alt_samples,
            confidence,
            selection,
            lambda p, q: np.asarray(epsilon_from_rates(p, q, d)),
        )
        return _with_trials(r.epsilon_lower_bound(d), int(np.size(null_samples) + np.size(alt_samples)))
    raise ValueError(f"selection must be Bonferroni(...) or SampleSplit(...), got {selection!r}")


def mu_lower_bound(
    null_samples: ArrayLike, alt_samples: ArrayLike, *, confidence: float, selection: Selection
) -> MuLowerBound:
    """GDP μ lower bound from threshold tests on a scalar statistic (see :func:`mu_from_rates`).

    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> b = mu_lower_bound(rng.normal(0, 1, 50_000), rng.normal(2, 1, 50_000),
    ...                    confidence=0.95, selection=SampleSplit())
    >>> 1.7 < b.mu < 2.0, b.tests
    (True, 1)
    """
    if isinstance(selection, Bonferroni):
        return threshold_rates(
            null_samples, alt_samples, confidence=confidence, selection=selection
        ).mu_lower_bound()
    if isinstance(selection, SampleSplit):
        r = _split_rates(
            null_samples, alt_samples, confidence, selection, lambda p, q: np.asarray(mu_from_rates(p, q))
        )
        return _with_trials(r.mu_lower_bound(), int(np.size(null_samples) + np.size(alt_samples)))
    raise ValueError(f"selection must be Bonferroni(...) or SampleSplit(...), got {selection!r}")


def _single_test(fp: int, n_null: int, fn: int, n_alt: int, confidence: float) -> ThresholdRates:
    conf = check_probability("confidence", confidence)
    check_counts(fp, n_null)
    check_counts(fn, n_alt)
    return _rates(
        np.array([np.nan]),
        np.array([1]),
        np.array([fp]),
        np.array([fn]),
        int(n_null),
        int(n_alt),
        conf,
        (1.0 - conf) / 2.0,
        "single pre-registered test",
    )


def epsilon_lower_bound_from_counts(
    false_positives: int,
    null_trials: int,
    false_negatives: int,
    alt_trials: int,
    *,
    delta: float,
    confidence: float,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` for ONE test fixed before seeing the data (level α/2 per rate).

    >>> b = epsilon_lower_bound_from_counts(20, 5000, 300, 5000, delta=1e-5, confidence=0.95)
    >>> round(b.epsilon, 4)   # = privacy-estimates compute_eps_lo(method="beta")
    5.0186
    """
    r = _single_test(false_positives, null_trials, false_negatives, alt_trials, confidence)
    return replace(r.epsilon_lower_bound(delta), threshold=None)


def mu_lower_bound_from_counts(
    false_positives: int, null_trials: int, false_negatives: int, alt_trials: int, *, confidence: float
) -> MuLowerBound:
    """GDP μ lower bound for ONE pre-registered test (level α/2 per rate).

    >>> round(mu_lower_bound_from_counts(0, 1000, 0, 1000, confidence=0.95).mu, 4)
    5.3598
    """
    r = _single_test(false_positives, null_trials, false_negatives, alt_trials, confidence)
    return replace(r.mu_lower_bound(), threshold=None)
