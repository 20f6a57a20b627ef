"""Valid confidence bounds for empirical privacy audits (pure functions on samples and counts).

A *threshold test* reads one scalar statistic ``s`` of a mechanism output (see
:mod:`dpaudit.audit.statistics`) and says "x′" when ``s > t`` (orientation ``+1``) or when
``s < t`` (orientation ``-1``). Run on ``n₀`` outputs under x (the *null*) and ``n₁`` under
x′ (the *alternative*), it makes ``FP`` false positives and ``FN`` false negatives. Every
bound here is a one-sided Clopper–Pearson bound on the two error rates, turned into a
statement about the mechanism:

* (ε, δ)-DP implies ``FPR + e^ε·FNR ≥ 1 − δ`` and ``FNR + e^ε·FPR ≥ 1 − δ`` for every test,
  so :func:`epsilon_from_rates` on upper bounds is a lower bound on ε at δ.
* μ-GDP implies ``FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ)`` (Dong, Roth & Su 2022), so
  :func:`mu_from_rates` gives ``μ ≥ Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)``. "Not μ′-GDP for any
  μ′ < μ_lb" is valid without any assumption on the mechanism's trade-off curve.

Both inequalities use the two orders of the neighbouring pair (the DP definition is
symmetric), which is why each bound takes the better of two reflected terms.

Multiplicity. Taking the best of many thresholds with a per-threshold confidence is *not* a
valid bound (it breaks the 95 % guarantee, anchors-auditing §2.5). The caller chooses, in the
signature, one of two valid procedures:

* :class:`Bonferroni` — a pre-registered grid of thresholds (order statistics of the null
  sample at log-spaced ranks from both ends, both orientations); each of the
  ``2·tests`` upper bounds uses ``α/(2·tests)``, so all hold simultaneously with probability
  ``≥ confidence`` and the best test is a valid bound. CP at an order statistic of the null
  sample is exact for continuous statistics and conservative under ties.
* :class:`SampleSplit` — choose the threshold on the first ``fraction`` of both samples and
  certify it with ``α/2`` per rate on the rest (samples must be i.i.d., so the order does not
  matter).

Curve audits (:func:`audit_tradeoff_curve`, :func:`audit_privacy_profile`) test every
point of a :class:`ThresholdRates` family against a claimed trade-off curve or privacy profile.
:func:`monte_carlo_profile` estimates δ(ε) = E[(1 − e^{ε−L})₊] from white-box privacy-loss
samples with confidence bands.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from dpaudit.events import check_nonnegative, check_probability

__all__ = [
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "epsilon_from_rates",
    "mu_from_rates",
    "delta_from_rates",
    "threshold_grid",
    "Bonferroni",
    "SampleSplit",
    "ThresholdRates",
    "threshold_rates",
    "EpsilonLowerBound",
    "MuLowerBound",
    "epsilon_lower_bound",
    "mu_lower_bound",
    "epsilon_lower_bound_from_counts",
    "mu_lower_bound_from_counts",
    "gdp_tradeoff_curve",
    "CurveAudit",
    "audit_tradeoff_curve",
    "ProfileAudit",
    "audit_privacy_profile",
    "PrivacyProfileEstimate",
    "monte_carlo_profile",
    "epsilon_lower_bound_from_losses",
]

ArrayLike = Any


# ---------------------------------------------------------------------------------------
# validation helpers


def _confidence(value: float) -> float:
    return check_probability("confidence", value)


def _delta(value: float) -> float:
    return check_probability("delta", value, low_open=False)


def _samples(name: str, values: ArrayLike, *, allow_inf: bool = True) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of scalar statistics, got shape {arr.shape}")
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must not contain NaN{'' if allow_inf else ' or inf'}")
    return arr


def _counts(successes: ArrayLike, trials: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(successes)
    n = np.asarray(trials)
    for name, v in (("successes", k), ("trials", n)):
        if v.dtype == np.bool_ or not (np.issubdtype(v.dtype, np.integer) or np.all(np.mod(v, 1) == 0)):
            raise ValueError(f"{name} must be integers")
    k, n = np.broadcast_arrays(k.astype(np.float64), n.astype(np.float64))
    if np.any(n < 1):
        raise ValueError("trials must be integers >= 1")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must be integers in [0, trials]")
    return k, n


def _scalar_or_array(out: np.ndarray, *inputs: ArrayLike) -> Any:
    return float(out) if all(np.ndim(x) == 0 for x in inputs) else out


# ---------------------------------------------------------------------------------------
# Clopper–Pearson


def _cp_upper(k: np.ndarray, n: np.ndarray, alpha: float) -> np.ndarray:
    """Exact one-sided upper bound, P[p > bound] ≤ alpha. Closed forms at k = 0 and k = n."""
    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    out = np.ones(k.shape)
    zero = k == 0
    mid = (k > 0) & (k < n)
    out[zero] = -np.expm1(math.log(alpha) / n[zero])
    if mid.any():
        out[mid] = stats.beta.isf(alpha, k[mid] + 1.0, n[mid] - k[mid])
    return out


def _cp_lower(k: np.ndarray, n: np.ndarray, alpha: float) -> np.ndarray:
    """Exact one-sided lower bound, P[p < bound] ≤ alpha. Closed forms at k = 0 and k = n."""
    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    out = np.zeros(k.shape)
    full = k == n
    mid = (k > 0) & (k < n)
    out[full] = np.exp(math.log(alpha) / n[full])
    if mid.any():
        out[mid] = stats.beta.ppf(alpha, k[mid], n[mid] - k[mid] + 1.0)
    return out


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, *, confidence: float) -> Any:
    """One-sided Clopper–Pearson upper confidence bound on a binomial proportion.

    ``P[p ≤ bound] ≥ confidence`` for every true ``p``. Exact at ``successes = 0``
    (``1 − (1 − confidence)^{1/n}``) and ``successes = trials`` (``1``). Vectorised; returns a
    float for scalar inputs.

    >>> round(clopper_pearson_upper(0, 100, confidence=0.95), 6)
    0.029513
    >>> clopper_pearson_upper(100, 100, confidence=0.95)
    1.0
    >>> clopper_pearson_upper([1, 5], 10, confidence=0.95).round(4)
    array([0.3942, 0.7776])
    """
    k, n = _counts(successes, trials)
    return _scalar_or_array(_cp_upper(k, n, 1.0 - _confidence(confidence)), successes, trials)


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, *, confidence: float) -> Any:
    """One-sided Clopper–Pearson lower confidence bound on a binomial proportion.

    ``P[p ≥ bound] ≥ confidence``. Exact at ``successes = 0`` (``0``) and ``successes = trials``
    (``(1 − confidence)^{1/n}``).

    >>> clopper_pearson_lower(0, 100, confidence=0.95)
    0.0
    >>> round(clopper_pearson_lower(100, 100, confidence=0.95), 6)
    0.970487
    """
    k, n = _counts(successes, trials)
    return _scalar_or_array(_cp_lower(k, n, 1.0 - _confidence(confidence)), successes, trials)


# ---------------------------------------------------------------------------------------
# from error rates to privacy parameters


def epsilon_from_rates(fpr: ArrayLike, fnr: ArrayLike, delta: float) -> Any:
    """``max(0, log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR))`` in log space.

    Applied to *upper* confidence bounds on the rates this is a lower bound on ε at δ.
    Zero-rate tests give ``inf`` when the other rate leaves room (``FNR < 1 − δ``).

    >>> round(epsilon_from_rates(0.01, 0.5, 0.0), 4)   # log(0.5/0.01)
    3.912
    >>> epsilon_from_rates(0.5, 0.5, 0.0)
    0.0
    """
    d = _delta(delta)
    p = np.asarray(fpr, dtype=np.float64)
    q = np.asarray(fnr, dtype=np.float64)
    if np.any(~(p >= 0) | ~(p <= 1) | ~(q >= 0) | ~(q <= 1)):
        raise ValueError("fpr and fnr must be in [0, 1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(d + q < 1, np.log1p(-(d + q)) - np.log(p), -np.inf)
        t2 = np.where(d + p < 1, np.log1p(-(d + p)) - np.log(q), -np.inf)
    out = np.maximum(0.0, np.fmax(t1, t2))
    return _scalar_or_array(np.nan_to_num(out, nan=0.0, posinf=np.inf), fpr, fnr)


def mu_from_rates(fpr: ArrayLike, fnr: ArrayLike) -> Any:
    """``max(0, Φ⁻¹(1 − FPR) − Φ⁻¹(FNR))`` (Dong, Roth & Su 2022).

    Applied to upper confidence bounds this is a lower bound on the GDP parameter μ.

    >>> round(mu_from_rates(0.3085375387, 0.3085375387), 6)   # Φ(−1/2) each: μ = 1
    1.0
    >>> mu_from_rates(0.7, 0.7)
    0.0
    """
    p = np.asarray(fpr, dtype=np.float64)
    q = np.asarray(fnr, dtype=np.float64)
    if np.any(~(p >= 0) | ~(p <= 1) | ~(q >= 0) | ~(q <= 1)):
        raise ValueError("fpr and fnr must be in [0, 1]")
    with np.errstate(invalid="ignore"):
        out = stats.norm.isf(p) - stats.norm.ppf(q)
    out = np.maximum(0.0, np.nan_to_num(out, nan=0.0, posinf=np.inf, neginf=0.0))
    return _scalar_or_array(out, fpr, fnr)


def delta_from_rates(fpr: ArrayLike, fnr: ArrayLike, epsilon: ArrayLike) -> Any:
    """``max(0, 1 − FPR − e^ε FNR, 1 − FNR − e^ε FPR)``: the smallest δ consistent with the
    rates at ε. On upper bounds of the rates, a lower bound on the privacy profile δ(ε).

    >>> round(delta_from_rates(0.1, 0.2, 0.0), 6)
    0.7
    """
    p = np.asarray(fpr, dtype=np.float64)
    q = np.asarray(fnr, dtype=np.float64)
    e = np.asarray(epsilon, dtype=np.float64)
    if np.any(~(e >= 0)):
        raise ValueError("epsilon must be in [0, inf]")
    with np.errstate(over="ignore", invalid="ignore"):
        ee = np.exp(e)
        a = 1.0 - p - np.where(q > 0, ee * q, 0.0)
        b = 1.0 - q - np.where(p > 0, ee * p, 0.0)
    out = np.maximum(0.0, np.maximum(a, b))
    return _scalar_or_array(out, fpr, fnr, epsilon)


# ---------------------------------------------------------------------------------------
# threshold families


def threshold_grid(n: int, size: int) -> np.ndarray:
    """Pre-registered false-positive ranks for a null sample of size ``n``.

    About ``size`` integers in ``[0, n − 1]``, log-spaced from both ends (dense near 0, where
    FPR is small, and near ``n − 1``, where FNR is small). The threshold of rank ``f`` is the
    ``(n − f)``-th smallest null value, so exactly ``f`` null values lie above it (without ties).
    The grid depends only on ``n`` and ``size``, never on the data.

    >>> threshold_grid(10, 6).tolist()
    [0, 1, 4, 5, 8, 9]
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(size, bool) or int(size) != size or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    n = int(n)
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
        g = self.grid_size
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
            raise ValueError(f"grid_size must be an integer >= 1, got {g!r}")

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
        d = _delta(delta)
        eps = np.asarray(epsilon_from_rates(np.asarray(self.fpr_upper), np.asarray(self.fnr_upper), d))
        i = int(np.argmax(eps))
        return EpsilonLowerBound(epsilon=float(eps[i]), delta=d, **self._test_record(i))

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
        fpr_lower=tup(_cp_lower(fp, n0, alpha_each)),
        fpr_upper=tup(_cp_upper(fp, n0, alpha_each)),
        fnr_lower=tup(_cp_lower(fn, n1, alpha_each)),
        fnr_upper=tup(_cp_upper(fn, n1, alpha_each)),
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
    conf = _confidence(confidence)
    if not isinstance(selection, Bonferroni):
        raise ValueError(
            "selection must be Bonferroni(...) for a threshold family; use "
            "epsilon_lower_bound / mu_lower_bound for SampleSplit"
        )
    x = np.sort(_samples("null_samples", null_samples))
    y = np.sort(_samples("alt_samples", alt_samples))
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
    conf = _confidence(confidence)
    x = _samples("null_samples", null_samples)
    y = _samples("alt_samples", alt_samples)
    k0 = int(math.floor(selection.fraction * x.size))
    k1 = int(math.floor(selection.fraction * y.size))
    if min(k0, k1) < 1 or k0 == x.size or k1 == y.size:
        raise ValueError(
            "both samples need at least one selection and one certification value; "
            f"got {x.size} null and {y.size} alternative values with fraction={selection.fraction}"
        )
    alpha_each = (1.0 - conf) / 2.0
    t, o, fp, fn = _family(np.sort(x[:k0]), np.sort(y[:k1]), selection.grid_size)
    score = objective(_cp_upper(fp, k0, alpha_each), _cp_upper(fn, k1, alpha_each))
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
    from dataclasses import replace

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
    d = _delta(delta)
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
    conf = _confidence(confidence)
    _counts(fp, n_null)
    _counts(fn, n_alt)
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
    from dataclasses import replace

    return replace(r.epsilon_lower_bound(delta), threshold=None)


