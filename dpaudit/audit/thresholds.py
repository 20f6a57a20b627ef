"""Families of threshold tests with simultaneous Clopper–Pearson boxes.

A *threshold test* reads one scalar statistic ``s`` of a mechanism output (see
:mod:`dpaudit.audit.statistics`) and says "x′" when ``s > t`` (orientation ``+1``) or when
``s < t`` (orientation ``-1``). Run on ``n₀`` outputs under x (the *null*) and ``n₁`` under
x′ (the *alternative*), it makes ``FP`` false positives and ``FN`` false negatives. A
:class:`ThresholdRates` family holds one-sided Clopper–Pearson bounds on the two error rates of
every test (:mod:`dpaudit.audit.clopper_pearson`) at a level that makes them hold
simultaneously, so any maximum over the family — the best ε at δ through
:func:`~dpaudit.audit.clopper_pearson.epsilon_from_rates` (Kairouz, Oh & Viswanath 2015,
Theorem 2.1), the best μ through :func:`~dpaudit.audit.clopper_pearson.mu_from_rates` (Dong,
Roth & Su 2022, Definition 2.6), the curve audits — is a valid bound. Both conversions use the
two orders of the neighbouring pair (the DP definition is symmetric), which is why each bound
takes the better of two reflected terms. "Not μ′-GDP for any μ′ < μ_lb" is valid without any
assumption on the mechanism's trade-off curve.

The families: the pre-registered grid of :mod:`dpaudit.audit.multiplicity`
(:func:`threshold_rates`), the one test a sample split chose (:func:`split_rates`), every cut of
a pre-registered finite support (:func:`discrete_cut_counts`, :func:`support_rates`), the union
of several designs' families (:func:`candidate_counts`) and one test fixed in advance
(:func:`single_test_rates`). How one test is chosen on a pilot is :mod:`dpaudit.audit.pilot`;
the headline bounds are :mod:`dpaudit.audit.lower_bounds`.

All results are frozen dataclasses of plain Python values: ``json.dumps(dataclasses.asdict(r))``
works (infinite bounds serialise as ``Infinity``).

Example (a μ = 1 Gaussian mechanism):
    >>> import numpy as np
    >>> from dpaudit.audit.multiplicity import Bonferroni
    >>> rng = np.random.default_rng(0)
    >>> r = threshold_rates(rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000), confidence=0.95,
    ...                     selection=Bonferroni())
    >>> r.tests, 0.9 < r.mu_lower_bound().mu <= 1.0
    (600, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.clopper_pearson import cp_lower, cp_upper, epsilon_from_rates, mu_from_rates
from dpaudit.audit.multiplicity import Bonferroni, SampleSplit, grid_family
from dpaudit.audit.results import BoundEvidence, EpsilonLowerBound, MuLowerBound
from dpaudit.audit.statistics import as_samples
from dpaudit.validation import check_probability

__all__ = [
    "threshold_errors",
    "ThresholdRates",
    "rates_from_counts",
    "threshold_rates",
    "split_rates",
    "discrete_cut_counts",
    "support_rates",
    "design_family",
    "candidate_counts",
    "single_test_rates",
]

ArrayLike = Any


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

    def evidence(self, i: int) -> BoundEvidence:
        """The evidence of a lower bound achieved by test ``i`` of the family."""
        return BoundEvidence(
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
        return EpsilonLowerBound(epsilon=float(eps[i]), delta=d, evidence=self.evidence(i))

    def best_mu_index(self) -> int:
        """The index of the test with the largest μ lower bound."""
        mus = mu_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper))
        return int(np.argmax(np.asarray(mus)))

    def mu_lower_bound(self) -> MuLowerBound:
        """The best GDP μ lower bound over the family."""
        mus = np.asarray(mu_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper)))
        i = int(np.argmax(mus))
        return MuLowerBound(mu=float(mus[i]), evidence=self.evidence(i))


def rates_from_counts(
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
    """The family of tests ``(thresholds[i], orient[i])`` with ``fp[i]`` of ``n0`` false positives
    and ``fn[i]`` of ``n1`` false negatives: Clopper–Pearson at ``alpha_each`` per rate bound."""

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
    t, o, fp, fn = grid_family(x, y, selection.grid_size)
    alpha_each = (1.0 - conf) / (2.0 * t.size)
    return rates_from_counts(t, o, fp, fn, x.size, y.size, conf, alpha_each, selection.describe())


def split_rates(
    null_samples: ArrayLike,
    alt_samples: ArrayLike,
    confidence: float,
    selection: SampleSplit,
    objective: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> ThresholdRates:
    """The one-test family of :class:`~dpaudit.audit.multiplicity.SampleSplit`: the grid test with
    the largest ``objective(fpr_upper, fnr_upper)`` on the first ``fraction`` of both samples,
    certified on the rest at ``α/2`` per rate."""
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
    t, o, fp, fn = grid_family(np.sort(x[:k0]), np.sort(y[:k1]), selection.grid_size)
    score = objective(cp_upper(fp, k0, alpha_each), cp_upper(fn, k1, alpha_each))
    i = int(np.argmax(score))
    thr, ori = float(t[i]), int(o[i])
    xc, yc = x[k0:], y[k1:]
    if ori == 1:
        fp_c, fn_c = np.count_nonzero(xc > thr), np.count_nonzero(yc <= thr)
    else:
        fp_c, fn_c = np.count_nonzero(xc < thr), np.count_nonzero(yc >= thr)
    return rates_from_counts(
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
    return rates_from_counts(thr, orient, fp, fn, int(x.size), int(y.size), conf, alpha_each, method)


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


def design_family(
    x: np.ndarray, y: np.ndarray, support: Iterable[float] | None, grid_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The threshold family of one design: support cuts if a support is declared, else the
    pre-registered grid at the null sample's order statistics."""
    if support is not None:
        return _support_family(np.asarray(x, float), np.asarray(y, float), support)
    null, alt = np.sort(as_samples("null_samples", x)), np.sort(as_samples("alt_samples", y))
    return grid_family(null, alt, grid_size)


