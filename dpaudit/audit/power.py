"""What an audit could have seen: exact detection probabilities and the detection floor.

An audit that certifies one threshold test with Clopper–Pearson bounds at level ``a`` per rate
(:mod:`dpaudit.audit.clopper_pearson`) on ``n₀`` null and ``n₁`` alternative samples can only
report a positive lower bound when the two error rates are far enough apart. This module makes
that precise for a *reference pair* whose privacy is known exactly:

* ``"gaussian"`` — N(0, 1) vs N(μ, 1), the pair whose trade-off curve *is* μ-GDP (Dong, Roth &
  Su 2022, Definition 2.6), tested with the threshold ``s > t`` (FPR = Φ̄(t), FNR = Φ(t − μ));
* ``"randomized-response"`` — the canonical (ε, δ) pair (Kairouz, Oh & Viswanath 2015,
  Theorem 2.1: its one non-trivial test has FPR = FNR = (1 − δ)/(1 + e^ε)).

**Detection probability** (:func:`detection_probability`): with FP ~ Bin(n₀, FPR) and
FN ~ Bin(n₁, FNR) independent, P[bound(CP_u(FP), CP_u(FN)) > target] — summed exactly over the
binomial laws (the bound is non-increasing in FN, so for each FP the event is FN ≤ k*(FP)).

**Detection floor** (:func:`detection_floor`): the smallest true μ (or ε) of the reference pair
for which the best threshold is detected with probability ≥ ½, i.e. whose *median* bound
exceeds ``target``: with ``target = 0`` the smallest leak the design can see at all, with
``target`` = the certified value the smallest violation it would catch. An audit whose
certificate lies below its floor is ``inconclusive``: even a mechanism spending all of its
certified privacy would usually yield a zero bound.

Example (one test at α/2 = 0.025 per rate, 2·10⁴ samples per side):
    >>> f = detection_floor(20_000, 20_000, 0.025)
    >>> round(f, 3)   # smaller true mu is reported as 0 more often than not
    0.035
    >>> round(detection_probability(f, 20_000, 20_000, 0.025), 2)
    0.5
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpaudit.audit.clopper_pearson import cp_upper, cp_upper_many
from dpaudit.conversions import gdp_epsilon
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "DetectionFloor",
    "detection_probability",
    "detection_floor",
    "conditional_detections",
    "subsample_detections",
    "cp_upper_smooth",
    "floor_report",
    "largest_provable_epsilon",
]

Pair = Literal["gaussian", "randomized-response"]


Allowed = Callable[[np.ndarray, float], np.ndarray]
"""Given FPR upper bounds u0 and a target, the FNR upper bounds below which a test detects it."""


def _window(n: int, p: float, width: float = 9.0) -> np.ndarray:
    """The binomial support values within ``width`` standard deviations of the mean (the rest
    has probability < 1e-18)."""
    sd = math.sqrt(max(n * p * (1.0 - p), 1e-12))
    lo = max(0, math.floor(n * p - width * sd - 2))
    hi = min(n, math.ceil(n * p + width * sd + 2))
    return np.arange(lo, hi + 1)


@functools.lru_cache(maxsize=64)
def _cp_knots(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact Clopper–Pearson upper bounds at every count below 100 and above n − 100 and at
    counts spaced by at most k/128 (from either end) in between."""
    m = min(n, 100)
    edge = np.geomspace(m, max(n / 2, m), max(2, int(128 * math.log(max(n / 2, m) / m)) + 2))
    k = np.unique(np.concatenate([np.arange(m), edge.round(), n - edge.round(), n - np.arange(m), [n]]))
    k = k[(k >= 0) & (k <= n)].astype(np.int64)
    return k, cp_upper(k, n, alpha)


def cp_upper_smooth(k: np.ndarray, n: int, alpha: float, exact_up_to: int = 50_000) -> np.ndarray:
    """:func:`~dpaudit.audit.clopper_pearson.cp_upper` of integer counts for simulations that
    evaluate millions of bounds: exact up to ``exact_up_to`` trials, else linear between the
    cached exact values of :func:`_cp_knots` — the bound is smooth in k, and the interpolation
    error is below 3 % of the step between consecutive counts up to 10⁷ trials
    (``tests/test_procedure_floor.py`` checks detection probabilities against the exact sums).

    >>> float(cp_upper_smooth(np.array([50_000]), 100_000, 0.025)[0]) > 0.5
    True
    """
    kk = np.asarray(k)
    if n <= exact_up_to:
        return cp_upper_many(kk, n, alpha)
    at, val = _cp_knots(int(n), float(alpha))
    return np.interp(kk, at, val)