def mu_lower_bound_from_counts(
    false_positives: int, null_trials: int, false_negatives: int, alt_trials: int, *, confidence: float
) -> MuLowerBound:
    """GDP μ lower bound for ONE pre-registered test (level α/2 per rate).

    >>> round(mu_lower_bound_from_counts(0, 1000, 0, 1000, confidence=0.95).mu, 4)
    5.3598
    """
    from dataclasses import replace

    r = _single_test(false_positives, null_trials, false_negatives, alt_trials, confidence)
    return replace(r.mu_lower_bound(), threshold=None)


# ---------------------------------------------------------------------------------------
# curve audits


def gdp_tradeoff_curve(mu: float) -> Callable[[ArrayLike], np.ndarray]:
    """The μ-GDP trade-off curve ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` as a vectorised callable.

    Same function as :func:`dpaudit.conversions.gdp_tradeoff`, evaluated with ``isf`` so that
    tiny α keep full relative precision.

    >>> f = gdp_tradeoff_curve(1.0)
    >>> round(float(f(0.3085375387)), 6)   # symmetric point α = β = Φ(−1/2)
    0.308538
    """
    m = check_nonnegative("mu", mu)

    def f(alpha: ArrayLike) -> np.ndarray:
        return stats.norm.cdf(stats.norm.isf(np.asarray(alpha, dtype=np.float64)) - m)

    return f