def candidate_counts(
    parts: Sequence[tuple[ArrayLike, ArrayLike, Iterable[float] | None]],
    *,
    confidence: float,
    grid_size: int = 300,
) -> ThresholdRates:
    """One Bonferroni family over several designs: ``parts[i] = (null, alt, support)`` samples of
    design i (all with the same sizes); every design's family, ``α/(2T)`` per rate over all T
    tests (the pre-registered alternative to :func:`~dpaudit.audit.pilot.pilot_choice`).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> parts = [(rng.normal(0, 1, 2000), rng.normal(m, 1, 2000), None) for m in (0.0, 1.0)]
    >>> r = candidate_counts(parts, confidence=0.95, grid_size=50)
    >>> r.tests, 0.5 < r.mu_lower_bound().mu < 1.0   # 2 designs x 2 orientations x 50 ranks
    (200, True)
    """
    conf = check_probability("confidence", confidence)
    fams = [design_family(x, y, sup, grid_size) for x, y, sup in parts]
    n0 = {int(np.size(x)) for x, _, _ in parts}
    n1 = {int(np.size(y)) for _, y, _ in parts}
    if len(n0) != 1 or len(n1) != 1:
        raise ValueError("every design needs the same numbers of null and alternative samples")
    t, o, fp, fn = (np.concatenate([f[j] for f in fams]) for j in range(4))
    alpha_each = (1.0 - conf) / (2.0 * t.size)
    method = f"bonferroni over {t.size} tests of {len(parts)} pre-registered designs"
    return rates_from_counts(t, o, fp, fn, n0.pop(), n1.pop(), conf, alpha_each, method)


def threshold_errors(null: np.ndarray, alt: np.ndarray, threshold: float,
                     orientation: int) -> tuple[int, int]:  # fmt: skip
    """(false positives, false negatives) of one threshold test: "x′" is decided when
    ``orientation·(s − threshold) > 0``, so a null sample above (``orientation`` 1) or below (−1)
    the threshold is a false positive, an alternative one at or on the other side a false negative.

    >>> threshold_errors(np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), 1.5, -1)
    (2, 2)
    """
    if orientation == 1:
        return int(np.count_nonzero(null > threshold)), int(np.count_nonzero(alt <= threshold))
    if orientation == -1:
        return int(np.count_nonzero(null < threshold)), int(np.count_nonzero(alt >= threshold))
    raise ValueError(f"orientation must be 1 or -1, got {orientation!r}")


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
    fp, fn = threshold_errors(x, y, threshold, orientation)
    return rates_from_counts(np.array([threshold]), np.array([orientation]), np.array([fp]), np.array([fn]),
                  x.size, y.size, conf, (1.0 - conf) / 2.0, method)  # fmt: skip