def _prob_above(p: float, q: float, n0: int, n1: int, alpha: float, allowed: Allowed, target: float) -> float:
    """P[CP_u(FN, α) < allowed(CP_u(FP, α), target)] with FP ~ Bin(n0, p), FN ~ Bin(n1, q):
    for each FP value the detecting FN values are a prefix (CP_u is increasing in the count)."""
    from scipy import stats
    k0 = _window(n0, p)
    k1 = _window(n1, q)
    u0 = cp_upper_many(k0, n0, alpha)
    u1 = cp_upper_many(k1, n1, alpha)
    kmax = np.searchsorted(u1, allowed(u0, target), side="left")  # FN in k1[:kmax] detect
    pmf0 = stats.binom.pmf(k0, n0, p)
    cdf1 = np.where(kmax > 0, stats.binom.cdf(k1[np.maximum(kmax - 1, 0)], n1, q), 0.0)
    return float(np.clip(np.sum(pmf0 * cdf1), 0.0, 1.0))


def _mu_allowed(u0: np.ndarray, target: float) -> np.ndarray:
    """The FNR bounds u1 with Φ⁻¹(1 − u0) − Φ⁻¹(u1) > target (:func:`mu_from_rates`)."""
    from scipy import special
    return special.ndtr(-special.ndtri(u0) - target)  # = stats.norm.cdf(stats.norm.isf(u0) - target)


def _eps_allowed(delta: float) -> Allowed:
    def allowed(u0: np.ndarray, target: float) -> np.ndarray:
        """The FNR bounds u1 with :func:`epsilon_from_rates`(u0, u1, δ) > target."""
        e = math.exp(min(target, 700.0))
        return np.maximum(1.0 - delta - u0 * e, (1.0 - delta - u0) / e)

    return allowed