@dataclass(frozen=True)
class CurveAudit:
    """Result of testing a threshold family against a claimed trade-off curve ``f``.

    A test certifies a violation when its whole confidence box lies below the curve:
    ``FNR_ub < f(FPR_ub)`` (or the reflected ``FPR_ub < f(FNR_ub)``). ``gaps[i]`` is the larger
    of ``f(FPR_ub) − FNR_ub`` and ``f(FNR_ub) − FPR_ub``; positive means violation. With
    probability ≥ ``confidence`` no violation is reported for a mechanism that satisfies the claim.
    """

    claim: str
    violated: bool
    violating_indices: tuple[int, ...]
    violating_thresholds: tuple[float, ...]
    max_gap: float
    worst_index: int
    worst_threshold: float
    worst_fpr_upper: float
    worst_fnr_upper: float
    confidence: float
    tests: int
    gaps: tuple[float, ...]


def audit_tradeoff_curve(
    rates: ThresholdRates, tradeoff: Callable[[ArrayLike], ArrayLike], *, claim: str = ""
) -> CurveAudit:
    """Test every point of ``rates`` against the claimed trade-off curve ``tradeoff``
    (non-increasing, ``[0,1] → [0,1]``, e.g. :func:`gdp_tradeoff_curve`).

    >>> import numpy as np
    >>> rng = np.random.default_rng(4)
    >>> r = threshold_rates(rng.normal(0, 1, 100_000), rng.normal(1 / 0.8, 1, 100_000),
    ...                     confidence=0.95, selection=Bonferroni())
    >>> audit_tradeoff_curve(r, gdp_tradeoff_curve(1.0), claim="1-GDP").violated   # σ 20 % too small
    True
    >>> audit_tradeoff_curve(r, gdp_tradeoff_curve(1.25 * 1.05)).violated
    False
    """
    p = np.asarray(rates.fpr_upper)
    q = np.asarray(rates.fnr_upper)
    gaps = np.maximum(np.asarray(tradeoff(p), np.float64) - q, np.asarray(tradeoff(q), np.float64) - p)
    gaps = np.nan_to_num(gaps, nan=-np.inf)
    bad = np.flatnonzero(gaps > 0)
    i = int(np.argmax(gaps))
    return CurveAudit(
        claim=claim,
        violated=bool(bad.size),
        violating_indices=tuple(bad.tolist()),
        violating_thresholds=tuple(rates.thresholds[j] for j in bad.tolist()),
        max_gap=float(gaps[i]),
        worst_index=i,
        worst_threshold=rates.thresholds[i],
        worst_fpr_upper=float(p[i]),
        worst_fnr_upper=float(q[i]),
        confidence=rates.confidence,
        tests=rates.tests,
        gaps=tuple(gaps.tolist()),
    )


@dataclass(frozen=True)
class ProfileAudit:
    """Result of testing a threshold family against a claimed privacy profile δ_c(ε).

    ``delta_lower[j] = max_i max(0, 1 − FPR_ub,i − e^{ε_j} FNR_ub,i, 1 − FNR_ub,i − e^{ε_j} FPR_ub,i)``
    is a simultaneous (over all ε) lower bound on the true δ(ε); the claim is violated at ε_j
    when ``delta_lower[j] > claimed_deltas[j]``. ``violating_indices`` lists the tests that
    violate at some ε.
    """

    claim: str
    violated: bool
    epsilons: tuple[float, ...]
    claimed_deltas: tuple[float, ...]
    delta_lower: tuple[float, ...]
    best_test: tuple[int, ...]
    violated_epsilons: tuple[float, ...]
    violating_indices: tuple[int, ...]
    worst_epsilon: float
    max_gap: float
    confidence: float
    tests: int


def audit_privacy_profile(
    rates: ThresholdRates, epsilons: ArrayLike, claimed_deltas: ArrayLike, *, claim: str = ""
) -> ProfileAudit:
    """Test every point of ``rates`` against a claimed δ_c(ε) on a grid of ε ≥ 0.

    >>> import numpy as np
    >>> rng = np.random.default_rng(5)
    >>> r = threshold_rates(rng.laplace(0, 1, 50_000), rng.laplace(1, 1, 50_000),
    ...                     confidence=0.95, selection=Bonferroni())
    >>> a = audit_privacy_profile(r, [0.5, 1.0], [0.0, 0.0], claim="0.5-DP")   # truly 1-DP
    >>> a.violated, a.violated_epsilons
    (True, (0.5,))
    """
    eps = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
    dc = np.broadcast_to(np.asarray(claimed_deltas, dtype=np.float64), eps.shape)
    if eps.ndim != 1 or np.any(~(eps >= 0)):
        raise ValueError("epsilons must be a 1-D array of values in [0, inf]")
    if np.any(~(dc >= 0) | ~(dc <= 1)):
        raise ValueError("claimed_deltas must be in [0, 1]")
    p = np.asarray(rates.fpr_upper)[None, :]
    q = np.asarray(rates.fnr_upper)[None, :]
    dl = np.asarray(delta_from_rates(p, q, eps[:, None]))
    best = np.argmax(dl, axis=1)
    dmax = dl[np.arange(eps.size), best]
    gap = dmax - dc
    w = int(np.argmax(gap))
    bad_tests = np.flatnonzero(np.any(dl > dc[:, None], axis=0))
    return ProfileAudit(
        claim=claim,
        violated=bool(np.any(gap > 0)),
        epsilons=tuple(eps.tolist()),
        claimed_deltas=tuple(dc.tolist()),
        delta_lower=tuple(dmax.tolist()),
        best_test=tuple(best.tolist()),
        violated_epsilons=tuple(eps[gap > 0].tolist()),
        violating_indices=tuple(bad_tests.tolist()),
        worst_epsilon=float(eps[w]),
        max_gap=float(gap[w]),
        confidence=rates.confidence,
        tests=rates.tests,
    )