def detection_probability(
    strength: float,
    null_trials: int,
    alt_trials: int,
    alpha_per_rate: float,
    *,
    target: float = 0.0,
    pair: Pair = "gaussian",
    delta: float = 0.0,
) -> float:
    """P[the audit's lower bound > ``target``] for the reference ``pair`` of privacy
    ``strength`` (μ for ``"gaussian"``, whose bound is the μ bound; ε for
    ``"randomized-response"``, whose bound is ε at ``delta``), with the best threshold (exact
    binomial sums; for the Gaussian pair the symmetric threshold t = μ/2 when n₀ = n₁ — the
    problem is symmetric under FP ↔ FN, t ↔ μ − t — else a golden-section search over t).

    >>> p = detection_probability(1.0, 10_000, 10_000, 0.025, target=0.9)
    >>> 0.0 < p < 1.0
    True
    """
    from scipy import stats
    n0 = check_integer("null_trials", null_trials)
    n1 = check_integer("alt_trials", alt_trials)
    a = check_probability("alpha_per_rate", alpha_per_rate)
    s = float(strength)
    if not s > 0:
        return 0.0
    if pair == "gaussian":

        def at(t: float) -> float:
            return _prob_above(float(stats.norm.sf(t)), float(stats.norm.cdf(t - s)), n0, n1, a,
                               _mu_allowed, target)  # fmt: skip

        if n0 == n1:
            return at(s / 2)
        lo, hi = s / 2 - 1.5, s / 2 + 1.5
        g = (math.sqrt(5) - 1) / 2
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        f1, f2 = at(x1), at(x2)
        for _ in range(18):
            if f1 >= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - g * (hi - lo)
                f1 = at(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + g * (hi - lo)
                f2 = at(x2)
        return max(f1, f2, at(s / 2))
    if pair == "randomized-response":
        d = check_probability("delta", delta, low_open=False)
        r = (1.0 - d) / (1.0 + math.exp(min(s, 700.0)))
        return _prob_above(r, r, n0, n1, a, _eps_allowed(d), target)
    raise ValueError(f"pair must be 'gaussian' or 'randomized-response', got {pair!r}")


def conditional_detections(
    fprs: np.ndarray,
    fnrs: np.ndarray,
    null_trials: int,
    alt_trials: int,
    alpha_per_rate: float,
    *,
    kind: str = "mu",
    delta: float = 0.0,
    target: float = 0.0,
) -> np.ndarray:
    """P[the bound of a fixed test > ``target``] for many tests whose counts are
    Bin(``null_trials``, ``fprs[i]``) and Bin(``alt_trials``, ``fnrs[i]``): the μ bound for
    ``kind="mu"``, else the ε bound at ``delta`` (the exact sums of :func:`detection_probability`).
    Which false-negative counts detect, given the false-positive count, depends on the sizes
    only, so it is found once for the union of the tests' binomial windows (Clopper–Pearson
    bounds by :func:`cp_upper_smooth` above 4096 trials); each test then costs two binomial laws
    on its own windows (log-gamma).

    >>> conditional_detections(np.array([0.3085, 0.5]), np.array([0.3085, 0.5]), 10_000, 10_000, 0.025,
    ...                        target=0.95).round(2).tolist()
    [0.47, 0.0]
    """
    from scipy import special

    p, q = np.asarray(fprs, float), np.asarray(fnrs, float)
    n0, n1 = int(null_trials), int(alt_trials)
    laws0 = [(w, _binom_pmf(w, n0, float(v))) for v in p for w in [_window(n0, float(v))]]
    laws1 = []
    for v in q:
        w = _window(n1, float(v))
        below = float(special.bdtr(w[0] - 1, n1, v)) if w[0] > 0 else 0.0  # < 1e-18 by the window
        laws1.append((w, _binom_pmf(w, n1, float(v)), below))
    return _law_detections(laws0, laws1, n0, n1, alpha_per_rate, kind, delta, target)


def subsample_detections(
    fp_counts: np.ndarray,
    fn_counts: np.ndarray,
    scored: int,
    trials: int,
    alpha_per_rate: float,
    *,
    kind: str = "mu",
    delta: float = 0.0,
    target: float = 0.0,
) -> np.ndarray:
    """Unbiased estimates of P[the bound of a fixed test on ``trials`` fresh runs per side >
    ``target``] from the test's error counts on ``scored`` ≥ ``trials`` independent runs per side.

    Plugging the observed rates into :func:`conditional_detections` is biased: the detection
    probability is a steep function of the rates, and the noise of rates estimated on about as
    many runs as the main sample spreads it (an optimistic floor where detection is rare).
    Instead the main sample is taken as a uniformly random ``trials``-subset of the scored runs:
    its counts are hypergeometric given the observed ones, and averaged over the scored runs the
    hypergeometric law *is* the binomial law of ``trials`` fresh runs, so the probability it
    gives is an unbiased estimate (a U-statistic; the two sides are independent). With
    ``scored == trials`` it is the indicator that the observed counts detect.

    Averaged over scored counts, it recovers the exact probability (0.47 here):

    >>> k = np.random.default_rng(0).binomial(20_000, 0.3085, size=(2, 400))
    >>> est = subsample_detections(k[0], k[1], 20_000, 10_000, 0.025, target=0.95)
    >>> bool(abs(est.mean() - 0.47) < 0.05)
    True
    """
    m, n = check_integer("scored", scored, 1), check_integer("trials", trials, 1)
    if m < n:
        raise ValueError(f"scored must be at least trials ({n}) for an unbiased estimate, got {m}")
    k0, k1 = np.asarray(fp_counts, np.int64), np.asarray(fn_counts, np.int64)
    if k0.shape != k1.shape or k0.size and (min(k0.min(), k1.min()) < 0 or max(k0.max(), k1.max()) > m):
        raise ValueError(f"fp_counts and fn_counts must be counts in [0, {m}] of the same shape")
    laws0 = [_hypergeom_law(m, int(c), n)[:2] for c in k0]
    laws1 = [_hypergeom_law(m, int(c), n) for c in k1]
    return _law_detections(laws0, laws1, n, n, alpha_per_rate, kind, delta, target)


def _hypergeom_law(m: int, k: int, n: int, width: float = 9.0) -> tuple[np.ndarray, np.ndarray, float]:
    """The counts of an ``n``-subset of ``m`` runs with ``k`` errors within ``width`` standard
    deviations of the mean, their probabilities (log-gamma), and the probability below them."""
    from scipy import special

    lo, hi = max(0, n - (m - k)), min(n, k)
    mean, sd = n * k / m, math.sqrt(max(n * (k / m) * (1 - k / m) * (m - n) / max(m - 1, 1), 1e-12))
    a, b = max(lo, math.floor(mean - width * sd - 2)), min(hi, math.ceil(mean + width * sd + 2))

    def logpmf(x: np.ndarray) -> np.ndarray:
        def logc(top: float, x: np.ndarray) -> np.ndarray:
            return special.gammaln(top + 1.0) - special.gammaln(x + 1.0) - special.gammaln(top - x + 1.0)

        return logc(k, x) + logc(m - k, n - x) - logc(m, np.asarray(n, float))

    w = np.arange(a, b + 1)
    below = float(np.exp(logpmf(np.arange(lo, a, dtype=float))).sum()) if a - lo < 4096 else 0.0
    return w, np.exp(logpmf(w.astype(float))), below


Law = tuple[np.ndarray, np.ndarray]


def _law_detections(laws0: list[Law], laws1: list[tuple[np.ndarray, np.ndarray, float]], n0: int, n1: int,
                    alpha: float, kind: str, delta: float, target: float) -> np.ndarray:  # fmt: skip
    """P[bound > target] for tests whose FP and FN counts have the laws ``laws0`` (window,
    probabilities) and ``laws1`` (window, probabilities, probability below the window)."""
    allowed = _mu_allowed if kind == "mu" else _eps_allowed(delta)
    if not laws0:
        return np.empty(0)
    k0 = np.arange(min(w[0] for w, _ in laws0), max(w[-1] for w, _ in laws0) + 1)
    k1 = np.arange(min(w[0] for w, _, _ in laws1), max(w[-1] for w, _, _ in laws1) + 1)
    u1 = cp_upper_smooth(k1, n1, alpha, exact_up_to=4096)
    kmax = np.searchsorted(u1, allowed(cp_upper_smooth(k0, n0, alpha, exact_up_to=4096), target),
                           side="left")  # fmt: skip
    last = k1[np.maximum(kmax - 1, 0)]  # the largest detecting FN count, where kmax > 0
    out = np.empty(len(laws0))
    for r, ((w0, pmf0), (w1, pmf1, below)) in enumerate(zip(laws0, laws1, strict=True)):
        cdf = below + np.cumsum(pmf1)
        i = w0 - k0[0]
        j = np.clip(last[i] - w1[0], -1, w1.size - 1)
        cdf1 = np.where(kmax[i] > 0, np.where(j < 0, below, cdf[np.maximum(j, 0)]), 0.0)
        out[r] = min(max(float(np.sum(pmf0 * cdf1)), 0.0), 1.0)
    return out


def _binom_pmf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    """Binomial probabilities of the counts ``k`` in log space (log-gamma; exact at p = 0, 1)."""
    from scipy import special

    logc = special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
    return np.exp(logc + special.xlogy(k, p) + special.xlog1py(n - k, -p))


@functools.lru_cache(maxsize=256)
def detection_floor(
    null_trials: int,
    alt_trials: int,
    alpha_per_rate: float,
    *,
    target: float = 0.0,
    pair: Pair = "gaussian",
    delta: float = 0.0,
    upper: float = 40.0,
) -> float:
    """The smallest strength (μ or ε, see :func:`detection_probability`) detected with
    probability ≥ ½: bisection to 1e-4 relative on the (monotone) detection probability;
    ``inf`` if not reached at ``upper``.

    >>> round(detection_floor(10**5, 10**5, 0.025, target=1.0), 3)   # violations of mu = 1
    1.016
    """
    def p(s: float) -> float:
        return detection_probability(s, null_trials, alt_trials, alpha_per_rate, target=target,
                                     pair=pair, delta=delta)  # fmt: skip

    lo, hi = max(0.0, target), max(1.25 * target, 0.25)
    while p(hi) < 0.5:
        lo, hi = hi, 2 * hi
        if hi > upper:
            return math.inf
    for _ in range(60):
        if hi - lo <= 1e-4 * hi:
            break
        mid = 0.5 * (lo + hi)
        if p(mid) >= 0.5:
            hi = mid
        else:
            lo = mid
    return float(hi)


@dataclass(frozen=True)
class DetectionFloor:
    """What a design could have seen (module docstring).

    ``mu``: the smallest GDP μ of a Gaussian pair whose median bound from this test is positive;
    ``epsilon``: the ε at ``delta`` of that pair (the GDP curve; ``None`` at δ = 0), or for
    pure-ε claims the smallest ε of the canonical (ε, δ) pair whose median ε bound is positive.
    ``mu_violation`` / ``epsilon_violation``: the same with the certified value as target — the
    smallest true value whose median bound exceeds the certificate (a violation this audit
    catches at least half of the time). ``null_trials``/``alt_trials``/``alpha_per_rate``/
    ``tests``: the certification test the floor is computed for.
    """

    mu: float | None
    epsilon: float | None
    mu_violation: float | None
    epsilon_violation: float | None
    delta: float
    null_trials: int
    alt_trials: int
    alpha_per_rate: float
    tests: int
    definition: str

    def below(self, mu: float | None, epsilon: float | None) -> bool:
        """Whether a certificate (μ, or ε when no μ is certified) lies below the floor."""
        if mu is not None and self.mu is not None:
            return mu < self.mu
        if epsilon is not None and self.epsilon is not None:
            return epsilon < self.epsilon
        return False

    def describe(self) -> str:
        """One line for reports, e.g. ``mu >= 0.049 (epsilon >= 0.157 at delta = 1e-05) is
        detected with probability >= 1/2; a violation needs true mu >= 1.05``."""
        if self.mu is not None:
            txt = f"mu >= {self.mu:.4g}"
            if self.epsilon is not None:
                txt += f" (epsilon >= {self.epsilon:.4g} at delta = {self.delta:g})"
        else:
            txt = f"epsilon >= {self.epsilon:.4g} at delta = {self.delta:g}"
        txt += " is detected with probability >= 1/2"
        if self.mu_violation is not None:
            txt += f"; a violation needs true mu >= {self.mu_violation:.4g}"
        elif self.epsilon_violation is not None:
            txt += f"; a violation needs true epsilon >= {self.epsilon_violation:.4g}"
        return txt


def floor_report(
    null_trials: int,
    alt_trials: int,
    alpha_per_rate: float,
    *,
    certified_mu: float | None,
    certified_epsilon: float | None,
    delta: float,
    tests: int = 1,
) -> DetectionFloor:
    """The :class:`DetectionFloor` of a certification test (module docstring): μ floors from the
    Gaussian pair when a μ is certified (or δ > 0), ε floors from the canonical (ε, δ) pair when
    only an ε is certified.

    >>> f = floor_report(10**4, 10**4, 0.025, certified_mu=1.0, certified_epsilon=None, delta=1e-5)
    >>> round(f.mu, 3), round(f.mu_violation, 3), f.below(0.05, None)
    (0.049, 1.052, False)
    """
    defin = (
        f"one threshold test, Clopper-Pearson at {alpha_per_rate:.3g} per rate, {null_trials} null and "
        f"{alt_trials} alternative samples: smallest strength of the reference pair (gaussian N(0,1) vs "
        "N(mu,1); for pure-epsilon claims the canonical (epsilon, delta) pair) whose median lower bound is "
        "> 0 (floor) or > the certificate (violation), best threshold, exact binomial sums"
    )
    if certified_mu is not None or (certified_epsilon is None and delta > 0):
        mu = detection_floor(null_trials, alt_trials, alpha_per_rate)
        mv = (detection_floor(null_trials, alt_trials, alpha_per_rate, target=certified_mu)
              if certified_mu is not None else None)  # fmt: skip
        eps = float(gdp_epsilon(mu, delta)) if delta > 0 and math.isfinite(mu) else None
        ev = float(gdp_epsilon(mv, delta)) if delta > 0 and mv is not None and math.isfinite(mv) else None
        return DetectionFloor(mu, eps, mv, ev, delta, null_trials, alt_trials, alpha_per_rate, tests, defin)
    eps = detection_floor(null_trials, alt_trials, alpha_per_rate, pair="randomized-response", delta=delta)
    ev = None
    if certified_epsilon is not None:
        ev = detection_floor(null_trials, alt_trials, alpha_per_rate, target=certified_epsilon,
                             pair="randomized-response", delta=delta)  # fmt: skip
    return DetectionFloor(None, eps, None, ev, delta, null_trials, alt_trials, alpha_per_rate, tests, defin)


def largest_provable_epsilon(null_trials: int, alt_trials: int, alpha_per_rate: float, delta: float) -> float:
    """The ceiling of a design: the ε lower bound of a test with no false positive and no false
    negative (Clopper–Pearson at ``alpha_per_rate`` each), the most that ``null_trials`` and
    ``alt_trials`` samples can ever prove at ``delta``.

    >>> round(largest_provable_epsilon(20_000, 20_000, 0.025, 1e-6), 3)
    8.598
    """
    from dpaudit.audit.clopper_pearson import epsilon_from_rates

    n0, n1 = check_integer("null_trials", null_trials), check_integer("alt_trials", alt_trials)
    a = check_probability("alpha_per_rate", alpha_per_rate)
    return float(epsilon_from_rates(float(cp_upper(0, n0, a)), float(cp_upper(0, n1, a)), delta))