# ---------------------------------------------------------------------------------------
# Monte-Carlo privacy profile from white-box privacy-loss samples


@dataclass(frozen=True)
class PrivacyProfileEstimate:
    """δ(ε) = E[(1 − e^{ε−L})₊] estimated from ``trials`` privacy-loss samples ``L`` (o ~ P(x)).

    ``method="dkw"``: ``delta_lower`` holds for all ε ≥ 0 simultaneously with probability
    ≥ ``confidence`` (one-sided DKW–Massart band on the distribution of L, integrated exactly),
    and so does ``delta_upper``. ``method="bernstein"``: empirical-Bernstein (Maurer & Pontil
    2009) per grid point with a Bonferroni correction over the grid, one statement per side.
    """

    epsilons: tuple[float, ...]
    delta_estimate: tuple[float, ...]
    delta_lower: tuple[float, ...]
    delta_upper: tuple[float, ...]
    confidence: float
    trials: int
    method: str


def _hinge_sum(ls: np.ndarray, eps: float, lo: int, hi: int) -> float:
    """Σ_{i∈[lo,hi)} (1 − e^{ε − L_i})₊ for sorted ``ls`` (stable: −expm1)."""
    if hi <= lo:
        return 0.0
    start = max(lo, int(np.searchsorted(ls, eps, side="right")))
    if start >= hi:
        return 0.0
    return float(-np.expm1(eps - ls[start:hi]).sum())


def _hinge(ls: np.ndarray, eps: float, i: int) -> float:
    if i < 0 or i >= ls.size or not ls[i] > eps:
        return 0.0
    return float(-math.expm1(eps - ls[i]))


def _dkw_bounds(ls: np.ndarray, eps: float, alpha: float) -> tuple[float, float, float]:
    n = ls.size
    mass = math.sqrt(math.log(1.0 / alpha) / (2.0 * n)) * n
    kf = int(math.floor(mass))
    fr = mass - kf
    est = _hinge_sum(ls, eps, 0, n) / n
    if kf >= n:
        return est, 0.0, 1.0
    p = n - kf - 1  # lower: remove the top `mass` of the distribution
    lo = (_hinge_sum(ls, eps, 0, p) + (1.0 - fr) * _hinge(ls, eps, p)) / n
    up = (mass + (1.0 - fr) * _hinge(ls, eps, kf) + _hinge_sum(ls, eps, kf + 1, n)) / n
    return est, max(0.0, lo), min(1.0, up)


def _bernstein_bounds(ls: np.ndarray, eps: float, alpha: float) -> tuple[float, float, float]:
    n = ls.size
    start = int(np.searchsorted(ls, eps, side="right"))
    y = -np.expm1(eps - ls[start:])
    s1, s2 = float(y.sum()), float((y * y).sum())
    mean = s1 / n
    var = max(0.0, (s2 - n * mean * mean) / (n - 1))
    lg = math.log(2.0 / alpha)
    w = math.sqrt(2.0 * var * lg / n) + 7.0 * lg / (3.0 * (n - 1))
    return mean, max(0.0, mean - w), min(1.0, mean + w)


def _losses(privacy_losses: ArrayLike) -> np.ndarray:
    return np.sort(_samples("privacy_losses", privacy_losses))


def monte_carlo_profile(
    privacy_losses: ArrayLike,
    epsilons: ArrayLike,
    *,
    confidence: float,
    method: Literal["dkw", "bernstein"] = "dkw",
) -> PrivacyProfileEstimate:
    """Monte-Carlo privacy profile with confidence bands from white-box privacy losses.

    ``privacy_losses`` are ``L = log p(o|x) − log p(o|x′)`` with ``o ~ P(x)`` (``+inf`` allowed
    where ``p(o|x′) = 0``). This bounds δ(ε) for the ordered pair (x, x′); audit the other order
    with its own samples.

    >>> import numpy as np
    >>> rng = np.random.default_rng(6)
    >>> L = rng.normal(0.5, 1.0, 200_000)   # μ = 1 Gaussian: L ~ N(μ²/2, μ²)
    >>> p = monte_carlo_profile(L, [0.0, 1.0], confidence=0.95)
    >>> [round(v, 2) for v in p.delta_estimate]   # exact: 0.383, 0.127
    [0.38, 0.13]
    >>> all(lo <= e <= up for lo, e, up in zip(p.delta_lower, p.delta_estimate, p.delta_upper))
    True
    """
    conf = _confidence(confidence)
    ls = _losses(privacy_losses)
    eps = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
    if eps.ndim != 1 or np.any(~(eps >= 0)) or np.any(np.isinf(eps)):
        raise ValueError("epsilons must be a 1-D array of finite values in [0, inf)")
    alpha = 1.0 - conf
    if method == "dkw":
        if alpha > 0.5:
            raise ValueError(f"confidence must be in [0.5, 1) for method='dkw', got {confidence!r}")
        rows = [_dkw_bounds(ls, float(e), alpha) for e in eps]
        desc = "dkw (uniform in epsilon)"
    elif method == "bernstein":
        if ls.size < 2:
            raise ValueError("privacy_losses needs at least 2 samples for method='bernstein'")
        rows = [_bernstein_bounds(ls, float(e), alpha / eps.size) for e in eps]
        desc = f"empirical-bernstein (bonferroni over {eps.size} epsilons)"
    else:
        raise ValueError(f"method must be 'dkw' or 'bernstein', got {method!r}")
    est, lo, up = (tuple(float(r[j]) for r in rows) for j in range(3))
    return PrivacyProfileEstimate(tuple(eps.tolist()), est, lo, up, conf, int(ls.size), desc)


def epsilon_lower_bound_from_losses(
    privacy_losses: ArrayLike,
    *,
    delta: float,
    confidence: float,
    method: Literal["dkw", "bernstein"] = "dkw",
    epsilons: ArrayLike | None = None,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` from the Monte-Carlo privacy profile.

    ``dkw``: ``sup{ε ≥ 0 : δ_lower(ε) > δ}`` (bisection; valid because the band is uniform in ε).
    ``bernstein``: the largest ε of the pre-registered grid ``epsilons`` with ``δ_lower(ε) > δ``.

    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> b = epsilon_lower_bound_from_losses(rng.normal(0.5, 1.0, 200_000), delta=0.01, confidence=0.95)
    >>> 2.1 < b.epsilon < 2.318   # exact ε(0.01) of 1-GDP: 2.3178
    True
    """
    d = _delta(delta)
    conf = _confidence(confidence)
    ls = _losses(privacy_losses)
    n = ls.size
    alpha = 1.0 - conf
    if method == "bernstein":
        if epsilons is None:
            raise ValueError("epsilons (a pre-registered grid) is required for method='bernstein'")
        prof = monte_carlo_profile(ls, epsilons, confidence=conf, method="bernstein")
        ok = [e for e, lo in zip(prof.epsilons, prof.delta_lower) if lo > d]
        eps_lb = max(ok) if ok else 0.0
        desc = prof.method
    elif method == "dkw":
        if epsilons is not None:
            raise ValueError("epsilons must be None for method='dkw' (the band is uniform in epsilon)")
        if alpha > 0.5:
            raise ValueError(f"confidence must be in [0.5, 1) for method='dkw', got {confidence!r}")

        def g(e: float) -> float:
            return _dkw_bounds(ls, e, alpha)[1]

        if g(0.0) <= d:
            eps_lb = 0.0
        else:
            finite = ls[np.isfinite(ls)]
            hi = float(finite[-1]) if finite.size else 0.0
            if not hi > 0 or g(hi) > d:
                eps_lb = math.inf  # the kept mass at L = +inf alone exceeds delta
            else:
                lo = 0.0
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    if g(mid) > d:
                        lo = mid
                    else:
                        hi = mid
                    if hi - lo <= 1e-12 * max(1.0, hi):
                        break
                eps_lb = lo
        desc = "dkw (uniform in epsilon)"
    else:
        raise ValueError(f"method must be 'dkw' or 'bernstein', got {method!r}")
    return EpsilonLowerBound(
        epsilon=float(eps_lb),
        delta=d,
        confidence=conf,
        threshold=None,
        fpr_upper=None,
        fnr_upper=None,
        trials=int(n),
        method=f"monte-carlo privacy profile, {desc}",
        null_trials=int(n),
    )
